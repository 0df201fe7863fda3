//! The engine in real time: every SDK operation becomes a scenario step at its wall-clock
//! instant (`Simulation::push_step_replies`), so the run is recorded as it happens and replays
//! to the same log with `sbp run`. The clock is the wall clock since the run started; the
//! scenario's `start` is that moment in UTC, so EnqueuedTime and LockedUntil are real times.
use sbp_engine::time::{format_instant, Instant};
use sbp_engine::{BrokerError, MessageView, Reply};
use sbp_scenario::{
    Action, ModeDef, PeekDef, ReceiveDef, ReceiveDeferredDef, Scenario, SendDef, SettleDef,
    Simulation, Step,
};

/// How a settlement names its message: a named receive call's message (`c12.1`), so the lock
/// token of that delivery is what settles (RCV-08), in the live run and in its replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub entity: String,
    pub receiver: String,
    pub name: String,
    pub seq: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settle {
    Complete,
    Abandon,
    Release,
    Defer,
    DeadLetter,
}

pub struct Broker {
    pub sim: Simulation,
    calls: u64,
    /// Lock token -> the delivery it settles.
    held: Locks,
    /// Whether each operation is printed (instant, client, entity, what, rule).
    pub verbose: bool,
    /// The rule of what the last step did ([`Broker::last_step_rule`]).
    last_step_rule: Option<&'static str>,
    /// The live view's feed (`crate::live`): each recorded step and the clock, sent while the
    /// broker is held, so a page sees them in the order they happened.
    pub live: tokio::sync::broadcast::Sender<LiveEvent>,
    /// How far the clock was moved ahead of the wall clock (from the page: +1 min, next event).
    skew_ms: i64,
    /// Engine milliseconds per wall-clock millisecond (`--speed`).
    speed: i64,
    /// `--state`: where each recorded step is appended as it is recorded.
    pub journal: Option<std::sync::Arc<crate::journal::Journal>>,
    /// The wall clock in Unix milliseconds: the system's, or a test's.
    wall_clock: WallClock,
    /// Queues the log's events touched since the waiting receivers were last told, as the
    /// log names them (entity index, dead-letter queue); named by path when they are told.
    touched: std::collections::BTreeSet<(u32, bool)>,
    /// Events the log dropped unread: every queue counts as touched.
    touched_all: bool,
    /// Events of the log read so far (the dropped ones included).
    log_seen: u64,
    /// Steps of the run recorded and taken out of memory (they are the journal's lines): the
    /// timeline in memory starts after them.
    recorded: usize,
    /// Taken up from a state: where in the journal its step's line starts.
    pub(crate) journal_at: Option<u64>,
}

/// The broker's instants on the wall clock: `sbp serve --speed N` runs the engine N times as
/// fast as the wall clock, and the page may move it ahead (`skew`). A time an SDK sees or
/// sends (EnqueuedTime, LockedUntil, a scheduled enqueue time) is a wall-clock time, so a
/// program sleeping by the wall clock meets the broker's instants at the same speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Instant 0 in Unix milliseconds.
    pub start: i64,
    pub speed: i64,
    pub skew: i64,
}

impl Clock {
    /// The wall-clock time (Unix ms) of the engine's `instant`.
    pub fn utc(self, instant: Instant) -> i64 {
        self.start
            .saturating_add(instant.saturating_sub(self.skew) / self.speed.max(1))
    }

    /// The engine's instant at the wall-clock time `utc` (Unix ms).
    pub fn instant(self, utc: i64) -> Instant {
        utc.saturating_sub(self.start)
            .saturating_mul(self.speed.max(1))
            .saturating_add(self.skew)
    }
}

/// The events the engine's log keeps in `sbp serve` (the oldest half dropped at twice this):
/// nothing reads it but the terminal's last line; the recording is what replays.
pub const LOG_LIMIT: usize = 10_000;
/// Step outcomes kept (the oldest dropped at twice this).
const KEEP_OUTCOMES: usize = 1_000;
/// Locks kept before the first look for those whose message is gone.
const PRUNE_LOCKS_FROM: usize = 1_024;

/// The locks this broker gave, by token (what a settlement names) and by its receive call's
/// message name (what a replayed settlement names), and how many each receive call still
/// holds.
#[derive(Default)]
struct Locks {
    by_token: std::collections::HashMap<String, Held>,
    by_name: std::collections::HashMap<(String, String), String>,
    open_calls: std::collections::HashMap<String, usize>,
    /// How many locks kept make the next look for gone ones.
    prune_at: usize,
}

impl From<std::collections::HashMap<String, Held>> for Locks {
    fn from(held: std::collections::HashMap<String, Held>) -> Locks {
        let mut locks = Locks {
            prune_at: PRUNE_LOCKS_FROM,
            ..Locks::default()
        };
        for (token, h) in held {
            locks.insert(token, h);
        }
        locks
    }
}

/// Whether a settlement's token is done with: a settled (or lost) delivery's token settles
/// nothing more; a deferred message comes back under a new token.
fn lets_go<T>(result: &Result<T, BrokerError>) -> bool {
    result.as_ref().map_or_else(
        |e| e.kind == sbp_engine::ErrorKind::MessageLockLost,
        |_| true,
    )
}

/// The receive call a message name belongs to (`c12` of `c12.1`).
fn call_of(name: &str) -> &str {
    name.split_once('.').map_or(name, |(call, _)| call)
}

impl Locks {
    fn insert(&mut self, token: String, held: Held) {
        if let Some(old) = self.by_token.get(&token) {
            // A token given again (a deferred message comes back under a new one, never an
            // old one; a replay may write the same): the old entry goes first.
            let old = old.clone();
            self.forget(&token, &old);
        }
        *self
            .open_calls
            .entry(call_of(&held.name).to_string())
            .or_default() += 1;
        self.by_name
            .insert((held.entity.clone(), held.name.clone()), token.clone());
        self.by_token.insert(token, held);
    }

    /// Removes `token`; the receive call it belonged to when that call holds no lock more.
    fn remove(&mut self, token: &str) -> Option<String> {
        let held = self.by_token.get(token)?.clone();
        self.forget(token, &held)
    }

    fn forget(&mut self, token: &str, held: &Held) -> Option<String> {
        self.by_token.remove(token);
        self.by_name
            .remove(&(held.entity.clone(), held.name.clone()));
        let call = call_of(&held.name);
        let left = self.open_calls.get_mut(call)?;
        *left = left.saturating_sub(1);
        if *left > 0 {
            return None;
        }
        self.open_calls.remove(call);
        Some(call.to_string())
    }
}

/// The wall clock a broker reads, in Unix milliseconds: a value, so that a test can hold time
/// still or move it (the broker itself never reads the system's clock).
pub type WallClock = std::sync::Arc<dyn Fn() -> i64 + Send + Sync>;

/// The run so far, taken under the broker's lock and read after it: the scenario without
/// its steps, the journal's lines up to a mark, and the steps still in memory.
pub struct RunSoFar {
    scenario: Scenario,
    journal: Option<(std::sync::Arc<crate::journal::Journal>, u64)>,
    in_memory: Vec<Step>,
}

impl RunSoFar {
    /// The run as a scenario: its entities, then every step in order.
    pub fn scenario(self) -> Result<Scenario, String> {
        let mut scenario = self.scenario;
        if let Some((journal, end)) = self.journal {
            scenario.timeline = journal.read_steps(end)?;
        }
        scenario.timeline.extend(self.in_memory);
        Ok(scenario)
    }
}

/// A queue as a waiting receiver waits on it: its entity's path and whether it is the
/// dead-letter sub-queue. By path, not by the engine's index: an entity deleted and made again
/// (the management API), or the run reset, is the same queue to a receiver attached there.
pub type QueueKey = (std::sync::Arc<str>, bool);

/// The fastest `sbp serve --speed`.
pub const MAX_SPEED: i64 = 1000;

/// One event of the live feed: its kind (`step`, `now`) and its JSON.
#[derive(Clone, Debug)]
pub struct LiveEvent {
    pub kind: &'static str,
    pub data: String,
}

/// Events a slow page may fall behind by before its feed ends (it reconnects and starts from
/// a fresh copy of the run).
const LIVE_BACKLOG: usize = 4096;

/// The most the page may move the clock at once.
pub const MAX_CLOCK_MOVE_MS: i64 = 24 * 3_600_000;

/// The furthest the page's moves may take the clock ahead of the wall clock, in all: well
/// short of the engine's end (`sbp_engine::limits::LATEST_INSTANT`, 30 days), so moves never
/// stop the clock there, nor does a run taken up from `--state` after them.
pub const MAX_CLOCK_AHEAD_MS: i64 = 7 * 24 * 3_600_000;

impl Broker {
    /// A broker over `scenario`'s entities (its timeline, if any, is played first by the
    /// caller: `--play`).
    pub fn new(mut scenario: Scenario, start_unix_ms: i64) -> Result<Broker, String> {
        scenario.start = Some(sbp_engine::utc::format_utc(start_unix_ms, 0));
        let sim =
            Simulation::with_default_log_limit(&scenario, LOG_LIMIT).map_err(|e| e.to_string())?;
        Ok(Broker::assemble(sim, 0, Default::default()))
    }

    /// A broker over a simulation, its receive calls so far and the locks it gave: quiet, on
    /// the wall clock, with its live feed.
    fn assemble(
        sim: Simulation,
        calls: u64,
        held: std::collections::HashMap<String, Held>,
    ) -> Broker {
        Broker {
            sim,
            calls,
            held: Locks::from(held),
            verbose: false,
            last_step_rule: None,
            live: tokio::sync::broadcast::channel(LIVE_BACKLOG).0,
            skew_ms: 0,
            speed: 1,
            journal: None,
            wall_clock: std::sync::Arc::new(unix_now),
            touched: Default::default(),
            touched_all: false,
            log_seen: 0,
            recorded: 0,
            journal_at: None,
        }
    }

    /// The engine's instant now: milliseconds of the wall clock since the run started (a run
    /// taken up from `--state` goes on where the wall clock is: what fell due meanwhile, a
    /// lock's lapse or a message's expiry, happens at once).
    pub fn now(&self) -> Instant {
        self.clock()
            .instant((self.wall_clock)())
            .min(sbp_engine::limits::LATEST_INSTANT)
    }

    /// The steps recorded so far: the run's length.
    pub fn steps(&self) -> usize {
        self.recorded + self.sim.scenario().timeline.len()
    }

    /// Counts `n` more steps as recorded on disk (written to the journal by its caller).
    pub(crate) fn mark_recorded(&mut self, n: usize) {
        self.recorded += n;
    }

    /// Keeps the run's steps in `journal` from now on instead of memory: the steps run so far
    /// and still in memory are appended first, then each step as it is recorded.
    pub fn record_in(&mut self, journal: std::sync::Arc<crate::journal::Journal>) {
        for step in self.sim.take_run_steps() {
            journal.append(self.recorded, step.at.ms(), &step);
            self.recorded += 1;
        }
        self.journal = Some(journal);
    }

    /// The run so far, as a page following the server or `--record` gets it: the scenario
    /// without its steps, and where they are (read with [`RunSoFar::scenario`] after the broker
    /// is let go: a long run is not copied under the broker's lock).
    pub fn run_so_far(&mut self) -> RunSoFar {
        let scenario = self.sim.scenario_without_timeline();
        RunSoFar {
            scenario,
            journal: self.journal.as_ref().map(|j| (j.clone(), j.mark().0)),
            in_memory: self.sim.scenario().timeline.clone(),
        }
    }

    /// A broker made anew for a reset takes over `old`'s speed, printing and wall clock; every
    /// queue counts as touched (what waited on the old one looks again).
    pub fn carry_over(&mut self, old: &Broker) -> Result<(), String> {
        self.verbose = old.verbose;
        self.wall_clock = old.wall_clock.clone();
        self.set_speed(old.speed)?;
        self.touched_all = true;
        Ok(())
    }

    /// The wall clock now, in Unix ms (the system's, or a test's).
    pub fn wall_now(&self) -> i64 {
        (self.wall_clock)()
    }

    /// Reads `wall_clock` from now on instead of the system's.
    pub fn with_wall_clock(mut self, wall_clock: WallClock) -> Broker {
        self.wall_clock = wall_clock;
        self
    }

    /// The instants on the wall clock.
    pub fn clock(&self) -> Clock {
        Clock {
            start: self.sim.start_unix_ms,
            speed: self.speed,
            skew: self.skew_ms,
        }
    }

    /// `--speed N`: the engine's clock runs N times as fast as the wall clock from now on (1 to
    /// [`MAX_SPEED`]); the instant now stays where it is.
    pub fn set_speed(&mut self, speed: i64) -> Result<(), String> {
        if !(1..=MAX_SPEED).contains(&speed) {
            return Err(format!(
                "--speed {speed}: from 1 to {MAX_SPEED} (the engine's clock against the wall clock)"
            ));
        }
        let now = self.now();
        self.speed = speed;
        self.skew_ms = 0;
        self.skew_ms = now - self.now();
        Ok(())
    }

    /// Moves the clock forward (from the live page): by `by` ms, or to the engine's next due
    /// timer (`None`), so a lock lapses or a message expires without waiting; the SDKs see it.
    /// Gives the instant now; a move out of bounds (more than [`MAX_CLOCK_MOVE_MS`] at once, or
    /// past [`MAX_CLOCK_AHEAD_MS`] ahead of the wall clock in all) is refused with the limit
    /// named, and changes nothing.
    pub fn move_clock(&mut self, by: Option<i64>) -> Result<Instant, String> {
        self.tick();
        let by = match by {
            Some(ms) if (1..=MAX_CLOCK_MOVE_MS).contains(&ms) => ms,
            Some(ms) => {
                return Err(format!(
                    "a clock move goes forward by 1 ms to {} at once; {ms} ms is not that",
                    sbp_engine::time::format_duration(MAX_CLOCK_MOVE_MS)
                ))
            }
            // What happens next as the page says it (a timer that no longer applies, a
            // settled message's lock, is passed over).
            None => match self.sim.next_event() {
                Some((due, _)) => (due - self.sim.now()).max(0),
                None => return Err("nothing is due: no timer to move the clock to".into()),
            },
        };
        let ahead = self.skew_ms.saturating_add(by);
        if ahead > MAX_CLOCK_AHEAD_MS {
            return Err(format!(
                "the clock goes at most {} ahead of the wall clock in all; it is {} ahead, and \
                 {} more would pass that",
                sbp_engine::time::format_duration(MAX_CLOCK_AHEAD_MS),
                sbp_engine::time::format_duration(self.skew_ms.max(0)),
                sbp_engine::time::format_duration(by)
            ));
        }
        if self.now() >= sbp_engine::limits::LATEST_INSTANT {
            return Err(format!(
                "the clock is at its end ({})",
                format_instant(sbp_engine::limits::LATEST_INSTANT)
            ));
        }
        self.skew_ms = ahead;
        self.tick();
        self.announce_now(None);
        Ok(self.sim.now())
    }

    /// Sends the clock to the live pages, with the clients connected when given.
    pub fn announce_now(&mut self, clients: Option<serde_json::Value>) {
        if self.live.receiver_count() == 0 {
            return;
        }
        let mut data = serde_json::json!({ "now": self.sim.now() });
        if let Some(c) = clients {
            data["clients"] = c;
        }
        let _ = self.live.send(LiveEvent {
            kind: "now",
            data: data.to_string(),
        });
    }

    /// Runs every timer due by now (lapsed locks, expiry, scheduled messages).
    pub fn tick(&mut self) {
        let now = self.now().max(self.sim.now());
        self.sim.advance_to(now);
        self.note_touched();
    }

    /// When the engine next has something to do, as a wall-clock delay from now.
    pub fn next_due_in(&mut self) -> Option<std::time::Duration> {
        let due = self.sim.next_due()?;
        let wait = (due - self.now()).max(0) / self.speed;
        Some(std::time::Duration::from_millis(wait as u64))
    }

    /// The rule of what the last step did, as the terminal tags it (`[RCV-05]`); None when it
    /// logged nothing that names one (a peek, an empty receive).
    pub fn last_step_rule(&self) -> Option<&'static str> {
        self.last_step_rule
    }

    /// Runs `action` as a step of the run now: recorded, journaled, sent to the live pages and
    /// printed; what the engine answered.
    pub fn run(&mut self, client: &str, action: Action) -> Result<Vec<Reply>, BrokerError> {
        self.tick();
        let words = Step::new(action.clone()).action_text();
        let steps = self.sim.scenario().timeline.len();
        // Events ever logged before the step: what it logs is after them.
        let logged = self.sim.ns().events_logged();
        let result = self.sim.push_step_replies(Step::new(action));
        let recorded = self.sim.scenario().timeline.len() > steps;
        // The step as recorded (with its expect_error when it failed), at its place in the run.
        let step = self.sim.outcomes.last().filter(|_| recorded).and_then(|o| {
            Some((
                self.recorded + o.index,
                self.sim.scenario().timeline.get(o.index)?,
            ))
        });
        if let Some((index, step)) = step {
            if let Some(journal) = &self.journal {
                journal.append(index, step.at.ms(), step);
            }
            if self.live.receiver_count() > 0 {
                let data = serde_json::json!({ "index": index, "step": step });
                let _ = self.live.send(LiveEvent {
                    kind: "step",
                    data: data.to_string(),
                });
            }
        }
        // With a journal the run's steps are on disk: none stays in memory.
        if self.journal.is_some() {
            self.recorded += self.sim.take_run_steps().len();
        }
        self.prune_locks();
        self.note_touched();
        // The rule of what this step did (its last event that names one): a peek or an empty
        // receive logs nothing, and names no rule.
        self.last_step_rule = self
            .sim
            .ns()
            .events_since(logged)
            .0
            .iter()
            .rev()
            .find_map(|e| e.rule)
            .map(|r| r.id());
        if self.verbose {
            let at = format_instant(self.sim.now());
            let rule = self
                .last_step_rule
                .map(|r| format!("  [{r}]"))
                .unwrap_or_default();
            // A closed standard output (`sbp serve | head`) does not stop the server.
            use std::io::Write as _;
            let mut out = std::io::stdout();
            let _ = match &result {
                Ok(_) => writeln!(out, "{at:>10}  {client:<24} {words}{rule}"),
                Err(e) => writeln!(
                    out,
                    "{at:>10}  {client:<24} {words}  failed: {} {}",
                    e.kind.name(),
                    e.message
                ),
            };
        }
        // Only the last step's outcome is read (above); the rest would grow with the run.
        if self.sim.outcomes.len() >= 2 * KEEP_OUTCOMES {
            let drop = self.sim.outcomes.len() - KEEP_OUTCOMES;
            self.sim.outcomes.drain(..drop);
        }
        result
    }

    /// Sends (SEND-01); the SequenceNumbers given (0 for a duplicate dropped, DUP-02).
    pub fn send(&mut self, client: &str, def: SendDef) -> Result<Vec<u64>, BrokerError> {
        let replies = self.run(client, Action::Send(def))?;
        Ok(replies
            .into_iter()
            .filter_map(|r| match r {
                Reply::Sent { seq } => Some(seq),
                _ => None,
            })
            .collect())
    }

    fn next_call(&mut self) -> String {
        self.calls += 1;
        format!("c{}", self.calls)
    }

    /// Keeps each lock a receive call gave, for its settlement; a call that holds none (empty,
    /// ReceiveAndDelete) is forgotten at once, so the named calls are those still held.
    fn remember(&mut self, call: &str, entity: &str, receiver: &str, got: &[MessageView]) {
        let mut held = 0;
        for (i, m) in got.iter().enumerate() {
            if let Some(token) = &m.lock_token {
                held += 1;
                self.held.insert(
                    token.clone(),
                    Held {
                        entity: entity.to_string(),
                        receiver: receiver.to_string(),
                        name: format!("{call}.{}", i + 1),
                        seq: m.sequence_number,
                    },
                );
            }
        }
        if held == 0 {
            self.sim.forget_call(call);
        }
    }

    /// Lets go of a lock token (settled, lost, or its message gone): its receive call is
    /// forgotten once it holds no lock.
    fn release(&mut self, token: &str) {
        if let Some(call) = self.held.remove(token) {
            self.sim.forget_call(&call);
        }
    }

    /// After a step: once the locks kept have doubled since they were last looked at, those
    /// whose message left its entity (completed, expired, dead-lettered elsewhere) are let go.
    /// Each look costs what is kept, and comes after as many new locks: one operation's cost
    /// does not grow with the run's length.
    fn prune_locks(&mut self) {
        if self.held.by_token.len() < self.held.prune_at {
            return;
        }
        let gone: Vec<String> = self
            .held
            .by_token
            .iter()
            .filter(|(_, h)| {
                !self
                    .store(&h.entity)
                    .is_some_and(|s| s.messages.contains_key(&h.seq))
            })
            .map(|(t, _)| t.clone())
            .collect();
        for token in gone {
            self.release(&token);
        }
        self.held.prune_at = (2 * self.held.by_token.len()).max(PRUNE_LOCKS_FROM);
    }

    fn messages(replies: Vec<Reply>) -> Vec<MessageView> {
        replies
            .into_iter()
            .flat_map(|r| match r {
                Reply::Messages(ms) => ms,
                _ => Vec::new(),
            })
            .collect()
    }

    /// Receives up to `count` (RCV-01, RCV-02), remembering each lock for its settlement.
    pub fn receive(
        &mut self,
        client: &str,
        entity: &str,
        receiver: &str,
        mode: sbp_engine::ReceiveMode,
        count: u32,
    ) -> Result<Vec<MessageView>, BrokerError> {
        let call = self.next_call();
        let def = ReceiveDef {
            from: entity.to_string(),
            receiver: receiver.to_string(),
            mode: match mode {
                sbp_engine::ReceiveMode::PeekLock => ModeDef::PeekLock,
                sbp_engine::ReceiveMode::ReceiveAndDelete => ModeDef::ReceiveAndDelete,
            },
            count: Some(count),
            max_auto_lock_renewal: None,
            transfer_fails: false,
            name: Some(call.clone()),
        };
        self.received(client, Action::Receive(def), &call, entity, receiver)
    }

    /// RCV-09: receives deferred messages by SequenceNumber.
    pub fn receive_deferred(
        &mut self,
        client: &str,
        entity: &str,
        receiver: &str,
        seqs: Vec<u64>,
    ) -> Result<Vec<MessageView>, BrokerError> {
        let call = self.next_call();
        let def = ReceiveDeferredDef {
            from: entity.to_string(),
            seqs,
            receiver: receiver.to_string(),
            name: Some(call.clone()),
        };
        self.received(
            client,
            Action::ReceiveDeferred(def),
            &call,
            entity,
            receiver,
        )
    }

    /// Runs a receive `action` of receive call `call` (by `receiver` from `entity`) and
    /// remembers each lock it took, for the settlements that name its messages.
    fn received(
        &mut self,
        client: &str,
        action: Action,
        call: &str,
        entity: &str,
        receiver: &str,
    ) -> Result<Vec<MessageView>, BrokerError> {
        let got = Self::messages(self.run(client, action)?);
        self.remember(call, entity, receiver, &got);
        Ok(got)
    }

    /// RCV-11: browses from a SequenceNumber.
    pub fn peek(
        &mut self,
        client: &str,
        entity: &str,
        from_seq: Option<u64>,
        count: u32,
    ) -> Result<Vec<MessageView>, BrokerError> {
        let def = PeekDef {
            from: entity.to_string(),
            from_seq,
            count: Some(count),
            receiver: client.to_string(),
            name: None,
        };
        Ok(Self::messages(self.run(client, Action::Peek(def))?))
    }

    /// Whether a receive from `entity` would get a message now: one is Active and unlocked
    /// (what `Counts::active` counts). A waiting receiver asks the engine again only then, so
    /// the recording holds no empty polls. Observing changes nothing and costs what the
    /// answer needs, not the queue's length (a session receiver looks through the receivable
    /// messages for its own session's).
    pub fn has_available(&self, entity: &str, session: Option<&str>) -> bool {
        self.store(entity).is_some_and(|store| match session {
            // A session receiver waits for its own session's messages only (SES-02): others'
            // arriving do not make it ask the engine (and record an empty receive).
            Some(id) => store
                .messages
                .available()
                .any(|m| m.session_id() == Some(id)),
            None => store.first_available().is_some(),
        })
    }

    /// The messages a queue path names (an entity, or its dead-letter queue), if it exists.
    fn store(&self, path: &str) -> Option<&sbp_engine::Store> {
        let q = self.sim.ns().resolve(path).ok()?;
        let name = self.sim.ns().entity_name(q.entity);
        Some(self.sim.ns().entity(name)?.store(q.dlq))
    }

    /// The queue a path names, as the log names it (entity, dead-letter sub-queue): what a
    /// waiting receiver waits on; MessagingEntityNotFound when it names none.
    pub fn queue_key(&self, path: &str) -> Result<QueueKey, BrokerError> {
        let q = self.sim.ns().resolve(path)?;
        Ok((self.sim.ns().entity_name(q.entity).into(), q.dlq))
    }

    /// Reads the log's events since the last call into the queues touched: where a waiting
    /// receiver may find a message now. Events the log dropped unread (a step that made more
    /// than it keeps) touch every queue.
    fn note_touched(&mut self) {
        let (events, unread_dropped) = self.sim.ns().events_since(self.log_seen);
        if unread_dropped {
            self.touched_all = true;
        }
        for e in events {
            self.touched.insert((e.entity, e.dlq));
        }
        self.log_seen = self.sim.ns().events_logged();
    }

    /// The queues touched since the last call (all of them: None).
    pub fn take_touched(&mut self) -> Option<std::collections::BTreeSet<QueueKey>> {
        self.note_touched();
        let touched = std::mem::take(&mut self.touched);
        if std::mem::take(&mut self.touched_all) {
            return None;
        }
        let ns = &self.sim.ns();
        Some(
            touched
                .into_iter()
                .map(|(entity, dlq)| (ns.entity_name(entity).into(), dlq))
                .collect(),
        )
    }

    /// The delivery a lock token names, if this broker gave it.
    pub fn held(&self, token: &str) -> Option<&Held> {
        self.held.by_token.get(token)
    }

    /// Settles the delivery of `token` (RCV-05); an unknown token is a lost lock (RCV-08).
    pub fn settle(
        &mut self,
        client: &str,
        token: &str,
        how: Settle,
        reason: Option<String>,
        description: Option<String>,
    ) -> Result<(), BrokerError> {
        let Some(held) = self.held.by_token.get(token).cloned() else {
            return Err(BrokerError::new(
                sbp_engine::ErrorKind::MessageLockLost,
                sbp_engine::text!("e-serve-unknown-lock", token = token),
            ));
        };
        let def = SettleDef {
            from: held.entity.clone(),
            seq: held.seq,
            message: Some(held.name.clone()),
            receiver: held.receiver.clone(),
            reason,
            description,
        };
        let action = match how {
            Settle::Complete => Action::Complete(def),
            Settle::Abandon => Action::Abandon(def),
            Settle::Release => Action::Release(def),
            Settle::Defer => Action::Defer(def),
            Settle::DeadLetter => Action::DeadLetter(def),
        };
        let result = self.run(client, action).map(|_| ());
        if lets_go(&result) {
            self.release(token);
        }
        result
    }

    /// RCV-04: renews the lock of `token`; its new LockedUntil.
    pub fn renew(&mut self, client: &str, token: &str) -> Result<Instant, BrokerError> {
        let Some(held) = self.held.by_token.get(token).cloned() else {
            return Err(BrokerError::new(
                sbp_engine::ErrorKind::MessageLockLost,
                sbp_engine::text!("e-serve-unknown-lock", token = token),
            ));
        };
        let def = SettleDef {
            from: held.entity.clone(),
            seq: held.seq,
            message: Some(held.name.clone()),
            receiver: held.receiver.clone(),
            reason: None,
            description: None,
        };
        self.run(client, Action::RenewLock(def))?;
        self.sim
            .ns()
            .message(&held.entity, held.seq, sbp_engine::Perspective::Receive)
            .and_then(|m| m.locked_until)
            .ok_or_else(|| {
                BrokerError::new(
                    sbp_engine::ErrorKind::MessageLockLost,
                    sbp_engine::text!("e-serve-unknown-lock", token = token),
                )
            })
    }

    /// SES-02..05: a session operation of `receiver` on `entity` (accept takes a SessionId or
    /// the next available); what the session is now.
    pub fn session(
        &mut self,
        client: &str,
        entity: &str,
        receiver: &str,
        op: sbp_scenario::SessionOpDef,
        session_id: Option<String>,
        state: Option<sbp_engine::Body>,
    ) -> Result<Option<sbp_engine::SessionView>, BrokerError> {
        let def = sbp_scenario::SessionDef {
            receiver: receiver.to_string(),
            from: entity.to_string(),
            op,
            session_id,
            state,
            name: None,
        };
        let replies = self.run(client, Action::Session(def))?;
        Ok(replies.into_iter().find_map(|r| match r {
            Reply::Session(v) => Some(v),
            _ => None,
        }))
    }

    /// SCH-01: cancels a scheduled message.
    pub fn cancel_scheduled(
        &mut self,
        client: &str,
        entity: &str,
        seq: u64,
    ) -> Result<(), BrokerError> {
        let def = sbp_scenario::CancelDef {
            to: entity.to_string(),
            seq,
        };
        self.run(client, Action::CancelScheduled(def)).map(|_| ())
    }

    /// The broker's state as a file's text (`--state`, version 2): the scenario with the steps
    /// still in memory (none when a journal keeps them), how many steps came before them (the
    /// journal's lines), its state at this instant (the engine's checkpoint, base64; none after
    /// a failed check, when the scenario replays to the instant instead), and which lock token
    /// settles which delivery. Refused, with the reason, past
    /// [`crate::journal::MAX_STATE_BYTES`]: the limit the state is read with.
    pub fn state(&mut self) -> Result<String, String> {
        self.state_within(crate::journal::MAX_STATE_BYTES)
    }

    /// As [`Broker::state`], within `max` bytes.
    pub(crate) fn state_within(&mut self, max: usize) -> Result<String, String> {
        use base64::Engine as _;
        let too_large = || {
            format!(
                "the state is larger than {max} bytes ({} MiB), the most a state file is",
                max >> 20
            )
        };
        self.tick();
        let checkpoint = if !self.sim.failures.is_empty() {
            serde_json::Value::Null
        } else {
            let bytes = sbp_scenario::checkpoint::save_without_timeline(&mut self.sim, max)
                .ok_or_else(too_large)?;
            base64::engine::general_purpose::STANDARD
                .encode(bytes)
                .into()
        };
        let held: Vec<serde_json::Value> = self
            .held
            .by_token
            .iter()
            .map(|(t, h)| serde_json::json!([t, h.entity, h.receiver, h.name, h.seq]))
            .collect();
        // The steps before `recorded` are the journal's lines (the recording on disk), not
        // written here: what a checkpoint writes is the state now, not the run's length (with a
        // journal no step stays in memory; without one, those in memory are written).
        let scenario =
            serde_json::to_value(self.sim.scenario()).map_err(|e| format!("its scenario: {e}"))?;
        let text = serde_json::json!({
            "state": "sbp serve",
            "version": 2,
            "scenario": scenario,
            "recorded": self.recorded,
            // Where the journal's line for step `recorded` starts: a restart reads from there.
            "journal_at": self.journal.as_ref().map(|j| j.mark().0),
            "at": self.sim.now(),
            "checkpoint": checkpoint,
            "calls": self.calls,
            "held": held,
        })
        .to_string();
        if text.len() > max {
            return Err(too_large());
        }
        Ok(text)
    }

    /// Takes up a state written by [`Broker::state`]; a file that does not hold together is
    /// refused with the reason, and nothing is taken up. A state of version 2 goes on after
    /// the journal's first `recorded` lines (the run so far, not in the file); one of version 1
    /// holds its steps itself.
    pub fn from_state(text: &str) -> Result<Broker, String> {
        use base64::Engine as _;
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not a state file: {e}"))?;
        let version = v.get("version").and_then(serde_json::Value::as_u64);
        if v.get("state").and_then(|s| s.as_str()) != Some("sbp serve")
            || !matches!(version, Some(1 | 2))
        {
            return Err("not a state file of sbp serve (version 1 or 2)".into());
        }
        let scenario = Scenario::from_json(&v["scenario"].to_string())
            .map_err(|e| format!("its scenario: {e}"))?;
        // Version 2: the run's first `recorded` steps are the journal's lines, not in the file.
        let covers_timeline = version == Some(1);
        let recorded = if covers_timeline {
            0
        } else {
            v["recorded"]
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or("its count of recorded steps (recorded) is missing")?
        };
        let at = v["at"].as_i64().ok_or("its instant (at) is missing")?;
        let mut sim = Simulation::with_default_log_limit(&scenario, LOG_LIMIT)
            .map_err(|e| format!("its scenario: {e}"))?;
        match &v["checkpoint"] {
            // No checkpoint (t=0, or a check had failed): the scenario replays to its instant.
            serde_json::Value::Null => {
                scenario
                    .check_run_within(at, sbp_engine::limits::MAX_RUN_WORK)
                    .map_err(|e| format!("its scenario: {e}"))?;
                sim.advance_to(at);
            }
            checkpoint => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(checkpoint.as_str().ok_or("its checkpoint is missing")?)
                    .map_err(|e| format!("its checkpoint: {e}"))?;
                let max = crate::journal::MAX_STATE_BYTES;
                if covers_timeline {
                    sbp_scenario::checkpoint::restore_within(&mut sim, at, &bytes, max)
                } else {
                    sbp_scenario::checkpoint::restore_without_timeline(&mut sim, at, &bytes, max)
                }
                .map_err(|e| format!("its checkpoint: {e}"))?;
            }
        }
        let mut held = std::collections::HashMap::new();
        for h in v["held"].as_array().ok_or("its locks (held) are missing")? {
            let field = |i: usize| h.get(i).and_then(|x| x.as_str()).map(String::from);
            let (Some(token), Some(entity), Some(receiver), Some(name), Some(seq)) = (
                field(0),
                field(1),
                field(2),
                field(3),
                h.get(4).and_then(|x| x.as_u64()),
            ) else {
                return Err("a lock in held does not hold together".into());
            };
            held.insert(
                token,
                Held {
                    entity,
                    receiver,
                    name,
                    seq,
                },
            );
        }
        let mut broker = Broker::assemble(sim, v["calls"].as_u64().unwrap_or(0), held);
        broker.recorded = recorded;
        broker.journal_at = v["journal_at"].as_u64();
        broker.catch_up_clock();
        Ok(broker)
    }

    /// A clock that had been moved ahead goes on from where it was, never back.
    pub(crate) fn catch_up_clock(&mut self) {
        let behind = self.sim.now() - self.now();
        if behind > 0 {
            self.skew_ms = self.skew_ms.saturating_add(behind);
        }
    }

    /// Replays a step read from the journal: at its instant, as the live run pushed it, with
    /// the broker's own bookkeeping as the live call did it (the receive calls' names, which
    /// lock token settles which delivery). The step must be recorded as it was: the same
    /// instant, the same outcome.
    pub(crate) fn replay(&mut self, at: Instant, step: &Step) -> Result<(), String> {
        let action = step.action.clone().ok_or("a step without an action")?;
        if at < self.sim.now() {
            return Err(format!(
                "its instant {} is before the run's ({})",
                format_instant(at),
                format_instant(self.sim.now())
            ));
        }
        self.sim.advance_to(at);
        let steps = self.sim.scenario().timeline.len();
        let result = self.sim.push_step_replies(Step::new(action.clone()));
        if self.sim.scenario().timeline.get(steps) != Some(step) {
            return Err("it is not recorded as it was (the engine answered otherwise)".into());
        }
        // It is a line of the journal already: it leaves memory.
        self.recorded += self.sim.take_run_steps().len();
        match action {
            Action::Receive(ReceiveDef {
                from,
                receiver,
                name: Some(call),
                ..
            })
            | Action::ReceiveDeferred(ReceiveDeferredDef {
                from,
                receiver,
                name: Some(call),
                ..
            }) => {
                if let Some(n) = call.strip_prefix('c').and_then(|n| n.parse().ok()) {
                    self.calls = self.calls.max(n);
                }
                if let Ok(replies) = result {
                    self.remember(&call, &from, &receiver, &Self::messages(replies));
                }
            }
            Action::Complete(def)
            | Action::Abandon(def)
            | Action::Release(def)
            | Action::Defer(def)
            | Action::DeadLetter(def) => {
                if let (true, Some(name)) = (lets_go(&result), &def.message) {
                    let token = self.held.by_name.get(&(def.from.clone(), name.clone()));
                    if let Some(token) = token.cloned() {
                        self.release(&token);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The run so far as a scenario: its entities and every step at its instant, and, as an
    /// expectation at the last instant, the state the live run reached (every entity's and
    /// dead-letter queue's counts, and the namespace's totals), so `sbp check` proves that the
    /// replay reaches it.
    pub fn recording(&mut self) -> Result<Scenario, String> {
        self.tick();
        let mut s = self.run_so_far().scenario()?;
        s.name = "Recorded by sbp serve".into();
        let expect = self.sim.recorded_expectation();
        s.expect = vec![expect];
        Ok(s)
    }
}

/// The system's wall clock in Unix milliseconds.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_puts_instants_on_the_wall_clock_at_its_speed() {
        let c = Clock {
            start: 1_000_000,
            speed: 10,
            skew: 500,
        };
        assert_eq!(c.instant(c.utc(60_500)), 60_500);
        // Ten seconds of the engine are one of the wall clock.
        assert_eq!(c.utc(10_500) - c.utc(500), 1_000);
        let one = Clock {
            start: 5,
            speed: 1,
            skew: 0,
        };
        assert_eq!(one.utc(7), 12);
    }

    #[test]
    fn a_speed_out_of_its_range_is_refused_with_the_range_and_changes_nothing() {
        let scenario = Scenario::from_json(r#"{"version": 1, "entities": [{"queue": "q"}]}"#)
            .expect("a scenario");
        let mut b = Broker::new(scenario, unix_now()).expect("a broker");
        for bad in [0, -3, MAX_SPEED + 1] {
            let e = b.set_speed(bad).expect_err("refused");
            assert!(e.contains("from 1 to 1000"), "{e}");
            assert_eq!(b.clock().speed, 1);
        }
        let before = b.now();
        b.set_speed(100).expect("taken");
        // The instant now stays where it was; from now on it runs 100 times as fast.
        assert!((b.now() - before).abs() < 1_000, "{} vs {before}", b.now());
    }
}
