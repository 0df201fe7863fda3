//! The lesson's sub-reducer: start, the parts in turn, a prediction answered and its outcome
//! watched, hints, "Show me" and "Start this part again"; and the goal, checked live after
//! every action.
use super::run::{replay, Flow};
use crate::state::{Action, AppState, LessonRun, Tab, SPEEDS};
use sbp_engine::time::Instant;
use sbp_scenario::link::Link;
use sbp_scenario::Simulation;
use std::rc::Rc;

/// How long watching a prediction's outcome takes at most (wall ms, at the speed chosen).
const WATCH_MS: i64 = 6_000;

pub(super) fn reduce(s: &mut AppState, action: Action) -> Flow {
    match action {
        Action::LessonWatch => {
            // From the instant the question was asked to its outcome, at the slowest
            // speed that shows it within about six seconds.
            let watch = s
                .lesson
                .as_deref()
                .and_then(|run| Some((run.asked_at?, run.answer.as_ref()?.at?)));
            if let Some((from, to)) = watch {
                let span = (to - from).max(1);
                s.speed = SPEEDS
                    .iter()
                    .copied()
                    .find(|x| span / i64::from(*x) <= WATCH_MS)
                    .unwrap_or(SPEEDS[SPEEDS.len() - 1]);
                s.seek(from);
                s.stop_at = Some(to);
                s.playing = true;
            }
        }
        Action::StartLesson(lesson) => {
            s.samples = Rc::default();
            s.playing = false;
            s.selected = None;
            s.welcome = false;
            let scenario = lesson.scenario.clone();
            let mut next = s.clone().rebuild(&Link::at(scenario, None), String::new());
            next.tab = lesson
                .controls
                .first()
                .and_then(|c| Tab::from_id(c))
                .unwrap_or(Tab::Send);
            let mut run = LessonRun::new(lesson);
            run.start = part_start(&run, &next.sim.borrow());
            next.lesson = Some(Rc::new(run));
            *s = next;
            return Flow::Done;
        }
        Action::LessonNext => {
            // An outcome still being watched ends where it was going, on a stopped clock: the
            // next part begins from the state its prediction showed, not from a clock still
            // running past where the part began (which read as "not reached" at once).
            if let Some(to) = s.stop_at.take() {
                s.playing = false;
                let mut sim = s.sim.borrow_mut();
                if sim.now() < to {
                    s.notice = replay(&mut sim, &mut s.rewind.borrow_mut(), to);
                }
            }
            if let Some(run) = s.lesson.as_deref() {
                let mut next = run.clone();
                next.advance();
                next.start = part_start(&next, &s.sim.borrow());
                s.lesson = Some(Rc::new(next));
            }
        }
        Action::LessonAnswer(given) => {
            let question = s
                .lesson
                .as_deref()
                .and_then(|run| run.part().and_then(|p| p.ask.clone()));
            if let (Some(q), Some(run)) = (question, s.lesson.as_deref()) {
                let answer = q.answer(&mut s.sim.borrow_mut());
                let mut next = run.clone();
                next.asked_at = Some(s.sim.borrow().now());
                next.right = Some(q.is_right(&answer, &given));
                next.given = Some(given);
                if let Some(at) = answer.at {
                    let mut sim = s.sim.borrow_mut();
                    s.notice = replay(&mut sim, &mut s.rewind.borrow_mut(), at);
                }
                next.answer = Some(answer);
                s.playing = false;
                s.lesson = Some(Rc::new(next));
            }
        }
        Action::LessonHint => {
            if let Some(run) = s.lesson.as_deref() {
                let mut next = run.clone();
                next.hints += 1;
                s.lesson = Some(Rc::new(next));
            }
        }
        Action::LessonAgain => *s = s.clone().part_again(),
        Action::LessonShowMe => {
            // From where the part began, if the learner did something since: the solution
            // reaches the goal from there (`sbp check` proves it), not from any state.
            *s = s.clone().part_again();
            let solution = s
                .lesson
                .as_deref()
                .and_then(|run| run.part().map(|p| p.solution.clone()))
                .unwrap_or_default();
            let mut sim = s.sim.borrow_mut();
            s.rewind.borrow_mut().forget_from(sim.now());
            if let Err(e) = sbp_scenario::lesson::play_solution(&mut sim, &solution) {
                s.error = Some(e.to_string());
            }
            drop(sim);
            s.playing = true;
        }
        Action::LessonExit => s.lesson = None,
        _ => {}
    }
    Flow::Continue
}

/// A goal is checked live: reached once, it stays reached (and the progress is kept). After a
/// step of the learner's (`stepped`) that does not reach it, the status line says what it still
/// lacks, as the lesson panel shows it.
pub(super) fn check_goal(s: &mut AppState, stepped: bool) {
    let unmet = s.lesson.as_deref().and_then(|run| {
        let goal = run.part()?.goal.as_ref()?;
        (!run.reached).then(|| s.sim.borrow().unmet(goal))
    });
    match unmet {
        Some(unmet) if unmet.is_empty() => {
            if let Some(run) = s.lesson.as_deref() {
                let mut run = run.clone();
                run.reached = true;
                run.done = run.done.max(run.part + 1);
                s.playing = false;
                s.notice = Some(crate::i18n::t("goal-reached"));
                s.lesson = Some(Rc::new(run));
            }
        }
        Some(unmet) if stepped && s.error.is_none() => {
            if let Some(first) = unmet.first() {
                let lacks = crate::i18n::tf("goal-unmet", &[("what", &first.to_string())]);
                s.notice = Some(match s.notice.take() {
                    Some(done) => format!("{done}. {lacks}"),
                    None => lacks,
                });
            }
        }
        _ => {}
    }
}

/// Where a goal's part begins: the scenario as it is now, and the instant (none for other parts).
fn part_start(run: &LessonRun, sim: &Simulation) -> Option<Rc<(sbp_scenario::Scenario, Instant)>> {
    run.part()?.goal.as_ref()?;
    Some(Rc::new((sim.scenario().clone(), sim.now())))
}

impl AppState {
    /// The state at the start of the current goal's part (unchanged if the learner did nothing
    /// since, or the part is no goal), the lesson kept.
    fn part_again(self) -> Self {
        let Some(run) = self.lesson.clone() else {
            return self;
        };
        let Some(start) = run.start.clone().filter(|_| run.acted(&self.sim.borrow())) else {
            return self;
        };
        let (scenario, at) = (*start).clone();
        let mut s = self.rebuild(
            &Link::at(scenario, Some(at)),
            crate::i18n::t("lesson-part-again-done"),
        );
        s.lesson = Some(run);
        s.playing = false;
        s
    }
}
