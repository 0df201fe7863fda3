//! Traffic: producers and consumer groups (started and stopped as scenario steps), and the list
//! of what is running. The engine runs them; these forms only build their settings.
use crate::form::parse::{dur, percent, real};
use crate::form::{
    check_field, choice_field, same, text_field, DataForm, FormProps, Parse, Values,
};
use crate::state::Action;
use sbp_scenario::Action as StepAction;
use sbp_scenario::*;
use yew::prelude::*;

fn both<A, B>(what: &str, a: Option<A>, b: Option<B>) -> Result<Option<(A, B)>, String> {
    match (a, b) {
        (Some(a), Some(b)) => Ok(Some((a, b))),
        (None, None) => Ok(None),
        _ => Err(format!("{what}: give both values, or neither")),
    }
}

/// Fields: name, to, rate, TTL, prefix, burst every, burst size, spike at, spike for, spike
/// factor, stop after, schedule offset.
fn producer_step(
    v: &Values,
    _button: usize,
    _now: sbp_engine::time::Instant,
) -> Result<Action, String> {
    let burst = both(
        "Burst",
        dur("Burst every", v.get("producer-burst-every"))?,
        real(
            "Burst size",
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
        dur("Spike at", v.get("producer-spike-from"))?,
        dur("Spike for", v.get("producer-spike-for"))?,
        real("Spike factor", v.get("producer-spike-factor"), 0.0, 1_000.0)?,
    ) {
        (Some(from), Some(duration), Some(factor)) => Some(SpikeDef {
            from,
            duration,
            factor,
        }),
        (None, None, None) => None,
        _ => return Err("Spike: give when, how long and the factor".into()),
    };
    let p = ProducerDef {
        name: if v.get("producer-name").is_empty() {
            "producer".into()
        } else {
            v.get("producer-name").to_string()
        },
        to: v.get("producer-to").to_string(),
        rate: real(
            "Messages per second",
            v.get("producer-rate"),
            0.0,
            sbp_engine::limits::MAX_RATE,
        )?
        .unwrap_or(0.0),
        ttl: dur("TimeToLive", v.get("producer-ttl"))?,
        message_id_prefix: Some(v.get("producer-prefix").to_string()).filter(|p| !p.is_empty()),
        burst,
        spike,
        max_messages: real("Stop after", v.get("producer-max"), 1.0, 1e9)?.map(|n| n as u64),
        schedule_offset: dur("Schedule each ahead by", v.get("producer-schedule"))?,
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
    ];
    html! {
        <DataForm id="producer-form" {fields} buttons={vec!["producer-submit"]}
            parse={producer_step as Parse} dispatch={props.dispatch.clone()} sim={props.sim.clone()} />
    }
}

/// Fields: name, from, instances, mode, processing kind, time, time max, abandon %, dead-letter
/// %, defer %, crash %, auto-renew, idempotent.
fn consumer_step(
    v: &Values,
    _button: usize,
    _now: sbp_engine::time::Instant,
) -> Result<Action, String> {
    let a = dur("Processing time", v.get("consumer-time"))?.unwrap_or(Dur(1_000));
    let processing = match v.get("consumer-kind") {
        "uniform" => ProcessingDef::Uniform {
            min: a,
            max: dur("Processing max", v.get("consumer-time-max"))?.unwrap_or(a),
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
        instances: real("How many", v.get("consumer-instances"), 1.0, 1_000.0)?.map(|n| n as u32),
        mode: if v.get("consumer-mode") == "ReceiveAndDelete" {
            ModeDef::ReceiveAndDelete
        } else {
            ModeDef::PeekLock
        },
        processing: Some(processing),
        abandon: percent("Abandon %", v.get("consumer-abandon"))?,
        dead_letter: percent("Dead-letter %", v.get("consumer-dead"))?,
        defer: percent("Defer %", v.get("consumer-defer"))?,
        crash: percent("Crash %", v.get("consumer-crash"))?,
        max_auto_lock_renewal: dur("Auto lock renewal", v.get("consumer-renew"))?,
        idempotent: v.get("consumer-idempotent") == "true",
        poll_interval: None,
        restart_delay: None,
    };
    Ok(Action::Do(Box::new(Step::new(StepAction::StartConsumers(
        c,
    )))))
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

pub fn consumer_form(props: &FormProps) -> Html {
    let fields = vec![
        text_field("consumer-name", "workers", false),
        choice_field("consumer-from", same(props.sources.clone())),
        text_field("consumer-instances", "2", false),
        choice_field(
            "consumer-mode",
            vec![
                pair("PeekLock", "PeekLock"),
                pair("ReceiveAndDelete", "ReceiveAndDelete"),
            ],
        ),
        choice_field(
            "consumer-kind",
            vec![
                pair("fixed", "fixed"),
                pair("uniform", "uniform min..max"),
                pair("exponential", "exponential (mean)"),
            ],
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
    html! {
        <DataForm id="consumer-form" {fields} buttons={vec!["consumer-submit"]}
            parse={consumer_step as Parse} dispatch={props.dispatch.clone()} sim={props.sim.clone()} />
    }
}

/// What is running, with a stop button each.
#[function_component(Actors)]
pub fn actors(props: &crate::state::SlowProps) -> Html {
    let store = &props.store;
    let actors = store.sim.borrow().ns.actors();
    if actors.is_empty() {
        return html! {};
    }
    html! {
        <section class="card-form" id="actors" aria-label="Running producers and consumers">
            <h2>{"Running"}</h2>
            <ul class="actors">
            { for actors.into_iter().map(|a| {
                let stop = {
                    let store = store.clone();
                    let (kind, name) = (a.kind, a.name.clone());
                    Callback::from(move |_: MouseEvent| {
                        let step = if kind == sbp_engine::ActorKind::Producer {
                            Step::new(StepAction::StopProducer(name.clone()))
                        } else {
                            Step::new(StepAction::StopConsumers(name.clone()))
                        };
                        store.dispatch(Action::Do(Box::new(step)));
                    })
                };
                html! {
                    <li>
                        <strong>{format!("{} {}", a.kind.name(), a.name)}</strong>{format!(" → {} ", a.entity)}
                        <span class="state">{if a.active { "running" } else { "stopped" }}</span><br/>
                        <small>{a.summary.clone()}</small>
                        if a.active { <button onclick={stop} aria-label={format!("Stop {} {}", a.kind.name(), a.name)}>{"Stop"}</button> }
                    </li>
                }
            }) }
            </ul>
        </section>
    }
}
