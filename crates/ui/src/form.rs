//! Form helpers shared by every form: reading inputs, parsing what a person typed (with a message
//! that names the field), a labelled input, and a controlled `<select>`.
use crate::i18n::t;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

pub fn text(r: &NodeRef) -> String {
    r.cast::<HtmlInputElement>()
        .map(|i| i.value().trim().to_string())
        .unwrap_or_default()
}
pub fn select(r: &NodeRef) -> String {
    r.cast::<HtmlSelectElement>()
        .map(|i| i.value())
        .unwrap_or_default()
}
pub fn opt(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// A labelled input: one function instead of the same markup in every form (and less wasm).
/// The label is the catalog's text for `id`, the placeholder (if any) for `id-ph`. It is
/// uncontrolled: its first value is set once, by the form that owns it ([`set_values`]), since a
/// `value` written on every render would wipe what the reader typed.
pub fn field(id: &'static str, node: &NodeRef, placeholder: bool, kind: &'static str) -> Html {
    field_with(id, node, placeholder, kind, None)
}

/// As [`field`]; with `error` (the id of the error said next to it) the field is marked
/// invalid and described by the error too (WCAG 3.3.1).
fn field_with(
    id: &'static str,
    node: &NodeRef,
    placeholder: bool,
    kind: &'static str,
    error: Option<&str>,
) -> Html {
    let hint = if placeholder {
        t(&format!("{id}-ph"))
    } else {
        String::new()
    };
    let (placeholder, below) = placeholder_or_hint(hint);
    let hint_id = below.as_ref().map(|_| format!("{id}-hint"));
    let described = match (&hint_id, error) {
        (Some(h), Some(e)) => Some(format!("{h} {e}")),
        (h, e) => h.clone().or(e.map(String::from)),
    };
    html! {
        <label>{t(id)}{" "}<input ref={node.clone()} {id} type={kind} {placeholder} aria-describedby={described}
                aria-invalid={error.map(|_| "true")} />
            if let Some(below) = below { <small class="field-hint" id={hint_id}>{below}</small> }
        </label>
    }
}

/// The longest hint shown inside a field (a placeholder): a longer one would be cut at the
/// field's edge in some language or on a phone, so it shows below the field instead.
const PLACEHOLDER_CHARS: usize = 24;

/// A field's hint as its placeholder, or (too long to fit) as a line below it.
pub fn placeholder_or_hint(hint: String) -> (String, Option<String>) {
    if hint.chars().count() > PLACEHOLDER_CHARS {
        (String::new(), Some(hint))
    } else {
        (hint, None)
    }
}

/// Sets the inputs' first values (a form calls this once, when it is mounted). Inputs only: a
/// NodeRef's `cast` does not check the element, and a `<select>` given "" would lose its choice.
pub fn set_values(inputs: &[(NodeRef, &str)]) {
    for (node, value) in inputs {
        let input = node
            .get()
            .and_then(|n| wasm_bindgen::JsCast::dyn_into::<HtmlInputElement>(n).ok());
        if let Some(input) = input {
            input.set_value(value);
        }
    }
}

/// A `<select>` (read by its NodeRef), its first option chosen at first (Yew inserts options
/// last first, so without it the last would be). Not controlled: the browser keeps what the
/// reader chose while the options stay as they are (the forms re-render only when their fields
/// change).
pub fn choice(node: &NodeRef, id: &'static str, options: &[(String, String)]) -> Html {
    chosen(
        node,
        id,
        options,
        options.first().map_or("", |(v, _)| v.as_str()),
    )
}

/// A select whose option with value `selected` is chosen.
pub fn chosen(
    node: &NodeRef,
    id: &'static str,
    options: &[(String, String)],
    selected: &str,
) -> Html {
    html! {
        <select ref={node.clone()} {id}>
            { for options.iter().map(|(v, label)| html! { <option value={v.clone()} selected={v == selected}>{label.clone()}</option> }) }
        </select>
    }
}

#[inline(never)]
pub fn same(paths: Vec<String>) -> Vec<(String, String)> {
    paths.into_iter().map(|p| (p.clone(), p)).collect()
}
/// Options whose labels are catalog keys: (value, key).
#[inline(never)]
pub fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(v, key)| (v.to_string(), t(key)))
        .collect()
}

/// What a [`DataForm`] field is.
#[derive(Clone, PartialEq)]
pub enum Kind {
    Text,
    Check,
    Choice(Vec<(String, String)>),
}

/// One field of a [`DataForm`]: element id (its label is the catalog's text for the id, its
/// placeholder, if it has one, the text for `id-ph`), initial value, kind.
#[derive(Clone, PartialEq)]
pub struct Field {
    pub id: &'static str,
    pub value: &'static str,
    pub placeholder: bool,
    pub kind: Kind,
    /// An error that names this (e.g. "LockDuration") is shown next to the field.
    pub key: &'static str,
}

impl Field {
    #[inline(never)]
    pub fn keyed(mut self, key: &'static str) -> Self {
        self.key = key;
        self
    }
}

#[inline(never)]
pub fn text_field(id: &'static str, value: &'static str, placeholder: bool) -> Field {
    Field {
        id,
        value,
        placeholder,
        kind: Kind::Text,
        key: "",
    }
}

#[inline(never)]
pub fn choice_field(id: &'static str, options: Vec<(String, String)>) -> Field {
    Field {
        id,
        value: "",
        placeholder: false,
        kind: Kind::Choice(options),
        key: "",
    }
}

#[inline(never)]
pub fn check_field(id: &'static str) -> Field {
    Field {
        id,
        value: "",
        placeholder: false,
        kind: Kind::Check,
        key: "",
    }
}

/// A form's values by field id (a checkbox is "true" or "").
pub struct Values(Vec<(&'static str, String)>);

impl Values {
    /// The value of the field with this id ("" if there is none).
    pub fn get(&self, id: &str) -> &str {
        self.0
            .iter()
            .find(|(k, _)| *k == id)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// What is wrong with a form's values, in the reader's words, and the field it is about (shown
/// next to that field; without one, below the fields).
#[derive(Clone, Debug, PartialEq)]
pub struct FormError {
    pub field: Option<String>,
    pub message: String,
}

impl FormError {
    /// An error about `field`, said with the field's name first.
    pub fn at(field: &str, what: impl std::fmt::Display) -> FormError {
        FormError {
            field: Some(field.to_string()),
            message: format!("{field}: {what}"),
        }
    }
}

/// An error about the form as a whole.
impl From<String> for FormError {
    fn from(message: String) -> FormError {
        FormError {
            field: None,
            message,
        }
    }
}

/// Turns a form's values, the button pressed (0 for the first, which Enter also presses) and the
/// current instant into an action, or an error that names the field.
pub type Parse =
    fn(&Values, usize, sbp_engine::time::Instant) -> Result<crate::state::Action, FormError>;

/// A form's title is the catalog's text for its id, its hint (if it has one) the text for
/// `id-hint`, a button's label the text for the button's id.
#[derive(Properties)]
pub struct DataFormProps {
    pub id: &'static str,
    #[prop_or_default]
    pub hint: bool,
    pub fields: Vec<Field>,
    /// The element id of each button; the first submits the form.
    pub buttons: Vec<&'static str>,
    /// The language it was drawn in: a new one redraws it.
    #[prop_or_else(crate::i18n::lang)]
    pub lang: &'static str,
    pub parse: Parse,
    pub dispatch: yew::functional::UseReducerDispatcher<crate::state::AppState>,
    pub sim: crate::state::SimRef,
}

impl PartialEq for DataFormProps {
    fn eq(&self, other: &Self) -> bool {
        // `parse` is fixed per form; the fields, the dispatcher and the simulation decide.
        self.id == other.id
            && self.lang == other.lang
            && self.fields == other.fields
            && self.dispatch == other.dispatch
            && self.sim == other.sim
    }
}

/// A form described by data: the fields are rendered in order and their values handed to
/// `parse` as strings. One component for every such form keeps the code (and the wasm) small.
#[function_component(DataForm)]
pub fn data_form(props: &DataFormProps) -> Html {
    let count = props.fields.len();
    let refs = use_state(|| (0..count).map(|_| NodeRef::default()).collect::<Vec<_>>());
    // The error, and the key of the field it names (the engine's `field`, or a `FormError`'s).
    let error = use_state(|| None::<(Option<String>, String)>);
    {
        let first: Vec<(NodeRef, &'static str)> = refs
            .iter()
            .zip(&props.fields)
            .map(|(r, f)| (r.clone(), f.value))
            .collect();
        use_effect_with((), move |_| set_values(&first));
    }
    let run = {
        let (refs, error, parse, dispatch, sim) = (
            refs.clone(),
            error.clone(),
            props.parse,
            props.dispatch.clone(),
            props.sim.clone(),
        );
        let checks: Vec<bool> = props.fields.iter().map(|f| f.kind == Kind::Check).collect();
        let ids: Vec<&'static str> = props.fields.iter().map(|f| f.id).collect();
        std::rc::Rc::new(move |button: usize| {
            let values: Vec<String> = refs
                .iter()
                .zip(&checks)
                .map(|(r, check)| match (check, r.cast::<HtmlInputElement>()) {
                    (true, Some(i)) => {
                        if i.checked() {
                            "true".into()
                        } else {
                            String::new()
                        }
                    }
                    (false, Some(i)) => i.value().trim().to_string(),
                    (_, None) => select(r),
                })
                .collect();
            let values = Values(ids.iter().copied().zip(values).collect());
            let now = sim.0.borrow().now();
            match parse(&values, button, now) {
                Ok(action) => {
                    // The engine checks what the form cannot (limits, existence): its error, if
                    // any, is shown here too.
                    let before = sim.0.borrow().outcomes.len();
                    dispatch.dispatch(action);
                    let sim = sim.0.borrow();
                    match sim.outcomes.get(before).map(|o| &o.result) {
                        Some(Err(e)) => error.set(Some((e.field.clone(), e.message.to_string()))),
                        _ => error.set(None),
                    }
                }
                Err(e) => error.set(Some((e.field, e.message))),
            }
        })
    };
    // An error that names a field's key goes next to that field; any other below the fields.
    let placed = error.as_ref().and_then(|(field, _)| {
        let field = field.as_deref()?;
        props
            .fields
            .iter()
            .position(|f| !f.key.is_empty() && f.key == field)
    });
    let onsubmit = {
        let run = run.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            run(0);
        })
    };
    let error_id = format!("{}-error", props.id);
    html! {
        <form class="card-form" id={props.id} {onsubmit} aria-label={t(props.id)}>
            <h2>{t(props.id)}</h2>
            if props.hint { <p class="hint">{t(&format!("{}-hint", props.id))}</p> }
            { for props.fields.iter().zip(refs.iter()).enumerate().map(|(i, (f, r))| {
                let invalid = (placed == Some(i)).then_some(error_id.as_str());
                let input = match &f.kind {
                    Kind::Text => field_with(f.id, r, f.placeholder, "text", invalid),
                    Kind::Check => html! { <label class="check"><input ref={r.clone()} id={f.id} type="checkbox" />{" "}{t(f.id)}</label> },
                    Kind::Choice(options) => html! { <label>{t(f.id)}{" "}{choice(r, f.id, options)}</label> },
                };
                match &*error {
                    Some((_, m)) if invalid.is_some() => html! { <>{input}<p class="field-error" role="alert" id={error_id.clone()}>{m.clone()}</p></> },
                    _ => input,
                }
            }) }
            if let (Some((_, m)), None) = (&*error, placed) { <p class="field-error" role="alert" id={error_id.clone()}>{m.clone()}</p> }
            <div class="row wrap">
            { for props.buttons.iter().enumerate().map(|(i, id)| {
                if i == 0 {
                    html! { <button type="submit" class="primary" id={*id}>{t(id)}</button> }
                } else {
                    let run = run.clone();
                    let onclick = Callback::from(move |e: MouseEvent| {
                        e.prevent_default();
                        run(i);
                    });
                    html! { <button type="button" id={*id} {onclick}>{t(id)}</button> }
                }
            }) }
            </div>
        </form>
    }
}

/// Parsing of typed text, naming the field in the error.
pub mod parse {
    use super::FormError;
    use sbp_scenario::Dur;

    pub fn dur(field: &str, s: &str) -> Result<Option<Dur>, FormError> {
        if s.is_empty() {
            return Ok(None);
        }
        sbp_engine::time::parse_duration(s)
            .map(|d| Some(Dur(d)))
            .map_err(|e| FormError::at(field, e))
    }
    pub fn real(field: &str, s: &str, min: f64, max: f64) -> Result<Option<f64>, FormError> {
        if s.is_empty() {
            return Ok(None);
        }
        // serde_json's number parser is in the wasm anyway; core's f64 parser would add its tables.
        match serde_json::from_str::<f64>(s) {
            Ok(v) if v.is_finite() && (min..=max).contains(&v) => Ok(Some(v)),
            _ => Err(FormError {
                field: Some(field.to_string()),
                message: crate::i18n::tf(
                    "error-number",
                    &[
                        ("field", field),
                        ("value", s),
                        ("min", &sbp_engine::time::format_decimal(min, 3)),
                        ("max", &sbp_engine::time::format_decimal(max, 3)),
                    ],
                ),
            }),
        }
    }
    /// A whole number from `min` to `max`, or None when empty.
    pub fn whole(field: &str, s: &str, min: u64, max: u64) -> Result<Option<u64>, FormError> {
        if s.is_empty() {
            return Ok(None);
        }
        match s.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(FormError {
                field: Some(field.to_string()),
                message: crate::i18n::tf(
                    "error-whole",
                    &[
                        ("field", field),
                        ("value", s),
                        ("min", &min.to_string()),
                        ("max", &max.to_string()),
                    ],
                ),
            }),
        }
    }
    pub fn percent(field: &str, s: &str) -> Result<f64, FormError> {
        Ok(real(field, s, 0.0, 100.0)?.unwrap_or(0.0) / 100.0)
    }
}

/// One form of the controls, drawn by [`DataForm`]. One place builds the component for every
/// form (not one copy per form in the wasm).
#[inline(never)]
pub fn data_form(
    id: &'static str,
    hint: bool,
    fields: Vec<Field>,
    buttons: Vec<&'static str>,
    parse: Parse,
    props: &FormProps,
) -> Html {
    html! {
        <DataForm {id} {hint} {fields} {buttons} {parse} dispatch={props.dispatch.clone()} sim={props.sim.clone()} />
    }
}

/// What the forms need. They re-render only when the entities (or the simulation) change, not
/// on every clock tick.
#[derive(Properties, PartialEq, Clone)]
pub struct FormProps {
    pub dispatch: yew::functional::UseReducerDispatcher<crate::state::AppState>,
    pub sim: crate::state::SimRef,
    /// Queues and topics.
    pub targets: Vec<String>,
    /// Queues, subscriptions and their dead-letter queues.
    pub sources: Vec<String>,
    /// Every queue, topic and subscription.
    pub entities: Vec<String>,
    /// The subscriptions.
    pub subscriptions: Vec<String>,
}
