//! Messages as the broker stores them, and as a client sees them.
use crate::property::PropertyValue;
use crate::time::{after, Duration, Instant, MAX_VALUE, NEVER};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What a sender puts in a message. Everything but the body is optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NewMessage {
    pub message_id: Option<String>,
    /// TTL-01: a relative duration; None = unset (MaxValue, capped by the entity default).
    pub time_to_live: Option<Duration>,
    pub subject: Option<String>,
    pub correlation_id: Option<String>,
    pub application_properties: BTreeMap<String, PropertyValue>,
    pub body: crate::body::Body,
    /// The size the broker counts; None = the body's length in bytes.
    pub body_size: Option<u64>,
    /// The other system properties filters read (FLT-02, FLT-03), by their SDK names: To,
    /// ReplyTo, SessionId, ReplyToSessionId, ContentType.
    pub system_properties: BTreeMap<String, String>,
}

impl NewMessage {
    /// What [`Message::held_bytes`] will count for this message once stored.
    pub fn held_bytes(&self) -> u64 {
        held_bytes(
            &self.body,
            self.subject.as_deref(),
            self.correlation_id.as_deref(),
            Some(&self.application_properties),
            Some(&self.system_properties),
        )
    }
}

/// A body and its properties in bytes: each text's length, each property's key and
/// value ([`PropertyValue::held_bytes`]).
fn held_bytes(
    body: &crate::body::Body,
    subject: Option<&str>,
    correlation_id: Option<&str>,
    application: Option<&BTreeMap<String, PropertyValue>>,
    system: Option<&BTreeMap<String, String>>,
) -> u64 {
    let text = |s: Option<&str>| s.map_or(0, |s| s.len() as u64);
    let application = application.into_iter().flatten().fold(0u64, |n, (k, v)| {
        n.saturating_add(k.len() as u64)
            .saturating_add(v.held_bytes())
    });
    let system = system.into_iter().flatten().fold(0u64, |n, (k, v)| {
        n.saturating_add((k.len() + v.len()) as u64)
    });
    (body.len() as u64)
        .saturating_add(text(subject))
        .saturating_add(text(correlation_id))
        .saturating_add(application)
        .saturating_add(system)
}

/// The system properties a message may carry besides MessageId, Subject and CorrelationId.
pub const SYSTEM_PROPERTIES: [&str; 5] = [
    "To",
    "ReplyTo",
    "SessionId",
    "ReplyToSessionId",
    "ContentType",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MessageState {
    Active,
    Deferred,
    Scheduled,
}

impl MessageState {
    pub fn name(self) -> &'static str {
        match self {
            MessageState::Active => "Active",
            MessageState::Deferred => "Deferred",
            MessageState::Scheduled => "Scheduled",
        }
    }
}

/// A peek-lock held by a receiver.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    pub token: u128,
    pub holder: u32,
    pub locked_until: Instant,
    /// RCV-04: auto renewal keeps renewing until this instant.
    pub auto_renew_until: Option<Instant>,
}

/// Why and from where a message was dead-lettered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLetter {
    pub reason: Cow<'static, str>,
    pub description: Cow<'static, str>,
    pub source: Option<String>,
}

/// Properties most messages do not use, boxed so a plain message stays small.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extra {
    pub subject: Option<String>,
    pub correlation_id: Option<String>,
    pub application_properties: BTreeMap<String, PropertyValue>,
    pub dead_letter: Option<DeadLetter>,
    /// To, ReplyTo, SessionId, ReplyToSessionId, ContentType (SDK names).
    #[serde(default)]
    pub system_properties: BTreeMap<String, String>,
    /// FLT-01: the rule whose match gave a subscription this copy.
    #[serde(default)]
    pub rule_name: Option<String>,
}

impl Extra {
    /// A system property by its lowercase name (`replyto`), as SQL filters name them.
    pub fn system(&self, lower: &str) -> Option<&String> {
        self.system_properties
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(lower))
            .map(|(_, v)| v)
    }

    /// Sets (or, with None, removes) a system property by its lowercase name; MessageId and
    /// the rest a copy does not carry here are left alone.
    pub fn set_system(&mut self, lower: &str, value: Option<String>) {
        if lower == "label" || lower == "subject" {
            self.subject = value;
            return;
        }
        if lower == "correlationid" {
            self.correlation_id = value;
            return;
        }
        let Some(name) = SYSTEM_PROPERTIES
            .iter()
            .find(|n| n.eq_ignore_ascii_case(lower))
        else {
            return;
        };
        match value {
            Some(v) => {
                self.system_properties.insert(name.to_string(), v);
            }
            None => {
                self.system_properties.remove(*name);
            }
        }
    }
}

/// A message in a queue, subscription or dead-letter queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub sequence_number: u64,
    pub message_id: String,
    pub enqueued_time: Instant,
    /// The message's own TTL after capping (TTL-02, TTL-04); None when only the entity default applies.
    pub own_ttl: Option<Duration>,
    /// The TTL the broker enforces: own TTL, else the entity default (TTL-02).
    pub effective_ttl: Duration,
    /// The instant the broker enforces (TTL-01, TTL-05); NEVER for MaxValue (MSG-03).
    pub expires_at: Instant,
    pub scheduled_enqueue_time: Option<Instant>,
    pub state: MessageState,
    /// Boxed: few messages are locked at once, and a stored message stays 40 bytes smaller.
    pub lock: Option<Box<Lock>>,
    /// MSG-02: the raw count of deliveries that failed (abandoned, lapsed, lost).
    pub failed_deliveries: u32,
    pub body: crate::body::Body,
    pub body_size: u64,
    pub extra: Option<Box<Extra>>,
    /// FWD-02: how many times auto-forwarding has moved this message.
    #[serde(default)]
    pub transfer_hops: u8,
    /// EnqueuedSequenceNumber: the SequenceNumber first assigned where it was submitted (kept
    /// through forwards and into a topic's subscriptions).
    #[serde(default)]
    pub enqueued_sequence_number: u64,
}

impl Message {
    pub fn extra(&self) -> Option<&Extra> {
        self.extra.as_deref()
    }
    /// The bytes this message's body and properties take in memory, as the playground's
    /// store budget counts them (`limits::MAX_STORED_BODY_BYTES`): the body and every property
    /// a sender gave (a key and its value). What the broker adds while it is stored (a
    /// DeadLetterReason) is not counted, so the figure stays the same from the message's
    /// insert to its removal; nor is the MessageId, bounded on its own.
    pub fn held_bytes(&self) -> u64 {
        let Some(e) = self.extra() else {
            return held_bytes(&self.body, None, None, None, None);
        };
        held_bytes(
            &self.body,
            e.subject.as_deref(),
            e.correlation_id.as_deref(),
            Some(&e.application_properties),
            Some(&e.system_properties),
        )
    }
    pub fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Default::default)
    }
    pub fn dead_letter(&self) -> Option<&DeadLetter> {
        self.extra().and_then(|e| e.dead_letter.as_ref())
    }
    /// SES-01: the SessionId, if it carries one.
    pub fn session_id(&self) -> Option<&str> {
        self.extra()?
            .system_properties
            .get("SessionId")
            .map(String::as_str)
    }
    pub fn is_expired_at(&self, now: Instant) -> bool {
        self.expires_at <= now
    }
    /// Enqueues (or re-enqueues after scheduling) at `at`: TTL-01, TTL-05, SCH-01.
    pub fn enqueue_at(&mut self, at: Instant) {
        self.enqueued_time = at;
        self.expires_at = after(at, self.effective_ttl);
    }
}

/// How a message is shown: as peek shows it, or as a locked receive shows it (TTL-10, MSG-02).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Perspective {
    Peek,
    Receive,
}

/// A message under the SDK's property names, as one perspective shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MessageView {
    pub entity: String,
    pub sequence_number: u64,
    pub message_id: String,
    pub enqueued_time: Instant,
    pub time_to_live: Duration,
    pub expires_at: Instant,
    pub scheduled_enqueue_time: Option<Instant>,
    /// The SequenceNumber first assigned at its original point of submission (forwarded
    /// messages keep it).
    pub enqueued_sequence_number: u64,
    /// FLT-01: in a subscription, the rule that delivered this copy.
    pub rule_name: Option<String>,
    pub locked_until: Option<Instant>,
    pub lock_token: Option<String>,
    pub lock_holder: Option<String>,
    pub delivery_count: u32,
    pub state: MessageState,
    pub dead_letter_reason: Option<String>,
    pub dead_letter_error_description: Option<String>,
    pub dead_letter_source: Option<String>,
    pub subject: Option<String>,
    pub correlation_id: Option<String>,
    pub application_properties: BTreeMap<String, PropertyValue>,
    /// To, ReplyTo, SessionId, ReplyToSessionId, ContentType, when set.
    pub system_properties: BTreeMap<String, String>,
    pub body: crate::body::Body,
    pub body_size: u64,
    /// The broker-enforced expiry has passed (the message may still be stored: TTL-07, TTL-09, TTL-13).
    pub nominally_expired: bool,
    /// The broker-enforced ExpiresAt, whatever the perspective shows.
    pub effective_expires_at: Instant,
}

impl MessageView {
    pub(crate) fn new(
        m: &Message,
        entity: &str,
        holder: Option<String>,
        perspective: Perspective,
        now: Instant,
    ) -> Self {
        let extra = m.extra();
        let dead_letter = m.dead_letter();
        let mut application_properties = extra
            .map(|e| e.application_properties.clone())
            .unwrap_or_default();
        if let Some(d) = dead_letter {
            // DLQ-03: the broker also shows reason and description as application properties.
            application_properties.insert("DeadLetterReason".into(), d.reason.as_ref().into());
            application_properties.insert(
                "DeadLetterErrorDescription".into(),
                d.description.as_ref().into(),
            );
        }
        let (time_to_live, expires_at) = match (perspective, m.own_ttl) {
            // TTL-10: with only the entity default, peek shows MaxValue.
            (Perspective::Peek, None) => (MAX_VALUE, NEVER),
            _ => (m.effective_ttl, m.expires_at),
        };
        // MSG-02: a locked delivery shows the raw count + 1 (.NET); peek shows the raw count.
        let delivery_count = match perspective {
            Perspective::Receive => m.failed_deliveries.saturating_add(1),
            Perspective::Peek => m.failed_deliveries,
        };
        MessageView {
            entity: entity.to_string(),
            sequence_number: m.sequence_number,
            message_id: m.message_id.clone(),
            enqueued_time: m.enqueued_time,
            time_to_live,
            expires_at,
            scheduled_enqueue_time: m.scheduled_enqueue_time,
            enqueued_sequence_number: m.enqueued_sequence_number,
            rule_name: extra.and_then(|e| e.rule_name.clone()),
            // RCV-11: a peeked message is a disconnected snapshot; its lock is not observed
            // there (LockedUntil, LockToken and the holder show only on the receive side).
            locked_until: match perspective {
                Perspective::Receive => m.lock.as_ref().map(|l| l.locked_until),
                Perspective::Peek => None,
            },
            lock_token: match perspective {
                Perspective::Receive => m.lock.as_ref().map(|l| format_lock_token(l.token)),
                Perspective::Peek => None,
            },
            lock_holder: match perspective {
                Perspective::Receive => holder,
                Perspective::Peek => None,
            },
            delivery_count,
            state: m.state,
            dead_letter_reason: dead_letter.map(|d| d.reason.to_string()),
            dead_letter_error_description: dead_letter.map(|d| d.description.to_string()),
            dead_letter_source: dead_letter.and_then(|d| d.source.clone()),
            subject: extra.and_then(|e| e.subject.clone()),
            correlation_id: extra.and_then(|e| e.correlation_id.clone()),
            application_properties,
            system_properties: extra
                .map(|e| e.system_properties.clone())
                .unwrap_or_default(),
            body: m.body.clone(),
            body_size: m.body_size,
            nominally_expired: m.is_expired_at(now),
            effective_expires_at: m.expires_at,
        }
    }
}

/// A LockToken as the SDK shows it: a GUID.
pub fn format_lock_token(token: u128) -> String {
    uuid::Uuid::from_u128(token).hyphenated().to_string()
}
