//! Runs a scenario over the engine: its entities at t=0, its timeline in order, its expectations
//! checked at their instants. The UI and the CLI both drive this.
use crate::dur::Dur;
use crate::model::*;
use crate::step::{entity_command, Action, Step};
use crate::utc;
use crate::ScenarioError;
use sbp_engine::time::{format_instant, Instant};
use sbp_engine::time::{MAX_VALUE, NEVER};
use sbp_engine::Perspective;
use sbp_engine::{BrokerError, ErrorKind, Namespace, Reply};
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
        builder = builder
            .log_limit(scenario.namespace.log_limit.or(default_log_limit))
            .max_messages(Some(sbp_engine::limits::MAX_STORED_MESSAGES))
            .max_body_bytes(Some(sbp_engine::limits::MAX_STORED_BODY_BYTES));
        let mut ns = builder.build();
        for (i, def) in scenario.entities.iter().enumerate() {
            let command = entity_command(&ns, def)
                .map_err(|m| ScenarioError::Invalid(format!("entities[{i}]: {m}")))?;
            ns.apply(0, command).map_err(|e| {
                ScenarioError::Invalid(format!(
                    "entities[{i}] ({}): {}",
                    sbp_engine::error::quote(&crate::step::entity_label(def)),
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
        let mut unbounded = usize::MAX;
        self.advance_within(until, &mut unbounded);
    }

    /// As [`Simulation::advance_to`], handing back once the engine has fired `budget` timers
    /// (a step or an expectation is bounded by the limits, and always finishes). Says whether
    /// it reached `until`; if not, the clock stands where the work stopped.
    pub fn advance_within(&mut self, until: Instant, budget: &mut usize) -> bool {
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
            // Timers due by a step's instant fire before it (as `apply` does).
            let next = match (step_at, expect_at) {
                (None, None) => break,
                (Some(s), Some(e)) => s.min(e),
                (s, e) => s.or(e).unwrap_or(until),
            };
            if !self.ns.advance_by(next, budget) {
                return false;
            }
            match (step_at, expect_at) {
                // Steps at an instant run before the expectations at that instant.
                (Some(s), Some(e)) if s <= e => self.run_step(),
                (Some(_), None) => self.run_step(),
                _ => self.check_expectation(),
            }
        }
        self.ns.advance_by(until, budget)
    }

    /// The instant of the last step or expectation.
    pub fn end(&self) -> Instant {
        self.scenario.end()
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
        check_recorded(&step)?;
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
        check_recorded(&step)?;
        crate::step::check_instant("the instant", at)
            .map_err(|m| BrokerError::new(ErrorKind::ArgumentOutOfRange, m))?;
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
        let Some(action) = &step.action else {
            return Ok(String::new());
        };
        let commands = action
            .commands(&self.ns)
            .map_err(|m| BrokerError::new(ErrorKind::InvalidOperation, m))?;
        let mut sent = Vec::new();
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
                Reply::Sent { seq } => sent.push(seq),
                Reply::Done => summary.push("ok".into()),
            }
        }
        if let Action::Send(send) = action {
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
            return Ok(format!("{verb} {}{warning}", seq_list(&sent)));
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
        self.check_messages_and_metrics(&at, &e);
    }

    /// Message and metric expectations: checked the same way in the browser and the CLI.
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

const TIME_PROPERTIES: &[&str] = &[
    "EnqueuedTime",
    "ExpiresAt",
    "LockedUntil",
    "ScheduledEnqueueTime",
    "EffectiveExpiresAt",
];
const DURATION_PROPERTIES: &[&str] = &["TimeToLive"];

/// Times and durations are written as durations ("15m", "never"); the rest compares as JSON.
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

/// A step a user adds keeps the limits a file keeps (one behaviour everywhere); a step that
/// does not is refused and not recorded.
fn check_recorded(step: &Step) -> Result<(), BrokerError> {
    match &step.action {
        Some(a) => a
            .validate()
            .map_err(|m| BrokerError::new(ErrorKind::ArgumentOutOfRange, m)),
        None => Ok(()),
    }
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
