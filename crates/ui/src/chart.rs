//! A chart of counts over time: active, locked, scheduled, deferred, dead-lettered.
use crate::plot::{line, plot};
use yew::prelude::*;

#[function_component(Chart)]
pub fn chart(props: &crate::state::SlowProps) -> Html {
    let samples = props.store.samples.borrow();
    if samples.is_empty() {
        return html! {};
    }
    let at: Vec<i64> = samples.iter().map(|(t, _)| *t).collect();
    let series = |get: fn(&sbp_engine::Counts) -> u64| {
        samples
            .iter()
            .map(|(_, c)| get(c) as f64)
            .collect::<Vec<f64>>()
    };
    let lines = [
        line("active", "#1d7a46", "", series(|c| c.active)),
        line("locked", "#6b3fa0", "6 3", series(|c| c.locked)),
        line("scheduled", "#0a5ea8", "2 3", series(|c| c.scheduled)),
        line("deferred", "#9a5b00", "8 3 2 3", series(|c| c.deferred)),
        line(
            "dead-lettered",
            "#b0262c",
            "1 2",
            series(|c| c.dead_lettered),
        ),
    ];
    html! {
        <section class="chart" aria-label="Counts over time">
            <h2>{"Counts over time"}</h2>
            {plot("Messages by state", "", &at, &lines)}
        </section>
    }
}
