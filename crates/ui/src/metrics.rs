//! Metrics charts: throughput, end-to-end latency, expired and dead-lettered over time, from the
//! engine's metric buckets. Each series has a dash pattern and a text legend.
use crate::plot::{line, plot};
use sbp_engine::time::format_duration;
use yew::prelude::*;

/// At most this many points per series.
const POINTS: usize = 240;

#[function_component(MetricsCharts)]
pub fn metrics_charts(props: &crate::state::SlowProps) -> Html {
    let sim = props.store.sim.borrow();
    let metrics = sim.ns.metrics();
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
            "sent / s",
            "#0a5ea8",
            "",
            series(|b| b.sent as f64)
                .iter()
                .map(|v| v * per_s)
                .collect(),
        ),
        line(
            "completed / s",
            "#1d7a46",
            "6 3",
            series(|b| b.completed as f64)
                .iter()
                .map(|v| v * per_s)
                .collect(),
        ),
        line(
            "locks lost",
            "#6b3fa0",
            "1 2",
            series(|b| b.lock_lost as f64),
        ),
    ];
    let latency = [
        line(
            "mean latency",
            "#1d7a46",
            "",
            series(|b| b.mean_latency().unwrap_or(0) as f64),
        ),
        line(
            "max latency",
            "#b0262c",
            "2 3",
            series(|b| b.latency_max as f64),
        ),
    ];
    let losses = [
        line("expired", "#b0262c", "", series(|b| b.expired as f64)),
        line(
            "dead-lettered",
            "#9a5b00",
            "6 3",
            series(|b| b.dead_lettered as f64),
        ),
    ];
    html! {
        <section class="chart" id="metrics" aria-label="Metrics">
            <h2>{"Metrics"}</h2>
            <p class="hint">{format!(
                "Totals: {} sent, {} completed (mean end-to-end latency {}), {} expired, {} dead-lettered, {} abandoned, {} locks lost, {} duplicates processed, {} duplicates skipped, {} crashes, {} rejected sends. One point = {}.",
                total.sent, total.completed, total.mean_latency().map(format_duration).unwrap_or_else(|| "-".into()),
                total.expired, total.dead_lettered, total.abandoned, total.lock_lost, total.duplicates_processed,
                total.duplicates_skipped, total.crashed, total.rejected, format_duration(width))}</p>
            {plot("Throughput", "", &at, &throughput)}
            {plot("End-to-end latency (enqueued to completed)", " ms", &at, &latency)}
            {plot("Expired and dead-lettered per point", "", &at, &losses)}
        </section>
    }
}
