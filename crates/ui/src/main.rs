//! The Service Bus Playground in the browser. A thin Yew app: it drives the engine's clock, sends
//! it commands (recorded as scenario steps) and renders its state.
mod actions;
mod browser;
mod chart;
mod clock;
mod form;
mod i18n;
mod inspector;
mod lanes;
mod lesson;
mod log;
mod map;
mod markup;
mod metrics;
mod plot;
mod sendlab;
mod state;
mod traffic;

use i18n::t;
use state::{Action, SimRef, StoreProps};
use std::rc::Rc;
use yew::prelude::*;

#[function_component(App)]
fn app() -> Html {
    let store = use_reducer(browser::initial_state);

    // The clock driver: a steady interval; in play mode each tick moves virtual time.
    {
        let store = store.clone();
        use_effect_with((), move |_| {
            let last = Rc::new(std::cell::Cell::new(browser::now_ms()));
            let interval = gloo_timers::callback::Interval::new(50, move || {
                let now = browser::now_ms();
                let elapsed = (now - last.get()).clamp(0.0, 1000.0);
                last.set(now);
                browser::tick_started(now);
                store.dispatch(Action::Tick {
                    elapsed_ms: elapsed,
                    wall_ms: now,
                });
            });
            move || drop(interval)
        });
    }
    // `?lesson=<id>` opens that lesson.
    {
        let store = store.clone();
        use_effect_with((), move |_| {
            if let Some(id) = browser::query_value("lesson") {
                lesson::start(&store, &id);
            }
        });
    }
    // The benchmark's per-tick timing.
    use_effect_with(store.version, move |_| browser::tick_rendered());
    // The current scenario survives a reload (saved every few hundred ms while the clock runs).
    {
        let sim = store.sim.clone();
        use_effect_with(store.slow_version, move |_| browser::save(&sim.borrow()));
    }

    let dismiss = {
        let store = store.clone();
        Callback::from(move |_| store.dispatch(Action::Dismiss))
    };
    let banner = html! {
        <>
        if let Some(err) = &store.error {
            <div class="banner error" role="alert" id="error-banner">
                <strong>{t("error-prefix")}</strong>{err.clone()}
                <button class="link" onclick={dismiss.clone()} aria-label={t("dismiss")}>{"✕"}</button>
            </div>
        }
        if let Some(note) = &store.notice {
            <div class="banner notice" role="status" id="notice">{note.clone()}
                <button class="link" onclick={dismiss} aria-label={t("dismiss")}>{"✕"}</button>
            </div>
        }
        </>
    };

    let lessons = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| store.dispatch(Action::ShowWelcome))
    };
    let undo = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| store.dispatch(Action::Undo))
    };
    if store.embed {
        return html! {
            <main class="embed">
                <clock::ClockBar store={store.clone()} />
                {banner}
                if browser::query_flag("map") {
                    <map::NamespaceMap store={store.clone()} version={store.version} />
                }
                <lanes::Lanes store={store.clone()} />
            </main>
        };
    }
    html! {
        <>
        <header class="top">
            <h1>{t("app-title")}</h1>
            <p class="tagline">{t("app-tagline")}</p>
            <LanguagePicker store={store.clone()} />
            <button id="open-lessons" onclick={lessons}>{t("lessons")}</button>
            <button id="undo" onclick={undo}>{t("undo")}</button>
            <actions::ScenarioMenu store={store.clone()} />
        </header>
        <clock::ClockBar store={store.clone()} />
        {banner}
        <main class="layout">
            <section class="left" aria-label={t("area-actions")}>
                <actions::Actions store={store.clone()} />
            </section>
            <section class="center" aria-label={t("area-namespace")}>
                if store.welcome {
                    <lesson::Welcome store={store.clone()} />
                }
                <lesson::LessonPanel store={store.clone()} />
                <map::NamespaceMap store={store.clone()} version={store.version} />
                <lanes::Lanes store={store.clone()} />
                <sendlab::SendLab />
            </section>
            <section class="right" aria-label={t("area-inspector")}>
                <inspector::Inspector store={store.clone()} version={store.slow_version} />
                <inspector::LastResult store={store.clone()} version={store.slow_version} />
                <chart::Chart store={store.clone()} version={store.slow_version} />
                <metrics::MetricsCharts store={store.clone()} version={store.slow_version} />
                <log::EventLog sim={SimRef(store.sim.clone())} version={store.slow_version} fast={store.playing && store.speed >= lanes::FAST_SPEED} />
                <inspector::RulesPanel />
            </section>
        </main>
        </>
    }
}

/// The language picker: the catalog is fetched, then every panel re-renders in it.
#[function_component(LanguagePicker)]
fn language_picker(props: &StoreProps) -> Html {
    let store = props.store.clone();
    let onchange = Callback::from(move |e: Event| {
        let chosen = e
            .target_unchecked_into::<web_sys::HtmlSelectElement>()
            .value();
        let Some(lang) = sbp_scenario::catalog::supported(&chosen) else {
            return;
        };
        let store = store.clone();
        i18n::load(lang, true, move |loaded| match loaded {
            Ok(()) => store.dispatch(Action::Relabel),
            Err(e) => store.dispatch(Action::Error(e)),
        });
    });
    html! {
        <label class="lang">{t("language")}{" "}
            <select id="lang" {onchange}>
                { for sbp_scenario::catalog::LANGUAGES.iter().map(|(code, name)| html! {
                    <option value={*code} selected={*code == i18n::lang()}>{*name}</option>
                }) }
            </select>
        </label>
    }
}

fn main() {
    // The first render waits for the catalog (fetched data, a few KB): no flash of keys.
    // So does a packed link: the browser inflates it.
    i18n::load(i18n::initial_language(), false, |_| {
        browser::unpack_fragment(|| {
            yew::Renderer::<App>::new().render();
        })
    });
}
