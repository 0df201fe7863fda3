//! The actors at work: a producer's clock and a consumer's receive-work-settle loop.
use super::*;
use rand::Rng;

impl Namespace {
    pub(super) fn producer_rate_at(spec: &ProducerSpec, at: Instant) -> f64 {
        match &spec.spike {
            Some(s) if at >= s.from && at < after(s.from, s.duration) => spec.rate * s.factor,
            _ => spec.rate,
        }
    }

    /// A producer's clock: one message, then the next at 1/rate (a spike changes the rate).
    pub(crate) fn produce(&mut self, producer: u32, generation: u32, burst: bool) {
        let now = self.now;
        let index = producer as usize;
        let Some(p) = self.producers.get(index) else {
            return;
        };
        let spec = p.spec.clone();
        let next = if burst {
            for _ in 0..spec.burst.as_ref().map_or(0, |b| b.size) {
                if !self.produce_one(index) {
                    return;
                }
            }
            spec.burst.as_ref().map(|b| after(now, b.every))
        } else {
            // Every message whose exact instant (a fraction of a millisecond at 700/s) has come;
            // the next one is 1/rate later, at the rate in force then (a spike changes it).
            let mut due = self.producers[index].next_send;
            let mut next = None;
            while due <= now as f64 {
                if !self.produce_one(index) {
                    return;
                }
                let rate = Self::producer_rate_at(&spec, due.floor() as Instant);
                if rate > 0.0 {
                    due += 1000.0 / rate;
                } else {
                    // A spike that stops sending: go on when it ends.
                    let end = spec.spike.as_ref().map(|s| after(s.from, s.duration));
                    match end.filter(|t| *t as f64 > due) {
                        Some(t) => due = t as f64,
                        None => break,
                    }
                }
            }
            if due > now as f64 {
                self.producers[index].next_send = due;
                next = Some(due.ceil() as Instant);
            }
            next
        };
        if let Some(at) = next {
            let timer = if burst {
                ActorTimer::Burst {
                    producer,
                    generation,
                }
            } else {
                ActorTimer::Produce {
                    producer,
                    generation,
                }
            };
            self.push_timer(at, Timer::Actor(timer));
        }
    }

    /// Sends one message; false when the producer reached its maximum and stopped.
    pub(super) fn produce_one(&mut self, index: usize) -> bool {
        let p = &mut self.producers[index];
        if p.spec.max_messages.is_some_and(|m| p.sent >= m) {
            p.active = false;
            p.generation += 1;
            let name = p.spec.name.clone();
            self.actor_event(text!("actor-producer-done", name = name));
            return false;
        }
        p.sent += 1;
        let n = p.sent;
        let spec = &p.spec;
        // "<prefix><n>", built in one allocation (this runs for every message of the traffic).
        let mut message_id = String::with_capacity(spec.name.len() + 21);
        match &spec.message_id_prefix {
            Some(prefix) => message_id.push_str(prefix),
            None => {
                message_id.push_str(&spec.name);
                message_id.push('-');
            }
        }
        push_decimal(&mut message_id, n);
        // SES-01: round robin over the producer's sessions. (Inserted, not collected: a map
        // collected from an iterator sorts it, which costs the wasm a sort.)
        let mut system_properties = std::collections::BTreeMap::new();
        if let Some(k) = spec.sessions {
            let mut id = String::with_capacity(spec.name.len() + 12);
            id.push_str(&spec.name);
            id.push_str("-s");
            push_decimal(&mut id, (n - 1) % u64::from(k) + 1);
            system_properties.insert("SessionId".to_string(), id);
        }
        let message = NewMessage {
            message_id: Some(message_id),
            time_to_live: spec.ttl,
            body_size: spec.body_size,
            system_properties,
            ..Default::default()
        };
        let (queue, offset) = (p.queue, spec.schedule_offset);
        let result = match offset {
            Some(d) => self.schedule_to(queue, message, after(self.now, d)),
            None => self.send_to(queue, message),
        };
        if let Err(e) = result {
            self.metrics.at(self.now).rejected += 1;
            let entity = queue.entity;
            self.record(Event {
                at: self.now,
                entity,
                dlq: false,
                seq: 0,
                kind: EventKind::Rejected {
                    operation: Cow::Borrowed("producer-send"),
                    error: e.kind,
                },
                rule: Some(crate::rules::Rule::Send01),
            });
        }
        true
    }

    pub(super) fn processing_time(&mut self, p: &Processing) -> Duration {
        match *p {
            Processing::Fixed(d) => d,
            Processing::Uniform { min, max } => self.traffic.random_range(min..=max),
            Processing::Exponential { mean } => {
                // Inverse transform sampling: -mean x ln(1 - U), U uniform in [0, 1).
                let u: f64 = self.traffic.random();
                (-(mean as f64) * (1.0 - u).ln()).round() as Duration
            }
        }
    }

    /// "workers-2": the receiver name of a consumer instance.
    pub(crate) fn consumer_instance_name(&self, group: u32, instance: u32) -> String {
        self.consumers
            .get(group as usize)
            .map_or_else(|| "?".into(), |c| Self::receiver_name_of(&c.spec, instance))
    }

    pub(super) fn receiver_name_of(spec: &ConsumerSpec, instance: u32) -> String {
        format!("{}-{}", spec.name, instance + 1)
    }

    /// An idle consumer receives one message and starts working on it, or polls again later.
    pub(crate) fn consumer_wake(&mut self, group: u32, instance: u32, generation: u32) {
        let now = self.now;
        let c = &self.consumers[group as usize];
        let (q, r, mode, poll) = (
            c.queue,
            c.receivers[instance as usize],
            c.spec.mode,
            c.spec.poll_interval,
        );
        let options = ReceiveOptions {
            max_auto_lock_renewal: c.spec.max_auto_lock_renewal,
            transfer_fails: false,
        };
        let Some((seq, message_id)) = self.consumer_receive(r, q, mode, &options) else {
            self.push_timer(
                after(now, poll),
                Timer::Actor(ActorTimer::ConsumerWake {
                    group,
                    instance,
                    generation,
                }),
            );
            return;
        };
        let c = &mut self.consumers[group as usize];
        let idempotent = c.spec.idempotent;
        if c.lost_after_work.remove(&message_id) {
            // RCV-12: this message was processed before, but its Complete failed.
            if idempotent && mode == ReceiveMode::PeekLock {
                self.metrics.at(now).duplicates_skipped += 1;
                self.settle_by_actor(r, q, seq, Settlement::Complete);
                self.push_timer(
                    now,
                    Timer::Actor(ActorTimer::ConsumerWake {
                        group,
                        instance,
                        generation,
                    }),
                );
                return;
            }
            self.metrics.at(now).duplicates_processed += 1;
        }
        let c = &mut self.consumers[group as usize];
        c.busy[instance as usize] = Some(Work { seq, message_id });
        let processing = c.spec.processing.clone();
        let work = self.processing_time(&processing);
        self.push_timer(
            after(now, work.max(0)),
            Timer::Actor(ActorTimer::ConsumerDone {
                group,
                instance,
                generation,
            }),
        );
    }

    /// One message for consumer `r`. On a session entity (SES-02) the consumer works one
    /// session at a time, as a session processor does: it accepts the next available session,
    /// keeps its lock renewed while it receives, and when the session has nothing more it
    /// closes it and accepts the next.
    fn consumer_receive(
        &mut self,
        r: u32,
        q: QueueRef,
        mode: ReceiveMode,
        options: &ReceiveOptions,
    ) -> Option<(u64, String)> {
        let sessions = self.is_session_queue(q);
        for _ in 0..2 {
            match self.held_session(r, q.entity) {
                // Renewed once half its time is gone (not at every message: fewer events).
                Some(s) if sessions && self.session_half_gone(r, q) => {
                    self.lock_session(r, q, s, true)
                }
                None if sessions => {
                    let s = self.session_to_accept(q, "", None).ok()?;
                    self.attach(r, q);
                    self.lock_session(r, q, s, false);
                }
                _ => {}
            }
            let got = self
                .receive_into(r, q, mode, 1, options)
                .ok()
                .and_then(|v| v.into_iter().next())
                .and_then(|(seq, taken)| {
                    let id = match taken {
                        Some(m) => m.message_id,
                        None => self
                            .get(q.entity)
                            .ok()?
                            .store(q.dlq)
                            .messages
                            .get(&seq)?
                            .message_id
                            .clone(),
                    };
                    Some((seq, id))
                });
            if got.is_some() || !sessions {
                return got;
            }
            let held = self.held_session(r, q.entity)?;
            self.release_session(q.entity, held, crate::event::SessionEnd::Closed);
        }
        None
    }

    /// Settles as an actor; the actor keeps no handle afterwards (its message object is gone).
    pub(super) fn settle_by_actor(
        &mut self,
        r: u32,
        q: QueueRef,
        seq: u64,
        settlement: Settlement,
    ) -> Option<BrokerError> {
        let result = self.settle_as(r, q, seq, settlement);
        if let Some(receiver) = self.receivers.get_mut(r as usize) {
            receiver.handles.remove(&(q, seq));
        }
        result.err()
    }

    /// The work is done: crash, abandon, dead-letter, defer or complete, by the group's shares.
    pub(crate) fn consumer_done(&mut self, group: u32, instance: u32, generation: u32) {
        let now = self.now;
        let c = &mut self.consumers[group as usize];
        let Some(work) = c.busy[instance as usize].take() else {
            return;
        };
        let (q, r, mode, restart) = (
            c.queue,
            c.receivers[instance as usize],
            c.spec.mode,
            c.spec.restart_delay,
        );
        let (crash, abandon, dead_letter, defer) = (
            c.spec.crash,
            c.spec.abandon,
            c.spec.dead_letter,
            c.spec.defer,
        );
        let roll: f64 = self.traffic.random();
        let mut next = now;
        if roll < crash {
            self.metrics.at(now).crashed += 1;
            let receiver = self.receiver_name(r).to_string();
            self.actor_event(text!("actor-crashed", receiver = receiver, seq = work.seq));
            next = after(now, restart);
        } else if mode == ReceiveMode::PeekLock {
            let settlement = if roll < crash + abandon {
                Settlement::Abandon
            } else if roll < crash + abandon + dead_letter {
                let receiver = self.receiver_name(r).to_string();
                Settlement::DeadLetter {
                    reason: Some("ProcessingFailed".into()),
                    description: Some(format!("{receiver} gave up on it")),
                }
            } else if roll < crash + abandon + dead_letter + defer {
                Settlement::Defer
            } else {
                Settlement::Complete
            };
            let completing = settlement == Settlement::Complete;
            if let Some(e) = self.settle_by_actor(r, q, work.seq, settlement) {
                if matches!(
                    e.kind,
                    ErrorKind::MessageLockLost | ErrorKind::SessionLockLost
                ) {
                    self.metrics.at(now).lock_lost += 1;
                    if completing {
                        // RCV-12: the work was done, but the message will come again.
                        self.consumers[group as usize]
                            .lost_after_work
                            .insert(work.message_id);
                    }
                }
            }
        }
        if next == now {
            // Straight on to the next message (no timer round trip).
            self.consumer_wake(group, instance, generation);
        } else {
            self.push_timer(
                next,
                Timer::Actor(ActorTimer::ConsumerWake {
                    group,
                    instance,
                    generation,
                }),
            );
        }
    }
}

/// Appends `n` in decimal, without the formatting machinery.
fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|&d| char::from(d)));
}
