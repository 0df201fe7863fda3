//! Traffic actors: producers and consumer groups that run on the namespace's own timers, with the
//! namespace's seeded random numbers, so a scenario with traffic is as deterministic as one
//! without. They act through the same operations a user does (send, receive, settle).
mod run;

use super::{Namespace, QueueRef, Timer};
use crate::command::{ReceiveMode, ReceiveOptions, Settlement};
use crate::error::{BrokerError, ErrorKind, Result};
use crate::event::{Event, EventKind};
use crate::limits::*;
use crate::message::NewMessage;
use crate::time::{after, format_duration, Duration, Instant, SECOND};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeSet;

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

/// A burst: `size` extra messages every `every`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Burst {
    pub every: Duration,
    pub size: u32,
}

/// A spike: the rate is multiplied by `factor` from `from` for `duration`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spike {
    pub from: Instant,
    pub duration: Duration,
    pub factor: f64,
}

/// A producer: sends to `to` at `rate` messages per second, with bursts and a spike.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProducerSpec {
    pub name: String,
    pub to: String,
    pub rate: f64,
    pub burst: Option<Burst>,
    pub spike: Option<Spike>,
    pub ttl: Option<Duration>,
    /// MessageIds are `<prefix><n>`, n from 1. Default: the producer's name and "-".
    pub message_id_prefix: Option<String>,
    /// Schedule each message this far ahead (SCH-01) instead of sending it now.
    pub schedule_offset: Option<Duration>,
    pub body_size: Option<u64>,
    /// Stop after this many messages.
    pub max_messages: Option<u64>,
}

/// How long a consumer works on a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Processing {
    Fixed(Duration),
    Uniform { min: Duration, max: Duration },
    Exponential { mean: Duration },
}

/// A group of identical consumers (competing receivers) on one queue or subscription.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsumerSpec {
    pub name: String,
    pub from: String,
    pub instances: u32,
    pub mode: ReceiveMode,
    pub processing: Processing,
    /// Shares of messages abandoned, dead-lettered and deferred (the rest are completed).
    pub abandon: f64,
    pub dead_letter: f64,
    pub defer: f64,
    /// The chance a consumer crashes before settling: the lock lapses (RCV-06, RCV-07).
    pub crash: f64,
    /// RCV-04: auto lock renewal up to this long.
    pub max_auto_lock_renewal: Option<Duration>,
    /// RCV-12: recognise a redelivered message by MessageId and complete it without processing.
    pub idempotent: bool,
    /// How long an idle consumer waits before it receives again.
    pub poll_interval: Duration,
    /// How long a crashed consumer takes to come back.
    pub restart_delay: Duration,
}

impl ConsumerSpec {
    /// The defaults: one instance, PeekLock, 1 s of work, everything completed.
    pub fn new(name: &str, from: &str) -> Self {
        ConsumerSpec {
            name: name.into(),
            from: from.into(),
            instances: 1,
            mode: ReceiveMode::PeekLock,
            processing: Processing::Fixed(SECOND),
            abandon: 0.0,
            dead_letter: 0.0,
            defer: 0.0,
            crash: 0.0,
            max_auto_lock_renewal: None,
            idempotent: false,
            poll_interval: SECOND,
            restart_delay: SECOND,
        }
    }
}

impl ProducerSpec {
    pub fn new(name: &str, to: &str, rate: f64) -> Self {
        ProducerSpec {
            name: name.into(),
            to: to.into(),
            rate,
            burst: None,
            spike: None,
            ttl: None,
            message_id_prefix: None,
            schedule_offset: None,
            body_size: None,
            max_messages: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Producer {
    pub spec: ProducerSpec,
    pub queue: QueueRef,
    pub active: bool,
    pub generation: u32,
    pub sent: u64,
    /// The exact instant (in fractional milliseconds) of the next message at the rate.
    #[serde(default)]
    pub next_send: f64,
}

/// What one consumer is working on.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Work {
    pub seq: u64,
    pub message_id: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ConsumerGroup {
    pub spec: ConsumerSpec,
    pub queue: QueueRef,
    /// The receiver of each instance.
    pub receivers: Vec<u32>,
    pub active: bool,
    pub generation: u32,
    pub busy: Vec<Option<Work>>,
    /// RCV-12: MessageIds whose Complete failed after the work was done; they will come again.
    pub lost_after_work: BTreeSet<String>,
}

/// What a producer or consumer group is doing, for the UI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActorView {
    pub name: String,
    pub kind: &'static str,
    pub entity: String,
    pub active: bool,
    pub summary: String,
}

fn out_of_range(message: String) -> BrokerError {
    BrokerError::new(ErrorKind::ArgumentOutOfRange, message)
}

impl ProducerSpec {
    /// The producer's limits (the playground's, in `limits`); the error names the field.
    pub fn validate(&self) -> Result<()> {
        let rate_ok = |r: f64| r.is_finite() && (0.0..=MAX_RATE).contains(&r);
        if !rate_ok(self.rate) {
            return Err(out_of_range(format!(
                "rate: {} is not between 0 and {MAX_RATE} messages a second (playground limit)",
                self.rate
            )));
        }
        if self.rate == 0.0 && self.burst.is_none() {
            return Err(out_of_range(
                "rate: a producer needs a rate above 0 or a burst".into(),
            ));
        }
        if let Some(b) = &self.burst {
            if b.every < MIN_BURST_EVERY || b.size == 0 || b.size > MAX_BURST {
                return Err(out_of_range(format!(
                    "burst: every {} or more, and a size of 1 to {MAX_BURST} (playground limit)",
                    format_duration(MIN_BURST_EVERY)
                )));
            }
        }
        if let Some(s) = &self.spike {
            if !(s.factor >= 0.0 && rate_ok(self.rate * s.factor)) || s.duration < 0 {
                return Err(out_of_range(format!(
                    "spike: the rate times the factor must stay within {MAX_RATE} messages a second, and the duration 0 or more (playground limit)"
                )));
            }
        }
        if self.ttl.is_some_and(|t| t < 0) || self.schedule_offset.is_some_and(|t| t < 0) {
            return Err(out_of_range("ttl and schedule_offset are 0 or more".into()));
        }
        Ok(())
    }
}

impl ConsumerSpec {
    /// The consumer group's limits; the error names the field.
    pub fn validate(&self) -> Result<()> {
        if self.instances == 0 || self.instances > MAX_INSTANCES {
            return Err(out_of_range(format!(
                "instances: 1 to {MAX_INSTANCES} (playground limit), not {}",
                self.instances
            )));
        }
        for (name, v) in [
            ("abandon", self.abandon),
            ("dead_letter", self.dead_letter),
            ("defer", self.defer),
            ("crash", self.crash),
        ] {
            check_share(name, v)?;
        }
        if self.abandon + self.dead_letter + self.defer + self.crash > 1.0 + 1e-9 {
            return Err(out_of_range(
                "abandon + dead_letter + defer + crash must be at most 1".into(),
            ));
        }
        let bad_time = match self.processing {
            Processing::Fixed(d) => d < 0,
            Processing::Uniform { min, max } => min < 0 || max < min,
            Processing::Exponential { mean } => mean <= 0,
        };
        if bad_time {
            return Err(out_of_range(
                "processing: times are 0 or more (uniform: min <= max; exponential: mean above 0)"
                    .into(),
            ));
        }
        if self.poll_interval < MIN_POLL_INTERVAL || self.restart_delay < 0 {
            return Err(out_of_range(format!(
                "poll_interval: at least {} (playground limit); restart_delay: 0 or more",
                format_duration(MIN_POLL_INTERVAL)
            )));
        }
        if self
            .max_auto_lock_renewal
            .is_some_and(|d| !(0..=MAX_AUTO_RENEWAL).contains(&d))
        {
            return Err(out_of_range(format!(
                "max_auto_lock_renewal: 0 to {} (playground limit)",
                format_duration(MAX_AUTO_RENEWAL)
            )));
        }
        Ok(())
    }
}

/// Puts `item` at `index` (replacing what was there) or at the end; returns where it went.
fn upsert<T>(list: &mut Vec<T>, index: Option<usize>, item: T) -> usize {
    match index {
        Some(i) => {
            list[i] = item;
            i
        }
        None => {
            list.push(item);
            list.len() - 1
        }
    }
}

impl Namespace {
    /// A new producer or consumer group needs room (playground limit).
    fn check_actor_room(&self, new: bool) -> Result<()> {
        if new && self.producers.len() + self.consumers.len() >= MAX_ACTORS {
            return Err(out_of_range(format!(
                "a namespace runs at most {MAX_ACTORS} producers and consumer groups (playground limit)"
            )));
        }
        Ok(())
    }
}

fn check_share(name: &str, v: f64) -> Result<()> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(BrokerError::new(
            ErrorKind::ArgumentOutOfRange,
            format!("{name} must be between 0 and 1, not {v}"),
        ))
    }
}

impl Namespace {
    pub(crate) fn actor_event(&mut self, what: String) {
        self.record(Event {
            at: self.now,
            entity: u32::MAX,
            dlq: false,
            seq: 0,
            kind: EventKind::Actor {
                what: Cow::Owned(what),
            },
            rule: None,
        });
    }

    /// Starts (or restarts with new settings) a producer.
    pub fn start_producer(&mut self, spec: ProducerSpec) -> Result<()> {
        let queue = self.resolve(&spec.to)?;
        spec.validate()?;
        let new = !self.producers.iter().any(|p| p.spec.name == spec.name);
        self.check_actor_room(new)?;
        let summary = format!(
            "producer {} starts: {} msg/s to {}",
            spec.name, spec.rate, spec.to
        );
        // Starting a producer again under its name replaces its settings and keeps its count.
        let existing = self.producers.iter().position(|p| p.spec.name == spec.name);
        let (generation, sent) = existing.map_or((1, 0), |i| {
            (self.producers[i].generation + 1, self.producers[i].sent)
        });
        let index = upsert(
            &mut self.producers,
            existing,
            Producer {
                spec,
                queue,
                active: true,
                generation,
                sent,
                next_send: self.now as f64,
            },
        );
        let p = &self.producers[index];
        let (generation, rate, burst) = (p.generation, p.spec.rate, p.spec.burst.clone());
        let producer = index as u32;
        self.actor_event(summary);
        if rate > 0.0 {
            self.push_timer(
                self.now,
                Timer::Actor(ActorTimer::Produce {
                    producer,
                    generation,
                }),
            );
        }
        if burst.is_some() {
            self.push_timer(
                self.now,
                Timer::Actor(ActorTimer::Burst {
                    producer,
                    generation,
                }),
            );
        }
        Ok(())
    }

    pub fn stop_producer(&mut self, name: &str) -> Result<()> {
        let p = self
            .producers
            .iter_mut()
            .find(|p| p.spec.name == name)
            .ok_or_else(|| {
                BrokerError::new(
                    ErrorKind::InvalidOperation,
                    format!("there is no producer named '{name}'"),
                )
            })?;
        p.active = false;
        p.generation += 1;
        self.actor_event(format!("producer {name} stops"));
        Ok(())
    }

    /// Starts (or restarts with new settings) a group of consumers.
    pub fn start_consumers(&mut self, spec: ConsumerSpec) -> Result<()> {
        let queue = self.resolve(&spec.from)?;
        self.check_receivable(queue, &spec.from)?;
        spec.validate()?;
        let new = !self.consumers.iter().any(|c| c.spec.name == spec.name);
        self.check_actor_room(new)?;
        let summary = format!(
            "{} consumer(s) {} start on {}",
            spec.instances, spec.name, spec.from
        );
        // Starting a group again under its name replaces its settings; it keeps what it knows
        // of lost completions (RCV-12).
        let existing = self.consumers.iter().position(|c| c.spec.name == spec.name);
        let receivers: Vec<u32> = (0..spec.instances)
            .map(|i| self.receiver_id(&Self::receiver_name_of(&spec, i)))
            .collect();
        let (generation, lost_after_work) = match existing {
            Some(i) => (
                self.consumers[i].generation + 1,
                std::mem::take(&mut self.consumers[i].lost_after_work),
            ),
            None => (1, BTreeSet::new()),
        };
        let busy = vec![None; spec.instances as usize];
        let group = ConsumerGroup {
            spec,
            queue,
            receivers,
            active: true,
            generation,
            busy,
            lost_after_work,
        };
        let index = upsert(&mut self.consumers, existing, group);
        let c = &self.consumers[index];
        let (generation, instances) = (c.generation, c.spec.instances);
        self.actor_event(summary);
        for instance in 0..instances {
            self.push_timer(
                self.now,
                Timer::Actor(ActorTimer::ConsumerWake {
                    group: index as u32,
                    instance,
                    generation,
                }),
            );
        }
        Ok(())
    }

    pub fn stop_consumers(&mut self, name: &str) -> Result<()> {
        let c = self
            .consumers
            .iter_mut()
            .find(|c| c.spec.name == name)
            .ok_or_else(|| {
                BrokerError::new(
                    ErrorKind::InvalidOperation,
                    format!("there are no consumers named '{name}'"),
                )
            })?;
        c.active = false;
        c.generation += 1;
        c.busy.iter_mut().for_each(|b| *b = None);
        self.actor_event(format!(
            "consumers {name} stop; the locks they hold will lapse"
        ));
        Ok(())
    }

    pub(crate) fn actor_timer_is_live(&self, timer: ActorTimer) -> bool {
        let producer_live = |producer: u32, generation: u32| {
            self.producers
                .get(producer as usize)
                .is_some_and(|p| p.active && p.generation == generation)
        };
        let consumer_live = |group: u32, instance: u32, generation: u32, busy: bool| {
            self.consumers.get(group as usize).is_some_and(|c| {
                c.active
                    && c.generation == generation
                    && c.busy
                        .get(instance as usize)
                        .is_some_and(|b| b.is_some() == busy)
            })
        };
        match timer {
            ActorTimer::Produce {
                producer,
                generation,
            }
            | ActorTimer::Burst {
                producer,
                generation,
            } => producer_live(producer, generation),
            ActorTimer::ConsumerWake {
                group,
                instance,
                generation,
            } => consumer_live(group, instance, generation, false),
            ActorTimer::ConsumerDone {
                group,
                instance,
                generation,
            } => consumer_live(group, instance, generation, true),
        }
    }

    pub(crate) fn fire_actor(&mut self, timer: ActorTimer) {
        match timer {
            ActorTimer::Produce {
                producer,
                generation,
            } => self.produce(producer, generation, false),
            ActorTimer::Burst {
                producer,
                generation,
            } => self.produce(producer, generation, true),
            ActorTimer::ConsumerWake {
                group,
                instance,
                generation,
            } => self.consumer_wake(group, instance, generation),
            ActorTimer::ConsumerDone {
                group,
                instance,
                generation,
            } => self.consumer_done(group, instance, generation),
        }
    }

    pub(crate) fn describe_actor_timer(&self, timer: ActorTimer) -> String {
        match timer {
            ActorTimer::Produce { producer, .. } | ActorTimer::Burst { producer, .. } => {
                let p = self
                    .producers
                    .get(producer as usize)
                    .map(|p| p.spec.name.as_str())
                    .unwrap_or("?");
                format!("producer {p} sends")
            }
            ActorTimer::ConsumerWake {
                group, instance, ..
            } => format!(
                "consumer {} receives",
                self.consumer_instance_name(group, instance)
            ),
            ActorTimer::ConsumerDone {
                group, instance, ..
            } => format!(
                "consumer {} finishes its work",
                self.consumer_instance_name(group, instance)
            ),
        }
    }

    /// The producers and consumer groups, for display.
    pub fn actors(&self) -> Vec<ActorView> {
        let producers = self.producers.iter().map(|p| ActorView {
            name: p.spec.name.clone(),
            kind: "producer",
            entity: p.spec.to.clone(),
            active: p.active,
            summary: format!(
                "{} msg/s{}{}{}; {} sent",
                p.spec.rate,
                p.spec
                    .burst
                    .as_ref()
                    .map(|b| format!(", bursts of {} every {}", b.size, format_duration(b.every)))
                    .unwrap_or_default(),
                p.spec
                    .spike
                    .as_ref()
                    .map(|s| format!(
                        ", x{} spike at t={} for {}",
                        s.factor,
                        format_duration(s.from),
                        format_duration(s.duration)
                    ))
                    .unwrap_or_default(),
                p.spec
                    .ttl
                    .map(|t| format!(", TTL {}", format_duration(t)))
                    .unwrap_or_default(),
                p.sent
            ),
        });
        let consumers = self.consumers.iter().map(|c| {
            let busy = c.busy.iter().filter(|b| b.is_some()).count();
            ActorView {
                name: c.spec.name.clone(),
                kind: "consumers",
                entity: c.spec.from.clone(),
                active: c.active,
                summary: format!(
                    "{} x {}, {busy} busy; abandon {:.0}%, dead-letter {:.0}%, defer {:.0}%, crash {:.0}%{}{}",
                    c.spec.instances,
                    c.spec.mode,
                    c.spec.abandon * 100.0,
                    c.spec.dead_letter * 100.0,
                    c.spec.defer * 100.0,
                    c.spec.crash * 100.0,
                    c.spec.max_auto_lock_renewal.map(|d| format!(", auto-renew {}", format_duration(d))).unwrap_or_default(),
                    if c.spec.idempotent { ", idempotent" } else { "" }
                ),
            }
        });
        producers.chain(consumers).collect()
    }
}
