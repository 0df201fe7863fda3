//! Runs a scenario over the engine: its entities at t=0, its timeline in order, its expectations
//! checked at their instants. The UI and the CLI both drive this.
use crate::dur::Dur;
use crate::model::*;
use crate::utc;
use crate::ScenarioError;
use sbp_engine::time::{format_instant, Instant};
#[cfg(feature = "checks")]
use sbp_engine::time::{MAX_VALUE, NEVER};
#[cfg(feature = "checks")]
use sbp_engine::Perspective;
use sbp_engine::{
    BrokerError, Burst, Command, ConsumerSpec, EntitySettings, ErrorKind, Fault, Namespace,
    NewMessage, Processing, ProducerSpec, ReceiveMode, ReceiveOptions, Reply, Settlement, Spike,
    SubscriptionRule,
};
use serde::Serialize;

/// What one timeline step did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepOutcome {
    pub index: usize,
    pub at: Instant,
    pub action: String,
    pub result: Result<String, BrokerError>,
}

/// A running scenario: the namespace, where in the timeline it is, and what happened so far.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub scenario: Scenario,
    pub ns: Namespace,
    pub start_unix_ms: i64,
    next_step: usize,
    next_expect: usize,
    pub outcomes: Vec<StepOutcome>,
    /// Expectation failures found so far, in words.
    pub failures: Vec<String>,
    /// The messages the last peek or receive returned, as that call showed them.
    pub last_messages: Vec<sbp_engine::MessageView>,
}

impl Simulation {
    /// Builds the namespace and creates the scenario's entities at t=0.
    pub fn new(scenario: &Scenario) -> Result<Simulation, ScenarioError> {
        Self::build(scenario, None)
    }

    /// As [`Simulation::new`], with a log limit for when the scenario sets none (the browser
    /// keeps long traffic runs within memory this way).
    pub fn with_default_log_limit(
        scenario: &Scenario,
        limit: usize,
    ) -> Result<Simulation, ScenarioError> {
        Self::build(scenario, Some(limit))
    }

    fn build(
        scenario: &Scenario,
        default_log_limit: Option<usize>,
    ) -> Result<Simulation, ScenarioError> {
        scenario.validate()?;
        let start_unix_ms =
            utc::parse_start(scenario.start.as_deref().unwrap_or(utc::DEFAULT_START))
                .map_err(|m| ScenarioError::Invalid(format!("start: {m}")))?;
        let mut builder = Namespace::builder()
            .tier(scenario.namespace.tier)
            .expiry_mode(scenario.namespace.expiry)
            .seed(scenario.seed);
        if let Some(every) = scenario.namespace.sweep_interval {
            builder = builder.sweep_interval(every.ms());
        }
        builder = builder.log_limit(scenario.namespace.log_limit.or(default_log_limit));
        let mut ns = builder.build();
        for (i, def) in scenario.entities.iter().enumerate() {
            let command = entity_command(&ns, def)
                .map_err(|m| ScenarioError::Invalid(format!("entities[{i}]: {m}")))?;
            ns.apply(0, command).map_err(|e| {
                ScenarioError::Invalid(format!(
                    "entities[{i}] ({}): {}",
                    entity_label(def),
                    e.message
                ))
            })?;
        }
        Ok(Simulation {
            scenario: scenario.clone(),
            ns,
            start_unix_ms,
            next_step: 0,
            next_expect: 0,
            outcomes: Vec::new(),
            failures: Vec::new(),
            last_messages: Vec::new(),
        })
    }

    pub fn now(&self) -> Instant {
        self.ns.now()
    }

    /// "2026-01-01T00:00:10Z" for an instant.
    pub fn utc(&self, at: Instant) -> String {
        utc::format_utc(self.start_unix_ms, at)
    }

    /// The next instant anything happens: a timeline step, an expectation, or a broker timer.
    pub fn next_due(&mut self) -> Option<Instant> {
        let step = self
            .scenario
            .timeline
            .get(self.next_step)
            .map(|s| s.at.ms());
        let expect = self
            .scenario
            .expect
            .get(self.next_expect)
            .map(|e| e.at.ms());
        [step, expect, self.ns.next_due()]
            .into_iter()
            .flatten()
            .min()
    }

    /// What happens next, in words ("lock of #12 in orders lapses"), with its instant.
    pub fn next_event(&mut self) -> Option<(Instant, String)> {
        let step = self.scenario.timeline.get(self.next_step).map(|s| {
            (
                s.at.ms(),
                format!("step {}: {}", self.next_step + 1, s.action_text()),
            )
        });
        let timer = self.ns.next_event();
        match (step, timer) {
            (Some(s), Some(t)) => Some(if s.0 <= t.0 { s } else { t }),
            (s, t) => s.or(t),
        }
    }

    /// Runs every step, timer and expectation due up to and including `until`, in time order.
    pub fn advance_to(&mut self, until: Instant) {
        loop {
            let step_at = self
                .scenario
                .timeline
                .get(self.next_step)
                .map(|s| s.at.ms())
                .filter(|&t| t <= until);
            let expect_at = self
                .scenario
                .expect
                .get(self.next_expect)
                .map(|e| e.at.ms())
                .filter(|&t| t <= until);
            match (step_at, expect_at) {
                (None, None) => break,
                // Steps at an instant run before the expectations at that instant.
                (Some(s), Some(e)) if s <= e => self.run_step(),
                (Some(_), None) => self.run_step(),
                (_, Some(_)) => self.check_expectation(),
            }
        }
        self.ns.advance_to(until);
    }

    /// The instant of the last step or expectation.
    pub fn end(&self) -> Instant {
        let last_step = self
            .scenario
            .timeline
            .last()
            .map(|s| s.at.ms())
            .unwrap_or(0);
        let last_expect = self
            .scenario
            .expect
            .iter()
            .map(|e| e.at.ms())
            .max()
            .unwrap_or(0);
        last_step.max(last_expect)
    }

    /// Runs to the end of the timeline and expectations; says whether every check passed.
    pub fn run_to_end(&mut self) -> bool {
        let end = self.end();
        self.advance_to(end);
        self.failures.is_empty()
    }

    /// Adds a step at the current instant and runs it: how the UI records what a user does, so
    /// that a share link replays it. Steps still to come stay in the timeline, after it.
    pub fn push_step(&mut self, mut step: Step) -> Result<String, BrokerError> {
        step.at = Dur(self.now());
        self.scenario.timeline.insert(self.next_step, step);
        self.run_step();
        self.outcomes
            .last()
            .map(|o| o.result.clone())
            .unwrap_or(Ok(String::new()))
    }

    /// Adds a step to run at a later instant (a fault on a schedule, a producer that starts
    /// later); at or before now it runs at once.
    pub fn schedule_step(&mut self, mut step: Step, at: Instant) -> Result<String, BrokerError> {
        if at <= self.now() {
            return self.push_step(step);
        }
        step.at = Dur(at);
        let position = self.scenario.timeline[self.next_step..]
            .iter()
            .position(|s| s.at.ms() > at)
            .map_or(self.scenario.timeline.len(), |p| p + self.next_step);
        let text = format!(
            "scheduled for {}: {}",
            format_instant(at),
            step.action_text()
        );
        self.scenario.timeline.insert(position, step);
        Ok(text)
    }

    fn run_step(&mut self) {
        let index = self.next_step;
        self.next_step += 1;
        let step = self.scenario.timeline[index].clone();
        let at = step.at.ms();
        let action = step.action_text();
        let result = self.execute(&step, at);
        let expected = step.expect_error.as_deref();
        match (&result, expected) {
            (Ok(_), Some(want)) => self.failures.push(format!(
                "step {} at {} ({action}): expected {want}, but it succeeded",
                index + 1,
                format_instant(at)
            )),
            (Err(e), Some(want)) if !e.kind.name().eq_ignore_ascii_case(want) => self.failures.push(format!(
                "step {} at {} ({action}): expected {want}, got {}: {}",
                index + 1,
                format_instant(at),
                e.kind.name(),
                e.message
            )),
            (Err(e), None) => self.failures.push(format!(
                "step {} at {} ({action}) failed with {}: {} (add \"expect_error\": \"{}\" if that is the point)",
                index + 1,
                format_instant(at),
                e.kind.name(),
                e.message,
                e.kind.name()
            )),
            _ => {}
        }
        self.outcomes.push(StepOutcome {
            index,
            at,
            action,
            result,
        });
    }

    fn execute(&mut self, step: &Step, at: Instant) -> Result<String, BrokerError> {
        if let Some(send) = &step.send {
            let count = send.count.unwrap_or(1).max(1);
            let mut seqs = Vec::new();
            for i in 0..count {
                let message = new_message(send, i, count);
                let command = match send.scheduled_enqueue_time {
                    Some(when) => Command::Schedule {
                        to: send.to.clone(),
                        message,
                        at: when.ms(),
                    },
                    None => Command::Send {
                        to: send.to.clone(),
                        message,
                    },
                };
                if let Reply::Sent { seq } = self.ns.apply(at, command)? {
                    seqs.push(seq);
                }
            }
            // TTL-14: a very short TTL may expire messages before any receiver sees them.
            let warning = send
                .ttl
                .and_then(|t| sbp_engine::describe::short_ttl_warning(t.ms()))
                .map(|w| format!(". {w}"))
                .unwrap_or_default();
            let verb = if send.scheduled_enqueue_time.is_some() {
                "scheduled"
            } else {
                "sent"
            };
            return Ok(format!("{verb} {}{warning}", seq_list(&seqs)));
        }
        let commands = step_commands(&self.ns, step)
            .map_err(|m| BrokerError::new(ErrorKind::InvalidOperation, m))?;
        let mut summary = Vec::new();
        for command in commands {
            match self.ns.apply(at, command)? {
                Reply::Messages(ms) => {
                    let seqs: Vec<u64> = ms.iter().map(|m| m.sequence_number).collect();
                    self.last_messages = ms;
                    summary.push(if seqs.is_empty() {
                        "no messages".to_string()
                    } else {
                        format!("got {}", seq_list(&seqs))
                    });
                }
                Reply::Sent { seq } => summary.push(format!("#{seq}")),
                Reply::Done => summary.push("ok".into()),
            }
        }
        Ok(summary.join("; "))
    }

    fn check_expectation(&mut self) {
        let index = self.next_expect;
        self.next_expect += 1;
        let e = self.scenario.expect[index].clone();
        self.ns.advance_to(e.at.ms());
        let at = format_instant(e.at.ms());
        for (path, want) in &e.counts {
            // An entity, or its dead-letter sub-queue ("orders/$deadletterqueue").
            let now = self.ns.now();
            let have = self.ns.resolve(path).ok().and_then(|q| {
                let entity = self.ns.entity(self.ns.entity_name(q.entity))?;
                Some(if q.dlq {
                    entity.dlq_counts(now)
                } else {
                    entity.counts(now)
                })
            });
            let Some(have) = have else {
                self.failures
                    .push(format!("expect at {at}: {path} does not exist"));
                continue;
            };
            let fields = [
                ("active", want.active, have.active),
                ("locked", want.locked, have.locked),
                ("scheduled", want.scheduled, have.scheduled),
                ("deferred", want.deferred, have.deferred),
                ("dead_lettered", want.dead_lettered, have.dead_lettered),
                (
                    "expired_uncollected",
                    want.expired_uncollected,
                    have.expired_uncollected,
                ),
            ];
            for (name, want, have) in fields {
                if let Some(want) = want.filter(|w| *w != have) {
                    self.failures.push(format!(
                        "expect at {at}: {path} {name}: expected {want}, got {have}"
                    ));
                }
            }
        }
        for (path, want) in &e.exists {
            let have = self.ns.entity(path).is_some();
            if have != *want {
                self.failures.push(format!(
                    "expect at {at}: {path} exists: expected {want}, got {have}"
                ));
            }
        }
        #[cfg(feature = "checks")]
        self.check_messages_and_metrics(&at, &e);
    }

    /// Message and metric expectations (the `checks` feature: the CLI and tests have it; the
    /// browser, which shows a run rather than checking it, leaves it out to stay small).
    #[cfg(feature = "checks")]
    fn check_messages_and_metrics(&mut self, at: &str, e: &Expectation) {
        for m in &e.messages {
            self.check_message(at, m);
        }
        if !e.metrics.is_empty() {
            let totals = serde_json::to_value(self.ns.metrics().total()).unwrap_or_default();
            for (name, range) in &e.metrics {
                let Some(have) = totals.get(name).and_then(serde_json::Value::as_u64) else {
                    self.failures
                        .push(format!("expect at {at}: there is no metric {name}"));
                    continue;
                };
                if range.min.is_some_and(|min| have < min)
                    || range.max.is_some_and(|max| have > max)
                {
                    let show = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
                    self.failures.push(format!(
                        "expect at {at}: metric {name}: expected {}..{}, got {have}",
                        show(range.min),
                        show(range.max)
                    ));
                }
            }
        }
    }

    #[cfg(feature = "checks")]
    fn check_message(&mut self, at: &str, want: &MessageExpect) {
        let perspective = match want.view {
            ViewDef::Peek => Perspective::Peek,
            ViewDef::Receive => Perspective::Receive,
        };
        let label = format!("expect at {at}: {} #{}", want.entity, want.seq);
        let Some(view) = self.ns.message(&want.entity, want.seq, perspective) else {
            if !want.absent {
                self.failures.push(format!("{label}: not there"));
            }
            return;
        };
        if want.absent {
            self.failures
                .push(format!("{label}: expected absent, but it is there"));
            return;
        }
        let have = serde_json::to_value(&view).unwrap_or_default();
        for (name, expected) in &want.properties {
            let Some(actual) = have.get(name) else {
                self.failures
                    .push(format!("{label}: there is no property {name}"));
                continue;
            };
            if let Err(msg) = property_matches(name, expected, actual) {
                self.failures.push(format!("{label} {name}: {msg}"));
            }
        }
    }
}

#[cfg(feature = "checks")]
const TIME_PROPERTIES: &[&str] = &[
    "EnqueuedTime",
    "ExpiresAt",
    "LockedUntil",
    "ScheduledEnqueueTime",
    "EffectiveExpiresAt",
];
#[cfg(feature = "checks")]
const DURATION_PROPERTIES: &[&str] = &["TimeToLive"];

/// Times and durations are written as durations ("15m", "never"); the rest compares as JSON.
#[cfg(feature = "checks")]
fn property_matches(
    name: &str,
    expected: &serde_json::Value,
    actual: &serde_json::Value,
) -> Result<(), String> {
    let is_time = TIME_PROPERTIES.contains(&name);
    if is_time || DURATION_PROPERTIES.contains(&name) {
        let want = match expected {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(sbp_engine::time::parse_duration(s)?),
            serde_json::Value::Number(n) => n.as_i64(),
            other => {
                return Err(format!(
                    "write {other} as a duration such as \"15m\" or \"never\""
                ))
            }
        };
        let want = want.map(|w| if is_time && w >= MAX_VALUE { NEVER } else { w });
        let have = actual.as_i64();
        if want != have {
            let show = |v: Option<i64>| match v {
                None => "none".to_string(),
                Some(v) if is_time => format_instant(v),
                Some(v) => sbp_engine::time::format_duration(v),
            };
            return Err(format!("expected {}, got {}", show(want), show(have)));
        }
        return Ok(());
    }
    if expected != actual {
        return Err(format!("expected {expected}, got {actual}"));
    }
    Ok(())
}

fn seq_list(seqs: &[u64]) -> String {
    match seqs {
        [] => "nothing".into(),
        [one] => format!("#{one}"),
        [first, .., last] if seqs.len() > 3 => format!("#{first}..#{last}"),
        _ => seqs
            .iter()
            .map(|s| format!("#{s}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn new_message(send: &SendDef, i: u32, count: u32) -> NewMessage {
    let message_id = send.message_id.as_ref().map(|id| {
        if count > 1 {
            format!("{id}-{}", i + 1)
        } else {
            id.clone()
        }
    });
    NewMessage {
        message_id,
        time_to_live: send.ttl.map(Dur::ms),
        subject: send.subject.clone(),
        correlation_id: send.correlation_id.clone(),
        application_properties: send.properties.clone(),
        body: send.body.clone(),
        body_size: send.body_size,
    }
}

fn entity_label(def: &EntityDef) -> String {
    def.queue
        .clone()
        .or_else(|| def.topic.clone())
        .or_else(|| def.subscription.clone())
        .unwrap_or_default()
}

/// The command that creates an entity definition.
pub fn entity_command(ns: &Namespace, def: &EntityDef) -> Result<Command, String> {
    let base = EntitySettings::defaults(ns.tier());
    let settings = def.settings.apply_to(&base);
    match (&def.queue, &def.topic, &def.subscription) {
        (Some(name), None, None) => Ok(Command::CreateQueue {
            name: name.clone(),
            settings,
        }),
        (None, Some(name), None) => Ok(Command::CreateTopic {
            name: name.clone(),
            settings,
        }),
        (None, None, Some(path)) => {
            let Some((topic, name)) = path.split_once("/subscriptions/") else {
                return Err(format!(
                    "subscription \"{path}\" must be written \"<topic>/subscriptions/<name>\""
                ));
            };
            let rule = match &def.rule {
                None => SubscriptionRule::MatchAll,
                Some(r) => SubscriptionRule::Correlation {
                    subject: r.subject.clone(),
                    correlation_id: r.correlation_id.clone(),
                    message_id: r.message_id.clone(),
                    application_properties: r.properties.clone(),
                },
            };
            Ok(Command::CreateSubscription {
                topic: topic.to_string(),
                name: name.to_string(),
                settings,
                rule,
            })
        }
        _ => Err("give exactly one of \"queue\", \"topic\" or \"subscription\"".into()),
    }
}

fn settle_command(def: &SettleDef, settlement: Settlement) -> Command {
    Command::Settle {
        receiver: def.receiver.clone(),
        from: def.from.clone(),
        seq: def.seq,
        settlement,
    }
}

/// The engine commands of a step (all but `send`, which may be many).
fn step_commands(ns: &Namespace, step: &Step) -> Result<Vec<Command>, String> {
    let mut out = Vec::new();
    if let Some(c) = &step.cancel_scheduled {
        out.push(Command::CancelScheduled {
            to: c.to.clone(),
            seq: c.seq,
        });
    }
    if let Some(p) = &step.peek {
        out.push(Command::Peek {
            receiver: p.receiver.clone(),
            from: p.from.clone(),
            from_seq: p.from_seq,
            count: p.count.unwrap_or(1),
        });
    }
    if let Some(r) = &step.receive {
        out.push(Command::Receive {
            receiver: r.receiver.clone(),
            from: r.from.clone(),
            mode: match r.mode {
                ModeDef::PeekLock => ReceiveMode::PeekLock,
                ModeDef::ReceiveAndDelete => ReceiveMode::ReceiveAndDelete,
            },
            count: r.count.unwrap_or(1),
            options: ReceiveOptions {
                max_auto_lock_renewal: r.max_auto_lock_renewal.map(Dur::ms),
                transfer_fails: r.transfer_fails,
            },
        });
    }
    if let Some(r) = &step.receive_deferred {
        out.push(Command::ReceiveDeferred {
            receiver: r.receiver.clone(),
            from: r.from.clone(),
            seqs: r.seqs.clone(),
        });
    }
    if let Some(s) = &step.complete {
        out.push(settle_command(s, Settlement::Complete));
    }
    if let Some(s) = &step.abandon {
        out.push(settle_command(s, Settlement::Abandon));
    }
    if let Some(s) = &step.dead_letter {
        out.push(settle_command(
            s,
            Settlement::DeadLetter {
                reason: s.reason.clone(),
                description: s.description.clone(),
            },
        ));
    }
    if let Some(s) = &step.defer {
        out.push(settle_command(s, Settlement::Defer));
    }
    if let Some(s) = &step.renew_lock {
        out.push(settle_command(s, Settlement::RenewLock));
    }
    if let Some(def) = &step.create {
        out.push(entity_command(ns, def)?);
    }
    if let Some(u) = &step.update {
        let current = ns
            .entity(&u.entity)
            .map(|e| e.settings.clone())
            .ok_or_else(|| format!("the entity '{}' does not exist", u.entity))?;
        out.push(Command::UpdateEntity {
            path: u.entity.clone(),
            settings: u.settings.apply_to(&current),
        });
    }
    if let Some(path) = &step.delete {
        out.push(Command::DeleteEntity { path: path.clone() });
    }
    if let Some(r) = &step.close_receiver {
        match &r.from {
            Some(from) => out.push(Command::CloseReceiver {
                receiver: r.receiver.clone(),
                from: from.clone(),
            }),
            None => out.push(Command::Fault(Fault::Disconnect {
                receiver: r.receiver.clone(),
            })),
        }
    }
    if let Some(p) = &step.start_producer {
        out.push(Command::StartProducer(producer_spec(p)));
    }
    if let Some(name) = &step.stop_producer {
        out.push(Command::StopProducer { name: name.clone() });
    }
    if let Some(c) = &step.start_consumers {
        out.push(Command::StartConsumers(consumer_spec(c)));
    }
    if let Some(name) = &step.stop_consumers {
        out.push(Command::StopConsumers { name: name.clone() });
    }
    if let Some(f) = &step.fault {
        out.push(Command::Fault(match f {
            FaultDef::ServiceUpdate => Fault::ServiceUpdate,
            FaultDef::OsUpdate => Fault::OsUpdate,
            FaultDef::Disconnect(r) => Fault::Disconnect {
                receiver: r.clone(),
            },
            FaultDef::ServerBusy(d) => Fault::ServerBusy { duration: d.ms() },
        }));
    }
    Ok(out)
}

fn producer_spec(p: &ProducerDef) -> ProducerSpec {
    ProducerSpec {
        name: p.name.clone(),
        to: p.to.clone(),
        rate: p.rate,
        burst: p.burst.as_ref().map(|b| Burst {
            every: b.every.ms(),
            size: b.size,
        }),
        spike: p.spike.as_ref().map(|s| Spike {
            from: s.from.ms(),
            duration: s.duration.ms(),
            factor: s.factor,
        }),
        ttl: p.ttl.map(Dur::ms),
        message_id_prefix: p.message_id_prefix.clone(),
        schedule_offset: p.schedule_offset.map(Dur::ms),
        body_size: p.body_size,
        max_messages: p.max_messages,
    }
}

fn consumer_spec(c: &ConsumerDef) -> ConsumerSpec {
    let defaults = ConsumerSpec::new(&c.name, &c.from);
    ConsumerSpec {
        instances: c.instances.unwrap_or(1),
        mode: match c.mode {
            ModeDef::PeekLock => ReceiveMode::PeekLock,
            ModeDef::ReceiveAndDelete => ReceiveMode::ReceiveAndDelete,
        },
        processing: match &c.processing {
            None => defaults.processing.clone(),
            Some(ProcessingDef::Fixed(d)) => Processing::Fixed(d.ms()),
            Some(ProcessingDef::Uniform { min, max }) => Processing::Uniform {
                min: min.ms(),
                max: max.ms(),
            },
            Some(ProcessingDef::Exponential { mean }) => {
                Processing::Exponential { mean: mean.ms() }
            }
        },
        abandon: c.abandon,
        dead_letter: c.dead_letter,
        defer: c.defer,
        crash: c.crash,
        max_auto_lock_renewal: c.max_auto_lock_renewal.map(Dur::ms),
        idempotent: c.idempotent,
        poll_interval: c.poll_interval.map_or(defaults.poll_interval, Dur::ms),
        restart_delay: c.restart_delay.map_or(defaults.restart_delay, Dur::ms),
        ..defaults
    }
}

impl Step {
    /// The names of the actions a step holds (exactly one in a valid step).
    pub fn actions(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        macro_rules! has {
            ($($f:ident),*) => { $( if self.$f.is_some() { v.push(stringify!($f)); } )* };
        }
        has!(
            send,
            cancel_scheduled,
            peek,
            receive,
            receive_deferred,
            complete,
            abandon,
            dead_letter,
            defer,
            renew_lock,
            create,
            update,
            delete,
            close_receiver,
            fault,
            start_producer,
            stop_producer,
            start_consumers,
            stop_consumers
        );
        v
    }

    /// "receive 3 from orders as r1" and the like.
    pub fn action_text(&self) -> String {
        let settle =
            |verb: &str, s: &SettleDef| format!("{verb} #{} in {} ({})", s.seq, s.from, s.receiver);
        if let Some(s) = &self.send {
            let n = s.count.unwrap_or(1);
            let what = if n > 1 {
                format!("{n} messages")
            } else {
                "a message".into()
            };
            let ttl = s
                .ttl
                .map(|t| format!(" with TTL {}", sbp_engine::time::format_duration(t.ms())))
                .unwrap_or_default();
            return match s.scheduled_enqueue_time {
                Some(at) => format!(
                    "schedule {what} to {} for {}{ttl}",
                    s.to,
                    format_instant(at.ms())
                ),
                None => format!("send {what} to {}{ttl}", s.to),
            };
        }
        if let Some(r) = &self.receive {
            let mode = match r.mode {
                ModeDef::PeekLock => "",
                ModeDef::ReceiveAndDelete => " (ReceiveAndDelete)",
            };
            return format!(
                "receive {} from {} as {}{mode}",
                r.count.unwrap_or(1),
                r.from,
                r.receiver
            );
        }
        if let Some(p) = &self.peek {
            return format!("peek {} in {}", p.count.unwrap_or(1), p.from);
        }
        if let Some(r) = &self.receive_deferred {
            let seqs: Vec<String> = r.seqs.iter().map(|s| format!("#{s}")).collect();
            return format!("receive deferred {} from {}", seqs.join(", "), r.from);
        }
        if let Some(s) = &self.complete {
            return settle("complete", s);
        }
        if let Some(s) = &self.abandon {
            return settle("abandon", s);
        }
        if let Some(s) = &self.dead_letter {
            return settle("dead-letter", s);
        }
        if let Some(s) = &self.defer {
            return settle("defer", s);
        }
        if let Some(s) = &self.renew_lock {
            return settle("renew lock of", s);
        }
        if let Some(c) = &self.cancel_scheduled {
            return format!("cancel scheduled #{} in {}", c.seq, c.to);
        }
        if let Some(d) = &self.create {
            return format!("create {}", entity_label(d));
        }
        if let Some(u) = &self.update {
            return format!("update {}", u.entity);
        }
        if let Some(d) = &self.delete {
            return format!("delete {d}");
        }
        if let Some(r) = &self.close_receiver {
            return format!("close receiver {}", r.receiver);
        }
        if let Some(p) = &self.start_producer {
            return format!("start producer {} ({} msg/s to {})", p.name, p.rate, p.to);
        }
        if let Some(p) = &self.stop_producer {
            return format!("stop producer {p}");
        }
        if let Some(c) = &self.start_consumers {
            return format!(
                "start {} consumer(s) {} on {}",
                c.instances.unwrap_or(1),
                c.name,
                c.from
            );
        }
        if let Some(c) = &self.stop_consumers {
            return format!("stop consumers {c}");
        }
        if let Some(f) = &self.fault {
            return match f {
                FaultDef::ServiceUpdate => "fault: service update".into(),
                FaultDef::OsUpdate => "fault: OS update".into(),
                FaultDef::Disconnect(r) => format!("fault: {r}'s connection drops"),
                FaultDef::ServerBusy(d) => format!(
                    "fault: server busy for {}",
                    sbp_engine::time::format_duration(d.ms())
                ),
            };
        }
        "narration".into()
    }
}
