//! The event log, filterable by entity, message and kind, newest first.
use crate::state::SimRef;
use sbp_engine::time::format_instant;
use web_sys::HtmlInputElement;
use yew::prelude::*;

const SHOWN: usize = 200;

/// Re-renders on the slow version or a rebuild, not on every clock tick.
#[derive(Properties, PartialEq)]
pub struct LogProps {
    pub sim: SimRef,
    /// The state's slow version: the log follows a running clock every few hundred ms.
    pub version: u64,
}

#[function_component(EventLog)]
pub fn event_log(props: &LogProps) -> Html {
    let filter = use_state(String::new);
    let oninput = {
        let filter = filter.clone();
        Callback::from(move |e: InputEvent| {
            filter.set(e.target_unchecked_into::<HtmlInputElement>().value())
        })
    };
    let sim = props.sim.0.borrow();
    let needle = filter.to_ascii_lowercase();
    let rows: Vec<Html> = sim
        .ns
        .log()
        .iter()
        .rev()
        .filter_map(|e| {
            let path = sim.ns.event_path(e);
            let text = sim.ns.describe(e);
            let seq = if e.seq > 0 { format!("#{}", e.seq) } else { String::new() };
            let hay = format!("{path} {seq} {} {} {text}", e.kind.name(), e.rule.map(|r| r.id()).unwrap_or("")).to_ascii_lowercase();
            (needle.is_empty() || needle.split_whitespace().all(|w| hay.contains(w))).then(|| {
                html! {
                    <tr>
                        <td>{format_instant(e.at)}</td><td>{path}</td><td>{seq}</td><td>{e.kind.name()}</td>
                        <td>{e.rule.map(|r| html! { <abbr title={crate::browser::rule_summary(r)}>{r.id()}</abbr> }).unwrap_or_default()}</td>
                        <td>{text}</td>
                    </tr>
                }
            })
        })
        .take(SHOWN)
        .collect();
    html! {
        <section class="log" aria-label="Event log">
            <h2>{"Event log"}</h2>
            if sim.ns.log_dropped() > 0 {
                <p class="hint">{format!("The {} oldest events were dropped to save memory; the metrics still count them.", sim.ns.log_dropped())}</p>
            }
            <label>{"Filter "}<input id="log-filter" {oninput} placeholder="entity, #seq, kind or rule, e.g. orders DeadLettered" /></label>
            <table id="event-log">
                <thead><tr><th>{"Time"}</th><th>{"Entity"}</th><th>{"Seq"}</th><th>{"Event"}</th><th>{"Rule"}</th><th>{"What happened"}</th></tr></thead>
                <tbody>{ for rows }</tbody>
            </table>
        </section>
    }
}
