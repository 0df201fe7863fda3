//! The moves on the running simulation that the sub-reducers share: replay to an instant, seek
//! (from a checkpoint), rebuild from a link; and how a sub-reducer says what comes next.
use crate::state::{AppState, LOG_LIMIT};
use sbp_engine::time::Instant;
use sbp_scenario::link::Link;
use sbp_scenario::{Rewind, Simulation};
use std::cell::RefCell;
use std::rc::Rc;

/// What the reducer does after a sub-reducer took an action.
pub(super) enum Flow {
    /// Goes on: what played is said, the lesson's goal checked, the counts sampled.
    Continue,
    /// The state is the next one as it stands (a new run, opened from scratch).
    Done,
    /// Nothing changed: the same state, nothing re-renders.
    Unchanged,
}

/// Timers one clock tick may fire (a 50 ms frame's share of work).
pub(super) const TICK_WORK: usize = sbp_engine::limits::TICK_WORK;
/// Timers a rewind, step or jump may fire before it stops and says so.
const REPLAY_WORK: usize = 4 * sbp_engine::limits::MAX_OPEN_WORK as usize;

/// Runs `sim` to `at` within [`REPLAY_WORK`], taking checkpoints on the way; says where it
/// stopped if it could not get there.
pub fn replay(sim: &mut Simulation, rewind: &mut Rewind, at: Instant) -> Option<String> {
    let mut budget = REPLAY_WORK;
    (!rewind.advance(sim, at, &mut budget)).then(|| {
        crate::i18n::tf(
            "stopped-at",
            &[
                ("at", &sbp_engine::time::format_instant(sim.now())),
                ("target", &sbp_engine::time::format_instant(at)),
            ],
        )
    })
}

impl AppState {
    /// Goes to `at` from the running simulation or the nearest checkpoint before it (the same
    /// scenario, so the same simulation object: views keyed on it stay).
    pub(super) fn seek(&mut self, at: Instant) {
        let mut sim = self.sim.borrow_mut();
        let mut rewind = self.rewind.borrow_mut();
        if !rewind.seek(&mut sim, at) {
            // No checkpoint at or before `at` (a link opened at its instant has its first
            // there): start afresh, and keep checkpoints of this run from t=0 on, so that going
            // on replays with the events a link's checkpoint did not carry.
            match Simulation::with_default_log_limit(sim.scenario(), LOG_LIMIT) {
                Ok(fresh) => {
                    *sim = fresh;
                    *rewind = Rewind::starting_at(&mut sim);
                }
                Err(e) => {
                    self.error = Some(crate::i18n::tf(
                        "error-unchanged",
                        &[("error", &e.to_string())],
                    ));
                    return;
                }
            }
        }
        self.notice = replay(&mut sim, &mut rewind, at);
        self.error = None;
    }

    /// Builds a fresh simulation of the link's scenario and runs it to the link's instant (or
    /// takes up its checkpoint there). On a bad scenario the current one stays and the error is
    /// shown.
    pub(super) fn rebuild(mut self, link: &Link, notice: String) -> Self {
        match link.open(Some(LOG_LIMIT)) {
            Ok(opened) => {
                let mut sim = opened.sim;
                // Replaying the user's own recorded steps must not count their errors as news.
                let mut rewind = Rewind::starting_at(&mut sim);
                let stopped = opened.at.and_then(|at| replay(&mut sim, &mut rewind, at));
                let refused = opened
                    .checkpoint_refused
                    .map(|why| crate::i18n::tf("checkpoint-refused", &[("why", &why.to_string())]));
                self.sim = Rc::new(RefCell::new(sim));
                self.rewind = Rc::new(RefCell::new(rewind));
                self.notice = [refused, stopped, (!notice.is_empty()).then_some(notice)]
                    .into_iter()
                    .flatten()
                    .next();
                self.error = None;
                self.sample();
            }
            Err(e) => {
                self.error = Some(crate::i18n::tf(
                    "error-unchanged",
                    &[("error", &e.to_string())],
                ))
            }
        }
        self
    }
}
