//! The inspector: the selected message under the SDK's names, as peek shows it and as a locked
//! receive shows it (TTL-10, MSG-02), and its history with the rule behind each event.
use crate::i18n::{event_text, t, tf};
use crate::markup;
use crate::markup::rule_abbr;
use crate::markup::Markup;
use sbp_engine::time::{format_duration, format_instant, MAX_VALUE};
use sbp_engine::{MessageView, Perspective};
use yew::prelude::*;

/// The words of a property's name: `DeadLetterReason` is `Dead`, `Letter`, `Reason`.
fn words_of(name: &str) -> impl Iterator<Item = &str> {
    let starts: Vec<usize> = name
        .char_indices()
        .filter(|&(i, c)| i == 0 || c.is_ascii_uppercase())
        .map(|(i, _)| i)
        .chain([name.len()])
        .collect();
    (0..starts.len() - 1).map(move |k| &name[starts[k]..starts[k + 1]])
}

fn rows(sim: &sbp_scenario::Simulation, v: &MessageView) -> Vec<(&'static str, String)> {
    let when = |at: i64| {
        if at == sbp_engine::time::NEVER {
            t("never-maxvalue")
        } else {
            format!("{} ({})", sim.utc(at), format_instant(at))
        }
    };
    let opt_t = |at: Option<i64>| at.map(when).unwrap_or_else(|| "-".into());
    vec![
        ("SequenceNumber", v.sequence_number.to_string()),
        (
            "EnqueuedSequenceNumber",
            v.enqueued_sequence_number.to_string(),
        ),
        ("MessageId", v.message_id.clone()),
        ("State", v.state.name().to_string()),
        ("EnqueuedTime", when(v.enqueued_time)),
        (
            "TimeToLive",
            if v.time_to_live >= MAX_VALUE {
                "MaxValue".into()
            } else {
                format_duration(v.time_to_live)
            },
        ),
        ("ExpiresAt", when(v.expires_at)),
        ("ScheduledEnqueueTime", opt_t(v.scheduled_enqueue_time)),
        ("LockedUntil", opt_t(v.locked_until)),
        (
            "LockToken",
            v.lock_token.clone().unwrap_or_else(|| "-".into()),
        ),
        ("DeliveryCount", v.delivery_count.to_string()),
        (
            "DeadLetterReason",
            v.dead_letter_reason.clone().unwrap_or_else(|| "-".into()),
        ),
        (
            "DeadLetterErrorDescription",
            v.dead_letter_error_description
                .clone()
                .unwrap_or_else(|| "-".into()),
        ),
        (
            "DeadLetterSource",
            v.dead_letter_source.clone().unwrap_or_else(|| "-".into()),
        ),
        ("Subject", v.subject.clone().unwrap_or_else(|| "-".into())),
        // FLT-01: the rule that gave a subscription this copy (the playground's, not an SDK's).
        (
            "RuleName",
            v.rule_name.clone().unwrap_or_else(|| "-".into()),
        ),
        (
            "ApplicationProperties",
            v.application_properties
                .iter()
                .map(|(k, v)| format!("{k} = {}", v.described()))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        ("Body", body_text(&v.body)),
    ]
}

/// A body as the inspector says it: text, or its size and base64, with the AMQP section it came
/// in when that is not `data`.
fn body_text(body: &sbp_engine::Body) -> String {
    use sbp_engine::body::Section;
    let size = || body.len().to_string();
    let bytes = || {
        tf(
            "body-bytes",
            &[("size", &size()), ("base64", &body.base64())],
        )
    };
    let shown = match (body.section, body.text()) {
        (Section::Data, Some(text)) => text.to_string(),
        (Section::Data, None) => bytes(),
        (Section::Value, Some(text)) => tf("body-value", &[("text", text)]),
        (Section::Value, None) => tf("body-value", &[("text", &bytes())]),
        (Section::Sequence, _) => tf(
            "body-sequence",
            &[("size", &size()), ("base64", &body.base64())],
        ),
    };
    // A body of up to 256 KB (a run of `sbp serve`) is shown by its start: the card stays
    // readable and quick to draw.
    if shown.len() <= SHOWN_BODY {
        return shown;
    }
    let mut end = SHOWN_BODY;
    while !shown.is_char_boundary(end) {
        end -= 1;
    }
    tf(
        "body-clipped",
        &[
            ("shown", &shown[..end]),
            ("first", &end.to_string()),
            ("size", &shown.len().to_string()),
        ],
    )
}

/// The most of a body's text the inspector shows.
const SHOWN_BODY: usize = 4096;

/// The message's properties as peek and as a locked receive show them, as markup text; the
/// property a prediction asks about (`hidden`), and the application properties where the
/// service copied it, show as "?" until the learner answers.
fn properties_table(
    sim: &sbp_scenario::Simulation,
    peek: &MessageView,
    recv: &MessageView,
    hidden: Option<&str>,
) -> Markup {
    let mut out = Markup::new();
    markup!(
        out,
        "<div class=\"table-scroll\" tabindex=\"0\" role=\"region\" aria-label=\"{}\"><table><thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>",
        t("inspector"),
        t("property"),
        t("as-peek"),
        t("as-receive")
    );
    let named = hidden.map(|property| format!("{property} ="));
    for ((name, a), (_, b)) in rows(sim, peek).into_iter().zip(rows(sim, recv)) {
        let hide = hidden == Some(name)
            || (name == "ApplicationProperties"
                && named
                    .as_deref()
                    .is_some_and(|n| a.contains(n) || b.contains(n)));
        let (a, b) = if hide {
            ("?".to_string(), "?".to_string())
        } else {
            (a, b)
        };
        markup!(out, "<tr><th scope=\"row\">");
        // On a phone a long name (DeadLetterErrorDescription) wraps between its words.
        for (i, word) in words_of(name).enumerate() {
            if i > 0 {
                markup!(out, "<wbr>");
            }
            markup!(out, "{}", word);
        }
        markup!(out, "</th><td>{}</td><td>{}</td></tr>", a, b);
    }
    markup!(out, "</tbody></table></div>");
    out
}

/// The selected message. A plain function, drawn inside the slow panels' component (which
/// follows a running clock every few hundred ms).
pub fn inspector(store: &crate::state::StateHandle) -> Html {
    let Some((path, seq)) = store.selected.clone() else {
        return html! { <section class="inspector" id="inspector"><h2>{t("inspector")}</h2><p class="hint">{t("inspector-hint")}</p></section> };
    };
    let sim = store.sim.borrow();
    let masked = crate::lesson::masked(store).filter(|m| m.message(&path, seq));
    // What a prediction asks is kept off the screen until it is answered: the property's row,
    // an application property of that name (the service copies DeadLetterReason there), and
    // the words of the message's events.
    let say = |e: &sbp_engine::Event| {
        if masked.is_some() {
            t("predict-hidden")
        } else {
            event_text(sim.ns(), e)
        }
    };
    let peek = sim.ns().message(&path, seq, Perspective::Peek);
    let recv = sim.ns().message(&path, seq, Perspective::Receive);
    let q = sim.ns().resolve(&path).ok();
    // The message's events (in its queue and that queue's DLQ), for its life line and history.
    let events: Vec<&sbp_engine::Event> = match q {
        Some(q) => sim
            .ns()
            .log()
            .iter()
            .filter(|e| e.seq == seq && e.entity == q.entity)
            .collect(),
        None => Vec::new(),
    };
    // The history as markup text (no handlers).
    let mut history = Markup::new();
    markup!(history, "<ol class=\"history\" id=\"history\">");
    for e in &events {
        let why = e
            .rule
            .filter(|_| masked.is_none())
            .map(crate::i18n::rule_summary)
            .unwrap_or_default();
        markup!(
            history,
            "<li><span class=\"t\">{}</span> <strong>{}</strong> ",
            format_instant(e.at),
            e.kind.name()
        );
        match e.rule {
            Some(rule) => history.push(&rule_abbr(rule)),
            None => markup!(history, "-"),
        }
        markup!(
            history,
            ": {}<br/><small class=\"why\">{}</small></li>",
            say(e),
            why
        );
    }
    markup!(history, "</ol>");
    html! {
        <section class="inspector" id="inspector" aria-label={t("inspector")}>
            <h2>{tf("inspector-of", &[("path", &path), ("seq", &seq.to_string())])}</h2>
            if let (Some(p), Some(r)) = (&peek, &recv) {
                {properties_table(&sim, p, r, masked.as_ref().map(|m| m.property.as_str())).into_html()}
                <p class="hint">{t("inspector-note")}</p>
            } else {
                <p>{t("inspector-gone")}</p>
            }
            if let Some(holder) = recv.as_ref().and_then(|r| r.lock_holder.clone()).filter(|_| q.is_some_and(|q| !q.dlq)) {
                {dead_letter_form(store, &path, seq, &holder)}
            }
            <h3>{t("life")}</h3>
            {life_line(store, &sim, &events, recv.as_ref().or(peek.as_ref()), &say)}
            <h3>{t("history")}</h3>
            {history.into_html()}
        </section>
    }
}

/// RCV-05: dead-letter the selected locked message with a reason and description of your own
/// (left empty: the examples the fields show). A plain function: its inputs' refs are made with
/// each drawing, and the form's handler of that drawing reads them.
fn dead_letter_form(store: &crate::state::StateHandle, path: &str, seq: u64, holder: &str) -> Html {
    let example = t("dl-description-example");
    let (reason, description) = (NodeRef::default(), NodeRef::default());
    let onsubmit = {
        let (reason, description) = (reason.clone(), description.clone());
        let store = store.clone();
        let example = example.clone();
        let def = sbp_scenario::SettleDef {
            from: path.to_string(),
            seq,
            receiver: holder.to_string(),
            reason: None,
            description: None,
            message: None,
        };
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let value = |node: &NodeRef, or: &str| {
                let typed = node
                    .cast::<web_sys::HtmlInputElement>()
                    .map(|i| i.value().trim().to_string())
                    .unwrap_or_default();
                Some(if typed.is_empty() {
                    or.to_string()
                } else {
                    typed
                })
            };
            let settle = sbp_scenario::SettleDef {
                reason: value(&reason, "ValidationFailed"),
                description: value(&description, &example),
                ..def.clone()
            };
            let lane = crate::browser::lane_selector(
                sbp_engine::namespace::split_queue_path(&settle.from).0,
            );
            store.dispatch(crate::state::Action::Do(Box::new(sbp_scenario::Step::new(
                sbp_scenario::Action::DeadLetter(settle),
            ))));
            // The form goes with the lock: the focus goes to the message, now in the DLQ.
            crate::browser::focus_soon(vec![
                format!("{lane} .dlq .card[data-seq=\"{seq}\"] .card-body"),
                lane,
            ]);
        })
    };
    html! {
        <form class="inline-form" {onsubmit} aria-label={t("dl-form")}>
            <label>{t("dl-reason")}{" "}<input id="dl-reason" ref={reason} type="text" placeholder="ValidationFailed" /></label>
            <label>{t("dl-description")}{" "}<input id="dl-description" ref={description} type="text" placeholder={example} /></label>
            <button type="submit" id="dl-button">{tf("dl-button", &[("seq", &seq.to_string()), ("receiver", holder)])}</button>
        </form>
    }
}

/// The rules (docs/RULES.md), and what the playground chose where no source decides: the
/// catalog's `rule-<id>` and `choice-<n>` texts.
pub fn rules_panel() -> Html {
    html! {
        <details class="inspector" id="rules">
            <summary>{t("rules-title")}</summary>
            {rules_markup().into_html()}
        </details>
    }
}

/// How many choices the catalogs explain (`choice-1` ...).
pub const CHOICES: usize = 5;

/// The playground's choices and the rule list, as markup text.
fn rules_markup() -> Markup {
    let mut out = Markup::new();
    for i in 1..=CHOICES {
        markup!(out, "<p>{}</p>", t(&format!("choice-{i}")));
    }
    markup!(out, "<ul class=\"rule-list\">");
    for rule in sbp_engine::Rule::ALL {
        markup!(
            out,
            "<li><strong>{}</strong> {}</li>",
            rule.id(),
            crate::i18n::rule_summary(*rule)
        );
    }
    markup!(out, "</ul>");
    out
}

/// The life line's label rows (baselines: two above the axis, one below it; ExpiresAt's label
/// is below them all).
const LABEL_ROWS: [f64; 3] = [12.0, 24.0, 56.0];
/// A label's width per character (9px text, a rule id's letters and digits).
const LABEL_CHAR: f64 = 5.6;

/// The message's life on one line: each event a mark at its instant naming its rule, each lock
/// a span from its delivery to its settlement or lapse, its ExpiresAt; hovering a mark shows the
/// event, clicking it moves the clock there. Drawn as SVG text; the click is read from `data-at`.
/// The marks are no Tab stops: the history under the line says each event, and the timeline
/// moves the clock from the keyboard.
fn life_line(
    store: &crate::state::StateHandle,
    sim: &sbp_scenario::Simulation,
    events: &[&sbp_engine::Event],
    view: Option<&sbp_engine::MessageView>,
    say: &dyn Fn(&sbp_engine::Event) -> String,
) -> Html {
    use crate::markup::fmt;
    use sbp_engine::EventKind;
    let now = sim.now();
    let Some(first) = events.first() else {
        return Html::default();
    };
    let expires = view
        .map(|v| v.effective_expires_at)
        .filter(|&t| t < sbp_engine::time::NEVER);
    let start = first.at;
    let last = events.last().map_or(start, |e| e.at);
    let end = [Some(now), Some(last), expires]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(start)
        .max(start + 1);
    const W: f64 = 460.0;
    let x = |t: i64| 10.0 + (t - start) as f64 / (end - start) as f64 * (W - 20.0);
    let mut out = Markup::new();
    markup!(out,
        "<svg class=\"life\" id=\"life-line\" viewBox=\"0 0 460 74\" role=\"img\" aria-label=\"{}\"><line class=\"axis\" x1=\"10\" y1=\"36\" x2=\"450\" y2=\"36\"/>",
        t("life-label")
    );
    // Lock spans: from a delivery to what ended it (or LockedUntil while it holds).
    let mut open: Option<(i64, i64)> = None;
    let mut spans = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::Locked { locked_until, .. } => open = Some((e.at, *locked_until)),
            EventKind::LockRenewed { locked_until, .. } => {
                if let Some(o) = open.as_mut() {
                    o.1 = *locked_until;
                }
            }
            EventKind::Completed { .. }
            | EventKind::Abandoned { .. }
            | EventKind::Released { .. }
            | EventKind::Deferred { .. }
            | EventKind::LockLapsed
            | EventKind::LockLost { .. }
            | EventKind::DeadLettered { .. }
            | EventKind::Forwarded { .. } => {
                if let Some((from, _)) = open.take() {
                    spans.push((from, e.at));
                }
            }
            _ => {}
        }
    }
    if let Some((from, until)) = open {
        spans.push((from, until.min(now.max(from))));
    }
    for (from, to) in spans {
        markup!(out,
            "<rect class=\"lock-span\" x=\"{}\" y=\"30\" width=\"{}\" height=\"12\"><title>{}</title></rect>",
            fmt(x(from)),
            fmt((x(to) - x(from)).max(1.0)),
            tf("locked-span", &[("from", &format_instant(from)), ("to", &format_instant(to))])
        );
    }
    if let Some(at) = expires {
        markup!(out,
            "<g class=\"mark expires\" data-at=\"{2}\"><line x1=\"{0}\" y1=\"14\" x2=\"{0}\" y2=\"58\"/><text x=\"{0}\" y=\"70\">ExpiresAt</text><title>ExpiresAt {1} (TTL-01)</title></g>",
            fmt(x(at)),
            format_instant(at),
            at
        );
    }
    markup!(
        out,
        "<line class=\"now\" x1=\"{0}\" y1=\"22\" x2=\"{0}\" y2=\"50\"/>",
        fmt(x(now.min(end)))
    );
    // Each label goes on the first of three rows where it overlaps none before it; a label
    // that fits on none is left out (its mark keeps its title, and the history lists it).
    let mut rows_end = [f64::NEG_INFINITY; LABEL_ROWS.len()];
    for e in events {
        let rule = e.rule.map(|r| r.id()).unwrap_or("");
        let at = x(e.at);
        // A label near an end is anchored inward, so that it is not cut by the frame.
        let width = rule.chars().count() as f64 * LABEL_CHAR;
        let (anchor, left) = match at {
            left if left < 40.0 => ("start", left),
            right if right > W - 40.0 => ("end", right - width),
            middle => ("middle", middle - width / 2.0),
        };
        let row = (!rule.is_empty())
            .then(|| rows_end.iter().position(|end| *end + 3.0 <= left))
            .flatten();
        if let Some(row) = row {
            rows_end[row] = left + width;
        }
        markup!(
            out,
            "<g class=\"mark {}\" data-at=\"{}\"><circle cx=\"{}\" cy=\"36\" r=\"5\"/>",
            e.kind.name(),
            e.at,
            fmt(at)
        );
        if let Some(row) = row {
            markup!(
                out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>",
                fmt(at),
                fmt(LABEL_ROWS[row]),
                anchor,
                rule
            );
        }
        markup!(
            out,
            "<title>{} {}{}: {}</title></g>",
            format_instant(e.at),
            e.kind.name(),
            if rule.is_empty() {
                String::new()
            } else {
                format!(" ({rule})")
            },
            say(e)
        );
    }
    markup!(out, "</svg>");
    let onclick = {
        let store = store.clone();
        Callback::from(move |e: MouseEvent| {
            let at = e
                .target_dyn_into::<web_sys::Element>()
                .and_then(|t| t.closest("[data-at]").ok().flatten())
                .and_then(|m| m.get_attribute("data-at"))
                .and_then(|a| a.parse::<i64>().ok());
            if let Some(at) = at {
                store.dispatch(crate::state::Action::Seek(at));
            }
        })
    };
    html! {
        <div class="life-line" {onclick} title={t("life-click")}>
            {out.into_html()}
        </div>
    }
}
