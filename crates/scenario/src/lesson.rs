//! Lessons: a start scenario and a sequence of parts, each an explanation, a prediction or a
//! goal. Data (`web/lessons/<id>.json`, fetched by the browser), in every language the
//! playground speaks. The correct answer of a prediction is never written in the lesson: it is
//! computed by running a copy of the simulation forward ([`Question::answer`]). A goal is an
//! [`Expectation`] checked live against the state ([`Simulation::unmet`]).
use crate::dur::Dur;
use crate::model::{Expectation, ViewDef};
use crate::run::Simulation;
use crate::step::Step;
use crate::{at_field, Scenario, Text};
use sbp_engine::limits::MAX_OPEN_WORK;
use sbp_engine::text;
use sbp_engine::time::{format_duration, format_instant, parse_duration, Instant, DAY, MAX_VALUE};
use sbp_engine::{EventKind, Perspective};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// A text in each language (`{"en": "...", "de": "..."}`).
pub type Texts = BTreeMap<String, String>;

/// The text in `lang`, else in English, else "".
pub fn text<'a>(texts: &'a Texts, lang: &str) -> &'a str {
    texts
        .get(lang)
        .or_else(|| texts.get("en"))
        .map_or("", String::as_str)
}

/// How far (simulated) a prediction looks ahead for its answer, and a goal's solution may run,
/// and how much work (timers fired) each may do.
pub const HORIZON: Instant = DAY;
const WORK: usize = 200_000;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lesson {
    pub id: String,
    pub title: Texts,
    /// The control sections the lesson shows: `send`, `receive`, `faults`, `traffic`,
    /// `entities` (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controls: Vec<String>,
    pub scenario: Scenario,
    pub parts: Vec<Part>,
}

/// One part: exactly one of `explain`, `predict` or `do`, with what that kind needs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Part {
    /// A short text; may highlight something on the page (a CSS selector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<Texts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highlight: Option<String>,
    /// A question about what happens next; `ask` says what is asked, `choices` offers answers
    /// (without them the learner types one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predict: Option<Texts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<Question>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// A goal reached by acting in the UI, checked live; hints on request; `solution` is what
    /// "show me" plays (its steps' `at` count from when it is pressed).
    #[serde(default, rename = "do", skip_serializing_if = "Option::is_none")]
    pub goal_text: Option<Texts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<Expectation>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<Texts>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub solution: Vec<Step>,
}

/// What kind a part is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    Explain,
    Predict,
    Do,
}

impl Part {
    pub fn kind(&self) -> Option<PartKind> {
        match (&self.explain, &self.predict, &self.goal_text) {
            (Some(_), None, None) => Some(PartKind::Explain),
            (None, Some(_), None) => Some(PartKind::Predict),
            (None, None, Some(_)) => Some(PartKind::Do),
            _ => None,
        }
    }

    /// The part's text in `lang`.
    pub fn text(&self, lang: &str) -> &str {
        self.explain
            .as_ref()
            .or(self.predict.as_ref())
            .or(self.goal_text.as_ref())
            .map_or("", |t| text(t, lang))
    }
}

/// What a prediction asks about a message (`entity`: where it is, `seq`: its SequenceNumber).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Question {
    /// At what instant does `event` (an event kind: `DeadLettered`, `ExpiredDropped`,
    /// `Requeued`...) happen to it? Answered as a duration from the start ("40s") or "never".
    InstantOf {
        event: String,
        entity: String,
        seq: u64,
    },
    /// What does `property` (an SDK name: `DeliveryCount`, `DeadLetterReason`, `ExpiresAt`...)
    /// show right after `event` (without one: now), as peek shows it or (`"view": "receive"`)
    /// as a locked receive does? Times are answered as durations from the start, or "MaxValue".
    Property {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event: Option<String>,
        entity: String,
        seq: u64,
        property: String,
        #[serde(default, skip_serializing_if = "is_peek")]
        view: ViewDef,
    },
    /// Which of `events` happens to it first? ("none" if none does.)
    FirstOf {
        events: Vec<String>,
        entity: String,
        seq: u64,
    },
}

/// The true outcome: the answer in words and the instant it happened (None: it did not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub value: String,
    pub at: Option<Instant>,
}

impl Question {
    /// The message asked about: its entity and SequenceNumber.
    pub fn target(&self) -> (&str, u64) {
        match self {
            Question::InstantOf { entity, seq, .. }
            | Question::Property { entity, seq, .. }
            | Question::FirstOf { entity, seq, .. } => (entity, *seq),
        }
    }

    fn wants(&self, kind: &EventKind) -> bool {
        match self {
            Question::InstantOf { event, .. } => kind.name() == event,
            Question::Property { event, .. } => event.as_deref() == Some(kind.name()),
            Question::FirstOf { events, .. } => events.iter().any(|e| e == kind.name()),
        }
    }

    /// Runs a copy of `sim` forward (at most [`HORIZON`] and a bounded amount of work) until the
    /// asked event happens to the message; `sim` itself does not change (the copy is a rewind
    /// checkpoint's, which the browser has anyway).
    pub fn answer(&self, sim: &mut Simulation) -> Answer {
        if let Question::Property {
            event: None,
            entity,
            seq,
            property,
            view,
        } = self
        {
            return Answer {
                value: property_now(sim, entity, *seq, property, *view),
                at: None,
            };
        }
        let mut run = sim.snapshot(0);
        run.scenario = sim.scenario.clone();
        let (entity, seq) = self.target();
        let entity = entity.strip_suffix("/$deadletterqueue").unwrap_or(entity);
        let until = sim.now().saturating_add(HORIZON);
        let mut budget = WORK;
        let mut seen = run.ns.events_logged();
        loop {
            let next = run.next_due().filter(|&t| t <= until);
            let Some(next) = next else {
                return self.unanswered();
            };
            if !run.advance_within(next, &mut budget) && budget == 0 {
                return self.unanswered();
            }
            let found = run
                .ns
                .events_since(seen)
                .0
                .iter()
                .find(|e| {
                    e.seq == seq && run.ns.entity_name(e.entity) == entity && self.wants(&e.kind)
                })
                .cloned();
            if let Some(e) = found {
                let value = match self {
                    Question::InstantOf { .. } => {
                        format_instant(e.at).trim_start_matches("t=").to_string()
                    }
                    Question::FirstOf { .. } => e.kind.name().to_string(),
                    Question::Property { property, view, .. } => {
                        property_now(&run, &run.ns.event_path(&e), seq, property, *view)
                    }
                };
                return Answer {
                    value,
                    at: Some(e.at),
                };
            }
            seen = run.ns.events_logged();
        }
    }

    fn unanswered(&self) -> Answer {
        Answer {
            value: match self {
                Question::InstantOf { .. } => "never".into(),
                _ => "none".into(),
            },
            at: None,
        }
    }

    /// Whether `given` (what the learner chose or typed) is the answer: times compared as
    /// durations ("1m" = "60s" = "t=1m"), anything else as words, case and spaces aside.
    /// Whether `given` can be an answer at all: something typed, and for an instant an instant
    /// ("40s", "t=40s") or "never". One that cannot is refused before it uses the question up.
    pub fn reads(&self, given: &str) -> bool {
        let given = given.trim();
        match self {
            _ if given.is_empty() => false,
            Question::InstantOf { .. } => {
                given.eq_ignore_ascii_case("never")
                    || parse_duration(given.trim_start_matches("t=")).is_ok()
            }
            _ => true,
        }
    }

    pub fn is_right(&self, answer: &Answer, given: &str) -> bool {
        let given = given.trim();
        let time = |s: &str| parse_duration(s.trim().trim_start_matches("t=")).ok();
        if let (Some(a), Some(b)) = (time(given), time(&answer.value)) {
            return a == b;
        }
        given.eq_ignore_ascii_case(answer.value.trim())
    }
}

/// The longest lesson id.
pub const MAX_ID: usize = 64;

/// A lesson id is a slug: 1 to [`MAX_ID`] of `a-z`, `0-9` and `-`, starting with a letter or
/// digit. It lands in URLs, an embed snippet's attribute and local storage, so nothing in it
/// needs escaping anywhere.
pub fn is_slug(id: &str) -> bool {
    let b = id.as_bytes();
    (1..=MAX_ID).contains(&b.len())
        && b[0] != b'-'
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// The longest `highlight` selector.
pub const MAX_SELECTOR: usize = 200;

impl Lesson {
    /// Reads a lesson file. The lesson's own fields are read from a JSON value (the browser's
    /// wasm has that reader already); its scenario, goals and solutions by the scenario format's
    /// own readers, so they mean exactly what they mean in a scenario file.
    pub fn from_json(text: &str) -> Result<Lesson, Text> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| text!("l-json", message = e.to_string()))?;
        Lesson::from_value(&v)
    }

    /// A lesson from a JSON value already read (`sbp check` reads a file once to tell a lesson
    /// from a scenario).
    pub fn from_value(v: &Value) -> Result<Lesson, Text> {
        let o = fields(
            v,
            "the lesson",
            &["id", "title", "controls", "scenario", "parts"],
        )?;
        let id = o
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| text!("l-missing", field = "id"))?
            .to_string();
        if !is_slug(&id) {
            return Err(text!("l-id", max = MAX_ID));
        }
        let scenario = o
            .get("scenario")
            .ok_or_else(|| text!("l-missing", field = "scenario"))?;
        let mut lesson = Lesson {
            id,
            title: texts(o.get("title"), "title")?,
            controls: strings(o.get("controls"), "controls")?,
            scenario: Scenario::from_json(&scenario.to_string())
                .map_err(|e| at_field("scenario", e.text()))?,
            parts: Vec::new(),
        };
        // Loops, not `collect` into a Result: one copy of the code in the browser's wasm.
        let parts = o
            .get("parts")
            .and_then(Value::as_array)
            .ok_or_else(|| text!("l-missing", field = "parts"))?;
        for (i, p) in parts.iter().enumerate() {
            lesson
                .parts
                .push(part(p).map_err(|e| at_field(format!("parts[{i}]"), e))?);
        }
        lesson.validate()?;
        Ok(lesson)
    }

    /// What serde cannot check: each part is one kind with what that kind needs; every text is
    /// in English at least; and the work the lesson can ask for (its scenario with every
    /// solution played, as "Show me" plays them, and [`HORIZON`] beyond, as far as an answer
    /// looks) stays within a link's budget, the limit named.
    pub fn validate(&self) -> Result<(), Text> {
        self.scenario.validate().map_err(|e| e.text())?;
        // Solutions count from when they are played; appended after the timeline, the estimate
        // errs on the high side (a producer runs to the end).
        let mut all = self.scenario.clone();
        for part in &self.parts {
            all.timeline.extend(part.solution.iter().cloned());
        }
        let end = all.timeline.iter().map(|s| s.at.ms()).max().unwrap_or(0);
        let work = all.work_until(end.saturating_add(HORIZON));
        if work > MAX_OPEN_WORK {
            return Err(text!("l-work", work = work, max = MAX_OPEN_WORK));
        }
        if self.parts.is_empty() {
            return Err(text!("l-no-parts"));
        }
        for (i, part) in self.parts.iter().enumerate() {
            let at = |key: &'static str| Err(at_field(format!("parts[{i}]"), Text::new(key)));
            match part.kind() {
                None => return at("l-part-kind"),
                Some(PartKind::Predict) if part.ask.is_none() => return at("l-no-ask"),
                Some(PartKind::Do) if part.goal.is_none() || part.solution.is_empty() => {
                    return at("l-no-goal")
                }
                _ => {}
            }
            if part.text("en").is_empty() {
                return at("l-english");
            }
            // A selector, and nothing that could end a style rule (the browser outlines what it
            // matches with one).
            if part.highlight.as_deref().is_some_and(|s| {
                s.len() > MAX_SELECTOR || s.contains(['{', '}', ';', '<', '@', '\\', '/'])
            }) {
                return at("l-highlight");
            }
        }
        Ok(())
    }

    /// Plays the lesson as a learner who always succeeds: each prediction's answer is computed
    /// and the clock moves to it; each goal's solution is played until the goal holds (at most
    /// [`HORIZON`] after it starts). Returns the answers, or what went wrong.
    pub fn check(&self) -> Result<Vec<Answer>, Text> {
        let sim = Simulation::new(&self.scenario).map_err(|e| e.text())?;
        self.check_from(sim, 0)
    }

    /// As [`Lesson::check`], from part `first` on, with the run as `sim` has it (a learner's
    /// own actions before it, say): each later prediction's answer among its choices, each
    /// goal reached by its solution.
    pub fn check_from(&self, mut sim: Simulation, first: usize) -> Result<Vec<Answer>, Text> {
        let mut answers = Vec::new();
        for (i, part) in self.parts.iter().enumerate().skip(first) {
            match part.kind() {
                Some(PartKind::Predict) => {
                    let Some(q) = &part.ask else { continue };
                    let answer = q.answer(&mut sim);
                    if !part.choices.is_empty()
                        && !part.choices.iter().any(|c| q.is_right(&answer, c))
                    {
                        return Err(at_field(
                            format!("parts[{i}]"),
                            text!("l-answer-not-a-choice", answer = &answer.value),
                        ));
                    }
                    if let Some(at) = answer.at {
                        sim.advance_to(at);
                    }
                    answers.push(answer);
                }
                Some(PartKind::Do) => {
                    let Some(goal) = &part.goal else { continue };
                    if sim.unmet(goal).is_empty() {
                        return Err(at_field(format!("parts[{i}]"), text!("l-goal-holds")));
                    }
                    play_until_met(&mut sim, goal, &part.solution)
                        .map_err(|m| at_field(format!("parts[{i}]"), m))?;
                }
                _ => {}
            }
        }
        if !sim.failures.is_empty() {
            return Err(sim.failures.swap_remove(0));
        }
        Ok(answers)
    }
}

/// Plays `steps` from now (as "show me" does) and runs on until `goal` holds: within a day and
/// the work a check may take, or says what of it is unmet then.
pub fn play_until_met(
    sim: &mut Simulation,
    goal: &Expectation,
    steps: &[Step],
) -> Result<(), Text> {
    play_solution(sim, steps)?;
    let until = sim.now().saturating_add(HORIZON);
    let mut budget = WORK;
    while !sim.unmet(goal).is_empty() {
        match sim.next_due().filter(|&t| t <= until) {
            Some(t) if sim.advance_within(t, &mut budget) || budget > 0 => {}
            _ => {
                return Err(text!(
                    "l-goal-unreached",
                    work = WORK,
                    unmet = sbp_engine::text::optional(sim.unmet(goal).into_iter().next())
                ))
            }
        }
    }
    Ok(())
}

/// What `property` of message `seq` in `path` shows now ("-" if it is not there).
fn property_now(sim: &Simulation, path: &str, seq: u64, property: &str, view: ViewDef) -> String {
    let perspective = match view {
        ViewDef::Peek => Perspective::Peek,
        ViewDef::Receive => Perspective::Receive,
    };
    let view = sim
        .ns
        .message(path, seq, perspective)
        .and_then(|v| serde_json::to_value(v).ok())
        .unwrap_or_default();
    property_text(property, &view[property])
}

/// A property's value in words: times as durations from the start ("MaxValue" for never).
fn property_text(name: &str, value: &serde_json::Value) -> String {
    const TIMES: [&str; 5] = [
        "ExpiresAt",
        "EnqueuedTime",
        "LockedUntil",
        "ScheduledEnqueueTime",
        "TimeToLive",
    ];
    match value {
        serde_json::Value::Number(n) if TIMES.contains(&name) => match n.as_i64() {
            Some(ms) if ms >= MAX_VALUE => "MaxValue".into(),
            Some(ms) => format_duration(ms),
            None => n.to_string(),
        },
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".into(),
        other => other.to_string(),
    }
}

fn is_peek(view: &ViewDef) -> bool {
    *view == ViewDef::Peek
}

/// `v` as an object with only the `known` keys.
fn fields<'a>(
    v: &'a Value,
    what: &str,
    known: &[&str],
) -> Result<&'a serde_json::Map<String, Value>, Text> {
    let o = v
        .as_object()
        .ok_or_else(|| text!("l-not-object", field = what))?;
    match o.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => Err(text!(
            "l-unknown-field",
            field = what,
            unknown = unknown,
            known = known.join(", ")
        )),
        None => Ok(o),
    }
}

/// `{"en": "...", ...}` (absent: empty), inserted one by one (a `collect` would add a sort to
/// the browser's wasm). The lesson files and the track's `index.json` are read by it.
pub fn texts(v: Option<&Value>, what: &str) -> Result<Texts, Text> {
    let mut out = Texts::new();
    let Some(v) = v else { return Ok(out) };
    let o = v
        .as_object()
        .ok_or_else(|| text!("l-not-texts", field = what))?;
    for (lang, text) in o {
        let text = text
            .as_str()
            .ok_or_else(|| text!("l-not-text", field = format!("{what}.{lang}")))?;
        out.insert(lang.clone(), text.to_string());
    }
    Ok(out)
}

/// A list of texts (absent: empty).
fn strings(v: Option<&Value>, what: &str) -> Result<Vec<String>, Text> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for s in v
        .as_array()
        .ok_or_else(|| text!("l-not-list", field = what))?
    {
        out.push(
            s.as_str()
                .map(String::from)
                .ok_or_else(|| text!("l-not-text", field = what))?,
        );
    }
    Ok(out)
}

fn part(v: &Value) -> Result<Part, Text> {
    let o = fields(
        v,
        "parts[]",
        &[
            "explain",
            "highlight",
            "predict",
            "ask",
            "choices",
            "do",
            "goal",
            "hints",
            "solution",
        ],
    )?;
    let optional_texts = |key: &str| o.get(key).map(|t| texts(Some(t), key)).transpose();
    Ok(Part {
        explain: optional_texts("explain")?,
        highlight: o.get("highlight").and_then(Value::as_str).map(String::from),
        predict: optional_texts("predict")?,
        ask: o.get("ask").map(question).transpose()?,
        choices: strings(o.get("choices"), "choices")?,
        goal_text: optional_texts("do")?,
        goal: o
            .get("goal")
            .map(|g| {
                serde_json::from_str::<Expectation>(&g.to_string())
                    .map_err(|e| at_field("goal", text!("l-json", message = e.to_string())))
            })
            .transpose()?,
        hints: {
            let mut hints = Vec::new();
            for h in o
                .get("hints")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                hints.push(texts(Some(h), "hints[]")?);
            }
            hints
        },
        solution: match o.get("solution") {
            Some(steps) => serde_json::from_str::<Vec<Step>>(&steps.to_string())
                .map_err(|e| at_field("solution", text!("l-json", message = e.to_string())))?,
            None => Vec::new(),
        },
    })
}

fn question(v: &Value) -> Result<Question, Text> {
    let o = fields(v, "ask", &["instant_of", "property", "first_of"])?;
    let (kind, q) = o
        .iter()
        .next()
        .filter(|_| o.len() == 1)
        .ok_or_else(|| text!("l-ask"))?;
    let q = fields(
        q,
        kind,
        &["event", "entity", "seq", "property", "view", "events"],
    )?;
    let text = |key: &str| {
        q.get(key)
            .and_then(Value::as_str)
            .map(String::from)
            .ok_or_else(|| at_field(kind.as_str(), text!("l-missing", field = key)))
    };
    let entity = text("entity")?;
    let seq = q
        .get("seq")
        .and_then(Value::as_u64)
        .ok_or_else(|| at_field(kind.as_str(), text!("l-missing", field = "seq")))?;
    Ok(match kind.as_str() {
        "instant_of" => Question::InstantOf {
            event: text("event")?,
            entity,
            seq,
        },
        "property" => Question::Property {
            event: q.get("event").and_then(Value::as_str).map(String::from),
            entity,
            seq,
            property: text("property")?,
            view: match q.get("view").and_then(Value::as_str) {
                None | Some("peek") => ViewDef::Peek,
                Some("receive") => ViewDef::Receive,
                Some(other) => return Err(text!("l-view", view = other)),
            },
        },
        _ => Question::FirstOf {
            events: strings(q.get("events"), "events")?,
            entity,
            seq,
        },
    })
}

/// Schedules a solution's steps from now (each step's `at` counts from now).
pub fn play_solution(sim: &mut Simulation, steps: &[Step]) -> Result<(), Text> {
    let now = sim.now();
    for step in steps {
        let mut step = step.clone();
        let at = now.saturating_add(step.at.ms());
        step.at = Dur(0);
        sim.schedule_step(step, at).map_err(|e| e.message)?;
    }
    Ok(())
}

impl Simulation {
    /// What of `goal` does not hold now, in words (empty: it holds), each without the "expect
    /// at" a scenario's failure begins with (a goal is always now). Checking only reads.
    pub fn unmet(&self, goal: &Expectation) -> Vec<Text> {
        let mut unmet = Vec::new();
        self.failures_of(None, goal, &mut unmet);
        unmet
    }
}
