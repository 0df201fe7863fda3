//! A chart of counts over time: active, locked, scheduled, deferred, dead-lettered.
use crate::plot::{line, plot};
use yew::prelude::*;

/// A plain function (no hooks): the panel that calls it follows the slow version.
pub fn chart(store: &crate::state::StateHandle) -> Html {
    let samples = store.samples.borrow();
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
        line("s-active", "#1d7a46", "", series(|c| c.active)),
        line("s-locked", "#6b3fa0", "6 3", series(|c| c.locked)),
        line("s-scheduled", "#0a5ea8", "2 3", series(|c| c.scheduled)),
        line("s-deferred", "#9a5b00", "8 3 2 3", series(|c| c.deferred)),
        line(
            "s-dead-lettered",
            "#b0262c",
            "1 2",
            series(|c| c.dead_lettered),
        ),
    ];
    html! {
        <section class="chart" aria-label={crate::i18n::t("chart")}>
            <h2>{crate::i18n::t("chart")}</h2>
            {plot(&crate::i18n::t("plot-by-state"), "", &at, &lines, Some(store.sim.borrow().now()))}
        </section>
    }
}
