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
use crate::entity::{Entity, EntityKind, QueueRef, Store};
use crate::limits::{LATEST_INSTANT, MAX_ACTORS, MAX_ENTITIES};
use crate::saved::{Io, Saved};
use crate::time::NEVER;
use crate::timer::{ActorTimer, Timer, TimerEntry};
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
        let mut entries: Vec<TimerEntry> =
            std::mem::take(timers).into_iter().map(|t| t.0).collect();
        entries.visit(io);
        if io.loading() {
            arm_pages(entities, &entries);
        }
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
    /// events count as dropped there. (Saving visits the fields in place and leaves them as they
    /// were.)
    pub fn save(&mut self, head: impl FnOnce(&mut dyn Io)) -> Vec<u8> {
        let dropped = self.log_dropped;
        self.log_dropped += self.log.len() as u64;
        let bytes = crate::saved::save(|io| {
            head(io);
            self.visit_state(io)
        });
        self.log_dropped = dropped;
        bytes
    }

    /// A namespace with this one's configuration and the state `bytes` hold (after what `head`
    /// reads), if they read whole.
    pub(super) fn loaded(&self, bytes: &[u8], head: impl FnOnce(&mut dyn Io)) -> Option<Namespace> {
        let mut ns = self.blank_like();
        crate::saved::load(bytes, |io| {
            head(io);
            ns.visit_state(io)
        })
        .then_some(ns)
    }

    /// A namespace with this one's configuration and nothing else: what a saved state is read
    /// into.
    fn blank_like(&self) -> Namespace {
        super::NamespaceBuilder {
            tier: self.tier,
            expiry_mode: self.expiry_mode,
            sweep_interval: self.sweep_interval,
            seed: 0,
            log_limit: self.log_limit,
            max_messages: self.max_messages,
            max_body_bytes: self.max_body_bytes,
        }
        .build()
    }

    /// Takes up the state saved in `bytes` (after what `head` reads: the caller's fields),
    /// keeping this namespace's configuration and clearing its log; on an error (bytes that do
    /// not read, a state that does not hold together) nothing changes here.
    pub fn resume(
        &mut self,
        bytes: &[u8],
        head: impl FnOnce(&mut dyn Io),
    ) -> Result<(), &'static str> {
        let saved = self.loaded(bytes, head).ok_or("s-checkpoint-unreadable")?;
        saved.check_state()?;
        *self = saved;
        Ok(())
    }

    /// Whether a state read from a link holds together: every id and index in range, every
    /// derived set and count as the engine keeps it, every setting within its limits, the clock
    /// within the playground's. What the engine indexes without a check is checked here.
    fn check_state(&self) -> Result<(), &'static str> {
        match self.consistent() {
            true => Ok(()),
            false => Err("s-checkpoint-inconsistent"),
        }
    }

    fn consistent(&self) -> bool {
        let entities = self.entities.len();
        let receivers = self.receivers.len();
        let receiver = |id: u32| (id as usize) < receivers;
        // An entity a receiver is attached to or an actor works on may have been deleted under
        // it: its id is in range.
        let known = |q: &QueueRef| (q.entity as usize) < entities;
        (0..=LATEST_INSTANT).contains(&self.now)
            && entities <= MAX_ENTITIES
            && self.entity_names.len() == entities
            // A path names the entity last created under it (a deleted one keeps its name).
            && self
                .paths
                .iter()
                .all(|(path, &id)| self.entity_names.get(id as usize) == Some(path))
            && self
                .entities
                .iter()
                .flatten()
                .all(|e| self.paths.get(&e.path) == Some(&e.id))
            && self
                .entities
                .iter()
                .enumerate()
                .all(|(i, e)| e.as_ref().is_none_or(|e| self.entity_consistent(i, e)))
            && self.receiver_ids.len() == receivers
            && self
                .receiver_ids
                .iter()
                .all(|(name, &r)| self.receivers.get(r as usize).is_some_and(|x| x.name == *name))
            && self.receivers.iter().all(|r| r.attached.iter().all(known))
            && self.timers.iter().all(|Reverse(t)| {
                t.at >= self.now && t.order <= self.timer_order && self.timer_consistent(t.timer)
            })
            && self.producers.len() <= MAX_ACTORS
            && self.consumers.len() <= MAX_ACTORS
            && self.producers.iter().all(|p| {
                known(&p.queue) && p.spec.validate().is_ok() && p.next_send.is_finite()
            })
            && self.consumers.iter().all(|c| {
                known(&c.queue)
                    && c.spec.validate().is_ok()
                    && c.receivers.len() == c.spec.instances as usize
                    && c.busy.len() == c.receivers.len()
                    && c.receivers.iter().all(|&r| receiver(r))
            })
            && self.metrics.width >= crate::time::SECOND
            && self.metrics.buckets.len() <= crate::metrics::MAX_BUCKETS
    }

    fn entity_consistent(&self, i: usize, e: &Entity) -> bool {
        let receivers = self.receivers.len();
        let topic_of = |id: u32| match self.entities.get(id as usize).and_then(Option::as_ref) {
            Some(t) if t.kind == EntityKind::Topic => Some(t),
            _ => None,
        };
        // SequenceNumbers come from the entity (a subscription's from its topic): all below next.
        let next_seq = match e.kind {
            EntityKind::Subscription { topic } => match topic_of(topic) {
                Some(t) => t.next_seq,
                None => return false,
            },
            _ => e.next_seq,
        };
        let attached = self
            .receivers
            .iter()
            .flat_map(|r| r.attached.iter())
            .filter(|q| q.entity as usize == i && !q.dlq)
            .count();
        e.id as usize == i
            && self.entity_names[i] == e.path
            && e.settings.validate(self.tier).is_ok()
            && e.attached_receivers as usize == attached
            && (e.kind != EntityKind::Topic
                || e.subscriptions.iter().all(|&s| {
                    self.entities
                        .get(s as usize)
                        .and_then(Option::as_ref)
                        .is_some_and(|s| s.kind == EntityKind::Subscription { topic: e.id })
                }))
            && e.history.as_ref().is_none_or(|h| h.first <= h.order.len())
            && e.session_ids.len() == e.sessions.len()
            && e.session_ids
                .iter()
                .all(|(id, &s)| e.sessions.get(s as usize).is_some_and(|x| x.id == *id))
            && e.sessions.iter().enumerate().all(|(s, session)| {
                session.lock.is_none_or(|l| {
                    (l.holder as usize) < receivers
                        && e.session_holders.contains(&(l.holder, s as u32))
                })
            })
            && e.session_holders.iter().all(|&(r, s)| {
                e.sessions
                    .get(s as usize)
                    .and_then(|x| x.lock)
                    .is_some_and(|l| l.holder == r)
            })
            && [&e.main, &e.dlq]
                .into_iter()
                .all(|store| store_consistent(store, next_seq, receivers))
    }

    fn timer_consistent(&self, timer: Timer) -> bool {
        let entity = |id: u32| self.entities.get(id as usize).and_then(Option::as_ref);
        match timer {
            Timer::SessionLapse {
                entity: id,
                session,
                ..
            } => entity(id).is_none_or(|e| (session as usize) < e.sessions.len()),
            Timer::Actor(
                ActorTimer::Produce { producer, .. } | ActorTimer::Burst { producer, .. },
            ) => (producer as usize) < self.producers.len(),
            Timer::Actor(
                ActorTimer::ConsumerWake {
                    group, instance, ..
                }
                | ActorTimer::ConsumerDone {
                    group, instance, ..
                },
            ) => self
                .consumers
                .get(group as usize)
                .is_some_and(|c| (instance as usize) < c.busy.len()),
            _ => true,
        }
    }
}

/// Sets when each page's expiry timer is set for, read from the timers (`Namespace::arm_expiry`):
/// the latest of its timers at or before its first ExpiresAt. A page's live timer is there (a
/// stale one later than it was set for is past its first ExpiresAt, one earlier only moves to
/// it), and a state saved when each message had a timer of its own has one at its first
/// ExpiresAt. (The pages of a rewind checkpoint, set aside while it is written, keep theirs.)
fn arm_pages(entities: &mut [Option<Entity>], timers: &[TimerEntry]) {
    for t in timers {
        let Timer::Expire { entity, seq } = t.timer else {
            continue;
        };
        if let Some(Some(e)) = entities.get_mut(entity as usize) {
            let pages = &mut e.main.messages;
            let first = pages.first_expiry(seq).unwrap_or(NEVER);
            let armed = pages.expiry_armed(seq).unwrap_or(NEVER);
            if t.at <= first && (armed == NEVER || t.at > armed) {
                pages.set_expiry_armed(seq, t.at);
            }
        }
    }
}

/// A store as the engine keeps it: messages under their SequenceNumbers (below `next_seq`),
/// locks held by receivers that exist, the receivable set and the byte counts as they follow
/// from the messages.
fn store_consistent(store: &Store, next_seq: u64, receivers: usize) -> bool {
    let mut bytes = 0u64;
    let mut body_bytes = 0u64;
    for m in store.messages.values() {
        if m.sequence_number >= next_seq
            || m.lock
                .as_ref()
                .is_some_and(|l| l.holder as usize >= receivers)
        {
            return false;
        }
        bytes = bytes.saturating_add(m.body_size);
        body_bytes = body_bytes.saturating_add(m.held_bytes());
    }
    bytes == store.bytes && body_bytes == store.body_bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::NewMessage;
    use crate::settings::EntitySettings;
    use crate::time::SECOND;

    /// A namespace with queue "q" of the Standard tier's defaults.
    fn with_queue() -> Namespace {
        let mut ns = Namespace::builder().build();
        let settings = EntitySettings::defaults(crate::settings::Tier::Standard);
        ns.create_queue("q", settings).expect("a queue");
        ns
    }

    /// The lapse order holds about the locks held: a thousand messages locked and completed one
    /// after another under a 30 s LockDuration leave no thousand entries for a checkpoint to copy,
    /// and the locks still held lapse at their LockedUntil.
    #[test]
    fn settled_locks_leave_the_lapse_order() {
        use crate::command::{ReceiveMode, ReceiveOptions, Settlement};
        let mut ns = with_queue();
        for _ in 0..1_002 {
            ns.send("q", NewMessage::default()).expect("sent");
        }
        let receive = |ns: &mut Namespace, count| {
            ns.receive(
                "r",
                "q",
                ReceiveMode::PeekLock,
                count,
                ReceiveOptions::default(),
            )
            .map(|m| m.len())
        };
        for seq in 1..=1_000 {
            assert_eq!(receive(&mut ns, 1), Ok(1));
            assert_eq!(ns.settle("r", "q", seq, Settlement::Complete), Ok(()));
        }
        assert_eq!(receive(&mut ns, 2), Ok(2));
        let lapses = ns.entities[0].as_ref().map(|e| e.main.lapses.len());
        assert!(lapses.is_some_and(|n| n <= 3), "{lapses:?} entries");
        ns.advance_to(31 * SECOND);
        let lapsed = ns.log().iter().filter(|e| e.kind.name() == "LockLapsed");
        assert_eq!(
            lapsed.map(|e| e.seq).collect::<Vec<_>>(),
            vec![1_001, 1_002]
        );
    }

    /// A link saved when every message had an expiry timer of its own (in send order) reads
    /// back with each page set for its first ExpiresAt: every message still expires at its
    /// instant, the earliest first.
    #[test]
    fn a_state_with_a_timer_per_message_expires_each_at_its_instant() {
        let mut ns = with_queue();
        for ttl in [10, 5, 20] {
            let m = NewMessage {
                time_to_live: Some(ttl * SECOND),
                ..NewMessage::default()
            };
            ns.send("q", m).expect("sent");
        }
        ns.timers.clear();
        for (seq, at) in [(1, 10), (2, 5), (3, 20)] {
            ns.push_timer(at * SECOND, Timer::Expire { entity: 0, seq });
        }
        let bytes = ns.save(|_| {});
        let mut read = Namespace::builder().build();
        assert_eq!(read.resume(&bytes, |_| {}), Ok(()));
        read.advance_to(30 * SECOND);
        let expired: Vec<(crate::time::Instant, u64)> = read
            .log()
            .iter()
            .filter(|e| e.kind.name() == "ExpiredDropped")
            .map(|e| (e.at, e.seq))
            .collect();
        assert_eq!(
            expired,
            vec![(5 * SECOND, 2), (10 * SECOND, 1), (20 * SECOND, 3)]
        );
    }
}
