//! The Service Bus Playground in the browser. A thin Yew app: it drives the engine's clock, sends
//! it commands (recorded as scenario steps) and renders its state. The parts are in the library
//! (`lib.rs`); the send lab is a page of its own (`lab.rs`), loaded when it is opened.

use sbp_ui::i18n::{self, t};
use sbp_ui::state::{Action, SlowProps};
use sbp_ui::{actions, browser, chart, inspector, lanes, lesson, live, metrics};
use std::rc::Rc;
use yew::prelude::*;

#[function_component(App)]
fn app() -> Html {
    let store = use_reducer(sbp_ui::startup::initial_state);

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
    // A lesson link (`#lesson=...`, from the lesson builder) or `?lesson=<id>` (or the first
    // of a workshop's `?lessons=a,b,c`) opens that lesson.
    {
        let store = store.clone();
        use_effect_with((), move |_| {
            // The first visit's static welcome (index.html) gives way to the app's, and a
            // choice made on it before the app ran is carried out.
            match browser::take_first_screen().as_deref() {
                Some("lesson") => {
                    if let Some(first) = lesson::track().first() {
                        lesson::start(&store, &first.id, lesson::Opener::Reader);
                    }
                }
                Some("sandbox") => store.dispatch(Action::CloseWelcome),
                _ => {}
            }
            // `?live`: follow the sbp serve that serves this page (or offer it).
            live::start(&store);
            if let Some(name) = browser::query_value("preset") {
                // `?at=90s&speed=10`: where the clock starts, and how fast it runs.
                actions::load_preset_from_page(&store, &name);
            }
            if let Some(payload) = browser::lesson_payload() {
                lesson::open_payload(&store, &payload);
            } else if let Some(id) =
                browser::query_value("lesson").or_else(|| lesson::chain().into_iter().next())
            {
                lesson::start(&store, &id, lesson::Opener::Page);
            }
        });
    }
    // A message said never leaves the focused control out of view.
    use_effect_with(store.said, |_| browser::keep_focus_in_view());
    // The benchmark's per-tick timing; the focus kept when what had it is gone.
    use_effect_with(store.version, move |_| {
        browser::tick_rendered();
        browser::restore_lost_focus();
    });
    use_effect_with((), |_| browser::watch_focus());
    // `?autoplay=1`: plays once the page shows on the reader's screen.
    {
        let store = store.clone();
        use_effect_with((), move |_| {
            if browser::query_flag("autoplay") {
                browser::when_visible(move || store.dispatch(Action::Autoplay));
            }
        });
    }
    // The current scenario survives a reload (saved every few hundred ms while the clock runs).
    // An embed keeps nothing: it shows the scenario of its own link, and saving it would
    // replace the reader's own playground (and the other embeds' on the same page).
    {
        let sim = store.sim.clone();
        let embed = store.embed;
        use_effect_with(store.slow_version, move |_| {
            if !embed {
                browser::save(&sim.borrow());
            }
        });
    }

    // Lesson progress: the reducer counts the parts done; the page keeps the most ever done.
    {
        let done = store
            .lesson
            .as_ref()
            .map(|run| (run.lesson.id.clone(), run.done));
        use_effect_with(done, |done| {
            if let Some((id, n)) = done.as_ref().filter(|(_, n)| *n > 0) {
                lesson::save_progress(id, *n);
            }
        });
    }

    // Where the learner is in the lessons, for a workshop's room (`?room=ID`: web/room.js,
    // which tells the room; the page keeps no room of its own).
    {
        let at = store.lesson.as_deref().map(|run| {
            let of = run.lesson.parts.len();
            let part = run.part.min(of.saturating_sub(1));
            let answer = run.given.clone();
            (
                run.lesson.id.clone(),
                part,
                of,
                run.reached,
                run.hints,
                answer,
            )
        });
        use_effect_with(at, |at| {
            if let Some((lesson, part, of, reached, hints, answer)) = at {
                let at = serde_json::json!({
                    "lesson": lesson, "part": part, "of": of, "reached": reached,
                    "hints": hints, "answer": answer,
                });
                browser::lesson_at(&at.to_string());
            }
        });
    }

    // The first frame holds the header and the clock (and a first visit's welcome); the panels
    // under them follow in the task after it is painted: on a slow phone the first screen shows
    // without waiting for the style and layout of everything below it.
    let below = use_state(|| false);
    {
        let below = below.clone();
        use_effect_with((), move |_| browser::after_paint(move || below.set(true)));
    }

    // The welcome shows above the header: the focus goes to it (the button stays below).
    let lessons = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| {
            store.dispatch(Action::ShowWelcome);
            browser::focus_soon(vec!["#welcome-title".into()]);
        })
    };
    let undo = sbp_ui::state::on_click(&store, || Action::Undo);
    // A link's fragment is a scenario here: the skip link moves the focus itself.
    let skip = Callback::from(|e: MouseEvent| {
        e.prevent_default();
        browser::focus_soon(vec!["#main".into()]);
    });
    if store.embed {
        // The panels an embed shows: `?panels=map,lanes,log` (`map=1` is the older way to add
        // the map); lanes by default. A lesson shows above them.
        let panels = sbp_ui::startup::embed_panels();
        let shows = |p: &str| panels.contains(&p);
        return html! {
            <main class="embed">
                <h1 class="visually-hidden">{t("app-title")}</h1>
                {parts::clock(&store)}
                {parts::lesson(&store)}
                if shows("map") || browser::query_flag("map") {
                    {parts::map(&store)}
                }
                if shows("controls") || store.lesson.is_some() { {actions::actions(&store)} }
                if shows("lanes") { {lanes::lanes(&store)} }
                if shows("log") {
                    {parts::log(&store)}
                }
            </main>
        };
    }
    html! {
        <>
        // The first visit starts with the welcome and the lessons, before everything else (on
        // a phone the header, clock and forms would push them below the fold); it is where the
        // static first screen (index.html) was, so the app takes over without a jump.
        // The first stop of the keyboard: past the header and the clock, to the controls.
        <a class="skip-link" id="skip-link" href="#main" onclick={skip}>{t("skip-to-main")}</a>
        if store.welcome {
            <div class="welcome-first">{lesson::welcome(&store)}</div>
        }
        <header class="top">
            <h1>{t("app-title")}</h1>
            <p class="tagline">{t("app-tagline")}</p>
            {language_picker(&store)}
            <button id="open-lessons" onclick={lessons}>{t("lessons")}</button>
            <a id="open-builder" href={format!("builder/index.html?lang={}", i18n::lang())}>{t("build-lesson")}</a>
            <a id="open-emulator" href={format!("emulator/index.html?lang={}", i18n::lang())}>{t("emulator-link")}</a>
            if store.live_offered && store.live.is_none() {
                <a id="open-live" href="?live">{t("live-open")}</a>
            }
            <button id="undo" class="i i-undo" onclick={undo}>{t("undo")}</button>
            <actions::ScenarioMenu store={store.clone()} />
        </header>
        {parts::clock(&store)}
        <main id="main" tabindex="-1" class={classes!("layout", lesson::question_alone(&store).then_some("workshop-question"))}>
            if *below {
            // A running lesson comes first: on a wide screen the grid puts it above the
            // namespace, in one column (a phone) it is what the page opens on, before the
            // forms it asks the learner to use.
            {parts::lesson(&store)}
            <section class="left" aria-label={t("area-actions")}>
                if store.live.is_some() {
                    <live::LivePanel store={store.clone()} />
                } else {
                    {actions::actions(&store)}
                }
            </section>
            <section class="center" aria-label={t("area-namespace")}>
                {parts::map(&store)}
                {lanes::lanes(&store)}
                {send_lab_frame()}
            </section>
            <section class="right" aria-label={t("area-inspector")}>
                <SlowPanels store={store.clone()} version={store.slow_version} />
                {parts::log(&store)}
                {inspector::rules_panel()}
            </section>
            }
        </main>
        </>
    }
}

/// The panels both layouts (the page and an embed) show, each built in one place (not one copy
/// per layout in the wasm).
mod parts {
    use sbp_ui::state::{SimRef, StateHandle};
    use sbp_ui::{clock, lanes, lesson, log, map};
    use yew::prelude::*;

    #[inline(never)]
    pub fn clock(store: &StateHandle) -> Html {
        html! { <clock::ClockBar store={store.clone()} /> }
    }
    #[inline(never)]
    pub fn lesson(store: &StateHandle) -> Html {
        html! { <lesson::LessonPanel store={store.clone()} /> }
    }
    #[inline(never)]
    pub fn map(store: &StateHandle) -> Html {
        html! { <map::NamespaceMap store={store.clone()} version={store.version} /> }
    }
    #[inline(never)]
    pub fn log(store: &StateHandle) -> Html {
        let fast = lanes::streaming(store);
        let masked = lesson::masked(store);
        html! { <log::EventLog sim={SimRef(store.sim.clone())} version={store.slow_version} {fast} {masked} /> }
    }
}

/// The panels that follow a running clock every few hundred ms: the counts over time and the
/// metrics. Plain functions inside one component.
#[function_component(SlowPanels)]
fn slow_panels(props: &SlowProps) -> Html {
    html! {
        <>
        {inspector::inspector(&props.store)}
        {chart::chart(&props.store)}
        {metrics::metrics_charts(&props.store)}
        </>
    }
}

/// The send lab (SEND-01..04) is a page of its own with its own small wasm. Its frame loads
/// lazily: inside the closed `<details>` it is not rendered, so it loads when the reader opens
/// it, and the playground's wasm does not carry the lab.
fn send_lab_frame() -> Html {
    html! {
        <details class="lane sendlab" id="send-lab">
            <summary><strong>{t("lab-title")}</strong>{t("lab-summary")}</summary>
            <iframe class="lab-frame" loading="lazy" src={format!("lab/index.html?lang={}", i18n::lang())} title={t("lab-title")}></iframe>
        </details>
    }
}

/// The language picker: the catalog is fetched, then every panel re-renders in it. Chosen with
/// the mouse, it applies at once; moved through with the arrow keys, only on Enter or when Tab
/// leaves it (each step would redraw the whole page in another language, WCAG 3.2.2).
fn language_picker(store: &sbp_ui::state::StateHandle) -> Html {
    const MOVING: &str = "data-moving";
    let apply = {
        let store = store.clone();
        move |select: web_sys::HtmlSelectElement| {
            let _ = select.remove_attribute(MOVING);
            let Some(lang) = sbp_scenario::catalog::supported(&select.value()) else {
                return;
            };
            if lang == i18n::lang() {
                return;
            }
            let store = store.clone();
            i18n::load(lang, true, move |loaded| match loaded {
                Ok(()) => store.dispatch(Action::Relabel),
                Err(e) => store.dispatch(Action::Error(e.to_string())),
            });
        }
    };
    let onchange = {
        let apply = apply.clone();
        Callback::from(move |e: Event| {
            let select = e.target_unchecked_into::<web_sys::HtmlSelectElement>();
            if !select.has_attribute(MOVING) {
                apply(select);
            }
        })
    };
    let onkeydown = Callback::from(move |e: KeyboardEvent| {
        let select = e.target_unchecked_into::<web_sys::HtmlSelectElement>();
        match e.key().as_str() {
            // Enter, or the keyboard leaving the picker, applies what the arrows chose.
            "Enter" | "Tab" if select.has_attribute(MOVING) => apply(select),
            "ArrowUp" | "ArrowDown" | "Home" | "End" | "PageUp" | "PageDown" => {
                let _ = select.set_attribute(MOVING, "");
            }
            _ => {}
        }
    });
    html! {
        <label class="lang">{t("language")}{" "}
            <select id="lang" {onchange} {onkeydown}>
                { for sbp_scenario::catalog::LANGUAGES.iter().map(|(code, name)| html! {
                    <option value={*code} lang={*code} selected={*code == i18n::lang()}>{*name}</option>
                }) }
            </select>
        </label>
    }
}

fn main() {
    // The first render waits for the data it shows: the catalog (no flash of keys; it holds the
    // rule texts too) and the lesson track, read from the page (scripts/carry.mjs), or fetched
    // side by side where it does not carry them.
    // Then a packed link in the URL is inflated by the browser, and the app renders.
    let pending = Rc::new(std::cell::Cell::new(2u8));
    let ready: Rc<dyn Fn()> = Rc::new(move || {
        pending.set(pending.get() - 1);
        if pending.get() == 0 {
            i18n::keep_carried_catalogs();
            browser::unpack_fragment(|| {
                yew::Renderer::<App>::new().render();
            })
        }
    });
    let (a, c) = (ready.clone(), ready);
    // Workshop mode: one lesson, large type (web/style.css).
    if browser::query_flag("workshop") {
        if let Some(body) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.body())
        {
            let _ = body.class_list().add_1("workshop");
        }
    }
    i18n::load(i18n::initial_language(), false, move |_| a());
    lesson::load_index(Box::new(move || c()));
}
