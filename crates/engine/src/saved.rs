//! The engine's types in the state codec (`codec`): one `saved!` line per type names every field
//! in order; the enums and the types read again from their text are written out by hand.
use crate::actors::{
    Burst, ConsumerGroup, ConsumerSpec, Processing, Producer, ProducerSpec, Spike, Work,
};
use crate::command::SessionView;
use crate::entity::{
    DuplicateHistory, Entity, EntityKind, QueueRef, Session, SessionLock, SqlRule, Store,
    SubscriptionRule,
};
use crate::message::{DeadLetter, Extra, Lock, Message, MessageState, MessageView};
use crate::metrics::{Bucket, Metrics};
use crate::mode::ReceiveMode;
use crate::namespace::{Handle, Receiver};
use crate::property::PropertyValue;
use crate::settings::EntitySettings;
use crate::timer::{ActorTimer, Timer, TimerEntry, TimerToken};
use crate::{saved, saved_unit};
use std::collections::BTreeMap;

pub use crate::codec::{load, save, variant, Io, Saved, MAX_LOAD_BYTES};

// The engine's types.
saved!(QueueRef { entity, dlq });
/// The messages as a map by SequenceNumber, then the receivable ones' numbers (read back, they
/// must be what the messages say), as the store kept them when they were two maps.
impl Saved for Store {
    fn blank() -> Self {
        Store::default()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let Store {
            messages,
            bytes,
            body_bytes,
            lapses,
            lapse_armed,
        } = self;
        let n = io.count(messages.len(), std::mem::size_of::<(u64, Message)>());
        let mut available: Vec<u64> = Vec::new();
        if io.loading() {
            *messages = crate::pages::Pages::default();
            let mut last = None;
            for _ in 0..n {
                let (mut seq, mut m) = (0u64, Message::blank());
                seq.visit(io);
                m.visit(io);
                if m.sequence_number != seq || last >= Some(seq) || !messages.insert(m) {
                    return io.fail();
                }
                last = Some(seq);
            }
            available.visit(io);
            if !messages
                .available()
                .map(|m| m.sequence_number)
                .eq(available)
            {
                return io.fail();
            }
        } else {
            for m in messages.values() {
                m.sequence_number.clone().visit(io);
                m.clone().visit(io);
            }
            available = messages.available().map(|m| m.sequence_number).collect();
            available.visit(io);
        }
        bytes.visit(io);
        body_bytes.visit(io);
        lapses.visit(io);
        lapse_armed.visit(io);
    }
}
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
    enqueued_sequence_number,
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
    system_properties,
    rule_name
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
    locks_lapsed,
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
    enqueued_sequence_number,
    rule_name,
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

/// A body: its bytes, then its section's index.
impl Saved for crate::body::Body {
    fn blank() -> Self {
        crate::body::Body::default()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        use crate::body::Section;
        self.bytes.visit(io);
        let index = match self.section {
            Section::Data => 0,
            Section::Value => 1,
            Section::Sequence => 2,
        };
        self.section = match variant(io, index, 3) {
            Some(1) => Section::Value,
            Some(2) => Section::Sequence,
            _ => Section::Data,
        };
    }
}

/// A typed application property: its type's index, then its value.
impl Saved for PropertyValue {
    fn blank() -> Self {
        PropertyValue::Null
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let index = match self {
            PropertyValue::Null => 0,
            PropertyValue::String(_) => 1,
            PropertyValue::Int(_) => 2,
            PropertyValue::Long(_) => 3,
            PropertyValue::Double(_) => 4,
            PropertyValue::Bool(_) => 5,
            PropertyValue::Timestamp(_) => 6,
            PropertyValue::Uuid(_) => 7,
        };
        let Some(read) = variant(io, index, 8) else {
            return;
        };
        if read != index {
            *self = match read {
                1 => PropertyValue::String(String::new()),
                2 => PropertyValue::Int(0),
                3 => PropertyValue::Long(0),
                4 => PropertyValue::Double(0.0),
                5 => PropertyValue::Bool(false),
                6 => PropertyValue::Timestamp(0),
                7 => PropertyValue::Uuid(0),
                _ => PropertyValue::Null,
            };
        }
        match self {
            PropertyValue::Null => {}
            PropertyValue::String(s) => s.visit(io),
            PropertyValue::Int(n) => {
                let mut wide = i64::from(*n);
                wide.visit(io);
                match i32::try_from(wide) {
                    Ok(v) => *n = v,
                    Err(_) => io.fail(),
                }
            }
            PropertyValue::Long(n) | PropertyValue::Timestamp(n) => n.visit(io),
            PropertyValue::Double(d) => d.visit(io),
            PropertyValue::Bool(b) => b.visit(io),
            PropertyValue::Uuid(u) => u.visit(io),
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
                        action: None,
                    };
                }
                if let SubscriptionRule::Correlation {
                    subject,
                    correlation_id,
                    message_id,
                    application_properties,
                    system_properties,
                    action,
                } = self
                {
                    subject.visit(io);
                    correlation_id.visit(io);
                    message_id.visit(io);
                    application_properties.visit(io);
                    system_properties.visit(io);
                    // The action as written; read, it is parsed again.
                    let mut text = action.as_ref().map(|a| a.text.clone());
                    text.visit(io);
                    if io.loading() {
                        match text.map(|t| crate::entity::SqlAction::new(&t)).transpose() {
                            Ok(a) => *action = a,
                            Err(_) => io.fail(),
                        }
                    }
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
                    token: 0.into(),
                },
                3 => Timer::Activate { entity: 0, seq: 0 },
                4 => Timer::IdleCheck { entity: 0 },
                5 => Timer::Sweep { entity: 0 },
                6 => Timer::SessionLapse {
                    entity: 0,
                    session: 0,
                    token: 0.into(),
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

/// Written as the number it is.
impl Saved for TimerToken {
    fn blank() -> Self {
        0.into()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut token = u128::from(*self);
        token.visit(io);
        *self = token.into();
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
saved!(SessionView {
    session_id,
    locked_until,
    state
});
