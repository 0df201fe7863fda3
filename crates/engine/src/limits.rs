//! The playground's own limits. The service has limits of its own (in `settings`); these keep
//! every run bounded in time and memory, whatever a file or a link asks for. Each error that
//! enforces one names it.
use crate::time::{Duration, Instant, DAY, MINUTE, SECOND};

/// A producer's rate, spikes included (messages a second).
pub const MAX_RATE: f64 = 10_000.0;
/// A producer's burst size.
pub const MAX_BURST: u32 = 10_000;
/// The shortest time between bursts.
pub const MIN_BURST_EVERY: Duration = 100;
/// Instances in one consumer group.
pub const MAX_INSTANCES: u32 = 100;
/// The shortest time an idle consumer waits before it receives again.
pub const MIN_POLL_INTERVAL: Duration = 10;
/// Producers and consumer groups in a namespace.
pub const MAX_ACTORS: usize = 50;
/// Messages stored at once in a namespace run from a scenario (about 250 MB: `cargo bench -p
/// sbp-engine` measures the bytes per stored message).
pub const MAX_STORED_MESSAGES: u64 = 1_000_000;
/// Bytes of message bodies and their properties stored at once in a namespace run from a
/// scenario (`Message::held_bytes`).
pub const MAX_STORED_BODY_BYTES: u64 = 32 * 1024 * 1024;
/// Messages one send step sends (`count`).
pub const MAX_SEND_COUNT: u32 = 10_000;
/// Messages one receive or peek asks for.
pub const MAX_RECEIVE_COUNT: u32 = 10_000;
/// Sequence numbers in one receive-deferred call.
pub const MAX_DEFERRED_SEQS: usize = 1_000;
/// The copies one message may become through subscriptions and forwards.
pub const MAX_COPIES_PER_MESSAGE: u64 = 10_000;
/// Queues, topics and subscriptions in a namespace.
pub const MAX_ENTITIES: usize = 1_000;
/// The latest instant a step, an expectation or a link may name.
pub const LATEST_INSTANT: Instant = 30 * DAY;
/// The shortest realistic-mode sweep interval (TTL-08): a sweep scans every message.
pub const MIN_SWEEP_INTERVAL: Duration = SECOND;
/// Work (messages sent and consumer polls, estimated) a scenario may need to reach its end.
pub const MAX_RUN_WORK: u64 = 500_000;
/// The most work `sbp run --budget`/`sbp check --budget` may allow a run of one's own file:
/// two hundred times the default, still bounded (minutes, and memory kept by MAX_STORED_MESSAGES).
pub const MAX_CLI_RUN_WORK: u64 = 100_000_000;
/// Work a link may need to reach the instant it opens at (about a second in a browser).
pub const MAX_OPEN_WORK: u64 = 500_000;
/// The longest text (a name, a body, a property) a scenario or link may carry.
pub const MAX_TEXT: usize = 64 * 1024;
/// Work done in one call of `advance_by` before it hands back (the UI's frame budget).
pub const TICK_WORK: usize = 20_000;
/// The longest lock renewal a receive may ask for.
pub const MAX_AUTO_RENEWAL: Duration = 24 * 60 * MINUTE;
/// SES-01: the longest SessionId (the service's limit).
pub const MAX_SESSION_ID: usize = 128;
/// SES-05: the longest session state a file or link carries: one message of the Standard tier
/// (the engine refuses more than one message of the namespace's tier).
pub const MAX_SESSION_STATE: usize = 256 * 1024;
/// SES-01: the sessions one producer spreads its messages over.
pub const MAX_PRODUCER_SESSIONS: u32 = 1_000;
/// FLT-01: a rule's name (the service's limit).
pub const MAX_RULE_NAME: usize = 50;
/// FLT-01: rules on one subscription.
pub const MAX_RULES: usize = 100;
