//! A trainer's room over HTTP: a workshop's learners join with a chosen name, and the
//! trainer's page follows where each one is ([`room`] keeps it, without I/O).
//!
//! - `POST /rooms`: opens a room; answers its id, the trainer's key, and the server's token
//!   when it asks for one (the learners' link carries it).
//! - `POST /rooms/ID/close?key=TRAINER`: closes it.
//! - `POST /rooms/ID/join` with `{"name": ...}`: answers the learner's key.
//! - `POST /rooms/ID/report?key=LEARNER` with a [`room::Report`].
//! - `POST /rooms/ID/move?key=TRAINER` with `{"lesson": ID}`; `POST /rooms/ID/reveal?key=TRAINER`
//!   with `{"lesson": ID, "part": N}`.
//! - `GET /rooms/ID/trainer?key=TRAINER` and `GET /rooms/ID/learner?key=LEARNER`: server-sent
//!   `room` events, the view as it is at once and then after each change, at most one every
//!   [`EVERY`]; `closed` when the room closes.
//!
//! Every POST carries the header `x-sbp-live: 1` (a page of another origin cannot
//! send it without a CORS preflight, which this server does not answer), and a body of at most
//! [`MAX_BODY`] bytes. At most [`MAX_FEEDS`] pages follow rooms at once. Who may ask at all
//! (Host, Origin, the token off loopback) is [`crate::http`]'s door, as for every route.
pub mod room;

use crate::live::{json, sent_by_a_page};
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use room::{RoomError, Rooms};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A request's body, in bytes.
pub const MAX_BODY: usize = 4096;
/// Pages following rooms at once (a trainer's and each learner's).
pub const MAX_FEEDS: usize = 256;
/// A page is sent its view at most this often (changes in between are sent together).
pub const EVERY: Duration = Duration::from_millis(250);

/// The rooms, who is told of a change, and the places left for pages that follow.
pub struct Shared {
    rooms: Mutex<Rooms>,
    changed: tokio::sync::watch::Sender<()>,
    feeds: Arc<tokio::sync::Semaphore>,
    /// The server's token, when it asks for one: the learners' link carries it.
    token: Option<String>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Rooms> {
        self.rooms.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Does `change` to the rooms; the pages following look again once it succeeded.
    fn change<T>(
        &self,
        change: impl FnOnce(&mut Rooms, Instant) -> Result<T, RoomError>,
    ) -> Result<T, RoomError> {
        let done = change(&mut self.lock(), Instant::now())?;
        self.changed.send_replace(());
        Ok(done)
    }
}

/// The routes, over rooms of their own; `token` is the server's (or None on loopback).
pub fn routes(token: Option<String>) -> axum::Router {
    let shared = Arc::new(Shared {
        rooms: Mutex::default(),
        changed: tokio::sync::watch::Sender::new(()),
        feeds: Arc::new(tokio::sync::Semaphore::new(MAX_FEEDS)),
        token,
    });
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/rooms", post(open))
        .route("/rooms/{room}/close", post(close))
        .route("/rooms/{room}/join", post(join))
        .route("/rooms/{room}/report", post(report))
        .route("/rooms/{room}/move", post(move_to))
        .route("/rooms/{room}/reveal", post(reveal))
        .route("/rooms/{room}/trainer", get(trainer_feed))
        .route("/rooms/{room}/learner", get(learner_feed))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(shared)
}

/// Random bytes from the OS, as hex.
fn random_hex(bytes: usize) -> Result<String, RoomError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| RoomError::NoRandomness(e.to_string()))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

fn refused(e: RoomError) -> Response {
    json(
        StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST),
        serde_json::json!({ "error": e.to_string() }),
    )
}

/// A change is asked with the header a page of another origin cannot send.
fn from_a_page(headers: &HeaderMap) -> Result<(), RoomError> {
    sent_by_a_page(headers)
        .then_some(())
        .ok_or(RoomError::Unsigned)
}

/// The `key=` of a query (keys are hex: nothing to decode).
fn key_of(query: Option<&str>) -> String {
    query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("key="))
        .unwrap_or_default()
        .to_string()
}

/// A JSON body read into `T` (its fields checked by serde; unknown ones refused).
fn body_of<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, RoomError> {
    serde_json::from_slice(body)
        .map_err(|e| RoomError::Invalid(format!("the body does not read: {e}")))
}

/// What a page asks with a body and a key: the header checked, the body read, the key taken.
fn asked<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    query: Option<&str>,
    body: &[u8],
) -> Result<(T, String), RoomError> {
    from_a_page(headers)?;
    Ok((body_of(body)?, key_of(query)))
}

fn answer(done: Result<serde_json::Value, RoomError>) -> Response {
    match done {
        Ok(v) => json(StatusCode::OK, v),
        Err(e) => refused(e),
    }
}

async fn open(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    answer((|| {
        from_a_page(&headers)?;
        let (id, key) = (random_hex(8)?, random_hex(16)?);
        shared.change(|rooms, now| rooms.open(id.clone(), key.clone(), now))?;
        Ok(serde_json::json!({ "room": id, "key": key, "token": shared.token }))
    })())
}

async fn close(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    answer((|| {
        from_a_page(&headers)?;
        let key = key_of(query.as_deref());
        shared.change(|rooms, now| rooms.close(&id, &key, now))?;
        Ok(serde_json::json!({ "closed": id }))
    })())
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Join {
    name: String,
}

async fn join(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    answer((|| {
        from_a_page(&headers)?;
        let join: Join = body_of(&body)?;
        let key = random_hex(16)?;
        let name = shared.change(|rooms, now| rooms.join(&id, &join.name, key.clone(), now))?;
        Ok(serde_json::json!({ "key": key, "name": name }))
    })())
}

async fn report(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: axum::body::Bytes,
) -> Response {
    answer((|| {
        let (report, key) = asked::<room::Report>(&headers, query.as_deref(), &body)?;
        shared.change(|rooms, now| rooms.report(&id, &key, report, now))?;
        Ok(serde_json::json!({ "reported": true }))
    })())
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LessonPart {
    lesson: String,
    #[serde(default)]
    part: u32,
}

async fn move_to(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: axum::body::Bytes,
) -> Response {
    answer((|| {
        let (to, key) = asked::<LessonPart>(&headers, query.as_deref(), &body)?;
        shared.change(|rooms, now| rooms.move_to(&id, &key, &to.lesson, now))?;
        Ok(serde_json::json!({ "lesson": to.lesson }))
    })())
}

async fn reveal(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: axum::body::Bytes,
) -> Response {
    answer((|| {
        let (what, key) = asked::<LessonPart>(&headers, query.as_deref(), &body)?;
        shared.change(|rooms, now| rooms.reveal(&id, &key, &what.lesson, what.part, now))?;
        Ok(serde_json::json!({ "revealed": [what.lesson, what.part] }))
    })())
}

async fn trainer_feed(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    feed(shared, id, key_of(query.as_deref()), true)
}

async fn learner_feed(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    feed(shared, id, key_of(query.as_deref()), false)
}

/// The view a feed sends, as JSON, with its version.
fn view(rooms: &Rooms, id: &str, key: &str, trainer: bool) -> Result<(String, u64), RoomError> {
    let (text, version) = if trainer {
        let (view, version) = rooms.trainer_view(id, key)?;
        (serde_json::to_string(&view), version)
    } else {
        let (view, version) = rooms.learner_feed(id, key)?;
        (serde_json::to_string(&view), version)
    };
    Ok((text.unwrap_or_default(), version))
}

/// Where a feed is: what it sent last, and whether it has ended.
struct Following {
    shared: Arc<Shared>,
    id: String,
    key: String,
    trainer: bool,
    changes: tokio::sync::watch::Receiver<()>,
    sent: u64,
    ended: bool,
    _place: tokio::sync::OwnedSemaphorePermit,
}

impl Following {
    /// The next event: the view once it changed (after at least [`EVERY`]), or `closed`.
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Following)> {
        if self.ended {
            return None;
        }
        loop {
            tokio::time::sleep(EVERY).await;
            if self.changes.changed().await.is_err() {
                return None;
            }
            // The version read and the view built under one lock.
            let viewed = {
                let rooms = self.shared.lock();
                if rooms.version(&self.id, self.trainer) == Some(self.sent) {
                    continue;
                }
                view(&rooms, &self.id, &self.key, self.trainer)
            };
            match viewed {
                Ok((text, version)) => {
                    self.sent = version;
                    return Some((Ok(Event::default().event("room").data(text)), self));
                }
                Err(e) => {
                    self.ended = true;
                    let data = serde_json::json!({ "error": e.to_string() }).to_string();
                    return Some((Ok(Event::default().event("closed").data(data)), self));
                }
            }
        }
    }
}

fn feed(shared: Arc<Shared>, id: String, key: String, trainer: bool) -> Response {
    // Subscribed before the first view is read: a change between the two is not missed.
    let changes = shared.changed.subscribe();
    let (first, sent) = match view(&shared.lock(), &id, &key, trainer) {
        Ok(first) => first,
        Err(e) => return refused(e),
    };
    let Ok(place) = shared.feeds.clone().try_acquire_owned() else {
        return json(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "error": format!("at most {MAX_FEEDS} pages follow rooms at once") }),
        );
    };
    let following = Following {
        shared,
        id,
        key,
        trainer,
        changes,
        sent,
        ended: false,
        _place: place,
    };
    let first = Event::default()
        .event("room")
        .retry(Duration::from_secs(2))
        .data(first);
    let rest = futures_util::stream::unfold(following, Following::next);
    let stream = futures_util::StreamExt::chain(
        futures_util::stream::once(async move { Ok::<Event, Infallible>(first) }),
        rest,
    );
    (
        [(header::CACHE_CONTROL, "no-store")],
        Sse::new(stream).keep_alive(KeepAlive::default()),
    )
        .into_response()
}
