use super::*;

impl Namespace {
    /// Complete, abandon, dead-letter, defer or renew the lock of a message the receiver holds.
    pub fn settle(
        &mut self,
        receiver: &str,
        from: &str,
        seq: u64,
        settlement: Settlement,
    ) -> Result<()> {
        let q = self.resolve(from)?;
        let r = self.known_receiver(receiver, from, seq)?;
        self.settle_as(r, q, seq, settlement)
    }

    /// The id of a receiver that settles. One never seen holds nothing; asking registers
    /// nothing (a failed call changes nothing).
    fn known_receiver(&self, receiver: &str, from: &str, seq: u64) -> Result<u32> {
        self.receiver_ids
            .get(receiver)
            .copied()
            .ok_or_else(|| not_received(receiver, from, seq))
    }

    /// Settles with the LockToken of an earlier receive (what a client that kept that message
    /// object does): RCV-08, a token that is no longer the message's lock gives MessageLockLost.
    pub fn settle_with_token(
        &mut self,
        receiver: &str,
        from: &str,
        seq: u64,
        token: &str,
        settlement: Settlement,
    ) -> Result<()> {
        let q = self.resolve(from)?;
        let r = self.known_receiver(receiver, from, seq)?;
        match uuid::Uuid::try_parse(token) {
            Ok(token) => self.settle_locked(r, q, seq, token.as_u128(), settlement),
            // Not a LockToken at all: no lock can be held with it.
            Err(_) => Err(self.lock_lost(r, seq)),
        }
    }

    /// Settlement by receiver `r` of message `seq` in `q`, with the checks the SDK and broker make.
    pub(crate) fn settle_as(
        &mut self,
        r: u32,
        q: QueueRef,
        seq: u64,
        settlement: Settlement,
    ) -> Result<()> {
        let receiver = self.receiver_name(r).to_string();
        let from = queue_path(self.entity_name(q.entity), q.dlq);
        let handle = self.receivers[r as usize].handles.get(&(q, seq)).copied();
        let verb = text::Text::new(format!("op-{}", settlement.name()));
        let token = match handle {
            None => return Err(not_received(&receiver, &from, seq)),
            // RCV-11: a peeked message has no lock.
            Some(Handle::Peeked) => {
                return Err(BrokerError::new(
                    ErrorKind::InvalidOperation,
                    text!(
                        "e-settle-peeked",
                        what = format!("#{seq}"),
                        verb = verb.clone()
                    ),
                ))
            }
            // RCV-01: received-and-deleted messages are already settled.
            Some(Handle::ReceivedAndDeleted) => {
                return Err(BrokerError::new(
                    ErrorKind::InvalidOperation,
                    text!("e-settle-deleted", what = format!("#{seq}"), verb = verb),
                ))
            }
            Some(Handle::Locked(token)) => token,
        };
        self.settle_locked(r, q, seq, token, settlement)
    }

    /// RCV-08: a lock that lapsed, was lost, is no longer the message's (settled, received
    /// again) or is not this receiver's fails with MessageLockLost.
    fn lock_lost(&mut self, r: u32, seq: u64) -> BrokerError {
        let receiver = self.receiver_name(r).to_string();
        self.rejection(
            ErrorKind::MessageLockLost,
            text!("e-lock-lost", seq = seq, receiver = receiver),
        )
    }

    /// Settlement with the lock `token`: the checks the broker makes (RCV-08, DLQ-02), then the
    /// settlement itself.
    fn settle_locked(
        &mut self,
        r: u32,
        q: QueueRef,
        seq: u64,
        token: u128,
        settlement: Settlement,
    ) -> Result<()> {
        let now = self.now;
        self.get(q.entity)?;
        let session = self.is_session_queue(q);
        if session && settlement == Settlement::RenewLock {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-renew-session-message", seq = seq),
            ));
        }
        let holds = self
            .lock_of(q, seq)
            .is_some_and(|l| l.token == token && l.holder == r && l.locked_until > now);
        if !holds && session {
            // SES-04: the session's lock is what the holder lost.
            let receiver = self.receiver_name(r).to_string();
            return Err(self.rejection(
                ErrorKind::SessionLockLost,
                text!("e-session-lock-lost", seq = seq, receiver = receiver),
            ));
        }
        if !holds {
            return Err(self.lock_lost(r, seq));
        }
        if matches!(settlement, Settlement::DeadLetter { .. }) && q.dlq {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-dead-letter-twice", seq = seq),
            ));
        }
        self.touch(q.entity);
        match settlement {
            Settlement::Complete => {
                let e = self.get_mut(q.entity)?;
                let Some(m) = e.store_mut(q.dlq).remove(seq) else {
                    return Ok(());
                };
                let expired = m.is_expired_at(now) && !q.dlq;
                self.count_completed(m.enqueued_time);
                // TTL-09: completing a nominally expired locked message succeeds.
                self.emit(
                    q,
                    seq,
                    EventKind::Completed {
                        receiver: r,
                        nominally_expired: expired,
                    },
                    Some(if expired { Rule::Ttl09 } else { Rule::Rcv05 }),
                );
            }
            Settlement::Abandon => {
                self.metrics.at(now).abandoned += 1;
                self.emit(
                    q,
                    seq,
                    EventKind::Abandoned { receiver: r },
                    Some(Rule::Rcv05),
                );
                self.release(q, seq, Rule::Rcv05);
            }
            Settlement::Release => {
                // RCV-05: AMQP's released outcome leaves the message unchanged at the node, its
                // delivery count not incremented (AMQP 1.0 part 3.4.4).
                self.emit(
                    q,
                    seq,
                    EventKind::Released { receiver: r },
                    Some(Rule::Rcv05),
                );
                self.requeue(q, seq, Rule::Rcv05, false);
            }
            Settlement::DeadLetter {
                reason,
                description,
            } => {
                let e = self.get_mut(q.entity)?;
                let Some(m) = e.store_mut(q.dlq).remove(seq) else {
                    return Ok(());
                };
                let reason = reason.unwrap_or_default();
                let description = description.unwrap_or_default();
                self.dead_letter(
                    q,
                    m,
                    Cow::Owned(reason),
                    Cow::Owned(description),
                    Rule::Rcv05,
                );
            }
            Settlement::Defer => {
                // RCV-09: stays, invisible to normal receive; the delivery counts.
                let e = self.get_mut(q.entity)?;
                let store = e.store_mut(q.dlq);
                if let Some(m) = store.messages.get_mut(&seq) {
                    m.lock = None;
                    m.state = MessageState::Deferred;
                    m.failed_deliveries = m.failed_deliveries.saturating_add(1);
                }
                self.emit(
                    q,
                    seq,
                    EventKind::Deferred { receiver: r },
                    Some(Rule::Rcv09),
                );
                // RCV-07: a deferral counts as a failed delivery, against the same limit.
                self.dead_letter_if_exhausted(q, seq);
            }
            Settlement::RenewLock => {
                // RCV-04: LockedUntil = now + LockDuration; DeliveryCount unchanged. The playground
                // lets the holder renew a nominally expired message's lock (TTL-09: expiry does
                // not touch a locked message).
                self.renew_lock(q, seq, token, false);
            }
        }
        Ok(())
    }

    /// RCV-04: LockedUntil = now + LockDuration; DeliveryCount unchanged. Returns the new LockedUntil.
    pub(super) fn renew_lock(
        &mut self,
        q: QueueRef,
        seq: u64,
        token: u128,
        auto: bool,
    ) -> Option<Instant> {
        let now = self.now;
        let e = self.get_mut(q.entity).ok()?;
        let lock_duration = e.settings.lock_duration;
        let lock = e.store_mut(q.dlq).messages.get_mut(&seq)?.lock.as_mut()?;
        lock.locked_until = after(now, lock_duration);
        let locked_until = lock.locked_until;
        self.emit(
            q,
            seq,
            EventKind::LockRenewed { locked_until, auto },
            Some(Rule::Rcv04),
        );
        self.schedule_lapse(q, seq, token, locked_until);
        Some(locked_until)
    }

    /// A message consumed (completed, or received and deleted): throughput and end-to-end latency.
    pub(super) fn count_completed(&mut self, enqueued_time: Instant) {
        let now = self.now;
        let latency = (now - enqueued_time).max(0);
        let b = self.metrics.at(now);
        b.completed += 1;
        b.latency_sum = b.latency_sum.saturating_add(latency);
        b.latency_max = b.latency_max.max(latency);
    }

    /// Records what receiver `r` holds for a message (a peek does not replace a lock). Past
    /// [`HANDLE_LIMIT`] handles, those of messages that are gone are forgotten, so a receiver used
    /// for a long time stays bounded (an old message settled twice then gives InvalidOperation
    /// rather than MessageLockLost).
    pub(super) fn remember(&mut self, r: u32, key: (QueueRef, u64), handle: Handle, replace: bool) {
        let Some(receiver) = self.receivers.get_mut(r as usize) else {
            return;
        };
        if replace {
            receiver.handles.insert(key, handle);
        } else {
            receiver.handles.entry(key).or_insert(handle);
        }
        if receiver.handles.len() <= HANDLE_LIMIT.max(receiver.prune_at) {
            return;
        }
        let entities = &self.entities;
        let exists = |(q, seq): &(QueueRef, u64)| {
            entities
                .get(q.entity as usize)
                .and_then(Option::as_ref)
                .is_some_and(|e| e.store(q.dlq).messages.contains_key(seq))
        };
        receiver.handles.retain(|k, _| exists(k));
        receiver.prune_at = 2 * receiver.handles.len();
    }

    /// A lock ends without settlement (abandon, lapse, loss). RCV-07 first: a delivery that
    /// reaches MaxDeliveryCount dead-letters the message, even when it has also expired (the
    /// playground's choice, docs/RULES.md). Then TTL-09: an expired message expires at
    /// once. Otherwise RCV-06: back at its place in the retrieval order.
    pub(super) fn release(&mut self, q: QueueRef, seq: u64, cause: Rule) {
        self.requeue(q, seq, cause, true);
    }

    /// A lock ends; `failed` says whether the delivery counts as failed (SES-04: closing a
    /// session does not).
    pub(super) fn requeue(&mut self, q: QueueRef, seq: u64, cause: Rule, failed: bool) {
        let now = self.now;
        let exact = self.expiry_mode == ExpiryMode::Exact;
        let Ok(e) = self.get_mut(q.entity) else {
            return;
        };
        let Some(m) = e.store_mut(q.dlq).messages.get_mut(&seq) else {
            return;
        };
        m.lock = None;
        m.failed_deliveries = m.failed_deliveries.saturating_add(u32::from(failed));
        let (failed, expires_at) = (m.failed_deliveries, m.expires_at);
        let deferred = m.state == MessageState::Deferred;
        if self.dead_letter_if_exhausted(q, seq) {
            return;
        }
        if !q.dlq && expires_at <= now && !deferred {
            self.expire(q.entity, seq, Rule::Ttl09);
            return;
        }
        if !deferred {
            // TTL-06 exact mode: receivable again, so its expiry is armed again (the timer
            // armed at enqueue may have been dropped while the message was locked).
            if exact && !q.dlq {
                self.arm_expiry(q.entity, seq, expires_at);
            }
        }
        self.emit(
            q,
            seq,
            EventKind::Requeued {
                failed_deliveries: failed,
            },
            Some(cause),
        );
    }

    /// RCV-07: a message in a main queue whose failed deliveries reached MaxDeliveryCount moves
    /// to the DLQ with MaxDeliveryCountExceeded. Says whether it did. Every failed delivery
    /// (abandon, lapse, lost lock, deferral) is checked here.
    pub(super) fn dead_letter_if_exhausted(&mut self, q: QueueRef, seq: u64) -> bool {
        if q.dlq {
            return false;
        }
        let Ok(e) = self.get_mut(q.entity) else {
            return false;
        };
        let max = e.settings.max_delivery_count;
        if e.main
            .messages
            .get(&seq)
            .is_none_or(|m| m.failed_deliveries < max)
        {
            return false;
        }
        let Some(m) = e.main.remove(seq) else {
            return false;
        };
        self.dead_letter(
            q,
            m,
            Cow::Borrowed(MAX_DELIVERY_REASON),
            Cow::Owned(format!(
                "Message could not be consumed after {max} delivery attempts."
            )),
            Rule::Rcv07,
        );
        true
    }

    /// RCV-08/RCV-10: a lock is lost before it lapsed; the message becomes receivable.
    pub(super) fn lose_lock(&mut self, q: QueueRef, seq: u64, cause: LockLossCause) {
        let rule = match cause {
            LockLossCause::ReceiverDisconnected => Rule::Rcv08,
            _ => Rule::Rcv10,
        };
        self.emit(q, seq, EventKind::LockLost { cause }, Some(rule));
        self.release(q, seq, rule);
    }

    pub fn close_receiver(&mut self, receiver: &str, from: &str) -> Result<()> {
        let q = self.resolve(from)?;
        if let Some(&r) = self.receiver_ids.get(receiver) {
            // SES-04: closing the receiver closes the session it holds there.
            if let Some(s) = self.held_session(r, q.entity).filter(|_| !q.dlq) {
                self.release_session(q.entity, s, crate::event::SessionEnd::Closed);
            }
            self.detach(r, q);
        }
        Ok(())
    }
}

/// A settlement by a receiver that holds no lock on message `seq` of `from`: it never received
/// it (or never received at all).
fn not_received(receiver: &str, from: &str, seq: u64) -> BrokerError {
    BrokerError::new(
        ErrorKind::InvalidOperation,
        text!(
            "e-not-received",
            receiver = receiver,
            seq = seq,
            from = from
        ),
    )
}
