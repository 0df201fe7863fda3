//! Runs a scenario over the engine: its entities at t=0, its timeline in order, its expectations
//! checked at their instants. The UI and the CLI both drive this.
use crate::dur::Dur;
use crate::model::*;
use crate::scenario::Scenario;
use crate::step::{entity_command, Action, Step};
use crate::utc;
use crate::{at_field, ScenarioError, Text};
use sbp_engine::text;
use sbp_engine::time::{format_instant, Instant};
use sbp_engine::{BrokerError, ErrorKind, Namespace, Reply};
use serde::Serialize;

/// What happens next: the next step of the timeline (its number and what it does) or a timer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    Step { number: usize, action: Text },
    Timer(sbp_engine::Due),
}

/// What one timeline step did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepOutcome {
    pub index: usize,
    pub at: Instant,
    pub action: Text,
    pub result: Result<Text, BrokerError>,
}

/// A running scenario: the namespace, where in the timeline it is, and what happened so far.
#[derive(Clone, Debug)]
pub struct Simulation {
    /// Private to the crate: `next_step` indexes its timeline, so only the simulation's own
    /// steps change it ([`Simulation::scenario`] reads it).
    pub(crate) scenario: Scenario,
    /// Private to the crate: it moves only with the timeline ([`Simulation::ns`] reads it).
    pub(crate) ns: Namespace,
    pub start_unix_ms: i64,
    pub(crate) next_step: usize,
    pub(crate) next_expect: usize,
    pub outcomes: Vec<StepOutcome>,
    /// Expectation failures found so far.
    pub failures: Vec<Text>,
    /// What each named call (`"as"`) returned, for expectations and settlements by name.
    pub named: crate::vecmap::VecMap<NamedCall>,
    /// How many expectations (and `expect` steps) have been checked so far.
    pub checked: usize,
    /// While a step runs through [`Simulation::push_step_replies`], what the engine answered.
    capture: Option<Vec<Reply>>,
}

/// What a named receive or peek returned, and how the client holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedCall {
    pub receiver: String,
    pub from: String,
    pub how: Holding,
    pub messages: Vec<sbp_engine::MessageView>,
    /// A named session call: what it returned (SES-02, SES-05).
    pub session: Option<sbp_engine::SessionView>,
}

/// How a client holds a message a call returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holding {
    /// Peeked: no lock (RCV-11).
    Peeked,
    /// Locked, with the LockToken in the view (RCV-02).
    Locked,
    /// Received and deleted: already settled (RCV-01).
    Deleted,
}

// A checkpoint keeps the named calls (`crate::checkpoint`).
sbp_engine::saved!(NamedCall {
    receiver,
    from,
    how,
    messages,
    session
});
sbp_engine::saved_unit!(Holding {
    Peeked,
    Locked,
    Deleted
});

impl Simulation {
    /// The scenario being run (its timeline holds the steps recorded so far).
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Puts the words of `words` (this run's scenario worded in another language: a preset
    /// opened again in the reader's new language) into the run's: its name and description,
    /// and each narration the same step has there (a step with a note, matched in order by its
    /// instant and kind of action; a step recorded since has none and keeps it). What the run
    /// does is unchanged.
    pub fn reword(&mut self, words: &Scenario) {
        self.scenario.name = words.name.clone();
        self.scenario.description = words.description.clone();
        let kind = |s: &Step| (s.at, s.action.as_ref().map(Action::key));
        let mut theirs = words.timeline.iter().filter(|w| w.note.is_some());
        for step in &mut self.scenario.timeline {
            if step.note.is_none() {
                continue;
            }
            let mut ahead = theirs.clone();
            if let Some(their) = ahead.find(|w| kind(w) == kind(step)) {
                step.note = their.note.clone();
                theirs = ahead;
            }
        }
    }

    /// The namespace as the run has left it.
    pub fn ns(&self) -> &Namespace {
        &self.ns
    }

    /// The scenario without its timeline, made without copying the timeline (a long run's
    /// steps are many): it is taken out and put back.
    pub fn scenario_without_timeline(&mut self) -> Scenario {
        let timeline = std::mem::take(&mut self.scenario.timeline);
        let scenario = self.scenario.clone();
        self.scenario.timeline = timeline;
        scenario
    }

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

    pub(crate) fn build(
        scenario: &Scenario,
        default_log_limit: Option<usize>,
    ) -> Result<Simulation, ScenarioError> {
        scenario.validate()?;
        let start_unix_ms =
            utc::parse_start(scenario.start.as_deref().unwrap_or(utc::DEFAULT_START))
                .map_err(|m| ScenarioError::Invalid(at_field("start", m)))?;
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
                .map_err(|m| ScenarioError::Invalid(at_field(format!("entities[{i}]"), m)))?;
            ns.apply(0, command).map_err(|e| {
                ScenarioError::Invalid(at_field(
                    format!(
                        "entities[{i}] ({})",
                        sbp_engine::error::quote(&crate::step::entity_label(def))
                    ),
                    e.message,
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
            named: Default::default(),
            checked: 0,
            capture: None,
        })
    }

    pub fn now(&self) -> Instant {
        self.ns.now()
    }

    /// A copy for a rewind checkpoint: without the scenario (the rewind holds the current one)
    /// and with only the last `keep_log` events of the log.
    pub(crate) fn snapshot(&mut self, keep_log: usize) -> Simulation {
        Simulation {
            scenario: Scenario::default(),
            ns: self.ns.snapshot(keep_log),
            start_unix_ms: self.start_unix_ms,
            next_step: self.next_step,
            next_expect: self.next_expect,
            outcomes: self.outcomes.clone(),
            failures: self.failures.clone(),
            named: self.named.clone(),
            checked: self.checked,
            capture: None,
        }
    }

    /// "2026-01-01T00:00:10Z" for an instant.
    pub fn utc(&self, at: Instant) -> String {
        utc::format_utc(self.start_unix_ms, at)
    }

    /// The next instant anything happens: a timeline step, an expectation, or a broker timer.
    pub fn next_due(&self) -> Option<Instant> {
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

    /// What happens next, with its instant: a step of the timeline or a timer, as data
    /// (`words::next_text` says it).
    pub fn next_event(&self) -> Option<(Instant, Next)> {
        let step = self.scenario.timeline.get(self.next_step).map(|s| {
            (
                s.at.ms(),
                Next::Step {
                    number: self.next_step + 1,
                    action: s.action_text(),
                },
            )
        });
        let timer = self.ns.next_event().map(|(at, due)| (at, Next::Timer(due)));
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
    pub fn push_step(&mut self, mut step: Step) -> Result<Text, BrokerError> {
        check_recorded(&step, self.ns.tier())?;
        step.at = Dur(self.now());
        self.scenario.timeline.insert(self.next_step, step);
        self.run_step();
        self.outcomes
            .last()
            .map(|o| o.result.clone())
            .unwrap_or(Ok(text!("empty")))
    }

    /// As [`Simulation::push_step`], and gives what the engine answered (the sequence numbers
    /// sent, the messages received): how `sbp serve` turns an SDK's call into a recorded step.
    /// A step that fails is recorded with `expect_error` naming the error, so a replay checks
    /// that it fails the same way.
    pub fn push_step_replies(&mut self, step: Step) -> Result<Vec<Reply>, BrokerError> {
        self.capture = Some(Vec::new());
        let failures = self.failures.len();
        let steps = self.scenario.timeline.len();
        let result = self.push_step(step);
        let replies = self.capture.take().unwrap_or_default();
        // (A step refused before it ran was not recorded: nothing to mark.)
        let recorded_now = self.scenario.timeline.len() > steps;
        if let (Err(e), true) = (&result, recorded_now) {
            if let Some(recorded) = self.next_step.checked_sub(1) {
                if let Some(step) = self.scenario.timeline.get_mut(recorded) {
                    step.expect_error = Some(ErrorMatch::One(e.kind.name().to_string()));
                    self.failures.truncate(failures);
                }
            }
        }
        result.map(|_| replies)
    }

    /// Adds a step to run at a later instant (a fault on a schedule, a producer that starts
    /// later); at or before now it runs at once.
    pub fn schedule_step(&mut self, mut step: Step, at: Instant) -> Result<Text, BrokerError> {
        if at <= self.now() {
            return self.push_step(step);
        }
        check_recorded(&step, self.ns.tier())?;
        crate::step::check_instant("the instant", at)
            .map_err(|m| BrokerError::new(ErrorKind::ArgumentOutOfRange, m))?;
        step.at = Dur(at);
        let position = self.scenario.timeline[self.next_step..]
            .iter()
            .position(|s| s.at.ms() > at)
            .map_or(self.scenario.timeline.len(), |p| p + self.next_step);
        let text = text!(
            "out-scheduled-step",
            at = format_instant(at),
            action = step.action_text()
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
        let expected = step.expect_error.as_ref();
        let step_label = || {
            text!(
                "f-step",
                number = index + 1,
                at = format_instant(at),
                action = action.clone()
            )
        };
        match (&result, expected) {
            (Ok(_), Some(want)) => self.failures.push(text!(
                "f-succeeded",
                step = step_label(),
                want = want.describe()
            )),
            (Err(e), Some(want)) if !want.matches(e) => self.failures.push(text!(
                "f-other-error",
                step = step_label(),
                want = want.describe(),
                error = e.kind.name(),
                message = e.message.clone()
            )),
            (Err(e), None) => self.failures.push(text!(
                "f-failed",
                step = step_label(),
                error = e.kind.name(),
                message = e.message.clone()
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

    fn execute(&mut self, step: &Step, at: Instant) -> Result<Text, BrokerError> {
        let Some(action) = &step.action else {
            return Ok(text!("empty"));
        };
        if let Action::Expect(e) = action {
            self.ns.advance_to(at);
            let before = self.failures.len();
            self.check(&format_instant(at), e);
            return Ok(text!("out-checked", failed = self.failures.len() - before));
        }
        if let Some(by_name) = self.settle_by_name(action)? {
            self.ns.apply(at, by_name)?;
            return Ok(action.done_text());
        }
        let commands = action
            .commands(&self.ns)
            .map_err(|m| BrokerError::new(ErrorKind::InvalidOperation, m))?;
        let mut sent = Vec::new();
        let mut duplicates = 0u32;
        let mut summary = text!("empty");
        for command in commands {
            let reply = self.ns.apply(at, command)?;
            if let Some(capture) = &mut self.capture {
                capture.push(reply.clone());
            }
            match reply {
                Reply::Messages(ms) => {
                    let seqs: Vec<u64> = ms.iter().map(|m| m.sequence_number).collect();
                    self.remember(action, &ms);
                    summary = if seqs.is_empty() {
                        text!("out-none")
                    } else {
                        text!("out-got", seqs = seq_list(&seqs))
                    };
                }
                // DUP-02: acknowledged, dropped.
                Reply::Sent { seq: 0 } => duplicates += 1,
                Reply::Sent { seq } => sent.push(seq),
                Reply::Done => summary = action.done_text(),
                Reply::Session(v) => {
                    summary = text!(
                        "out-session",
                        session = &v.session_id,
                        until = format_instant(v.locked_until),
                        state = v.state.as_ref().map_or("-".into(), sbp_engine::Body::shown)
                    );
                    if let Action::Session(SessionDef {
                        name: Some(name),
                        receiver,
                        from,
                        ..
                    }) = action
                    {
                        self.named.insert(
                            name.clone(),
                            NamedCall {
                                receiver: receiver.clone(),
                                from: from.clone(),
                                how: Holding::Peeked,
                                messages: Vec::new(),
                                session: Some(v),
                            },
                        );
                    }
                }
            }
        }
        if let Action::Send(send) = action {
            // TTL-14: a very short TTL may expire messages before any receiver sees them.
            let warning = sbp_engine::text::optional(
                send.ttl
                    .and_then(|t| sbp_engine::describe::short_ttl_warning(t.ms()))
                    .map(|w| text!("out-warning", warning = w)),
            );
            let key = if send.scheduled_enqueue_time.is_some() {
                "out-scheduled"
            } else {
                "out-sent"
            };
            let dropped = sbp_engine::text::optional(
                (duplicates > 0).then(|| text!("out-duplicates", count = duplicates)),
            );
            return Ok(text!(
                key,
                seqs = seq_list(&sent),
                duplicates = dropped,
                warning = warning
            ));
        }
        Ok(summary)
    }

    fn check_expectation(&mut self) {
        let index = self.next_expect;
        self.next_expect += 1;
        let e = self.scenario.expect[index].clone();
        self.ns.advance_to(e.at.ms());
        self.check(&format_instant(e.at.ms()), &e);
    }
}

impl Simulation {
    /// Takes every step already run out of the timeline: `sbp serve` keeps its recording on
    /// disk, one line a step as it runs, and none in memory. The place in the timeline moves
    /// with them (the steps still to come, if any, stay); step outcomes are then counted from
    /// the new start.
    pub fn take_run_steps(&mut self) -> Vec<Step> {
        let n = self.next_step.min(self.scenario.timeline.len());
        if n == 0 {
            return Vec::new();
        }
        let taken: Vec<Step> = self.scenario.timeline.drain(..n).collect();
        self.next_step -= n;
        for o in &mut self.outcomes {
            o.index = o.index.saturating_sub(n);
        }
        taken
    }

    /// Forgets what the named call `name` returned: `sbp serve` names every receive call, and
    /// keeps only those whose locks are still held (a run that lasts would otherwise keep them
    /// all, each insert looking through them).
    pub fn forget_call(&mut self, name: &str) {
        self.named.remove(name);
    }

    /// Records what a named receive or peek returned (`"as"`).
    fn remember(&mut self, action: &Action, got: &[sbp_engine::MessageView]) {
        let (name, receiver, from, how) = match action {
            Action::Receive(r) => (
                &r.name,
                &r.receiver,
                &r.from,
                match r.mode {
                    ModeDef::PeekLock => Holding::Locked,
                    ModeDef::ReceiveAndDelete => Holding::Deleted,
                },
            ),
            Action::ReceiveDeferred(r) => (&r.name, &r.receiver, &r.from, Holding::Locked),
            Action::Peek(p) => (&p.name, &p.receiver, &p.from, Holding::Peeked),
            _ => return,
        };
        if let Some(name) = name {
            self.named.insert(
                name.clone(),
                NamedCall {
                    receiver: receiver.clone(),
                    from: from.clone(),
                    how,
                    messages: got.to_vec(),
                    session: None,
                },
            );
        }
    }

    /// A settlement of a named message: with that call's LockToken (RCV-08), or the client
    /// error the SDK raises for a peeked (RCV-11) or received-and-deleted (RCV-01) one.
    fn settle_by_name(&self, action: &Action) -> Result<Option<sbp_engine::Command>, BrokerError> {
        let Some((def, settlement)) = action.settlement() else {
            return Ok(None);
        };
        let Some(name) = &def.message else {
            return Ok(None);
        };
        let client = |m: Text| BrokerError::new(ErrorKind::InvalidOperation, m);
        let (call, view) = self.named_message(name).map_err(client)?;
        let verb = Text::new(format!("op-{}", settlement.name()));
        match call.how {
            Holding::Peeked => Err(client(text!(
                "e-settle-peeked",
                what = format!("\"{name}\""),
                verb = verb
            ))),
            Holding::Deleted => Err(client(text!(
                "e-settle-deleted",
                what = format!("\"{name}\""),
                verb = verb
            ))),
            Holding::Locked => Ok(Some(sbp_engine::Command::Settle {
                receiver: call.receiver.clone(),
                from: call.from.clone(),
                seq: view.sequence_number,
                settlement,
                lock_token: view.lock_token.clone(),
            })),
        }
    }
}

/// A step a user adds keeps the limits a file keeps (one behaviour everywhere); a step that
/// does not is refused and not recorded.
fn check_recorded(step: &Step, tier: sbp_engine::Tier) -> Result<(), BrokerError> {
    match &step.action {
        Some(a) => a
            .validate(tier)
            .map_err(|m| BrokerError::new(ErrorKind::ArgumentOutOfRange, m)),
        None => Ok(()),
    }
}

fn seq_list(seqs: &[u64]) -> String {
    match seqs {
        [] => "-".into(),
        [one] => format!("#{one}"),
        [first, .., last] if seqs.len() > 3 => format!("#{first}..#{last}"),
        _ => seqs
            .iter()
            .map(|s| format!("#{s}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}
