//! The app's state as a value (the `function_todomvc` shape: state + Action enum; the reducer,
//! `reduce/`, turns one into the next). The state holds the running [`Simulation`]; every
//! broker rule stays in the engine. Nothing here touches the page: start-up (what the URL and
//! storage say) is `startup.rs`.
use sbp_engine::time::Instant;
use sbp_engine::Counts;
use sbp_scenario::lesson::{Answer, Lesson, Part};
use sbp_scenario::link::Link;
use sbp_scenario::{Next, Rewind, Simulation, Step};
use std::cell::RefCell;
use std::rc::Rc;
use yew::{Properties, UseReducerHandle};

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
    /// What happens next (a step or a timer), as the clock bar says it: found by the reducer
    /// after each action (finding it drops stale timers), so that drawing only reads.
    pub next_event: Option<(Instant, Next)>,
    /// Bumped by every action but clock ticks, and by ticks at most every [`SLOW_MS`]: panels
    /// that need not follow every tick (charts, log, inspector) re-render on it.
    pub slow_version: u64,
    pub(crate) last_slow_ms: f64,
    pub playing: bool,
    /// Playing stops at this instant (a prediction's outcome, watched).
    pub stop_at: Option<Instant>,
    /// While playing: the instant and the log's position where it started, so that what
    /// happened meanwhile is said once when it stops (not at every tick).
    pub(crate) played_from: Option<(Instant, u64)>,
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
    /// The control section shown.
    pub tab: Tab,
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
    /// `?autoplay=1`, once the page shows on the reader's screen: it plays from now on, and so
    /// does each scenario it opens (an embed further down a page waits for the reader).
    Autoplay,
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
    Tab(Tab),
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
    /// The preset on screen in the reader's new language: its name, description and narration
    /// put into the run (`Simulation::reword`), which does the same.
    Reword(Box<sbp_scenario::Scenario>),
    /// The feed of the `sbp serve` this page follows.
    Live(LiveMsg),
    /// `sbp serve` answered on this page's origin.
    LiveOffered,
}

impl AppState {
    pub fn new(mut sim: Simulation, embed: bool) -> Self {
        AppState {
            rewind: Rc::new(RefCell::new(Rewind::starting_at(&mut sim))),
            next_event: sim.next_event(),
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
            tab: Tab::Send,
            welcome: false,
            samples: Rc::default(),
            live: None,
            live_left: false,
            live_offered: false,
        }
    }

    /// Records the namespace's counts now (one sample per instant, in order). The samples after
    /// now stay: a rewound run passes them again with the same counts, so the chart keeps its
    /// span ([`AppState::forget_samples_after_now`] when a step changes what follows).
    pub(crate) fn sample(&self) {
        let sim = self.sim.borrow();
        let now = sim.now();
        let total = sim.ns().total_counts();
        let mut samples = self.samples.borrow_mut();
        match samples.binary_search_by_key(&now, |(t, _)| *t) {
            Ok(i) => samples[i].1 = total,
            Err(i) => samples.insert(i, (now, total)),
        }
        if samples.len() > MAX_SAMPLES {
            let thinned: Vec<_> = samples.iter().copied().step_by(2).collect();
            *samples = thinned;
        }
    }

    /// Drops the samples after now: a step taken or undone changed what follows.
    pub(crate) fn forget_samples_after_now(&self) {
        let now = self.sim.borrow().now();
        self.samples.borrow_mut().retain(|(t, _)| *t <= now);
    }

    /// Finds what happens next in the running simulation (after the run moved).
    pub(crate) fn find_next(&mut self) {
        self.next_event = self.sim.borrow().next_event();
    }

    pub(crate) fn next(&self) -> Self {
        let mut s = self.clone();
        s.version += 1;
        s
    }
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
            scenario.timeline.len() != sim.scenario().timeline.len() || *at != sim.now()
        })
    }

    /// The current part (None when the lesson is finished).
    pub fn part(&self) -> Option<&Part> {
        self.lesson.parts.get(self.part)
    }

    /// On to the next part (an explanation's or a prediction's end counts as progress). A
    /// closing explanation counts once it shows: read, the lesson is finished, and the track
    /// says so even if the learner leaves without pressing on.
    pub fn advance(&mut self) {
        let part = self.part + 1;
        let closing = part + 1 == self.lesson.parts.len()
            && self.lesson.parts[part].kind() == Some(sbp_scenario::lesson::PartKind::Explain);
        *self = LessonRun {
            part,
            done: self.done.max(if closing { part + 1 } else { part }),
            ..LessonRun::new(self.lesson.clone())
        };
    }
}

/// The control sections, shown as tabs (a lesson shows only those it names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Send,
    Receive,
    Faults,
    Traffic,
    Entities,
}

impl Tab {
    /// In order.
    pub const ALL: [Tab; 5] = [
        Tab::Send,
        Tab::Receive,
        Tab::Faults,
        Tab::Traffic,
        Tab::Entities,
    ];

    /// Its name in a lesson's `controls`, in element ids (`tab-send`) and catalog keys.
    pub fn id(self) -> &'static str {
        match self {
            Tab::Send => "send",
            Tab::Receive => "receive",
            Tab::Faults => "faults",
            Tab::Traffic => "traffic",
            Tab::Entities => "entities",
        }
    }

    pub fn from_id(id: &str) -> Option<Tab> {
        Tab::ALL.into_iter().find(|t| t.id() == id)
    }
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

/// A click that dispatches `action()`: one closure type for every such button (one copy in the
/// wasm).
#[inline(never)]
pub fn on_click(
    store: &crate::state::StateHandle,
    action: fn() -> crate::state::Action,
) -> yew::Callback<web_sys::MouseEvent> {
    let store = store.clone();
    yew::Callback::from(move |_: yew::MouseEvent| store.dispatch(action()))
}
