//! The live view's HTTP side: a page served by `sbp serve` follows the broker.
//!
//! - `GET /live/events`: server-sent events. First `scenario` (the run so far as a scenario,
//!   and the instant now; copied under the broker's lock, written out after it), then every `step` as it is recorded (its index in the timeline and
//!   the step) and `now` (the clock, and the clients connected) every [`NOW_EVERY`]. The page's
//!   own engine replays them, so it shows exactly the server's state. A page that falls behind
//!   by more than the feed keeps loses its feed; its EventSource reconnects and starts again
//!   from a fresh `scenario`. At most [`MAX_FEEDS`] pages follow at once; one more is told
//!   503 with the limit.
//! - `GET /live/status`: whether this is `sbp serve`, the instant, the clients (the page asks
//!   before it offers to follow).
//! - `POST /live/clock?by=MS` or `?next`: moves the server's clock forward (the SDKs see the
//!   lock lapse or the expiry). Only with the header `x-sbp-live: 1`: a page of another origin
//!   cannot send it without a CORS preflight, which this server does not answer. The clock
//!   goes at most `broker::MAX_CLOCK_AHEAD_MS` ahead of the wall clock in all.
//!
//! Who may ask at all (Host, Origin, the token off loopback) is [`crate::http`]'s door, over
//! these routes and the UI's files alike.
use crate::broker::LiveEvent;
use crate::shared::Shared;
use axum::extract::{FromRef, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::{Stream, StreamExt};

/// How often the clock (and the client list) goes to the pages following.
pub const NOW_EVERY: Duration = Duration::from_millis(250);

/// The header a change asked of the server (a clock move, a reset, a room's) must carry.
pub const CLOCK_HEADER: &str = "x-sbp-live";

/// Whether a request carries [`CLOCK_HEADER`]: a page of another origin cannot send it
/// without a CORS preflight, which this server does not answer.
pub(crate) fn sent_by_a_page(headers: &HeaderMap) -> bool {
    headers.get(CLOCK_HEADER).and_then(|v| v.to_str().ok()) == Some("1")
}

/// Pages that follow at once (each holds a copy of the run while it is written to it).
pub const MAX_FEEDS: usize = 32;

/// The routes' state: the broker, and the places left for pages that follow.
#[derive(Clone)]
struct Live {
    shared: Arc<Shared>,
    feeds: Arc<tokio::sync::Semaphore>,
}

impl FromRef<Live> for Arc<Shared> {
    fn from_ref(live: &Live) -> Arc<Shared> {
        live.shared.clone()
    }
}

pub fn routes(shared: Arc<Shared>) -> axum::Router {
    axum::Router::new()
        .route("/live/events", axum::routing::get(events))
        .route("/live/status", axum::routing::get(status))
        .route("/live/clock", axum::routing::post(clock))
        .with_state(Live {
            shared,
            feeds: Arc::new(tokio::sync::Semaphore::new(MAX_FEEDS)),
        })
}

/// Sends the clock and the clients to the pages following, every [`NOW_EVERY`], while any
/// page follows.
pub async fn announce(shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(NOW_EVERY).await;
        let clients = shared.clients();
        let mut broker = shared.lock();
        if broker.live.receiver_count() > 0 {
            broker.tick();
            broker.announce_now(Some(clients));
        }
    }
}

fn event(e: LiveEvent) -> Result<Event, Infallible> {
    Ok(Event::default().event(e.kind).data(e.data))
}

/// The first event of a feed: the instant, the run so far and the clients.
#[derive(serde::Serialize)]
struct First<'a> {
    now: sbp_engine::time::Instant,
    scenario: &'a sbp_scenario::Scenario,
    clients: &'a serde_json::Value,
}

async fn events(State(live): State<Live>) -> axum::response::Response {
    // The page's place is held as long as its feed is (the stream owns it).
    let Ok(place) = live.feeds.clone().try_acquire_owned() else {
        return json(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "error": format!("at most {MAX_FEEDS} pages follow at once") }),
        );
    };
    let clients = live.shared.clients();
    // Where the run so far ends and the subscription are taken under one lock: no step falls
    // between them. The run is read (from the journal, where its steps are) and written out
    // after the lock, so the broker is not held while a long run becomes text.
    let (now, run, feed) = {
        let mut broker = live.shared.lock();
        broker.tick();
        (
            broker.sim.now(),
            broker.run_so_far(),
            broker.live.subscribe(),
        )
    };
    let scenario = match tokio::task::spawn_blocking(move || run.scenario()).await {
        Ok(Ok(scenario)) => scenario,
        Ok(Err(e)) => {
            return json(
                StatusCode::INTERNAL_SERVER_ERROR,
                serde_json::json!({ "error": format!("the run so far could not be read: {e}") }),
            )
        }
        Err(_) => {
            return json(
                StatusCode::INTERNAL_SERVER_ERROR,
                serde_json::json!({ "error": "the run so far could not be read" }),
            )
        }
    };
    // Written straight to text (not through a JSON tree, which would be larger still).
    let first = serde_json::to_string(&First {
        now,
        scenario: &scenario,
        clients: &clients,
    })
    .unwrap_or_default();
    drop(scenario);
    let first = Event::default()
        .event("scenario")
        .retry(Duration::from_secs(1))
        .data(first);
    // A lagged page's feed ends (it reconnects and starts again from a fresh copy).
    let rest = BroadcastStream::new(feed)
        .map_while(move |e| {
            let _place = &place;
            e.ok()
        })
        .map(event);
    let stream: std::pin::Pin<Box<dyn Stream<Item = Result<Event, Infallible>> + Send>> =
        Box::pin(tokio_stream::once(Ok(first)).chain(rest));
    (
        [(header::CACHE_CONTROL, "no-store")],
        Sse::new(stream).keep_alive(KeepAlive::default()),
    )
        .into_response()
}

pub(crate) fn json(status: StatusCode, value: serde_json::Value) -> axum::response::Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        value.to_string(),
    )
        .into_response()
}

async fn status(State(shared): State<Arc<Shared>>) -> axum::response::Response {
    let clients = shared.clients();
    let mut broker = shared.lock();
    broker.tick();
    json(
        StatusCode::OK,
        serde_json::json!({
            "server": "sbp serve",
            "now": broker.sim.now(),
            "steps": broker.steps(),
            "clients": clients,
        }),
    )
}

/// What a clock move asks: `by=MS` (a whole number of milliseconds) or `next`.
pub fn clock_move(query: &str) -> Result<Option<i64>, String> {
    let mut by = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("by", ms)) => {
                by = Some(Some(ms.parse::<i64>().map_err(|_| {
                    format!("by={ms}: give the milliseconds to move, a whole number")
                })?))
            }
            None if pair == "next" => by = Some(None),
            _ => return Err(format!("{pair}: a clock move is by=MS or next")),
        }
    }
    by.ok_or_else(|| "say how far: by=MS or next".to_string())
}

async fn clock(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> axum::response::Response {
    if !sent_by_a_page(&headers) {
        return json(
            StatusCode::FORBIDDEN,
            serde_json::json!({ "error": format!("a clock move carries the header {CLOCK_HEADER}: 1") }),
        );
    }
    let moved = clock_move(query.as_deref().unwrap_or("")).and_then(|by| {
        shared
            .broker
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .move_clock(by)
    });
    match moved {
        Ok(now) => {
            // Waiting receivers look again (a scheduled message may be there now).
            shared.bump();
            json(StatusCode::OK, serde_json::json!({ "now": now }))
        }
        Err(e) => json(StatusCode::BAD_REQUEST, serde_json::json!({ "error": e })),
    }
}

#[cfg(test)]
mod tests {
    use super::clock_move;

    #[test]
    fn a_clock_move_is_by_milliseconds_or_next() {
        assert_eq!(clock_move("by=60000"), Ok(Some(60_000)));
        assert_eq!(clock_move("next"), Ok(None));
        assert!(clock_move("").unwrap_err().contains("by=MS or next"));
        assert!(clock_move("by=1.5").unwrap_err().contains("whole number"));
        assert!(clock_move("to=5").unwrap_err().contains("by=MS or next"));
    }
}
