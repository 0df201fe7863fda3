//! The app state and its reducer (the `function_todomvc` shape: state + Action enum + Reducible).
//! The state holds the running [`Simulation`]; every broker rule stays in the engine.
use crate::browser;
use sbp_engine::time::Instant;
use sbp_engine::Counts;
use sbp_scenario::lesson::{Answer, Lesson, Part};
use sbp_scenario::link::Link;
use sbp_scenario::{Rewind, Simulation, Step};
use std::cell::RefCell;
use std::rc::Rc;
use yew::{Properties, Reducible, UseReducerHandle};

/// The clock's speeds (virtual seconds per wall second).
pub const SPEEDS: &[u32] = &[1, 10, 60, 100, 1_000, 10_000, 100_000];

#[derive(Clone)]
pub struct AppState {
    /// The running scenario. Shared and mutated in place; `version` tells Yew it changed.
    pub sim: Rc<RefCell<Simulation>>,
    /// Checkpoints of this run, so that a rewind replays from the nearest one (shared and
    /// mutated in place with `sim`).
    pub rewind: Rc<RefCell<Rewind>>,
    pub version: u64,
    /// Bumped by every action but clock ticks, and by ticks at most every [`SLOW_MS`]: panels
    /// that need not follow every tick (charts, log, inspector) re-render on it.
    pub slow_version: u64,
    last_slow_ms: f64,
    pub playing: bool,
    /// Playing stops at this instant (a prediction's outcome, watched).
    pub stop_at: Option<Instant>,
    /// While playing: the instant and the log's position where it started, so that what
    /// happened meanwhile is said once when it stops (not at every tick).
    played_from: Option<(Instant, u64)>,
    pub speed: u32,
    /// A message for the user about what went wrong (bad link, failed operation...).
    pub error: Option<String>,
    /// The result of the last action, in words.
    pub notice: Option<String>,
    /// Counts the actions that said something (a notice or an error): the status line draws
    /// each one afresh, so that the same words said again are announced again.
    pub said: u64,
    /// The message shown in the inspector: (entity path, SequenceNumber).
    pub selected: Option<(String, u64)>,
    pub embed: bool,
    /// Embeds: start again from t=0 when nothing more is due (`?loop=1`).
    pub looping: bool,
    /// Embeds: play as soon as a scenario is there (`?autoplay=1`).
    pub autoplay: bool,
    /// The lesson being taken, if any.
    pub lesson: Option<Rc<LessonRun>>,
    /// The control section shown (`send`, `receive`, `faults`, `traffic`, `entities`).
    pub tab: &'static str,
    /// The first screen (what this is, the lessons, the sandbox) is showing.
    pub welcome: bool,
    /// Namespace-wide counts over time, for the chart.
    pub samples: Rc<RefCell<Vec<(Instant, Counts)>>>,
    /// Following `sbp serve` (`?live`): the server's run, replayed here as it happens.
    pub live: Option<Rc<Live>>,
    /// Set once the page leaves the live run (a preset, a file): the feed is ignored from then.
    pub live_left: bool,
    /// `sbp serve` answered on this page's origin: the page offers to follow it.
    pub live_offered: bool,
}

/// What the page knows of the server it follows.
#[derive(Clone, Default)]
pub struct Live {
    /// The page's clock follows the server's; false while the learner inspects (the server goes
    /// on, its steps wait in `pending`).
    pub following: bool,
    /// The feed is there (false after it dropped, until the browser reconnects).
    pub connected: bool,
    /// The server's instant, as it said last.
    pub server_now: Instant,
    /// The clients connected: each one's name and its links (role, entity, link name).
    pub clients: Vec<LiveClient>,
    /// Steps recorded by the server while the page was not following.
    pub pending: Vec<(usize, Step)>,
}

#[derive(Clone, PartialEq, Default)]
pub struct LiveClient {
    pub name: String,
    /// Each link to an entity: its role (`sender`, `receiver`), the entity, the link's name.
    pub links: Vec<[String; 3]>,
}

/// What the feed says (`crates/server/src/live.rs`).
pub enum LiveMsg {
    /// The run so far, at the server's instant: the page starts over from it.
    Opened {
        scenario: Box<sbp_scenario::Scenario>,
        now: Instant,
        clients: Vec<LiveClient>,
    },
    /// A step the server recorded, at its index in the timeline.
    Step(usize, Box<Step>),
    /// The server's clock (and who is connected, when said).
    Now(Instant, Option<Vec<LiveClient>>),
    /// The feed dropped (the browser tries again by itself).
    Lost,
    /// Follow the server again (true), or stay here to inspect (false).
    Follow(bool),
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
    /// Wall-clock time passed (`elapsed_ms`) up to the wall-clock instant `wall_ms`; in play
    /// mode virtual time moves by elapsed x speed. The reducer reads no clock of its own.
    Tick {
        elapsed_ms: f64,
        wall_ms: f64,
    },
    Play,
    Pause,
    StepBy(Instant),
    JumpNext,
    /// Back to t=0 of the same scenario (user actions kept).
    Reset,
    /// Go to any instant: replay from the nearest checkpoint before it (determinism makes this
    /// exact).
    Seek(Instant),
    SetSpeed(u32),
    /// A scenario to open: from a link (its instant, speed and state there), a preset or a file.
    Load {
        link: Box<Link>,
        notice: String,
    },
    /// A user action, recorded into the scenario's timeline at the current instant.
    Do(Box<Step>),
    /// A user action recorded for a later instant (a fault on a schedule).
    DoAt(Box<Step>, Instant),
    /// Something the page did outside the reducer, said in the status line (a link copied).
    Notice(String),
    Select(Option<(String, u64)>),
    Error(String),
    Dismiss,
    /// Takes back the last recorded step: the scenario without it, at the same instant.
    Undo,
    Tab(&'static str),
    /// Leaves the first screen (for the sandbox, or a lesson).
    CloseWelcome,
    /// Shows the first screen (the lessons) again.
    ShowWelcome,
    /// Starts (or restarts) a lesson at its first part, from its start scenario.
    StartLesson(Rc<Lesson>),
    LessonNext,
    /// The learner's prediction: the answer is computed, the clock moves to it.
    LessonAnswer(String),
    LessonHint,
    /// Plays the goal's solution from now.
    LessonShowMe,
    /// Plays a prediction's outcome again from the instant it was asked, at a speed that shows it.
    LessonWatch,
    /// Starts the current goal's part again from where it began.
    LessonAgain,
    LessonExit,
    /// The language changed: everything re-renders in it.
    Relabel,
    /// The feed of the `sbp serve` this page follows.
    Live(LiveMsg),
    /// `sbp serve` answered on this page's origin.
    LiveOffered,
}

impl AppState {
    pub fn new(mut sim: Simulation, embed: bool) -> Self {
        AppState {
            rewind: Rc::new(RefCell::new(Rewind::starting_at(&mut sim))),
            sim: Rc::new(RefCell::new(sim)),
            version: 0,
            slow_version: 0,
            last_slow_ms: 0.0,
            playing: false,
            stop_at: None,
            played_from: None,
            speed: 10,
            error: None,
            notice: None,
            said: 0,
            selected: None,
            embed,
            looping: false,
            autoplay: false,
            lesson: None,
            tab: "send",
            welcome: false,
            samples: Rc::default(),
            live: None,
            live_left: false,
            live_offered: false,
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
        // Following a server: the clock is the server's and the steps are its clients';
        // the page's own clock controls and recording step aside.
        let action = match (&s.live, action) {
            (Some(_), Action::Play) => Action::Live(LiveMsg::Follow(true)),
            (Some(_), Action::Pause) => Action::Live(LiveMsg::Follow(false)),
            (Some(live), Action::Seek(at)) => {
                let at = at.min(live.server_now);
                s.set_live(|l| l.following = false);
                Action::Seek(at)
            }
            (Some(_), Action::Do(_) | Action::DoAt(..) | Action::Undo | Action::Reset) => {
                s.error = Some(crate::i18n::t("live-read-only"));
                return Rc::new(s);
            }
            (Some(_), Action::StepBy(_) | Action::JumpNext) => return self,
            (_, Action::Load { link, notice }) => {
                s.live = None;
                s.live_left = true;
                Action::Load { link, notice }
            }
            (_, action) => action,
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
        // A run that goes on playing from another instant starts its summary there.
        let moved = matches!(
            action,
            Action::Seek(_) | Action::Reset | Action::Undo | Action::LessonWatch
        );
        match action {
            Action::Live(msg) => {
                if s.live_left {
                    return self;
                }
                if let Some(next) = s.on_live(msg) {
                    return Rc::new(next);
                }
            }
            Action::LiveOffered => s.live_offered = true,
            Action::Tick { elapsed_ms, .. } => {
                if !s.playing {
                    return self;
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
            Action::StepBy(d) => {
                let mut sim = s.sim.borrow_mut();
                let since = (sim.now(), sim.ns.events_logged());
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
                s.notice = s.notice.or(Some(crate::i18n::t("back-to-start")));
            }
            Action::Seek(at) => {
                let since = {
                    let sim = s.sim.borrow();
                    (sim.now(), sim.ns.events_logged())
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
            Action::Load { link, notice } => {
                s.samples = Rc::default();
                if let Some(x) = link.speed.filter(|x| SPEEDS.contains(x)) {
                    s.speed = x;
                }
                s.playing = s.autoplay;
                s.selected = None;
                // A preset, a link or a file opened is what the reader wants to see: the
                // first visit's welcome steps aside (it would push the map and lanes down).
                s.welcome = false;
                return Rc::new(s.rebuild(&link, notice));
            }
            Action::Do(step) => {
                let mut sim = s.sim.borrow_mut();
                s.rewind.borrow_mut().forget_from(sim.now());
                let result = sim.push_step(*step);
                drop(sim);
                match result {
                    Ok(text) => {
                        s.notice = Some(text.to_string());
                        s.error = None;
                    }
                    Err(e) => s.error = Some(e.to_string()),
                }
            }
            Action::DoAt(step, at) => {
                let mut sim = s.sim.borrow_mut();
                s.rewind.borrow_mut().forget_from(at.max(sim.now()));
                let result = sim.schedule_step(*step, at);
                drop(sim);
                match result {
                    Ok(text) => {
                        s.notice = Some(text.to_string());
                        s.error = None;
                    }
                    Err(e) => s.error = Some(e.to_string()),
                }
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
            Action::Relabel => {}
            Action::Undo => {
                let (scenario, now) = {
                    let sim = s.sim.borrow();
                    let mut scenario = sim.scenario.clone();
                    // The last step that has run (a later scheduled one stays).
                    let last = scenario
                        .timeline
                        .iter()
                        .rposition(|step| step.at.ms() <= sim.now());
                    match last {
                        Some(i) => {
                            scenario.timeline.remove(i);
                        }
                        None => {
                            drop(sim);
                            s.notice = Some(crate::i18n::t("undo-nothing"));
                            return Rc::new(s);
                        }
                    }
                    (scenario, sim.now())
                };
                let kept = (s.lesson.clone(), s.playing);
                let mut s = s.rebuild(&Link::at(scenario, Some(now)), crate::i18n::t("undone"));
                (s.lesson, s.playing) = kept;
                return Rc::new(s);
            }
            Action::Tab(tab) => s.tab = tab,
            Action::CloseWelcome => s.welcome = false,
            Action::ShowWelcome => s.welcome = true,
            Action::StartLesson(lesson) => {
                s.samples = Rc::default();
                s.playing = false;
                s.selected = None;
                s.welcome = false;
                let scenario = lesson.scenario.clone();
                let mut s = s.rebuild(&Link::at(scenario, None), String::new());
                s.tab = lesson
                    .controls
                    .first()
                    .and_then(|c| TABS.iter().find(|t| **t == c.as_str()))
                    .copied()
                    .unwrap_or("send");
                let mut run = LessonRun::new(lesson);
                run.start = part_start(&run, &s.sim.borrow());
                s.lesson = Some(Rc::new(run));
                return Rc::new(s);
            }
            Action::LessonNext => {
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
            Action::LessonAgain => s = s.part_again(),
            Action::LessonShowMe => {
                // From where the part began, if the learner did something since: the solution
                // reaches the goal from there (`sbp check` proves it), not from any state.
                s = s.part_again();
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
        }
        s.say_what_played(&self, moved);
        // A goal is checked live: reached once, it stays reached (and the progress is kept).
        // After a step of the learner's that does not reach it, the status line says what it
        // still lacks, as the lesson panel shows it.
        let unmet = s.lesson.as_deref().and_then(|run| {
            let goal = run.part()?.goal.as_ref()?;
            (!run.reached).then(|| s.sim.borrow_mut().unmet(goal))
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
        if says && (s.notice.is_some() || s.error.is_some()) {
            s.said += 1;
        }
        s.sample();
        Rc::new(s)
    }
}

/// What happened in the run since `since` (an instant and the log's position then), in one
/// line: the instants, and the events by kind ("DeadLettered ×1").
fn what_happened(sim: &Simulation, (from, position): (Instant, u64)) -> String {
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for e in sim.ns.events_since(position).0 {
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

/// How long watching a prediction's outcome takes at most (wall ms, at the speed chosen).
const WATCH_MS: i64 = 6_000;

/// Timers one clock tick may fire (a 50 ms frame's share of work).
const TICK_WORK: usize = sbp_engine::limits::TICK_WORK;
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
    /// When the clock starts playing, notes where; when it stops, says in the notice what
    /// happened meanwhile (the events by kind), once: a screen reader hears a summary, not
    /// every tick (WCAG 4.1.3).
    fn say_what_played(&mut self, before: &AppState, moved: bool) {
        let same_run = Rc::ptr_eq(&self.sim, &before.sim);
        if self.playing && (!before.playing || !same_run || moved) {
            let sim = self.sim.borrow();
            self.played_from = Some((sim.now(), sim.ns.events_logged()));
            return;
        }
        if self.playing || !before.playing || !same_run || self.error.is_some() {
            return;
        }
        if let Some(since) = self.played_from.take() {
            self.notice = Some(what_happened(&self.sim.borrow(), since));
        }
    }

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
        if index != sim.scenario.timeline.len() {
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

    /// Goes to `at` from the running simulation or the nearest checkpoint before it (the same
    /// scenario, so the same simulation object: views keyed on it stay).
    fn seek(&mut self, at: Instant) {
        let mut sim = self.sim.borrow_mut();
        let mut rewind = self.rewind.borrow_mut();
        if !rewind.seek(&mut sim, at) {
            // No checkpoint at or before `at` (a link opened at its instant has its first
            // there): start afresh, and keep checkpoints of this run from t=0 on, so that going
            // on replays with the events a link's checkpoint did not carry.
            match Simulation::with_default_log_limit(&sim.scenario, LOG_LIMIT) {
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
    fn rebuild(mut self, link: &Link, notice: String) -> Self {
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

/// Where a goal's part begins: the scenario as it is now, and the instant (none for other parts).
fn part_start(run: &LessonRun, sim: &Simulation) -> Option<Rc<(sbp_scenario::Scenario, Instant)>> {
    run.part()?.goal.as_ref()?;
    Some(Rc::new((sim.scenario.clone(), sim.now())))
}

/// A lesson being taken: which part, and what the learner did in it.
#[derive(Clone)]
pub struct LessonRun {
    pub lesson: Rc<Lesson>,
    pub part: usize,
    /// A prediction: what the learner answered, the true outcome, and whether they agree.
    pub given: Option<String>,
    pub answer: Option<Answer>,
    pub right: Option<bool>,
    /// A prediction: the instant it was answered at (its outcome can be watched from there).
    pub asked_at: Option<Instant>,
    /// Hints shown so far.
    pub hints: usize,
    /// A goal: reached.
    pub reached: bool,
    /// A goal: the scenario and the instant when its part began, so that the part can start
    /// again from there (a learner's wrong step may make the goal unreachable).
    pub start: Option<Rc<(sbp_scenario::Scenario, Instant)>>,
    /// Parts done so far in this run (the page keeps the most ever done in local storage; the
    /// reducer only counts).
    pub done: usize,
}

impl LessonRun {
    pub fn new(lesson: Rc<Lesson>) -> Self {
        LessonRun {
            lesson,
            part: 0,
            given: None,
            answer: None,
            right: None,
            asked_at: None,
            hints: 0,
            reached: false,
            start: None,
            done: 0,
        }
    }

    /// Whether the learner did something since the part began (a step, or the clock moved).
    pub fn acted(&self, sim: &Simulation) -> bool {
        self.start.as_deref().is_some_and(|(scenario, at)| {
            scenario.timeline.len() != sim.scenario.timeline.len() || *at != sim.now()
        })
    }

    /// The current part (None when the lesson is finished).
    pub fn part(&self) -> Option<&Part> {
        self.lesson.parts.get(self.part)
    }

    /// On to the next part (an explanation's or a prediction's end counts as progress).
    pub fn advance(&mut self) {
        *self = LessonRun {
            part: self.part + 1,
            done: self.done.max(self.part + 1),
            ..LessonRun::new(self.lesson.clone())
        };
    }
}

/// The control tabs, in order (a lesson shows only those it names).
pub const TABS: [&str; 5] = ["send", "receive", "faults", "traffic", "entities"];

/// A click that dispatches `action()`: one closure type for every such button (one copy in the
/// wasm).
#[inline(never)]
pub fn on_click(store: &StateHandle, action: fn() -> Action) -> yew::Callback<web_sys::MouseEvent> {
    let store = store.clone();
    yew::Callback::from(move |_: web_sys::MouseEvent| store.dispatch(action()))
}

/// The running simulation, compared by identity (a rebuild makes a new one).
#[derive(Clone)]
pub struct SimRef(pub Rc<std::cell::RefCell<Simulation>>);

impl PartialEq for SimRef {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// The handle every component gets to read the state and dispatch actions.
pub type StateHandle = UseReducerHandle<AppState>;

#[derive(Properties, PartialEq)]
pub struct StateProps {
    pub store: StateHandle,
}

/// Props for panels that follow the clock at most every few hundred milliseconds while it runs.
/// A store handle reads the latest state, so the version they compare is copied in.
#[derive(Properties)]
pub struct SlowProps {
    pub store: StateHandle,
    pub version: u64,
}

impl PartialEq for SlowProps {
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version
    }
}

/// What the page opens with: a link in the URL, else the scenario from local storage, else the
/// starter. A broken link shows an error and keeps the stored scenario.
pub fn initial_state() -> AppState {
    let hash = browser::fragment();
    let embed = browser::query_flag("embed");

    let (stored, stored_at) = load_stored();
    // A newcomer (nothing stored, no link, no lesson or preset asked for) sees the first screen;
    // a link to something shows that thing.
    let newcomer = stored.is_none() && hash.trim_start_matches('#').is_empty();
    let mut state = AppState::new(stored.unwrap_or_else(starter), embed);
    state.welcome = newcomer
        && !embed
        && ["lesson", "lessons", "preset"]
            .iter()
            .all(|key| browser::query_value(key).is_none());
    state.looping = browser::query_flag("loop");
    state.autoplay = browser::query_flag("autoplay");
    state.playing = state.autoplay;
    if let Some(at) = stored_at {
        if let Some(stopped) = replay(
            &mut state.sim.borrow_mut(),
            &mut state.rewind.borrow_mut(),
            at,
        ) {
            state.notice = Some(stopped);
        }
    }
    let fragment = hash.trim_start_matches('#');
    // A lesson link (`#lesson=...`) is opened by the app once it runs (main.rs).
    if !fragment.is_empty() && browser::lesson_payload().is_none() {
        match sbp_scenario::link::decode_link(fragment) {
            Ok(mut link) => {
                let name = link.scenario.name.clone();
                let refused = open_as_the_query_asks(&mut link);
                let state = std::rc::Rc::new(state);
                let loaded = yew::Reducible::reduce(
                    state,
                    Action::Load {
                        link: Box::new(link),
                        notice: if name.is_empty() {
                            crate::i18n::t("opened-shared")
                        } else {
                            crate::i18n::tf("opened-shared-named", &[("name", &name)])
                        },
                    },
                );
                let mut loaded = (*loaded).clone();
                if refused.is_some() {
                    loaded.error = refused;
                }
                return loaded;
            }
            Err(e) => {
                state.error = Some(crate::i18n::tf(
                    "error-unchanged",
                    &[("error", &e.to_string())],
                ))
            }
        }
    }
    state
}

/// `link` opened where the page's `?at=` (an instant: `90s`, `1m30s`) and `?speed=` (one of
/// [`SPEEDS`]) say: the `<service-bus-playground>` element's `instant` and `speed`. Another
/// instant than the link's own is replayed to (its saved state is for its own). Why one of
/// them is not taken, if so (the link is then left as it was).
pub fn open_as_the_query_asks(link: &mut Link) -> Option<String> {
    let asked = || -> Result<(Option<Instant>, Option<u32>), String> {
        let at = browser::query_value("at")
            .map(|v| {
                sbp_engine::time::parse_duration(&v)
                    .map_err(|_| crate::i18n::tf("error-query-at", &[("value", &v)]))
            })
            .transpose()?;
        let speed = browser::query_value("speed")
            .map(|v| {
                v.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|x| SPEEDS.contains(x))
                    .ok_or_else(|| crate::i18n::tf("error-speed", &[("speed", &v)]))
            })
            .transpose()?;
        Ok((at, speed))
    };
    match asked() {
        Ok((at, speed)) => {
            if let Some(at) = at.filter(|at| link.at != Some(*at)) {
                link.at = Some(at);
                link.checkpoint = None;
            }
            link.speed = speed.or(link.speed);
            None
        }
        Err(why) => Some(why),
    }
}

fn starter() -> Simulation {
    let scenario = sbp_scenario::Scenario::from_json(browser::STARTER).unwrap_or_default();
    Simulation::with_default_log_limit(&scenario, LOG_LIMIT).unwrap_or_else(|_| {
        // An empty scenario is valid (a test says so).
        match Simulation::new(&sbp_scenario::Scenario::default()) {
            Ok(sim) => sim,
            Err(_) => unreachable!(),
        }
    })
}

/// The stored scenario and instant. Storage holds a share-link fragment: one format, one codec.
fn load_stored() -> (Option<Simulation>, Option<i64>) {
    match browser::stored_link() {
        Some(link) => (
            Simulation::with_default_log_limit(&link.scenario, LOG_LIMIT).ok(),
            link.at,
        ),
        None => (None, None),
    }
}
