//! The namespace: entities, messages, locks, timers and the event log. Every broker rule lives in
//! the function that applies it, with its rule id (docs/RULES.md) in a comment.
use crate::command::{Command, Fault, ReceiveMode, ReceiveOptions, Reply, Settlement};
use crate::entity::{Counts, Entity, EntityKind, SubscriptionRule};
use crate::error::{BrokerError, ErrorKind, Result};
use crate::event::{Event, EventKind, LockLossCause};
use crate::message::{
    format_lock_token, DeadLetter, Lock, Message, MessageState, MessageView, NewMessage,
    Perspective,
};
use crate::metrics::Metrics;
use crate::rules::Rule;
use crate::settings::{EntitySettings, ExpiryMode, Tier, DEFAULT_SWEEP_INTERVAL};
use crate::stream::Stream;
use crate::text;
use crate::time::{after, format_duration, Duration, Instant, MAX_VALUE, NEVER};
use rand_core::RngCore;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

mod entities;
mod expiry;
mod faults;
mod receive;
mod restore;
mod send;
mod sessions;
mod settle;
mod timers;
mod topology;
mod traffic;
use crate::actors::{ConsumerGroup, Producer};
pub use crate::entity::QueueRef;
use crate::pages::Pages;
use crate::timer::{Timer, TimerEntry};

/// A receiver remembers at most about this many messages it no longer has a use for.
const HANDLE_LIMIT: usize = 1_000;
/// Auto-forwarding stops after this many hops (the service allows 4).
const MAX_FORWARD_HOPS: u8 = 4;
pub const TTL_EXPIRED_REASON: &str = "TTLExpiredException";
pub const TTL_EXPIRED_DESCRIPTION: &str = "The message expired and was dead lettered.";
pub const MAX_DELIVERY_REASON: &str = "MaxDeliveryCountExceeded";
pub const MAX_HOPS_REASON: &str = "MaxTransferHopCountExceeded";
pub const SESSION_ID_NULL_REASON: &str = "Session id is null.";
pub const SESSION_ID_NULL_DESCRIPTION: &str =
    "Session enabled entity doesn't allow a message whose session identifier is null.";

/// What a receiver holds for a message: what the client object would carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Handle {
    Peeked,
    Locked(u128),
    ReceivedAndDeleted,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Receiver {
    pub name: String,
    pub attached: crate::sorted::SortedVec<QueueRef>,
    pub handles: BTreeMap<(QueueRef, u64), Handle>,
    /// Where each queue's next peek starts (after this SequenceNumber).
    pub peek_cursor: Vec<(QueueRef, u64)>,
    /// The next size at which forgotten handles are pruned (doubles, so pruning stays amortised).
    #[serde(default)]
    pub prune_at: usize,
}

/// Builds a namespace: tier, expiry mode, seed.
#[derive(Clone, Debug)]
pub struct NamespaceBuilder {
    tier: Tier,
    expiry_mode: ExpiryMode,
    sweep_interval: Duration,
    seed: u64,
    log_limit: Option<usize>,
    max_messages: Option<u64>,
    max_body_bytes: Option<u64>,
}

impl NamespaceBuilder {
    /// Keep at most about this many events (the oldest are dropped; long traffic runs in the
    /// browser). None: keep all.
    pub fn log_limit(mut self, limit: Option<usize>) -> Self {
        self.log_limit = limit.map(|l| l.max(100));
        self
    }
    pub fn tier(mut self, tier: Tier) -> Self {
        self.tier = tier;
        self
    }
    pub fn expiry_mode(mut self, mode: ExpiryMode) -> Self {
        self.expiry_mode = mode;
        self
    }
    pub fn sweep_interval(mut self, every: Duration) -> Self {
        self.sweep_interval = every.max(crate::limits::MIN_SWEEP_INTERVAL);
        self
    }
    /// Store at most this many messages at once (sends beyond fail with QuotaExceeded), so a
    /// run stays within memory. None: no limit.
    pub fn max_messages(mut self, limit: Option<u64>) -> Self {
        self.max_messages = limit;
        self
    }
    /// Store at most this many bytes of message bodies at once (sends beyond fail with
    /// QuotaExceeded). None: no limit.
    pub fn max_body_bytes(mut self, limit: Option<u64>) -> Self {
        self.max_body_bytes = limit;
        self
    }
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    pub fn build(self) -> Namespace {
        Namespace {
            tier: self.tier,
            expiry_mode: self.expiry_mode,
            sweep_interval: self.sweep_interval,
            now: 0,
            entities: Vec::new(),
            entity_names: Vec::new(),
            paths: BTreeMap::new(),
            receivers: Vec::new(),
            receiver_ids: BTreeMap::new(),
            timers: BinaryHeap::new(),
            timer_order: 0,
            log: Vec::new(),
            // Separate streams, so that a rejection (which draws a tracking id) never shifts the
            // lock tokens or the traffic actors' choices.
            tokens: Stream::new(self.seed),
            tracking: Stream::new(self.seed ^ 0x7472_6163_6b69_6e67),
            traffic: Stream::new(self.seed ^ 0x7472_6166_6669_6321),
            max_messages: self.max_messages,
            max_body_bytes: self.max_body_bytes,
            server_busy_until: 0,
            producers: Vec::new(),
            consumers: Vec::new(),
            metrics: Metrics::default(),
            log_limit: self.log_limit,
            log_dropped: 0,
        }
    }
}

/// A simulated Service Bus namespace. Sans-IO: time is passed in, nothing is read from a clock.
#[derive(Clone, Debug)]
pub struct Namespace {
    tier: Tier,
    expiry_mode: ExpiryMode,
    sweep_interval: Duration,
    now: Instant,
    entities: Vec<Option<Entity>>,
    entity_names: Vec<String>,
    paths: BTreeMap<String, u32>,
    receivers: Vec<Receiver>,
    receiver_ids: BTreeMap<String, u32>,
    timers: BinaryHeap<Reverse<TimerEntry>>,
    timer_order: u64,
    log: Vec<Event>,
    /// Lock tokens (RCV-02).
    tokens: Stream,
    /// Tracking ids of rejections (SEND-01).
    tracking: Stream,
    /// The traffic actors' processing times and choices.
    traffic: Stream,
    /// The most messages the namespace stores at once (None: no limit).
    max_messages: Option<u64>,
    /// The most body bytes the namespace stores at once (None: no limit).
    max_body_bytes: Option<u64>,
    server_busy_until: Instant,
    producers: Vec<Producer>,
    consumers: Vec<ConsumerGroup>,
    metrics: Metrics,
    log_limit: Option<usize>,
    log_dropped: u64,
}

impl Namespace {
    pub fn builder() -> NamespaceBuilder {
        NamespaceBuilder {
            tier: Tier::Standard,
            expiry_mode: ExpiryMode::Exact,
            sweep_interval: DEFAULT_SWEEP_INTERVAL,
            seed: 0,
            log_limit: None,
            max_messages: None,
            max_body_bytes: None,
        }
    }

    // ----- reading -------------------------------------------------------------------------

    pub fn now(&self) -> Instant {
        self.now
    }
    pub fn tier(&self) -> Tier {
        self.tier
    }
    pub fn expiry_mode(&self) -> ExpiryMode {
        self.expiry_mode
    }
    pub fn log(&self) -> &[Event] {
        &self.log
    }
    /// How many of the oldest events were dropped to keep the log within its limit.
    pub fn log_dropped(&self) -> u64 {
        self.log_dropped
    }
    /// How many events the namespace has ever logged, the dropped ones counted: a position in
    /// the log that stays put as older events are dropped.
    pub fn events_logged(&self) -> u64 {
        self.log_dropped + self.log.len() as u64
    }
    /// The events logged after the first `seen` ([`Namespace::events_logged`] then), as far as
    /// the log still holds them, and whether some of those were dropped before being read.
    pub fn events_since(&self, seen: u64) -> (&[Event], bool) {
        let from = usize::try_from(seen.saturating_sub(self.log_dropped))
            .unwrap_or(usize::MAX)
            .min(self.log.len());
        (&self.log[from..], seen < self.log_dropped)
    }
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Appends to the log, dropping the oldest half when it reaches twice its limit.
    pub(super) fn record(&mut self, event: Event) {
        self.log.push(event);
        if let Some(limit) = self.log_limit {
            if self.log.len() >= 2 * limit {
                let drop = self.log.len() - limit;
                self.log.drain(..drop);
                self.log_dropped += drop as u64;
            }
        }
    }
    /// The path an event's entity index names (kept after the entity is deleted).
    pub fn entity_name(&self, id: u32) -> &str {
        self.entity_names
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("?")
    }
    pub fn receiver_name(&self, id: u32) -> &str {
        self.receivers
            .get(id as usize)
            .map(|r| r.name.as_str())
            .unwrap_or("?")
    }
    pub fn receivers(&self) -> &[Receiver] {
        &self.receivers
    }
    /// Live entities in creation order.
    pub fn entities_by_id(&self) -> impl Iterator<Item = &Entity> {
        self.entities.iter().flatten()
    }
    /// Live entities in path order.
    pub fn entities(&self) -> impl Iterator<Item = &Entity> {
        self.paths
            .values()
            .filter_map(|&id| self.entities[id as usize].as_ref())
    }
    /// The counts of every entity added up.
    pub fn total_counts(&self) -> Counts {
        let mut total = Counts::default();
        for e in self.entities() {
            total.add(&e.counts(self.now));
        }
        total
    }

    pub fn entity(&self, path: &str) -> Option<&Entity> {
        self.paths
            .get(path)
            .and_then(|&id| self.entities[id as usize].as_ref())
    }

    /// A message as `perspective` shows it; `path` may name a dead-letter queue.
    pub fn message(&self, path: &str, seq: u64, perspective: Perspective) -> Option<MessageView> {
        let q = self.resolve(path).ok()?;
        let e = self.get(q.entity).ok()?;
        let m = e.store(q.dlq).messages.get(&seq)?;
        Some(self.view_of(q, m, perspective))
    }

    pub(crate) fn view_of(
        &self,
        q: QueueRef,
        m: &Message,
        perspective: Perspective,
    ) -> MessageView {
        let holder = m
            .lock
            .as_ref()
            .map(|l| self.receiver_name(l.holder).to_string());
        MessageView::new(
            m,
            &queue_path(self.entity_name(q.entity), q.dlq),
            holder,
            perspective,
            self.now,
        )
    }

    /// Parses `queue`, `queue/$deadletterqueue`, `topic/subscriptions/sub[/$deadletterqueue]`.
    /// DLQ-01: topics have no dead-letter queue. IDLE-04: unknown or deleted entities fail.
    pub fn resolve(&self, path: &str) -> Result<QueueRef> {
        let (base, dlq) = split_queue_path(path.trim().trim_matches('/'));
        let not_found = || {
            BrokerError::new(
                ErrorKind::MessagingEntityNotFound,
                text!("e-no-entity", path = path),
            )
        };
        let id = *self.paths.get(base).ok_or_else(not_found)?;
        let entity = self.entities[id as usize].as_ref().ok_or_else(not_found)?;
        if dlq && entity.kind == EntityKind::Topic {
            return Err(BrokerError::new(
                ErrorKind::MessagingEntityNotFound,
                text!("e-topic-no-dlq", path = path),
            ));
        }
        Ok(QueueRef { entity: id, dlq })
    }

    /// The lock on message `seq` in `q`, if it is locked.
    pub(super) fn lock_of(&self, q: QueueRef, seq: u64) -> Option<&Lock> {
        self.get(q.entity)
            .ok()?
            .store(q.dlq)
            .messages
            .get(&seq)?
            .lock
            .as_deref()
    }

    pub(super) fn get(&self, id: u32) -> Result<&Entity> {
        self.entities
            .get(id as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| self.gone(id))
    }
    pub(super) fn get_mut(&mut self, id: u32) -> Result<&mut Entity> {
        if self.entities.get(id as usize).is_some_and(Option::is_some) {
            Ok(self.entities[id as usize].as_mut().expect("checked above"))
        } else {
            Err(self.gone(id))
        }
    }
    fn gone(&self, id: u32) -> BrokerError {
        BrokerError::new(
            ErrorKind::MessagingEntityNotFound,
            text!("e-no-entity", path = self.entity_name(id)),
        )
    }

    // ----- commands ------------------------------------------------------------------------

    /// Advances the clock to `now` (firing what is due), then applies `command`. A failed command
    /// changes nothing but the log, which records the rejection.
    pub fn apply(&mut self, now: Instant, command: Command) -> Result<Reply> {
        if now > crate::limits::LATEST_INSTANT {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!(
                    "e-past-last-instant",
                    at = crate::time::format_instant(now),
                    last = crate::time::format_instant(crate::limits::LATEST_INSTANT)
                ),
            ));
        }
        self.advance_to(now);
        let operation = command.name();
        let target = command.target().map(str::to_string);
        // A settlement names its message: its rejection does too.
        let settled = match &command {
            Command::Settle { seq, .. } => Some(*seq),
            _ => None,
        };
        let mut result = self.dispatch(command);
        if let Err(err) = &mut result {
            self.track(err);
            let entity = target.as_deref().and_then(|p| self.resolve(p).ok());
            let (entity, dlq) = entity.map_or((u32::MAX, false), |q| (q.entity, q.dlq));
            // RCV-08: a settlement refused for its lock names the rule.
            let lock_lost = settled.is_some() && err.kind == ErrorKind::MessageLockLost;
            self.record(Event {
                at: self.now,
                entity,
                dlq,
                seq: settled.unwrap_or(0),
                kind: EventKind::Rejected {
                    operation: Cow::Borrowed(operation),
                    error: err.kind,
                },
                rule: lock_lost.then_some(crate::rules::Rule::Rcv08),
            });
        }
        // What the command settled or removed leaves its timers behind: dropped from the top
        // here, so the queries after it only read (`next_due`, `next_event`).
        self.prune_stale();
        result
    }

    fn dispatch(&mut self, command: Command) -> Result<Reply> {
        match command {
            Command::CreateQueue { name, settings } => {
                self.create_queue(&name, settings).map(|_| Reply::Done)
            }
            Command::CreateTopic { name, settings } => {
                self.create_topic(&name, settings).map(|_| Reply::Done)
            }
            Command::CreateSubscription {
                topic,
                name,
                settings,
                rules,
            } => self
                .create_subscription_with_rules(&topic, &name, settings, rules)
                .map(|_| Reply::Done),
            Command::CreateRule {
                subscription,
                name,
                rule,
            } => self
                .create_rule(&subscription, &name, rule)
                .map(|_| Reply::Done),
            Command::DeleteRule { subscription, name } => {
                self.delete_rule(&subscription, &name).map(|_| Reply::Done)
            }
            Command::UpdateEntity { path, settings } => {
                self.update_entity(&path, settings).map(|_| Reply::Done)
            }
            Command::DeleteEntity { path } => self.delete_entity(&path).map(|_| Reply::Done),
            Command::Send { to, message } => self.send(&to, message).map(|seq| Reply::Sent { seq }),
            Command::Schedule { to, message, at } => self
                .schedule(&to, message, at)
                .map(|seq| Reply::Sent { seq }),
            Command::CancelScheduled { to, seq } => {
                self.cancel_scheduled(&to, seq).map(|_| Reply::Done)
            }
            Command::Peek {
                receiver,
                from,
                from_seq,
                count,
            } => self
                .peek(&receiver, &from, from_seq, count)
                .map(Reply::Messages),
            Command::Receive {
                receiver,
                from,
                mode,
                count,
                options,
            } => self
                .receive(&receiver, &from, mode, count, options)
                .map(Reply::Messages),
            Command::ReceiveDeferred {
                receiver,
                from,
                seqs,
            } => self
                .receive_deferred(&receiver, &from, &seqs)
                .map(Reply::Messages),
            Command::Settle {
                receiver,
                from,
                seq,
                settlement,
                lock_token: None,
            } => self
                .settle(&receiver, &from, seq, settlement)
                .map(|_| Reply::Done),
            Command::Settle {
                receiver,
                from,
                seq,
                settlement,
                lock_token: Some(token),
            } => self
                .settle_with_token(&receiver, &from, seq, &token, settlement)
                .map(|_| Reply::Done),
            Command::CloseReceiver { receiver, from } => {
                self.close_receiver(&receiver, &from).map(|_| Reply::Done)
            }
            Command::Session { receiver, from, op } => {
                self.session(&receiver, &from, op).map(Reply::Session)
            }
            Command::Fault(fault) => self.fault(fault).map(|_| Reply::Done),
            Command::StartProducer(spec) => self.start_producer(spec).map(|_| Reply::Done),
            Command::StopProducer { name } => self.stop_producer(&name).map(|_| Reply::Done),
            Command::StartConsumers(spec) => self.start_consumers(spec).map(|_| Reply::Done),
            Command::StopConsumers { name } => self.stop_consumers(&name).map(|_| Reply::Done),
        }
    }

    /// A broker-side rejection with a tracking id (SEND-01), from the tracking stream.
    pub(super) fn rejection(&mut self, kind: ErrorKind, message: crate::text::Text) -> BrokerError {
        let mut err = BrokerError::new(kind, message);
        self.track(&mut err);
        err
    }

    /// Gives a broker-side error its tracking id; client errors never reach the broker.
    fn track(&mut self, err: &mut BrokerError) {
        if err.tracking_id.is_none() && !err.kind.is_client_error() {
            err.tracking_id = Some(format_lock_token(next_guid(&mut self.tracking)));
        }
    }

    /// A new LockToken (RCV-02), from the token stream.
    pub(super) fn next_lock_token(&mut self) -> u128 {
        next_guid(&mut self.tokens)
    }

    /// A copy of the namespace keeping only the last `keep_log` events of its log (the rest
    /// count as dropped): a rewind checkpoint. The copy goes on exactly as the namespace would;
    /// only its log's older part is gone. The stores' messages are paged ([`crate::pages`]):
    /// the copy shares the pages, a pointer per 64 messages, and what either changes afterwards
    /// is copied then, a page at a time. The rest is copied by saving it and reading it back
    /// (`restore.rs`), as a link's checkpoint is: one way to copy the state, and no derived
    /// copy of every engine type in the browser's wasm.
    pub fn snapshot(&mut self, keep_log: usize) -> Namespace {
        let pages: Vec<Option<(Pages, Pages)>> = self
            .entities
            .iter_mut()
            .map(|e| {
                e.as_mut().map(|e| {
                    (
                        std::mem::take(&mut e.main.messages),
                        std::mem::take(&mut e.dlq.messages),
                    )
                })
            })
            .collect();
        let bytes = self.save(|_| {});
        let mut copy = self.loaded(&bytes, |_| {}).unwrap_or_else(|| {
            debug_assert!(false, "a saved state reads back");
            Namespace::builder().build()
        });
        let entities = self.entities.iter_mut().zip(copy.entities.iter_mut());
        for ((e, c), pages) in entities.zip(pages) {
            if let (Some(e), Some(c), Some((main, dlq))) = (e, c, pages) {
                c.main.messages = main.clone();
                c.dlq.messages = dlq.clone();
                e.main.messages = main;
                e.dlq.messages = dlq;
            }
        }
        let start = self.log.len().saturating_sub(keep_log);
        copy.log = self.log[start..].to_vec();
        copy.log_dropped = self.log_dropped + start as u64;
        copy
    }

    /// The stored messages a checkpoint taken now would hold alone: those in pages no earlier
    /// copy shares (what changed since the last checkpoint).
    pub fn unshared_messages(&self) -> usize {
        self.entities
            .iter()
            .flatten()
            .map(|e| e.main.messages.unshared_len() + e.dlq.messages.unshared_len())
            .sum()
    }

    /// The timers set (stale ones included until they are dropped): a copy copies them.
    pub fn timer_count(&self) -> usize {
        self.timers.len()
    }

    /// The pages the stored messages are kept in: a copy costs a pointer each.
    pub fn page_count(&self) -> usize {
        self.entities
            .iter()
            .flatten()
            .map(|e| e.main.messages.page_count() + e.dlq.messages.page_count())
            .sum()
    }

    /// Whether `other` is in the same state, the log and the tracking-id stream aside: what a
    /// failed command may change (it logs a rejection, and a broker-side one draws a tracking id).
    pub fn same_state_except_log(&self, other: &Namespace) -> bool {
        let strip = |ns: &Namespace| {
            let mut copy = ns.clone();
            copy.log.clear();
            copy.log_dropped = 0;
            copy.tracking = Stream::new(0);
            format!("{copy:?}")
        };
        strip(self) == strip(other)
    }

    /// How many messages the namespace stores now (every store, DLQs included).
    pub fn stored_messages(&self) -> u64 {
        self.stored_totals().0
    }

    /// The messages the namespace stores now, and the bytes their bodies take in memory.
    pub fn stored_totals(&self) -> (u64, u64) {
        self.entities
            .iter()
            .flatten()
            .fold((0, 0), |(n, bytes), e| {
                (
                    n + (e.main.len() + e.dlq.len()) as u64,
                    bytes + e.main.body_bytes + e.dlq.body_bytes,
                )
            })
    }

    pub(super) fn emit(&mut self, q: QueueRef, seq: u64, kind: EventKind, rule: Option<Rule>) {
        self.record(Event {
            at: self.now,
            entity: q.entity,
            dlq: q.dlq,
            seq,
            kind,
            rule,
        });
    }
}

/// A version-4 GUID from `rng` (lock tokens, tracking ids).
fn next_guid(rng: &mut Stream) -> u128 {
    let hi = u128::from(rng.next_u64());
    let lo = u128::from(rng.next_u64());
    let g = (hi << 64) | lo;
    (g & !(0xF000u128 << 64) & !(0xC000u128 << 48)) | (0x4000u128 << 64) | (0x8000u128 << 48)
}

/// The entity of a queue path and whether it names the entity's dead-letter queue: what
/// [`queue_path`] joins ("orders/$deadletterqueue" is ("orders", true); the sub-queue's name in
/// any case, as the service reads it).
pub fn split_queue_path(path: &str) -> (&str, bool) {
    match path.rsplit_once('/') {
        Some((base, last)) if last.eq_ignore_ascii_case("$deadletterqueue") => (base, true),
        _ => (path, false),
    }
}

/// A subscription's path as its topic and its name ("events/subscriptions/audit" is ("events",
/// "audit")); None for a queue's or a topic's path. The path is the one the namespace creates
/// (`create_subscription`), with "subscriptions" in lower case.
pub fn split_subscription_path(path: &str) -> Option<(&str, &str)> {
    path.split_once("/subscriptions/")
}

/// "queue" or "queue/$deadletterqueue".
pub fn queue_path(entity: &str, dlq: bool) -> String {
    if dlq {
        format!("{entity}/$deadletterqueue")
    } else {
        entity.to_string()
    }
}
