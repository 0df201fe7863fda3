//! The test API a harness calls (served with `--http`, whatever the UI's folder holds, behind
//! [`crate::http`]'s door like every route):
//!
//! - `GET /health`: 200 with the listeners' addresses once every listener accepts (the AMQP
//!   endpoint, the management API, this one); a harness polls it after starting the process.
//! - `POST /reset`: back to the served file's entities and an empty run (every message,
//!   lock, session and entity made since is gone; with `--state`, the state file and journal
//!   start afresh). Connections stay open; their locks are lost, as after a restart.
//! - The clock: `POST /live/clock?by=MS` and `POST /live/clock?next` ([`crate::live`]).
//!
//! The POSTs carry the header `x-sbp-live: 1`: a page of another origin cannot send it
//! without a CORS preflight, which this server does not answer.
use crate::live::{json, sent_by_a_page, CLOCK_HEADER};
use crate::shared::Shared;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use std::sync::Arc;

/// The addresses a harness is told (by `/health` and `--ready-file`).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Listeners {
    pub amqp: String,
    pub http: Option<String>,
    pub admin: Option<String>,
    pub admin_tls: Option<String>,
}

#[derive(Clone)]
struct Control {
    shared: Arc<Shared>,
    listeners: Arc<std::sync::OnceLock<Listeners>>,
}

/// The routes; `/health` answers 503 until `listeners` is set (every listener bound).
pub fn routes(shared: Arc<Shared>, listeners: Arc<std::sync::OnceLock<Listeners>>) -> axum::Router {
    axum::Router::new()
        .route("/health", axum::routing::get(health))
        .route("/reset", axum::routing::post(reset))
        .with_state(Control { shared, listeners })
}

async fn health(State(control): State<Control>) -> axum::response::Response {
    match control.listeners.get() {
        Some(listeners) => json(
            StatusCode::OK,
            serde_json::json!({
                "status": "ok",
                "server": "sbp serve",
                "listeners": listeners,
                "clients": control.shared.clients().as_array().map_or(0, Vec::len),
            }),
        ),
        None => json(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "status": "starting" }),
        ),
    }
}

async fn reset(State(control): State<Control>, headers: HeaderMap) -> axum::response::Response {
    if !sent_by_a_page(&headers) {
        return json(
            StatusCode::FORBIDDEN,
            serde_json::json!({ "error": format!("a reset carries the header {CLOCK_HEADER}: 1") }),
        );
    }
    let shared = control.shared.clone();
    match tokio::task::spawn_blocking(move || shared.reset()).await {
        Ok(Ok(entities)) => json(
            StatusCode::OK,
            serde_json::json!({ "reset": true, "entities": entities }),
        ),
        Ok(Err(e)) => json(
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({ "error": e }),
        ),
        Err(_) => json(
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({ "error": "the reset did not finish" }),
        ),
    }
}
