//! The clock bar: virtual UTC time, play/pause, speed, step, jump to the next event, reset, the
//! timeline slider and the share button.
use crate::browser;
use crate::state::StoreProps;
use crate::state::{Action, SPEEDS};
use sbp_engine::time::{format_instant, MINUTE, SECOND};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[function_component(ClockBar)]
pub fn clock_bar(props: &StoreProps) -> Html {
    let store = &props.store;
    let share_link = use_state(String::new);
    let (now, utc, end, next) = {
        let mut sim = store.sim.borrow_mut();
        let now = sim.now();
        let next = sim.next_event();
        (now, sim.utc(now), sim.end(), next)
    };
    // The slider reaches past the furthest instant run so far: back there is a rewind too.
    let furthest = store.rewind.borrow().furthest();
    let slider_max = end.max(now).max(furthest).max(MINUTE) + MINUTE;
    // Narration: the note of the last step that has played.
    // The scenario's checks, as the CLI runs them: how many ran, how many failed, the first few
    // failures (taken only when the scenario has checks: this renders on every tick).
    let checks = {
        let sim = store.sim.borrow();
        (sim.checked > 0).then(|| {
            let first: Vec<String> = sim.failures.iter().take(5).cloned().collect();
            (sim.checked, sim.failures.len(), first)
        })
    };
    let narration = {
        let sim = store.sim.borrow();
        sim.outcomes.iter().rev().find_map(|o| {
            sim.scenario
                .timeline
                .get(o.index)
                .and_then(|s| s.note.clone())
                .map(|n| (o.index + 1, n))
        })
    };
    let d = |a: fn() -> Action| {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| store.dispatch(a()))
    };
    let step_by = |ms: i64| {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| store.dispatch(Action::StepBy(ms)))
    };
    let on_speed = {
        let store = store.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            match v.parse::<u32>() {
                Ok(x) => store.dispatch(Action::SetSpeed(x)),
                Err(_) => store.dispatch(Action::Error(format!("\"{v}\" is not a speed"))),
            }
        })
    };
    let on_seek = {
        let store = store.clone();
        Callback::from(move |e: Event| {
            let v = e
                .target_unchecked_into::<HtmlInputElement>()
                .value_as_number();
            if v.is_finite() {
                store.dispatch(Action::Seek(v as i64));
            }
        })
    };
    let on_share = {
        let store = store.clone();
        let share_link = share_link.clone();
        Callback::from(move |_: MouseEvent| {
            let share_link = share_link.clone();
            browser::share_url(&store.sim.borrow(), store.speed, move |url| {
                browser::copy_to_clipboard(&url);
                share_link.set(url);
            });
        })
    };
    let next_text = match &next {
        Some((at, what)) => format!("{what} at {}", format_instant(*at)),
        None => "nothing is due".into(),
    };
    html! {
        <section class="clock" aria-label="Clock">
            <div class="time">
                <span class="utc" id="clock-utc" title="Virtual time in UTC">{utc}</span>
                <span class="rel" id="clock-rel">{format_instant(now)}</span>
            </div>
            <div class="controls">
                if store.playing {
                    <button id="pause" onclick={d(|| Action::Pause)} aria-label="Pause the clock">{"⏸ Pause"}</button>
                } else {
                    <button id="play" class="primary" onclick={d(|| Action::Play)} aria-label="Play the clock">{"▶ Play"}</button>
                }
                <label>{"Speed "}
                    <select id="speed" onchange={on_speed} aria-label="Speed">
                        { for SPEEDS.iter().map(|x| html! { <option value={x.to_string()} selected={*x == store.speed}>{format!("x{x}")}</option> }) }
                    </select>
                </label>
                <button id="step-1s" onclick={step_by(SECOND)} aria-label="Step one second">{"+1 s"}</button>
                <button id="step-1m" onclick={step_by(MINUTE)} aria-label="Step one minute">{"+1 min"}</button>
                <button id="next-event" onclick={d(|| Action::JumpNext)} title={next_text.clone()} aria-label={format!("Jump to the next event: {next_text}")}>{"Next event ▸▸"}</button>
                <button id="reset" onclick={d(|| Action::Reset)} aria-label="Reset to the start">{"Reset"}</button>
                <button id="share" onclick={on_share} aria-label="Copy a link to this scenario">{"Share link"}</button>
            </div>
            if let Some((step, note)) = narration {
                <p class="narration" id="narration" aria-live="polite">{format!("Step {step}: {note}")}</p>
            }
            if let Some((checked, failed, first)) = checks {
                <div class={classes!("checks", (failed > 0).then_some("failed"))} id="checks" aria-live="polite">
                    {format!("Checks: {checked} run, {failed} failed")}
                    if failed > 0 {
                        <ul>{ for first.into_iter().map(|f| html! { <li>{f}</li> }) }</ul>
                    }
                </div>
            }
            <div class="next" id="next-text">{"Next: "}{next_text}</div>
            <label class="timeline">{"Timeline "}
                <input id="timeline" type="range" min="0" max={slider_max.to_string()} step="100"
                    value={now.to_string()} onchange={on_seek} aria-label="Go to an instant (replays from the nearest checkpoint before it)" />
            </label>
            if !share_link.is_empty() {
                <label class="share">{"Link (copied): "}
                    <input id="share-link" readonly=true value={(*share_link).clone()} aria-label="Share link" />
                </label>
            }
        </section>
    }
}
