//! Instant rewind: checkpoints of a running [`Simulation`], taken as it runs, so that going to
//! any instant replays from the nearest checkpoint before it instead of from the start.
//!
//! A checkpoint is a copy of the simulation (the engine is deterministic, so going on from it is
//! exactly what going on from the start would do); only its log is cut to the last
//! [`CHECKPOINT_LOG`] events. The engine keeps its stored messages in shared pages of 64
//! (`sbp_engine::pages`), so a copy costs one pointer per page, and what the run changes
//! afterwards is copied a page at a time: a checkpoint's own memory is the messages the run
//! changed or removed since, not all it stores. The rest is copied whole: the timers among it,
//! which are few (a message's expiry is one timer per page of 64, a lock's lapse one per
//! queue). Checkpoints are taken every `every` units of
//! work (`Namespace::advance_by`), so a replay from one costs at most that much; their memory is
//! bounded by [`CHECKPOINT_BYTES`] and their number by [`MAX_CHECKPOINTS`]: past either, every
//! second checkpoint goes and the spacing doubles.
use crate::run::Simulation;
use crate::scenario::Scenario;
use sbp_engine::time::Instant;

/// Events a checkpoint keeps of the log (the log view after a rewind starts there).
pub const CHECKPOINT_LOG: usize = 1_000;
/// Timers of work between two checkpoints at first.
pub const CHECKPOINT_EVERY: usize = 20_000;
/// The most memory all checkpoints of one run may take (estimated).
pub const CHECKPOINT_BYTES: usize = 64 << 20;
/// The most checkpoints kept.
pub const MAX_CHECKPOINTS: usize = 400;

/// Estimated bytes of memory: per stored message held by a checkpoint alone, per page pointer
/// and per timer a copy takes, per logged event, and per checkpoint besides.
const BYTES_PER_MESSAGE: usize = 260;
const BYTES_PER_PAGE: usize = 16;
const BYTES_PER_TIMER: usize = 64;
const BYTES_PER_EVENT: usize = 96;
const BYTES_PER_CHECKPOINT: usize = 8_192;

struct Checkpoint {
    at: Instant,
    sim: Simulation,
    /// Its copy's own cost: the chunk pointers, the log, the rest of the state.
    own: usize,
    /// The memory only it holds now: pages (and their bodies) the run has since changed or
    /// removed.
    held: usize,
    /// The messages its pages hold.
    messages: usize,
}

impl Checkpoint {
    fn bytes(&self) -> usize {
        self.own + self.held
    }
}

/// The checkpoints of one scenario's run, in the order they were taken (by instant).
pub struct Rewind {
    checkpoints: Vec<Checkpoint>,
    every: usize,
    /// Timers fired since the last checkpoint.
    since: usize,
    bytes: usize,
    /// The furthest instant this run has reached (with the scenario as it is).
    furthest: Instant,
}

impl Default for Rewind {
    fn default() -> Self {
        Rewind {
            checkpoints: Vec::new(),
            every: CHECKPOINT_EVERY,
            since: 0,
            bytes: 0,
            furthest: 0,
        }
    }
}

impl Rewind {
    /// A rewind whose first checkpoint is `sim` as it is now (usually at t=0).
    pub fn starting_at(sim: &mut Simulation) -> Rewind {
        Rewind::with_spacing(sim, CHECKPOINT_EVERY)
    }

    /// As [`Rewind::starting_at`], with checkpoints every `every` units of work at first.
    pub fn with_spacing(sim: &mut Simulation, every: usize) -> Rewind {
        let mut rewind = Rewind {
            every: every.max(1),
            ..Rewind::default()
        };
        rewind.take(sim);
        rewind
    }

    pub fn len(&self) -> usize {
        self.checkpoints.len()
    }
    pub fn is_empty(&self) -> bool {
        self.checkpoints.is_empty()
    }
    /// The estimated memory the checkpoints take.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// The instants of the checkpoints, oldest first.
    pub fn instants(&self) -> impl Iterator<Item = Instant> + '_ {
        self.checkpoints.iter().map(|c| c.at)
    }

    /// Runs `sim` towards `until` as [`Simulation::advance_within`] does (the same budget of
    /// timers, the same answer), taking checkpoints on the way.
    pub fn advance(&mut self, sim: &mut Simulation, until: Instant, budget: &mut usize) -> bool {
        loop {
            let allowed = (*budget).min(self.every.saturating_sub(self.since).max(1));
            let mut chunk = allowed;
            let reached = sim.advance_within(until, &mut chunk);
            let used = allowed - chunk;
            *budget -= used;
            self.since += used;
            if self.since >= self.every {
                self.take(sim);
            }
            self.furthest = self.furthest.max(sim.now());
            if reached || *budget == 0 {
                return reached;
            }
        }
    }

    /// Forgets the checkpoints at or after `at`: the scenario changed from there on (a step
    /// recorded at `at`).
    pub fn forget_from(&mut self, at: Instant) {
        while self.checkpoints.last().is_some_and(|c| c.at >= at) {
            if let Some(c) = self.checkpoints.pop() {
                self.bytes -= c.bytes();
            }
        }
        self.since = 0;
        self.furthest = self.furthest.min(at);
    }

    /// The furthest instant the run has reached: where a timeline can go back to at once.
    pub fn furthest(&self) -> Instant {
        self.furthest
    }

    /// The latest checkpoint at or before `at`.
    fn latest(&mut self, at: Instant) -> Option<&mut Checkpoint> {
        let index = self.checkpoints.partition_point(|c| c.at <= at);
        self.checkpoints.get_mut(index.checked_sub(1)?)
    }

    /// A copy of the latest checkpoint at or before `at`, running `scenario` (the current
    /// scenario, of which the checkpoint's steps are the start). None when there is none.
    pub fn restore(&mut self, scenario: &Scenario, at: Instant) -> Option<Simulation> {
        let mut sim = self.latest(at)?.sim.snapshot(CHECKPOINT_LOG);
        sim.scenario = scenario.clone();
        Some(sim)
    }

    /// Where to go on from for `at`, given the running `sim`: the running simulation itself when
    /// it is at or before `at` and no checkpoint lies between, else a restored checkpoint.
    pub fn seek(&mut self, sim: &mut Simulation, at: Instant) -> bool {
        let latest = self.latest(at).map(|c| c.at);
        if sim.now() <= at && latest.is_none_or(|c| c <= sim.now()) {
            return true;
        }
        match self.restore(&sim.scenario, at) {
            Some(restored) => {
                *sim = restored;
                // Work from the restored checkpoint counts towards the next one only past
                // the last checkpoint taken.
                self.since = 0;
                true
            }
            None => false,
        }
    }

    fn take(&mut self, sim: &mut Simulation) {
        self.since = 0;
        let at = sim.now();
        // A checkpoint is only ever added after the ones before it (a rewind forgets the later
        // ones first, or goes on from a checkpoint at or before the last).
        if self.checkpoints.last().is_some_and(|c| c.at > at) {
            return;
        }
        let (messages, body_bytes) = sim.ns.stored_totals();
        let messages = messages as usize;
        let unshared = sim.ns.unshared_messages().min(messages);
        // What the last checkpoint held that the run no longer shares (changed or removed since)
        // is now that checkpoint's alone.
        let body_per_message = (body_bytes as usize).checked_div(messages).unwrap_or(0);
        if let Some(last) = self.checkpoints.last_mut() {
            let diverged = last.messages.saturating_sub(messages - unshared);
            let held = diverged * (BYTES_PER_MESSAGE + body_per_message);
            last.held += held;
            self.bytes += held;
        }
        let own = BYTES_PER_CHECKPOINT
            + sim.ns.page_count() * BYTES_PER_PAGE
            + sim.ns.timer_count() * BYTES_PER_TIMER
            + sim.ns.log().len().min(CHECKPOINT_LOG) * BYTES_PER_EVENT;
        if self.bytes + own > CHECKPOINT_BYTES {
            self.thin();
            if self.bytes + own > CHECKPOINT_BYTES {
                return;
            }
        }
        let snapshot = sim.snapshot(CHECKPOINT_LOG);
        self.bytes += own;
        self.checkpoints.push(Checkpoint {
            at,
            sim: snapshot,
            own,
            held: 0,
            messages,
        });
        if self.checkpoints.len() > MAX_CHECKPOINTS {
            self.thin();
        }
    }

    /// Drops every second checkpoint (the first stays) and doubles the spacing. What a dropped
    /// checkpoint held alone may be shared with the one kept before it: it counts there now (an
    /// estimate that never counts less than is held).
    fn thin(&mut self) {
        let mut kept: Vec<Checkpoint> = Vec::with_capacity(self.checkpoints.len() / 2 + 1);
        for (i, c) in std::mem::take(&mut self.checkpoints)
            .into_iter()
            .enumerate()
        {
            match kept.last_mut() {
                Some(last) if i % 2 == 1 => {
                    last.held += c.held;
                    self.bytes -= c.own;
                }
                _ => kept.push(c),
            }
        }
        self.checkpoints = kept;
        self.every = self.every.saturating_mul(2);
    }
}
