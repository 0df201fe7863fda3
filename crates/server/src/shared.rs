//! What the server, its connections and the live view share: the broker behind one lock, a
//! counter bumped after each change so that waiting receivers look again, and the clients
//! connected (what the live page lists), and the journal that keeps each recorded step
//! (`--state`).
use crate::broker::Broker;
use crate::journal::Journal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// The bounds every connection is held to; [`Limits::default`] is what `sbp serve` uses (tests
/// shorten the times).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// From the socket's accept to the client's `open` (protocol header and SASL included):
    /// 10 s, as RabbitMQ's handshake time-out.
    pub handshake: Duration,
    /// The idle time-out this server's `open` offers: a connection silent for longer is
    /// closed (AMQP 1.0 part 2, 2.4.5); the SDKs send empty frames well within it.
    pub idle: Duration,
    /// Bytes of unfinished (multi-frame) transfers held for all connections together.
    pub inflight: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            handshake: Duration::from_secs(10),
            idle: Duration::from_secs(120),
            inflight: 256 * 1024 * 1024,
        }
    }
}

/// What the server and its connections share: the broker, and a counter bumped after each
/// change so that waiting receivers look again.
pub struct Shared {
    pub broker: Mutex<Broker>,
    pub changed: watch::Sender<u64>,
    /// The clients connected, by connection: what the live page lists.
    clients: Mutex<std::collections::BTreeMap<u64, serde_json::Value>>,
    pub(crate) next_client: std::sync::atomic::AtomicU64,
    pub limits: Limits,
    /// Bytes of unfinished transfers held now, all connections together.
    inflight: AtomicUsize,
    /// The broker's journal (`--state`), reached without holding the broker.
    pub(crate) journal: Option<Arc<Journal>>,
}

impl Shared {
    pub fn new(broker: Broker) -> Shared {
        let journal = broker.journal.clone();
        Shared {
            journal,
            broker: Mutex::new(broker),
            changed: watch::channel(0u64).0,
            clients: Mutex::default(),
            next_client: std::sync::atomic::AtomicU64::new(1),
            limits: Limits::default(),
            inflight: AtomicUsize::new(0),
        }
    }

    /// Takes `bytes` more of the process's budget for unfinished transfers; false (and nothing
    /// taken) when it would pass [`Limits::inflight`].
    pub fn take_inflight(&self, bytes: usize) -> bool {
        self.inflight
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |held| {
                held.checked_add(bytes)
                    .filter(|total| *total <= self.limits.inflight)
            })
            .is_ok()
    }

    /// Gives back `bytes` of the budget (a transfer finished, aborted or refused).
    pub fn give_inflight(&self, bytes: usize) {
        let _ = self
            .inflight
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |held| {
                Some(held.saturating_sub(bytes))
            });
    }

    /// Bytes of unfinished transfers held now.
    pub fn inflight(&self) -> usize {
        self.inflight.load(Ordering::SeqCst)
    }

    /// The clients connected now: each one's name (its AMQP container id) and its links to
    /// entities (role, entity, link name).
    pub fn clients(&self) -> serde_json::Value {
        let clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        serde_json::Value::Array(clients.values().cloned().collect())
    }

    pub(crate) fn set_client(&self, id: u64, view: Option<serde_json::Value>) {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        match view {
            Some(v) => clients.insert(id, v),
            None => clients.remove(&id),
        };
    }

    /// Makes every step recorded so far durable (`--state`): called before a connection writes
    /// its frames, so the disposition that accepts a send goes out after its step is on disk.
    /// One fdatasync covers every step recorded before it (the connections' calls meanwhile wait
    /// for it and return); with nothing new it returns at once. The broker is not held.
    pub fn sync_journal(&self) {
        if let Some(journal) = &self.journal {
            journal.sync();
        }
    }

    /// Writes the state to `path` (`--state`) and cuts the journal to the steps after it:
    /// Ok(true) when written, Ok(false) when there was nothing new (unless `force`) or the state
    /// is too large and that was said already; Err with what to say.
    pub fn checkpoint(&self, path: &std::path::Path, force: bool) -> Result<bool, String> {
        match &self.journal {
            Some(journal) => crate::journal::checkpoint(&self.broker, journal, path, force),
            None => Ok(false),
        }
    }

    pub fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Broker> {
        self.broker.lock().unwrap_or_else(|p| p.into_inner())
    }
}
