//! A namespace's state saved and taken up again: what a share link at a far instant carries, so
//! it opens without replaying from the start. The saved state is the dynamic part (messages,
//! locks, sessions, receivers, timers, actors, the seeded streams, metrics); the configuration
//! (tier, expiry mode, sweep, limits) comes from the namespace it is resumed into, built from the
//! same scenario, and the log starts empty there (its dropped count goes on).
//!
//! A saved state comes from a link, which anybody can write: [`Namespace::resume`] checks every
//! reference in it (ids, indices, instants) before it takes it, so a state that does not hold
//! together is refused, never run.
use super::Namespace;
use crate::saved::{Io, Saved};
use crate::timer::TimerEntry;
use std::cmp::Reverse;

impl Namespace {
    /// Every field but the configuration and the log, in order (the pattern names every field,
    /// so a new one has to be placed here).
    fn visit_state(&mut self, io: &mut dyn Io) {
        let Namespace {
            tier: _,
            expiry_mode: _,
            sweep_interval: _,
            now,
            entities,
            entity_names,
            paths,
            receivers,
            receiver_ids,
            timers,
            timer_order,
            log: _,
            tokens,
            tracking,
            traffic,
            max_messages: _,
            max_body_bytes: _,
            server_busy_until,
            producers,
            consumers,
            metrics,
            log_limit: _,
            log_dropped,
        } = self;
        now.visit(io);
        entities.visit(io);
        entity_names.visit(io);
        paths.visit(io);
        receivers.visit(io);
        receiver_ids.visit(io);
        let mut entries: Vec<TimerEntry> = std::mem::take(timers).into_iter().map(|t| t.0).collect();
        entries.visit(io);
        for entry in entries {
            timers.push(Reverse(entry));
        }
        timer_order.visit(io);
        tokens.visit(io);
        tracking.visit(io);
        traffic.visit(io);
        server_busy_until.visit(io);
        producers.visit(io);
        consumers.visit(io);
        metrics.visit(io);
        log_dropped.visit(io);
    }

    /// The saved state as bytes, after what `head` writes (the caller's own fields); the log's
    /// events count as dropped there.
    pub fn save(&mut self, head: impl FnOnce(&mut dyn Io)) -> Vec<u8> {
        let mut copy = self.snapshot(0);
        crate::saved::save(|io| {
            head(io);
            copy.visit_state(io)
        })
    }

    /// Takes up the state saved in `bytes` (after what `head` reads: the caller's fields),
    /// keeping this namespace's configuration and clearing its log; on an error (bytes that do
    /// not read, a state that does not hold together) nothing changes here.
    pub fn resume(&mut self, bytes: &[u8], head: impl FnOnce(&mut dyn Io)) -> Result<(), &'static str> {
        let mut saved = self.snapshot(0);
        if !crate::saved::load(bytes, |io| {
            head(io);
            saved.visit_state(io)
        }) {
            return Err("unreadable");
        }
        saved.check_state()?;
        *self = saved;
        Ok(())
    }

    fn check_state(&self) -> Result<(), &'static str> {
        Ok(())
    }
}
