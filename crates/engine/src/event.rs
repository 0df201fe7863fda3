//! The event log: every state change, with the instant, the entity, the message and the rule.
use crate::error::ErrorKind;
use crate::rules::Rule;
use crate::time::Instant;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Why a lock was lost before it lapsed (RCV-08, RCV-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LockLossCause {
    ServiceUpdate,
    OsUpdate,
    EntityUpdated,
    ReceiverDisconnected,
}

impl LockLossCause {
    /// Its catalog key.
    pub fn key(self) -> &'static str {
        match self {
            LockLossCause::ServiceUpdate => "cause-service-update",
            LockLossCause::OsUpdate => "cause-os-update",
            LockLossCause::EntityUpdated => "cause-entity-updated",
            LockLossCause::ReceiverDisconnected => "cause-receiver-disconnected",
        }
    }
}

/// How a session lock ended (SES-04).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SessionEnd {
    Lapsed,
    Lost,
    Closed,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind")]
pub enum EventKind {
    EntityCreated,
    EntityUpdated,
    /// IDLE-01.
    EntityDeleted,
    Sent {
        expires_at: Instant,
        ttl_capped: bool,
        /// FLT-01: the rule whose action made this subscription's copy.
        rule_name: Option<String>,
    },
    Scheduled {
        scheduled_enqueue_time: Instant,
    },
    ScheduleCancelled,
    Activated {
        expires_at: Instant,
    },
    Peeked {
        receiver: u32,
        delivery_count: u32,
    },
    Locked {
        receiver: u32,
        delivery_count: u32,
        locked_until: Instant,
        by_sequence_number: bool,
    },
    ReceivedAndDeleted {
        receiver: u32,
    },
    LostInTransfer {
        receiver: u32,
    },
    LockRenewed {
        locked_until: Instant,
        auto: bool,
    },
    Completed {
        receiver: u32,
        nominally_expired: bool,
    },
    Abandoned {
        receiver: u32,
    },
    /// RCV-05: given back with AMQP's `released`, the delivery not counted.
    Released {
        receiver: u32,
    },
    Deferred {
        receiver: u32,
    },
    LockLapsed,
    LockLost {
        cause: LockLossCause,
    },
    /// Back at its place in the retrieval order (RCV-06), with the raw failed-delivery count.
    Requeued {
        failed_deliveries: u32,
    },
    DeadLettered {
        reason: Cow<'static, str>,
        description: Cow<'static, str>,
    },
    /// TTL-11 with the flag off: gone.
    ExpiredDropped,
    /// DUP-02: a send with a MessageId accepted within the window: acknowledged, dropped.
    DuplicateDropped {
        message_id: String,
    },
    Forwarded {
        to: u32,
        new_sequence_number: u64,
    },
    ReceiverAttached {
        receiver: u32,
    },
    /// SES-02: a receiver accepted a session (or renewed its lock).
    SessionLocked {
        receiver: u32,
        session: String,
        locked_until: Instant,
        renewed: bool,
    },
    /// SES-04: a session lock ended: lapsed, lost (a fault, an entity update) or closed.
    SessionReleased {
        receiver: u32,
        session: String,
        cause: SessionEnd,
    },
    /// SES-05: the holder set the session's state.
    SessionStateSet {
        session: String,
    },
    ReceiverDetached {
        receiver: u32,
    },
    Fault {
        what: crate::text::Text,
    },
    /// A producer or consumer group started, stopped or crashed.
    Actor {
        what: crate::text::Text,
    },
    /// A command failed; nothing changed.
    Rejected {
        operation: Cow<'static, str>,
        error: ErrorKind,
    },
}

impl EventKind {
    /// A short name for filtering: "Locked", "DeadLettered"...
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::EntityCreated => "EntityCreated",
            EventKind::EntityUpdated => "EntityUpdated",
            EventKind::EntityDeleted => "EntityDeleted",
            EventKind::Sent { .. } => "Sent",
            EventKind::Scheduled { .. } => "Scheduled",
            EventKind::ScheduleCancelled => "ScheduleCancelled",
            EventKind::Activated { .. } => "Activated",
            EventKind::Peeked { .. } => "Peeked",
            EventKind::Locked { .. } => "Locked",
            EventKind::ReceivedAndDeleted { .. } => "ReceivedAndDeleted",
            EventKind::LostInTransfer { .. } => "LostInTransfer",
            EventKind::LockRenewed { .. } => "LockRenewed",
            EventKind::Completed { .. } => "Completed",
            EventKind::Abandoned { .. } => "Abandoned",
            EventKind::Released { .. } => "Released",
            EventKind::Deferred { .. } => "Deferred",
            EventKind::LockLapsed => "LockLapsed",
            EventKind::LockLost { .. } => "LockLost",
            EventKind::Requeued { .. } => "Requeued",
            EventKind::DeadLettered { .. } => "DeadLettered",
            EventKind::ExpiredDropped => "ExpiredDropped",
            EventKind::DuplicateDropped { .. } => "DuplicateDropped",
            EventKind::Forwarded { .. } => "Forwarded",
            EventKind::ReceiverAttached { .. } => "ReceiverAttached",
            EventKind::SessionLocked { .. } => "SessionLocked",
            EventKind::SessionReleased { .. } => "SessionReleased",
            EventKind::SessionStateSet { .. } => "SessionStateSet",
            EventKind::ReceiverDetached { .. } => "ReceiverDetached",
            EventKind::Fault { .. } => "Fault",
            EventKind::Actor { .. } => "Actor",
            EventKind::Rejected { .. } => "Rejected",
        }
    }
}

/// One entry of the append-only log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Event {
    pub at: Instant,
    /// Index into the namespace's entity names (kept after deletion).
    pub entity: u32,
    /// In the entity's dead-letter sub-queue.
    pub dlq: bool,
    /// The message's SequenceNumber, 0 when the event is not about one message.
    pub seq: u64,
    pub kind: EventKind,
    /// The rule (docs/RULES.md) that caused it; None for a plain user command (create, update...).
    pub rule: Option<Rule>,
}
