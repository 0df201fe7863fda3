//! The reducer run natively: each action from a state to the next, as the page dispatches it.
//! Texts are compared with the catalog's words for their keys (English when the engine is built
//! with it, else the keys themselves).
use crate::i18n::{t, tf};
use crate::state::{Action, AppState, LiveMsg, Tab};
use sbp_scenario::lesson::Lesson;
use sbp_scenario::link::Link;
use sbp_scenario::{Scenario, Simulation, Step};
use std::rc::Rc;
use yew::Reducible;

const QUEUE: &str = r#"{"version": 1, "entities": [{"queue": "orders", "dead_lettering_on_message_expiration": true}],
  "timeline": [{"at": "0s", "send": {"to": "orders", "ttl": "10s"}}]}"#;

fn state(json: &str) -> Rc<AppState> {
    let scenario = Scenario::from_json(json).expect("a valid scenario");
    Rc::new(AppState::new(
        Simulation::new(&scenario).expect("a run"),
        false,
    ))
}

fn reduce(s: &Rc<AppState>, action: Action) -> Rc<AppState> {
    s.clone().reduce(action)
}

/// A clock tick as the page's driver dispatches it.
fn tick(s: &Rc<AppState>, elapsed_ms: f64, wall_ms: f64) -> Rc<AppState> {
    reduce(
        s,
        Action::Tick {
            elapsed_ms,
            wall_ms,
        },
    )
}

/// A send to orders as the send form records it (at the current instant).
fn send() -> Step {
    let scenario = Scenario::from_json(QUEUE).expect("a valid scenario");
    scenario.timeline[0].clone()
}

fn counts(s: &AppState) -> (i64, u64, u64) {
    let sim = s.sim.borrow();
    let c = sim.ns().total_counts();
    (sim.now(), c.active, c.dead_lettered)
}

#[test]
fn a_tick_while_paused_is_the_same_state() {
    let s = state(QUEUE);
    let next = tick(&s, 50.0, 1_000.0);
    assert!(Rc::ptr_eq(&s, &next));
}

#[test]
fn playing_moves_the_clock_by_the_wall_time_times_the_speed() {
    let s = state(QUEUE);
    let s = reduce(&s, Action::SetSpeed(10));
    let s = reduce(&s, Action::Play);
    let s = tick(&s, 100.0, 100.0);
    assert_eq!(s.sim.borrow().now(), 1_000);
    let s = reduce(&s, Action::Pause);
    assert!(!s.playing);
    // What played is said once, when it stops.
    let said = tf(
        "played",
        &[("from", "t=0s"), ("to", "t=1s"), ("what", "Sent ×1")],
    );
    assert_eq!(s.notice.as_deref(), Some(said.as_str()));
}

#[test]
fn a_speed_not_offered_is_refused_and_changes_nothing_else() {
    let s = state(QUEUE);
    let next = reduce(&s, Action::SetSpeed(7));
    assert_eq!(next.speed, s.speed);
    assert_eq!(
        next.error.as_deref(),
        Some(tf("speed-not-offered", &[("speed", "7")]).as_str())
    );
    assert_eq!(counts(&next), counts(&s));
}

#[test]
fn a_step_is_recorded_said_and_taken_back_by_undo() {
    let s = state(r#"{"version": 1, "entities": [{"queue": "orders"}]}"#);
    let s = reduce(&s, Action::Do(Box::new(send())));
    assert_eq!(s.sim.borrow().scenario().timeline.len(), 1);
    assert_eq!(counts(&s).1, 1);
    assert!(s.notice.is_some() && s.said == 1);
    let s = reduce(&s, Action::Undo);
    assert_eq!(s.sim.borrow().scenario().timeline.len(), 0);
    assert_eq!(counts(&s).1, 0);
    assert_eq!(s.notice.as_deref(), Some(t("undone").as_str()));
}

#[test]
fn a_refused_step_changes_nothing_but_the_error() {
    let s = state(r#"{"version": 1, "entities": [{"queue": "orders"}]}"#);
    let mut step = send();
    if let Some(sbp_scenario::step::Action::Send(d)) = &mut step.action {
        d.to = "nowhere".into();
    }
    let next = reduce(&s, Action::Do(Box::new(step)));
    assert!(next.error.is_some());
    assert_eq!(counts(&next), counts(&s));
}

#[test]
fn a_seek_back_and_forth_is_the_run_replayed_there() {
    let s = state(QUEUE);
    let s = reduce(&s, Action::Seek(30_000));
    assert_eq!(counts(&s), (30_000, 0, 1));
    let s = reduce(&s, Action::Seek(5_000));
    let mut fresh = Simulation::new(&Scenario::from_json(QUEUE).expect("valid")).expect("a run");
    fresh.advance_to(5_000);
    assert_eq!(counts(&s), (5_000, fresh.ns().total_counts().active, 0));
    assert_eq!(counts(&s).1, 1);
    let s = reduce(&s, Action::Reset);
    assert_eq!(counts(&s).0, 0);
}

#[test]
fn following_a_server_leaves_the_clock_and_the_steps_to_it() {
    let s = state(QUEUE);
    let scenario = Scenario::from_json(QUEUE).expect("valid");
    let s = reduce(
        &s,
        Action::Live(LiveMsg::Opened {
            scenario: Box::new(scenario),
            now: 2_000,
            clients: Vec::new(),
        }),
    );
    assert!(s.live.as_ref().is_some_and(|l| l.following));
    assert_eq!(s.sim.borrow().now(), 2_000);
    // The page's own steps are refused; a step of the clock is ignored.
    let refused = reduce(&s, Action::Do(Box::new(send())));
    assert_eq!(refused.error.as_deref(), Some(t("live-read-only").as_str()));
    assert_eq!(refused.sim.borrow().scenario().timeline.len(), 1);
    assert!(Rc::ptr_eq(&s, &reduce(&s, Action::StepBy(1_000))));
    // The server's clock moves the page's; leaving with a preset ends the following.
    let s = reduce(&s, Action::Live(LiveMsg::Now(4_000, None)));
    assert_eq!(s.sim.borrow().now(), 4_000);
    let link = Link::at(Scenario::from_json(QUEUE).expect("valid"), None);
    let s = reduce(
        &s,
        Action::Load {
            link: Box::new(link),
            notice: String::new(),
        },
    );
    assert!(s.live.is_none() && s.live_left);
    let fed = reduce(&s, Action::Live(LiveMsg::Now(9_000, None)));
    assert!(Rc::ptr_eq(&s, &fed));
}

#[test]
fn the_tab_is_one_of_the_sections() {
    let s = state(QUEUE);
    assert_eq!(s.tab, Tab::Send);
    let s = reduce(&s, Action::Tab(Tab::Faults));
    assert_eq!(s.tab, Tab::Faults);
    for tab in Tab::ALL {
        assert_eq!(Tab::from_id(tab.id()), Some(tab));
    }
    assert_eq!(Tab::from_id("settings"), None);
}

#[test]
fn a_lesson_starts_at_its_first_part_with_its_tab_and_moves_on() {
    let lesson = Lesson::from_json(include_str!("../../../../web/lessons/ttl-basics.json"))
        .expect("lesson 1 reads");
    let s = state(QUEUE);
    let s = reduce(&s, Action::Tab(Tab::Entities));
    let s = reduce(&s, Action::StartLesson(Rc::new(lesson)));
    let run = s.lesson.clone().expect("a lesson runs");
    assert_eq!(run.part, 0);
    assert_eq!(s.tab, Tab::Send);
    assert_eq!(s.sim.borrow().scenario().timeline.len(), 0);
    let s = reduce(&s, Action::LessonNext);
    assert_eq!(s.lesson.as_ref().map(|r| (r.part, r.done)), Some((1, 1)));
    let s = reduce(&s, Action::LessonExit);
    assert!(s.lesson.is_none());
}

/// Issue 31: a lesson whose last part is an explanation is finished once that part shows (the
/// track said 4/5 for a lesson just read to its end); one ending on a question is not, until
/// it is answered.
#[test]
fn a_closing_explanation_counts_as_done_once_it_shows() {
    let lesson = Rc::new(
        Lesson::from_json(include_str!("../../../../web/lessons/ttl-basics.json"))
            .expect("lesson 1 reads"),
    );
    let mut run = crate::state::LessonRun::new(lesson.clone());
    run.part = lesson.parts.len() - 2;
    run.advance();
    assert_eq!(
        (run.part, run.done),
        (lesson.parts.len() - 1, lesson.parts.len())
    );
    let mut run = crate::state::LessonRun::new(lesson.clone());
    run.part = 1;
    run.advance();
    assert_eq!(
        (run.part, run.done),
        (2, 2),
        "a middle part counts when left"
    );
}

/// Issue 31: the counts chart keeps its span through a rewind (the run passes those instants
/// again with the same counts); a step taken then changes what follows, so the samples after
/// it go.
#[test]
fn a_rewind_keeps_the_charts_samples_and_a_new_step_drops_the_ones_after_it() {
    let s = state(QUEUE);
    let s = reduce(&s, Action::Seek(30_000));
    let recorded: Vec<i64> = s.samples.borrow().iter().map(|(t, _)| *t).collect();
    assert_eq!(recorded.last(), Some(&30_000));
    let s = reduce(&s, Action::Seek(5_000));
    let after_rewind: Vec<i64> = s.samples.borrow().iter().map(|(t, _)| *t).collect();
    assert!(after_rewind.contains(&5_000) && after_rewind.contains(&30_000));
    assert!(after_rewind.windows(2).all(|w| w[0] < w[1]), "in order");
    let s = reduce(&s, Action::Do(Box::new(send())));
    assert!(s.samples.borrow().iter().all(|(t, _)| *t <= 5_000));
}

/// "Next" pressed while a prediction's outcome is still being watched: the watch ends at the
/// outcome, the clock stops, and the next part (a goal) starts from there, untouched: nothing
/// said as "not reached", no "start this part again".
#[test]
fn next_during_a_watched_outcome_starts_the_next_part_from_the_outcome() {
    let lesson = Lesson::from_json(include_str!("../../../../web/lessons/entity-default.json"))
        .expect("the lesson reads");
    let s = state(QUEUE);
    let s = reduce(&s, Action::StartLesson(Rc::new(lesson)));
    let s = reduce(&s, Action::LessonNext);
    // Part 2: a message with TimeToLive 10m (capped by the queue's 1m default).
    let s = reduce(&s, Action::LessonShowMe);
    let s = reduce(&s, Action::Pause);
    let s = reduce(&s, Action::LessonNext);
    // Part 3: when does #1 expire? Answered (wrong), the clock is at the outcome.
    let s = reduce(&s, Action::LessonAnswer("30s".into()));
    let outcome = s.sim.borrow().now();
    assert_eq!(outcome, 60_000);
    let s = reduce(&s, Action::LessonWatch);
    let s = tick(&s, 500.0, 500.0);
    assert!(s.playing && s.sim.borrow().now() < outcome, "watching");
    let s = reduce(&s, Action::LessonNext);
    assert!(!s.playing);
    assert_eq!(s.stop_at, None);
    assert_eq!(s.sim.borrow().now(), outcome);
    let run = s.lesson.as_deref().expect("the lesson goes on");
    assert_eq!(run.part, 3);
    assert!(!run.acted(&s.sim.borrow()), "the new part starts untouched");
    // Ticks after it change nothing: the clock stays where the part began.
    let after = tick(&s, 500.0, 1_000.0);
    assert!(!after
        .lesson
        .as_deref()
        .expect("a lesson")
        .acted(&after.sim.borrow()));
}

#[test]
fn a_preset_reworded_in_another_language_changes_its_words_not_its_run_nor_undo() {
    let noted = |name: &str, note: &str| {
        format!(
            r#"{{"version": 1, "name": "{name}", "entities": [{{"queue": "orders"}}],
            "timeline": [{{"at": "0s", "note": "{note}", "send": {{"to": "orders", "ttl": "10s"}}}}]}}"#
        )
    };
    let s = state(&noted("Sends", "One sent."));
    let s = reduce(&s, Action::StepBy(3_000));
    let s = reduce(&s, Action::Do(Box::new(send())));
    let before = counts(&s);
    let german = Scenario::from_json(&noted("Senden", "Eine gesendet.")).expect("reads");
    let s = reduce(&s, Action::Reword(Box::new(german)));
    assert_eq!(counts(&s), before);
    {
        let sim = s.sim.borrow();
        assert_eq!(sim.scenario().name, "Senden");
        let [preset, mine] = &sim.scenario().timeline[..] else {
            panic!("two steps: the preset's and the learner's send");
        };
        assert_eq!(preset.note.as_deref(), Some("Eine gesendet."));
        assert_eq!(mine.note, None);
    }
    // Undo takes back the learner's send and keeps the words.
    let s = reduce(&s, Action::Undo);
    assert_eq!(s.sim.borrow().scenario().timeline.len(), 1);
    assert_eq!(s.sim.borrow().scenario().name, "Senden");
}
