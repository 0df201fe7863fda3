//! What a lane shows for each message, decided here by the broker's rules so that the UI only
//! draws it: its status, its expiry, the DeliveryCount its viewer sees, and which settlements
//! the holder may make.
use crate::entity::QueueRef;
use crate::message::{Message, MessageState};
use crate::namespace::Namespace;
use crate::time::{Instant, NEVER};

/// A message's status as a card shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CardStatus {
    Locked {
        holder: String,
    },
    Scheduled,
    Deferred,
    /// TTL-07/TTL-09: past ExpiresAt but still stored (lazy expiry, or a lock just ended).
    ExpiredNotCollected,
    DeadLettered,
    Active,
}

impl CardStatus {
    /// A short class name for styling (a dead-lettered message shows as active in its DLQ).
    pub fn class(&self) -> &'static str {
        match self {
            CardStatus::Locked { .. } => "locked",
            CardStatus::Scheduled => "scheduled",
            CardStatus::Deferred => "deferred",
            CardStatus::ExpiredNotCollected => "expired",
            CardStatus::DeadLettered => "active",
            CardStatus::Active => "active",
        }
    }
}

/// When the message expires, as far as the card is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CardExpiry {
    /// TTL-12: nothing expires in a dead-letter queue.
    NeverInDeadLetterQueue,
    /// MSG-03: TimeToLive MaxValue.
    Never,
    Passed,
    At(Instant),
}

/// A settlement the holder of a lock can make (RCV-04, RCV-05, RCV-09).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettleKind {
    Complete,
    Abandon,
    DeadLetter,
    Defer,
    RenewLock,
}

impl SettleKind {
    /// A short name (the UI's catalog key for the button).
    pub fn key(self) -> &'static str {
        match self {
            SettleKind::Complete => "settle-complete",
            SettleKind::Abandon => "settle-abandon",
            SettleKind::DeadLetter => "settle-dead-letter",
            SettleKind::Defer => "settle-defer",
            SettleKind::RenewLock => "settle-renew",
        }
    }
}

const IN_MAIN_QUEUE: &[SettleKind] = &[
    SettleKind::Complete,
    SettleKind::Abandon,
    SettleKind::DeadLetter,
    SettleKind::Defer,
    SettleKind::RenewLock,
];
/// SES-02: a session's message is renewed with its session, not on its own.
const IN_SESSION: &[SettleKind] = &[
    SettleKind::Complete,
    SettleKind::Abandon,
    SettleKind::DeadLetter,
    SettleKind::Defer,
];
/// DLQ-02: a dead-lettered message cannot be dead-lettered again.
const IN_DEAD_LETTER_QUEUE: &[SettleKind] = &[
    SettleKind::Complete,
    SettleKind::Abandon,
    SettleKind::Defer,
    SettleKind::RenewLock,
];

/// What a card shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Card {
    pub status: CardStatus,
    pub expiry: CardExpiry,
    pub locked_until: Option<Instant>,
    /// SCH-01: when a scheduled message is enqueued.
    pub enqueues_at: Option<Instant>,
    /// MSG-02: raw + 1 while locked (what the holder sees), else the raw count (what peek sees).
    pub delivery_count: u32,
    pub dead_letter_reason: Option<String>,
    /// What the lock holder may do; empty when the message is not locked.
    pub settlements: &'static [SettleKind],
}

impl Namespace {
    /// The card of message `m` stored in `q`, now.
    pub fn card(&self, q: QueueRef, m: &Message) -> Card {
        let now = self.now();
        let expired = !q.dlq && m.is_expired_at(now);
        let status = match (&m.lock, m.state) {
            (Some(l), _) => CardStatus::Locked {
                holder: self.receiver_name(l.holder).to_string(),
            },
            (None, MessageState::Scheduled) => CardStatus::Scheduled,
            (None, MessageState::Deferred) => CardStatus::Deferred,
            (None, MessageState::Active) if q.dlq => CardStatus::DeadLettered,
            (None, MessageState::Active) if expired => CardStatus::ExpiredNotCollected,
            (None, MessageState::Active) => CardStatus::Active,
        };
        let expiry = if q.dlq {
            CardExpiry::NeverInDeadLetterQueue
        } else if m.expires_at == NEVER {
            CardExpiry::Never
        } else if expired {
            CardExpiry::Passed
        } else {
            CardExpiry::At(m.expires_at)
        };
        let locked = m.lock.is_some();
        Card {
            status,
            expiry,
            locked_until: m.lock.as_ref().map(|l| l.locked_until),
            enqueues_at: m
                .scheduled_enqueue_time
                .filter(|_| m.state == MessageState::Scheduled),
            delivery_count: m.failed_deliveries.saturating_add(u32::from(locked)),
            dead_letter_reason: m.dead_letter().map(|d| d.reason.to_string()),
            settlements: match (locked, q.dlq) {
                (false, _) => &[],
                (true, false) if self.is_session_queue(q) => IN_SESSION,
                (true, false) => IN_MAIN_QUEUE,
                (true, true) => IN_DEAD_LETTER_QUEUE,
            },
        }
    }

    /// Where messages can be received from: every queue and subscription, and their DLQs, with
    /// their paths (DLQ-01), in path order.
    pub fn receive_sources(&self) -> Vec<(QueueRef, String)> {
        self.entities()
            .filter(|e| e.kind != crate::entity::EntityKind::Topic)
            .flat_map(|e| {
                [false, true].map(|dlq| {
                    (
                        QueueRef { entity: e.id, dlq },
                        crate::namespace::queue_path(&e.path, dlq),
                    )
                })
            })
            .collect()
    }
}
