//! `sbp serve`: an AMQP 1.0 endpoint that the Service Bus SDKs (Python, JavaScript, .NET)
//! connect to with the emulator's connection string, backed by the playground's engine.
//!
//! The engine stays sans-IO: this crate owns the sockets and the clock, turns each SDK
//! operation into a scenario step at its wall-clock instant ([`broker`]), and wakes the engine
//! when its next timer is due. Layers: [`frame`] (bytes to frames), [`conn`] (SASL,
//! connection, sessions, links, settlement), [`message`] (AMQP messages to the engine's),
//! [`mgmt`] (`$management`). Over HTTP: the UI's files and the live view ([`live`]), behind
//! one door ([`http`]: loopback names, `--allow-host`, a token off loopback) and its bounds.
//! [`journal`] (`--state`): each step on disk before it is answered, checkpoints, recovery.
//! [`decode`]: every decode of a client's bytes, bounded first. [`control`]: the test API
//! (health, reset). [`rooms`]: a trainer's room for a workshop.
pub mod admin;
pub mod broker;
pub mod conn;
pub mod control;
pub mod decode;
pub mod driver;
pub mod error;
pub mod frame;
pub mod http;
pub mod journal;
pub mod live;
pub mod message;
pub mod mgmt;
pub mod rooms;
pub mod sasl;
pub mod service;
pub mod shared;
pub mod site;
pub mod state;
pub mod tls;

pub use shared::Shared;

use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Connections served at once; one more is told why and closed.
pub const MAX_CONNECTIONS: usize = 256;
/// Connections beyond the bound being told why at once; past these, closed unanswered.
pub const MAX_REFUSING: usize = 32;
/// How long the listener waits after a failed accept (out of file descriptors).
pub const ACCEPT_BACK_OFF: std::time::Duration = std::time::Duration::from_millis(100);

/// The UI's listener: where it is, and the token its URL carries when it is reachable from
/// other machines.
pub struct Ui {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

impl Ui {
    /// The URL to open, with `query` (`live`, or none) and the token when one is asked for.
    pub fn url(&self, query: &str) -> String {
        self.url_of("", query)
    }

    /// The URL of the page at `path` (`trainer/index.html`: a workshop's room), as [`Ui::url`].
    pub fn url_of(&self, path: &str, query: &str) -> String {
        let host = if self.addr.ip().is_unspecified() {
            format!("localhost:{}", self.addr.port())
        } else {
            self.addr.to_string()
        };
        let query = match (&self.token, query) {
            (None, "") => String::new(),
            (None, q) => format!("?{q}"),
            (Some(t), "") => format!("?token={t}"),
            (Some(t), q) => format!("?{q}&token={t}"),
        };
        format!("http://{host}/{path}{query}")
    }
}

/// The HTTP listener of `sbp serve`: the test API ([`control`]: health, reset), the live
/// view and the clock ([`live`]), and the playground's built UI ([`site`]: a `dist/` folder
/// when it holds an index.html, or the files built into the binary). Every request passes [`http`]'s door first
/// (`allow_hosts`: the names taken as Host besides loopback's). `/health` answers once
/// `listeners` is set.
pub async fn serve_http(
    addr: SocketAddr,
    site: Option<site::Site>,
    shared: Arc<Shared>,
    allow_hosts: &[String],
    listeners: Arc<std::sync::OnceLock<control::Listeners>>,
) -> std::io::Result<Ui> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let door = Arc::new(http::Door::new(bound, allow_hosts)?);
    let token = door.token().map(str::to_string);
    let routes = live::routes(shared.clone())
        .merge(control::routes(shared.clone(), listeners))
        .merge(rooms::routes(token.clone()));
    let app = match site.filter(site::Site::is_built) {
        Some(site::Site::Folder(dist)) => routes.fallback_service(
            tower_http::services::ServeDir::new(dist)
                .precompressed_br()
                .precompressed_gzip(),
        ),
        Some(site::Site::Memory(files)) => routes.fallback(
            move |method: axum::http::Method,
                  uri: axum::http::Uri,
                  headers: axum::http::HeaderMap| async move {
                files.answer(&method, &uri, &headers)
            },
        ),
        None => routes.fallback(|| async {
            (
                axum::http::StatusCode::NOT_FOUND,
                "this sbp serve has no built UI (./scripts/build-ui.sh makes one in dist/); \
                 it serves /health, /reset and /live/...\n",
            )
        }),
    }
    .layer(axum::middleware::from_fn_with_state(door, http::admit));
    tokio::spawn(live::announce(shared));
    tokio::spawn(http::serve(listener, app));
    Ok(Ui { addr: bound, token })
}

/// The connection string to paste (the emulator's, with the port when it is not 5672).
pub fn connection_string(addr: &SocketAddr) -> String {
    match addr.port() {
        5672 => emulator_connection_string("localhost"),
        port => emulator_connection_string(&format!("localhost:{port}")),
    }
}

/// The emulator's connection string for the endpoint `authority` (`localhost:PORT`).
pub fn emulator_connection_string(authority: &str) -> String {
    format!(
        "Endpoint=sb://{authority};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
    )
}

/// A running endpoint: its address and the state it shares with its connections.
pub struct Server {
    pub addr: SocketAddr,
    pub shared: Arc<Shared>,
    listener: TcpListener,
}

impl Server {
    /// Binds `addr` (port 0: a free port) over `broker`.
    pub async fn bind(addr: SocketAddr, broker: broker::Broker) -> std::io::Result<Server> {
        Server::bind_with(addr, broker, shared::Limits::default()).await
    }

    /// As [`Server::bind`], with the connections held to `limits`.
    pub async fn bind_with(
        addr: SocketAddr,
        broker: broker::Broker,
        limits: shared::Limits,
    ) -> std::io::Result<Server> {
        let mut shared = Shared::new(broker);
        shared.limits = limits;
        Server::bind_shared(addr, shared).await
    }

    /// Binds `addr` over `shared` (its broker, its limits, what a reset goes back to).
    pub async fn bind_shared(addr: SocketAddr, shared: Shared) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr).await?;
        Ok(Server {
            addr: listener.local_addr()?,
            shared: Arc::new(shared),
            listener,
        })
    }

    /// Serves until the task is dropped: accepts connections, and runs the engine's timers on
    /// the wall clock (a lapsed lock or a scheduled message wakes the waiting receivers).
    pub async fn run(self) {
        let shared = self.shared.clone();
        let _clock = tokio::spawn(async move {
            loop {
                let wait = {
                    let mut broker = shared.lock();
                    broker.tick();
                    broker.next_due_in()
                };
                shared.bump();
                let wait = wait.unwrap_or(std::time::Duration::from_millis(500)).clamp(
                    std::time::Duration::from_millis(5),
                    std::time::Duration::from_millis(500),
                );
                tokio::time::sleep(wait).await;
            }
        });
        let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let refusing = Arc::new(tokio::sync::Semaphore::new(MAX_REFUSING));
        loop {
            let (stream, peer) = match self.listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors (EMFILE) or a like failure: wait before asking
                    // again, instead of spinning a core on the same error.
                    eprintln!("sbp serve: accept failed ({e}); trying again in 100 ms");
                    tokio::time::sleep(ACCEPT_BACK_OFF).await;
                    continue;
                }
            };
            if open.load(std::sync::atomic::Ordering::SeqCst) >= MAX_CONNECTIONS {
                // One connection too many: its client hears why within a bounded time, then
                // the connection ends; past that many being told, it is closed at once.
                if let Ok(permit) = refusing.clone().try_acquire_owned() {
                    tokio::spawn(async move {
                        driver::refuse(
                            stream,
                            format!(
                                "sbp serve takes at most {MAX_CONNECTIONS} connections at once"
                            ),
                        )
                        .await;
                        drop(permit);
                    });
                }
                continue;
            }
            let _ = stream.set_nodelay(true);
            open.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let shared = self.shared.clone();
            let open = open.clone();
            tokio::spawn(async move {
                driver::run(stream, peer.to_string(), shared).await;
                open.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
    }
}
