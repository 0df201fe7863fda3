//! What the server, its connections and the live view share: the broker behind one lock, a
//! counter bumped after each change so that waiting receivers look again, and the clients
//! connected (what the live page lists).
use crate::broker::Broker;
use std::sync::Mutex;
use tokio::sync::watch;

/// What the server and its connections share: the broker, and a counter bumped after each
/// change so that waiting receivers look again.
pub struct Shared {
    pub broker: Mutex<Broker>,
    pub changed: watch::Sender<u64>,
    /// The clients connected, by connection: what the live page lists.
    clients: Mutex<std::collections::BTreeMap<u64, serde_json::Value>>,
    pub(crate) next_client: std::sync::atomic::AtomicU64,
}

impl Shared {
    pub fn new(broker: Broker) -> Shared {
        Shared {
            broker: Mutex::new(broker),
            changed: watch::channel(0u64).0,
            clients: Mutex::default(),
            next_client: std::sync::atomic::AtomicU64::new(1),
        }
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

    pub fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Broker> {
        self.broker.lock().unwrap_or_else(|p| p.into_inner())
    }
}

