//! Commands the namespace accepts, and its replies.
use crate::actors::{ConsumerSpec, ProducerSpec};
use crate::entity::SubscriptionRule;
use crate::message::{MessageView, NewMessage};
use crate::settings::EntitySettings;
use crate::time::{Duration, Instant};
use crate::Body;
use serde::{Deserialize, Serialize};

pub use crate::mode::ReceiveMode;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReceiveOptions {
    /// RCV-04: renew the lock automatically until this long after receipt.
    pub max_auto_lock_renewal: Option<Duration>,
    /// RCV-01: in ReceiveAndDelete mode, the transfer to the client fails and the message is lost.
    pub transfer_fails: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Settlement {
    Complete,
    Abandon,
    /// AMQP's `released` outcome: the lock ends and the delivery does not count (RCV-05).
    Release,
    DeadLetter {
        reason: Option<String>,
        description: Option<String>,
    },
    Defer,
    RenewLock,
}

impl Settlement {
    pub fn name(&self) -> &'static str {
        match self {
            Settlement::Complete => "complete",
            Settlement::Abandon => "abandon",
            Settlement::Release => "release",
            Settlement::DeadLetter { .. } => "dead-letter",
            Settlement::Defer => "defer",
            Settlement::RenewLock => "renew-lock",
        }
    }
}

/// What a receiver does with a session of a session entity (SES-02..05).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SessionOp {
    /// SES-02: accept the named session, or (None) the next one with available messages.
    Accept { session_id: Option<String> },
    /// SES-02: LockedUntil = now + LockDuration.
    RenewLock,
    /// SES-05.
    GetState,
    /// SES-05: None clears it.
    SetState { state: Option<Body> },
    /// SES-04: release the session; its unsettled messages come back uncounted.
    Close,
}

impl SessionOp {
    pub fn name(&self) -> &'static str {
        match self {
            SessionOp::Accept { .. } => "accept-session",
            SessionOp::RenewLock => "renew-session-lock",
            SessionOp::GetState => "get-session-state",
            SessionOp::SetState { .. } => "set-session-state",
            SessionOp::Close => "close-session",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fault {
    /// RCV-10: every lock in the namespace is lost.
    ServiceUpdate,
    /// RCV-10: every lock in the namespace is lost.
    OsUpdate,
    /// RCV-08: the receiver's connection drops, and its locks with it.
    Disconnect { receiver: String },
    /// SEND-04: sends fail with ServerBusy (retryable) for this long.
    ServerBusy { duration: Duration },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Command {
    CreateQueue {
        name: String,
        settings: EntitySettings,
    },
    CreateTopic {
        name: String,
        settings: EntitySettings,
    },
    CreateSubscription {
        topic: String,
        name: String,
        settings: EntitySettings,
        /// FLT-01: its rules by name (none: `$Default`).
        rules: Vec<(String, SubscriptionRule)>,
    },
    /// FLT-01.
    CreateRule {
        subscription: String,
        name: String,
        rule: SubscriptionRule,
    },
    DeleteRule {
        subscription: String,
        name: String,
    },
    UpdateEntity {
        path: String,
        settings: EntitySettings,
    },
    DeleteEntity {
        path: String,
    },
    Send {
        to: String,
        message: NewMessage,
    },
    Schedule {
        to: String,
        message: NewMessage,
        at: Instant,
    },
    CancelScheduled {
        to: String,
        seq: u64,
    },
    Peek {
        receiver: String,
        from: String,
        from_seq: Option<u64>,
        count: u32,
    },
    Receive {
        receiver: String,
        from: String,
        mode: ReceiveMode,
        count: u32,
        options: ReceiveOptions,
    },
    ReceiveDeferred {
        receiver: String,
        from: String,
        seqs: Vec<u64>,
    },
    Settle {
        receiver: String,
        from: String,
        seq: u64,
        settlement: Settlement,
        /// Settle with this LockToken (an earlier receive's) instead of the one the receiver
        /// holds now: a stale token gives MessageLockLost (RCV-08).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lock_token: Option<String>,
    },
    CloseReceiver {
        receiver: String,
        from: String,
    },
    Session {
        receiver: String,
        from: String,
        op: SessionOp,
    },
    Fault(Fault),
    StartProducer(ProducerSpec),
    StopProducer {
        name: String,
    },
    StartConsumers(ConsumerSpec),
    StopConsumers {
        name: String,
    },
}

impl Command {
    /// The operation's id (its words are the catalog's `op-<id>`).
    pub fn name(&self) -> &'static str {
        match self {
            Command::CreateQueue { .. } => "create-queue",
            Command::CreateTopic { .. } => "create-topic",
            Command::CreateSubscription { .. } => "create-subscription",
            Command::CreateRule { .. } => "create-rule",
            Command::DeleteRule { .. } => "delete-rule",
            Command::UpdateEntity { .. } => "update-entity",
            Command::DeleteEntity { .. } => "delete-entity",
            Command::Send { .. } => "send",
            Command::Schedule { .. } => "schedule",
            Command::CancelScheduled { .. } => "cancel-scheduled",
            Command::Peek { .. } => "peek",
            Command::Receive { .. } => "receive",
            Command::ReceiveDeferred { .. } => "receive-deferred",
            Command::Settle { settlement, .. } => settlement.name(),
            Command::CloseReceiver { .. } => "close-receiver",
            Command::Session { op, .. } => op.name(),
            Command::Fault(_) => "fault",
            Command::StartProducer(_) => "start-producer",
            Command::StopProducer { .. } => "stop-producer",
            Command::StartConsumers(_) => "start-consumers",
            Command::StopConsumers { .. } => "stop-consumers",
        }
    }

    /// The entity path the command is about, if any.
    pub fn target(&self) -> Option<&str> {
        match self {
            Command::CreateQueue { .. }
            | Command::CreateTopic { .. }
            | Command::Fault(_)
            | Command::StopProducer { .. }
            | Command::StopConsumers { .. } => None,
            Command::StartProducer(p) => Some(&p.to),
            Command::StartConsumers(c) => Some(&c.from),
            Command::CreateSubscription { topic, .. } => Some(topic),
            Command::CreateRule { subscription, .. } | Command::DeleteRule { subscription, .. } => {
                Some(subscription)
            }
            Command::UpdateEntity { path, .. } | Command::DeleteEntity { path } => Some(path),
            Command::Send { to, .. }
            | Command::Schedule { to, .. }
            | Command::CancelScheduled { to, .. } => Some(to),
            Command::Peek { from, .. }
            | Command::Receive { from, .. }
            | Command::ReceiveDeferred { from, .. }
            | Command::Settle { from, .. }
            | Command::CloseReceiver { from, .. }
            | Command::Session { from, .. } => Some(from),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reply {
    Done,
    Sent { seq: u64 },
    Messages(Vec<MessageView>),
    Session(SessionView),
}

/// A session as its holder sees it (SES-02, SES-05).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionView {
    pub session_id: String,
    pub locked_until: Instant,
    pub state: Option<Body>,
}
