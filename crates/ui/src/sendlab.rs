//! The send lab (SEND-01..04): one batch sent four ways, with the round trip and store time as
//! settings and rejections injected. The numbers come from the engine's `send_lab` model.
use crate::form::field;
use crate::form::{parse, text, Choice};
use sbp_engine::send_lab::{run, Injected, SendLabResult, SendLabSpec, SendStrategy};
use sbp_engine::time::format_decimal;
use sbp_engine::time::format_duration;
use yew::prelude::*;

const ROWS: usize = 100;

fn strategies(n: u32) -> [SendStrategy; 4] {
    [
        SendStrategy::AwaitEach,
        SendStrategy::StartAllThenAwait,
        SendStrategy::Semaphore(n),
        SendStrategy::FireAndForget,
    ]
}

fn label(s: SendStrategy) -> String {
    match s {
        SendStrategy::AwaitEach => "await each send".into(),
        SendStrategy::StartAllThenAwait => "start all, then await all".into(),
        SendStrategy::Semaphore(n) => format!("semaphore of {n}"),
        SendStrategy::FireAndForget => "fire and forget".into(),
    }
}

fn timeline(r: &SendLabResult) -> Html {
    let end = r.all_settled.max(1) as f64;
    let rows = r.traces.len().min(ROWS);
    let h = (rows as f64 * 4.0).max(40.0) + 20.0;
    let x = |t: i64| t as f64 / end * 440.0 + 36.0;
    let max_q = r.max_in_flight.max(1) as f64;
    let queue: String = r
        .in_flight
        .iter()
        .map(|(t, n)| {
            format!(
                "{},{} ",
                format_decimal(x(*t), 1),
                format_decimal(38.0 - *n as f64 / max_q * 34.0, 1)
            )
        })
        .collect();
    html! {
        <>
        <svg viewBox={format!("0 0 480 {}", format_decimal(h, 1))} role="img" class="lab-timeline"
            aria-label={format!("{} sends over {}; failed sends in red", r.traces.len(), format_duration(r.all_settled))}>
            { for r.traces.iter().take(ROWS).enumerate().map(|(i, t)| {
                let y = 4.0 + i as f64 * 4.0;
                let failed = !t.stored;
                let colour = if failed { "#b0262c" } else if t.attempts > 1 { "#9a5b00" } else { "#0a5ea8" };
                html! { <line x1={format_decimal(x(t.started), 1)} x2={format_decimal(x(t.settled).max(x(t.started) + 1.0), 1)} y1={format_decimal(y, 1)} y2={format_decimal(y, 1)}
                    stroke={colour} stroke-width="3" stroke-dasharray={if t.observed { "" } else { "3 2" }} /> }
            }) }
            <text x="2" y={format_decimal(h - 4.0, 1)} font-size="10">{"t=0"}</text>
            <text x="476" y={format_decimal(h - 4.0, 1)} font-size="10" text-anchor="end">{format_duration(r.all_settled)}</text>
        </svg>
        <figure class="metric">
            <figcaption>{format!("Sends in flight (fire and forget: the client's hidden queue), at most {}", r.max_in_flight)}</figcaption>
            <svg viewBox="0 0 480 42" role="img" aria-label={format!("at most {} sends in flight", r.max_in_flight)}>
                <polyline points={queue} fill="none" stroke="#6b3fa0" stroke-width="1.6" />
            </svg>
        </figure>
        </>
    }
}

#[function_component(SendLab)]
pub fn send_lab() -> Html {
    let refs = use_state(|| std::array::from_fn::<NodeRef, 8, _>(|_| NodeRef::default()));
    let [count, rtt, store, sem, busy, quota, missing, large] = (*refs).clone();
    let strategy = use_node_ref();
    let spec = use_state(|| None::<Result<SendLabSpec, String>>);
    let chosen = use_state(|| 0usize);
    let onsubmit = {
        let spec = spec.clone();
        let chosen = chosen.clone();
        let (count, rtt, store, sem, busy, quota, missing, large, strategy) = (
            count.clone(),
            rtt.clone(),
            store.clone(),
            sem.clone(),
            busy.clone(),
            quota.clone(),
            missing.clone(),
            large.clone(),
            strategy.clone(),
        );
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let n = |field: &str, r: &NodeRef| {
                parse::whole(field, &text(r), 0, 10_000).map(|v| v.unwrap_or(0) as u32)
            };
            let d = |field: &str, r: &NodeRef| {
                parse::dur(field, &text(r)).map(|v| v.map_or(0, |d| d.ms()))
            };
            let build = || -> Result<SendLabSpec, String> {
                Ok(SendLabSpec {
                    count: n("Sends", &count)?.max(1),
                    rtt: d("Round trip", &rtt)?,
                    store: d("Store time", &store)?,
                    strategy: SendStrategy::Semaphore(n("Semaphore", &sem)?.max(1)),
                    injected: Injected {
                        server_busy_every: n("ServerBusy every", &busy)?,
                        quota_exceeded_every: n("QuotaExceeded every", &quota)?,
                        entity_not_found_every: n("Entity not found every", &missing)?,
                        message_too_large_every: n("Too large every", &large)?,
                    },
                    retry_delay: 800,
                    seed: 1,
                })
            };
            let index = crate::form::select(&strategy).parse::<usize>().unwrap_or(0);
            chosen.set(index.min(3));
            spec.set(Some(build()));
        })
    };
    let body = match &*spec {
        None => {
            html! { <p class="hint">{"Press Run to compare the four ways of sending the same batch."}</p> }
        }
        Some(Err(m)) => {
            html! { <p class="field-error" role="alert" id="lab-error">{m.clone()}</p> }
        }
        Some(Ok(spec)) => {
            let n = match spec.strategy {
                SendStrategy::Semaphore(n) => n,
                _ => 10,
            };
            let results: Vec<(SendStrategy, SendLabResult)> = strategies(n)
                .into_iter()
                .map(|s| {
                    (
                        s,
                        run(&SendLabSpec {
                            strategy: s,
                            ..spec.clone()
                        }),
                    )
                })
                .collect();
            let (shown_strategy, shown) = &results[*chosen];
            let rejections: Vec<Html> = shown.traces.iter().filter_map(|t| t.rejection.as_ref().map(|r| (t, r))).take(8).map(|(t, r)| html! {
                <li>{format!("send {}: {} (tracking id {}), {}{}", t.index + 1, r.error.name(), r.tracking_id,
                    if r.is_transient { "retryable: retried and stored" } else { "not retryable: lost" },
                    if t.observed { "" } else { "; nobody saw it" })}</li>
            }).collect();
            html! {
                <>
                <table id="lab-results">
                    <thead><tr><th>{"Strategy"}</th><th>{"Caller waits"}</th><th>{"All settled"}</th><th>{"Most in flight"}</th><th>{"Failures seen"}</th><th>{"Failures nobody saw"}</th></tr></thead>
                    <tbody>
                    { for results.iter().map(|(s, r)| html! {
                        <tr data-strategy={s.id()}><td>{label(*s)}</td><td>{format_duration(r.caller_done)}</td><td>{format_duration(r.all_settled)}</td>
                        <td>{r.max_in_flight}</td><td>{r.observed_failures}</td><td>{r.unobserved_failures}</td></tr>
                    }) }
                    </tbody>
                </table>
                <h3>{format!("Timeline: {}", label(*shown_strategy))}</h3>
                <p class="hint">{"One line per send, from start to the broker's answer. Blue: stored; amber: ServerBusy, retried; red: rejected; dashed: nobody awaited it."}</p>
                {timeline(shown)}
                if !rejections.is_empty() { <ul class="rejections">{ for rejections }</ul> }
                </>
            }
        }
    };
    let options: Vec<(String, String)> = strategies(10)
        .iter()
        .enumerate()
        .map(|(i, s)| (i.to_string(), label(*s)))
        .collect();
    html! {
        <details class="lane sendlab" id="send-lab">
            <summary><strong>{"Send lab"}</strong>{": awaiting each send vs. overlapping them (SEND-01..04)"}</summary>
            <form class="inline-form" {onsubmit} aria-label="Send lab settings">
                {field("lab-count", &count, "100", false, "text")}
                {field("lab-rtt", &rtt, "70ms", false, "text")}
                {field("lab-store", &store, "10ms", false, "text")}
                {field("lab-semaphore", &sem, "10", false, "text")}
                {field("lab-busy", &busy, "", true, "text")}
                {field("lab-quota", &quota, "", true, "text")}
                {field("lab-missing", &missing, "", true, "text")}
                {field("lab-large", &large, "", true, "text")}
                <label>{"Show timeline of "}<Choice node={strategy} id="lab-strategy" options={options} /></label>
                <button type="submit" class="primary" id="lab-run">{"Run"}</button>
            </form>
            {body}
        </details>
    }
}
