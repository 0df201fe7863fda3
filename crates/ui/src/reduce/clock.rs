//! The clock's sub-reducer: play and pause, a frame's tick, steps, jumps, the timeline (seek and
//! reset) and the speed; and, once, what happened while it played (WCAG 4.1.3: a summary, not
//! every tick).
use super::run::{replay, Flow, TICK_WORK};
use crate::state::{Action, AppState, SPEEDS};
use sbp_engine::time::Instant;
use sbp_scenario::Simulation;
use std::rc::Rc;

pub(super) fn reduce(s: &mut AppState, action: Action) -> Flow {
    match action {
        Action::Tick { elapsed_ms, .. } => {
            if !s.playing {
                return Flow::Unchanged;
            }
            let mut sim = s.sim.borrow_mut();
            let step = (elapsed_ms * f64::from(s.speed)).round() as Instant;
            let target = sim.now().saturating_add(step.max(1));
            let target = s.stop_at.map_or(target, |stop| target.min(stop));
            // A frame's work is bounded: under heavy traffic the clock runs behind.
            let mut budget = TICK_WORK;
            let on_time = s.rewind.borrow_mut().advance(&mut sim, target, &mut budget);
            if !on_time && s.notice.is_none() {
                s.notice = Some(crate::i18n::t("behind"));
            }
            // An embed that loops starts again once nothing more is due.
            let ended = s.looping && sim.next_due().is_none();
            if s.stop_at.is_some_and(|stop| sim.now() >= stop) {
                s.stop_at = None;
                s.playing = false;
            }
            drop(sim);
            if ended {
                s.seek(0);
            }
        }
        Action::Play => (s.playing, s.stop_at) = (true, None),
        Action::Pause => (s.playing, s.stop_at) = (false, None),
        Action::StepBy(d) => {
            let mut sim = s.sim.borrow_mut();
            let since = (sim.now(), sim.ns().events_logged());
            let target = sim.now().saturating_add(d);
            s.notice = replay(&mut sim, &mut s.rewind.borrow_mut(), target)
                .or_else(|| Some(what_happened(&sim, since)));
        }
        Action::JumpNext => {
            let mut sim = s.sim.borrow_mut();
            match sim.next_event() {
                Some((at, what)) => {
                    let target = at.max(sim.now());
                    s.notice = replay(&mut sim, &mut s.rewind.borrow_mut(), target).or(Some(
                        crate::i18n::tf(
                            "jumped",
                            &[
                                ("at", &sbp_engine::time::format_instant(at)),
                                ("what", &crate::i18n::next_text(&what)),
                            ],
                        ),
                    ));
                }
                None => s.notice = Some(crate::i18n::t("nothing-due")),
            }
        }
        Action::Reset => {
            s.seek(0);
            s.notice = s.notice.take().or(Some(crate::i18n::t("back-to-start")));
        }
        Action::Seek(at) => {
            let since = {
                let sim = s.sim.borrow();
                (sim.now(), sim.ns().events_logged())
            };
            s.seek(at.max(0));
            // Forward, what happened on the way is said (back, the slider says the instant).
            if at > since.0 && s.notice.is_none() && s.error.is_none() {
                s.notice = Some(what_happened(&s.sim.borrow(), since));
            }
        }
        Action::SetSpeed(x) => {
            if SPEEDS.contains(&x) {
                s.speed = x;
            } else {
                s.error = Some(crate::i18n::tf(
                    "speed-not-offered",
                    &[("speed", &x.to_string())],
                ));
            }
        }
        _ => {}
    }
    Flow::Continue
}

/// What happened in the run since `since` (an instant and the log's position then), in one
/// line: the instants, and the events by kind ("DeadLettered ×1").
fn what_happened(sim: &Simulation, (from, position): (Instant, u64)) -> String {
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for e in sim.ns().events_since(position).0 {
        let name = e.kind.name();
        match kinds.iter_mut().find(|(k, _)| *k == name) {
            Some((_, n)) => *n += 1,
            None => kinds.push((name, 1)),
        }
    }
    let from = sbp_engine::time::format_instant(from);
    let to = sbp_engine::time::format_instant(sim.now());
    let what: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    if what.is_empty() {
        crate::i18n::tf("played-quiet", &[("from", &from), ("to", &to)])
    } else {
        crate::i18n::tf(
            "played",
            &[("from", &from), ("to", &to), ("what", &what.join(", "))],
        )
    }
}

impl AppState {
    /// When the clock starts playing, notes where; when it stops, says in the notice what
    /// happened meanwhile (the events by kind), once: a screen reader hears a summary, not
    /// every tick (WCAG 4.1.3).
    pub(super) fn say_what_played(&mut self, before: &AppState, moved: bool) {
        let same_run = Rc::ptr_eq(&self.sim, &before.sim);
        if self.playing && (!before.playing || !same_run || moved) {
            let sim = self.sim.borrow();
            self.played_from = Some((sim.now(), sim.ns().events_logged()));
            return;
        }
        if self.playing || !before.playing || !same_run || self.error.is_some() {
            return;
        }
        if let Some(since) = self.played_from.take() {
            self.notice = Some(what_happened(&self.sim.borrow(), since));
        }
    }
}
