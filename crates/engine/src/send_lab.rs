//! SEND-01..04: the send lab. The same batch sent by awaiting each send, by starting all and
//! awaiting together, through a semaphore of N, and fire-and-forget, with a round trip R and a
//! broker store time S, and rejections injected. Each send is settled (SEND-01): the client
//! learns the outcome R + S after it started, unless nobody awaits it (SEND-03).
use crate::error::ErrorKind;
use crate::message::format_lock_token;
use crate::time::{Duration, Instant};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
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

impl SendStrategy {
    /// "AwaitEach", "Semaphore(10)"...
    pub fn id(self) -> String {
        match self {
            SendStrategy::AwaitEach => "AwaitEach".into(),
            SendStrategy::StartAllThenAwait => "StartAllThenAwait".into(),
            SendStrategy::Semaphore(n) => format!("Semaphore({n})"),
            SendStrategy::FireAndForget => "FireAndForget".into(),
        }
    }
}

/// Every `n`th send (1-based) meets this rejection; 0 = never.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Injected {
    /// Retryable: the first attempt fails, a retry after `retry_delay` succeeds.
    pub server_busy_every: u32,
    pub quota_exceeded_every: u32,
    pub entity_not_found_every: u32,
    pub message_too_large_every: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendLabSpec {
    pub count: u32,
    /// Round trip between the client and the broker.
    pub rtt: Duration,
    /// The broker's time to accept and store a message.
    pub store: Duration,
    pub strategy: SendStrategy,
    pub injected: Injected,
    /// The SDK's back-off before it retries a ServerBusy.
    pub retry_delay: Duration,
    pub seed: u64,
}

impl SendLabSpec {
    /// The seed's example: 100 sends, 70 ms round trip, 10 ms store time.
    pub fn seed_example(strategy: SendStrategy) -> Self {
        SendLabSpec {
            count: 100,
            rtt: 70,
            store: 10,
            strategy,
            injected: Injected::default(),
            retry_delay: 800,
            seed: 1,
        }
    }
}

/// What a rejected send carried (SEND-01).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    pub error: ErrorKind,
    pub tracking_id: String,
    pub is_transient: bool,
}

/// One send on the timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendTrace {
    pub index: u32,
    pub started: Instant,
    /// When the final accept (or rejection) reached the client.
    pub settled: Instant,
    pub attempts: u32,
    /// The rejection of the first attempt, if any (a retried ServerBusy keeps it here).
    pub rejection: Option<Rejection>,
    /// Whether the message was finally stored.
    pub stored: bool,
    /// Whether any code looked at the outcome (SEND-03: fire-and-forget never does).
    pub observed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendLabResult {
    pub traces: Vec<SendTrace>,
    /// When the caller's code moves on (its await returns; at once for fire-and-forget).
    pub caller_done: Instant,
    /// When the last send was settled.
    pub all_settled: Instant,
    /// SEND-03: sends started but not settled, over time (instant, count), for fire-and-forget
    /// the client's hidden queue.
    pub in_flight: Vec<(Instant, u32)>,
    pub max_in_flight: u32,
    /// Failures the caller saw, and (SEND-03) failures nobody saw.
    pub observed_failures: u32,
    pub unobserved_failures: u32,
}

fn every(n: u32, i: u32) -> bool {
    n > 0 && (i + 1) % n == 0
}

/// Runs the lab (SEND-02: with `width` sends in flight, send i starts when send i - width settled).
pub fn run(spec: &SendLabSpec) -> SendLabResult {
    let cost = spec.rtt.max(0).saturating_add(spec.store.max(0));
    let width = match spec.strategy {
        SendStrategy::AwaitEach => 1,
        SendStrategy::StartAllThenAwait | SendStrategy::FireAndForget => spec.count.max(1),
        SendStrategy::Semaphore(n) => n.max(1),
    };
    let observed = spec.strategy != SendStrategy::FireAndForget;
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    let inj = &spec.injected;
    let mut traces: Vec<SendTrace> = Vec::with_capacity(spec.count as usize);
    for i in 0..spec.count {
        let started = if i >= width {
            traces[(i - width) as usize].settled
        } else {
            0
        };
        let error = if every(inj.entity_not_found_every, i) {
            Some(ErrorKind::MessagingEntityNotFound)
        } else if every(inj.message_too_large_every, i) {
            Some(ErrorKind::MessageSizeExceeded)
        } else if every(inj.quota_exceeded_every, i) {
            Some(ErrorKind::QuotaExceeded)
        } else if every(inj.server_busy_every, i) {
            Some(ErrorKind::ServerBusy)
        } else {
            None
        };
        let rejection = error.map(|error| Rejection {
            error,
            tracking_id: format_lock_token(
                (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64()),
            ),
            is_transient: error.is_transient(),
        });
        // A transient rejection is retried once after the back-off, and then succeeds.
        let retried = rejection.as_ref().is_some_and(|r| r.is_transient);
        let settled = if retried {
            started + cost + spec.retry_delay.max(0) + cost
        } else {
            started + cost
        };
        traces.push(SendTrace {
            index: i,
            started,
            settled,
            attempts: if retried { 2 } else { 1 },
            stored: rejection.is_none() || retried,
            rejection,
            observed,
        });
    }
    let all_settled = traces.iter().map(|t| t.settled).max().unwrap_or(0);
    let caller_done = if observed { all_settled } else { 0 };
    // In flight over time: +1 at each start, -1 at each settle.
    let mut changes: Vec<(Instant, i64)> = traces
        .iter()
        .flat_map(|t| [(t.started, 1), (t.settled, -1)])
        .collect();
    changes.sort();
    let mut in_flight = Vec::new();
    let mut level: i64 = 0;
    for (at, d) in changes {
        level += d;
        match in_flight.last_mut() {
            Some((t, l)) if *t == at => *l = level as u32,
            _ => in_flight.push((at, level.max(0) as u32)),
        }
    }
    let max_in_flight = in_flight.iter().map(|(_, l)| *l).max().unwrap_or(0);
    let failures = traces.iter().filter(|t| !t.stored).count() as u32;
    SendLabResult {
        traces,
        caller_done,
        all_settled,
        in_flight,
        max_in_flight,
        observed_failures: if observed { failures } else { 0 },
        unobserved_failures: if observed { 0 } else { failures },
    }
}
