//! Form helpers shared by every form: reading inputs, parsing what a person typed (with a message
//! that names the field), a labelled input, and a controlled `<select>`.
use sbp_scenario::Dur;
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
pub fn checked(r: &NodeRef) -> bool {
    r.cast::<HtmlInputElement>().is_some_and(|i| i.checked())
}
pub fn opt(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}
/// A duration ("10s", "5m", "MaxValue"), or None when empty.
pub fn dur(field: &str, r: &NodeRef) -> Result<Option<Dur>, String> {
    let s = text(r);
    if s.is_empty() {
        return Ok(None);
    }
    sbp_engine::time::parse_duration(&s)
        .map(|d| Some(Dur(d)))
        .map_err(|e| format!("{field}: {e}"))
}
/// A number from `min` to `max`, or None when empty.
pub fn real(field: &str, r: &NodeRef, min: f64, max: f64) -> Result<Option<f64>, String> {
    let s = text(r);
    if s.is_empty() {
        return Ok(None);
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (min..=max).contains(&v) => Ok(Some(v)),
        _ => Err(format!(
            "{field}: \"{s}\" is not a number from {min} to {max}"
        )),
    }
}
/// A whole number from `min` to `max`, or None when empty.
pub fn number(field: &str, r: &NodeRef, min: u64, max: u64) -> Result<Option<u64>, String> {
    let s = text(r);
    if s.is_empty() {
        return Ok(None);
    }
    match s.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "{field}: \"{s}\" is not a whole number from {min} to {max}"
        )),
    }
}

/// A labelled input: one function instead of the same markup in every form (and less wasm).
pub fn field(
    label: &'static str,
    id: &'static str,
    node: &NodeRef,
    value: &'static str,
    placeholder: &'static str,
    kind: &'static str,
) -> Html {
    html! {
        <label>{label}<input ref={node.clone()} {id} type={kind} value={value} placeholder={placeholder} /></label>
    }
}

/// A controlled `<select>`: Yew re-renders options, so the chosen value lives in state and each
/// option says whether it is selected. Reading the element's value (by NodeRef) still works.
#[derive(Properties, PartialEq)]
pub struct ChoiceProps {
    pub id: AttrValue,
    pub node: NodeRef,
    /// (value, label)
    pub options: Vec<(String, String)>,
}

#[function_component(Choice)]
pub fn choice(props: &ChoiceProps) -> Html {
    let chosen = use_state(|| {
        props
            .options
            .first()
            .map(|o| o.0.clone())
            .unwrap_or_default()
    });
    let onchange = {
        let chosen = chosen.clone();
        Callback::from(move |e: Event| {
            chosen.set(e.target_unchecked_into::<HtmlSelectElement>().value())
        })
    };
    html! {
        <select ref={props.node.clone()} id={props.id.clone()} {onchange}>
            { for props.options.iter().map(|(v, label)| html! { <option value={v.clone()} selected={*v == *chosen}>{label.clone()}</option> }) }
        </select>
    }
}

pub fn same(paths: Vec<String>) -> Vec<(String, String)> {
    paths.into_iter().map(|p| (p.clone(), p)).collect()
}
pub fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(v, l)| (v.to_string(), l.to_string()))
        .collect()
}
