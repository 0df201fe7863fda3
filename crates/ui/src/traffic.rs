//! Traffic: producers and consumer groups (started and stopped as scenario steps), and the list
//! of what is running. The engine runs them; these forms only build their settings.
use crate::form::parse::{dur, percent, real};
use crate::form::{check_field, choice_field, same, text_field, FormError, FormProps, Values};
use crate::form::{data_form, pairs};
use crate::i18n::{t, tf};
use crate::markup;
use crate::markup::Markup;
use crate::state::Action;
use sbp_scenario::Action as StepAction;
use sbp_scenario::*;
use yew::prelude::*;

fn both<A, B>(what: &str, a: Option<A>, b: Option<B>) -> Result<Option<(A, B)>, FormError> {
    match (a, b) {
        (Some(a), Some(b)) => Ok(Some((a, b))),
        (None, None) => Ok(None),
        _ => Err(tf("error-both", &[("what", what)]).into()),
    }
}

/// Fields: name, to, rate, TTL, prefix, burst every, burst size, spike at, spike for, spike
/// factor, stop after, schedule offset.
fn producer_step(
    v: &Values,
    _button: usize,
    _now: sbp_engine::time::Instant,
) -> Result<Action, FormError> {
    let burst = both(
        &t("producer-burst-every"),
        dur(&t("producer-burst-every"), v.get("producer-burst-every"))?,
        real(
            &t("producer-burst-size"),
            v.get("producer-burst-size"),
            1.0,
            f64::from(sbp_engine::limits::MAX_BURST),
        )?,
    )?
    .map(|(every, size)| BurstDef {
        every,
        size: size as u32,
    });
    let spike = match (
        dur(&t("producer-spike-from"), v.get("producer-spike-from"))?,
        dur(&t("producer-spike-for"), v.get("producer-spike-for"))?,
        real(
            &t("producer-spike-factor"),
            v.get("producer-spike-factor"),
            0.0,
            1_000.0,
        )?,
    ) {
        (Some(from), Some(duration), Some(factor)) => Some(SpikeDef {
            from,
            duration,
            factor,
        }),
        (None, None, None) => None,
        _ => return Err(t("error-spike").into()),
    };
    let p = ProducerDef {
        name: if v.get("producer-name").is_empty() {
            "producer".into()
        } else {
            v.get("producer-name").to_string()
        },
        to: v.get("producer-to").to_string(),
        rate: real(
            &t("producer-rate"),
            v.get("producer-rate"),
            0.0,
            sbp_engine::limits::MAX_RATE,
        )?
        .unwrap_or(0.0),
        ttl: dur(&t("producer-ttl"), v.get("producer-ttl"))?,
        message_id_prefix: Some(v.get("producer-prefix").to_string()).filter(|p| !p.is_empty()),
        burst,
        spike,
        max_messages: real(&t("producer-max"), v.get("producer-max"), 1.0, 1e9)?.map(|n| n as u64),
        schedule_offset: dur(&t("producer-schedule"), v.get("producer-schedule"))?,
        sessions: real(
            &t("producer-sessions"),
            v.get("producer-sessions"),
            1.0,
            1_000.0,
        )?
        .map(|n| n as u32),
        ..Default::default()
    };
    Ok(Action::Do(Box::new(Step::new(StepAction::StartProducer(
        p,
    )))))
}

pub fn producer_form(props: &FormProps) -> Html {
    let fields = vec![
        text_field("producer-name", "web", false),
        choice_field("producer-to", same(props.targets.clone())),
        text_field("producer-rate", "5", false),
        text_field("producer-ttl", "", true),
        text_field("producer-prefix", "", true),
        text_field("producer-burst-every", "", true),
        text_field("producer-burst-size", "", true),
        text_field("producer-spike-from", "", true),
        text_field("producer-spike-for", "", true),
        text_field("producer-spike-factor", "", true),
        text_field("producer-max", "", true),
        text_field("producer-schedule", "", true),
        text_field("producer-sessions", "", true),
    ];
    data_form(
        "producer-form",
        false,
        fields,
        vec!["producer-submit"],
        producer_step,
        props,
    )
}

/// Fields: name, from, instances, mode, processing kind, time, time max, abandon %, dead-letter
/// %, defer %, crash %, auto-renew, idempotent.
fn consumer_step(
    v: &Values,
    _button: usize,
    _now: sbp_engine::time::Instant,
) -> Result<Action, FormError> {
    let a = dur(&t("consumer-time"), v.get("consumer-time"))?.unwrap_or(Dur(1_000));
    let processing = match v.get("consumer-kind") {
        "uniform" => ProcessingDef::Uniform {
            min: a,
            max: dur(&t("consumer-time-max"), v.get("consumer-time-max"))?.unwrap_or(a),
        },
        "exponential" => ProcessingDef::Exponential { mean: a },
        _ => ProcessingDef::Fixed(a),
    };
    let c = ConsumerDef {
        name: if v.get("consumer-name").is_empty() {
            "consumers".into()
        } else {
            v.get("consumer-name").to_string()
        },
        from: v.get("consumer-from").to_string(),
        instances: real(
            &t("consumer-instances"),
            v.get("consumer-instances"),
            1.0,
            1_000.0,
        )?
        .map(|n| n as u32),
        mode: if v.get("consumer-mode") == "ReceiveAndDelete" {
            ModeDef::ReceiveAndDelete
        } else {
            ModeDef::PeekLock
        },
        processing: Some(processing),
        abandon: percent(&t("consumer-abandon"), v.get("consumer-abandon"))?,
        dead_letter: percent(&t("consumer-dead"), v.get("consumer-dead"))?,
        defer: percent(&t("consumer-defer"), v.get("consumer-defer"))?,
        crash: percent(&t("consumer-crash"), v.get("consumer-crash"))?,
        max_auto_lock_renewal: dur(&t("consumer-renew"), v.get("consumer-renew"))?,
        idempotent: v.get("consumer-idempotent") == "true",
        poll_interval: None,
        restart_delay: None,
    };
    Ok(Action::Do(Box::new(Step::new(StepAction::StartConsumers(
        c,
    )))))
}

pub fn consumer_form(props: &FormProps) -> Html {
    let fields = vec![
        text_field("consumer-name", "workers", false),
        choice_field("consumer-from", same(props.sources.clone())),
        text_field("consumer-instances", "2", false),
        choice_field(
            "consumer-mode",
            pairs(&[
                ("PeekLock", "mode-peeklock"),
                ("ReceiveAndDelete", "mode-receiveanddelete"),
            ]),
        ),
        choice_field(
            "consumer-kind",
            pairs(&[
                ("fixed", "proc-fixed"),
                ("uniform", "proc-uniform"),
                ("exponential", "proc-exponential"),
            ]),
        ),
        text_field("consumer-time", "1s", false),
        text_field("consumer-time-max", "", true),
        text_field("consumer-abandon", "", true),
        text_field("consumer-dead", "", true),
        text_field("consumer-defer", "", true),
        text_field("consumer-crash", "", true),
        text_field("consumer-renew", "", true),
        check_field("consumer-idempotent"),
    ];
    data_form(
        "consumer-form",
        false,
        fields,
        vec!["consumer-submit"],
        consumer_step,
        props,
    )
}

/// What is running, with a stop button each. Drawn as markup text, one click handler for the
/// list reading the button's `data-stop` (far less wasm than an element and a handler each).
pub fn actors(store: &crate::state::StateHandle) -> Html {
    let actors = store.sim.borrow().ns().actors();
    if actors.is_empty() {
        return html! {};
    }
    let mut items = Markup::new();
    for a in &actors {
        let kind = t(&format!("actor-{}", a.kind.name()));
        let state = t(if a.active {
            "actor-running"
        } else {
            "actor-stopped"
        });
        markup!(
            items,
            "<li><strong>{} {}</strong> → {} <span class=\"state\">{}</span><br/><small>{}</small>",
            kind,
            a.name,
            a.entity,
            state,
            a.summary.to_string()
        );
        if a.active {
            let label = tf("actor-stop-label", &[("kind", &kind), ("name", &a.name)]);
            markup!(
                items,
                "<button data-stop=\"{}\" data-kind=\"{}\" aria-label=\"{}\">{}</button>",
                a.name,
                a.kind.name(),
                label,
                t("actor-stop")
            );
        }
        markup!(items, "</li>");
    }
    let onclick = {
        let store = store.clone();
        Callback::from(move |e: MouseEvent| {
            let Some(button) = e.target_dyn_into::<web_sys::Element>() else {
                return;
            };
            let Some(name) = button.get_attribute("data-stop") else {
                return;
            };
            let step = if button.get_attribute("data-kind").as_deref() == Some("producer") {
                StepAction::StopProducer(name)
            } else {
                StepAction::StopConsumers(name)
            };
            store.dispatch(Action::Do(Box::new(Step::new(step))));
        })
    };
    html! {
        <section class="card-form" id="actors" aria-label={t("actors-label")} {onclick}>
            <h2>{t("actors")}</h2>
            <ul class="actors">{items.into_html()}</ul>
        </section>
    }
}
