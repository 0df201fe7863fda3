//! The event log, filterable by entity, message and kind, newest first.
use crate::i18n::{t, tf};
use crate::markup;
use crate::markup::rule_abbr;
use crate::markup::Markup;
use crate::state::SimRef;
use sbp_engine::time::format_instant;
use web_sys::HtmlInputElement;
use yew::prelude::*;

const SHOWN: usize = 200;
/// Rows shown while the clock runs fast (nobody reads 200 rows scrolling by at x60; drawing
/// them would cost every redraw).
const SHOWN_FAST: usize = 40;

/// Re-renders on the slow version or a rebuild, not on every clock tick.
#[derive(Properties, PartialEq)]
pub struct LogProps {
    pub sim: SimRef,
    /// The state's slow version: the log follows a running clock every few hundred ms.
    pub version: u64,
    /// The clock runs at x60 or faster.
    pub fast: bool,
    /// A message a prediction asks about: its rows' words wait for the answer.
    pub masked: Option<crate::lesson::Masked>,
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
    let mut shown = 0;
    // The rows as markup text: up to 200 of them every few hundred ms, no handlers.
    let mut rows = Markup::new();
    let words = crate::i18n::catalog();
    for e in sim.ns().log().iter().rev() {
        let path = sim.ns().event_path(e);
        let text = match &props.masked {
            Some(m) if m.message(&path, e.seq) => t("predict-hidden"),
            _ => sbp_scenario::words::event_text(&words, sim.ns(), e),
        };
        let seq = if e.seq > 0 {
            format!("#{}", e.seq)
        } else {
            String::new()
        };
        let rule = e.rule.map(|r| r.id()).unwrap_or("");
        if !needle.is_empty() {
            let hay = format!("{path} {seq} {} {rule} {text}", e.kind.name()).to_ascii_lowercase();
            if !needle.split_whitespace().all(|w| hay.contains(w)) {
                continue;
            }
        }
        markup!(
            rows,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>",
            format_instant(e.at),
            path,
            seq,
            e.kind.name()
        );
        if let Some(rule) = e.rule {
            rows.push(&rule_abbr(rule));
        }
        markup!(rows, "</td><td>{}</td></tr>", text);
        shown += 1;
        if shown == if props.fast { SHOWN_FAST } else { SHOWN } {
            break;
        }
    }
    let mut table = Markup::new();
    markup!(
        table,
        "<div class=\"table-scroll\" tabindex=\"0\" role=\"region\" aria-label=\"{}\"><table id=\"event-log\"><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>",
        t("log"),
        t("col-time"),
        t("col-entity"),
        t("seq"),
        t("col-event"),
        t("col-rule"),
        t("col-what")
    );
    table.push(&rows);
    markup!(table, "</tbody></table></div>");
    html! {
        <section class="log" aria-label={t("log")}>
            <h2>{t("log")}</h2>
            if sim.ns().log_dropped() > 0 {
                <p class="hint">{tf("log-dropped", &[("count", &sim.ns().log_dropped().to_string())])}</p>
            }
            <label class="log-filter">{t("log-filter")}{" "}<input id="log-filter" {oninput} aria-describedby="log-filter-hint" /></label>
            <small class="field-hint" id="log-filter-hint">{t("log-filter-ph")}</small>
            {table.into_html()}
        </section>
    }
}
