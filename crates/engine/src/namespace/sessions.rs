//! Sessions (SES-01..05): a session entity's receivers accept a session, hold its lock, receive
//! its messages in order and keep its state.
use super::*;
use crate::command::{SessionOp, SessionView};
use crate::entity::{Session, SessionLock};
use crate::event::SessionEnd;

impl Namespace {
    /// Whether `q` is the main queue of a session entity: its receives go through sessions
    /// (its dead-letter queue does not).
    pub(crate) fn is_session_queue(&self, q: QueueRef) -> bool {
        !q.dlq
            && self
                .get(q.entity)
                .is_ok_and(|e| e.settings.requires_session)
    }

    /// The session receiver `r` holds on `entity` now (its lock not lapsed), if any.
    pub(super) fn held_session(&self, r: u32, entity: u32) -> Option<u32> {
        let now = self.now;
        let e = self.get(entity).ok()?;
        e.session_holders
            .iter()
            .find(|(holder, _)| *holder == r)
            .map(|&(_, s)| s)
            .filter(|&s| {
                e.sessions[s as usize]
                    .lock
                    .is_some_and(|l| l.holder == r && l.locked_until > now)
            })
    }

    /// The session lock receiver `r` holds on `q`'s entity, if any.
    pub(super) fn session_lock_of(&self, r: u32, q: QueueRef) -> Option<SessionLock> {
        let s = self.held_session(r, q.entity)?;
        self.get(q.entity).ok()?.sessions[s as usize].lock
    }

    /// SES-03: the next message receiver `r` may take from `q`: the first available one, or in a
    /// session entity the first available one of the session it holds.
    pub(super) fn next_available(&self, q: QueueRef, r: u32) -> Option<u64> {
        let e = self.get(q.entity).ok()?;
        let store = e.store(q.dlq);
        if !self.is_session_queue(q) {
            return store.first_available();
        }
        let id = e.sessions[self.held_session(r, q.entity)? as usize]
            .id
            .as_str();
        store
            .messages
            .available()
            .find(|m| m.session_id() == Some(id))
            .map(|m| m.sequence_number)
    }

    /// SES-02..05: accept, renew, get or set the state of, or close a session.
    pub fn session(&mut self, receiver: &str, from: &str, op: SessionOp) -> Result<SessionView> {
        let q = self.resolve(from)?;
        if !self.is_session_queue(q) {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-not-session", from = from),
            ));
        }
        self.check_receivable(q, from)?;
        let known = self.receiver_ids.get(receiver).copied();
        let held = known.and_then(|r| self.held_session(r, q.entity));
        let name = |ns: &Namespace, s: u32| {
            ns.get(q.entity)
                .map(|e| e.sessions[s as usize].id.clone())
                .unwrap_or_default()
        };
        if let SessionOp::Accept { session_id } = op {
            if let Some(s) = held {
                return Err(BrokerError::new(
                    ErrorKind::InvalidOperation,
                    text!(
                        "e-session-held",
                        receiver = receiver,
                        session = name(self, s)
                    ),
                ));
            }
            let s = self.session_to_accept(q, from, session_id)?;
            let r = self.receiver_id(receiver);
            self.touch(q.entity);
            self.attach(r, q);
            self.lock_session(r, q, s, false);
            return Ok(self.session_view(q, s));
        }
        let (Some(r), Some(s)) = (known, held) else {
            return Err(self.rejection(
                ErrorKind::SessionLockLost,
                text!("e-session-not-held", receiver = receiver, from = from),
            ));
        };
        // SES-05: checked before anything changes (a failed command changes nothing).
        // SES-05: at most one message of the tier.
        let max = self.tier.max_message_size();
        if let SessionOp::SetState { state: Some(v) } = &op {
            if v.len() as u64 > max {
                return Err(BrokerError::new(
                    ErrorKind::ArgumentOutOfRange,
                    text!("e-session-state-size", max = max),
                ));
            }
        }
        self.touch(q.entity);
        match op {
            SessionOp::Accept { .. } | SessionOp::GetState => {}
            SessionOp::RenewLock => self.lock_session(r, q, s, true),
            SessionOp::SetState { state } => {
                let session = name(self, s);
                self.get_mut(q.entity)?.sessions[s as usize].state = state;
                self.emit(
                    q,
                    0,
                    EventKind::SessionStateSet { session },
                    Some(Rule::Ses05),
                );
            }
            SessionOp::Close => {
                let view = self.session_view(q, s);
                self.release_session(q.entity, s, SessionEnd::Closed);
                return Ok(view);
            }
        }
        Ok(self.session_view(q, s))
    }

    /// SES-02: the session a receiver may accept: the named one (created if it has no
    /// messages yet) unless another receiver holds it, or the first session with an available
    /// message that nobody holds.
    pub(super) fn session_to_accept(
        &mut self,
        q: QueueRef,
        from: &str,
        session_id: Option<String>,
    ) -> Result<u32> {
        let now = self.now;
        let e = self.get(q.entity)?;
        let held_by = |s: &Session| s.lock.filter(|l| l.locked_until > now).map(|l| l.holder);
        let Some(id) = session_id else {
            let found = e.main.messages.available().find_map(|m| {
                let i = *e.session_ids.get(m.session_id()?)?;
                held_by(&e.sessions[i as usize]).is_none().then_some(i)
            });
            return found.ok_or_else(|| {
                BrokerError::new(
                    ErrorKind::ServiceTimeout,
                    text!("e-no-session", from = from),
                )
            });
        };
        if id.is_empty() || id.len() > crate::limits::MAX_SESSION_ID {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!("e-session-id", max = crate::limits::MAX_SESSION_ID),
            )
            .on_field("SessionId"));
        }
        if let Some(holder) = e
            .session_ids
            .get(&id)
            .and_then(|&i| held_by(&e.sessions[i as usize]))
        {
            let holder = self.receiver_name(holder).to_string();
            return Err(BrokerError::new(
                ErrorKind::SessionCannotBeLocked,
                text!("e-session-locked", session = &id, holder = holder),
            ));
        }
        Ok(self.get_mut(q.entity)?.session_index(&id))
    }

    /// SES-02: locks session `s` for receiver `r` until now + LockDuration (a new lock, or a
    /// renewal that moves the LockedUntil of the holder's messages of the session with it).
    pub(super) fn lock_session(&mut self, r: u32, q: QueueRef, s: u32, renew: bool) {
        let token = if renew {
            self.session_lock_of(r, q).map_or(0, |l| l.token)
        } else {
            self.next_lock_token()
        };
        let held = self.session_messages(r, q, s);
        let now = self.now;
        let Ok(e) = self.get_mut(q.entity) else {
            return;
        };
        let locked_until = after(now, e.settings.lock_duration);
        e.session_holders.retain(|&(_, x)| x != s);
        e.session_holders.push((r, s));
        let session = &mut e.sessions[s as usize];
        session.lock = Some(SessionLock {
            holder: r,
            token,
            locked_until,
        });
        let id = session.id.clone();
        let mut relocked = Vec::new();
        for seq in held {
            if let Some(lock) = e.main.messages.get_mut(&seq).and_then(|m| m.lock.as_mut()) {
                lock.locked_until = locked_until;
                relocked.push((seq, lock.token));
            }
        }
        for (seq, token) in relocked {
            self.schedule_lapse(q, seq, token, locked_until);
        }
        self.emit(
            q,
            0,
            EventKind::SessionLocked {
                receiver: r,
                session: id,
                locked_until,
                renewed: renew,
            },
            Some(Rule::Ses02),
        );
        self.push_timer(
            locked_until,
            Timer::SessionLapse {
                entity: q.entity,
                session: s,
                token: token.into(),
            },
        );
    }

    /// Whether half of the session lock `r` holds on `q` has run out.
    pub(super) fn session_half_gone(&self, r: u32, q: QueueRef) -> bool {
        let duration = self.get(q.entity).map_or(0, |e| e.settings.lock_duration);
        self.session_lock_of(r, q)
            .is_some_and(|l| l.locked_until - self.now < duration / 2)
    }

    /// The messages of session `s` that receiver `r` holds locked in `q`.
    fn session_messages(&self, r: u32, q: QueueRef, s: u32) -> Vec<u64> {
        let Ok(e) = self.get(q.entity) else {
            return Vec::new();
        };
        let id = e.sessions[s as usize].id.as_str();
        self.receivers[r as usize]
            .handles
            .range((q, 0)..=(q, u64::MAX))
            .filter_map(|(&(_, seq), h)| {
                let Handle::Locked(token) = h else {
                    return None;
                };
                let m = e.main.messages.get(&seq)?;
                let lock = m.lock.as_ref()?;
                (lock.token == *token && lock.holder == r && m.session_id() == Some(id))
                    .then_some(seq)
            })
            .collect()
    }

    /// SES-04: session `s` is released. Its holder's unsettled messages come back: a lapse or a
    /// loss counts a failed delivery for each (RCV-07 applies), closing does not.
    pub(super) fn release_session(&mut self, entity: u32, s: u32, cause: SessionEnd) {
        let q = QueueRef { entity, dlq: false };
        let Some(lock) = self
            .get(entity)
            .ok()
            .and_then(|e| e.sessions[s as usize].lock)
        else {
            return;
        };
        let r = lock.holder;
        for seq in self.session_messages(r, q, s) {
            self.requeue(q, seq, Rule::Ses04, cause != SessionEnd::Closed);
        }
        let Ok(e) = self.get_mut(entity) else { return };
        e.session_holders.retain(|&(_, x)| x != s);
        let session = &mut e.sessions[s as usize];
        session.lock = None;
        let id = session.id.clone();
        self.emit(
            q,
            0,
            EventKind::SessionReleased {
                receiver: r,
                session: id,
                cause,
            },
            Some(Rule::Ses04),
        );
    }

    /// SES-04: every session lock held on `entity` (all entities: None) by `receiver` (anyone:
    /// None) is lost: a fault, a dropped connection, an entity update.
    pub(super) fn lose_sessions(&mut self, entity: Option<u32>, receiver: Option<u32>) {
        let held: Vec<(u32, u32)> = self
            .entities
            .iter()
            .flatten()
            .filter(|e| entity.is_none_or(|id| id == e.id))
            .flat_map(|e| {
                e.session_holders
                    .iter()
                    .filter(|(h, _)| receiver.is_none_or(|r| r == *h))
                    .map(move |&(_, s)| (e.id, s))
            })
            .collect();
        for (e, s) in held {
            self.release_session(e, s, SessionEnd::Lost);
        }
    }

    /// The session lock timer: still the session's lock, and still due now.
    pub(super) fn session_lapse_is_live(
        &self,
        at: Instant,
        entity: u32,
        s: u32,
        token: u128,
    ) -> bool {
        self.get(entity)
            .ok()
            .and_then(|e| e.sessions.get(s as usize)?.lock)
            .is_some_and(|l| l.token == token && l.locked_until == at)
    }

    pub(super) fn session_view(&self, q: QueueRef, s: u32) -> SessionView {
        let session = self
            .get(q.entity)
            .ok()
            .and_then(|e| e.sessions.get(s as usize));
        SessionView {
            session_id: session.map(|x| x.id.clone()).unwrap_or_default(),
            locked_until: session.and_then(|x| x.lock).map_or(0, |l| l.locked_until),
            state: session.and_then(|x| x.state.clone()),
        }
    }
}
