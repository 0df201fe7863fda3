//! Every run bounded: what a scenario may ask for, and an estimate of the work it takes to
//! reach an instant (messages sent, consumer polls, sweeps), checked before anything runs.
use crate::scenario::Scenario;
use crate::step::{check_instant, consumer_spec, producer_spec, Action};
use crate::{at_field, Text};
use sbp_engine::limits::{MAX_ENTITIES, MAX_RUN_WORK, MAX_STORED_MESSAGES, MIN_SWEEP_INTERVAL};
use sbp_engine::settings::{DEFAULT_SWEEP_INTERVAL, MIN_LOCK_DURATION};
use sbp_engine::text;
use sbp_engine::time::{after, format_duration, format_instant, Instant};
use sbp_engine::ExpiryMode;

impl Scenario {
    /// The instant of the last step or expectation.
    pub fn end(&self) -> Instant {
        let last_step = self.timeline.last().map_or(0, |s| s.at.ms());
        let last_expect = self.expect.iter().map(|e| e.at.ms()).max().unwrap_or(0);
        last_step.max(last_expect)
    }

    /// The playground's limits (see `sbp_engine::limits`): instants, sizes and rates. The error
    /// names the field and the limit. (The work a run takes is checked where it runs: to its end
    /// in the CLI, [`Scenario::check_run_to`]; to a link's instant, `link::openable_at`.)
    pub(crate) fn check_bounds(&self) -> Result<(), Text> {
        if self.entities.len() > MAX_ENTITIES {
            return Err(text!(
                "s-max-entities",
                count = self.entities.len(),
                max = MAX_ENTITIES
            ));
        }
        if let Some(every) = self.namespace.sweep_interval {
            if every.ms() < MIN_SWEEP_INTERVAL {
                return Err(text!(
                    "s-sweep-interval",
                    min = format_duration(MIN_SWEEP_INTERVAL)
                ));
            }
        }
        for (i, step) in self.timeline.iter().enumerate() {
            let at = step.at.ms();
            check_instant("at", at).map_err(|m| at_field(format!("timeline[{i}]"), m))?;
            if let Some(action) = &step.action {
                action
                    .validate(self.namespace.tier)
                    .map_err(|m| at_field(format!("timeline[{i}] ({})", action.key()), m))?;
            }
        }
        for (i, e) in self.expect.iter().enumerate() {
            check_instant("at", e.at.ms()).map_err(|m| at_field(format!("expect[{i}]"), m))?;
        }
        Ok(())
    }

    /// Whether running to `until` stays within [`MAX_RUN_WORK`]; the error names the limit.
    /// The CLI checks this before it runs a file to its end (a browser replays to a link's
    /// instant under its own budget, and plays on a bounded amount of work per frame).
    pub fn check_run_to(&self, until: Instant) -> Result<(), crate::ScenarioError> {
        self.check_run_within(until, MAX_RUN_WORK)
    }

    /// Whether running to `until` stays within `budget` (the CLI's `--budget`, itself at most
    /// `MAX_CLI_RUN_WORK`); the error names the budget.
    pub fn check_run_within(
        &self,
        until: Instant,
        budget: u64,
    ) -> Result<(), crate::ScenarioError> {
        let work = self.work_until(until);
        if work > budget {
            return Err(crate::ScenarioError::Invalid(text!(
                "s-run-work",
                until = format_instant(until),
                work = work,
                max = budget
            )));
        }
        Ok(())
    }

    /// About how many operations reaching `until` takes: every message sent (by steps and
    /// producers, spikes and bursts included), every poll an idle consumer makes, every lock
    /// renewal auto renewal may make, every message a realistic-mode sweep scans. An upper bound in the usual cases; what limits use.
    pub fn work_until(&self, until: Instant) -> u64 {
        let steps: Vec<(Instant, &Action)> = self
            .timeline
            .iter()
            .filter(|s| s.at.ms() <= until)
            .filter_map(|s| s.action.as_ref().map(|a| (s.at.ms(), a)))
            .collect();
        // An actor runs from its start until it is stopped or started again under its name.
        let runs_until = |i: usize, actor: (bool, &str)| {
            steps[i + 1..]
                .iter()
                .find(|(_, a)| actor_named(a) == Some(actor))
                .map_or(until, |(t, _)| *t)
        };
        let mut messages: u64 = 0;
        let mut polls: u64 = 0;
        let mut renewals: u64 = 0;
        // Auto lock renewal renews at the latest halfway through the shortest lock (RCV-03, RCV-04).
        let renewals_of = |locks: u64, renewal: Option<Instant>, span: Instant| {
            let each = renewal.unwrap_or(0).min(span.max(0)) / (MIN_LOCK_DURATION / 2);
            locks.saturating_mul(u64::try_from(each).unwrap_or(0))
        };
        for (i, &(at, action)) in steps.iter().enumerate() {
            match action {
                Action::Receive(r) => {
                    let locks = u64::from(r.count.unwrap_or(1));
                    let renewal = r.max_auto_lock_renewal.map(|d| d.ms());
                    renewals = renewals.saturating_add(renewals_of(locks, renewal, until - at));
                }
                Action::Send(s) => {
                    messages = messages.saturating_add(u64::from(s.count.unwrap_or(1)))
                }
                Action::StartProducer(p) => {
                    let end = runs_until(i, (true, &p.name));
                    let spec = producer_spec(p);
                    let secs = (end - at).max(0) as f64 / 1000.0;
                    let mut n = spec.rate.max(0.0) * secs + 1.0;
                    if let Some(s) = &spec.spike {
                        let overlap = (end.min(after(s.from, s.duration)) - at.max(s.from)).max(0);
                        n += spec.rate * (s.factor - 1.0).max(0.0) * overlap as f64 / 1000.0;
                    }
                    if let Some(b) = &spec.burst {
                        n += f64::from(b.size) * ((end - at).max(0) / b.every.max(1) + 1) as f64;
                    }
                    let n = if n.is_finite() { n as u64 } else { u64::MAX };
                    messages = messages.saturating_add(spec.max_messages.map_or(n, |m| n.min(m)));
                }
                Action::StartConsumers(c) => {
                    let end = runs_until(i, (false, &c.name));
                    let spec = consumer_spec(c);
                    let wakes = ((end - at).max(0) / spec.poll_interval.max(1)) as u64 + 1;
                    let instances = u64::from(spec.instances);
                    polls = polls.saturating_add(wakes.saturating_mul(instances));
                    // Each instance holds one lock at a time, renewed while it works.
                    let renewal = spec.max_auto_lock_renewal.map(|_| end - at);
                    renewals = renewals.saturating_add(renewals_of(instances, renewal, end - at));
                }
                _ => {}
            }
        }
        let mut sweeps: u64 = 0;
        if self.namespace.expiry == ExpiryMode::Realistic {
            let every = self
                .namespace
                .sweep_interval
                .map_or(DEFAULT_SWEEP_INTERVAL, |d| d.ms())
                .max(MIN_SWEEP_INTERVAL);
            let entities = self.entities.len() as u64 + steps.len() as u64;
            let scanned = messages.min(MAX_STORED_MESSAGES);
            sweeps = (until.max(0) / every) as u64;
            sweeps = sweeps.saturating_mul(entities).saturating_mul(scanned);
        }
        messages
            .saturating_add(polls)
            .saturating_add(renewals)
            .saturating_add(sweeps)
    }
}

/// The actor a step starts or stops: (is a producer, its name).
fn actor_named(a: &Action) -> Option<(bool, &str)> {
    match a {
        Action::StartProducer(p) => Some((true, &p.name)),
        Action::StopProducer(n) => Some((true, n)),
        Action::StartConsumers(c) => Some((false, &c.name)),
        Action::StopConsumers(n) => Some((false, n)),
        _ => None,
    }
}
