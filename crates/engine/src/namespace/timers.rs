use super::*;
use crate::limits::LATEST_INSTANT;
use crate::timer::Due;

impl Namespace {
    // ----- the clock -----------------------------------------------------------------------

    /// When the next timer is due (stale timers are dropped first), or None.
    pub fn next_due(&self) -> Option<Instant> {
        self.next_timer().map(|(at, _)| at)
    }

    /// The next live timer and what it will do, as data (`sbp_scenario::words` says it).
    pub fn next_event(&self) -> Option<(Instant, Due)> {
        self.next_timer().map(|(at, timer)| (at, self.due(timer)))
    }

    /// The next live timer, read without changing anything: asking what is next is no event.
    /// Commands and advancing drop stale timers from the top as they end ([`Namespace::apply`],
    /// [`Namespace::advance_by`]), so the top is the answer; after a direct call that left a
    /// stale one there (a test's `send` or `settle`), every timer is looked at.
    fn next_timer(&self) -> Option<(Instant, Timer)> {
        let &Reverse(TimerEntry { at, timer, .. }) = self.timers.peek()?;
        if self.live_instant(at, timer) == Some(at) {
            return Some((at, timer));
        }
        // A timer that moved (a lapse check to a later lock, a page's expiry to its next
        // message) is set again at its new instant when advancing gets there, and then fires in
        // the heap's order: by instant, then by what it does.
        self.timers
            .iter()
            .filter_map(|&Reverse(TimerEntry { at, order, timer })| {
                let live = self.live_instant(at, timer)?;
                Some(((live, timer, live != at, order), timer))
            })
            .min_by_key(|&(key, _)| key)
            .map(|((at, ..), timer)| (at, timer))
    }

    /// When a timer set for `at` does something, if it still does: at `at`, or for a lapse
    /// check whose first locks were settled, when the first live one lapses, and for a page's
    /// expiry whose first message was locked or settled, when its next one expires.
    fn live_instant(&self, at: Instant, timer: Timer) -> Option<Instant> {
        match timer {
            Timer::LapseCheck { queue } if self.timer_is_live(at, timer) => {
                self.first_live_lapse(queue).map(|(at, _)| at)
            }
            Timer::Expire { entity, seq } if self.timer_is_live(at, timer) => self
                .get(entity)
                .ok()?
                .main
                .messages
                .first_expiry(seq)
                .map(|next| next.max(at)),
            _ => self.timer_is_live(at, timer).then_some(at),
        }
    }

    /// The first lock of `queue`'s lapse order that is still held as it was given: when it
    /// lapses, and its message.
    fn first_live_lapse(&self, queue: QueueRef) -> Option<(Instant, u64)> {
        let store = self.get(queue.entity).ok()?.store(queue.dlq);
        store
            .lapses
            .iter()
            .find(|&&(at, seq, token)| lapse_is_live(store.messages.get(&seq), token, at))
            .map(|&(at, seq, _)| (at, seq))
    }

    /// As [`Namespace::next_event`] was before it only read: stale timers dropped first. Kept
    /// for the property test that compares the two.
    #[doc(hidden)]
    pub fn next_event_after_pruning(&mut self) -> Option<(Instant, Due)> {
        self.prune_stale();
        let Reverse(TimerEntry { at, timer, .. }) = *self.timers.peek()?;
        Some((at, self.due(timer)))
    }

    pub(super) fn due(&self, timer: Timer) -> Due {
        let name = |id: u32| self.entity_name(id).to_string();
        let path = |q: QueueRef| queue_path(&name(q.entity), q.dlq);
        match timer {
            Timer::Expire { entity, seq } => Due::Expire {
                path: name(entity),
                // The page's message that expires first.
                seq: self
                    .get(entity)
                    .ok()
                    .and_then(|e| {
                        let pages = &e.main.messages;
                        pages.expiring(seq, pages.first_expiry(seq)?).next()
                    })
                    .map_or(seq, |m| m.sequence_number),
            },
            Timer::LapseCheck { queue } => Due::LockLapse {
                path: path(queue),
                seq: self.first_live_lapse(queue).map_or(0, |(_, seq)| seq),
            },
            Timer::AutoRenew { queue, seq, .. } => Due::AutoRenew {
                path: path(queue),
                seq,
            },
            Timer::Activate { entity, seq } => Due::Activate {
                path: name(entity),
                seq,
            },
            Timer::IdleCheck { entity } => Due::IdleCheck { path: name(entity) },
            Timer::Sweep { entity } => Due::Sweep { path: name(entity) },
            Timer::SessionLapse {
                entity, session, ..
            } => Due::SessionLapse {
                path: name(entity),
                session: self
                    .get(entity)
                    .ok()
                    .and_then(|e| e.sessions.get(session as usize))
                    .map(|s| s.id.clone())
                    .unwrap_or_default(),
            },
            Timer::Actor(a) => self.due_actor(a),
        }
    }

    pub(super) fn prune_stale(&mut self) {
        while let Some(&Reverse(TimerEntry { at, timer, .. })) = self.timers.peek() {
            if let Timer::LapseCheck { queue } = timer {
                // A lapse check whose first locks were settled moves to the next live one.
                if self.clean_lapses(queue) == Some(at) {
                    return;
                }
                self.timers.pop();
                if let Some(next) = self
                    .get(queue.entity)
                    .ok()
                    .and_then(|e| e.store(queue.dlq).lapse_armed)
                {
                    self.push_timer(next, Timer::LapseCheck { queue });
                }
                continue;
            }
            if let Timer::Expire { entity, seq } = timer {
                // A page's expiry whose first message was locked or settled moves to its next.
                if self.live_instant(at, timer) == Some(at) {
                    return;
                }
                self.timers.pop();
                if self.timer_is_live(at, timer) {
                    self.rearm_expiry(entity, seq);
                }
                continue;
            }
            if self.timer_is_live(at, timer) {
                return;
            }
            self.timers.pop();
        }
    }

    /// Drops settled or renewed locks from the front of `queue`'s lapse order and returns when
    /// the first live one lapses (also recorded as the armed instant), if any.
    pub(super) fn clean_lapses(&mut self, queue: QueueRef) -> Option<Instant> {
        let e = self.get_mut(queue.entity).ok()?;
        let store = e.store_mut(queue.dlq);
        drop_settled_lapses(store);
        store.lapse_armed = store.lapses.front().map(|&(at, ..)| at);
        store.lapse_armed
    }

    /// RCV-02/RCV-04: a lock will lapse at `at`. LockedUntil is now + LockDuration, which never
    /// goes back within a queue (the playground's entity update loses every lock), so each sub-queue keeps its
    /// lapses in order and the timer queue holds one entry per sub-queue, not one per lock.
    pub(super) fn schedule_lapse(&mut self, q: QueueRef, seq: u64, token: u128, at: Instant) {
        let Ok(e) = self.get_mut(q.entity) else {
            return;
        };
        let store = e.store_mut(q.dlq);
        // Locks settled or renewed since leave the front as new ones come: the order holds about
        // the locks held, not every lock of the last LockDuration (a rewind checkpoint copies it).
        drop_settled_lapses(store);
        match store.lapses.back() {
            Some(&(last, _, _)) if last > at => {
                // Out of order (cannot happen with one LockDuration, but stay correct).
                let i = store.lapses.partition_point(|l| l.0 <= at);
                store.lapses.insert(i, (at, seq, token));
            }
            _ => store.lapses.push_back((at, seq, token)),
        }
        if store.lapse_armed.is_none_or(|armed| at < armed) {
            store.lapse_armed = Some(at);
            self.push_timer(at, Timer::LapseCheck { queue: q });
        }
    }

    /// RCV-06/RCV-07: every lock of `queue` due by now lapses, in order.
    pub(super) fn lapse_due(&mut self, queue: QueueRef) {
        let now = self.now;
        while let Some(at) = self.clean_lapses(queue) {
            if at > now {
                self.push_timer(at, Timer::LapseCheck { queue });
                return;
            }
            let Some((_, seq, _)) = self
                .get_mut(queue.entity)
                .ok()
                .and_then(|e| e.store_mut(queue.dlq).lapses.pop_front())
            else {
                return;
            };
            // RCV-06/RCV-07: the lock lapsed without settlement.
            self.emit(queue, seq, EventKind::LockLapsed, Some(Rule::Rcv06));
            self.metrics.at(now).locks_lapsed += 1;
            self.release(queue, seq, Rule::Rcv06);
        }
    }

    /// Fires every timer due up to and including `until`, in (instant, insertion) order, then
    /// sets the clock to `until`. Time never goes back.
    pub fn advance_to(&mut self, until: Instant) {
        let mut unbounded = usize::MAX;
        self.advance_by(until, &mut unbounded);
    }

    /// As [`Namespace::advance_to`], but hands back once it has used up `budget`: each timer
    /// fired takes one, and one more for each event beyond its first (a producer's burst of
    /// 10,000 sends is 10,000 of work, not one). The clock then stands at the last timer fired,
    /// and the caller goes on later (a browser in its next frame). Says whether it reached
    /// `until`. The playground's clock ends at [`LATEST_INSTANT`]: later instants stop there.
    pub fn advance_by(&mut self, until: Instant, budget: &mut usize) -> bool {
        let until = until.min(LATEST_INSTANT);
        while let Some(&Reverse(TimerEntry { at, timer, .. })) = self.timers.peek() {
            if at > until {
                break;
            }
            if *budget == 0 {
                self.prune_stale();
                return false;
            }
            *budget -= 1;
            self.timers.pop();
            if at > self.now {
                self.now = at;
            }
            let events = self.log_dropped + self.log.len() as u64;
            self.fire(at, timer);
            let made = self.log_dropped + self.log.len() as u64 - events;
            *budget = budget.saturating_sub(made.saturating_sub(1) as usize);
        }
        if until > self.now {
            self.now = until;
        }
        self.prune_stale();
        true
    }

    pub(super) fn push_timer(&mut self, at: Instant, timer: Timer) {
        if at == NEVER {
            return; // MSG-03: "never" needs no timer.
        }
        self.timer_order += 1;
        self.timers.push(Reverse(TimerEntry {
            at,
            order: self.timer_order,
            timer,
        }));
    }

    pub(super) fn timer_is_live(&self, at: Instant, timer: Timer) -> bool {
        match timer {
            // The page's expiry timer as last set (`arm_expiry`); what it expires then, if
            // anything, is `live_instant`'s: TTL-09, a locked message's expiry waits for its
            // lock to end (`release` expires it then or arms its expiry again), so "Next event"
            // must not say it expires.
            Timer::Expire { entity, seq } => self
                .get(entity)
                .is_ok_and(|e| e.main.messages.expiry_armed(seq) == Some(at)),
            Timer::AutoRenew { queue, seq, token } => self
                .lock_of(queue, seq)
                .is_some_and(|l| l.token == u128::from(token)),
            Timer::LapseCheck { queue } => self
                .get(queue.entity)
                .is_ok_and(|e| e.store(queue.dlq).lapse_armed == Some(at)),
            Timer::Activate { entity, seq } => self
                .get(entity)
                .ok()
                .and_then(|e| e.main.messages.get(&seq))
                .is_some_and(|m| m.state == MessageState::Scheduled),
            Timer::IdleCheck { entity } => self.get(entity).is_ok_and(|e| e.idle_at == Some(at)),
            Timer::Sweep { entity } => self.get(entity).is_ok_and(|e| e.sweep_at == Some(at)),
            Timer::SessionLapse {
                entity,
                session,
                token,
            } => self.session_lapse_is_live(at, entity, session, token.into()),
            Timer::Actor(a) => self.actor_timer_is_live(a),
        }
    }

    pub(super) fn fire(&mut self, at: Instant, timer: Timer) {
        if !self.timer_is_live(at, timer) {
            return;
        }
        match timer {
            // TTL-06/TTL-07 exact mode: the page's messages due by the instant expire (a locked
            // one waits: TTL-09).
            Timer::Expire { entity, seq } => self.expire_page(at, entity, seq),
            Timer::LapseCheck { queue } => self.lapse_due(queue),
            Timer::AutoRenew { queue, seq, token } => self.auto_renew(queue, seq, token.into()),
            Timer::Activate { entity, seq } => self.activate(entity, seq),
            Timer::IdleCheck { entity } => self.idle_check(entity),
            Timer::Sweep { entity } => self.sweep(entity),
            Timer::SessionLapse {
                entity, session, ..
            } => self.release_session(entity, session, crate::event::SessionEnd::Lapsed),
            Timer::Actor(a) => self.fire_actor(a),
        }
    }
}

/// Drops the locks settled, lost or renewed since from the front of `store`'s lapse order.
fn drop_settled_lapses(store: &mut crate::entity::Store) {
    while store
        .lapses
        .front()
        .is_some_and(|&(at, seq, token)| !lapse_is_live(store.messages.get(&seq), token, at))
    {
        store.lapses.pop_front();
    }
}

/// Whether a lock given with `token` until `at` still holds message `m` as it was given (not
/// settled, lost or renewed since).
fn lapse_is_live(m: Option<&Message>, token: u128, at: Instant) -> bool {
    m.and_then(|m| m.lock.as_ref())
        .is_some_and(|l| l.token == token && l.locked_until == at)
}

/// The auto-renewer renews a little before the lock lapses: 10 s before, or halfway for short locks.
pub(super) fn auto_renew_at(now: Instant, locked_until: Instant) -> Instant {
    let margin = ((locked_until - now) / 2).min(10_000);
    locked_until - margin
}
