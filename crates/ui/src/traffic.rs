//! Traffic: producers and consumer groups (started and stopped as scenario steps), and the list
//! of what is running. The engine runs them; this only builds their settings.
use crate::actions::FormProps;
use crate::form::*;
use crate::state::Action;
use sbp_scenario::*;
use yew::prelude::*;

fn percent(field: &str, r: &NodeRef) -> Result<f64, String> {
    Ok(real(field, r, 0.0, 100.0)?.unwrap_or(0.0) / 100.0)
}

#[function_component(ProducerForm)]
pub fn producer_form(props: &FormProps) -> Html {
    let dispatch = props.dispatch.clone();
    // Stable element refs across renders.
    let refs = use_state(|| std::array::from_fn::<NodeRef, 11, _>(|_| NodeRef::default()));
    let error = use_state(|| None::<String>);
    let [name, to, rate, ttl, prefix, burst_every, burst_size, spike_from, spike_for, spike_factor, max] =
        (*refs).clone();
    let onsubmit = {
        let (
            name,
            to,
            rate,
            ttl,
            prefix,
            burst_every,
            burst_size,
            spike_from,
            spike_for,
            spike_factor,
            max,
        ) = (
            name.clone(),
            to.clone(),
            rate.clone(),
            ttl.clone(),
            prefix.clone(),
            burst_every.clone(),
            burst_size.clone(),
            spike_from.clone(),
            spike_for.clone(),
            spike_factor.clone(),
            max.clone(),
        );
        let error = error.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let build = || -> Result<ProducerDef, String> {
                let burst = match (
                    dur("Burst every", &burst_every)?,
                    real("Burst size", &burst_size, 1.0, 100_000.0)?,
                ) {
                    (Some(every), Some(size)) => Some(BurstDef {
                        every,
                        size: size as u32,
                    }),
                    (None, None) => None,
                    _ => return Err("Burst: give both an interval and a size".into()),
                };
                let spike = match (
                    dur("Spike at", &spike_from)?,
                    dur("Spike for", &spike_for)?,
                    real("Spike factor", &spike_factor, 0.0, 1_000.0)?,
                ) {
                    (Some(from), Some(duration), Some(factor)) => Some(SpikeDef {
                        from,
                        duration,
                        factor,
                    }),
                    (None, None, None) => None,
                    _ => return Err("Spike: give when, how long and the factor".into()),
                };
                let name = text(&name);
                Ok(ProducerDef {
                    name: if name.is_empty() {
                        "producer".into()
                    } else {
                        name
                    },
                    to: select(&to),
                    rate: real("Rate", &rate, 0.0, 100_000.0)?.unwrap_or(0.0),
                    burst,
                    spike,
                    ttl: dur("TTL", &ttl)?,
                    message_id_prefix: Some(text(&prefix)).filter(|p| !p.is_empty()),
                    max_messages: real("Stop after", &max, 1.0, 1e9)?.map(|n| n as u64),
                    ..Default::default()
                })
            };
            match build() {
                Ok(p) => {
                    error.set(None);
                    dispatch.dispatch(Action::Do(Box::new(Step {
                        start_producer: Some(p),
                        ..Default::default()
                    })));
                }
                Err(m) => error.set(Some(m)),
            }
        })
    };
    html! {
        <form class="card-form" id="producer-form" {onsubmit} aria-label="Start a producer">
            <h2>{"Producer"}</h2>
            {field("Name ", "producer-name", &name, "web", "", "text")}
            <label>{"To "}<Choice node={to} id="producer-to" options={same(props.targets.clone())} /></label>
            {field("Messages per second ", "producer-rate", &rate, "5", "", "text")}
            {field("TimeToLive ", "producer-ttl", &ttl, "", "empty: none; e.g. 30s", "text")}
            {field("MessageId prefix ", "producer-prefix", &prefix, "", "default: name-", "text")}
            <label>{"Burst every / size "}<span class="row"><input ref={burst_every} id="producer-burst-every" placeholder="e.g. 1m" /><input ref={burst_size} id="producer-burst-size" placeholder="e.g. 50" /></span></label>
            <label>{"Spike at / for / factor "}<span class="row"><input ref={spike_from} id="producer-spike-from" placeholder="t, e.g. 1m" /><input ref={spike_for} id="producer-spike-for" placeholder="1m" /><input ref={spike_factor} id="producer-spike-factor" placeholder="x10" /></span></label>
            {field("Stop after (messages) ", "producer-max", &max, "", "empty: never", "text")}
            if let Some(m) = &*error { <p class="field-error" role="alert">{m.clone()}</p> }
            <button type="submit" id="producer-start">{"Start producer"}</button>
        </form>
    }
}

#[function_component(ConsumerForm)]
pub fn consumer_form(props: &FormProps) -> Html {
    let dispatch = props.dispatch.clone();
    let refs = use_state(|| std::array::from_fn::<NodeRef, 13, _>(|_| NodeRef::default()));
    let error = use_state(|| None::<String>);
    let [name, from, instances, kind, time_a, time_b, abandon, dead, defer, crash, renew, idem, mode] =
        (*refs).clone();
    let onsubmit = {
        let (
            name,
            from,
            instances,
            kind,
            time_a,
            time_b,
            abandon,
            dead,
            defer,
            crash,
            renew,
            idem,
            mode,
        ) = (
            name.clone(),
            from.clone(),
            instances.clone(),
            kind.clone(),
            time_a.clone(),
            time_b.clone(),
            abandon.clone(),
            dead.clone(),
            defer.clone(),
            crash.clone(),
            renew.clone(),
            idem.clone(),
            mode.clone(),
        );
        let error = error.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let build = || -> Result<ConsumerDef, String> {
                let a = dur("Processing time", &time_a)?.unwrap_or(Dur(1_000));
                let processing = match select(&kind).as_str() {
                    "uniform" => ProcessingDef::Uniform {
                        min: a,
                        max: dur("Processing max", &time_b)?.unwrap_or(a),
                    },
                    "exponential" => ProcessingDef::Exponential { mean: a },
                    _ => ProcessingDef::Fixed(a),
                };
                let name = text(&name);
                Ok(ConsumerDef {
                    name: if name.is_empty() {
                        "consumers".into()
                    } else {
                        name
                    },
                    from: select(&from),
                    instances: real("Instances", &instances, 1.0, 1_000.0)?.map(|n| n as u32),
                    mode: if select(&mode) == "ReceiveAndDelete" {
                        ModeDef::ReceiveAndDelete
                    } else {
                        ModeDef::PeekLock
                    },
                    processing: Some(processing),
                    abandon: percent("Abandon %", &abandon)?,
                    dead_letter: percent("Dead-letter %", &dead)?,
                    defer: percent("Defer %", &defer)?,
                    crash: percent("Crash %", &crash)?,
                    max_auto_lock_renewal: dur("Auto-renew", &renew)?,
                    idempotent: checked(&idem),
                    poll_interval: None,
                    restart_delay: None,
                })
            };
            match build() {
                Ok(c) => {
                    error.set(None);
                    dispatch.dispatch(Action::Do(Box::new(Step {
                        start_consumers: Some(c),
                        ..Default::default()
                    })));
                }
                Err(m) => error.set(Some(m)),
            }
        })
    };
    let sources: Vec<(String, String)> = same(props.sources.clone());
    html! {
        <form class="card-form" id="consumer-form" {onsubmit} aria-label="Start consumers">
            <h2>{"Consumers"}</h2>
            {field("Name ", "consumer-name", &name, "workers", "", "text")}
            <label>{"From "}<Choice node={from} id="consumer-from" options={sources} /></label>
            {field("How many ", "consumer-instances", &instances, "2", "", "text")}
            <label>{"Mode "}<Choice node={mode} id="consumer-mode" options={vec![("PeekLock".to_string(), "PeekLock".to_string()), ("ReceiveAndDelete".to_string(), "ReceiveAndDelete".to_string())]} /></label>
            <label>{"Processing time "}<Choice node={kind} id="consumer-kind" options={vec![("fixed".to_string(), "fixed".to_string()), ("uniform".to_string(), "uniform min..max".to_string()), ("exponential".to_string(), "exponential (mean)".to_string())]} /></label>
            <span class="row"><input ref={time_a} id="consumer-time" value="1s" aria-label="Processing time (or min, or mean)" /><input ref={time_b} id="consumer-time-max" placeholder="max" aria-label="Processing time max" /></span>
            <label>{"Abandon % / dead-letter % / defer % / crash % "}<span class="row">
                <input ref={abandon} id="consumer-abandon" placeholder="0" aria-label="Abandon percent" />
                <input ref={dead} id="consumer-dead" placeholder="0" aria-label="Dead-letter percent" />
                <input ref={defer} id="consumer-defer" placeholder="0" aria-label="Defer percent" />
                <input ref={crash} id="consumer-crash" placeholder="0" aria-label="Crash percent" />
            </span></label>
            {field("Auto lock renewal for ", "consumer-renew", &renew, "", "empty: off; e.g. 5m", "text")}
            <label class="check"><input ref={idem} id="consumer-idempotent" type="checkbox" />{" Idempotent by MessageId (RCV-12)"}</label>
            if let Some(m) = &*error { <p class="field-error" role="alert">{m.clone()}</p> }
            <button type="submit" id="consumer-start">{"Start consumers"}</button>
        </form>
    }
}

/// What is running, with a stop button each.
#[function_component(Actors)]
pub fn actors(props: &crate::SlowProps) -> Html {
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
                        let step = if kind == "producer" {
                            Step { stop_producer: Some(name.clone()), ..Default::default() }
                        } else {
                            Step { stop_consumers: Some(name.clone()), ..Default::default() }
                        };
                        store.dispatch(Action::Do(Box::new(step)));
                    })
                };
                html! {
                    <li>
                        <strong>{format!("{} {}", a.kind, a.name)}</strong>{format!(" → {} ", a.entity)}
                        <span class="state">{if a.active { "running" } else { "stopped" }}</span><br/>
                        <small>{a.summary.clone()}</small>
                        if a.active { <button onclick={stop} aria-label={format!("Stop {} {}", a.kind, a.name)}>{"Stop"}</button> }
                    </li>
                }
            }) }
            </ul>
        </section>
    }
}
