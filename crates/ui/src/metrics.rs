//! Metrics charts: throughput, end-to-end latency, expired and dead-lettered over time, from the
//! engine's metric buckets. Each series has a dash pattern and a text legend.
use crate::i18n::{t, tf};
use crate::plot::{line, plot};
use sbp_engine::time::format_duration;
use yew::prelude::*;

/// At most this many points per series.
const POINTS: usize = 240;

/// A plain function (no hooks): the panel that calls it follows the slow version.
pub fn metrics_charts(store: &crate::state::StateHandle) -> Html {
    let sim = store.sim.borrow();
    let metrics = sim.ns().metrics();
    if metrics
        .buckets
        .iter()
        .all(|b| b.sent + b.completed + b.expired + b.dead_lettered == 0)
    {
        return html! {};
    }
    let merge = metrics.buckets.len().div_ceil(POINTS).max(1);
    let buckets = metrics.coarse(merge);
    let width = metrics.width * merge as i64;
    let per_s = 1000.0 / width as f64;
    let total = metrics.total();
    let at: Vec<i64> = (0..buckets.len() as i64).map(|i| i * width).collect();
    let series =
        |get: fn(&sbp_engine::Bucket) -> f64| buckets.iter().map(get).collect::<Vec<f64>>();
    let throughput = [
        line(
            "m-sent",
            "#0a5ea8",
            "",
            series(|b| b.sent as f64)
                .iter()
                .map(|v| v * per_s)
                .collect(),
        ),
        line(
            "m-completed",
            "#1d7a46",
            "6 3",
            series(|b| b.completed as f64)
                .iter()
                .map(|v| v * per_s)
                .collect(),
        ),
        line(
            "m-locks-lost",
            "#6b3fa0",
            "1 2",
            series(|b| b.lock_lost as f64),
        ),
        line(
            "m-locks-lapsed",
            "#5a5a5a",
            "4 2",
            series(|b| b.locks_lapsed as f64),
        ),
    ];
    let latency = [
        line(
            "m-mean-latency",
            "#1d7a46",
            "",
            series(|b| b.mean_latency().unwrap_or(0) as f64),
        ),
        line(
            "m-max-latency",
            "#b0262c",
            "2 3",
            series(|b| b.latency_max as f64),
        ),
    ];
    let losses = [
        line("m-expired", "#b0262c", "", series(|b| b.expired as f64)),
        line(
            "m-dead-lettered",
            "#9a5b00",
            "6 3",
            series(|b| b.dead_lettered as f64),
        ),
    ];
    html! {
        <section class="chart" id="metrics" aria-label={t("metrics")}>
            <h2>{t("metrics")}</h2>
            <p class="hint">{tf("metrics-totals", &[
                ("sent", &total.sent.to_string()), ("completed", &total.completed.to_string()),
                ("latency", &total.mean_latency().map(format_duration).unwrap_or_else(|| "-".into())),
                ("expired", &total.expired.to_string()), ("dead", &total.dead_lettered.to_string()),
                ("abandoned", &total.abandoned.to_string()), ("lost", &total.lock_lost.to_string()), ("lapsed", &total.locks_lapsed.to_string()),
                ("processed", &total.duplicates_processed.to_string()), ("skipped", &total.duplicates_skipped.to_string()),
                ("crashed", &total.crashed.to_string()), ("rejected", &total.rejected.to_string()),
                ("point", &format_duration(width))])}</p>
            {plot(&t("plot-throughput"), "", &at, &throughput, None)}
            {plot(&t("plot-latency"), " ms", &at, &latency, None)}
            {plot(&t("plot-losses"), "", &at, &losses, None)}
        </section>
    }
}
