//! SEND-01..03: a model of sending a batch, to compare awaiting each send, overlapping them,
//! bounding them with a semaphore, and fire-and-forget.
use crate::time::{Duration, Instant};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SendStrategy {
    /// `await SendAsync(...)` in a loop: one at a time.
    AwaitEach,
    /// Start every send, then `await Task.WhenAll(...)`.
    StartAllThenAwait,
    /// At most N sends in flight (a SemaphoreSlim of N).
    Semaphore(u32),
    /// Never awaited: the sends queue up in the client and nobody sees their result.
    FireAndForget,
}

/// One send on the timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendTrace {
    pub index: u32,
    pub started: Instant,
    /// When the broker's accept (or rejection) reached the client.
    pub settled: Instant,
    /// Whether any code looked at the outcome (SEND-03: fire-and-forget never does).
    pub observed: bool,
    pub failed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendLabResult {
    pub traces: Vec<SendTrace>,
    /// When the caller's code moves on (the await returns).
    pub caller_done: Instant,
    /// When the last send was settled by the broker.
    pub all_settled: Instant,
    /// SEND-03: the most sends waiting in the client's hidden queue at once.
    pub max_hidden_queue: u32,
    /// SEND-03: failures nobody saw.
    pub unobserved_failures: u32,
}

/// The latency model (SEND-02): each send costs a round trip `rtt` plus the broker's store time
/// `store`; sends in flight overlap. `fails(i)` says whether send `i` is rejected.
pub fn run(
    count: u32,
    rtt: Duration,
    store: Duration,
    strategy: SendStrategy,
    fails: impl Fn(u32) -> bool,
) -> SendLabResult {
    let cost = rtt.saturating_add(store);
    let width = match strategy {
        SendStrategy::AwaitEach => 1,
        SendStrategy::StartAllThenAwait | SendStrategy::FireAndForget => count.max(1),
        SendStrategy::Semaphore(n) => n.max(1),
    };
    // With `width` sends in flight, send i starts when send i - width has settled.
    let mut traces: Vec<SendTrace> = Vec::with_capacity(count as usize);
    for i in 0..count {
        let started = if i >= width {
            traces[(i - width) as usize].settled
        } else {
            0
        };
        traces.push(SendTrace {
            index: i,
            started,
            settled: started.saturating_add(cost),
            observed: strategy != SendStrategy::FireAndForget,
            failed: fails(i),
        });
    }
    let all_settled = traces.iter().map(|t| t.settled).max().unwrap_or(0);
    let (caller_done, max_hidden_queue, unobserved_failures) = match strategy {
        // The caller returns at once; everything sits in the hidden queue until settled.
        SendStrategy::FireAndForget => {
            (0, count, traces.iter().filter(|t| t.failed).count() as u32)
        }
        _ => (all_settled, 0, 0),
    };
    SendLabResult {
        traces,
        caller_done,
        all_settled,
        max_hidden_queue,
        unobserved_failures,
    }
}
