//! What the server, its connections and the live view share: the broker behind one lock, a
//! counter bumped after each change so that waiting receivers look again, and the clients
//! connected (what the live page lists), and the journal that keeps each recorded step
//! (`--state`).
use crate::broker::Broker;
use crate::broker::QueueKey;
use crate::journal::Journal;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

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

/// The connections waiting on each queue (a receiving link with credit), each with the
/// [`Notify`] that wakes it.
type Waiting = HashMap<QueueKey, BTreeMap<u64, Arc<Notify>>>;

/// What the server and its connections share: the broker, and who waits on which queue, so
/// that after a change only the connections waiting on a queue it touched look again.
pub struct Shared {
    pub broker: Mutex<Broker>,
    waiting: Mutex<Waiting>,
    /// The clients connected, by connection: what the live page lists.
    clients: Mutex<std::collections::BTreeMap<u64, serde_json::Value>>,
    pub(crate) next_client: std::sync::atomic::AtomicU64,
    pub limits: Limits,
    /// Bytes of unfinished transfers held now, all connections together.
    inflight: AtomicUsize,
    /// The broker's journal (`--state`), reached without holding the broker.
    pub(crate) journal: Option<Arc<Journal>>,
    /// What `POST /reset` goes back to: a broker over the served file's entities, its run
    /// starting at the given Unix ms (none: resets are refused).
    pub fresh: Option<Fresh>,
    /// Resets so far: the fresh run's generation (its lock tokens differ from every run's
    /// before it, so a message left from before a reset settles nothing after it).
    resets: std::sync::atomic::AtomicU64,
    /// `--state`'s file, written at once after a reset.
    pub state: Option<std::path::PathBuf>,
}

/// Makes the broker a reset goes back to: its run starting at the given Unix ms, and its
/// generation (1 for the first reset), which a fresh run's seed takes in.
pub type Fresh = Box<dyn Fn(i64, u64) -> Result<Broker, String> + Send + Sync>;

impl Shared {
    pub fn new(broker: Broker) -> Shared {
        let journal = broker.journal.clone();
        Shared {
            journal,
            broker: Mutex::new(broker),
            waiting: Mutex::default(),
            clients: Mutex::default(),
            next_client: std::sync::atomic::AtomicU64::new(1),
            limits: Limits::default(),
            inflight: AtomicUsize::new(0),
            fresh: None,
            resets: std::sync::atomic::AtomicU64::new(0),
            state: None,
        }
    }

    /// `POST /reset`: the broker goes back to the served file's entities and an empty run (the
    /// journal emptied, the state written at once with `--state`); the speed, the printing and
    /// the wall clock stay. Every waiting receiver looks again. Gives the entities' paths.
    pub fn reset(&self) -> Result<Vec<String>, String> {
        let fresh = self
            .fresh
            .as_ref()
            .ok_or("this server was started without what a reset goes back to")?;
        let mut old = self.lock();
        let generation = self.resets.fetch_add(1, Ordering::SeqCst) + 1;
        let mut broker = fresh(old.wall_now(), generation)?;
        broker.carry_over(&old)?;
        if let Some(journal) = &self.journal {
            journal
                .clear()
                .map_err(|e| format!("cannot empty {}: {e}", journal.path().display()))?;
            broker.record_in(journal.clone());
        }
        let entities = broker.sim.ns().entities().map(|e| e.path.clone()).collect();
        *old = broker;
        drop(old);
        if let Some(path) = &self.state {
            self.checkpoint(path, true)?;
        }
        self.bump();
        Ok(entities)
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
            Some(journal) => crate::state::checkpoint(&self.broker, journal, path, force),
            None => Ok(false),
        }
    }

    /// After a change: the connections waiting on a queue the broker's new events touched
    /// look again (each once, however many of its queues were touched); the others are not
    /// woken. Costs what was touched and who waits there, not every receiver's count.
    pub fn bump(&self) {
        let touched = self.lock().take_touched();
        let waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        let mut woken = std::collections::BTreeSet::new();
        let mut wake = |conns: &BTreeMap<u64, Arc<Notify>>| {
            for (id, notify) in conns {
                if woken.insert(*id) {
                    notify.notify_one();
                }
            }
        };
        match touched {
            Some(queues) => {
                for q in queues {
                    if let Some(conns) = waiting.get(&q) {
                        wake(conns);
                    }
                }
            }
            None => waiting.values().for_each(wake),
        }
    }

    /// Connection `conn` now waits on `now` instead of `before` (it is woken through
    /// `notify` when one of them is touched).
    pub fn wait_on(
        &self,
        conn: u64,
        before: &BTreeSet<QueueKey>,
        now: &BTreeSet<QueueKey>,
        notify: &Arc<Notify>,
    ) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        for q in before.difference(now) {
            if let Some(conns) = waiting.get_mut(q) {
                conns.remove(&conn);
                if conns.is_empty() {
                    waiting.remove(q);
                }
            }
        }
        for q in now.difference(before) {
            waiting
                .entry(q.clone())
                .or_default()
                .insert(conn, notify.clone());
        }
    }
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Broker> {
        self.broker.lock().unwrap_or_else(|p| p.into_inner())
    }
}
