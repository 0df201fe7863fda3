//! A chart of counts over time (active, locked, scheduled, deferred, dead-lettered), as inline SVG.
//! Each series has its own dash pattern and a text legend, so colour is not the only cue.
use sbp_engine::time::format_instant;
use sbp_engine::Counts;
use yew::prelude::*;

const W: f64 = 480.0;
const H: f64 = 130.0;

type Series = (&'static str, &'static str, &'static str, fn(&Counts) -> u64);
const SERIES: &[Series] = &[
    ("active", "#1d7a46", "", |c| c.active),
    ("locked", "#6b3fa0", "6 3", |c| c.locked),
    ("scheduled", "#0a5ea8", "2 3", |c| c.scheduled),
    ("deferred", "#9a5b00", "8 3 2 3", |c| c.deferred),
    ("dead-lettered", "#b0262c", "1 2", |c| c.dead_lettered),
];

#[function_component(Chart)]
pub fn chart(props: &crate::SlowProps) -> Html {
    let samples = props.store.samples.borrow();
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return html! {};
    };
    let (t0, t1) = (first.0, last.0.max(first.0 + 1));
    let max = samples
        .iter()
        .flat_map(|(_, c)| SERIES.iter().map(move |s| (s.3)(c)))
        .max()
        .unwrap_or(0)
        .max(1);
    let x = |t: i64| (t - t0) as f64 / (t1 - t0) as f64 * (W - 40.0) + 36.0;
    let y = |v: u64| H - 16.0 - v as f64 / max as f64 * (H - 26.0);
    let latest = last.1;
    let summary = format!(
        "From {} to {}: now {} active, {} locked, {} scheduled, {} deferred, {} dead-lettered",
        format_instant(t0),
        format_instant(t1),
        latest.active,
        latest.locked,
        latest.scheduled,
        latest.deferred,
        latest.dead_lettered
    );
    html! {
        <section class="chart" aria-label="Counts over time">
            <h2>{"Counts over time"}</h2>
            <svg viewBox={format!("0 0 {W} {H}")} role="img" aria-label={summary}>
                <line x1="36" y1={(H - 16.0).to_string()} x2={W.to_string()} y2={(H - 16.0).to_string()} stroke="#999" />
                <text x="2" y="14" font-size="10">{max}</text>
                <text x="2" y={(H - 16.0).to_string()} font-size="10">{"0"}</text>
                <text x="36" y={(H - 2.0).to_string()} font-size="10">{format_instant(t0)}</text>
                <text x={(W - 4.0).to_string()} y={(H - 2.0).to_string()} font-size="10" text-anchor="end">{format_instant(t1)}</text>
                { for SERIES.iter().map(|(_, colour, dash, get)| {
                    let points: String = samples.iter().map(|(t, c)| format!("{:.1},{:.1} ", x(*t), y(get(c)))).collect();
                    html! { <polyline points={points} fill="none" stroke={*colour} stroke-width="1.6" stroke-dasharray={*dash} /> }
                }) }
            </svg>
            <ul class="legend">
                { for SERIES.iter().map(|(name, colour, dash, get)| html! {
                    <li><svg width="26" height="8" aria-hidden="true"><line x1="0" y1="4" x2="26" y2="4" stroke={*colour} stroke-width="2" stroke-dasharray={*dash} /></svg>{format!(" {name}: {}", get(&latest))}</li>
                }) }
            </ul>
        </section>
    }
}
