//! The inspector: the selected message under the SDK's names, as peek shows it and as a locked
//! receive shows it (TTL-10, MSG-02), and its history with the rule behind each event.
use crate::form::field;
use sbp_engine::time::{format_duration, format_instant, MAX_VALUE};
use sbp_engine::{MessageView, Perspective};
use yew::prelude::*;

fn rows(sim: &sbp_scenario::Simulation, v: &MessageView) -> Vec<(&'static str, String)> {
    let t = |at: i64| {
        if at == sbp_engine::time::NEVER {
            "never (DateTimeOffset.MaxValue)".to_string()
        } else {
            format!("{} ({})", sim.utc(at), format_instant(at))
        }
    };
    let opt_t = |at: Option<i64>| at.map(t).unwrap_or_else(|| "-".into());
    vec![
        ("SequenceNumber", v.sequence_number.to_string()),
        ("MessageId", v.message_id.clone()),
        ("State", v.state.name().to_string()),
        ("EnqueuedTime", t(v.enqueued_time)),
        (
            "TimeToLive",
            if v.time_to_live >= MAX_VALUE {
                "MaxValue".into()
            } else {
                format_duration(v.time_to_live)
            },
        ),
        ("ExpiresAt", t(v.expires_at)),
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
        (
            "ApplicationProperties",
            v.application_properties
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        ("Body", v.body.clone()),
    ]
}

#[function_component(Inspector)]
pub fn inspector(props: &crate::state::SlowProps) -> Html {
    let store = &props.store;
    let Some((path, seq)) = store.selected.clone() else {
        return html! { <section class="inspector" id="inspector"><h2>{"Inspector"}</h2><p class="hint">{"Select a message card to see its properties and why it is where it is."}</p></section> };
    };
    let sim = store.sim.borrow();
    let peek = sim.ns.message(&path, seq, Perspective::Peek);
    let recv = sim.ns.message(&path, seq, Perspective::Receive);
    let q = sim.ns.resolve(&path).ok();
    let history: Vec<Html> = sim
        .ns
        .log()
        .iter()
        .filter(|e| e.seq == seq && q.is_some_and(|q| q.entity == e.entity))
        .map(|e| {
            let rule = e.rule.map(|r| html! { <abbr title={r.summary()}>{r.id()}</abbr> }).unwrap_or_else(|| html! {"-"});
            let why = e.rule.map(|r| r.summary()).unwrap_or("");
            html! { <li><span class="t">{format_instant(e.at)}</span>{" "}<strong>{e.kind.name()}</strong>{" "}{rule}{": "}{sim.ns.describe(e)}<br/><small class="why">{why}</small></li> }
        })
        .collect();
    html! {
        <section class="inspector" id="inspector" aria-label="Inspector">
            <h2>{format!("Inspector: {path} #{seq}")}</h2>
            if let (Some(p), Some(r)) = (&peek, &recv) {
                <table>
                    <thead><tr><th>{"Property"}</th><th>{"As peek shows it"}</th><th>{"As a locked receive shows it"}</th></tr></thead>
                    <tbody>
                    { for rows(&sim, p).into_iter().zip(rows(&sim, r)).map(|((name, a), (_, b))| html! {
                        <tr><th scope="row">{name}</th><td>{a}</td><td>{b}</td></tr>
                    }) }
                    </tbody>
                </table>
                <p class="hint">{"DeliveryCount follows .NET: 1 on the first locked delivery; peek shows the raw count. The Python and JS SDKs show the raw count (one less) (MSG-02). With only the entity's default TTL, peek shows ExpiresAt MaxValue (TTL-10)."}</p>
            } else {
                <p>{"This message is no longer here (completed, expired, moved or deleted). Its history:"}</p>
            }
            if let Some(holder) = recv.as_ref().and_then(|r| r.lock_holder.clone()).filter(|_| q.is_some_and(|q| !q.dlq)) {
                <DeadLetterForm store={store.clone()} path={path.clone()} seq={seq} holder={holder} />
            }
            <h3>{"History"}</h3>
            <ol class="history" id="history">{ for history }</ol>
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct DeadLetterProps {
    pub store: crate::state::Store,
    pub path: String,
    pub seq: u64,
    pub holder: String,
}

/// RCV-05: dead-letter the selected locked message with a reason and description of your own.
#[function_component(DeadLetterForm)]
pub fn dead_letter_form(props: &DeadLetterProps) -> Html {
    let reason = use_node_ref();
    let description = use_node_ref();
    let onsubmit = {
        let (reason, description) = (reason.clone(), description.clone());
        let store = props.store.clone();
        let def = sbp_scenario::SettleDef {
            from: props.path.clone(),
            seq: props.seq,
            receiver: props.holder.clone(),
            reason: None,
            description: None,
            message: None,
        };
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let value = |r: &NodeRef| {
                r.cast::<web_sys::HtmlInputElement>()
                    .map(|i| i.value())
                    .filter(|v| !v.trim().is_empty())
            };
            let settle = sbp_scenario::SettleDef {
                reason: value(&reason),
                description: value(&description),
                ..def.clone()
            };
            store.dispatch(crate::state::Action::Do(Box::new(sbp_scenario::Step::new(
                sbp_scenario::Action::DeadLetter(settle),
            ))));
        })
    };
    html! {
        <form class="inline-form" {onsubmit} aria-label="Dead-letter with a reason">
            {field("DeadLetterReason ", "dl-reason", &reason, "ValidationFailed", "", "text")}
            {field("DeadLetterErrorDescription ", "dl-description", &description, "The order has no customer id.", "", "text")}
            <button type="submit" id="dl-button">{format!("Dead-letter #{} as {}", props.seq, props.holder)}</button>
        </form>
    }
}

/// What the last peek or receive returned, as that call showed it (TTL-10, MSG-02).
#[function_component(LastResult)]
pub fn last_result(props: &crate::state::SlowProps) -> Html {
    let sim = props.store.sim.borrow();
    if sim.last_messages.is_empty() {
        return html! {};
    }
    html! {
        <section class="inspector" id="last-result" aria-label="Last peek or receive">
            <h2>{"Last peek / receive returned"}</h2>
            <table>
                <thead><tr><th>{"Seq"}</th><th>{"MessageId"}</th><th>{"DeliveryCount"}</th><th>{"ExpiresAt"}</th><th>{"LockedUntil"}</th></tr></thead>
                <tbody>
                { for sim.last_messages.iter().take(50).map(|m| html! {
                    <tr>
                        <td>{format!("#{}", m.sequence_number)}</td><td>{m.message_id.clone()}</td><td>{m.delivery_count}</td>
                        <td>{format_instant(m.expires_at)}</td><td>{m.locked_until.map(format_instant).unwrap_or_else(|| "-".into())}</td>
                    </tr>
                }) }
                </tbody>
            </table>
        </section>
    }
}

/// The rules (docs/RULES.md), and what the playground chose where no source decides.
/// The rule list (static: a plain function).
pub fn rules_panel() -> Html {
    html! {
        <details class="inspector" id="rules">
            <summary>{"Rules and the playground's choices"}</summary>
            <p><strong>{"TTL expiry and MaxDeliveryCount on the same lock release: "}</strong>
                {"MaxDeliveryCount wins. The release is a failed delivery, counted and checked first (MaxDeliveryCountExceeded)."}</p>
            <p><strong>{"Renewing the lock of a nominally expired message: "}</strong>
                {"allowed. Expiry does not touch a locked message (TTL-09), so the holder may keep it."}</p>
            <p>{"LockDuration defaults to 30 s as in the source article (the current Azure API creates 60 s). Every lock that ends without settlement counts as a failed delivery; defer counts one too."}</p>
            <p>{"A forwarded message starts afresh in its target (DeliveryCount 0, FWD-01); forwarding out of a dead-letter queue counts as a hop, so every loop ends at the hop limit (FWD-02)."}</p>
            <ul class="rule-list">
                { for sbp_engine::Rule::ALL.iter().map(|r| html! { <li><strong>{r.id()}</strong>{" "}{r.summary()}</li> }) }
            </ul>
        </details>
    }
}
