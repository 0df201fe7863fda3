//! The send lab (SEND-01..04): one batch sent four ways, with the round trip and store time as
//! settings and rejections injected. The numbers come from the engine's `send_lab` model.
use crate::form::field;
use crate::form::{choice, parse, text};
use crate::i18n::{t, tf};
use crate::markup;
use crate::markup::fmt;
use crate::markup::Markup;
use sbp_engine::send_lab::{run, Injected, SendLabResult, SendLabSpec, SendStrategy};
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
        SendStrategy::AwaitEach => t("lab-await-each"),
        SendStrategy::StartAllThenAwait => t("lab-start-all"),
        SendStrategy::Semaphore(n) => tf("lab-semaphore-of", &[("n", &n.to_string())]),
        SendStrategy::FireAndForget => t("lab-fire-forget"),
    }
}

/// One line per send, and the sends in flight, as SVG markup text (no handlers).
fn timeline(strategy: SendStrategy, r: &SendLabResult) -> Markup {
    let end = r.all_settled.max(1) as f64;
    let rows = r.traces.len().min(ROWS);
    let h = (rows as f64 * 4.0).max(40.0) + 20.0;
    let x = |t: i64| t as f64 / end * 440.0 + 36.0;
    let max_q = r.max_in_flight.max(1) as f64;
    let queue: String = r
        .in_flight
        .iter()
        .map(|(t, n)| format!("{},{} ", fmt(x(*t)), fmt(38.0 - *n as f64 / max_q * 34.0)))
        .collect();
    let mut out = Markup::new();
    markup!(
        out,
        "<svg viewBox=\"0 0 480 {}\" role=\"img\" class=\"lab-timeline\" aria-label=\"{}\">",
        fmt(h),
        tf(
            "lab-timeline-label",
            &[
                ("sends", &r.traces.len().to_string()),
                ("over", &format_duration(r.all_settled)),
            ]
        )
    );
    for (i, tr) in r.traces.iter().take(ROWS).enumerate() {
        let y = fmt(4.0 + i as f64 * 4.0);
        let colour = if !tr.stored {
            "#b0262c"
        } else if tr.attempts > 1 {
            "#9a5b00"
        } else {
            "#0a5ea8"
        };
        markup!(out,
            "<line x1=\"{}\" x2=\"{}\" y1=\"{3}\" y2=\"{3}\" stroke=\"{4}\" stroke-width=\"3\" stroke-dasharray=\"{}\"/>",
            fmt(x(tr.started)),
            fmt(x(tr.settled).max(x(tr.started) + 1.0)),
            if tr.observed { "" } else { "3 2" },
            y,
            colour
        );
    }
    markup!(out,
        "<text x=\"2\" y=\"{0}\" font-size=\"10\">t=0</text><text x=\"476\" y=\"{0}\" font-size=\"10\" text-anchor=\"end\">{1}</text></svg><figure class=\"metric\"><figcaption>{2}</figcaption><svg viewBox=\"0 0 480 42\" role=\"img\" aria-label=\"{2}\"><polyline points=\"{3}\" fill=\"none\" stroke=\"#6b3fa0\" stroke-width=\"1.6\"/></svg></figure>",
        fmt(h - 4.0),
        format_duration(r.all_settled),
        tf(
            "lab-in-flight",
            &[
                ("strategy", &label(strategy)),
                ("max", &r.max_in_flight.to_string())
            ]
        ),
        queue
    );
    out
}

/// The four strategies' figures, the chosen one's timeline and its first rejections, as markup.
fn results_markup(results: &[(SendStrategy, SendLabResult)], chosen: usize) -> Markup {
    let mut out = Markup::new();
    markup!(out,
        "<table id=\"lab-results\"><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>",
        t("lab-strategy-col"),
        t("lab-caller-waits"),
        t("lab-all-settled"),
        t("lab-most-in-flight"),
        t("lab-failures-seen"),
        t("lab-failures-unseen")
    );
    for (s, r) in results {
        markup!(out,
            "<tr data-strategy=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            s.id(),
            label(*s),
            format_duration(r.caller_done),
            format_duration(r.all_settled),
            r.max_in_flight,
            r.observed_failures,
            r.unobserved_failures
        );
    }
    markup!(out, "</tbody></table>");
    let Some((shown_strategy, shown)) = results.get(chosen) else {
        return out;
    };
    markup!(
        out,
        "<h3>{}</h3><p class=\"hint\">{}</p>",
        tf("lab-timeline-of", &[("strategy", &label(*shown_strategy))]),
        t("lab-timeline-hint")
    );
    out.push(&timeline(*shown_strategy, shown));
    let rejections: Vec<String> = shown
        .traces
        .iter()
        .filter_map(|tr| tr.rejection.as_ref().map(|r| (tr, r)))
        .take(8)
        .map(|(tr, r)| {
            let key = match (r.is_transient, tr.observed) {
                (true, true) => "lab-rejection-retried",
                (true, false) => "lab-rejection-retried-unseen",
                (false, true) => "lab-rejection-lost",
                (false, false) => "lab-rejection-lost-unseen",
            };
            tf(
                key,
                &[
                    ("send", &(tr.index + 1).to_string()),
                    ("error", r.error.name()),
                    ("tracking", &r.tracking_id),
                ],
            )
        })
        .collect();
    if !rejections.is_empty() {
        markup!(out, "<ul class=\"rejections\">");
        for r in &rejections {
            markup!(out, "<li>{}</li>", r);
        }
        markup!(out, "</ul>");
    }
    out
}

/// The strategy whose timeline the picker asks for (an index into [`strategies`]).
fn picked_strategy(picker: &NodeRef) -> usize {
    crate::form::select(picker)
        .parse::<usize>()
        .unwrap_or(0)
        .min(3)
}

#[function_component(SendLab)]
pub fn send_lab() -> Html {
    let refs = use_state(|| std::array::from_fn::<NodeRef, 8, _>(|_| NodeRef::default()));
    let [count, rtt, store, sem, busy, quota, missing, large] = (*refs).clone();
    {
        let first = [
            (count.clone(), "100"),
            (rtt.clone(), "70ms"),
            (store.clone(), "10ms"),
            (sem.clone(), "10"),
        ];
        use_effect_with((), move |_| crate::form::set_values(&first));
    }
    let strategy = use_node_ref();
    let spec = use_state(|| None::<Result<SendLabSpec, crate::form::FormError>>);
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
            let build = || -> Result<SendLabSpec, crate::form::FormError> {
                Ok(SendLabSpec {
                    count: n(&t("lab-count"), &count)?.max(1),
                    rtt: d(&t("lab-rtt"), &rtt)?,
                    store: d(&t("lab-store"), &store)?,
                    strategy: SendStrategy::Semaphore(n(&t("lab-semaphore"), &sem)?.max(1)),
                    injected: Injected {
                        server_busy_every: n(&t("lab-busy"), &busy)?,
                        quota_exceeded_every: n(&t("lab-quota"), &quota)?,
                        entity_not_found_every: n(&t("lab-missing"), &missing)?,
                        message_too_large_every: n(&t("lab-large"), &large)?,
                    },
                    retry_delay: 800,
                    seed: 1,
                })
            };
            chosen.set(picked_strategy(&strategy));
            spec.set(Some(build()));
        })
    };
    let body = match &*spec {
        None => {
            html! { <p class="hint">{t("lab-press-run")}</p> }
        }
        Some(Err(e)) => {
            html! { <p class="field-error" role="alert" id="lab-error">{e.message.clone()}</p> }
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
            results_markup(&results, *chosen).into_html()
        }
    };
    // The timeline shown follows the picker at once (a run's results are all four strategies').
    let pick = {
        let (chosen, strategy) = (chosen.clone(), strategy.clone());
        Callback::from(move |_: Event| {
            chosen.set(picked_strategy(&strategy));
        })
    };
    let options: Vec<(String, String)> = strategies(10)
        .iter()
        .enumerate()
        .map(|(i, s)| (i.to_string(), label(*s)))
        .collect();
    html! {
        <main class="lane sendlab" id="lab">
            <h1>{t("lab-title")}{t("lab-summary")}</h1>
            <form class="inline-form" {onsubmit} aria-label={t("lab-settings")}>
                {field("lab-count", &count, false, "text")}
                {field("lab-rtt", &rtt, false, "text")}
                {field("lab-store", &store, false, "text")}
                {field("lab-semaphore", &sem, false, "text")}
                {field("lab-busy", &busy, true, "text")}
                {field("lab-quota", &quota, true, "text")}
                {field("lab-missing", &missing, true, "text")}
                {field("lab-large", &large, true, "text")}
                <label onchange={pick}>{t("lab-show-timeline")}{" "}{choice(&strategy, "lab-strategy", &options)}</label>
                <button type="submit" class="primary" id="lab-run">{t("lab-run")}</button>
            </form>
            {body}
        </main>
    }
}
