//! The sub-reducer of the feed of `sbp serve` the page follows (`?live`): the server's clock and
//! its clients' steps replayed here as they happen; while following, the page's own clock
//! controls and recording step aside.
use super::run::{replay, Flow, TICK_WORK};
use crate::state::{Action, AppState, Live, LiveMsg};
use sbp_scenario::link::Link;
use sbp_scenario::Step;
use std::rc::Rc;

/// What an action becomes while the page follows a server (the clock is the server's and the
/// steps are its clients'), or the flow that ends it here.
pub(super) fn remap(s: &mut AppState, action: Action) -> Result<Action, Flow> {
    Ok(match (&s.live, action) {
        (Some(_), Action::Play) => Action::Live(LiveMsg::Follow(true)),
        (Some(_), Action::Pause) => Action::Live(LiveMsg::Follow(false)),
        (Some(live), Action::Seek(at)) => {
            let at = at.min(live.server_now);
            s.set_live(|l| l.following = false);
            Action::Seek(at)
        }
        (Some(_), Action::Do(_) | Action::DoAt(..) | Action::Undo | Action::Reset) => {
            s.error = Some(crate::i18n::t("live-read-only"));
            return Err(Flow::Done);
        }
        (Some(_), Action::StepBy(_) | Action::JumpNext) => return Err(Flow::Unchanged),
        (_, Action::Load { link, notice }) => {
            s.live = None;
            s.live_left = true;
            Action::Load { link, notice }
        }
        (_, action) => action,
    })
}

pub(super) fn reduce(s: &mut AppState, msg: LiveMsg) -> Flow {
    if s.live_left {
        return Flow::Unchanged;
    }
    match s.on_live(msg) {
        Some(next) => {
            *s = next;
            Flow::Done
        }
        None => Flow::Continue,
    }
}

impl AppState {
    fn set_live(&mut self, change: impl FnOnce(&mut Live)) {
        if let Some(live) = &self.live {
            let mut next = (**live).clone();
            change(&mut next);
            self.live = Some(Rc::new(next));
        }
    }

    /// Takes in what the feed said; a new state when the page starts over (`Opened`).
    fn on_live(&mut self, msg: LiveMsg) -> Option<AppState> {
        match msg {
            LiveMsg::Opened {
                scenario,
                now,
                clients,
            } => {
                self.samples = Rc::default();
                self.playing = false;
                self.selected = None;
                self.welcome = false;
                self.lesson = None;
                let mut next = self
                    .clone()
                    .rebuild(&Link::at(*scenario, Some(now)), String::new());
                next.live = Some(Rc::new(Live {
                    following: true,
                    connected: true,
                    server_now: now,
                    clients,
                    pending: Vec::new(),
                }));
                return Some(next);
            }
            LiveMsg::Step(index, step) => {
                let following = self.live.as_ref().is_some_and(|l| l.following);
                if following {
                    self.live_step(index, *step);
                } else {
                    self.set_live(|l| l.pending.push((index, *step)));
                }
            }
            LiveMsg::Now(now, clients) => {
                self.set_live(|l| {
                    l.server_now = l.server_now.max(now);
                    l.connected = true;
                    if let Some(c) = clients {
                        l.clients = c;
                    }
                });
                if self.live.as_ref().is_some_and(|l| l.following) {
                    let mut sim = self.sim.borrow_mut();
                    let mut budget = TICK_WORK;
                    let target = now.max(sim.now());
                    self.rewind
                        .borrow_mut()
                        .advance(&mut sim, target, &mut budget);
                }
            }
            LiveMsg::Lost => self.set_live(|l| l.connected = false),
            LiveMsg::Follow(on) => {
                let (pending, server_now) = match &self.live {
                    Some(l) => (l.pending.clone(), l.server_now),
                    None => return None,
                };
                self.set_live(|l| {
                    l.following = on;
                    if on {
                        l.pending.clear();
                    }
                });
                if on {
                    // Back to where the server is: the steps it recorded meanwhile, each at its
                    // instant (the run up to each replays on the way), then its instant.
                    for (index, step) in pending {
                        self.live_step(index, step);
                    }
                    let mut sim = self.sim.borrow_mut();
                    let stopped = replay(&mut sim, &mut self.rewind.borrow_mut(), server_now);
                    self.notice = stopped.or(Some(crate::i18n::t("live-following")));
                }
            }
        }
        None
    }

    /// Runs a step the server recorded, at its instant, as the server ran it.
    fn live_step(&mut self, index: usize, step: Step) {
        let mut sim = self.sim.borrow_mut();
        if index != sim.scenario().timeline.len() {
            // The page missed a step: it says so rather than show another run.
            self.error = Some(crate::i18n::t("live-out-of-step"));
            return;
        }
        let at = step.at.ms();
        let mut rewind = self.rewind.borrow_mut();
        if let Some(stopped) = replay(&mut sim, &mut rewind, at) {
            self.notice = Some(stopped);
            return;
        }
        rewind.forget_from(sim.now());
        let _ = sim.push_step(step);
    }
}
