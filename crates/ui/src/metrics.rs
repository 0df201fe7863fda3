//! Metrics charts: throughput, end-to-end latency, expired and dead-lettered over time, from the
//! engine's metric buckets. Each series has a dash pattern and a text legend.
use sbp_engine::time::{format_duration, format_instant};
use sbp_engine::Bucket;
use yew::prelude::*;

const W: f64 = 480.0;
const H: f64 = 110.0;
/// At most this many points per series.
const POINTS: usize = 240;

type Series = (&'static str, &'static str, &'static str, fn(&Bucket) -> f64);

fn plot(title: &str, unit: &str, buckets: &[Bucket], width_ms: i64, series: &[Series]) -> Html {
    let max = buckets
        .iter()
        .flat_map(|b| series.iter().map(move |s| (s.3)(b)))
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let n = buckets.len().max(2) as f64;
    let x = |i: usize| i as f64 / (n - 1.0) * (W - 40.0) + 36.0;
    let y = |v: f64| H - 16.0 - v / max * (H - 26.0);
    let end = width_ms * buckets.len() as i64;
    let last = buckets
        .iter()
        .rev()
        .find(|b| b.sent + b.completed + b.expired + b.dead_lettered > 0)
        .copied()
        .unwrap_or_default();
    html! {
        <figure class="metric">
            <figcaption>{title}</figcaption>
            <svg viewBox={format!("0 0 {W} {H}")} role="img" aria-label={format!("{title} from t=0 to {}", format_instant(end))}>
                <line x1="36" y1={(H - 16.0).to_string()} x2={W.to_string()} y2={(H - 16.0).to_string()} stroke="#999" />
                <text x="2" y="12" font-size="10">{format!("{max:.0}{unit}")}</text>
                <text x="36" y={(H - 2.0).to_string()} font-size="10">{"t=0"}</text>
                <text x={(W - 4.0).to_string()} y={(H - 2.0).to_string()} font-size="10" text-anchor="end">{format_instant(end)}</text>
                { for series.iter().map(|(_, colour, dash, get)| {
                    let points: String = buckets.iter().enumerate().map(|(i, b)| format!("{:.1},{:.1} ", x(i), y(get(b)))).collect();
                    html! { <polyline points={points} fill="none" stroke={*colour} stroke-width="1.6" stroke-dasharray={*dash} /> }
                }) }
            </svg>
            <ul class="legend">
                { for series.iter().map(|(name, colour, dash, get)| html! {
                    <li><svg width="26" height="8" aria-hidden="true"><line x1="0" y1="4" x2="26" y2="4" stroke={*colour} stroke-width="2" stroke-dasharray={*dash} /></svg>{format!(" {name}: {:.0}{unit} (last)", get(&last))}</li>
                }) }
            </ul>
        </figure>
    }
}

#[function_component(MetricsCharts)]
pub fn metrics_charts(props: &crate::SlowProps) -> Html {
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
    let counts: [Series; 3] = [
        ("sent / s", "#0a5ea8", "", |b| b.sent as f64),
        ("completed / s", "#1d7a46", "6 3", |b| b.completed as f64),
        ("lock lost", "#6b3fa0", "1 2", |b| b.lock_lost as f64),
    ];
    // Scale per-bucket counts to per second.
    let scaled: Vec<Bucket> = buckets
        .iter()
        .map(|b| Bucket {
            sent: (b.sent as f64 * per_s).round() as u64,
            completed: (b.completed as f64 * per_s).round() as u64,
            ..*b
        })
        .collect();
    let losses: [Series; 2] = [
        ("expired", "#b0262c", "", |b| b.expired as f64),
        ("dead-lettered", "#9a5b00", "6 3", |b| {
            b.dead_lettered as f64
        }),
    ];
    let latency: [Series; 2] = [
        ("mean latency ms", "#1d7a46", "", |b| {
            b.mean_latency().unwrap_or(0) as f64
        }),
        ("max latency ms", "#b0262c", "2 3", |b| b.latency_max as f64),
    ];
    html! {
        <section class="chart" id="metrics" aria-label="Metrics">
            <h2>{"Metrics"}</h2>
            <p class="hint">{format!(
                "Totals: {} sent, {} completed (mean end-to-end latency {}), {} expired, {} dead-lettered, {} abandoned, {} locks lost, {} duplicates processed, {} duplicates skipped, {} crashes, {} rejected sends. One point = {}.",
                total.sent, total.completed, total.mean_latency().map(format_duration).unwrap_or_else(|| "-".into()),
                total.expired, total.dead_lettered, total.abandoned, total.lock_lost, total.duplicates_processed,
                total.duplicates_skipped, total.crashed, total.rejected, format_duration(width))}</p>
            {plot("Throughput", "", &scaled, width, &counts)}
            {plot("End-to-end latency (enqueued to completed)", " ms", &buckets, width, &latency)}
            {plot("Expired and dead-lettered per point", "", &buckets, width, &losses)}
        </section>
    }
}
