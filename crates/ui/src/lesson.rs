//! Lessons in the browser: the list (`lessons/index.json`), a lesson's parts one at a time
//! (explain, predict, do), progress in local storage, and the first screen. The lessons are data
//! (`web/lessons/*.json`, fetched); what a part checks and answers is `sbp_scenario::lesson`'s.
use crate::browser::LoadError;
use crate::i18n::{lang, t, tf};
use crate::state::{Action, LessonRun, StateHandle, StateProps};
use sbp_scenario::lesson::{text, Lesson, PartKind, Question};
use std::rc::Rc;
use yew::prelude::*;

/// Progress in local storage: a JSON object of lesson id to parts done (`{"ttl-basics": 3}`).
const PROGRESS_KEY: &str = "sbp.lessons.v2";

/// The earlier form, `id=n;id=n`: read once when there is no JSON yet (slug ids only).
const OLD_PROGRESS_KEY: &str = "sbp.lessons.v1";

/// The progress kept in local storage (an empty map if none, or if it does not read).
fn stored_progress() -> serde_json::Map<String, serde_json::Value> {
    let storage = crate::browser::storage();
    let item = |key| {
        storage
            .as_ref()
            .and_then(|s| s.get_item(key).ok().flatten())
    };
    if let Some(text) = item(PROGRESS_KEY) {
        return serde_json::from_str(&text).unwrap_or_default();
    }
    let mut all = serde_json::Map::new();
    for (id, n) in item(OLD_PROGRESS_KEY)
        .unwrap_or_default()
        .split(';')
        .filter_map(|entry| entry.split_once('='))
    {
        if let (true, Ok(n)) = (sbp_scenario::lesson::is_slug(id), n.parse::<u64>()) {
            all.insert(id.to_string(), n.into());
        }
    }
    all
}

/// How many parts of lesson `id` the stored progress `all` says were done.
fn parts_done(all: &serde_json::Map<String, serde_json::Value>, id: &str) -> usize {
    all.get(id)
        .and_then(serde_json::Value::as_u64)
        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// Remembers that `done` parts of lesson `id` are done (never fewer than before).
pub fn save_progress(id: &str, done: usize) {
    let Some(s) = crate::browser::storage() else {
        return;
    };
    let mut all = stored_progress();
    if parts_done(&all, id) >= done {
        return;
    }
    all.insert(id.to_string(), (done as u64).into());
    let _ = s.set_item(PROGRESS_KEY, &serde_json::Value::Object(all).to_string());
}

/// A lesson of the track: its id, title per language and number of parts.
#[derive(Clone, PartialEq)]
pub struct Listed {
    pub id: String,
    pub title: sbp_scenario::lesson::Texts,
    pub parts: usize,
}

thread_local! {
    static TRACK: std::cell::RefCell<Rc<Vec<Listed>>> = std::cell::RefCell::default();
}

/// The track, as read before the first render (empty if that failed).
pub fn track() -> Rc<Vec<Listed>> {
    TRACK.with(|t| t.borrow().clone())
}

/// Reads `lessons/index.json` (the track, in order), from the page where it carries it, else
/// fetched, then calls `done`.
pub fn load_index(done: Box<dyn FnOnce()>) {
    let url = format!("{}lessons/index.json", crate::i18n::base());
    crate::browser::carried_or_fetched("lessons-index", &url, move |text| {
        let value: serde_json::Value = text
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let listed = value["lessons"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|l| {
                        let id = l["id"].as_str()?;
                        Some(Listed {
                            // A slug, as a lesson file's id must be (an entry with another id
                            // is left out: its id would land in URLs and attributes).
                            id: sbp_scenario::lesson::is_slug(id).then(|| id.to_string())?,
                            title: sbp_scenario::lesson::texts(Some(&l["title"]), "title").ok()?,
                            parts: l["parts"].as_u64().unwrap_or(0) as usize,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        TRACK.with(|t| *t.borrow_mut() = Rc::new(listed));
        done();
    });
}

/// Who opened a lesson: the page's address (the focus stays where the browser put it: an
/// embedded lesson must not pull its host page's scroll), or the reader, on a button (the
/// focus goes to the lesson's first part, WCAG 2.4.3).
#[derive(Clone, Copy, PartialEq)]
pub enum Opener {
    Page,
    Reader,
}

/// Where the keyboard's focus goes when a part of a lesson begins: the part's heading (or,
/// once the lesson is finished, what it says then).
const PART_FOCUS: [&str; 2] = ["#lesson-complete", "#lesson-step"];

/// Puts the focus on the part that begins (after Next, Restart, Start this part again).
fn focus_part() {
    crate::browser::focus_soon(PART_FOCUS.iter().map(|s| s.to_string()).collect());
}

/// A lesson link's lesson (its JSON, packed as a scenario link's is), started.
pub fn open_payload(store: &StateHandle, payload: &str) {
    let json = sbp_scenario::link::decode_payload(payload).map_err(LoadError::Scenario);
    begin(store, "#lesson", json, Opener::Page);
}

/// A workshop's lessons in order (`?lessons=a,b,c`), or none.
pub fn chain() -> Vec<String> {
    crate::browser::query_value("lessons")
        .map(|l| {
            l.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// A message's property that a prediction asks about, kept off the screen until the learner
/// answers (the card, the inspector and the log would show the answer).
#[derive(Clone, PartialEq)]
pub struct Masked {
    /// The entity (a DLQ's path too) and SequenceNumber of the message asked about.
    pub path: String,
    pub seq: u64,
    pub property: String,
}

impl Masked {
    /// Whether `path`'s #`seq` is the message asked about (its entity's DLQ counts as the
    /// entity: a message keeps its number there).
    pub fn message(&self, path: &str, seq: u64) -> bool {
        use sbp_engine::namespace::split_queue_path;
        seq == self.seq && split_queue_path(path).0 == split_queue_path(&self.path).0
    }

    /// Whether `property` of `path`'s #`seq` is hidden.
    pub fn hides(&self, path: &str, seq: u64, property: &str) -> bool {
        property == self.property && self.message(path, seq)
    }
}

/// What the current prediction asks about a message's property, while it awaits its answer.
pub fn masked(store: &StateHandle) -> Option<Masked> {
    let run = store.lesson.as_deref()?;
    if run.given.is_some() {
        return None;
    }
    match run.part()?.ask.as_ref()? {
        Question::Property {
            entity,
            seq,
            property,
            ..
        } => Some(Masked {
            path: entity.clone(),
            seq: *seq,
            property: property.clone(),
        }),
        _ => None,
    }
}

/// In workshop mode, a prediction not answered yet shows alone (the reveal brings the rest).
pub fn question_alone(store: &StateHandle) -> bool {
    store.lesson.as_deref().is_some_and(|run| {
        run.given.is_none()
            && run.part().and_then(|p| p.kind()) == Some(PartKind::Predict)
            && crate::browser::query_flag("workshop")
    })
}

/// Fetches and starts lesson `id`.
pub fn start(store: &StateHandle, id: &str, opener: Opener) {
    if !sbp_scenario::lesson::is_slug(id) {
        return store.dispatch(Action::Error(tf("no-lesson", &[("id", id)])));
    }
    let store = store.clone();
    let id = id.to_string();
    crate::browser::fetch_text(&format!("lessons/{id}.json"), move |text| {
        begin(&store, &id, text.map_err(LoadError::from), opener)
    });
}

/// Reads a lesson's JSON and starts it, or says why it cannot (one place for every way a
/// lesson arrives: fetched by id, or carried by a link).
fn begin(store: &StateHandle, id: &str, json: Result<String, LoadError>, opener: Opener) {
    match json.and_then(|t| Lesson::from_json(&t).map_err(LoadError::Lesson)) {
        Ok(mut lesson) => {
            // The run is named by the lesson's title in the reader's language (the menu shows
            // it), not by its scenario's English name.
            lesson.scenario.name = text(&lesson.title, lang()).to_string();
            store.dispatch(Action::StartLesson(Rc::new(lesson)));
            if opener == Opener::Reader {
                focus_part();
            }
        }
        Err(e) => store.dispatch(Action::Error(tf(
            "lesson-broken",
            &[("id", id), ("error", &e.to_string())],
        ))),
    }
}

/// The track: each lesson with its progress, a click starts it.
pub fn lesson_list(store: &StateHandle) -> Html {
    let listed = track();
    let lang = lang();
    // Storage read once for the whole list.
    let progress = stored_progress();
    html! {
        // Not numbered by the list: each title carries its number ("1. ...": read "1. 1.").
        <ul class="lesson-list" id="lesson-list">
            { for listed.iter().map(|l| {
                let store = store.clone();
                let id = l.id.clone();
                let onclick = Callback::from(move |_: MouseEvent| start(&store, &id, Opener::Reader));
                let done = parts_done(&progress, &l.id).min(l.parts);
                html! {
                    <li>
                        <button class={classes!("lesson-item", (l.parts > 0 && done == l.parts).then_some("done"))} data-lesson={l.id.clone()} {onclick}>
                            {text(&l.title, lang).to_string()}
                        </button>
                        if l.parts > 0 && done == l.parts {
                            <span class="progress i i-check" role="img" aria-label={t("lesson-finished")}></span>
                        } else {
                            <span class="progress"><span aria-hidden="true">{format!("{done}/{}", l.parts)}</span>
                                <span class="visually-hidden">{tf("lesson-progress", &[("done", &done.to_string()), ("total", &l.parts.to_string())])}</span></span>
                        }
                    </li>
                }
            }) }
        </ul>
    }
}

/// The first screen: what this is, the first lesson, the sandbox, the presets.
pub fn welcome(store: &StateHandle) -> Html {
    let store = store.clone();
    let first = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(first) = track().first() {
                start(&store, &first.id, Opener::Reader);
            }
        })
    };
    let sandbox = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| {
            store.dispatch(Action::CloseWelcome);
            // On to the controls, not back to the top of the page.
            crate::browser::focus_soon(vec!["[role=tab][aria-selected=true]".into()]);
        })
    };
    html! {
        <section class="welcome" id="welcome" aria-label={t("welcome-title")}>
            <h2 id="welcome-title" tabindex="-1">{t("welcome-title")}</h2>
            <p>{t("welcome-what")}</p>
            <div class="row wrap">
                <button class="primary big" id="start-first-lesson" onclick={first}>{t("start-first-lesson")}</button>
                <button class="big" id="open-sandbox" onclick={sandbox}>{t("open-sandbox")}</button>
            </div>
            <h3>{t("lessons")}</h3>
            {lesson_list(&store)}
            <p class="hint">{t("welcome-presets")}</p>
        </section>
    }
}

/// The lesson being taken: the current part with what it needs, and the way on.
#[function_component(LessonPanel)]
pub fn lesson_panel(props: &StateProps) -> Html {
    let store = &props.store;
    let typed = use_node_ref();
    // A typed answer that cannot be one (empty, not an instant): why, next to the field.
    let refused = use_state(|| None::<String>);
    {
        let refused = refused.clone();
        use_effect_with(store.lesson.as_ref().map(|run| run.part), move |_| {
            refused.set(None)
        });
    }
    let Some(run) = store.lesson.clone() else {
        return html! {};
    };
    let lang = lang();
    let d = |a: fn() -> Action| crate::state::on_click(store, a);
    let restart = {
        let store = store.clone();
        let lesson = run.lesson.clone();
        Callback::from(move |_: MouseEvent| {
            store.dispatch(Action::StartLesson(lesson.clone()));
            focus_part();
        })
    };
    let total = run.lesson.parts.len();
    let header = html! {
        <header class="lesson-head">
            <h2 id="lesson-title">{text(&run.lesson.title, lang).to_string()}</h2>
            // Where the focus goes when a part begins.
            <h3 class="lesson-step" id="lesson-step" tabindex="-1">{tf("lesson-part", &[("part", &(run.part + 1).min(total).to_string()), ("total", &total.to_string())])}</h3>
            <div class="row wrap">
                <button id="lesson-undo" class="i i-undo" onclick={d(|| Action::Undo)}>{t("undo")}</button>
                <button id="lesson-restart" onclick={restart}>{t("lesson-restart")}</button>
                <button id="lesson-exit" onclick={then_focus(store, || Action::LessonExit, &["#main"])}>{t("lesson-exit")}</button>
            </div>
        </header>
    };
    let Some(part) = run.part() else {
        // In a workshop, on to the next lesson of its chain; else the track.
        let chain = chain();
        let next = chain
            .iter()
            .position(|id| *id == run.lesson.id)
            .and_then(|i| chain.get(i + 1))
            .cloned();
        let after = match next {
            Some(id) => {
                let store = store.clone();
                let onclick =
                    Callback::from(move |_: MouseEvent| start(&store, &id, Opener::Reader));
                html! { <button class="primary big ia i-forward" id="next-lesson" {onclick}>{t("next-lesson")}</button> }
            }
            None => lesson_list(store),
        };
        return html! {
            <section class="lesson" id="lesson">
                {header}
                <p class="lesson-done" id="lesson-complete" tabindex="-1">{t("lesson-complete")}</p>
                {after}
            </section>
        };
    };
    let next = html! { <button class="primary ia i-forward" id="lesson-next" onclick={then_focus(store, || Action::LessonNext, &PART_FOCUS)}>{t("lesson-next")}</button> };
    let body = match part.kind() {
        Some(PartKind::Predict) => predict(store, &run, &typed, &refused, next),
        Some(PartKind::Do) => goal(store, &run, lang, next),
        _ => next,
    };
    // A part may point at something on the page (a lane, a control, an edge of the map): a
    // style rule outlines what the selector matches while the part shows, so what is drawn
    // again (the map) stays outlined. The lesson reader allows no character that could end the
    // rule (`{`, `}`, `;`...), and Yew writes it as text.
    // The focus ring stays visible on what is outlined (WCAG 2.4.7): the outline steps out
    // and the ring is drawn inside it.
    let outline = part.highlight.as_deref().map(|s| {
        format!(":is({s}){{outline:3px solid #e08a00;outline-offset:2px}}:is({s}):focus-visible{{outline:3px solid #7fb3ff;outline-offset:1px;box-shadow:0 0 0 4px #fff,0 0 0 7px #e08a00}}:is({s}) line{{stroke:#e08a00!important;stroke-width:6px!important}}@media (forced-colors:active){{:is({s}){{outline-style:dashed}}:is({s}):focus-visible{{outline-style:solid}}}}")
    });
    html! {
        <section class={classes!("lesson", part.kind().map(kind_class))} id="lesson">
            if let Some(rule) = outline { <style>{rule}</style> }
            {header}
            <p class="lesson-text" id="lesson-text">{part.text(lang).to_string()}</p>
            {body}
        </section>
    }
}

/// A click that dispatches `action()`, then puts the focus on the first of `focus` the page
/// shows (the button clicked may be gone: the focus would fall to the page's top, WCAG 2.4.3).
fn then_focus(
    store: &StateHandle,
    action: fn() -> Action,
    focus: &'static [&'static str],
) -> Callback<MouseEvent> {
    let store = store.clone();
    Callback::from(move |_: MouseEvent| {
        store.dispatch(action());
        crate::browser::focus_soon(focus.iter().map(|s| s.to_string()).collect());
    })
}

fn kind_class(kind: PartKind) -> &'static str {
    match kind {
        PartKind::Explain => "explain",
        PartKind::Predict => "predict",
        PartKind::Do => "do",
    }
}

/// Where the focus goes once a prediction is answered: the outcome.
const REVEAL: &str = "#predict-reveal";

/// A prediction: choices (or a typed value), then the true outcome next to it.
fn predict(
    store: &StateHandle,
    run: &LessonRun,
    typed: &NodeRef,
    refused: &UseStateHandle<Option<String>>,
    next: Html,
) -> Html {
    let Some(part) = run.part() else {
        return next;
    };
    if let (Some(given), Some(answer), Some(right)) = (&run.given, &run.answer, run.right) {
        let at = answer
            .at
            .map(|at| {
                tf(
                    "predict-at",
                    &[("at", &sbp_engine::time::format_instant(at))],
                )
            })
            .unwrap_or_default();
        // Without an instant the answer is "never" or "none": said in the reader's words.
        // (A property's value, such as TTLExpiredException, is said as it is.)
        let value = match answer.at {
            None => in_readers_words(&answer.value),
            Some(_) => answer.value.clone(),
        };
        let given = &in_readers_words(given);
        // The outcome happened on the clock: the learner can watch it happen.
        // The focus goes to what it shows: the lane of the message asked about.
        let lane = part.ask.as_ref().map(|q| {
            sbp_engine::namespace::split_queue_path(q.target().0)
                .0
                .to_string()
        });
        let watch = answer
            .at
            .zip(run.asked_at)
            .is_some_and(|(at, asked)| at > asked)
            .then(|| {
                let store = store.clone();
                Callback::from(move |_: MouseEvent| {
                    store.dispatch(Action::LessonWatch);
                    if let Some(lane) = &lane {
                        crate::browser::focus_soon(vec![crate::browser::lane_selector(lane)]);
                    }
                })
            });
        return html! {
            <>
            <p class={classes!("reveal", if right { "right" } else { "wrong" })} id="predict-reveal" tabindex="-1">
                {tf(if right { "predict-right" } else { "predict-wrong" }, &[("given", given), ("answer", &value)])}{at}
            </p>
            <div class="row wrap">
                if let Some(onclick) = watch {
                    <button id="predict-watch" class="i i-play" {onclick}>{t("predict-watch")}</button>
                }
                {next}
            </div>
            </>
        };
    }
    let answer = |given: String| {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| {
            store.dispatch(Action::LessonAnswer(given.clone()));
            crate::browser::focus_soon(vec![REVEAL.into()]);
        })
    };
    if !part.choices.is_empty() {
        return html! {
            <div class="choices row wrap" role="group" aria-label={t("predict-choose")}>
                { for part.choices.iter().map(|c| html! { <button class="choice" data-choice={c.clone()} onclick={answer(c.clone())}>{in_readers_words(c)}</button> }) }
            </div>
        };
    }
    let check = {
        let store = store.clone();
        let typed = typed.clone();
        let refused = refused.clone();
        let question = part.ask.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let given = as_lessons_word(&crate::form::text(&typed));
            if question.as_ref().is_some_and(|q| !q.reads(&given)) {
                let why = match question {
                    Some(Question::InstantOf { .. }) if !given.trim().is_empty() => {
                        tf("predict-not-instant", &[("given", given.trim())])
                    }
                    _ => t("predict-empty"),
                };
                return refused.set(Some(why));
            }
            refused.set(None);
            store.dispatch(Action::LessonAnswer(given));
            crate::browser::focus_soon(vec![REVEAL.into()]);
        })
    };
    let instant = matches!(part.ask, Some(Question::InstantOf { .. }));
    let placeholder = if instant {
        t("predict-instant-ph")
    } else {
        String::new()
    };
    html! {
        <>
        <form class="row wrap" onsubmit={check}>
            <input id="predict-input" ref={typed.clone()} {placeholder} aria-label={t("predict-answer")}
                aria-invalid={refused.as_ref().map(|_| "true")} aria-describedby={refused.as_ref().map(|_| "predict-error")} />
            <button type="submit" class="primary" id="predict-check">{t("predict-check")}</button>
        </form>
        if let Some(why) = refused.as_ref() {
            <p class="field-error" role="alert" id="predict-error">{why.clone()}</p>
        }
        if instant { <p class="hint" id="predict-duration-rule">{t("duration-rule")}</p> }
        </>
    }
}

/// A goal: checked live; hints on request; "show me" plays the solution.
fn goal(store: &StateHandle, run: &LessonRun, lang: &str, next: Html) -> Html {
    let Some(part) = run.part() else {
        return next;
    };
    if run.reached {
        return html! {
            <>
            <p class="reveal right ia i-check" id="goal-reached" tabindex="-1">{t("goal-reached")}</p>
            {next}
            </>
        };
    }
    // Once the learner has done something, what still differs from the goal is said, with the
    // way back to where the part began (a wrong first step may leave the goal out of reach:
    // the goal may name message #1, and #1 is already sent).
    let acted = run.acted(&store.sim.borrow());
    let unmet = part.goal.as_ref().filter(|_| acted).and_then(|goal| {
        store
            .sim
            .borrow()
            .unmet(goal)
            .first()
            .map(ToString::to_string)
    });
    html! {
        <>
        if let Some(what) = unmet {
            <div class="goal-unmet" id="goal-unmet">
                <p>{tf("goal-unmet", &[("what", &what)])}</p>
                <p class="hint">{t("goal-again-why")}</p>
                <button id="lesson-again" onclick={then_focus(store, || Action::LessonAgain, &PART_FOCUS)}>{t("lesson-again")}</button>
            </div>
        }
        // A hint shown is announced; the last one takes the focus from its button, which goes
        // (`browser::restore_lost_focus`), as the goal reached does from "Show me".
        <ul class="hints" id="hints" aria-live="polite">
            { for part.hints.iter().take(run.hints).map(|h| html! { <li tabindex="-1">{text(h, lang).to_string()}</li> }) }
        </ul>
        <div class="row wrap">
            if run.hints < part.hints.len() {
                <button id="lesson-hint" onclick={crate::state::on_click(store, || Action::LessonHint)}>{t("lesson-hint")}</button>
            }
            <button id="lesson-show-me" onclick={crate::state::on_click(store, || Action::LessonShowMe)}>{t("lesson-show-me")}</button>
        </div>
        </>
    }
}

/// The answers without an instant, as lessons and their answers write them.
const WORDS: [&str; 2] = ["never", "none"];

/// "never" and "none" in the reader's words (the catalog's `answer-never`, `answer-none`);
/// anything else as it is (a property's value, such as TTLExpiredException, or an instant).
fn in_readers_words(value: &str) -> String {
    match WORDS.iter().find(|w| value.trim().eq_ignore_ascii_case(w)) {
        Some(word) => t(&format!("answer-{word}")),
        None => value.to_string(),
    }
}

/// A typed prediction with the reader's word for "never" or "none" ("nie", "nooit", "aldrig")
/// read as the lesson's own; anything else as typed ("never" itself is taken in any language).
fn as_lessons_word(typed: &str) -> String {
    WORDS
        .iter()
        .find(|w| t(&format!("answer-{w}")).eq_ignore_ascii_case(typed.trim()))
        .map_or_else(|| typed.to_string(), |w| w.to_string())
}
