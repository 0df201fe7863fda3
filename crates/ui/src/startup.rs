//! What the page opens with: a link in the URL (with `?at=` and `?speed=`), else the scenario
//! kept in local storage, else the starter; and the first screen for a newcomer. The one part of
//! the state's making that reads the page (`browser`).
use crate::browser;
use crate::reduce::replay;
use crate::state::{Action, AppState, LOG_LIMIT, SPEEDS};
use sbp_engine::time::Instant;
use sbp_scenario::link::Link;
use sbp_scenario::Simulation;

/// The panels an embed shows (`?panels=map,lanes,log`), those it knows, in its order; the lanes
/// when it names none it knows (a name mistyped shows the lanes, not an empty frame).
pub fn embed_panels() -> Vec<&'static str> {
    let asked = asked_panels();
    let known: Vec<&'static str> = EMBED_PANELS
        .into_iter()
        .filter(|p| asked.iter().any(|a| a == p))
        .collect();
    if known.is_empty() {
        vec!["lanes"]
    } else {
        known
    }
}

/// The panels an embed can show.
const EMBED_PANELS: [&str; 4] = ["map", "controls", "lanes", "log"];

/// The names `?panels=` lists, trimmed, the empty ones left out.
fn asked_panels() -> Vec<String> {
    browser::query_value("panels")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// What the page opens with (see [`opened`]), saying so when the address asks for what the page
/// does not have: `?lang=` a language it does not speak (it then speaks the one it would have
/// chosen without it), an embed's `?panels=` a panel it does not know (left out).
pub fn initial_state() -> AppState {
    let mut state = opened();
    state.error = state.error.or_else(not_in_the_page);
    state
}

/// What the address asks for that the page does not have (`?lang=`, an embed's `?panels=`),
/// said as the page opens and again when the preset it names has opened.
pub fn not_in_the_page() -> Option<String> {
    unknown_language().or_else(|| unknown_panels(browser::query_flag("embed")))
}

/// `?lang=` naming a language the playground does not speak: which, and the one shown instead.
fn unknown_language() -> Option<String> {
    let asked = browser::query_value("lang").filter(|l| !l.trim().is_empty())?;
    if sbp_scenario::catalog::supported(&asked).is_some() {
        return None;
    }
    let shown = sbp_scenario::catalog::LANGUAGES
        .iter()
        .find(|(code, _)| *code == crate::i18n::lang())
        .map_or("English", |(_, name)| *name);
    Some(crate::i18n::tf(
        "lang-unknown",
        &[
            ("asked", &sbp_engine::error::quote(&asked)),
            ("shown", shown),
        ],
    ))
}

/// An embed's `?panels=` naming panels it does not have: which, and those it has.
fn unknown_panels(embed: bool) -> Option<String> {
    if !embed {
        return None;
    }
    let unknown: Vec<String> = asked_panels()
        .into_iter()
        .filter(|p| !EMBED_PANELS.contains(&p.as_str()))
        .collect();
    (!unknown.is_empty()).then(|| {
        crate::i18n::tf(
            "panels-unknown",
            &[
                ("asked", &sbp_engine::error::quote(&unknown.join(", "))),
                ("known", &EMBED_PANELS.join(", ")),
            ],
        )
    })
}

/// What the page opens with: a link in the URL, else the scenario from local storage, else the
/// starter. A broken link shows an error and keeps the stored scenario.
fn opened() -> AppState {
    let hash = browser::fragment();
    let embed = browser::query_flag("embed");

    let (stored, stored_at) = load_stored();
    // A newcomer (nothing stored, no link, no lesson or preset asked for) sees the first screen;
    // a link to something shows that thing.
    let newcomer = stored.is_none() && hash.trim_start_matches('#').is_empty();
    let mut state = AppState::new(stored.unwrap_or_else(starter), embed);
    state.welcome = newcomer
        && !embed
        && ["lesson", "lessons", "preset"]
            .iter()
            .all(|key| browser::query_value(key).is_none());
    state.looping = browser::query_flag("loop");
    // `?autoplay=1` plays once the page shows (`Action::Autoplay`, from the page's start).
    if let Some(at) = stored_at {
        if let Some(stopped) = replay(
            &mut state.sim.borrow_mut(),
            &mut state.rewind.borrow_mut(),
            at,
        ) {
            state.notice = Some(stopped);
        }
        state.find_next();
    }
    let fragment = hash.trim_start_matches('#');
    // A lesson link (`#lesson=...`) is opened by the app once it runs (main.rs).
    if !fragment.is_empty() && browser::lesson_payload().is_none() {
        match sbp_scenario::link::decode_link(fragment) {
            Ok(mut link) => {
                let name = link.scenario.name.clone();
                let refused = open_as_the_query_asks(&mut link);
                let state = std::rc::Rc::new(state);
                let loaded = yew::Reducible::reduce(
                    state,
                    Action::Load {
                        link: Box::new(link),
                        notice: if name.is_empty() {
                            crate::i18n::t("opened-shared")
                        } else {
                            crate::i18n::tf("opened-shared-named", &[("name", &name)])
                        },
                    },
                );
                let mut loaded = (*loaded).clone();
                if refused.is_some() {
                    loaded.error = refused;
                }
                return loaded;
            }
            Err(e) => {
                state.error = Some(crate::i18n::tf(
                    "error-unchanged",
                    &[("error", &e.to_string())],
                ))
            }
        }
    }
    state
}

/// `link` opened where the page's `?at=` (an instant: `90s`, `1m30s`) and `?speed=` (one of
/// [`SPEEDS`]) say: the `<service-bus-playground>` element's `instant` and `speed`. Another
/// instant than the link's own is replayed to (its saved state is for its own). Why one of
/// them is not taken, if so (the link is then left as it was).
pub fn open_as_the_query_asks(link: &mut Link) -> Option<String> {
    let asked = || -> Result<(Option<Instant>, Option<u32>), String> {
        let at = browser::query_value("at")
            .map(|v| {
                sbp_engine::time::parse_duration(&v)
                    .map_err(|_| crate::i18n::tf("error-query-at", &[("value", &v)]))
            })
            .transpose()?;
        let speed = browser::query_value("speed")
            .map(|v| {
                v.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|x| SPEEDS.contains(x))
                    .ok_or_else(|| crate::i18n::tf("error-speed", &[("speed", &v)]))
            })
            .transpose()?;
        Ok((at, speed))
    };
    match asked() {
        Ok((at, speed)) => {
            if let Some(at) = at.filter(|at| link.at != Some(*at)) {
                link.at = Some(at);
                link.checkpoint = None;
            }
            link.speed = speed.or(link.speed);
            None
        }
        Err(why) => Some(why),
    }
}

fn starter() -> Simulation {
    let scenario = sbp_scenario::Scenario::from_json(browser::STARTER).unwrap_or_default();
    Simulation::with_default_log_limit(&scenario, LOG_LIMIT).unwrap_or_else(|_| {
        // An empty scenario is valid (a test says so).
        match Simulation::new(&sbp_scenario::Scenario::default()) {
            Ok(sim) => sim,
            Err(_) => unreachable!(),
        }
    })
}

/// The stored scenario and instant. Storage holds a share-link fragment: one format, one codec.
fn load_stored() -> (Option<Simulation>, Option<i64>) {
    match browser::stored_link() {
        Some(link) => (
            Simulation::with_default_log_limit(&link.scenario, LOG_LIMIT).ok(),
            link.at,
        ),
        None => (None, None),
    }
}
