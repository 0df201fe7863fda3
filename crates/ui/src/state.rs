//! The app state and its reducer (the `function_todomvc` shape: state + Action enum + Reducible).
//! The state holds the running [`Simulation`]; every broker rule stays in the engine.
use sbp_engine::time::Instant;
use sbp_engine::Counts;
use sbp_scenario::{Scenario, Simulation, Step};
use std::cell::RefCell;
use std::rc::Rc;
use yew::Reducible;

/// The clock's speeds (virtual seconds per wall second).
pub const SPEEDS: &[u32] = &[1, 10, 60, 100, 1_000, 10_000, 100_000];

#[derive(Clone)]
pub struct AppState {
    /// The running scenario. Shared and mutated in place; `version` tells Yew it changed.
    pub sim: Rc<RefCell<Simulation>>,
    pub version: u64,
    /// Bumped by every action but clock ticks, and by ticks at most every [`SLOW_MS`]: panels
    /// that need not follow every tick (charts, log, inspector) re-render on it.
    pub slow_version: u64,
    last_slow_ms: f64,
    pub playing: bool,
    pub speed: u32,
    /// A message for the user about what went wrong (bad link, failed operation...).
    pub error: Option<String>,
    /// The result of the last action, in words.
    pub notice: Option<String>,
    /// The message shown in the inspector: (entity path, SequenceNumber).
    pub selected: Option<(String, u64)>,
    pub embed: bool,
    /// Namespace-wide counts over time, for the chart.
    pub samples: Rc<RefCell<Vec<(Instant, Counts)>>>,
}

/// How often (wall ms) the slow panels follow a running clock.
pub const SLOW_MS: f64 = 400.0;

/// The browser keeps about this many events; older ones are dropped (long traffic runs).
pub const LOG_LIMIT: usize = 100_000;

/// The chart keeps at most this many samples (older ones are thinned out).
const MAX_SAMPLES: usize = 1_000;

impl PartialEq for AppState {
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version && Rc::ptr_eq(&self.sim, &other.sim)
    }
}

pub enum Action {
    /// Wall-clock time passed (ms); in play mode virtual time moves by ms x speed.
    Tick(f64),
    Play,
    Pause,
    StepBy(Instant),
    JumpNext,
    /// Back to t=0 of the same scenario (user actions kept).
    Reset,
    /// Go to any instant: replay from the start (determinism makes this exact).
    Seek(Instant),
    SetSpeed(u32),
    Load {
        scenario: Box<Scenario>,
        at: Option<Instant>,
        speed: Option<u32>,
        notice: String,
    },
    /// A user action, recorded into the scenario's timeline at the current instant.
    Do(Box<Step>),
    /// A user action recorded for a later instant (a fault on a schedule).
    DoAt(Box<Step>, Instant),
    Select(Option<(String, u64)>),
    Error(String),
    Dismiss,
}

impl AppState {
    pub fn new(sim: Simulation, embed: bool) -> Self {
        AppState {
            sim: Rc::new(RefCell::new(sim)),
            version: 0,
            slow_version: 0,
            last_slow_ms: 0.0,
            playing: false,
            speed: 10,
            error: None,
            notice: None,
            selected: None,
            embed,
            samples: Rc::default(),
        }
    }

    /// Records the namespace's counts now (one sample per instant).
    fn sample(&self) {
        let sim = self.sim.borrow();
        let now = sim.now();
        let total = sim.ns.total_counts();
        let mut samples = self.samples.borrow_mut();
        samples.retain(|(t, _)| *t < now);
        samples.push((now, total));
        if samples.len() > MAX_SAMPLES {
            let thinned: Vec<_> = samples.iter().copied().step_by(2).collect();
            *samples = thinned;
        }
    }

    fn next(&self) -> Self {
        let mut s = self.clone();
        s.version += 1;
        s
    }
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = self.next();
        let wall = crate::browser::now_ms();
        if !matches!(action, Action::Tick(_)) || wall - s.last_slow_ms >= SLOW_MS {
            s.slow_version += 1;
            s.last_slow_ms = wall;
        }
        match action {
            Action::Tick(wall_ms) => {
                if !s.playing {
                    return self;
                }
                crate::browser::tick_started();
                let mut sim = s.sim.borrow_mut();
                let step = (wall_ms * f64::from(s.speed)).round() as Instant;
                let target = sim.now().saturating_add(step.max(1));
                sim.advance_to(target);
            }
            Action::Play => s.playing = true,
            Action::Pause => s.playing = false,
            Action::StepBy(d) => {
                let mut sim = s.sim.borrow_mut();
                let target = sim.now().saturating_add(d);
                sim.advance_to(target);
            }
            Action::JumpNext => {
                let mut sim = s.sim.borrow_mut();
                match sim.next_event() {
                    Some((at, what)) => {
                        let target = at.max(sim.now());
                        sim.advance_to(target);
                        s.notice = Some(format!(
                            "Jumped to {}: {what}",
                            sbp_engine::time::format_instant(at)
                        ));
                    }
                    None => {
                        s.notice = Some(
                            "Nothing is due: no timer, lock, expiry or step is waiting.".into(),
                        )
                    }
                }
            }
            Action::Reset => {
                let scenario = s.sim.borrow().scenario.clone();
                return Rc::new(s.rebuild(&scenario, 0, "Back to the start.".into()));
            }
            Action::Seek(at) => {
                let scenario = s.sim.borrow().scenario.clone();
                return Rc::new(s.rebuild(&scenario, at.max(0), String::new()));
            }
            Action::SetSpeed(x) => {
                if SPEEDS.contains(&x) {
                    s.speed = x;
                } else {
                    s.error = Some(format!(
                        "Speed x{x} is not offered; choose one of the listed speeds."
                    ));
                }
            }
            Action::Load {
                scenario,
                at,
                speed,
                notice,
            } => {
                s.samples = Rc::default();
                if let Some(x) = speed.filter(|x| SPEEDS.contains(x)) {
                    s.speed = x;
                }
                s.playing = false;
                s.selected = None;
                return Rc::new(s.rebuild(&scenario, at.unwrap_or(0), notice));
            }
            Action::Do(step) => {
                let result = s.sim.borrow_mut().push_step(*step);
                match result {
                    Ok(text) => {
                        s.notice = Some(text);
                        s.error = None;
                    }
                    Err(e) => s.error = Some(format!("{}: {}", e.kind.name(), e.message)),
                }
            }
            Action::DoAt(step, at) => {
                let result = s.sim.borrow_mut().schedule_step(*step, at);
                match result {
                    Ok(text) => {
                        s.notice = Some(text);
                        s.error = None;
                    }
                    Err(e) => s.error = Some(format!("{}: {}", e.kind.name(), e.message)),
                }
            }
            Action::Select(sel) => s.selected = sel,
            Action::Error(message) => s.error = Some(message),
            Action::Dismiss => {
                s.error = None;
                s.notice = None;
            }
        }
        s.sample();
        Rc::new(s)
    }
}

impl AppState {
    /// Builds a fresh simulation of `scenario` and runs it to `at`. On a bad scenario the
    /// current one stays and the error is shown.
    fn rebuild(mut self, scenario: &Scenario, at: Instant, notice: String) -> Self {
        match Simulation::with_default_log_limit(scenario, crate::state::LOG_LIMIT) {
            Ok(mut sim) => {
                // Replaying the user's own recorded steps must not count their errors as news.
                sim.advance_to(at);
                self.sim = Rc::new(RefCell::new(sim));
                self.notice = (!notice.is_empty()).then_some(notice);
                self.error = None;
                self.sample();
            }
            Err(e) => self.error = Some(format!("{e}. The current scenario is unchanged.")),
        }
        self
    }
}
