//! The reducer (the `function_todomvc` shape): `reduce` takes the state and an action and returns
//! the next state. What following a server changes comes first (`live.rs`); then each action goes
//! to the sub-reducer of its part (the clock, `clock.rs`; the feed of `sbp serve`, `live.rs`; the
//! lesson, `lesson.rs`), or is taken here (steps, undo, a scenario opened, the page's panels).
//! `run.rs` holds the moves they share. It has no side effects: it reads no clock and touches no
//! page, so it runs natively in `cargo test` (`tests.rs`).
mod clock;
mod lesson;
mod live;
mod run;
#[cfg(test)]
mod tests;

pub use run::replay;

use crate::state::{Action, AppState, SLOW_MS};
use run::Flow;
use sbp_scenario::link::Link;
use std::rc::Rc;
use yew::Reducible;

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = self.next();
        // The slow views follow a running clock every SLOW_MS of wall time; anything else the
        // user does shows at once.
        match action {
            Action::Tick { wall_ms, .. } if wall_ms - s.last_slow_ms < SLOW_MS => {}
            Action::Tick { wall_ms, .. } => {
                s.slow_version += 1;
                s.last_slow_ms = wall_ms;
            }
            _ => s.slow_version += 1,
        }
        let action = match live::remap(&mut s, action) {
            Ok(action) => action,
            Err(flow) => return finish(self, s, flow),
        };
        // An action that says what it did: what the status line said before goes, and what it
        // says now is drawn afresh (announced even in the same words).
        let says = matches!(
            action,
            Action::Do(_)
                | Action::DoAt(..)
                | Action::Notice(_)
                | Action::Error(_)
                | Action::StepBy(_)
                | Action::JumpNext
                | Action::Reset
                | Action::Seek(_)
                | Action::Undo
                | Action::Select(Some(_))
                | Action::Play
                | Action::Pause
                | Action::LessonAgain
        );
        if says {
            s.notice = None;
        }
        // A step of the learner's (the lesson's goal says what it still lacks after one).
        let stepped = matches!(action, Action::Do(_) | Action::DoAt(..));
        let steps_before = s.sim.borrow().scenario().timeline.len();
        // A run that goes on playing from another instant starts its summary there.
        let moved = matches!(
            action,
            Action::Seek(_) | Action::Reset | Action::Undo | Action::LessonWatch
        );
        let flow = match action {
            Action::Live(msg) => live::reduce(&mut s, msg),
            Action::LiveOffered => {
                s.live_offered = true;
                Flow::Continue
            }
            action @ (Action::Tick { .. }
            | Action::Play
            | Action::Pause
            | Action::StepBy(_)
            | Action::JumpNext
            | Action::Reset
            | Action::Seek(_)
            | Action::SetSpeed(_)) => clock::reduce(&mut s, action),
            action @ (Action::StartLesson(_)
            | Action::LessonNext
            | Action::LessonAnswer(_)
            | Action::LessonHint
            | Action::LessonShowMe
            | Action::LessonWatch
            | Action::LessonAgain
            | Action::LessonExit) => lesson::reduce(&mut s, action),
            action => steps_and_panels(&mut s, action),
        };
        if !matches!(flow, Flow::Continue) {
            return finish(self, s, flow);
        }
        s.say_what_played(&self, moved);
        lesson::check_goal(&mut s, stepped);
        if s.sim.borrow().scenario().timeline.len() != steps_before {
            s.forget_samples_after_now();
        }
        if says && (s.notice.is_some() || s.error.is_some()) {
            s.said += 1;
        }
        s.sample();
        s.find_next();
        Rc::new(s)
    }
}

/// The state a flow that ends early leaves: `next`, or the one before when nothing changed.
fn finish(before: Rc<AppState>, mut next: AppState, flow: Flow) -> Rc<AppState> {
    match flow {
        Flow::Unchanged => before,
        Flow::Continue | Flow::Done => {
            next.find_next();
            Rc::new(next)
        }
    }
}

/// The user's steps, undo, a scenario opened, and the page's panels (selection, messages, tabs,
/// the first screen).
fn steps_and_panels(s: &mut AppState, action: Action) -> Flow {
    match action {
        Action::Load { link, notice } => {
            s.samples = Rc::default();
            if let Some(x) = link.speed.filter(|x| crate::state::SPEEDS.contains(x)) {
                s.speed = x;
            }
            s.playing = s.autoplay;
            s.selected = None;
            // A preset, a link or a file opened is what the reader wants to see: the first
            // visit's welcome steps aside (it would push the map and lanes down).
            s.welcome = false;
            *s = s.clone().rebuild(&link, notice);
            return Flow::Done;
        }
        Action::Do(step) => {
            let mut sim = s.sim.borrow_mut();
            s.rewind.borrow_mut().forget_from(sim.now());
            let result = sim.push_step(*step);
            drop(sim);
            said(s, result.map(|text| text.to_string()));
        }
        Action::DoAt(step, at) => {
            let mut sim = s.sim.borrow_mut();
            s.rewind.borrow_mut().forget_from(at.max(sim.now()));
            let result = sim.schedule_step(*step, at);
            drop(sim);
            said(s, result.map(|text| text.to_string()));
        }
        Action::Select(sel) => {
            // Said, for a screen reader, as what opened in the inspector.
            if let Some((path, seq)) = &sel {
                s.notice = Some(crate::i18n::tf(
                    "inspector-opened",
                    &[("seq", &seq.to_string()), ("path", path)],
                ));
            }
            s.selected = sel;
        }
        Action::Error(message) => s.error = Some(message),
        Action::Notice(message) => s.notice = Some(message),
        Action::Dismiss => {
            s.error = None;
            s.notice = None;
        }
        Action::Undo => return undo(s),
        Action::Tab(tab) => s.tab = tab,
        Action::CloseWelcome => s.welcome = false,
        Action::Autoplay => (s.autoplay, s.playing) = (true, true),
        Action::ShowWelcome => s.welcome = true,
        Action::Reword(words) => s.sim.borrow_mut().reword(&words),
        _ => {}
    }
    Flow::Continue
}

/// A step's outcome in the status line: what it did, or why it was refused.
fn said<E: std::fmt::Display>(s: &mut AppState, result: Result<String, E>) {
    match result {
        Ok(text) => {
            s.notice = Some(text);
            s.error = None;
        }
        Err(e) => s.error = Some(e.to_string()),
    }
}

/// Takes back the last recorded step: the scenario without it, at the same instant.
fn undo(s: &mut AppState) -> Flow {
    let (scenario, now) = {
        let sim = s.sim.borrow();
        let mut scenario = sim.scenario().clone();
        // The last step that has run (a later scheduled one stays).
        let last = scenario
            .timeline
            .iter()
            .rposition(|step| step.at.ms() <= sim.now());
        let Some(i) = last else {
            drop(sim);
            s.notice = Some(crate::i18n::t("undo-nothing"));
            return Flow::Done;
        };
        scenario.timeline.remove(i);
        (scenario, sim.now())
    };
    let kept = (s.lesson.clone(), s.playing);
    let mut next = s
        .clone()
        .rebuild(&Link::at(scenario, Some(now)), crate::i18n::t("undone"));
    (next.lesson, next.playing) = kept;
    *s = next;
    Flow::Done
}
