//! `sbp serve`: an AMQP 1.0 endpoint that the Service Bus SDKs (Python, JavaScript, .NET)
//! connect to with the emulator's connection string, backed by the playground's engine.
//!
//! The engine stays sans-IO: this crate owns the sockets and the clock, turns each SDK
//! operation into a scenario step at its wall-clock instant ([`broker`]), and wakes the engine
//! when its next timer is due. Layers: [`frame`] (bytes to frames), [`conn`] (SASL,
//! connection, sessions, links, settlement), [`message`] (AMQP messages to the engine's),
//! [`mgmt`] (`$management`), [`journal`] (`--state`: each step on disk before it is
//! answered, checkpoints, recovery).
pub mod broker;
pub mod conn;
pub mod frame;
pub mod journal;
pub mod live;
pub mod message;
pub mod mgmt;
pub mod shared;

pub use shared::Shared;

use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// The largest message taken in one transfer (Premium's 100 MB is the service's; the
/// engine's own bounds apply after).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// Connections served at once; one more is closed at once.
pub const MAX_CONNECTIONS: usize = 256;

/// Serves the playground's built UI (`dist/`) over HTTP on `addr`, so one process is the
/// whole tool: the pages are files (tower-http's `ServeDir`, index.html for a folder), and
/// `/live/...` lets a page follow this broker ([`live`]).
pub async fn serve_ui(
    addr: SocketAddr,
    dist: std::path::PathBuf,
    shared: Arc<Shared>,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app =
        live::routes(shared.clone()).fallback_service(tower_http::services::ServeDir::new(dist));
    tokio::spawn(live::announce(shared));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(bound)
}

/// The connection string to paste (the emulator's, with the port when it is not 5672).
pub fn connection_string(addr: &SocketAddr) -> String {
    let host = "localhost";
    let port = if addr.port() == 5672 {
        String::new()
    } else {
        format!(":{}", addr.port())
    };
    format!(
        "Endpoint=sb://{host}{port};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
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
        let listener = TcpListener::bind(addr).await?;
        Ok(Server {
            addr: listener.local_addr()?,
            shared: Arc::new(Shared::new(broker)),
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
        loop {
            let Ok((stream, peer)) = self.listener.accept().await else {
                continue;
            };
            if open.load(std::sync::atomic::Ordering::SeqCst) >= MAX_CONNECTIONS {
                // One connection too many: its client hears why, then the connection ends.
                tokio::spawn(conn::refuse(
                    stream,
                    format!("sbp serve takes at most {MAX_CONNECTIONS} connections at once"),
                ));
                continue;
            }
            let _ = stream.set_nodelay(true);
            open.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let shared = self.shared.clone();
            let open = open.clone();
            tokio::spawn(async move {
                conn::Conn::new(peer.to_string(), shared).run(stream).await;
                open.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
    }
}
