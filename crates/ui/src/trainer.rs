//! The trainer's page of a workshop's room (`trainer/index.html`, a wasm of its own; the room
//! is kept by the `sbp serve` that serves the page). It opens a room and gives the learners'
//! link; then it shows where each learner is (lesson, part, goals reached, hints shown), the
//! spread of the room's answers to each prediction (the learners see it once the trainer
//! reveals it), and moves everyone to a lesson. The page's address holds the room and the
//! trainer's key, so a reload stays in the room.
use sbp_ui::browser;
use sbp_ui::i18n::{self, lang, t, tf};
use sbp_ui::{lesson, live};
use yew::prelude::*;

/// The room the page follows: its id, the trainer's key, and the server's token (when it asks
/// for one: the learners' link carries it).
#[derive(Clone, PartialEq)]
struct Room {
    id: String,
    key: String,
    token: Option<String>,
}

/// Only what an id, a key or a token is made of (they land in URLs).
fn hex(text: String) -> Option<String> {
    (!text.is_empty() && text.len() <= 64 && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(text)
}

impl Room {
    fn from_page() -> Option<Room> {
        Some(Room {
            id: hex(browser::query_value("room")?)?,
            key: hex(browser::query_value("key")?)?,
            token: browser::query_value("token").and_then(hex),
        })
    }

    fn url(&self, what: &str) -> String {
        format!("../rooms/{}/{what}?key={}", self.id, self.key)
    }

    /// The learners' link: the playground next to this page, with the room (and the token).
    fn learners_link(&self) -> String {
        let location = web_sys::window().map(|w| w.location());
        let origin = location
            .as_ref()
            .and_then(|l| l.origin().ok())
            .unwrap_or_default();
        let path = location.and_then(|l| l.pathname().ok()).unwrap_or_default();
        let site = path.rfind("trainer/").map_or(path.as_str(), |i| &path[..i]);
        format!("{origin}{site}?room={}{}", self.id, self.token_query())
    }

    /// `&token=...` when the server asks for its token, else nothing.
    fn token_query(&self) -> String {
        self.token
            .as_ref()
            .map(|t| format!("&token={t}"))
            .unwrap_or_default()
    }
}

/// A lesson's title in the reader's language (its id when the track does not list it).
fn title(id: &str) -> String {
    lesson::track()
        .iter()
        .find(|l| l.id == id)
        .map(|l| sbp_scenario::lesson::text(&l.title, lang()).to_string())
        .unwrap_or_else(|| id.to_string())
}

fn text(v: &serde_json::Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn number(v: &serde_json::Value) -> String {
    v.as_u64().map(|n| n.to_string()).unwrap_or_default()
}

#[function_component(Trainer)]
fn trainer() -> Html {
    let room = use_state(Room::from_page);
    let view = use_state(|| None::<serde_json::Value>);
    let said = use_state(|| None::<String>);
    let chosen = use_node_ref();

    // The room's feed, once there is a room.
    {
        let (view, said) = (view.clone(), said.clone());
        use_effect_with((*room).clone(), move |room| {
            if let Some(room) = room {
                browser::follow(&room.url("trainer"), "room,closed", move |kind, data| {
                    let v: serde_json::Value = serde_json::from_str(&data).unwrap_or_default();
                    match kind.as_str() {
                        "room" => view.set(Some(v)),
                        "closed" => said.set(Some(t("trainer-closed"))),
                        _ => {}
                    }
                });
            }
        });
    }

    // A change asked of the room; what it refused is said.
    let ask = {
        let said = said.clone();
        move |url: String, body: Option<serde_json::Value>| {
            let said = said.clone();
            browser::post_live(&url, body.map(|b| b.to_string()), move |ok, body| {
                said.set((!ok).then(|| tf("room-refused", &[("why", &live::refusal(&body))])));
            });
        }
    };
    let open = {
        let (room, said) = (room.clone(), said.clone());
        Callback::from(move |_: MouseEvent| {
            let (room, said) = (room.clone(), said.clone());
            browser::post_live("../rooms", None, move |ok, body| {
                let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                let opened = ok
                    .then(|| {
                        Some(Room {
                            id: hex(text(&v["room"]))?,
                            key: hex(text(&v["key"]))?,
                            token: hex(text(&v["token"])),
                        })
                    })
                    .flatten();
                match opened {
                    Some(opened) => {
                        browser::replace_url(&format!(
                            "?room={}&key={}{}&lang={}",
                            opened.id,
                            opened.key,
                            opened.token_query(),
                            lang()
                        ));
                        room.set(Some(opened));
                    }
                    // Not sbp serve's answer (a static host's 404): rooms need sbp serve.
                    None if v.get("error").is_none() => said.set(Some(t("trainer-needs-server"))),
                    None => said.set(Some(tf("room-refused", &[("why", &live::refusal(&body))]))),
                }
            });
        })
    };

    let Some(current) = (*room).clone() else {
        return html! {
            <main class="trainer">
                <h1>{t("trainer-title")}</h1>
                {i18n::page_links(t("page-back"))}
                <p>{t("trainer-how")}</p>
                <button id="trainer-open" class="primary" onclick={open}>{t("trainer-open")}</button>
                if let Some(said) = &*said { <p class="error" id="trainer-said" role="alert">{said.clone()}</p> }
            </main>
        };
    };

    let link = current.learners_link();
    let copy = {
        let link = link.clone();
        Callback::from(move |_: MouseEvent| browser::copy_to_clipboard(&link))
    };
    let move_to = {
        let (ask, chosen, current) = (ask.clone(), chosen.clone(), current.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(select) = chosen.cast::<web_sys::HtmlSelectElement>() {
                ask(
                    current.url("move"),
                    Some(serde_json::json!({ "lesson": select.value() })),
                );
            }
        })
    };
    let close = {
        let (ask, current) = (ask.clone(), current.clone());
        Callback::from(move |_: MouseEvent| ask(current.url("close"), None))
    };
    let empty = serde_json::Value::Null;
    let v = view.as_ref().unwrap_or(&empty);
    let learners = v["learners"].as_array().cloned().unwrap_or_default();
    let predictions = v["predictions"].as_array().cloned().unwrap_or_default();
    html! {
        <main class="trainer">
            <h1>{t("trainer-title")}</h1>
            if let Some(said) = &*said { <p class="error" id="trainer-said" role="alert">{said.clone()}</p> }
            <section aria-labelledby="trainer-link-title">
                <h2 id="trainer-link-title">{t("trainer-link")}</h2>
                <p><input id="trainer-link" readonly=true value={link} aria-labelledby="trainer-link-title" />
                   {" "}<button id="trainer-copy" onclick={copy}>{t("trainer-copy")}</button></p>
                <p class="hint">{t("trainer-link-how")}</p>
            </section>
            <section aria-labelledby="trainer-move-title">
                <h2 id="trainer-move-title">{t("trainer-move")}</h2>
                <p>
                    <select id="trainer-lesson" ref={chosen} aria-labelledby="trainer-move-title">
                        { for lesson::track().iter().map(|l| html! {
                            <option value={l.id.clone()}>{sbp_scenario::lesson::text(&l.title, lang()).to_string()}</option>
                        }) }
                    </select>
                    {" "}<button id="trainer-move" class="primary" onclick={move_to}>{t("trainer-move-go")}</button>
                </p>
                if let Some(lesson) = v["lesson"].as_str() {
                    <p id="trainer-moved">{tf("trainer-moved", &[("lesson", &title(lesson))])}</p>
                }
            </section>
            <section aria-labelledby="trainer-learners-title">
                <h2 id="trainer-learners-title">{tf("trainer-learners", &[("count", &learners.len().to_string())])}</h2>
                if learners.is_empty() {
                    <p class="hint">{t("trainer-none")}</p>
                } else {
                    <table id="trainer-learners">
                        <thead><tr>
                            <th scope="col">{t("trainer-name")}</th><th scope="col">{t("trainer-lesson")}</th>
                            <th scope="col">{t("trainer-part")}</th><th scope="col">{t("trainer-goals")}</th>
                            <th scope="col">{t("trainer-hints")}</th>
                        </tr></thead>
                        <tbody>
                        { for learners.iter().map(|l| html! {
                            <tr>
                                <th scope="row">{text(&l["name"])}</th>
                                <td>{l["lesson"].as_str().map(title).unwrap_or_default()}</td>
                                <td>{ if l["part"].is_u64() { tf("trainer-part-of", &[("part", &number(&l["part"])), ("of", &number(&l["of"]))]) } else { String::new() } }</td>
                                <td>{number(&l["goals"])}</td>
                                <td>{number(&l["hints"])}</td>
                            </tr>
                        }) }
                        </tbody>
                    </table>
                }
            </section>
            <section aria-labelledby="trainer-predictions-title">
                <h2 id="trainer-predictions-title">{t("trainer-predictions")}</h2>
                if predictions.is_empty() { <p class="hint">{t("trainer-no-answers")}</p> }
                <ul id="trainer-predictions">
                { for predictions.iter().map(|p| {
                    let lesson = text(&p["lesson"]);
                    let part = p["part"].as_u64().unwrap_or_default();
                    let reveal = {
                        let (ask, current, lesson) = (ask.clone(), current.clone(), lesson.clone());
                        Callback::from(move |_: MouseEvent| ask(current.url("reveal"), Some(serde_json::json!({ "lesson": lesson, "part": part }))))
                    };
                    html! {
                        <li class="trainer-prediction" data-lesson={lesson.clone()} data-part={part.to_string()}>
                            <h3>{tf("trainer-prediction", &[("lesson", &title(&lesson)), ("part", &(part + 1).to_string())])}</h3>
                            <ul>
                            { for p["answers"].as_array().into_iter().flatten().map(|a| html! {
                                <li class="room-answer">{format!("{}: {}", text(&a[0]), number(&a[1]))}</li>
                            }) }
                            </ul>
                            if p["revealed"].as_bool() == Some(true) {
                                <p class="hint">{t("trainer-revealed")}</p>
                            } else {
                                <button class="trainer-reveal" onclick={reveal}>{t("trainer-reveal")}</button>
                            }
                        </li>
                    }
                }) }
                </ul>
            </section>
            <p><button id="trainer-close" onclick={close}>{t("trainer-close")}</button></p>
        </main>
    }
}

fn main() {
    let pending = std::rc::Rc::new(std::cell::Cell::new(2u8));
    let ready = move || {
        pending.set(pending.get() - 1);
        if pending.get() == 0 {
            yew::Renderer::<Trainer>::new().render();
        }
    };
    let again = ready.clone();
    i18n::load_page("trainer-title", move |_| ready());
    lesson::load_index(Box::new(again));
}
