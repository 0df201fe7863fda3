//! The scenario file format, version 1: what a scenario's entities, steps and expectations
//! hold (the top level is `scenario::Scenario`). JSON; every field but `version` is optional.
use crate::dur::Dur;
use crate::vecmap::VecMap;
use sbp_engine::{EntitySettings, ExpiryMode, Tier};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NamespaceDef {
    #[serde(default)]
    pub tier: Tier,
    /// "exact" (expire at the instant) or "realistic" (lazy: TTL-07, TTL-08).
    #[serde(default)]
    pub expiry: ExpiryMode,
    /// Realistic mode: how often the background sweep runs while a receiver is attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_interval: Option<Dur>,
    /// Keep about this many events (the oldest are dropped): for long traffic runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_limit: Option<usize>,
}

crate::read_by_key!(NamespaceDef {
    tier,
    expiry,
    sweep_interval,
    log_limit,
});

/// Entity settings as a file gives them: whatever is missing keeps its default (or, in an
/// update, its current value).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SettingsDef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_message_time_to_live: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_duration: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delivery_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_lettering_on_message_expiration: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_delete_on_idle: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_dead_lettered_messages_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size_bytes: Option<u64>,
    /// DUP-01.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_duplicate_detection: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_detection_history_time_window: Option<Dur>,
    /// SES-01.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_session: Option<bool>,
}

impl SettingsDef {
    pub fn apply_to(&self, base: &EntitySettings) -> EntitySettings {
        let mut s = base.clone();
        if let Some(d) = self.default_message_time_to_live {
            s.default_message_time_to_live = d.ms();
        }
        if let Some(d) = self.lock_duration {
            s.lock_duration = d.ms();
        }
        if let Some(n) = self.max_delivery_count {
            s.max_delivery_count = n;
        }
        if let Some(b) = self.dead_lettering_on_message_expiration {
            s.dead_lettering_on_message_expiration = b;
        }
        if let Some(d) = self.auto_delete_on_idle {
            s.auto_delete_on_idle = d.ms();
        }
        if let Some(f) = &self.forward_to {
            s.forward_to = (!f.is_empty()).then(|| f.clone());
        }
        if let Some(f) = &self.forward_dead_lettered_messages_to {
            s.forward_dead_lettered_messages_to = (!f.is_empty()).then(|| f.clone());
        }
        if let Some(n) = self.max_size_bytes {
            s.max_size_bytes = n;
        }
        if let Some(b) = self.requires_duplicate_detection {
            s.requires_duplicate_detection = b;
        }
        if let Some(d) = self.duplicate_detection_history_time_window {
            s.duplicate_detection_history_time_window = d.ms();
        }
        if let Some(b) = self.requires_session {
            s.requires_session = b;
        }
        s
    }
}

/// An entity to create or update as a file writes it: its names and its settings side by side.
/// One reader for both (smaller in the wasm than a derived reader of the settings `flatten`ed
/// into each).
#[derive(Default)]
struct EntityWire {
    entity: Option<String>,
    queue: Option<String>,
    topic: Option<String>,
    subscription: Option<String>,
    rule: Option<RuleDef>,
    rules: Vec<RuleDef>,
    default_message_time_to_live: Option<Dur>,
    lock_duration: Option<Dur>,
    max_delivery_count: Option<u32>,
    dead_lettering_on_message_expiration: Option<bool>,
    auto_delete_on_idle: Option<Dur>,
    forward_to: Option<String>,
    forward_dead_lettered_messages_to: Option<String>,
    max_size_bytes: Option<u64>,
    requires_duplicate_detection: Option<bool>,
    duplicate_detection_history_time_window: Option<Dur>,
    requires_session: Option<bool>,
}

crate::read_by_key!(EntityWire {
    entity,
    queue,
    topic,
    subscription,
    rule,
    rules,
    default_message_time_to_live,
    lock_duration,
    max_delivery_count,
    dead_lettering_on_message_expiration,
    auto_delete_on_idle,
    forward_to,
    forward_dead_lettered_messages_to,
    max_size_bytes,
    requires_duplicate_detection,
    duplicate_detection_history_time_window,
    requires_session,
});

impl EntityWire {
    fn settings(&mut self) -> SettingsDef {
        SettingsDef {
            default_message_time_to_live: self.default_message_time_to_live,
            lock_duration: self.lock_duration,
            max_delivery_count: self.max_delivery_count,
            dead_lettering_on_message_expiration: self.dead_lettering_on_message_expiration,
            auto_delete_on_idle: self.auto_delete_on_idle,
            forward_to: self.forward_to.take(),
            forward_dead_lettered_messages_to: self.forward_dead_lettered_messages_to.take(),
            max_size_bytes: self.max_size_bytes,
            requires_duplicate_detection: self.requires_duplicate_detection,
            duplicate_detection_history_time_window: self.duplicate_detection_history_time_window,
            requires_session: self.requires_session,
        }
    }
}

impl TryFrom<EntityWire> for EntityDef {
    type Error = crate::Text;
    fn try_from(mut w: EntityWire) -> Result<EntityDef, crate::Text> {
        if w.entity.is_some() {
            return Err(sbp_engine::text!("s-field-here", field = "entity"));
        }
        Ok(EntityDef {
            settings: w.settings(),
            queue: w.queue,
            topic: w.topic,
            subscription: w.subscription,
            rule: w.rule,
            rules: w.rules,
        })
    }
}

impl TryFrom<EntityWire> for UpdateDef {
    type Error = crate::Text;
    fn try_from(mut w: EntityWire) -> Result<UpdateDef, crate::Text> {
        let misplaced = [
            ("queue", w.queue.is_some()),
            ("topic", w.topic.is_some()),
            ("subscription", w.subscription.is_some()),
            ("rule", w.rule.is_some()),
            ("rules", !w.rules.is_empty()),
        ];
        if let Some((field, _)) = misplaced.iter().find(|(_, set)| *set) {
            return Err(sbp_engine::text!("s-field-here", field = field));
        }
        let settings = w.settings();
        let entity = w
            .entity
            .ok_or_else(|| sbp_engine::text!("s-update-entity"))?;
        Ok(UpdateDef { entity, settings })
    }
}

/// A subscription's correlation filter; every field given must match. No rule: match all.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RuleDef {
    /// FLT-01: the rule's name (the first rule of a new subscription: `$Default` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    /// Application properties matched by value and type (FLT-02).
    pub properties: BTreeMap<String, sbp_engine::PropertyValue>,
    /// FLT-02: To, ReplyTo, SessionId, ReplyToSessionId, ContentType (SDK names).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub system_properties: BTreeMap<String, String>,
    /// FLT-03: a SQL filter instead of a correlation filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    /// FLT-04: the rule's SQL action (SET, REMOVE) on the subscription's copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// FLT-01: `"TrueFilter"` (every message; also what a rule without a filter is) or
    /// `"FalseFilter"` (none), as the SDKs' TrueRuleFilter and FalseRuleFilter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
}

crate::read_by_key!(RuleDef {
    name,
    subject,
    correlation_id,
    message_id,
    properties,
    system_properties,
    sql,
    action,
    filter,
});

/// `{"queue": "orders", ...settings}`, `{"topic": "events"}`, or
/// `{"subscription": "events/subscriptions/audit", "rule": {...}, ...settings}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "EntityWire")]
pub struct EntityDef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<String>,
    /// The subscription's first rule (none: `$Default`, every message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleDef>,
    /// FLT-01: more rules, each with its name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleDef>,
    #[serde(flatten)]
    pub settings: SettingsDef,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SendDef {
    pub to: String,
    /// With `count` > 1, "-1", "-2"... are appended. Default: the SequenceNumber.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Dur>,
    /// Schedule the message: enqueue it at this instant (SCH-01, TTL-05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_enqueue_time: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    /// Application properties with their types: `{"n": 10, "ok": true, "name": "x", "big":
    /// {"long": 5}}` (`sbp_engine::PropertyValue`).
    pub properties: BTreeMap<String, sbp_engine::PropertyValue>,
    /// To, ReplyTo, SessionId, ReplyToSessionId, ContentType (SDK names), as filters read them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub system_properties: BTreeMap<String, String>,
    /// Text, or `{"base64": "..."}` for bytes that are not.
    #[serde(default, skip_serializing_if = "sbp_engine::Body::is_empty")]
    pub body: sbp_engine::Body,
    /// The size the broker counts (SEND-04); default: the body's length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_size: Option<u64>,
    /// How many messages (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeDef {
    #[default]
    PeekLock,
    ReceiveAndDelete,
}

sbp_engine::deserialize_by_name!(ModeDef {
    "peek_lock" => ModeDef::PeekLock,
    "receive_and_delete" => ModeDef::ReceiveAndDelete,
});

pub const DEFAULT_RECEIVER: &str = "receiver";

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn default_receiver() -> String {
    DEFAULT_RECEIVER.to_string()
}
fn is_default_receiver(r: &str) -> bool {
    r == DEFAULT_RECEIVER
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiveDef {
    pub from: String,
    #[serde(
        default = "default_receiver",
        skip_serializing_if = "is_default_receiver"
    )]
    pub receiver: String,
    #[serde(default)]
    pub mode: ModeDef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// RCV-04: auto lock renewal up to this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_auto_lock_renewal: Option<Dur>,
    /// RCV-01: in ReceiveAndDelete mode the transfer fails and the message is lost.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transfer_fails: bool,
    /// A name for what this call returns: expectations (`returned`) and settlements
    /// (`"message": "<name>"`) refer to it.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PeekDef {
    pub from: String,
    #[serde(
        default = "default_receiver",
        skip_serializing_if = "is_default_receiver"
    )]
    pub receiver: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// A name for what this call returns: expectations (`returned`) and settlements
    /// (`"message": "<name>"`) refer to it.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SettleDef {
    pub from: String,
    /// The message by SequenceNumber (with the lock the receiver holds now)...
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq: u64,
    /// ...or by what a named receive returned ("first", or "first.2" for its second message):
    /// settled with that call's LockToken, so a stale one gives MessageLockLost (RCV-08) and a
    /// peeked one is a client error (RCV-11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(
        default = "default_receiver",
        skip_serializing_if = "is_default_receiver"
    )]
    pub receiver: String,
    /// Dead-letter only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Dead-letter only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiveDeferredDef {
    pub from: String,
    pub seqs: Vec<u64>,
    #[serde(
        default = "default_receiver",
        skip_serializing_if = "is_default_receiver"
    )]
    pub receiver: String,
    /// A name for what this call returns: expectations (`returned`) and settlements
    /// (`"message": "<name>"`) refer to it.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CancelDef {
    pub to: String,
    pub seq: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "EntityWire")]
pub struct UpdateDef {
    pub entity: String,
    #[serde(flatten)]
    pub settings: SettingsDef,
}

/// FLT-01: `{"subscription": "events/subscriptions/s", "rule": {"name": "big", "sql": "..."}}`:
/// a rule added to a subscription, or (remove_rule) removed by its name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleStepDef {
    pub subscription: String,
    pub rule: RuleDef,
}

/// SES-02..05: `{"receiver": "r1", "from": "orders", "op": "accept", "session_id": "a"}`.
/// Read through a map of its fields (text, the state also bytes): smaller in the wasm than a
/// derived reader.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "BTreeMap<String, SessionField>")]
pub struct SessionDef {
    pub receiver: String,
    pub from: String,
    pub op: SessionOpDef,
    /// Accept: this session (none: the next with available messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// SetState: the new state, bytes written like a body (none clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<sbp_engine::Body>,
    /// `"as"`: names what the call returned (SessionId, LockedUntil, State), for `returned`.
    #[serde(rename = "as", default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A field of a session step: text, or (its state) bytes written like a body. Read by hand: a
/// derived untagged reader buffers every value and weighs on the wasm.
enum SessionField {
    Text(String),
    Bytes(sbp_engine::Body),
}

impl<'de> Deserialize<'de> for SessionField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SessionField;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("text, or a state's bytes {\"base64\": \"...\"}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SessionField, E> {
                Ok(SessionField::Text(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<SessionField, A::Error> {
                sbp_engine::Body::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(SessionField::Bytes)
            }
        }
        d.deserialize_any(V)
    }
}

impl TryFrom<BTreeMap<String, SessionField>> for SessionDef {
    type Error = crate::Text;

    fn try_from(mut m: BTreeMap<String, SessionField>) -> Result<SessionDef, crate::Text> {
        let mut take = |field: &str| match m.remove(field) {
            None => Ok(None),
            Some(SessionField::Text(text)) => Ok(Some(text)),
            Some(SessionField::Bytes(_)) => Err(sbp_engine::text!("s-session-text", field = field)),
        };
        let (Some(receiver), Some(from)) = (take("receiver")?, take("from")?) else {
            return Err(sbp_engine::text!("s-session-fields"));
        };
        let op = match take("op")?.as_deref().unwrap_or("accept") {
            "accept" => SessionOpDef::Accept,
            "renew_lock" => SessionOpDef::RenewLock,
            "get_state" => SessionOpDef::GetState,
            "set_state" => SessionOpDef::SetState,
            "close" => SessionOpDef::Close,
            other => return Err(sbp_engine::text!("s-session-op", op = other)),
        };
        let session_id = take("session_id")?;
        let name = take("as")?;
        let state = match m.remove("state") {
            None => None,
            Some(SessionField::Text(text)) => Some(sbp_engine::Body::from(text)),
            Some(SessionField::Bytes(bytes)) => Some(bytes),
        };
        let def = SessionDef {
            receiver,
            from,
            op,
            session_id,
            state,
            name,
        };
        match m.keys().next() {
            Some(unknown) => Err(sbp_engine::text!("s-session-field", field = unknown)),
            None => Ok(def),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionOpDef {
    #[default]
    Accept,
    RenewLock,
    GetState,
    SetState,
    Close,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiverDef {
    pub receiver: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum FaultDef {
    /// RCV-10: every lock is lost.
    ServiceUpdate,
    /// RCV-10: every lock is lost.
    OsUpdate,
    /// RCV-08: this receiver's connection drops.
    Disconnect(String),
    /// SEND-04: sends fail with ServerBusy for this long.
    ServerBusy(Dur),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BurstDef {
    pub every: Dur,
    pub size: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SpikeDef {
    pub from: Dur,
    pub duration: Dur,
    pub factor: f64,
}

/// A producer: `rate` messages a second to `to`, with bursts, a spike, a TTL, a MessageId scheme
/// (`<message_id_prefix><n>`) and a schedule offset.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProducerDef {
    pub name: String,
    pub to: String,
    #[serde(default)]
    pub rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<BurstDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spike: Option<SpikeDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id_prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_offset: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_messages: Option<u64>,
    /// SES-01: spread over this many sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u32>,
}

/// How long a consumer works on a message: `{"fixed": "1s"}`, `{"uniform": {"min": "1s", "max":
/// "3s"}}` or `{"exponential": {"mean": "500ms"}}` (seeded).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ProcessingDef {
    Fixed(Dur),
    Uniform { min: Dur, max: Dur },
    Exponential { mean: Dur },
}

/// A group of competing consumers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConsumerDef {
    pub name: String,
    pub from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
    #[serde(default)]
    pub mode: ModeDef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processing: Option<ProcessingDef>,
    #[serde(default)]
    pub abandon: f64,
    #[serde(default)]
    pub dead_letter: f64,
    #[serde(default)]
    pub defer: f64,
    #[serde(default)]
    pub crash: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_auto_lock_renewal: Option<Dur>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idempotent: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_delay: Option<Dur>,
}

/// An expected count: a number (exactly), or a range `{"min": 1, "max": 3}` (either bound may
/// be left out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountDef {
    pub min: Option<u64>,
    pub max: Option<u64>,
}

impl CountDef {
    pub fn exactly(n: u64) -> Self {
        CountDef {
            min: Some(n),
            max: Some(n),
        }
    }
    pub fn holds(&self, have: u64) -> bool {
        self.min.is_none_or(|min| have >= min) && self.max.is_none_or(|max| have <= max)
    }
    /// "3", "1..3", "1.." or "..3".
    pub fn describe(&self) -> String {
        match (self.min, self.max) {
            (Some(a), Some(b)) if a == b => a.to_string(),
            (a, b) => format!(
                "{}..{}",
                a.map(|v| v.to_string()).unwrap_or_default(),
                b.map(|v| v.to_string()).unwrap_or_default()
            ),
        }
    }
}

impl Serialize for CountDef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (self.min, self.max) {
            (Some(a), Some(b)) if a == b => s.serialize_u64(a),
            (min, max) => RangeDef { min, max }.serialize(s),
        }
    }
}

/// A number or a range. A visitor, not an untagged enum (see `ErrorMatch`).
impl<'de> Deserialize<'de> for CountDef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = CountDef;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a count, or {\"min\": n, \"max\": n}")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<CountDef, E> {
                Ok(CountDef::exactly(n))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<CountDef, A::Error> {
                let r = RangeDef::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(CountDef {
                    min: r.min,
                    max: r.max,
                })
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// Expected counts of one entity; only the fields given are checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CountsDef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<CountDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locked: Option<CountDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<CountDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred: Option<CountDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_lettered: Option<CountDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired_uncollected: Option<CountDef>,
    /// DUP-02: sends the entity dropped as duplicates so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicates_dropped: Option<CountDef>,
}

crate::read_by_key!(CountsDef {
    active,
    locked,
    scheduled,
    deferred,
    dead_lettered,
    expired_uncollected,
    duplicates_dropped,
});

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewDef {
    /// As peek shows it (TTL-10: MaxValue ExpiresAt when only the entity default applies).
    #[default]
    Peek,
    /// As a locked receive shows it (MSG-02: DeliveryCount + 1).
    Receive,
}

sbp_engine::deserialize_by_name!(ViewDef {
    "peek" => ViewDef::Peek,
    "receive" => ViewDef::Receive,
});

/// A message's properties under the SDK's names: `{"DeadLetterReason": "TTLExpiredException",
/// "ExpiresAt": "15m", "DeliveryCount": 2}`. Times are written as durations from the start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageExpect {
    pub entity: String,
    pub seq: u64,
    #[serde(default)]
    pub view: ViewDef,
    /// The message must not be there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, serde_json::Value>,
}

/// The state expected at an instant.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Expectation {
    /// When (in `expect`); an `expect` step checks at its own instant, between the steps
    /// around it.
    #[serde(default)]
    pub at: Dur,
    #[serde(default, skip_serializing_if = "VecMap::is_empty")]
    pub counts: VecMap<CountsDef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<MessageExpect>,
    /// Entity path -> whether it exists (IDLE-01).
    #[serde(default, skip_serializing_if = "VecMap::is_empty")]
    pub exists: VecMap<bool>,
    /// Namespace totals so far: `sent`, `completed`, `expired`, `dead_lettered`, `abandoned`,
    /// `lock_lost` (settlements refused), `locks_lapsed`, `rejected`, `duplicates_processed`, `duplicates_skipped`, `crashed`, each
    /// with a `min` and/or `max`.
    #[serde(default, skip_serializing_if = "VecMap::is_empty")]
    pub metrics: VecMap<RangeDef>,
    /// Event kind (as the log names it: `LockRenewed`, `DeadLettered`...) -> how many the log
    /// holds, `{"min": 1}`; a lesson's goal can ask for an action this way.
    #[serde(default, skip_serializing_if = "VecMap::is_empty")]
    pub events: VecMap<RangeDef>,
    /// What a named call (`"as"`) returned: nothing, which sequence numbers, which properties.
    #[serde(default, skip_serializing_if = "VecMap::is_empty")]
    pub returned: VecMap<ReturnedExpect>,
    /// Entity path -> settings under the management API's names
    /// (`{"DefaultMessageTimeToLive": "14d"}`).
    #[serde(default, skip_serializing_if = "VecMap::is_empty")]
    pub settings: VecMap<BTreeMap<String, serde_json::Value>>,
}

crate::read_by_key!(Expectation {
    at,
    counts,
    messages,
    exists,
    metrics,
    events,
    returned,
    settings,
});

/// What a named receive or peek returned. `messages` are checked in order, each with its
/// properties (as `messages` checks stored ones).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReturnedExpect {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<CountDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seqs: Option<Vec<u64>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<BTreeMap<String, serde_json::Value>>,
    /// A named session call: its SessionId, LockedUntil and State, as accept, renew-lock and
    /// get-state return them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub session: BTreeMap<String, serde_json::Value>,
}

crate::read_by_key!(ReturnedExpect {
    count,
    seqs,
    messages,
    session,
});

/// The error a step must fail with: a name ("MessageLockLost"), a class ("any", "client": an
/// error the client raises before anything reaches the broker), a list of those, or a name with
/// words its message must hold (`{"kind": "InvalidOperation", "message_contains": "SessionId"}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ErrorMatch {
    One(String),
    AnyOf(Vec<String>),
    Message {
        kind: String,
        message_contains: String,
    },
}

/// A name or a list of names. A visitor, not an untagged enum: that would bring serde's
/// buffering machinery into the wasm.
impl<'de> Deserialize<'de> for ErrorMatch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = ErrorMatch;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an error name or a list of error names")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<ErrorMatch, E> {
                Ok(ErrorMatch::One(name.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ErrorMatch, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(ErrorMatch::AnyOf(names))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<ErrorMatch, A::Error> {
                let m = ErrorMessageDef::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                Ok(ErrorMatch::Message {
                    kind: m.kind,
                    message_contains: m.message_contains,
                })
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// `expect_error` as a map: the error's name and words its message holds.
#[derive(Default)]
struct ErrorMessageDef {
    kind: String,
    message_contains: String,
}

crate::read_by_key!(ErrorMessageDef { kind, message_contains } required { "kind", "message_contains" });

impl ErrorMatch {
    fn names(&self) -> &[String] {
        match self {
            ErrorMatch::One(n) | ErrorMatch::Message { kind: n, .. } => std::slice::from_ref(n),
            ErrorMatch::AnyOf(v) => v,
        }
    }

    /// Whether `error` is what was expected: its kind, and its message where one is given
    /// (worded in any language: see `Text::mentions`).
    pub fn matches(&self, error: &sbp_engine::BrokerError) -> bool {
        if let ErrorMatch::Message {
            message_contains, ..
        } = self
        {
            if !error.message.mentions(message_contains) {
                return false;
            }
        }
        let kind = error.kind;
        self.names()
            .iter()
            .any(|n| match n.to_ascii_lowercase().as_str() {
                "any" => true,
                "client" => kind.is_client_error(),
                _ => kind.name().eq_ignore_ascii_case(n),
            })
    }

    /// The first name that is neither an error name nor a class, if any.
    pub fn unknown(&self) -> Option<&str> {
        self.names()
            .iter()
            .find(|n| {
                !["any", "client"].contains(&n.to_ascii_lowercase().as_str())
                    && sbp_engine::ErrorKind::from_name(n).is_none()
            })
            .map(String::as_str)
    }

    /// "MessageLockLost", or "one of MessageLockLost, MessageNotFound".
    pub fn describe(&self) -> String {
        match self {
            ErrorMatch::One(n) => n.clone(),
            ErrorMatch::AnyOf(v) => format!("one of {}", v.join(", ")),
            ErrorMatch::Message {
                kind,
                message_contains,
            } => format!("{kind} saying \"{message_contains}\""),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RangeDef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
}

crate::read_by_key!(RangeDef { min, max });

// The steps' actions, read key by key (see `read_by_key!`).
crate::read_by_key!(SendDef {
    to, message_id, ttl, scheduled_enqueue_time, subject, correlation_id, properties,
    system_properties, body, body_size, count,
} required { "to" });
crate::read_by_key!(ReceiveDef {
    from, receiver, mode, count, max_auto_lock_renewal, transfer_fails, name as "as",
} required { "from" });
crate::read_by_key!(PeekDef { from, receiver, from_seq, count, name as "as" } required { "from" });
crate::read_by_key!(SettleDef { from, seq, message, receiver, reason, description } required { "from" });
crate::read_by_key!(ReceiveDeferredDef { from, seqs, receiver, name as "as" } required { "from", "seqs" });
crate::read_by_key!(CancelDef { to, seq } required { "to", "seq" });
crate::read_by_key!(RuleStepDef { subscription, rule } required { "subscription", "rule" });
crate::read_by_key!(ReceiverDef { receiver, from } required { "receiver" });
crate::read_by_key!(BurstDef { every, size } required { "every", "size" });
crate::read_by_key!(SpikeDef { from, duration, factor } required { "from", "duration", "factor" });
crate::read_by_key!(ProducerDef {
    name, to, rate, burst, spike, ttl, message_id_prefix, schedule_offset, body_size,
    max_messages, sessions,
} required { "name", "to" });
crate::read_by_key!(ConsumerDef {
    name, from, instances, mode, processing, abandon, dead_letter, defer, crash,
    max_auto_lock_renewal, idempotent, poll_interval, restart_delay,
} required { "name", "from" });

/// The receiver a call uses when it names none.
macro_rules! with_default_receiver {
    ($($ty:ident { $($field:ident),* }),*) => {$(
        impl Default for $ty {
            fn default() -> Self {
                $ty { receiver: default_receiver(), $($field: Default::default()),* }
            }
        }
    )*};
}
with_default_receiver!(
    ReceiveDef {
        from,
        mode,
        count,
        max_auto_lock_renewal,
        transfer_fails,
        name
    },
    PeekDef {
        from,
        from_seq,
        count,
        name
    },
    SettleDef {
        from,
        seq,
        message,
        reason,
        description
    },
    ReceiveDeferredDef { from, seqs, name }
);
