//! Queues, topics and subscriptions, and the stores that hold their messages.
use crate::message::Message;
use crate::pages::Pages;
use crate::settings::EntitySettings;
use crate::time::{Duration, Instant};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A main queue or its dead-letter sub-queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct QueueRef {
    pub entity: u32,
    pub dlq: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EntityKind {
    Queue,
    Topic,
    Subscription { topic: u32 },
}

/// FLT-01: the rule a new subscription gets.
pub const DEFAULT_RULE: &str = "$Default";

/// A subscription's rule (TOP-01): everything, or a correlation filter whose every set field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum SubscriptionRule {
    #[default]
    MatchAll,
    Correlation {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subject: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        correlation_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        application_properties: BTreeMap<String, crate::property::PropertyValue>,
        /// FLT-02: To, ReplyTo, SessionId, ReplyToSessionId, ContentType (SDK names).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        system_properties: BTreeMap<String, String>,
        /// FLT-04: a correlation filter's rule may act on its copy too.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<SqlAction>,
    },
    /// FLT-03, FLT-04: a SQL filter, and an action on the subscription's copy.
    Sql(Box<SqlRule>),
}

/// FLT-04: a SQL action on its own (a correlation filter's rule), as written and as parsed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct SqlAction {
    pub text: String,
    assignments: Vec<crate::sql::Assignment>,
}

impl Eq for SqlAction {}

impl From<SqlAction> for String {
    fn from(action: SqlAction) -> String {
        action.text
    }
}

impl TryFrom<String> for SqlAction {
    type Error = &'static str;
    fn try_from(text: String) -> std::result::Result<SqlAction, &'static str> {
        SqlAction::new(&text).map_err(|_| "a SQL action that does not parse")
    }
}

impl SqlAction {
    /// Parses the action; one outside the supported subset is refused, naming what was not
    /// understood (FLT-04).
    pub fn new(text: &str) -> crate::error::Result<SqlAction> {
        Ok(SqlAction {
            text: text.to_string(),
            assignments: crate::sql::parse_action(text).map_err(|t| {
                crate::error::BrokerError::new(crate::error::ErrorKind::ArgumentOutOfRange, t)
                    .on_field("SqlAction")
            })?,
        })
    }
}

/// A SQL rule as written and as parsed. Saved as written (a checkpoint) and parsed again when
/// read, so what is read is always what the parser makes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "SqlText", try_from = "SqlText")]
pub struct SqlRule {
    pub filter: String,
    pub action: Option<String>,
    expr: crate::sql::Expr,
    assignments: Vec<crate::sql::Assignment>,
}

impl Eq for SqlRule {}

#[derive(Serialize, Deserialize)]
struct SqlText(String, Option<String>);

impl From<SqlRule> for SqlText {
    fn from(rule: SqlRule) -> SqlText {
        SqlText(rule.filter, rule.action)
    }
}

impl TryFrom<SqlText> for SqlRule {
    type Error = &'static str;
    fn try_from(SqlText(filter, action): SqlText) -> std::result::Result<SqlRule, &'static str> {
        SqlRule::new(&filter, action.as_deref()).map_err(|_| "a SQL rule that does not parse")
    }
}

impl SqlRule {
    /// Parses the filter and the action; an expression outside the supported subset is refused,
    /// naming what was not understood (FLT-03).
    pub fn new(filter: &str, action: Option<&str>) -> crate::error::Result<SqlRule> {
        let invalid = |field: &str, t: crate::text::Text| {
            crate::error::BrokerError::new(crate::error::ErrorKind::ArgumentOutOfRange, t)
                .on_field(field)
        };
        Ok(SqlRule {
            filter: filter.to_string(),
            action: action.map(String::from),
            expr: crate::sql::parse_filter(filter).map_err(|t| invalid("SqlFilter", t))?,
            assignments: match action {
                Some(a) => crate::sql::parse_action(a).map_err(|t| invalid("SqlAction", t))?,
                None => Vec::new(),
            },
        })
    }

    /// Whether the rule has an action (FLT-01: such a rule gives a copy of its own).
    pub fn has_action(&self) -> bool {
        !self.assignments.is_empty()
    }

    /// FLT-04: the action applied to a subscription's copy.
    pub fn act(&self, m: &mut Message) {
        crate::sql::apply(&self.assignments, m);
    }
}

/// A correlation filter's fields: the system properties it sets, by their SDK names (Subject,
/// CorrelationId, MessageId, then To, ReplyTo...), and its application properties.
pub struct CorrelationFields<'a> {
    pub system: Vec<(&'a str, &'a str)>,
    pub application: &'a BTreeMap<String, crate::property::PropertyValue>,
    /// FLT-04: the rule's action, as written.
    pub action: Option<&'a str>,
}

impl SubscriptionRule {
    /// A correlation filter's fields, by their SDK names (the one place that reads the variant;
    /// `saved.rs` walks it field by field to save and read it back).
    pub fn correlation(&self) -> Option<CorrelationFields<'_>> {
        let SubscriptionRule::Correlation {
            subject,
            correlation_id,
            message_id,
            application_properties,
            system_properties,
            action,
        } = self
        else {
            return None;
        };
        let mut system: Vec<(&str, &str)> = [
            ("Subject", subject),
            ("CorrelationId", correlation_id),
            ("MessageId", message_id),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
        .collect();
        system.extend(
            system_properties
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
        Some(CorrelationFields {
            system,
            application: application_properties,
            action: action.as_ref().map(|a| a.text.as_str()),
        })
    }

    /// A subscription's rule in words: "all messages", its SQL filter, or its correlation filter.
    pub fn text(&self) -> String {
        match self {
            SubscriptionRule::MatchAll => crate::text!("rule-match-all").to_string(),
            SubscriptionRule::Sql(rule) => match &rule.action {
                Some(action) => format!("{} / {action}", rule.filter),
                None => rule.filter.clone(),
            },
            SubscriptionRule::Correlation {
                subject,
                correlation_id,
                message_id,
                application_properties,
                system_properties,
                action,
            } => {
                let mut parts: Vec<String> = Vec::new();
                let mut field = |name: &str, v: &Option<String>| {
                    if let Some(v) = v {
                        parts.push(format!("{name} = {v}"));
                    }
                };
                field("Subject", subject);
                field("CorrelationId", correlation_id);
                field("MessageId", message_id);
                for (k, v) in system_properties {
                    parts.push(format!("{k} = {v}"));
                }
                for (k, v) in application_properties {
                    parts.push(match v {
                        crate::property::PropertyValue::String(s) => format!("{k} = '{s}'"),
                        v => format!("{k} = {v}"),
                    });
                }
                match action {
                    Some(action) => format!("{} / {}", parts.join(", "), action.text),
                    None => parts.join(", "),
                }
            }
        }
    }

    /// Whether the rule has an action (FLT-01: such a rule gives a copy of its own).
    pub fn has_action(&self) -> bool {
        match self {
            SubscriptionRule::Sql(rule) => rule.has_action(),
            SubscriptionRule::Correlation { action, .. } => action.is_some(),
            SubscriptionRule::MatchAll => false,
        }
    }

    /// FLT-04: the rule's action applied to a subscription's copy.
    pub fn act(&self, m: &mut Message) {
        match self {
            SubscriptionRule::Sql(rule) => rule.act(m),
            SubscriptionRule::Correlation {
                action: Some(action),
                ..
            } => crate::sql::apply(&action.assignments, m),
            _ => {}
        }
    }

    pub fn matches(&self, m: &Message) -> bool {
        match self {
            SubscriptionRule::MatchAll => true,
            SubscriptionRule::Sql(rule) => crate::sql::matches(&rule.expr, m),
            SubscriptionRule::Correlation {
                subject,
                correlation_id,
                message_id,
                application_properties,
                system_properties,
                action: _,
            } => {
                let extra = m.extra();
                let field_ok = |want: &Option<String>, have: Option<&String>| {
                    want.as_ref().is_none_or(|w| have == Some(w))
                };
                field_ok(subject, extra.and_then(|e| e.subject.as_ref()))
                    && field_ok(
                        correlation_id,
                        extra.and_then(|e| e.correlation_id.as_ref()),
                    )
                    && field_ok(message_id, Some(&m.message_id))
                    && application_properties.iter().all(|(k, v)| {
                        extra.and_then(|e| {
                            crate::property::get_ignoring_case(&e.application_properties, k)
                        }) == Some(v)
                    })
                    && system_properties
                        .iter()
                        .all(|(k, v)| extra.and_then(|e| e.system_properties.get(k)) == Some(v))
            }
        }
    }
}

/// The messages of one queue or sub-queue by SequenceNumber (peek order), in shared pages
/// ([`crate::pages`]): a rewind checkpoint shares what the run did not touch since, and the
/// counts by state are summed per page. The receivable ones (Active, unlocked) are read from
/// them in retrieval order ([`crate::pages::Pages::available`]).
#[derive(Clone, Debug, Default)]
pub struct Store {
    pub messages: Pages,
    pub bytes: u64,
    /// The bytes the stored bodies and their properties take in memory
    /// ([`crate::message::Message::held_bytes`]; what `bytes` counts may be simulated).
    pub body_bytes: u64,
    /// (LockedUntil, SequenceNumber, LockToken) of the locks taken, in LockedUntil order; settled
    /// ones are skipped when they reach the front.
    pub(crate) lapses: std::collections::VecDeque<(Instant, u64, u128)>,
    /// The instant of this store's one lapse timer, if armed.
    pub(crate) lapse_armed: Option<Instant>,
}

impl Store {
    /// Stores a message. A message never replaces another: SequenceNumbers are unique per
    /// entity (MSG-01), so a clash is a bug, and the stored message is kept.
    pub(crate) fn insert(&mut self, m: Message) {
        let size = m.body_size;
        let body = m.held_bytes();
        if !self.messages.insert(m) {
            debug_assert!(false, "a SequenceNumber stored twice");
            return;
        }
        self.bytes = self.bytes.saturating_add(size);
        self.body_bytes = self.body_bytes.saturating_add(body);
    }

    pub(crate) fn remove(&mut self, seq: u64) -> Option<Message> {
        let m = self.messages.remove(&seq)?;
        self.bytes = self.bytes.saturating_sub(m.body_size);
        self.body_bytes = self.body_bytes.saturating_sub(m.held_bytes());
        Some(m)
    }

    /// The first receivable message (Active, unlocked) in retrieval order.
    pub fn first_available(&self) -> Option<u64> {
        self.messages.available().next().map(|m| m.sequence_number)
    }

    pub(crate) fn locked_seqs(&self) -> Vec<u64> {
        self.messages
            .values()
            .filter(|m| m.lock.is_some())
            .map(|m| m.sequence_number)
            .collect()
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Counts by state; `expiring` says whether expiry applies (not in a DLQ). Summed per page
    /// of 64 messages, each page counted once per change: a frame's counts of a million stored
    /// messages add up about 16,000 sums.
    pub fn counts(&self, now: Instant, expiring: bool) -> Counts {
        let mut c = Counts::default();
        for p in self.messages.counts() {
            c.locked += p.locked;
            c.active += p.active;
            c.deferred += p.deferred;
            c.scheduled += p.scheduled;
            if expiring {
                c.expired_uncollected += p.expires.partition_point(|&at| at <= now) as u64;
            }
        }
        c
    }
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

#[derive(Clone, Debug)]
pub struct Entity {
    pub id: u32,
    pub path: String,
    pub kind: EntityKind,
    pub settings: EntitySettings,
    /// FLT-01: a subscription's rules by name, in creation order (`$Default` first, unless it
    /// was removed or given another name); empty for queues and topics.
    pub rules: Vec<(String, SubscriptionRule)>,
    /// Topics: their subscriptions, in creation order.
    pub subscriptions: Vec<u32>,
    /// Queues and subscriptions: their messages. Topics: scheduled messages waiting to fan out.
    pub main: Store,
    pub dlq: Store,
    /// MSG-01: the next SequenceNumber (queues and topics).
    pub next_seq: u64,
    pub last_activity: Instant,
    /// When the one live idle check is due (IDLE-01), if armed.
    pub(crate) idle_at: Option<Instant>,
    /// When the one live realistic-mode sweep is due (TTL-08), if armed.
    pub(crate) sweep_at: Option<Instant>,
    pub(crate) attached_receivers: u32,
    pub created_at: Instant,
    /// DUP-02, DUP-03: the MessageIds accepted within the window (entities that detect
    /// duplicates), and how many duplicates were dropped.
    pub(crate) history: Option<Box<DuplicateHistory>>,
    pub duplicates_dropped: u64,
    /// SES-02..05: the sessions of a session entity (queues and subscriptions), in the order
    /// they were first seen; `session_ids` finds one by SessionId, `session_holders` lists the
    /// (receiver, session) pairs that hold a session lock now.
    pub sessions: Vec<Session>,
    pub(crate) session_ids: BTreeMap<String, u32>,
    pub(crate) session_holders: Vec<(u32, u32)>,
}

/// A session of a session entity: its SessionId, who holds its lock, and its state (SES-05).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub lock: Option<SessionLock>,
    /// Bytes, as the SDKs set it (written in a scenario like a body).
    pub state: Option<crate::Body>,
}

/// SES-02: a session lock, with its own LockedUntil.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionLock {
    pub holder: u32,
    pub token: u128,
    pub locked_until: Instant,
}

/// The MessageIds an entity accepted, each with when; oldest first in `order`, so the window
/// slides by dropping from the front (no scan).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct DuplicateHistory {
    /// By MessageId, when it was accepted. Instants fit in a `u32` (the clock ends at 30 days,
    /// `limits::LATEST_INSTANT`): the map shares its type, and its code, with the namespace's
    /// path map.
    pub accepted: BTreeMap<String, u32>,
    /// Oldest first from `first` on; what slid out before it is dropped now and then.
    pub order: Vec<(Instant, String)>,
    pub first: usize,
}

impl DuplicateHistory {
    /// DUP-02, DUP-03: whether `id` was accepted within `window` before `now`; if not, it is
    /// accepted now. Forgets what slid out of the window first.
    pub fn seen(&mut self, id: &str, now: Instant, window: Duration) -> bool {
        while let Some((at, old)) = self.order.get(self.first) {
            if crate::time::after(*at, window) > now {
                break;
            }
            if self.accepted.get(old).map(|&a| Instant::from(a)) == Some(*at) {
                self.accepted.remove(old);
            }
            self.first += 1;
        }
        if self.first > 64 && self.first * 2 > self.order.len() {
            self.order.drain(..self.first);
            self.first = 0;
        }
        if self.accepted.contains_key(id) {
            return true;
        }
        self.accepted
            .insert(id.to_string(), u32::try_from(now).unwrap_or(u32::MAX));
        self.order.push((now, id.to_string()));
        false
    }
}

impl Entity {
    pub(crate) fn new(
        id: u32,
        path: &str,
        kind: EntityKind,
        settings: EntitySettings,
        rules: Vec<(String, SubscriptionRule)>,
        now: Instant,
    ) -> Self {
        Entity {
            id,
            path: path.to_string(),
            kind,
            settings,
            rules,
            subscriptions: Vec::new(),
            main: Store::default(),
            dlq: Store::default(),
            next_seq: 1,
            last_activity: now,
            idle_at: None,
            sweep_at: None,
            attached_receivers: 0,
            created_at: now,
            history: None,
            duplicates_dropped: 0,
            sessions: Vec::new(),
            session_ids: BTreeMap::new(),
            session_holders: Vec::new(),
        }
    }

    pub fn store(&self, dlq: bool) -> &Store {
        if dlq {
            &self.dlq
        } else {
            &self.main
        }
    }
    pub(crate) fn store_mut(&mut self, dlq: bool) -> &mut Store {
        if dlq {
            &mut self.dlq
        } else {
            &mut self.main
        }
    }

    /// SES-02: the index of session `id`, created on first sight.
    pub(crate) fn session_index(&mut self, id: &str) -> u32 {
        if let Some(&i) = self.session_ids.get(id) {
            return i;
        }
        let i = u32::try_from(self.sessions.len()).unwrap_or(u32::MAX);
        self.sessions.push(Session {
            id: id.to_string(),
            ..Session::default()
        });
        self.session_ids.insert(id.to_string(), i);
        i
    }

    /// A subscription's rules in words: "name: filter; ..." (only the filter when it has just
    /// `$Default`).
    pub fn rules_text(&self) -> String {
        match self.rules.as_slice() {
            [(name, rule)] if name == DEFAULT_RULE => rule.text(),
            rules => rules
                .iter()
                .map(|(name, rule)| format!("{name}: {}", rule.text()))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    /// MSG-01: 1, 2, 3... with no gaps.
    pub(crate) fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    pub fn stored_bytes(&self) -> u64 {
        self.main.bytes.saturating_add(self.dlq.bytes)
    }

    pub fn counts(&self, now: Instant) -> Counts {
        Counts {
            dead_lettered: self.dlq.len() as u64,
            ..self.main.counts(now, true)
        }
    }

    /// The counts of the dead-letter sub-queue itself (nothing expires there: TTL-12).
    pub fn dlq_counts(&self, now: Instant) -> Counts {
        self.dlq.counts(now, false)
    }
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.active += o.active;
        self.locked += o.locked;
        self.scheduled += o.scheduled;
        self.deferred += o.deferred;
        self.dead_lettered += o.dead_lettered;
        self.expired_uncollected += o.expired_uncollected;
    }
}

/// Message counts of an entity. `active` is receivable (Active and unlocked, including expired
/// messages not collected yet: TTL-07); `locked` are held by a receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub active: u64,
    pub locked: u64,
    pub scheduled: u64,
    pub deferred: u64,
    pub dead_lettered: u64,
    pub expired_uncollected: u64,
}
