//! The lesson builder's page (`builder.html`): from the playground's current scenario (or a
//! pasted link or scenario), add explain / predict / do parts, see the lesson checked as
//! `sbp check` checks it (the answers computed by the engine), and get a link that opens the
//! lesson, alone or in workshop mode. A page of its own, so the playground's wasm does not carry
//! it.
use sbp_scenario::lesson::{Lesson, Part, Question, Texts};
use sbp_scenario::{Scenario, Step};
use sbp_ui::form::{field, set_values, text, FormError};
use sbp_ui::i18n::{self, t, tf};
use yew::prelude::*;

/// The playground's scenario as it left it (local storage), or the starter.
fn current_scenario() -> Scenario {
    sbp_ui::browser::stored_link()
        .map(|l| l.scenario)
        .or_else(|| Scenario::from_json(sbp_ui::browser::STARTER).ok())
        .unwrap_or_default()
}

fn one(lang: &str, text: String) -> Texts {
    let mut t = Texts::new();
    if !text.is_empty() {
        t.insert(lang.to_string(), text.clone());
        t.entry("en".into()).or_insert(text);
    }
    t
}

/// The part the form describes, or what is wrong with it.
fn part_from(values: &[String], lang: &str) -> Result<Part, FormError> {
    let [kind, words, highlight, ask, event, entity, seq, property, choices, goal, solution, hint] =
        values
    else {
        return Err(String::new().into());
    };
    if words.is_empty() {
        return Err(t("builder-no-text").into());
    }
    let mut part = Part {
        highlight: (!highlight.is_empty()).then(|| highlight.clone()),
        ..Part::default()
    };
    match kind.as_str() {
        "predict" => {
            let seq = seq
                .parse()
                .map_err(|_| FormError::from(t("builder-bad-seq")))?;
            part.predict = Some(one(lang, words.clone()));
            part.ask = Some(match ask.as_str() {
                "property" => Question::Property {
                    event: (!event.is_empty()).then(|| event.clone()),
                    entity: entity.clone(),
                    seq,
                    property: property.clone(),
                    view: Default::default(),
                },
                "first_of" => Question::FirstOf {
                    events: event.split(',').map(|e| e.trim().to_string()).collect(),
                    entity: entity.clone(),
                    seq,
                },
                _ => Question::InstantOf {
                    event: event.clone(),
                    entity: entity.clone(),
                    seq,
                },
            });
            part.choices = choices
                .split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect();
        }
        "do" => {
            part.goal_text = Some(one(lang, words.clone()));
            part.goal = Some(serde_json::from_str(goal).map_err(|e| {
                FormError::from(tf("builder-bad-goal", &[("error", &e.to_string())]))
            })?);
            part.solution = serde_json::from_str::<Vec<Step>>(solution).map_err(|e| {
                FormError::from(tf("builder-bad-solution", &[("error", &e.to_string())]))
            })?;
            if !hint.is_empty() {
                part.hints = vec![one(lang, hint.clone())];
            }
        }
        _ => part.explain = Some(one(lang, words.clone())),
    }
    Ok(part)
}

/// The lesson as JSON, what its check says, and the link that opens it.
fn outcome(lesson: &Lesson) -> (String, Result<String, sbp_scenario::Text>) {
    let json = serde_json::to_string_pretty(lesson).unwrap_or_default();
    let checked = Lesson::from_json(&json)
        .and_then(|l| l.check())
        .map(|answers| {
            answers
                .iter()
                .map(|a| a.value.clone())
                .collect::<Vec<_>>()
                .join(", ")
        });
    (json, checked)
}

#[function_component(Builder)]
fn builder() -> Html {
    let refs = use_state(|| std::array::from_fn::<NodeRef, 13, _>(|_| NodeRef::default()));
    let [title, kind, words, highlight, ask, event, entity, seq, property, choices, goal, solution, hint] =
        (*refs).clone();
    {
        let first = [
            (event.clone(), "DeadLettered"),
            (entity.clone(), "orders"),
            (seq.clone(), "1"),
            (goal.clone(), "{\"counts\": {\"orders\": {\"active\": 1}}}"),
            (
                solution.clone(),
                "[{\"at\": \"0s\", \"send\": {\"to\": \"orders\"}}]",
            ),
        ];
        use_effect_with((), move |_| set_values(&first));
    }
    let lesson = use_state(|| Lesson {
        id: "my-lesson".into(),
        title: Texts::new(),
        controls: Vec::new(),
        scenario: current_scenario(),
        parts: Vec::new(),
    });
    let error = use_state(String::new);
    let lang = i18n::lang();
    let add = {
        let (lesson, error, refs) = (lesson.clone(), error.clone(), refs.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let values: Vec<String> = refs[1..].iter().map(text).collect();
            match part_from(&values, lang) {
                Ok(part) => {
                    let mut next = (*lesson).clone();
                    next.title = one(lang, text(&refs[0]));
                    next.parts.push(part);
                    lesson.set(next);
                    error.set(String::new());
                }
                Err(e) => error.set(e.message),
            }
        })
    };
    let remove = {
        let lesson = lesson.clone();
        Callback::from(move |_: MouseEvent| {
            let mut next = (*lesson).clone();
            next.parts.pop();
            lesson.set(next);
        })
    };
    let (json, checked) = outcome(&lesson);
    let payload = sbp_ui::browser::json_payload(&json);
    let link = format!("../index.html?lang={lang}#lesson={payload}");
    let workshop = format!("../index.html?lang={lang}&workshop=1#lesson={payload}");
    let select = |node: &NodeRef, id: &'static str, options: &[&str]| {
        let options: Vec<(String, String)> = options
            .iter()
            .map(|o| (o.to_string(), t(&format!("builder-{o}"))))
            .collect();
        html! { <label>{t(id)}{" "}{sbp_ui::form::choice(node, id, &options)}</label> }
    };
    html! {
        <main class="builder">
            <h1>{t("builder-title")}</h1>
            {i18n::page_links(t("page-back"))}
            <p class="hint">{t("builder-intro")}</p>
            <form class="card-form" id="builder-form" onsubmit={add}>
                {field("builder-lesson-title", &title, false, "text")}
                {select(&kind, "builder-kind", &["explain", "predict", "do"])}
                {field("builder-text", &words, false, "text")}
                {field("builder-highlight", &highlight, true, "text")}
                <fieldset><legend>{t("builder-predict")}</legend>
                    {select(&ask, "builder-ask", &["instant_of", "property", "first_of"])}
                    {field("builder-event", &event, true, "text")}
                    {field("builder-entity", &entity, false, "text")}
                    {field("builder-seq", &seq, false, "text")}
                    {field("builder-property", &property, true, "text")}
                    {field("builder-choices", &choices, true, "text")}
                </fieldset>
                <fieldset><legend>{t("builder-do")}</legend>
                    {field("builder-goal", &goal, false, "text")}
                    {field("builder-solution", &solution, false, "text")}
                    {field("builder-hint", &hint, false, "text")}
                </fieldset>
                if !error.is_empty() { <p class="field-error" role="alert" id="builder-error">{(*error).clone()}</p> }
                <div class="row wrap">
                    <button type="submit" class="primary" id="builder-add">{t("builder-add")}</button>
                    <button type="button" id="builder-remove" onclick={remove}>{t("builder-remove")}</button>
                </div>
            </form>
            <section class="card-form">
                <h2>{tf("builder-parts", &[("count", &lesson.parts.len().to_string())])}</h2>
                <p id="builder-check" class={if checked.is_ok() { "reveal right" } else { "reveal wrong" }}>
                    {match &checked {
                        Ok(answers) => tf("builder-checked", &[("answers", answers)]),
                        Err(e) => tf("builder-check-failed", &[("error", &e.to_string())]),
                    }}
                </p>
                if checked.is_ok() {
                    <p><a id="builder-link" href={link.clone()}>{t("builder-open")}</a>{" · "}
                       <a id="builder-workshop" href={workshop}>{t("builder-workshop")}</a></p>
                }
                <textarea id="builder-json" readonly=true rows="16" value={json} aria-label={t("builder-json")} />
            </section>
        </main>
    }
}

fn main() {
    i18n::load_page("builder-title", |_| {
        yew::Renderer::<Builder>::new().render();
    });
}
