//! The clock bar: virtual UTC time, play/pause, speed, step, jump to the next event, reset, the
//! timeline slider and the share button.
use crate::browser;
use crate::i18n::{t, tf};
use crate::state::{Action, SPEEDS};
use crate::state::{StateHandle, StateProps};
use sbp_engine::time::{format_instant, Instant, MINUTE, SECOND};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[function_component(ClockBar)]
pub fn clock_bar(props: &StateProps) -> Html {
    let store = &props.store;
    let share_link = use_state(String::new);
    let embed_code = use_state(String::new);
    let embed_local = use_state(|| false);
    let embed_site_refused = use_state(|| None::<String>);
    let (now, utc, end) = {
        let sim = store.sim.borrow();
        let now = sim.now();
        (now, sim.utc(now), sim.end())
    };
    let next = &store.next_event;
    // The slider reaches past the furthest instant run so far: back there is a rewind too.
    let furthest = store.rewind.borrow().furthest();
    let slider_max = end.max(now).max(furthest).max(MINUTE) + MINUTE;
    // Narration: the note of the last step that has played.
    // The scenario's checks, as the CLI runs them: how many ran, how many failed, the first few
    // failures (taken only when the scenario has checks: this renders on every tick).
    let checks = {
        let sim = store.sim.borrow();
        (sim.checked > 0).then(|| {
            let first: Vec<String> = sim.failures.iter().take(5).map(|f| f.to_string()).collect();
            (sim.checked, sim.failures.len(), first)
        })
    };
    let narration = {
        let sim = store.sim.borrow();
        sim.outcomes.iter().rev().find_map(|o| {
            sim.scenario()
                .timeline
                .get(o.index)
                .and_then(|s| s.note.clone())
                .map(|n| (o.index + 1, n))
        })
    };
    let d = |a: fn() -> Action| crate::state::on_click(store, a);
    // Following a server, a step or a jump moves the server's clock (the SDKs see it).
    let live = store.live.is_some();
    // By `by` ms, or to the next event (None).
    let moves = |by: Option<Instant>| {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| {
            if live {
                crate::live::move_clock(&store, by);
            } else {
                store.dispatch(by.map_or(Action::JumpNext, Action::StepBy))
            }
        })
    };
    let on_speed = {
        let store = store.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            match v.parse::<u32>() {
                Ok(x) => store.dispatch(Action::SetSpeed(x)),
                Err(_) => store.dispatch(Action::Error(tf("error-speed", &[("speed", &v)]))),
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
            let said = store.clone();
            browser::share_url(&mut store.sim.borrow_mut(), store.speed, move |url| {
                browser::copy_to_clipboard(&url);
                share_link.set(url);
                said.dispatch(Action::Notice(t("link-copied")));
            });
        })
    };
    // "Copy embed code": an iframe for this scenario, instant, speed, lesson and language, with
    // the options chosen; a line of script lets the host page size it to its content.
    let embed_inputs = use_memo((), |_| crate::embed::EmbedInputs::default());
    let on_embed = {
        let store = store.clone();
        let embed_code = embed_code.clone();
        let embed_local = embed_local.clone();
        let embed_site_refused = embed_site_refused.clone();
        let inputs = embed_inputs.clone();
        Callback::from(move |_: MouseEvent| {
            let embed_code = embed_code.clone();
            let embed_local = embed_local.clone();
            let embed_site_refused = embed_site_refused.clone();
            let inputs = inputs.clone();
            let lesson = store.lesson.as_ref().map(|run| run.lesson.id.clone());
            // "Check that...": what shows now (the counts, the message open in the
            // inspector) goes with the link as an expectation at this instant.
            let link = if inputs.checks() {
                let selected = store
                    .selected
                    .as_ref()
                    .map(|(path, seq)| (path.as_str(), *seq));
                sbp_scenario::link::link_checking_now(
                    &mut store.sim.borrow_mut(),
                    selected,
                    Some(store.speed),
                )
            } else {
                sbp_scenario::link::link_to(&mut store.sim.borrow_mut(), Some(store.speed))
            };
            let said = store.clone();
            browser::share_link_url(link, move |url| {
                let embed = crate::embed::embed_code(&url, lesson.as_deref(), &inputs);
                browser::copy_to_clipboard(&embed.code);
                said.dispatch(Action::Notice(t("embed-copied")));
                embed_local.set(embed.local);
                embed_site_refused.set(embed.site_refused);
                embed_code.set(embed.code);
            });
        })
    };
    let next_text = match next {
        Some((at, what)) => tf(
            "next-at",
            &[
                ("what", &crate::i18n::next_text(what)),
                ("at", &format_instant(*at)),
            ],
        ),
        None => t("next-none"),
    };
    html! {
        <section class="clock" aria-label={t("clock")}>
            <div class="time">
                <span class="utc" id="clock-utc" title={t("clock-utc")}>{utc}</span>
                <span class="rel" id="clock-rel">{format_instant(now)}</span>
            </div>
            <div class="controls">
                if store.playing || store.live.as_ref().is_some_and(|l| l.following) {
                    <button id="pause" class="i i-pause" onclick={d(|| Action::Pause)} title={t("pause-label")}>{t("pause")}</button>
                } else {
                    <button id="play" class="primary i i-play" onclick={d(|| Action::Play)} title={t("play-label")}>{t("play")}</button>
                }
                if !live {
                <label>{t("speed")}{" "}
                    <select id="speed" onchange={on_speed} aria-label={t("speed")}>
                        { for SPEEDS.iter().map(|x| html! { <option value={x.to_string()} selected={*x == store.speed}>{format!("x{x}")}</option> }) }
                    </select>
                </label>
                }
                <button id="step-1s" onclick={moves(Some(SECOND))} title={t("step-1s-label")}>{"+1 s"}</button>
                <button id="step-1m" onclick={moves(Some(MINUTE))} title={t("step-1m-label")}>{"+1 min"}</button>
                <button id="next-event" class="ia i-next" onclick={moves(None)} title={tf("next-event-label", &[("next", &next_text)])}>{t("next-event")}</button>
                if !live {
                    <button id="reset" onclick={d(|| Action::Reset)} title={t("reset-label")}>{t("reset")}</button>
                }
                <button id="share" onclick={on_share} title={t("share-label")}>{t("share")}</button>
            </div>
            // Live regions are always there, empty when there is nothing to say: a region
            // inserted with its text is often not announced.
            <p class="narration" id="narration" aria-live="polite">
                if let Some((step, note)) = narration {
                    {tf("narration", &[("step", &step.to_string()), ("note", &note)])}
                }
            </p>
            <div class={classes!("checks", checks.as_ref().is_some_and(|c| c.1 > 0).then_some("failed"))} id="checks" aria-live="polite">
                if let Some((checked, failed, first)) = checks {
                    {tf("checks", &[("checked", &checked.to_string()), ("failed", &failed.to_string())])}
                    if failed > 0 {
                        <ul>{ for first.into_iter().map(|f| html! { <li>{f}</li> }) }</ul>
                    }
                }
            </div>
            <div class="next" id="next-text">{tf("next", &[("next", &next_text)])}</div>
            // Named by its visible label (WCAG 2.5.3), its value said as an instant, not in ms.
            <label class="timeline">{t("timeline")}{" "}
                <input id="timeline" type="range" min="0" max={slider_max.to_string()} step="100"
                    value={now.to_string()} onchange={on_seek} title={t("timeline-label")}
                    aria-valuetext={format_instant(now)} />
            </label>
            {status_line(store)}
            <details class="embed-options" id="embed-options">
                <summary>{t("embed")}</summary>
                {crate::embed::embed_options(&embed_inputs)}
                <button id="embed-code" onclick={on_embed}>{t("embed-copy")}</button>
                if let Some(site) = (*embed_site_refused).clone().filter(|_| !embed_code.is_empty()) {
                    <p class="hint warn" id="embed-site-refused" role="status">{tf("embed-site-bad", &[("site", &site)])}</p>
                }
                if !embed_code.is_empty() && *embed_local {
                    <p class="hint warn" id="embed-local-code" role="status">{t("embed-local-code")}</p>
                }
                if !embed_code.is_empty() {
                    <textarea id="embed-snippet" readonly=true rows="4" aria-label={t("embed")} value={(*embed_code).clone()} />
                }
            </details>
            if !share_link.is_empty() {
                <label class="share">{t("share-copied")}{" "}
                    <input id="share-link" readonly=true value={(*share_link).clone()} aria-label={t("share")} />
                </label>
            }
        </section>
    }
}

/// What the last action did (the notice) and what went wrong (the error), on a line of the clock
/// bar that is always there: a screen reader announces a change of a live region's text, where
/// a region inserted with its text is often missed (WCAG 4.1.3); and a message never pushes the
/// page, and the control the reader is on, down (2.4.11).
fn status_line(store: &StateHandle) -> Html {
    let dismiss = crate::state::on_click(store, || Action::Dismiss);
    html! {
        <div class="clock-status" id="clock-status">
            // Keyed by the count of actions that said something: the same words said again
            // are a new node, announced again.
            <div role="alert" class="alerts">
                if let Some(err) = &store.error {
                    <span class="banner error" id="error-banner" key={store.said}><strong>{t("error-prefix")}</strong>{err.clone()}</span>
                }
            </div>
            <div role="status" id="notice" class="notice">
                if let Some(notice) = &store.notice {
                    <span key={store.said}>{notice.clone()}</span>
                }
            </div>
            if store.error.is_some() || store.notice.is_some() {
                <button class="link i i-close" id="dismiss" onclick={dismiss} aria-label={t("dismiss")}></button>
            }
        </div>
    }
}
