//! The namespace: entities, messages, locks, timers and the event log. Every broker rule lives in
//! the function that applies it, with its SPEC id in a comment.
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
use crate::time::{after, format_duration, Duration, Instant, MAX_VALUE, NEVER};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

mod traffic;
pub use traffic::{ActorView, Burst, ConsumerSpec, Processing, ProducerSpec, Spike};
use traffic::{ConsumerGroup, Producer};

/// A main queue or its dead-letter sub-queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct QueueRef {
    pub entity: u32,
    pub dlq: bool,
}

/// A receiver remembers at most about this many messages it no longer has a use for.
const HANDLE_LIMIT: usize = 10_000;
/// Auto-forwarding stops after this many hops (the service allows 4).
const MAX_FORWARD_HOPS: u8 = 4;
pub const TTL_EXPIRED_REASON: &str = "TTLExpiredException";
pub const TTL_EXPIRED_DESCRIPTION: &str = "The message expired and was dead lettered.";
pub const MAX_DELIVERY_REASON: &str = "MaxDeliveryCountExceeded";

/// What a timer does when it fires. A timer that no longer applies is skipped when popped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Timer {
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
        token: u128,
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

/// A timer in the queue, ordered by (instant, insertion order) only: the order is unique, so the
/// timer itself is never compared (and comparing two integers keeps the heap fast).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct TimerEntry {
    pub at: Instant,
    pub order: u64,
    pub timer: Timer,
}

impl PartialEq for TimerEntry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.order) == (other.at, other.order)
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
        self.at.cmp(&other.at).then(self.order.cmp(&other.order))
    }
}

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
    pub attached: BTreeSet<QueueRef>,
    pub handles: BTreeMap<(QueueRef, u64), Handle>,
    pub peek_cursor: BTreeMap<QueueRef, u64>,
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
        self.sweep_interval = every.max(1);
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
            rng: Pcg64Mcg::seed_from_u64(self.seed),
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    rng: Pcg64Mcg,
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
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Appends to the log, dropping the oldest half when it reaches twice its limit.
    fn record(&mut self, event: Event) {
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
        let trimmed = path.trim().trim_matches('/');
        let (base, dlq) = match trimmed.rsplit_once('/') {
            Some((base, last)) if last.eq_ignore_ascii_case("$deadletterqueue") => (base, true),
            _ => (trimmed, false),
        };
        let not_found = || {
            BrokerError::new(
                ErrorKind::MessagingEntityNotFound,
                format!("the entity '{path}' does not exist (IDLE-04)"),
            )
        };
        let id = *self.paths.get(base).ok_or_else(not_found)?;
        let entity = self.entities[id as usize].as_ref().ok_or_else(not_found)?;
        if dlq && entity.kind == EntityKind::Topic {
            return Err(BrokerError::new(
                ErrorKind::MessagingEntityNotFound,
                format!(
                    "'{path}': topics have no dead-letter queue; their subscriptions do (DLQ-01)"
                ),
            ));
        }
        Ok(QueueRef { entity: id, dlq })
    }

    /// The lock on message `seq` in `q`, if it is locked.
    fn lock_of(&self, q: QueueRef, seq: u64) -> Option<&Lock> {
        self.get(q.entity)
            .ok()?
            .store(q.dlq)
            .messages
            .get(&seq)?
            .lock
            .as_ref()
    }

    fn get(&self, id: u32) -> Result<&Entity> {
        self.entities
            .get(id as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| self.gone(id))
    }
    fn get_mut(&mut self, id: u32) -> Result<&mut Entity> {
        if self.entities.get(id as usize).is_some_and(Option::is_some) {
            Ok(self.entities[id as usize].as_mut().expect("checked above"))
        } else {
            Err(self.gone(id))
        }
    }
    fn gone(&self, id: u32) -> BrokerError {
        BrokerError::new(
            ErrorKind::MessagingEntityNotFound,
            format!(
                "the entity '{}' does not exist (IDLE-04)",
                self.entity_name(id)
            ),
        )
    }

    // ----- the clock -----------------------------------------------------------------------

    /// When the next timer is due (stale timers are dropped first), or None.
    pub fn next_due(&mut self) -> Option<Instant> {
        self.prune_stale();
        self.timers.peek().map(|Reverse(e)| e.at)
    }

    /// The next live timer and a sentence saying what it will do ("lock of #12 lapses").
    pub fn next_event(&mut self) -> Option<(Instant, String)> {
        self.prune_stale();
        let Reverse(TimerEntry { at, timer, .. }) = *self.timers.peek()?;
        Some((at, self.describe_timer(timer)))
    }

    fn describe_timer(&self, timer: Timer) -> String {
        let name = |id: u32| self.entity_name(id).to_string();
        match timer {
            Timer::Expire { entity, seq } => format!("#{seq} in {} expires", name(entity)),
            Timer::LapseCheck { queue } => {
                let seq = self
                    .get(queue.entity)
                    .ok()
                    .and_then(|e| e.store(queue.dlq).lapses.front())
                    .map_or(0, |l| l.1);
                format!(
                    "lock of #{seq} in {} lapses",
                    queue_path(&name(queue.entity), queue.dlq)
                )
            }
            Timer::AutoRenew { queue, seq, .. } => {
                format!(
                    "lock of #{seq} in {} is auto-renewed",
                    queue_path(&name(queue.entity), queue.dlq)
                )
            }
            Timer::Activate { entity, seq } => {
                format!("scheduled #{seq} in {} is enqueued", name(entity))
            }
            Timer::IdleCheck { entity } => {
                format!("{} may be deleted for being idle", name(entity))
            }
            Timer::Sweep { entity } => format!("expired messages in {} are swept", name(entity)),
            Timer::Produce { producer, .. } | Timer::Burst { producer, .. } => {
                let p = self
                    .producers
                    .get(producer as usize)
                    .map(|p| p.spec.name.as_str())
                    .unwrap_or("?");
                format!("producer {p} sends")
            }
            Timer::ConsumerWake {
                group, instance, ..
            } => {
                format!(
                    "consumer {} receives",
                    self.consumer_instance_name(group, instance)
                )
            }
            Timer::ConsumerDone {
                group, instance, ..
            } => {
                format!(
                    "consumer {} finishes its work",
                    self.consumer_instance_name(group, instance)
                )
            }
        }
    }

    fn prune_stale(&mut self) {
        while let Some(&Reverse(TimerEntry { at, timer, .. })) = self.timers.peek() {
            if let Timer::LapseCheck { queue } = timer {
                // A lapse check whose first locks were settled moves to the next live one.
                if self.clean_lapses(queue) == Some(at) {
                    return;
                }
                self.timers.pop();
                if let Some(next) = self
                    .get(queue.entity)
                    .ok()
                    .and_then(|e| e.store(queue.dlq).lapse_armed)
                {
                    self.push_timer(next, Timer::LapseCheck { queue });
                }
                continue;
            }
            if self.timer_is_live(at, timer) {
                return;
            }
            self.timers.pop();
        }
    }

    /// Drops settled or renewed locks from the front of `queue`'s lapse order and returns when
    /// the first live one lapses (also recorded as the armed instant), if any.
    fn clean_lapses(&mut self, queue: QueueRef) -> Option<Instant> {
        let live = |m: Option<&Message>, token: u128, at: Instant| {
            m.and_then(|m| m.lock.as_ref())
                .is_some_and(|l| l.token == token && l.locked_until == at)
        };
        let e = self.get_mut(queue.entity).ok()?;
        let store = e.store_mut(queue.dlq);
        while let Some(&(at, seq, token)) = store.lapses.front() {
            if live(store.messages.get(&seq), token, at) {
                store.lapse_armed = Some(at);
                return Some(at);
            }
            store.lapses.pop_front();
        }
        store.lapse_armed = None;
        None
    }

    /// RCV-02/RCV-04: a lock will lapse at `at`. LockedUntil is now + LockDuration, which never
    /// goes back within a queue (an entity update loses every lock), so each sub-queue keeps its
    /// lapses in order and the timer queue holds one entry per sub-queue, not one per lock.
    fn schedule_lapse(&mut self, q: QueueRef, seq: u64, token: u128, at: Instant) {
        let Ok(e) = self.get_mut(q.entity) else {
            return;
        };
        let store = e.store_mut(q.dlq);
        match store.lapses.back() {
            Some(&(last, _, _)) if last > at => {
                // Out of order (cannot happen with one LockDuration, but stay correct).
                let i = store.lapses.partition_point(|l| l.0 <= at);
                store.lapses.insert(i, (at, seq, token));
            }
            _ => store.lapses.push_back((at, seq, token)),
        }
        if store.lapse_armed.is_none_or(|armed| at < armed) {
            store.lapse_armed = Some(at);
            self.push_timer(at, Timer::LapseCheck { queue: q });
        }
    }

    /// RCV-06/RCV-07: every lock of `queue` due by now lapses, in order.
    fn lapse_due(&mut self, queue: QueueRef) {
        let now = self.now;
        while let Some(at) = self.clean_lapses(queue) {
            if at > now {
                self.push_timer(at, Timer::LapseCheck { queue });
                return;
            }
            let Some((_, seq, _)) = self
                .get_mut(queue.entity)
                .ok()
                .and_then(|e| e.store_mut(queue.dlq).lapses.pop_front())
            else {
                return;
            };
            // RCV-06/RCV-07: the lock lapsed without settlement.
            self.emit(queue, seq, EventKind::LockLapsed, Some(Rule::Rcv06));
            self.release(queue, seq, Rule::Rcv06);
        }
    }

    /// Fires every timer due up to and including `until`, in (instant, insertion) order, then
    /// sets the clock to `until`. Time never goes back.
    pub fn advance_to(&mut self, until: Instant) {
        while let Some(&Reverse(TimerEntry { at, timer, .. })) = self.timers.peek() {
            if at > until {
                break;
            }
            self.timers.pop();
            if at > self.now {
                self.now = at;
            }
            self.fire(at, timer);
        }
        if until > self.now {
            self.now = until;
        }
    }

    fn push_timer(&mut self, at: Instant, timer: Timer) {
        if at == NEVER {
            return; // MSG-03: "never" needs no timer.
        }
        self.timer_order += 1;
        self.timers.push(Reverse(TimerEntry {
            at,
            order: self.timer_order,
            timer,
        }));
    }

    fn timer_is_live(&self, at: Instant, timer: Timer) -> bool {
        match timer {
            Timer::Expire { entity, seq } => self
                .get(entity)
                .ok()
                .and_then(|e| e.main.messages.get(&seq))
                .is_some_and(|m| {
                    m.state == MessageState::Active && m.lock.is_none() && m.expires_at <= at
                }),
            Timer::AutoRenew { queue, seq, token } => {
                self.lock_of(queue, seq).is_some_and(|l| l.token == token)
            }
            Timer::LapseCheck { queue } => self
                .get(queue.entity)
                .is_ok_and(|e| e.store(queue.dlq).lapse_armed == Some(at)),
            Timer::Activate { entity, seq } => self
                .get(entity)
                .ok()
                .and_then(|e| e.main.messages.get(&seq))
                .is_some_and(|m| m.state == MessageState::Scheduled),
            Timer::IdleCheck { entity } => self.get(entity).is_ok_and(|e| e.idle_at == Some(at)),
            Timer::Sweep { entity } => self.get(entity).is_ok_and(|e| e.sweep_armed),
            Timer::Produce { .. }
            | Timer::Burst { .. }
            | Timer::ConsumerWake { .. }
            | Timer::ConsumerDone { .. } => self.actor_timer_is_live(timer),
        }
    }

    fn fire(&mut self, at: Instant, timer: Timer) {
        if !self.timer_is_live(at, timer) {
            return;
        }
        match timer {
            Timer::Expire { entity, seq } => {
                // TTL-06/TTL-07 exact mode: expire at the instant.
                self.expire(entity, seq, Rule::Ttl06);
            }
            Timer::LapseCheck { queue } => self.lapse_due(queue),
            Timer::AutoRenew { queue, seq, token } => self.auto_renew(queue, seq, token),
            Timer::Activate { entity, seq } => self.activate(entity, seq),
            Timer::IdleCheck { entity } => self.idle_check(entity),
            Timer::Sweep { entity } => self.sweep(entity),
            Timer::Produce {
                producer,
                generation,
            } => self.produce(producer, generation, false),
            Timer::Burst {
                producer,
                generation,
            } => self.produce(producer, generation, true),
            Timer::ConsumerWake {
                group,
                instance,
                generation,
            } => self.consumer_wake(group, instance, generation),
            Timer::ConsumerDone {
                group,
                instance,
                generation,
            } => self.consumer_done(group, instance, generation),
        }
    }

    // ----- commands ------------------------------------------------------------------------

    /// Advances the clock to `now` (firing what is due), then applies `command`. A failed command
    /// changes nothing but the log, which records the rejection.
    pub fn apply(&mut self, now: Instant, command: Command) -> Result<Reply> {
        self.advance_to(now);
        let operation = command.name();
        let target = command.target().map(str::to_string);
        let result = self.dispatch(command);
        if let Err(err) = &result {
            let entity = target.as_deref().and_then(|p| self.resolve(p).ok());
            let (entity, dlq) = entity.map_or((u32::MAX, false), |q| (q.entity, q.dlq));
            self.record(Event {
                at: self.now,
                entity,
                dlq,
                seq: 0,
                kind: EventKind::Rejected {
                    operation: Cow::Borrowed(operation),
                    error: err.kind,
                },
                rule: None,
            });
        }
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
                rule,
            } => self
                .create_subscription(&topic, &name, settings, rule)
                .map(|_| Reply::Done),
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
            } => self
                .settle(&receiver, &from, seq, settlement)
                .map(|_| Reply::Done),
            Command::CloseReceiver { receiver, from } => {
                self.close_receiver(&receiver, &from).map(|_| Reply::Done)
            }
            Command::Fault(fault) => self.fault(fault).map(|_| Reply::Done),
            Command::StartProducer(spec) => self.start_producer(spec).map(|_| Reply::Done),
            Command::StopProducer { name } => self.stop_producer(&name).map(|_| Reply::Done),
            Command::StartConsumers(spec) => self.start_consumers(spec).map(|_| Reply::Done),
            Command::StopConsumers { name } => self.stop_consumers(&name).map(|_| Reply::Done),
        }
    }

    // ----- entities ------------------------------------------------------------------------

    fn check_name(&self, path: &str) -> Result<()> {
        let valid = !path.is_empty()
            && path.len() <= 260
            && path
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
            && !path.starts_with('/')
            && !path.ends_with('/')
            && !path.contains("$");
        if !valid {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                format!("'{path}' is not a valid entity name: use letters, digits, '-', '_', '.'"),
            ));
        }
        if self.entity(path).is_some() {
            return Err(BrokerError::new(
                ErrorKind::MessagingEntityAlreadyExists,
                format!("the entity '{path}' already exists"),
            ));
        }
        Ok(())
    }

    fn check_forward_targets(&self, settings: &EntitySettings) -> Result<()> {
        let targets = [
            ("ForwardTo", &settings.forward_to),
            (
                "ForwardDeadLetteredMessagesTo",
                &settings.forward_dead_lettered_messages_to,
            ),
        ];
        for (setting, target) in targets {
            let Some(target) = target else { continue };
            self.resolve(target).map_err(|_| {
                BrokerError::new(
                    ErrorKind::MessagingEntityNotFound,
                    format!("{setting}: the target '{target}' does not exist"),
                )
            })?;
        }
        Ok(())
    }

    fn add_entity(
        &mut self,
        path: &str,
        kind: EntityKind,
        settings: EntitySettings,
        rule: SubscriptionRule,
    ) -> u32 {
        let id = u32::try_from(self.entity_names.len()).unwrap_or(u32::MAX);
        self.entity_names.push(path.to_string());
        self.entities
            .push(Some(Entity::new(id, path, kind, settings, rule, self.now)));
        self.paths.insert(path.to_string(), id);
        self.emit(
            QueueRef {
                entity: id,
                dlq: false,
            },
            0,
            EventKind::EntityCreated,
            None,
        );
        self.touch(id);
        id
    }

    pub fn create_queue(&mut self, name: &str, settings: EntitySettings) -> Result<()> {
        self.check_name(name)?;
        if name.contains('/') {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                format!("'{name}': a queue name has no '/'"),
            ));
        }
        settings.validate(self.tier)?;
        self.check_forward_targets(&settings)?;
        self.add_entity(
            name,
            EntityKind::Queue,
            settings,
            SubscriptionRule::MatchAll,
        );
        Ok(())
    }

    pub fn create_topic(&mut self, name: &str, settings: EntitySettings) -> Result<()> {
        // TIER-01: Basic has no topics.
        if !self.tier.has_topics() {
            return Err(BrokerError::new(
                ErrorKind::NotSupported,
                format!("'{name}': topics are not available on the Basic tier (TIER-01)"),
            ));
        }
        self.check_name(name)?;
        if name.contains('/') {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                format!("'{name}': a topic name has no '/'"),
            ));
        }
        settings.validate(self.tier)?;
        self.add_entity(
            name,
            EntityKind::Topic,
            settings,
            SubscriptionRule::MatchAll,
        );
        Ok(())
    }

    pub fn create_subscription(
        &mut self,
        topic: &str,
        name: &str,
        settings: EntitySettings,
        rule: SubscriptionRule,
    ) -> Result<()> {
        let q = self.resolve(topic)?;
        let topic_entity = self.get(q.entity)?;
        if topic_entity.kind != EntityKind::Topic {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                format!("'{topic}' is not a topic"),
            ));
        }
        let path = format!("{topic}/subscriptions/{name}");
        if name.contains('/') {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                format!("'{name}': a subscription name has no '/'"),
            ));
        }
        self.check_name(&path)?;
        settings.validate(self.tier)?;
        self.check_forward_targets(&settings)?;
        let id = self.add_entity(
            &path,
            EntityKind::Subscription { topic: q.entity },
            settings,
            rule,
        );
        self.get_mut(q.entity)?.subscriptions.push(id);
        self.touch(q.entity);
        Ok(())
    }

    /// Changes an entity's settings. RCV-10: every lock on it is lost.
    pub fn update_entity(&mut self, path: &str, settings: EntitySettings) -> Result<()> {
        let q = self.resolve(path)?;
        if q.dlq {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                "a dead-letter queue has no settings of its own; update its entity",
            ));
        }
        settings.validate(self.tier)?;
        self.check_forward_targets(&settings)?;
        let limit = settings.auto_delete_on_idle;
        self.get_mut(q.entity)?.settings = settings;
        self.emit(q, 0, EventKind::EntityUpdated, Some(Rule::Rcv10));
        // The update is activity (IDLE-02), and AutoDeleteOnIdle may have changed: re-arm.
        if limit < MAX_VALUE {
            self.arm_idle_check(q.entity, after(self.now, limit));
        } else {
            self.get_mut(q.entity)?.idle_at = None;
        }
        self.touch(q.entity);
        for dlq in [false, true] {
            let queue = QueueRef {
                entity: q.entity,
                dlq,
            };
            for seq in self.get(q.entity)?.store(dlq).locked_seqs() {
                self.lose_lock(queue, seq, LockLossCause::EntityUpdated);
            }
        }
        Ok(())
    }

    pub fn delete_entity(&mut self, path: &str) -> Result<()> {
        let q = self.resolve(path)?;
        if q.dlq {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                "a dead-letter queue cannot be deleted",
            ));
        }
        self.remove_entity(q.entity, None);
        Ok(())
    }

    fn remove_entity(&mut self, id: u32, rule: Option<Rule>) {
        let Some(entity) = self.entities.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        self.paths.remove(&entity.path);
        if let EntityKind::Subscription { topic } = entity.kind {
            if let Ok(t) = self.get_mut(topic) {
                t.subscriptions.retain(|&s| s != id);
            }
        }
        self.emit(
            QueueRef {
                entity: id,
                dlq: false,
            },
            0,
            EventKind::EntityDeleted,
            rule,
        );
        for sub in entity.subscriptions {
            self.remove_entity(sub, rule);
        }
    }

    /// Records activity for IDLE-01/02 and arms the idle timer when it is not armed.
    fn touch(&mut self, id: u32) {
        let now = self.now;
        let Ok(e) = self.get_mut(id) else { return };
        e.last_activity = now;
        let limit = e.settings.auto_delete_on_idle;
        let kind = e.kind;
        if limit < MAX_VALUE && e.idle_at.is_none() {
            self.arm_idle_check(id, after(now, limit));
        }
        // IDLE-02: operations on a subscription keep its topic alive.
        if let EntityKind::Subscription { topic } = kind {
            self.touch(topic);
        }
    }

    /// IDLE-01/02/03: deletes the entity if it has been idle for AutoDeleteOnIdle.
    fn idle_check(&mut self, id: u32) {
        let now = self.now;
        let Ok(e) = self.get_mut(id) else { return };
        let limit = e.settings.auto_delete_on_idle;
        // IDLE-03: an entity that auto-forwards counts as having a receiver.
        if limit >= MAX_VALUE || e.settings.forward_to.is_some() {
            e.idle_at = None;
            return;
        }
        let deadline = after(e.last_activity, limit);
        // IDLE-02: scheduled messages waiting keep the entity from being idle.
        let has_scheduled = e
            .main
            .messages
            .values()
            .any(|m| m.state == MessageState::Scheduled);
        if deadline > now || has_scheduled {
            let next = if has_scheduled {
                after(now, limit)
            } else {
                deadline
            };
            self.arm_idle_check(id, next);
            return;
        }
        self.remove_entity(id, Some(Rule::Idle01));
    }

    /// One idle check per entity: a new one makes any earlier one stale.
    fn arm_idle_check(&mut self, id: u32, at: Instant) {
        let Ok(e) = self.get_mut(id) else { return };
        e.idle_at = Some(at);
        self.push_timer(at, Timer::IdleCheck { entity: id });
    }

    // ----- sending -------------------------------------------------------------------------

    /// SEND-01/04: the checks a broker makes before it accepts a message.
    fn check_send(&mut self, q: QueueRef, message: &NewMessage) -> Result<()> {
        if q.dlq {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                "messages cannot be sent to a dead-letter queue",
            ));
        }
        let size = message.body_size.unwrap_or(message.body.len() as u64);
        let max = self.tier.max_message_size();
        if size > max {
            return Err(self.rejection(
                ErrorKind::MessageSizeExceeded,
                format!(
                    "the message is {size} bytes; the {} tier allows {max} (SEND-04)",
                    self.tier
                ),
            ));
        }
        if self.now < self.server_busy_until {
            return Err(self.rejection(
                ErrorKind::ServerBusy,
                format!(
                    "the server is busy until {}; retry after a back-off (SEND-04)",
                    crate::time::format_instant(self.server_busy_until)
                ),
            ));
        }
        let e = self.get(q.entity)?;
        if matches!(e.kind, EntityKind::Subscription { .. }) {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                "messages are sent to the topic, not to a subscription",
            ));
        }
        let stored = e.stored_bytes();
        let limit = e.settings.max_size_bytes;
        if stored.saturating_add(size) > limit {
            return Err(self.rejection(
                ErrorKind::QuotaExceeded,
                format!("the entity is full: {stored} of {limit} bytes used (SEND-04)"),
            ));
        }
        Ok(())
    }

    /// A broker-side rejection with a tracking id (SEND-01).
    fn rejection(&mut self, kind: ErrorKind, message: String) -> BrokerError {
        let mut err = BrokerError::new(kind, message);
        err.tracking_id = Some(format_lock_token(self.next_guid()));
        err
    }

    fn next_guid(&mut self) -> u128 {
        let hi = u128::from(self.rng.next_u64());
        let lo = u128::from(self.rng.next_u64());
        // Shape it as a version-4 GUID.
        let g = (hi << 64) | lo;
        (g & !(0xF000u128 << 64) & !(0xC000u128 << 48)) | (0x4000u128 << 64) | (0x8000u128 << 48)
    }

    /// Sends a message and returns its SequenceNumber (for a topic, the topic's).
    pub fn send(&mut self, to: &str, message: NewMessage) -> Result<u64> {
        let q = self.resolve(to)?;
        self.send_to(q, message)
    }

    pub(crate) fn send_to(&mut self, q: QueueRef, message: NewMessage) -> Result<u64> {
        self.check_send(q, &message)?;
        self.touch(q.entity);
        let default_ttl = self.get(q.entity)?.settings.default_message_time_to_live;
        let capped = message.time_to_live.is_some_and(|t| t > default_ttl);
        let seq = self.get_mut(q.entity)?.take_seq();
        let m = self.new_stored(q.entity, seq, message, None)?;
        // TTL-01: ExpiresAt = EnqueuedTime + TTL; TTL-02: a longer TTL is capped by the default.
        let rule = if capped { Rule::Ttl02 } else { Rule::Ttl01 };
        self.emit(
            q,
            seq,
            EventKind::Sent {
                expires_at: m.expires_at,
                ttl_capped: capped,
            },
            Some(rule),
        );
        self.metrics.at(self.now).sent += 1;
        self.arrive(q.entity, m, 0);
        Ok(seq)
    }

    /// SCH-01: schedules a message; it is enqueued at `at`. Returns its SequenceNumber.
    pub fn schedule(&mut self, to: &str, message: NewMessage, at: Instant) -> Result<u64> {
        let q = self.resolve(to)?;
        self.schedule_to(q, message, at)
    }

    pub(crate) fn schedule_to(
        &mut self,
        q: QueueRef,
        message: NewMessage,
        at: Instant,
    ) -> Result<u64> {
        self.check_send(q, &message)?;
        self.touch(q.entity);
        let at = at.max(self.now);
        let seq = self.get_mut(q.entity)?.take_seq();
        let mut m = self.new_stored(q.entity, seq, message, Some(at))?;
        m.state = MessageState::Scheduled;
        m.scheduled_enqueue_time = Some(at);
        // TTL-05: expiry counts from the scheduled enqueue time.
        m.enqueue_at(at);
        self.get_mut(q.entity)?.main.insert(m);
        self.emit(
            q,
            seq,
            EventKind::Scheduled {
                scheduled_enqueue_time: at,
            },
            Some(Rule::Sch01),
        );
        self.metrics.at(self.now).sent += 1;
        self.push_timer(
            at,
            Timer::Activate {
                entity: q.entity,
                seq,
            },
        );
        Ok(seq)
    }

    /// SCH-01: cancelling removes a scheduled message.
    pub fn cancel_scheduled(&mut self, to: &str, seq: u64) -> Result<()> {
        let q = self.resolve(to)?;
        let e = self.get(q.entity)?;
        if !e
            .main
            .messages
            .get(&seq)
            .is_some_and(|m| m.state == MessageState::Scheduled)
        {
            return Err(BrokerError::new(
                ErrorKind::MessageNotFound,
                format!("no scheduled message #{seq} in '{to}'"),
            ));
        }
        self.touch(q.entity);
        self.get_mut(q.entity)?.main.remove(seq);
        self.emit(q, seq, EventKind::ScheduleCancelled, Some(Rule::Sch01));
        Ok(())
    }

    /// Builds the stored message: TTL-01/02/03 (the entity default caps and fills in the TTL).
    fn new_stored(
        &mut self,
        entity: u32,
        seq: u64,
        new: NewMessage,
        scheduled: Option<Instant>,
    ) -> Result<Message> {
        let default_ttl = self.get(entity)?.settings.default_message_time_to_live;
        let own_ttl = new
            .time_to_live
            .map(|t| t.clamp(0, MAX_VALUE).min(default_ttl));
        let effective_ttl = own_ttl.unwrap_or(default_ttl);
        let enqueued = scheduled.unwrap_or(self.now);
        let extra = if new.subject.is_some()
            || new.correlation_id.is_some()
            || !new.application_properties.is_empty()
        {
            Some(Box::new(crate::message::Extra {
                subject: new.subject,
                correlation_id: new.correlation_id,
                application_properties: new.application_properties,
                dead_letter: None,
            }))
        } else {
            None
        };
        Ok(Message {
            sequence_number: seq,
            message_id: new.message_id.unwrap_or_else(|| seq.to_string()),
            enqueued_time: enqueued,
            own_ttl,
            effective_ttl,
            expires_at: after(enqueued, effective_ttl),
            scheduled_enqueue_time: None,
            state: MessageState::Active,
            lock: None,
            failed_deliveries: 0,
            body_size: new.body_size.unwrap_or(new.body.len() as u64),
            body: new.body,
            extra,
        })
    }

    /// A message arrives at a queue or topic at `self.now`: forwarded (FWD), fanned out to the
    /// subscriptions (TOP-01), or stored.
    fn arrive(&mut self, entity: u32, mut m: Message, hops: u8) {
        let q = QueueRef { entity, dlq: false };
        let Ok(e) = self.get(entity) else { return };
        let kind = e.kind;
        let forward_to = e.settings.forward_to.clone();
        m.enqueue_at(self.now);
        match kind {
            EntityKind::Topic => self.fan_out(entity, m, hops),
            EntityKind::Queue | EntityKind::Subscription { .. } => {
                if let Some(target) = forward_to.filter(|_| hops < MAX_FORWARD_HOPS) {
                    if self.forward(q, m.clone(), &target, hops) {
                        return;
                    }
                }
                self.store_active(entity, m);
            }
        }
    }

    /// TOP-01 and TTL-04: a copy for every subscription whose rule matches, with the smallest TTL.
    fn fan_out(&mut self, topic: u32, m: Message, hops: u8) {
        let Ok(t) = self.get(topic) else { return };
        let topic_default = t.settings.default_message_time_to_live;
        let subs: Vec<u32> = t.subscriptions.clone();
        for sub in subs {
            let Ok(s) = self.get(sub) else { continue };
            if !s.rule.matches(&m) {
                continue;
            }
            let sub_default = s.settings.default_message_time_to_live;
            let mut copy = m.clone();
            // TTL-04: min(message TTL, topic default, subscription default).
            copy.own_ttl = m.own_ttl.map(|t| t.min(sub_default));
            copy.effective_ttl = copy.own_ttl.unwrap_or(topic_default.min(sub_default));
            self.emit(
                QueueRef {
                    entity: sub,
                    dlq: false,
                },
                copy.sequence_number,
                EventKind::Sent {
                    expires_at: after(self.now, copy.effective_ttl),
                    ttl_capped: false,
                },
                Some(Rule::Top01),
            );
            self.arrive(sub, copy, hops);
        }
    }

    /// FWD: moves a message to `target`, which gives it its own SequenceNumber. False if the
    /// target is gone (the message then stays where it is).
    fn forward(&mut self, from: QueueRef, mut m: Message, target: &str, hops: u8) -> bool {
        let Ok(to) = self.resolve(target) else {
            return false;
        };
        if to.dlq {
            return false;
        }
        let Ok(t) = self.get_mut(to.entity) else {
            return false;
        };
        let new_seq = t.take_seq();
        let default_ttl = t.settings.default_message_time_to_live;
        self.emit(
            from,
            m.sequence_number,
            EventKind::Forwarded {
                to: to.entity,
                new_sequence_number: new_seq,
            },
            Some(Rule::Fwd),
        );
        m.sequence_number = new_seq;
        m.lock = None;
        m.state = MessageState::Active;
        // A dead-letter forwarded out of a DLQ starts afresh under the target's default TTL (its
        // own TTL has already run out); an ordinary forward keeps its TTL, from the new enqueue.
        m.own_ttl = if from.dlq {
            None
        } else {
            m.own_ttl.map(|t| t.min(default_ttl))
        };
        m.effective_ttl = m.own_ttl.unwrap_or(default_ttl);
        self.touch(to.entity);
        self.arrive(to.entity, m, hops + 1);
        true
    }

    /// Stores an Active message in a queue or subscription and arms its expiry (exact mode).
    fn store_active(&mut self, entity: u32, m: Message) {
        let expires_at = m.expires_at;
        let seq = m.sequence_number;
        let exact = self.expiry_mode == ExpiryMode::Exact;
        let Ok(e) = self.get_mut(entity) else { return };
        e.main.insert(m);
        if exact {
            self.push_timer(expires_at, Timer::Expire { entity, seq });
        }
    }

    /// SCH-01: the scheduled time has come: enqueue it (EnqueuedTime = now).
    fn activate(&mut self, entity: u32, seq: u64) {
        let Ok(e) = self.get_mut(entity) else { return };
        let Some(mut m) = e.main.remove(seq) else {
            return;
        };
        m.state = MessageState::Active;
        m.enqueue_at(self.now);
        self.emit(
            QueueRef { entity, dlq: false },
            seq,
            EventKind::Activated {
                expires_at: m.expires_at,
            },
            Some(Rule::Sch01),
        );
        self.arrive(entity, m, 0);
    }

    // ----- expiry and dead-lettering ---------------------------------------------------------

    /// Removes an expired message from the main queue: to the DLQ with TTLExpiredException when
    /// DeadLetteringOnMessageExpiration is set, else dropped (TTL-11).
    fn expire(&mut self, entity: u32, seq: u64, because: Rule) {
        let Ok(e) = self.get_mut(entity) else { return };
        let flag = e.settings.dead_lettering_on_message_expiration;
        let Some(m) = e.main.remove(seq) else { return };
        let q = QueueRef { entity, dlq: false };
        self.metrics.at(self.now).expired += 1;
        // The log names the rule that made expiry happen now (sweep, scan, release); a plain
        // timer is TTL-11's own case.
        let rule = if because == Rule::Ttl06 {
            Rule::Ttl11
        } else {
            because
        };
        if flag {
            self.dead_letter(
                q,
                m,
                Cow::Borrowed(TTL_EXPIRED_REASON),
                Cow::Borrowed(TTL_EXPIRED_DESCRIPTION),
                rule,
            );
        } else {
            self.emit(q, seq, EventKind::ExpiredDropped, Some(rule));
        }
    }

    /// Moves a message (already taken out of its store) to the entity's DLQ, or to
    /// ForwardDeadLetteredMessagesTo. DLQ-03: reason and description are application properties too.
    fn dead_letter(
        &mut self,
        from: QueueRef,
        mut m: Message,
        reason: Cow<'static, str>,
        description: Cow<'static, str>,
        rule: Rule,
    ) {
        let entity = from.entity;
        let Ok(e) = self.get(entity) else { return };
        let forward = e.settings.forward_dead_lettered_messages_to.clone();
        self.metrics.at(self.now).dead_lettered += 1;
        m.lock = None;
        m.state = MessageState::Active;
        m.extra_mut().dead_letter = Some(DeadLetter {
            reason: reason.clone(),
            description: description.clone(),
            source: None,
        });
        let seq = m.sequence_number;
        self.emit(
            from,
            seq,
            EventKind::DeadLettered {
                reason,
                description,
            },
            Some(rule),
        );
        let dlq = QueueRef { entity, dlq: true };
        if let Some(target) = forward {
            // DeadLetterSource: the entity the message was dead-lettered in.
            if let Some(dl) = m.extra_mut().dead_letter.as_mut() {
                dl.source = Some(self.entity_name(entity).to_string());
            }
            if self.forward(dlq, m.clone(), &target, 0) {
                return;
            }
        }
        if let Ok(e) = self.get_mut(entity) {
            e.dlq.insert(m);
        }
    }

    /// TTL-08: a sweep while a receiver is attached collects every expired message.
    fn sweep(&mut self, entity: u32) {
        let now = self.now;
        let Ok(e) = self.get_mut(entity) else { return };
        let attached = e.attached_receivers > 0;
        if !attached {
            e.sweep_armed = false;
            return;
        }
        let expired: Vec<u64> = e
            .main
            .available
            .iter()
            .copied()
            .filter(|s| e.main.messages.get(s).is_some_and(|m| m.is_expired_at(now)))
            .collect();
        for seq in expired {
            self.expire(entity, seq, Rule::Ttl08);
        }
        let every = self.sweep_interval;
        self.push_timer(after(now, every), Timer::Sweep { entity });
    }

    // ----- receiving -----------------------------------------------------------------------

    fn receiver_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.receiver_ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.receivers.len()).unwrap_or(u32::MAX);
        self.receivers.push(Receiver {
            name: name.to_string(),
            ..Receiver::default()
        });
        self.receiver_ids.insert(name.to_string(), id);
        id
    }

    /// A receiver link opens on the queue; in realistic mode the sweep starts (TTL-08).
    fn attach(&mut self, receiver: u32, q: QueueRef) {
        if !self.receivers[receiver as usize].attached.insert(q) {
            return;
        }
        self.emit(q, 0, EventKind::ReceiverAttached { receiver }, None);
        let realistic = self.expiry_mode == ExpiryMode::Realistic;
        let now = self.now;
        let every = self.sweep_interval;
        let Ok(e) = self.get_mut(q.entity) else {
            return;
        };
        if !q.dlq {
            e.attached_receivers += 1;
            if realistic && !e.sweep_armed {
                e.sweep_armed = true;
                self.push_timer(after(now, every), Timer::Sweep { entity: q.entity });
            }
        }
    }

    fn detach(&mut self, receiver: u32, q: QueueRef) {
        if !self.receivers[receiver as usize].attached.remove(&q) {
            return;
        }
        self.emit(q, 0, EventKind::ReceiverDetached { receiver }, None);
        if let (false, Ok(e)) = (q.dlq, self.get_mut(q.entity)) {
            e.attached_receivers = e.attached_receivers.saturating_sub(1);
        }
    }

    /// RCV-11: browse without locking, in SequenceNumber order, from `from_seq` or after the last
    /// peeked message. Shows active, deferred, scheduled and locked messages.
    pub fn peek(
        &mut self,
        receiver: &str,
        from: &str,
        from_seq: Option<u64>,
        count: u32,
    ) -> Result<Vec<MessageView>> {
        let q = self.resolve(from)?;
        let r = self.receiver_id(receiver);
        self.touch(q.entity); // IDLE-02: peeks count as activity
        let start = from_seq.unwrap_or_else(|| {
            self.receivers[r as usize]
                .peek_cursor
                .get(&q)
                .copied()
                .unwrap_or(0)
                + 1
        });
        let e = self.get(q.entity)?;
        let views: Vec<MessageView> = e
            .store(q.dlq)
            .messages
            .range(start..)
            .take(count as usize)
            .map(|(_, m)| self.view_of(q, m, Perspective::Peek))
            .collect();
        let receiver_state = &mut self.receivers[r as usize];
        if let Some(last) = views.last() {
            receiver_state.peek_cursor.insert(q, last.sequence_number);
        }
        let seqs: Vec<u64> = views.iter().map(|v| v.sequence_number).collect();
        for seq in seqs {
            self.remember(r, (q, seq), Handle::Peeked, false);
        }
        for v in &views {
            self.emit(
                q,
                v.sequence_number,
                EventKind::Peeked {
                    receiver: r,
                    delivery_count: v.delivery_count,
                },
                Some(Rule::Rcv11),
            );
        }
        Ok(views)
    }

    /// Receives up to `count` messages that are available now (RCV-01, RCV-02, TTL-06).
    pub fn receive(
        &mut self,
        receiver: &str,
        from: &str,
        mode: ReceiveMode,
        count: u32,
        options: ReceiveOptions,
    ) -> Result<Vec<MessageView>> {
        let q = self.resolve(from)?;
        if matches!(self.get(q.entity)?.kind, EntityKind::Topic) {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                format!("'{from}' is a topic: receive from one of its subscriptions"),
            ));
        }
        let r = self.receiver_id(receiver);
        self.receive_into(r, q, mode, count, &options, |ns, q, m| {
            ns.view_of(q, m, Perspective::Receive)
        })
    }

    /// Receives for receiver `r`, turning each message into what `make` builds (a view for a
    /// client, less for a traffic actor).
    pub(crate) fn receive_into<T>(
        &mut self,
        r: u32,
        q: QueueRef,
        mode: ReceiveMode,
        count: u32,
        options: &ReceiveOptions,
        make: impl Fn(&Namespace, QueueRef, &Message) -> T,
    ) -> Result<Vec<T>> {
        self.get(q.entity)?;
        self.touch(q.entity);
        self.attach(r, q);
        let mut out = Vec::new();
        while out.len() < count as usize {
            let now = self.now;
            let e = self.get_mut(q.entity)?;
            let Some(&seq) = e.store(q.dlq).available.first() else {
                break;
            };
            let expired = e
                .store(q.dlq)
                .messages
                .get(&seq)
                .is_some_and(|m| m.is_expired_at(now));
            // TTL-06/07: never returned once expired; a receive collects what it scans past.
            // TTL-12: nothing expires in a DLQ.
            if expired && !q.dlq {
                let rule = if self.expiry_mode == ExpiryMode::Realistic {
                    Rule::Ttl07
                } else {
                    Rule::Ttl06
                };
                self.expire(q.entity, seq, rule);
                continue;
            }
            match mode {
                ReceiveMode::PeekLock => {
                    let Some(view) = self.lock(q, seq, r, options, false, &make) else {
                        break;
                    };
                    out.push(view);
                }
                ReceiveMode::ReceiveAndDelete => {
                    // RCV-01: settled as it is sent; a failed transfer loses it.
                    let Some(m) = self.get_mut(q.entity)?.store_mut(q.dlq).remove(seq) else {
                        break;
                    };
                    if options.transfer_fails {
                        self.emit(
                            q,
                            seq,
                            EventKind::LostInTransfer { receiver: r },
                            Some(Rule::Rcv01),
                        );
                        continue;
                    }
                    let view = make(self, q, &m);
                    self.remember(r, (q, seq), Handle::ReceivedAndDeleted, true);
                    self.emit(
                        q,
                        seq,
                        EventKind::ReceivedAndDeleted { receiver: r },
                        Some(Rule::Rcv01),
                    );
                    self.count_completed(m.enqueued_time);
                    out.push(view);
                }
            }
        }
        Ok(out)
    }

    /// RCV-02: lock exclusively, LockedUntil = now + LockDuration, a new LockToken.
    fn lock<T>(
        &mut self,
        q: QueueRef,
        seq: u64,
        r: u32,
        options: &ReceiveOptions,
        by_seq: bool,
        make: &impl Fn(&Namespace, QueueRef, &Message) -> T,
    ) -> Option<T> {
        let token = self.next_guid();
        let now = self.now;
        let e = self.get_mut(q.entity).ok()?;
        let lock_duration = e.settings.lock_duration;
        let locked_until = after(now, lock_duration);
        let auto_renew_until = options
            .max_auto_lock_renewal
            .filter(|d| *d > 0)
            .map(|d| after(now, d));
        let store = e.store_mut(q.dlq);
        store.available.remove(&seq);
        let m = store.messages.get_mut(&seq)?;
        m.lock = Some(Lock {
            token,
            holder: r,
            locked_until,
            auto_renew_until,
        });
        let delivery_count = m.failed_deliveries.saturating_add(1);
        self.remember(r, (q, seq), Handle::Locked(token), true);
        self.emit(
            q,
            seq,
            EventKind::Locked {
                receiver: r,
                delivery_count,
                locked_until,
                by_sequence_number: by_seq,
            },
            Some(if by_seq { Rule::Rcv09 } else { Rule::Rcv02 }),
        );
        self.schedule_lapse(q, seq, token, locked_until);
        if auto_renew_until.is_some() {
            self.push_timer(
                auto_renew_at(now, locked_until),
                Timer::AutoRenew {
                    queue: q,
                    seq,
                    token,
                },
            );
        }
        let m = self.get(q.entity).ok()?.store(q.dlq).messages.get(&seq)?;
        Some(make(self, q, m))
    }

    /// RCV-04: auto lock renewal, until the maximum renewal duration.
    fn auto_renew(&mut self, q: QueueRef, seq: u64, token: u128) {
        let now = self.now;
        let Ok(e) = self.get_mut(q.entity) else {
            return;
        };
        let Some(lock) = e
            .store_mut(q.dlq)
            .messages
            .get_mut(&seq)
            .and_then(|m| m.lock.as_mut())
        else {
            return;
        };
        let Some(until) = lock.auto_renew_until else {
            return;
        };
        if now >= until || lock.locked_until <= now {
            return;
        }
        let Some(locked_until) = self.renew_lock(q, seq, token, true) else {
            return;
        };
        let next = auto_renew_at(now, locked_until);
        if next < until {
            self.push_timer(
                next,
                Timer::AutoRenew {
                    queue: q,
                    seq,
                    token,
                },
            );
        }
    }

    /// RCV-09: receive deferred messages by SequenceNumber. Any unknown number fails the whole call.
    /// TTL-13: an expired deferred message is dead-lettered (if set) and the call fails.
    pub fn receive_deferred(
        &mut self,
        receiver: &str,
        from: &str,
        seqs: &[u64],
    ) -> Result<Vec<MessageView>> {
        let q = self.resolve(from)?;
        let r = self.receiver_id(receiver);
        self.touch(q.entity);
        let now = self.now;
        let e = self.get(q.entity)?;
        let store = e.store(q.dlq);
        let mut expired = Vec::new();
        for &seq in seqs {
            match store.messages.get(&seq) {
                Some(m) if m.state == MessageState::Deferred && m.lock.is_none() => {
                    if m.is_expired_at(now) && !q.dlq {
                        expired.push(seq);
                    }
                }
                _ => {
                    return Err(BrokerError::new(
                        ErrorKind::MessageNotFound,
                        format!("no deferred message #{seq} in '{from}' (RCV-09)"),
                    ))
                }
            }
        }
        if !expired.is_empty() {
            for &seq in &expired {
                self.expire(q.entity, seq, Rule::Ttl13);
            }
            return Err(BrokerError::new(
                ErrorKind::MessageNotFound,
                format!(
                    "deferred message #{} in '{from}' had expired (TTL-13)",
                    expired[0]
                ),
            ));
        }
        self.attach(r, q);
        let options = ReceiveOptions::default();
        Ok(seqs
            .iter()
            .filter_map(|&seq| {
                self.lock(
                    q,
                    seq,
                    r,
                    &options,
                    true,
                    &|ns: &Namespace, q, m: &Message| ns.view_of(q, m, Perspective::Receive),
                )
            })
            .collect())
    }

    /// Complete, abandon, dead-letter, defer or renew the lock of a message the receiver holds.
    pub fn settle(
        &mut self,
        receiver: &str,
        from: &str,
        seq: u64,
        settlement: Settlement,
    ) -> Result<()> {
        let q = self.resolve(from)?;
        let r = self.receiver_id(receiver);
        self.settle_as(r, q, seq, settlement)
    }

    /// Settlement by receiver `r` of message `seq` in `q`, with the checks the SDK and broker make.
    pub(crate) fn settle_as(
        &mut self,
        r: u32,
        q: QueueRef,
        seq: u64,
        settlement: Settlement,
    ) -> Result<()> {
        let receiver = self.receiver_name(r).to_string();
        let from = queue_path(self.entity_name(q.entity), q.dlq);
        let handle = self.receivers[r as usize].handles.get(&(q, seq)).copied();
        let verb = settlement.name();
        let token = match handle {
            None => {
                return Err(BrokerError::new(
                    ErrorKind::InvalidOperation,
                    format!("{receiver} has not received message #{seq} from '{from}'; only a received message can be settled"),
                ))
            }
            // RCV-11: a peeked message has no lock.
            Some(Handle::Peeked) => {
                return Err(BrokerError::new(
                    ErrorKind::InvalidOperation,
                    format!("#{seq} was only peeked; {verb} needs a message received in PeekLock mode (RCV-11)"),
                ))
            }
            // RCV-01: received-and-deleted messages are already settled.
            Some(Handle::ReceivedAndDeleted) => {
                return Err(BrokerError::new(
                    ErrorKind::InvalidOperation,
                    format!("#{seq} was received in ReceiveAndDelete mode; it is already settled and cannot be {verb}d (RCV-01)"),
                ))
            }
            Some(Handle::Locked(token)) => token,
        };
        let now = self.now;
        self.get(q.entity)?;
        let holds = self
            .lock_of(q, seq)
            .is_some_and(|l| l.token == token && l.locked_until > now);
        if !holds {
            // RCV-08: lapsed, lost, or already settled.
            return Err(self.rejection(
                ErrorKind::MessageLockLost,
                format!("the lock on #{seq} held by {receiver} was lost: it lapsed, was lost, or the message was already settled (RCV-08)"),
            ));
        }
        if matches!(settlement, Settlement::DeadLetter { .. }) && q.dlq {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                format!("#{seq} is already in a dead-letter queue and cannot be dead-lettered again (DLQ-02)"),
            ));
        }
        self.touch(q.entity);
        match settlement {
            Settlement::Complete => {
                let e = self.get_mut(q.entity)?;
                let Some(m) = e.store_mut(q.dlq).remove(seq) else {
                    return Ok(());
                };
                let expired = m.is_expired_at(now) && !q.dlq;
                self.count_completed(m.enqueued_time);
                // TTL-09: completing a nominally expired locked message succeeds.
                self.emit(
                    q,
                    seq,
                    EventKind::Completed {
                        receiver: r,
                        nominally_expired: expired,
                    },
                    Some(if expired { Rule::Ttl09 } else { Rule::Rcv05 }),
                );
            }
            Settlement::Abandon => {
                self.metrics.at(now).abandoned += 1;
                self.emit(
                    q,
                    seq,
                    EventKind::Abandoned { receiver: r },
                    Some(Rule::Rcv05),
                );
                self.release(q, seq, Rule::Rcv05);
            }
            Settlement::DeadLetter {
                reason,
                description,
            } => {
                let e = self.get_mut(q.entity)?;
                let Some(m) = e.store_mut(q.dlq).remove(seq) else {
                    return Ok(());
                };
                let reason = reason.unwrap_or_default();
                let description = description.unwrap_or_default();
                self.dead_letter(
                    q,
                    m,
                    Cow::Owned(reason),
                    Cow::Owned(description),
                    Rule::Rcv05,
                );
            }
            Settlement::Defer => {
                // RCV-09: stays, invisible to normal receive; the delivery counts.
                let e = self.get_mut(q.entity)?;
                let store = e.store_mut(q.dlq);
                if let Some(m) = store.messages.get_mut(&seq) {
                    m.lock = None;
                    m.state = MessageState::Deferred;
                    m.failed_deliveries = m.failed_deliveries.saturating_add(1);
                }
                self.emit(
                    q,
                    seq,
                    EventKind::Deferred { receiver: r },
                    Some(Rule::Rcv09),
                );
            }
            Settlement::RenewLock => {
                // RCV-04: LockedUntil = now + LockDuration; DeliveryCount unchanged. The playground
                // lets the holder renew a nominally expired message's lock (TTL-09: expiry does
                // not touch a locked message).
                self.renew_lock(q, seq, token, false);
            }
        }
        Ok(())
    }

    /// RCV-04: LockedUntil = now + LockDuration; DeliveryCount unchanged. Returns the new LockedUntil.
    fn renew_lock(&mut self, q: QueueRef, seq: u64, token: u128, auto: bool) -> Option<Instant> {
        let now = self.now;
        let e = self.get_mut(q.entity).ok()?;
        let lock_duration = e.settings.lock_duration;
        let lock = e.store_mut(q.dlq).messages.get_mut(&seq)?.lock.as_mut()?;
        lock.locked_until = after(now, lock_duration);
        let locked_until = lock.locked_until;
        self.emit(
            q,
            seq,
            EventKind::LockRenewed { locked_until, auto },
            Some(Rule::Rcv04),
        );
        self.schedule_lapse(q, seq, token, locked_until);
        Some(locked_until)
    }

    /// A message consumed (completed, or received and deleted): throughput and end-to-end latency.
    fn count_completed(&mut self, enqueued_time: Instant) {
        let now = self.now;
        let latency = (now - enqueued_time).max(0);
        let b = self.metrics.at(now);
        b.completed += 1;
        b.latency_sum = b.latency_sum.saturating_add(latency);
        b.latency_max = b.latency_max.max(latency);
    }

    /// Records what receiver `r` holds for a message (a peek does not replace a lock). Past
    /// [`HANDLE_LIMIT`] handles, those of messages that are gone are forgotten, so a receiver used
    /// for a long time stays bounded (an old message settled twice then gives InvalidOperation
    /// rather than MessageLockLost).
    fn remember(&mut self, r: u32, key: (QueueRef, u64), handle: Handle, replace: bool) {
        let Some(receiver) = self.receivers.get_mut(r as usize) else {
            return;
        };
        if replace {
            receiver.handles.insert(key, handle);
        } else {
            receiver.handles.entry(key).or_insert(handle);
        }
        if receiver.handles.len() <= HANDLE_LIMIT.max(receiver.prune_at) {
            return;
        }
        let entities = &self.entities;
        let exists = |(q, seq): &(QueueRef, u64)| {
            entities
                .get(q.entity as usize)
                .and_then(Option::as_ref)
                .is_some_and(|e| e.store(q.dlq).messages.contains_key(seq))
        };
        receiver.handles.retain(|k, _| exists(k));
        receiver.prune_at = 2 * receiver.handles.len();
    }

    /// A lock ends without settlement (abandon, lapse, loss). RCV-07 first: a delivery that
    /// reaches MaxDeliveryCount dead-letters the message, even when it has also expired (the
    /// playground's answer to SPEC's open question). Then TTL-09: an expired message expires at
    /// once. Otherwise RCV-06: back at its place in the retrieval order.
    fn release(&mut self, q: QueueRef, seq: u64, cause: Rule) {
        let now = self.now;
        let Ok(e) = self.get_mut(q.entity) else {
            return;
        };
        let max = e.settings.max_delivery_count;
        let store = e.store_mut(q.dlq);
        let Some(m) = store.messages.get_mut(&seq) else {
            return;
        };
        m.lock = None;
        m.failed_deliveries = m.failed_deliveries.saturating_add(1);
        let failed = m.failed_deliveries;
        let expired = m.is_expired_at(now);
        let deferred = m.state == MessageState::Deferred;
        if !q.dlq && failed >= max {
            let Some(m) = store.remove(seq) else { return };
            self.dead_letter(
                q,
                m,
                Cow::Borrowed(MAX_DELIVERY_REASON),
                Cow::Owned(format!(
                    "Message could not be consumed after {max} delivery attempts."
                )),
                Rule::Rcv07,
            );
            return;
        }
        if !q.dlq && expired && !deferred {
            self.expire(q.entity, seq, Rule::Ttl09);
            return;
        }
        if !deferred {
            store.available.insert(seq);
        }
        self.emit(
            q,
            seq,
            EventKind::Requeued {
                failed_deliveries: failed,
            },
            Some(cause),
        );
    }

    /// RCV-08/RCV-10: a lock is lost before it lapsed; the message becomes receivable.
    fn lose_lock(&mut self, q: QueueRef, seq: u64, cause: LockLossCause) {
        let rule = match cause {
            LockLossCause::ReceiverDisconnected => Rule::Rcv08,
            _ => Rule::Rcv10,
        };
        self.emit(q, seq, EventKind::LockLost { cause }, Some(rule));
        self.release(q, seq, rule);
    }

    pub fn close_receiver(&mut self, receiver: &str, from: &str) -> Result<()> {
        let q = self.resolve(from)?;
        let r = self.receiver_id(receiver);
        self.detach(r, q);
        Ok(())
    }

    /// Faults: RCV-10 (service/OS update: every lock lost), RCV-08 (a receiver's connection drops),
    /// SEND-04 (server busy for a while).
    pub fn fault(&mut self, fault: Fault) -> Result<()> {
        match fault {
            Fault::ServiceUpdate | Fault::OsUpdate => {
                let cause = if fault == Fault::ServiceUpdate {
                    LockLossCause::ServiceUpdate
                } else {
                    LockLossCause::OsUpdate
                };
                self.record(Event {
                    at: self.now,
                    entity: u32::MAX,
                    dlq: false,
                    seq: 0,
                    kind: EventKind::Fault {
                        what: Cow::Borrowed(cause.text()),
                    },
                    rule: Some(Rule::Rcv10),
                });
                let locked: Vec<(QueueRef, u64)> = self
                    .entities
                    .iter()
                    .flatten()
                    .flat_map(|e| {
                        [false, true].into_iter().flat_map(move |dlq| {
                            e.store(dlq)
                                .locked_seqs()
                                .into_iter()
                                .map(move |s| (QueueRef { entity: e.id, dlq }, s))
                        })
                    })
                    .collect();
                for (q, seq) in locked {
                    self.lose_lock(q, seq, cause);
                }
            }
            Fault::Disconnect { receiver } => {
                let Some(&r) = self.receiver_ids.get(&receiver) else {
                    return Err(BrokerError::new(
                        ErrorKind::InvalidOperation,
                        format!("there is no receiver named '{receiver}'"),
                    ));
                };
                self.record(Event {
                    at: self.now,
                    entity: u32::MAX,
                    dlq: false,
                    seq: 0,
                    kind: EventKind::Fault {
                        what: Cow::Owned(format!("{receiver}'s connection drops")),
                    },
                    rule: Some(Rule::Rcv08),
                });
                let held: Vec<(QueueRef, u64)> = self.receivers[r as usize]
                    .handles
                    .iter()
                    .filter_map(|(&(q, seq), h)| match h {
                        Handle::Locked(token) => self
                            .lock_of(q, seq)
                            .filter(|l| l.token == *token)
                            .map(|_| (q, seq)),
                        _ => None,
                    })
                    .collect();
                for (q, seq) in held {
                    self.lose_lock(q, seq, LockLossCause::ReceiverDisconnected);
                }
                let attached: Vec<QueueRef> = self.receivers[r as usize]
                    .attached
                    .iter()
                    .copied()
                    .collect();
                for q in attached {
                    self.detach(r, q);
                }
            }
            Fault::ServerBusy { duration } => {
                self.server_busy_until = after(self.now, duration);
                self.record(Event {
                    at: self.now,
                    entity: u32::MAX,
                    dlq: false,
                    seq: 0,
                    kind: EventKind::Fault {
                        what: Cow::Owned(format!(
                            "the server is busy for {}",
                            format_duration(duration)
                        )),
                    },
                    rule: Some(Rule::Send04),
                });
            }
        }
        Ok(())
    }

    fn emit(&mut self, q: QueueRef, seq: u64, kind: EventKind, rule: Option<Rule>) {
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

/// The auto-renewer renews a little before the lock lapses: 10 s before, or halfway for short locks.
fn auto_renew_at(now: Instant, locked_until: Instant) -> Instant {
    let margin = ((locked_until - now) / 2).min(10_000);
    locked_until - margin
}

/// "queue" or "queue/$deadletterqueue".
pub fn queue_path(entity: &str, dlq: bool) -> String {
    if dlq {
        format!("{entity}/$deadletterqueue")
    } else {
        entity.to_string()
    }
}
