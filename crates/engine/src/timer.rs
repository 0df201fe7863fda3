//! The namespace's timers: what fires when, in a canonical order.
use crate::entity::QueueRef;
use crate::time::Instant;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// What a timer does when it fires. A timer that no longer applies is skipped when popped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Timer {
    /// TTL-06 exact mode: the receivable messages of `seq`'s page of 64 due by then expire
    /// (a page has one live expiry timer: `Namespace::arm_expiry`).
    Expire {
        entity: u32,
        seq: u64,
    },
    /// The earliest LockedUntil of a (sub-)queue: its locks lapse in order (see `Store::lapses`).
    LapseCheck {
        queue: QueueRef,
    },
    AutoRenew {
        queue: QueueRef,
        seq: u64,
        token: TimerToken,
    },
    Activate {
        entity: u32,
        seq: u64,
    },
    IdleCheck {
        entity: u32,
    },
    Sweep {
        entity: u32,
    },
    /// SES-04: a session lock's LockedUntil (after the message locks of the same instant).
    SessionLapse {
        entity: u32,
        session: u32,
        token: TimerToken,
    },
    /// A producer or consumer group: see `traffic`.
    Actor(ActorTimer),
}

/// A lock token as a timer holds it: in two halves, ordered as the number, so that a timer
/// aligns to 8 bytes, not 16 (each stored message's expiry timer is 8 bytes smaller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TimerToken {
    high: u64,
    low: u64,
}

impl From<u128> for TimerToken {
    fn from(token: u128) -> Self {
        TimerToken {
            high: (token >> 64) as u64,
            low: token as u64,
        }
    }
}

impl From<TimerToken> for u128 {
    fn from(token: TimerToken) -> Self {
        (u128::from(token.high) << 64) | u128::from(token.low)
    }
}

/// A timer in the queue, ordered by (instant, timer): a canonical order, so timers due at the
/// same instant fire in the same order however and whenever they were armed (a next-due query
/// that drops a stale timer early cannot reorder anything). `order` only tells equal timers apart.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct TimerEntry {
    pub at: Instant,
    pub order: u64,
    pub timer: Timer,
}

impl PartialEq for TimerEntry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for TimerEntry {}
impl PartialOrd for TimerEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for TimerEntry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.at
            .cmp(&other.at)
            .then_with(|| self.timer.cmp(&other.timer))
            .then(self.order.cmp(&other.order))
    }
}

/// The timers the traffic actors own; a generation that no longer matches makes them stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ActorTimer {
    Produce {
        producer: u32,
        generation: u32,
    },
    Burst {
        producer: u32,
        generation: u32,
    },
    ConsumerWake {
        group: u32,
        instance: u32,
        generation: u32,
    },
    ConsumerDone {
        group: u32,
        instance: u32,
        generation: u32,
    },
}

/// What the next timer will do, as data: the UI and the CLI word it
/// (`sbp_scenario::words::due_text`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Due {
    /// Message `seq` in entity `path` reaches its ExpiresAt.
    Expire { path: String, seq: u64 },
    /// The lock of `seq` in queue `path` (a DLQ path too) lapses.
    LockLapse { path: String, seq: u64 },
    /// The lock of `seq` in `path` is renewed automatically.
    AutoRenew { path: String, seq: u64 },
    /// Scheduled message `seq` in `path` is enqueued.
    Activate { path: String, seq: u64 },
    /// `path` may be deleted for being idle.
    IdleCheck { path: String },
    /// Expired messages in `path` are swept (realistic mode).
    Sweep { path: String },
    /// The lock of session `session` in `path` lapses.
    SessionLapse { path: String, session: String },
    /// Producer `name` sends.
    Produce { name: String },
    /// Consumer `name` receives.
    ConsumerWake { name: String },
    /// Consumer `name` finishes its work.
    ConsumerDone { name: String },
}
