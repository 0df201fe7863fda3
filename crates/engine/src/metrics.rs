//! Metrics over time, in buckets: what was sent, completed (with end-to-end latency), expired,
//! dead-lettered and lost. Buckets start at one second; when a run outgrows [`MAX_BUCKETS`], the
//! width doubles and neighbours merge, so memory stays bounded whatever the clock does.
use crate::time::{Instant, SECOND};
use serde::{Deserialize, Serialize};

/// One second of the namespace's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    pub sent: u64,
    pub completed: u64,
    /// Sum and maximum of EnqueuedTime -> Complete over the completions in this bucket (ms).
    pub latency_sum: i64,
    pub latency_max: i64,
    pub expired: u64,
    pub dead_lettered: u64,
    pub abandoned: u64,
    /// A settlement (by a traffic consumer) refused with MessageLockLost or SessionLockLost.
    pub lock_lost: u64,
    /// RCV-06: a message's lock lapsed without settlement (anyone's: a consumer's or yours).
    pub locks_lapsed: u64,
    pub rejected: u64,
    /// RCV-12: a message processed again after its Complete failed.
    pub duplicates_processed: u64,
    /// RCV-12: a duplicate recognised by MessageId and completed without processing.
    pub duplicates_skipped: u64,
    /// Processing crashed before settling (the lock will lapse).
    pub crashed: u64,
}

impl Bucket {
    pub fn mean_latency(&self) -> Option<i64> {
        (self.completed > 0).then(|| self.latency_sum / self.completed as i64)
    }
    pub fn add(&mut self, o: &Bucket) {
        self.sent += o.sent;
        self.completed += o.completed;
        self.latency_sum += o.latency_sum;
        self.latency_max = self.latency_max.max(o.latency_max);
        self.expired += o.expired;
        self.dead_lettered += o.dead_lettered;
        self.abandoned += o.abandoned;
        self.lock_lost += o.lock_lost;
        self.locks_lapsed += o.locks_lapsed;
        self.rejected += o.rejected;
        self.duplicates_processed += o.duplicates_processed;
        self.duplicates_skipped += o.duplicates_skipped;
        self.crashed += o.crashed;
    }
}

pub const MAX_BUCKETS: usize = 4096;

/// Buckets from t=0, each `width` ms wide.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    pub width: i64,
    pub buckets: Vec<Bucket>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            width: SECOND,
            buckets: Vec::new(),
        }
    }
}

impl Metrics {
    pub(crate) fn at(&mut self, now: Instant) -> &mut Bucket {
        let now = now.max(0);
        while now / self.width >= MAX_BUCKETS as i64 {
            self.width = self.width.saturating_mul(2);
            self.buckets = self.coarse(2);
        }
        let i = (now / self.width) as usize;
        if self.buckets.len() <= i {
            self.buckets.resize(i + 1, Bucket::default());
        }
        &mut self.buckets[i]
    }

    /// Totals over all time.
    pub fn total(&self) -> Bucket {
        let mut t = Bucket::default();
        for b in &self.buckets {
            t.add(b);
        }
        t
    }

    /// Buckets merged `width` at a time (for charts over long runs).
    pub fn coarse(&self, width: usize) -> Vec<Bucket> {
        self.buckets
            .chunks(width.max(1))
            .map(|c| {
                let mut t = Bucket::default();
                for b in c {
                    t.add(b);
                }
                t
            })
            .collect()
    }
}
