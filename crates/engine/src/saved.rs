//! The engine's state as bytes and back: what a share link's checkpoint carries
//! (`Namespace::save`, `Namespace::resume`).
//!
//! One function per type, [`Saved::visit`], walks its fields in order through an [`Io`] that
//! either writes them (saving) or overwrites them from the input (loading), so saving and loading
//! cannot disagree on the order; `saved!` writes it from the field list, and its pattern names
//! every field, so a field added to a type and not saved does not compile. Numbers are LEB128
//! varints (signed ones zigzagged), texts and lists are a length and their items.
//!
//! Why not a serde format: measured in the playground's wasm, postcard with the derived serde
//! readers cost 17 KB brotli and borsh's derives 26 KB, for a budget with 2 KB of room; this is
//! one small function per type and one non-generic reader.
//!
//! Loading reads untrusted bytes: a length is never larger than the input left, and the lists
//! read together hold at most [`MAX_LOAD_BYTES`] (an absent entity is one byte of input and far
//! more of memory); a number out of its type's range, an unknown variant or input that ends
//! early marks the load failed (the caller then drops what was read); there is no recursion
//! beyond the types' own nesting.
use crate::actors::{
    Burst, ConsumerGroup, ConsumerSpec, Processing, Producer, ProducerSpec, Spike, Work,
};
use crate::command::ReceiveMode;
use crate::entity::{
    DuplicateHistory, Entity, EntityKind, QueueRef, Session, SessionLock, SqlRule, Store,
    SubscriptionRule,
};
use crate::message::{DeadLetter, Extra, Lock, Message, MessageState, MessageView};
use crate::metrics::{Bucket, Metrics};
use crate::namespace::{Handle, Receiver};
use crate::settings::EntitySettings;
use crate::timer::{ActorTimer, Timer, TimerEntry};

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The most memory the lists of one load may take (their items, not what those point to, which
/// takes input of its own).
pub const MAX_LOAD_BYTES: usize = 128 << 20;

/// Where a [`Saved`] value's fields go to or come from.
pub trait Io {
    /// Whether fields are read (loading) rather than written.
    fn loading(&self) -> bool;
    /// A number: written, or overwritten with the next one read.
    fn word(&mut self, v: &mut u64);
    /// Bytes of a text: written, or overwritten with the next ones read.
    fn bytes(&mut self, v: &mut Vec<u8>);
    /// A list's length: `n` written and returned, or the next length read (never more than the
    /// input left, nor more items of `item_bytes` each than the load's memory allows).
    fn count(&mut self, n: usize, item_bytes: usize) -> usize;
    /// Marks the load failed.
    fn fail(&mut self);
}

/// A value the engine saves.
pub trait Saved: Sized {
    /// A placeholder a load overwrites.
    fn blank() -> Self;
    /// Writes or reads the fields in order.
    fn visit(&mut self, io: &mut dyn Io);
}

/// `saved!(Type { field, ... })`: every field, in order.
#[macro_export]
macro_rules! saved {
    ($ty:ident { $($f:ident),* $(,)? }) => {
        impl $crate::saved::Saved for $ty {
            fn blank() -> Self {
                $ty { $($f: $crate::saved::Saved::blank()),* }
            }
            fn visit(&mut self, io: &mut dyn $crate::saved::Io) {
                let $ty { $($f),* } = self;
                $($crate::saved::Saved::visit($f, io);)*
            }
        }
    };
}

/// `saved_unit!(Type { Variant, ... })`: a unit enum by its index.
#[macro_export]
macro_rules! saved_unit {
    ($ty:ident { $($v:ident),* $(,)? }) => {
        impl $crate::saved::Saved for $ty {
            fn blank() -> Self {
                [$($ty::$v),*][0]
            }
            fn visit(&mut self, io: &mut dyn $crate::saved::Io) {
                const ALL: &[$ty] = &[$($ty::$v),*];
                let mut i = ALL.iter().position(|v| v == self).unwrap_or(0) as u64;
                io.word(&mut i);
                match ALL.get(i as usize) {
                    Some(v) => *self = *v,
                    None => io.fail(),
                }
            }
        }
    };
}

/// An enum's variant: its index written, or read (`None` for an unknown one, the load failed).
pub fn variant(io: &mut dyn Io, index: u64, variants: u64) -> Option<u64> {
    let mut i = index;
    io.word(&mut i);
    if i >= variants {
        io.fail();
        return None;
    }
    Some(i)
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Saved for $t {
            fn blank() -> Self {
                0
            }
            fn visit(&mut self, io: &mut dyn Io) {
                let mut w = *self as u64;
                io.word(&mut w);
                match <$t>::try_from(w) {
                    Ok(v) => *self = v,
                    Err(_) => io.fail(),
                }
            }
        }
    )*};
}
unsigned!(u8, u32, u64, usize);

impl Saved for i64 {
    fn blank() -> Self {
        0
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut w = ((*self << 1) ^ (*self >> 63)) as u64;
        io.word(&mut w);
        *self = ((w >> 1) as i64) ^ -((w & 1) as i64);
    }
}

impl Saved for u128 {
    fn blank() -> Self {
        0
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let (mut high, mut low) = ((*self >> 64) as u64, *self as u64);
        io.word(&mut high);
        io.word(&mut low);
        *self = (u128::from(high) << 64) | u128::from(low);
    }
}

impl Saved for bool {
    fn blank() -> Self {
        false
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut w = u64::from(*self);
        io.word(&mut w);
        if w > 1 {
            io.fail();
        }
        *self = w == 1;
    }
}

/// By its bits: the same number back, whatever it is (rates and shares are checked where they
/// are used, as for a scenario's).
impl Saved for f64 {
    fn blank() -> Self {
        0.0
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut w = self.to_bits();
        io.word(&mut w);
        *self = f64::from_bits(w);
    }
}

impl Saved for String {
    fn blank() -> Self {
        String::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut bytes = std::mem::take(self).into_bytes();
        io.bytes(&mut bytes);
        match String::from_utf8(bytes) {
            Ok(s) => *self = s,
            Err(_) => io.fail(),
        }
    }
}

impl Saved for Cow<'static, str> {
    fn blank() -> Self {
        Cow::Borrowed("")
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut s = self.to_string();
        s.visit(io);
        *self = Cow::Owned(s);
    }
}

impl<T: Saved> Saved for Box<T> {
    fn blank() -> Self {
        Box::new(T::blank())
    }
    fn visit(&mut self, io: &mut dyn Io) {
        (**self).visit(io)
    }
}

impl<T: Saved> Saved for Option<T> {
    fn blank() -> Self {
        None
    }
    fn visit(&mut self, io: &mut dyn Io) {
        match (some(io, self.is_some()), self.is_some()) {
            (Some(true), true) | (None, _) => {}
            (Some(true), false) => *self = Some(T::blank()),
            (Some(false), _) => *self = None,
        }
        if let Some(v) = self {
            v.visit(io);
        }
    }
}

/// Whether an option holds a value: written, or read (`None`: the load failed).
fn some(io: &mut dyn Io, is_some: bool) -> Option<bool> {
    let mut w = u64::from(is_some);
    io.word(&mut w);
    match w {
        0 | 1 => Some(w == 1),
        _ => {
            io.fail();
            None
        }
    }
}

impl<A: Saved, B: Saved> Saved for (A, B) {
    fn blank() -> Self {
        (A::blank(), B::blank())
    }
    fn visit(&mut self, io: &mut dyn Io) {
        self.0.visit(io);
        self.1.visit(io);
    }
}

impl<A: Saved, B: Saved, C: Saved> Saved for (A, B, C) {
    fn blank() -> Self {
        (A::blank(), B::blank(), C::blank())
    }
    fn visit(&mut self, io: &mut dyn Io) {
        self.0.visit(io);
        self.1.visit(io);
        self.2.visit(io);
    }
}

impl<T: Saved> Saved for Vec<T> {
    fn blank() -> Self {
        Vec::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let n = io.count(self.len(), std::mem::size_of::<T>());
        if io.loading() {
            self.clear();
            self.reserve(n);
            for _ in 0..n {
                let mut v = T::blank();
                v.visit(io);
                self.push(v);
            }
        } else {
            self.iter_mut().for_each(|v| v.visit(io));
        }
    }
}

impl<T: Saved> Saved for VecDeque<T> {
    fn blank() -> Self {
        VecDeque::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut items: Vec<T> = std::mem::take(self).into();
        items.visit(io);
        *self = items.into();
    }
}

/// Keys in order; a load whose keys are not strictly increasing failed (a map written by
/// `save` always is).
impl<K: Saved + Ord + Clone, V: Saved> Saved for BTreeMap<K, V> {
    fn blank() -> Self {
        BTreeMap::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let n = io.count(self.len(), std::mem::size_of::<(K, V)>());
        if io.loading() {
            self.clear();
            for _ in 0..n {
                let (mut k, mut v) = (K::blank(), V::blank());
                k.visit(io);
                v.visit(io);
                if self.last_key_value().is_some_and(|(last, _)| *last >= k) {
                    return io.fail();
                }
                self.insert(k, v);
            }
        } else {
            for (k, v) in self.iter_mut() {
                k.clone().visit(io);
                v.visit(io);
            }
        }
    }
}

impl<T: Saved + Ord + Clone> Saved for BTreeSet<T> {
    fn blank() -> Self {
        BTreeSet::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut items: Vec<T> = std::mem::take(self).into_iter().collect();
        items.visit(io);
        for item in items {
            if self.last().is_some_and(|last| *last >= item) {
                return io.fail();
            }
            self.insert(item);
        }
    }
}

/// Writes a value's fields.
struct Writer(Vec<u8>);

impl Io for Writer {
    fn loading(&self) -> bool {
        false
    }
    fn word(&mut self, v: &mut u64) {
        let mut w = *v;
        loop {
            let low = (w & 0x7f) as u8;
            w >>= 7;
            if w == 0 {
                self.0.push(low);
                return;
            }
            self.0.push(low | 0x80);
        }
    }
    fn bytes(&mut self, v: &mut Vec<u8>) {
        self.count(v.len(), 1);
        self.0.extend_from_slice(v);
    }
    fn count(&mut self, n: usize, _: usize) -> usize {
        self.word(&mut (n as u64));
        n
    }
    fn fail(&mut self) {}
}

/// Reads a value's fields from untrusted bytes.
struct Reader<'a> {
    input: &'a [u8],
    failed: bool,
    /// What the lists read so far may still take ([`MAX_LOAD_BYTES`] at first).
    memory: usize,
}

impl Io for Reader<'_> {
    fn loading(&self) -> bool {
        true
    }
    fn word(&mut self, v: &mut u64) {
        let mut w = 0u64;
        for shift in (0..64).step_by(7) {
            let Some((&b, rest)) = self.input.split_first() else {
                break;
            };
            self.input = rest;
            w |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                *v = w;
                return;
            }
        }
        self.fail();
        *v = 0;
    }
    fn bytes(&mut self, v: &mut Vec<u8>) {
        let n = self.count(0, 1);
        let (taken, rest) = self.input.split_at(n);
        v.clear();
        v.extend_from_slice(taken);
        self.input = rest;
    }
    fn count(&mut self, _: usize, item_bytes: usize) -> usize {
        let mut n = 0;
        self.word(&mut n);
        let bytes = (n as usize).saturating_mul(item_bytes);
        if n > self.input.len() as u64 || bytes > self.memory {
            self.fail();
            return 0;
        }
        self.memory -= bytes;
        n as usize
    }
    fn fail(&mut self) {
        self.failed = true;
        // Nothing more is read: every later field reads as empty.
        self.input = &[];
    }
}

/// What `visit` writes, as bytes.
pub fn save(visit: impl FnOnce(&mut dyn Io)) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    visit(&mut w);
    w.0
}

/// Runs `visit` reading `bytes`; whether they read whole (on false, what `visit` overwrote is
/// to be dropped).
pub fn load(bytes: &[u8], visit: impl FnOnce(&mut dyn Io)) -> bool {
    let mut r = Reader {
        input: bytes,
        failed: false,
        memory: MAX_LOAD_BYTES,
    };
    visit(&mut r);
    !r.failed && r.input.is_empty()
}

// The engine's types.
saved!(QueueRef { entity, dlq });
saved!(Store {
    messages,
    available,
    bytes,
    body_bytes,
    lapses,
    lapse_armed
});
saved!(Entity {
    id,
    path,
    kind,
    settings,
    rules,
    subscriptions,
    main,
    dlq,
    next_seq,
    last_activity,
    idle_at,
    sweep_at,
    attached_receivers,
    created_at,
    history,
    duplicates_dropped,
    sessions,
    session_ids,
    session_holders,
});
saved!(Session { id, lock, state });
saved!(SessionLock {
    holder,
    token,
    locked_until
});
saved!(DuplicateHistory {
    accepted,
    order,
    first
});
saved!(Message {
    sequence_number,
    message_id,
    enqueued_time,
    own_ttl,
    effective_ttl,
    expires_at,
    scheduled_enqueue_time,
    state,
    lock,
    failed_deliveries,
    body,
    body_size,
    extra,
    transfer_hops,
});
saved!(Lock {
    token,
    holder,
    locked_until,
    auto_renew_until
});
saved!(DeadLetter {
    reason,
    description,
    source
});
saved!(Extra {
    subject,
    correlation_id,
    application_properties,
    dead_letter,
    system_properties
});
saved!(TimerEntry { at, order, timer });
saved!(Burst { every, size });
saved!(Spike {
    from,
    duration,
    factor
});
saved!(ProducerSpec {
    name,
    to,
    rate,
    burst,
    spike,
    ttl,
    message_id_prefix,
    schedule_offset,
    body_size,
    max_messages,
    sessions,
});
saved!(ConsumerSpec {
    name,
    from,
    instances,
    mode,
    processing,
    abandon,
    dead_letter,
    defer,
    crash,
    max_auto_lock_renewal,
    idempotent,
    poll_interval,
    restart_delay,
});
saved!(Producer {
    spec,
    queue,
    active,
    generation,
    sent,
    next_send
});
saved!(Work { seq, message_id });
saved!(ConsumerGroup {
    spec,
    queue,
    receivers,
    active,
    generation,
    busy,
    lost_after_work
});
saved!(Bucket {
    sent,
    completed,
    latency_sum,
    latency_max,
    expired,
    dead_lettered,
    abandoned,
    lock_lost,
    rejected,
    duplicates_processed,
    duplicates_skipped,
    crashed,
});
saved!(Metrics { width, buckets });
saved!(EntitySettings {
    default_message_time_to_live,
    lock_duration,
    max_delivery_count,
    dead_lettering_on_message_expiration,
    auto_delete_on_idle,
    forward_to,
    forward_dead_lettered_messages_to,
    max_size_bytes,
    requires_duplicate_detection,
    duplicate_detection_history_time_window,
    requires_session,
});
saved!(Receiver {
    name,
    attached,
    handles,
    peek_cursor,
    prune_at
});
saved!(MessageView {
    entity,
    sequence_number,
    message_id,
    enqueued_time,
    time_to_live,
    expires_at,
    scheduled_enqueue_time,
    locked_until,
    lock_token,
    lock_holder,
    delivery_count,
    state,
    dead_letter_reason,
    dead_letter_error_description,
    dead_letter_source,
    subject,
    correlation_id,
    application_properties,
    system_properties,
    body,
    body_size,
    nominally_expired,
    effective_expires_at,
});
saved_unit!(MessageState {
    Active,
    Deferred,
    Scheduled
});
saved_unit!(ReceiveMode {
    PeekLock,
    ReceiveAndDelete
});

impl Saved for EntityKind {
    fn blank() -> Self {
        EntityKind::Queue
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let index = match self {
            EntityKind::Queue => 0,
            EntityKind::Topic => 1,
            EntityKind::Subscription { .. } => 2,
        };
        match variant(io, index, 3) {
            Some(0) => *self = EntityKind::Queue,
            Some(1) => *self = EntityKind::Topic,
            Some(_) => {
                let mut topic = match self {
                    EntityKind::Subscription { topic } => *topic,
                    _ => 0,
                };
                topic.visit(io);
                *self = EntityKind::Subscription { topic };
            }
            None => {}
        }
    }
}

/// A SQL rule as written; read, it is parsed again (a rule that does not parse fails the load).
impl Saved for SubscriptionRule {
    fn blank() -> Self {
        SubscriptionRule::MatchAll
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let index = match self {
            SubscriptionRule::MatchAll => 0,
            SubscriptionRule::Correlation { .. } => 1,
            SubscriptionRule::Sql(_) => 2,
        };
        match variant(io, index, 3) {
            Some(0) => *self = SubscriptionRule::MatchAll,
            Some(1) => {
                if io.loading() {
                    *self = SubscriptionRule::Correlation {
                        subject: None,
                        correlation_id: None,
                        message_id: None,
                        application_properties: BTreeMap::new(),
                        system_properties: BTreeMap::new(),
                    };
                }
                if let SubscriptionRule::Correlation {
                    subject,
                    correlation_id,
                    message_id,
                    application_properties,
                    system_properties,
                } = self
                {
                    subject.visit(io);
                    correlation_id.visit(io);
                    message_id.visit(io);
                    application_properties.visit(io);
                    system_properties.visit(io);
                }
            }
            Some(_) => {
                let (mut filter, mut action) = match self {
                    SubscriptionRule::Sql(rule) => (rule.filter.clone(), rule.action.clone()),
                    _ => (String::new(), None),
                };
                filter.visit(io);
                action.visit(io);
                if io.loading() {
                    match SqlRule::new(&filter, action.as_deref()) {
                        Ok(rule) => *self = SubscriptionRule::Sql(Box::new(rule)),
                        Err(_) => io.fail(),
                    }
                }
            }
            None => {}
        }
    }
}

impl Saved for Processing {
    fn blank() -> Self {
        Processing::Fixed(0)
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let (index, mut a, mut b) = match *self {
            Processing::Fixed(d) => (0, d, 0),
            Processing::Uniform { min, max } => (1, min, max),
            Processing::Exponential { mean } => (2, mean, 0),
        };
        let Some(index) = variant(io, index, 3) else {
            return;
        };
        a.visit(io);
        if index == 1 {
            b.visit(io);
        }
        *self = match index {
            0 => Processing::Fixed(a),
            1 => Processing::Uniform { min: a, max: b },
            _ => Processing::Exponential { mean: a },
        };
    }
}

impl Saved for Handle {
    fn blank() -> Self {
        Handle::Peeked
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let (index, mut token) = match *self {
            Handle::Peeked => (0, 0),
            Handle::Locked(token) => (1, token),
            Handle::ReceivedAndDeleted => (2, 0),
        };
        let Some(index) = variant(io, index, 3) else {
            return;
        };
        if index == 1 {
            token.visit(io);
        }
        *self = match index {
            0 => Handle::Peeked,
            1 => Handle::Locked(token),
            _ => Handle::ReceivedAndDeleted,
        };
    }
}

impl Saved for Timer {
    fn blank() -> Self {
        Timer::IdleCheck { entity: 0 }
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let index = match self {
            Timer::Expire { .. } => 0,
            Timer::LapseCheck { .. } => 1,
            Timer::AutoRenew { .. } => 2,
            Timer::Activate { .. } => 3,
            Timer::IdleCheck { .. } => 4,
            Timer::Sweep { .. } => 5,
            Timer::SessionLapse { .. } => 6,
            Timer::Actor(_) => 7,
        };
        let Some(index) = variant(io, index, 8) else {
            return;
        };
        if io.loading() {
            let queue = QueueRef::blank();
            *self = match index {
                0 => Timer::Expire { entity: 0, seq: 0 },
                1 => Timer::LapseCheck { queue },
                2 => Timer::AutoRenew {
                    queue,
                    seq: 0,
                    token: 0,
                },
                3 => Timer::Activate { entity: 0, seq: 0 },
                4 => Timer::IdleCheck { entity: 0 },
                5 => Timer::Sweep { entity: 0 },
                6 => Timer::SessionLapse {
                    entity: 0,
                    session: 0,
                    token: 0,
                },
                _ => Timer::Actor(ActorTimer::blank()),
            };
        }
        match self {
            Timer::Expire { entity, seq } | Timer::Activate { entity, seq } => {
                entity.visit(io);
                seq.visit(io);
            }
            Timer::LapseCheck { queue } => queue.visit(io),
            Timer::AutoRenew { queue, seq, token } => {
                queue.visit(io);
                seq.visit(io);
                token.visit(io);
            }
            Timer::IdleCheck { entity } | Timer::Sweep { entity } => entity.visit(io),
            Timer::SessionLapse {
                entity,
                session,
                token,
            } => {
                entity.visit(io);
                session.visit(io);
                token.visit(io);
            }
            Timer::Actor(a) => a.visit(io),
        }
    }
}

impl Saved for ActorTimer {
    fn blank() -> Self {
        ActorTimer::Produce {
            producer: 0,
            generation: 0,
        }
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let index = match self {
            ActorTimer::Produce { .. } => 0,
            ActorTimer::Burst { .. } => 1,
            ActorTimer::ConsumerWake { .. } => 2,
            ActorTimer::ConsumerDone { .. } => 3,
        };
        let Some(index) = variant(io, index, 4) else {
            return;
        };
        if io.loading() {
            *self = match index {
                0 => ActorTimer::Produce {
                    producer: 0,
                    generation: 0,
                },
                1 => ActorTimer::Burst {
                    producer: 0,
                    generation: 0,
                },
                2 => ActorTimer::ConsumerWake {
                    group: 0,
                    instance: 0,
                    generation: 0,
                },
                _ => ActorTimer::ConsumerDone {
                    group: 0,
                    instance: 0,
                    generation: 0,
                },
            };
        }
        match self {
            ActorTimer::Produce {
                producer,
                generation,
            }
            | ActorTimer::Burst {
                producer,
                generation,
            } => {
                producer.visit(io);
                generation.visit(io);
            }
            ActorTimer::ConsumerWake {
                group,
                instance,
                generation,
            }
            | ActorTimer::ConsumerDone {
                group,
                instance,
                generation,
            } => {
                group.visit(io);
                instance.visit(io);
                generation.visit(io);
            }
        }
    }
}
