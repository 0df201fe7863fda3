//! Traffic actors: producers and consumer groups that run on the namespace's own timers, with the
//! namespace's seeded random numbers, so a scenario with traffic is as deterministic as one
//! without. They act through the same operations a user does (send, receive, settle).
mod run;

use super::{Namespace, QueueRef, Timer};
use crate::actors::*;
use crate::command::{ReceiveMode, ReceiveOptions, Settlement};
use crate::error::{BrokerError, ErrorKind, Result};
use crate::event::{Event, EventKind};
use crate::limits::*;
use crate::message::NewMessage;
use crate::text;
use crate::text::optional;
use crate::time::{after, format_decimal, format_duration, Duration, Instant};
use crate::timer::ActorTimer;
use std::borrow::Cow;

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
            return Err(out_of_range(text!("e-max-actors", max = MAX_ACTORS)));
        }
        Ok(())
    }
}

impl Namespace {
    pub(crate) fn actor_event(&mut self, what: text::Text) {
        self.record(Event {
            at: self.now,
            entity: u32::MAX,
            dlq: false,
            seq: 0,
            kind: EventKind::Actor { what },
            rule: None,
        });
    }

    /// Starts (or restarts with new settings) a producer.
    pub fn start_producer(&mut self, spec: ProducerSpec) -> Result<()> {
        let queue = self.resolve(&spec.to)?;
        spec.validate()?;
        let new = !self.producers.iter().any(|p| p.spec.name == spec.name);
        self.check_actor_room(new)?;
        let summary = text!(
            "actor-producer-starts",
            name = &spec.name,
            rate = format_decimal(spec.rate, 3),
            to = &spec.to
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
                    text!("e-no-producer", name = name),
                )
            })?;
        p.active = false;
        p.generation += 1;
        self.actor_event(text!("actor-producer-stops", name = name));
        Ok(())
    }

    /// Starts (or restarts with new settings) a group of consumers.
    pub fn start_consumers(&mut self, spec: ConsumerSpec) -> Result<()> {
        let queue = self.resolve(&spec.from)?;
        self.check_receivable(queue, &spec.from)?;
        spec.validate()?;
        let new = !self.consumers.iter().any(|c| c.spec.name == spec.name);
        self.check_actor_room(new)?;
        let summary = text!(
            "actor-consumers-start",
            count = spec.instances,
            name = &spec.name,
            from = &spec.from
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
            None => (1, Default::default()),
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
                    text!("e-no-consumers", name = name),
                )
            })?;
        c.active = false;
        c.generation += 1;
        c.busy.iter_mut().for_each(|b| *b = None);
        self.actor_event(text!("actor-consumers-stop", name = name));
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

    pub(crate) fn due_actor(&self, timer: ActorTimer) -> crate::timer::Due {
        use crate::timer::Due;
        match timer {
            ActorTimer::Produce { producer, .. } | ActorTimer::Burst { producer, .. } => {
                Due::Produce {
                    name: self
                        .producers
                        .get(producer as usize)
                        .map_or_else(|| "?".to_string(), |p| p.spec.name.clone()),
                }
            }
            ActorTimer::ConsumerWake {
                group, instance, ..
            } => Due::ConsumerWake {
                name: self.consumer_instance_name(group, instance),
            },
            ActorTimer::ConsumerDone {
                group, instance, ..
            } => Due::ConsumerDone {
                name: self.consumer_instance_name(group, instance),
            },
        }
    }

    /// The producers, in the order they were first started.
    pub fn producers(&self) -> &[crate::actors::Producer] {
        &self.producers
    }
    /// The consumer groups, in the order they were first started.
    pub fn consumer_groups(&self) -> &[crate::actors::ConsumerGroup] {
        &self.consumers
    }

    /// The producers and consumer groups, for display.
    pub fn actors(&self) -> Vec<ActorView> {
        let producers = self.producers.iter().map(|p| ActorView {
            name: p.spec.name.clone(),
            kind: ActorKind::Producer,
            entity: p.spec.to.clone(),
            active: p.active,
            summary: text!(
                "actor-producer-summary",
                rate = format_decimal(p.spec.rate, 3),
                burst = optional(p.spec.burst.as_ref().map(|b| {
                    text!(
                        "actor-burst",
                        size = b.size,
                        every = format_duration(b.every)
                    )
                })),
                spike = optional(p.spec.spike.as_ref().map(|s| {
                    text!(
                        "actor-spike",
                        factor = format_decimal(s.factor, 3),
                        from = format_duration(s.from),
                        duration = format_duration(s.duration)
                    )
                })),
                ttl = optional(
                    p.spec
                        .ttl
                        .map(|t| text!("actor-ttl", ttl = format_duration(t)))
                ),
                sent = p.sent
            ),
        });
        let consumers = self.consumers.iter().map(|c| {
            let busy = c.busy.iter().filter(|b| b.is_some()).count();
            ActorView {
                name: c.spec.name.clone(),
                kind: ActorKind::Consumers,
                entity: c.spec.from.clone(),
                active: c.active,
                summary: text!(
                    "actor-consumers-summary",
                    count = c.spec.instances,
                    mode = c.spec.mode.to_string(),
                    busy = busy,
                    abandon = format_decimal(c.spec.abandon * 100.0, 0),
                    deadletter = format_decimal(c.spec.dead_letter * 100.0, 0),
                    defer = format_decimal(c.spec.defer * 100.0, 0),
                    crash = format_decimal(c.spec.crash * 100.0, 0),
                    renew = optional(
                        c.spec
                            .max_auto_lock_renewal
                            .map(|d| text!("actor-auto-renew", duration = format_duration(d)))
                    ),
                    idempotent = optional(c.spec.idempotent.then(|| text!("actor-idempotent")))
                ),
            }
        });
        producers.chain(consumers).collect()
    }
}
