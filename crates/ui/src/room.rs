//! A workshop's room, as a learner's page takes part in it (`?room=ID`, the link the trainer's
//! page gives; `sbp serve` keeps the room). The learner joins with a name they choose; from
//! then on the page tells the room where it is in the lessons: the lesson, the part, whether
//! the part's goal is reached, the hints shown and the answer to the part's prediction.
//! Nothing else leaves the page: no scenario, no step. The room tells the page where the
//! trainer moved everyone (the page starts that lesson) and the spread of the room's answers
//! to each prediction the trainer revealed.
use crate::browser;
use crate::i18n::{t, tf};
use crate::lesson::{self, Opener};
use crate::state::StateProps;
use yew::prelude::*;

/// The room this page was opened for: its id, as the server makes them (hex).
pub fn room_id() -> Option<String> {
    browser::query_value("room")
        .filter(|id| !id.is_empty() && id.len() <= 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Where the learner is with the room.
#[derive(Clone, PartialEq)]
enum Place {
    /// Not joined: the form, with what the room said last (a refusal, the room closed).
    Asking(Option<String>),
    In {
        name: String,
        key: String,
    },
}

/// A spread the trainer revealed: the lesson, the part (from 0), each answer with its count.
#[derive(Clone, PartialEq)]
struct Revealed {
    lesson: String,
    part: u64,
    answers: Vec<(String, u64)>,
}

/// Local storage: the learner's key and name in room `id` (a reload stays in the room), and
/// the trainer's moves already followed.
fn stored(id: &str, what: &str) -> Option<String> {
    browser::storage()?
        .get_item(&format!("sbp.room.{id}.{what}"))
        .ok()
        .flatten()
}

fn store_item(id: &str, what: &str, value: &str) {
    if let Some(s) = browser::storage() {
        let _ = s.set_item(&format!("sbp.room.{id}.{what}"), value);
    }
}

/// The server's error in an answer, or that it did not answer.
fn why(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error")?.as_str().map(String::from))
        .unwrap_or_else(|| t("live-gone"))
}

fn read_revealed(v: &serde_json::Value) -> Vec<Revealed> {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    v["revealed"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|r| Revealed {
                    lesson: text(&r["lesson"]),
                    part: r["part"].as_u64().unwrap_or_default(),
                    answers: r["answers"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .map(|pair| (text(&pair[0]), pair[1].as_u64().unwrap_or_default()))
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

#[function_component(RoomBar)]
pub fn room_bar(props: &StateProps) -> Html {
    let store = &props.store;
    let room = room_id().unwrap_or_default();
    let place = use_state(|| match (stored(&room, "key"), stored(&room, "name")) {
        (Some(key), Some(name)) => Place::In { name, key },
        _ => Place::Asking(None),
    });
    let revealed = use_state(Vec::<Revealed>::new);
    let name_field = use_node_ref();
    let key = match &*place {
        Place::In { key, .. } => Some(key.clone()),
        Place::Asking(_) => None,
    };

    // Once in: the room's feed, for the page's lifetime.
    {
        let (store, place, revealed, room) =
            (store.clone(), place.clone(), revealed.clone(), room.clone());
        use_effect_with(key.clone(), move |key| {
            if let Some(key) = key {
                let url = format!("rooms/{room}/learner?key={key}");
                browser::follow(&url, "room,closed", move |kind, data| {
                    let v: serde_json::Value = serde_json::from_str(&data).unwrap_or_default();
                    match kind.as_str() {
                        "room" => {
                            // A move the page has not followed yet starts its lesson.
                            let moves = v["moves"].as_u64().unwrap_or_default();
                            let followed = stored(&room, "moves")
                                .and_then(|m| m.parse::<u64>().ok())
                                .unwrap_or_default();
                            if let (Some(lesson), true) = (v["lesson"].as_str(), moves > followed) {
                                store_item(&room, "moves", &moves.to_string());
                                lesson::start(&store, lesson, Opener::Page);
                            }
                            revealed.set(read_revealed(&v));
                        }
                        "closed" => place.set(Place::Asking(Some(t("room-closed")))),
                        _ => {}
                    }
                });
            }
        });
    }

    // Where the learner is, told to the room whenever it changes.
    let at = store.lesson.as_deref().map(|run| {
        let of = run.lesson.parts.len();
        let reached = run.reached;
        (
            run.lesson.id.clone(),
            run.part.min(of.saturating_sub(1)),
            of,
            reached,
            run.hints,
            run.given.clone(),
        )
    });
    {
        let (place, room) = (place.clone(), room.clone());
        use_effect_with((key, at), move |(key, at)| {
            if let (Some(key), Some((lesson, part, of, reached, hints, answer))) = (key, at) {
                let body = serde_json::json!({
                    "lesson": lesson, "part": part, "of": of, "reached": reached,
                    "hints": hints, "answer": answer,
                });
                browser::post_live(
                    &format!("rooms/{room}/report?key={key}"),
                    Some(body.to_string()),
                    move |ok, body| {
                        if !ok {
                            place.set(Place::Asking(Some(tf(
                                "room-refused",
                                &[("why", &why(&body))],
                            ))));
                        }
                    },
                );
            }
        });
    }

    let join = {
        let (place, room, name_field) = (place.clone(), room.clone(), name_field.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let Some(input) = name_field.cast::<web_sys::HtmlInputElement>() else {
                return;
            };
            let (place, room) = (place.clone(), room.clone());
            let body = serde_json::json!({ "name": input.value() }).to_string();
            browser::post_live(
                &format!("rooms/{room}/join"),
                Some(body),
                move |ok, body| {
                    let joined = serde_json::from_str::<serde_json::Value>(&body)
                        .ok()
                        .filter(|_| ok);
                    let key = joined
                        .as_ref()
                        .and_then(|v| Some((v["key"].as_str()?, v["name"].as_str()?)));
                    match key {
                        Some((key, name)) => {
                            store_item(&room, "key", key);
                            store_item(&room, "name", name);
                            place.set(Place::In {
                                name: name.to_string(),
                                key: key.to_string(),
                            });
                        }
                        None => place.set(Place::Asking(Some(tf(
                            "room-refused",
                            &[("why", &why(&body))],
                        )))),
                    }
                },
            );
        })
    };

    let current = store.lesson.as_deref().map(|run| run.lesson.id.clone());
    html! {
        <section class="room" id="room" aria-label={t("room-title")}>
            { match &*place {
                Place::Asking(said) => html! {
                    <>
                    <h2>{t("room-title")}</h2>
                    if let Some(said) = said { <p class="error" id="room-said" role="alert">{said.clone()}</p> }
                    <form class="room-join" onsubmit={join}>
                        <label for="room-name">{t("room-name")}</label>
                        <input id="room-name" ref={name_field} maxlength="40" required=true autocomplete="nickname" />
                        <button id="room-join" class="primary">{t("room-join")}</button>
                    </form>
                    <p class="hint" id="room-shared">{t("room-shared")}</p>
                    </>
                },
                Place::In { name, .. } => html! {
                    <>
                    <p id="room-in"><strong>{tf("room-in", &[("name", name)])}</strong></p>
                    <ul id="room-revealed">
                        { for revealed.iter().filter(|r| Some(&r.lesson) == current.as_ref()).map(|r| html! {
                            <li>{tf("room-spread", &[("part", &(r.part + 1).to_string())])}{" "}
                                { for r.answers.iter().map(|(answer, n)| html! {
                                    <span class="room-answer">{format!("{answer}: {n}")}</span>
                                }) }
                            </li>
                        }) }
                    </ul>
                    </>
                },
            } }
        </section>
    }
}
