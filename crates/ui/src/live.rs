//! Following `sbp serve` (`?live`): the page's own engine replays the steps the server records
//! as the SDKs act (`crates/server/src/live.rs` sends them), so lanes, map, inspector and log
//! show the application's own messages exactly as the server has them. The panel lists the
//! clients, moves the server's clock, pauses following, and saves the run as a scenario.
use crate::browser;
use crate::i18n::{t, tf};
use crate::state::{Action, LiveClient, LiveMsg, StateHandle};
use sbp_engine::time::{format_instant, Instant, MINUTE, SECOND};
use yew::prelude::*;

/// Where the feed is, next to the page.
const EVENTS: &str = "live/events";

/// Whether the page was opened with nothing to show of its own: no link, lesson or preset (a
/// page opened with a link never connects anywhere).
fn opened_plain() -> bool {
    browser::fragment().trim_start_matches('#').is_empty()
        && browser::query_value("lesson").is_none()
        && browser::query_value("preset").is_none()
}

/// On the page's start: follows the server when asked (`?live`); a plain page (not an embed)
/// asks whether `sbp serve` serves it, and offers to follow it.
pub fn start(store: &StateHandle) {
    if !opened_plain() {
        return;
    }
    if browser::query_value("live").is_some() {
        connect(store);
    } else if !store.embed {
        probe(store);
    }
}

/// Follows the server for the page's lifetime.
fn connect(store: &StateHandle) {
    let store = store.clone();
    browser::follow(EVENTS, "scenario,step,now", move |kind, data| {
        let msg = match kind.as_str() {
            "lost" => Some(LiveMsg::Lost),
            _ => read(&kind, &data),
        };
        match msg {
            Some(msg) => store.dispatch(Action::Live(msg)),
            None => store.dispatch(Action::Error(tf("live-unreadable", &[("kind", &kind)]))),
        }
    });
}

/// One event of the feed, read (None when it does not read: said, nothing changes).
fn read(kind: &str, data: &str) -> Option<LiveMsg> {
    let v: serde_json::Value = serde_json::from_str(data).ok()?;
    let now = v.get("now").and_then(serde_json::Value::as_i64);
    let clients = v.get("clients").map(clients);
    match kind {
        "scenario" => {
            let scenario =
                sbp_scenario::Scenario::from_json(&v.get("scenario")?.to_string()).ok()?;
            Some(LiveMsg::Opened {
                scenario: Box::new(scenario),
                now: now?,
                clients: clients.unwrap_or_default(),
            })
        }
        "step" => {
            let index = usize::try_from(v.get("index")?.as_u64()?).ok()?;
            let step = serde_json::from_str(&v.get("step")?.to_string()).ok()?;
            Some(LiveMsg::Step(index, Box::new(step)))
        }
        "now" => Some(LiveMsg::Now(now?, clients)),
        _ => None,
    }
}

fn clients(v: &serde_json::Value) -> Vec<LiveClient> {
    let text = |v: &serde_json::Value, key: &str| {
        v.get(key)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    v.as_array()
        .map(|list| {
            list.iter()
                .map(|c| LiveClient {
                    name: text(c, "name"),
                    links: c
                        .get("links")
                        .and_then(serde_json::Value::as_array)
                        .map(|links| {
                            links
                                .iter()
                                .map(|l| [text(l, "role"), text(l, "entity"), text(l, "name")])
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Asks whether `sbp serve` serves this page (only on this machine): if so, the page offers to
/// follow it.
fn probe(store: &StateHandle) {
    if !browser::on_loopback() {
        return;
    }
    let store = store.clone();
    browser::fetch_text("live/status", move |answer| {
        let ours = answer.ok().and_then(|text| {
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            (v.get("server")?.as_str()? == "sbp serve").then_some(())
        });
        if ours.is_some() {
            store.dispatch(Action::LiveOffered);
        }
    });
}

/// Why `sbp serve` refused a request: the `error` of its JSON answer, or that it did not
/// answer.
pub fn refusal(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error")?.as_str().map(String::from))
        .unwrap_or_else(|| t("live-gone"))
}

/// Moves the server's clock forward by `by` ms, or to its next due timer (`None`); the feed
/// then brings the new instant.
pub fn move_clock(store: &StateHandle, by: Option<Instant>) {
    let url = match by {
        Some(ms) => format!("live/clock?by={ms}"),
        None => "live/clock?next".to_string(),
    };
    let store = store.clone();
    browser::post_live(&url, None, move |ok, body| {
        if !ok {
            let why = refusal(&body);
            store.dispatch(Action::Error(tf("live-clock-refused", &[("why", &why)])));
        }
    });
}

/// The live panel, in place of the controls: who is connected, the server's clock, follow or
/// inspect, save the run.
#[function_component(LivePanel)]
pub fn live_panel(props: &crate::state::StateProps) -> Html {
    let store = &props.store;
    let Some(live) = store.live.clone() else {
        return html! {};
    };
    let moves = |by: Option<Instant>| {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| move_clock(&store, by))
    };
    let follow = {
        let store = store.clone();
        let on = !live.following;
        Callback::from(move |_: MouseEvent| store.dispatch(Action::Live(LiveMsg::Follow(on))))
    };
    let save = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| {
            // The run as `sbp serve --record` writes it: its steps, and what it reached as an
            // expectation at its instant, so `sbp check` proves the replay gets there. Compact
            // JSON: the serializer the share link already uses (no second copy in the wasm).
            let sim = store.sim.borrow();
            let mut scenario = sim.scenario().clone();
            scenario.expect = vec![sim.recorded_expectation()];
            let json = serde_json::to_string(&scenario).unwrap_or_default();
            browser::download("sbp-serve-run.json", &json);
        })
    };
    let clients = live.clients.len().to_string();
    let badge = if live.connected {
        tf("live-badge", &[("clients", &clients)])
    } else {
        t("live-lost")
    };
    let waiting = live.pending.len();
    html! {
        <section class="live" id="live-panel" aria-label={t("live-title")}>
            <h2>{t("live-title")}</h2>
            <p id="live-badge" class={classes!("badge", (!live.connected).then_some("lost"))} role="status">{badge}</p>
            <p class="hint">{t("live-how")}</p>
            // Whose DeliveryCount the page shows (MSG-02): the SDKs differ by one.
            <p class="hint" id="live-delivery-count">{t("live-delivery-count")}</p>
            <ul id="live-clients">
                { for live.clients.iter().map(|c| html! {
                    <li title={c.name.clone()}><strong>{c.name.clone()}</strong>
                        if !c.links.is_empty() {
                            <ul>{ for c.links.iter().map(|[role, entity, name]| html! {
                                <li title={name.clone()}>{tf(if role == "receiver" { "live-receiver" } else { "live-sender" }, &[("entity", entity), ("name", name)])}</li>
                            }) }</ul>
                        }
                    </li>
                }) }
            </ul>
            <p id="live-server-now">{tf("live-server-now", &[("at", &format_instant(live.server_now))])}</p>
            <div class="controls">
                <button id="live-follow" onclick={follow} class={classes!("i", if live.following { "i-pause" } else { "i-play" }, (!live.following).then_some("primary"))}>
                    { if live.following { t("live-pause") } else { tf("live-resume", &[("steps", &waiting.to_string())]) } }
                </button>
                <button id="live-second" onclick={moves(Some(SECOND))}>{t("live-plus-second")}</button>
                <button id="live-minute" onclick={moves(Some(MINUTE))}>{t("live-plus-minute")}</button>
                <button id="live-next" onclick={moves(None)}>{t("live-next")}</button>
                <button id="live-save" onclick={save}>{t("live-save")}</button>
            </div>
            <p class="hint">{t("live-clock-hint")}</p>
        </section>
    }
}
