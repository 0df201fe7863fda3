use super::timers::auto_renew_at;
use super::*;

impl Namespace {
    pub(super) fn receiver_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.receiver_ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.receivers.len()).unwrap_or(u32::MAX);
        self.receivers.push(Receiver {
            name: name.to_string(),
            ..Receiver::default()
        });
        self.receiver_ids.insert(name.to_string(), id);
        id
    }

    /// A receiver link opens on the queue; in realistic mode the sweep starts (TTL-08).
    pub(super) fn attach(&mut self, receiver: u32, q: QueueRef) {
        if !self.receivers[receiver as usize].attached.insert(q) {
            return;
        }
        self.emit(q, 0, EventKind::ReceiverAttached { receiver }, None);
        let realistic = self.expiry_mode == ExpiryMode::Realistic;
        let now = self.now;
        let every = self.sweep_interval;
        let Ok(e) = self.get_mut(q.entity) else {
            return;
        };
        if !q.dlq {
            e.attached_receivers += 1;
            if realistic && e.sweep_at.is_none() {
                let at = after(now, every);
                e.sweep_at = Some(at);
                self.push_timer(at, Timer::Sweep { entity: q.entity });
            }
        }
    }

    pub(super) fn detach(&mut self, receiver: u32, q: QueueRef) {
        if !self.receivers[receiver as usize].attached.remove(&q) {
            return;
        }
        self.emit(q, 0, EventKind::ReceiverDetached { receiver }, None);
        if let (false, Ok(e)) = (q.dlq, self.get_mut(q.entity)) {
            e.attached_receivers = e.attached_receivers.saturating_sub(1);
        }
    }

    /// RCV-11: browse without locking, in SequenceNumber order, from `from_seq` or after the last
    /// peeked message. Shows active, deferred, scheduled and locked messages.
    pub fn peek(
        &mut self,
        receiver: &str,
        from: &str,
        from_seq: Option<u64>,
        count: u32,
    ) -> Result<Vec<MessageView>> {
        check_count("peek", count)?;
        let q = self.resolve(from)?;
        if self.get(q.entity)?.kind == EntityKind::Topic {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-peek-topic", from = from),
            ));
        }
        self.check_not_forwarding(q, from)?;
        let r = self.receiver_id(receiver);
        self.touch(q.entity); // IDLE-02: peeks count as activity
        let start = from_seq.unwrap_or_else(|| {
            self.receivers[r as usize]
                .peek_cursor
                .iter()
                .find(|(p, _)| *p == q)
                .map_or(0, |(_, seq)| *seq)
                + 1
        });
        let e = self.get(q.entity)?;
        // SES-03: a session receiver peeks its own session's messages only.
        let session = match q.dlq {
            false => self
                .held_session(r, q.entity)
                .map(|s| e.sessions[s as usize].id.as_str()),
            true => None,
        };
        let views: Vec<MessageView> = e
            .store(q.dlq)
            .messages
            .from_seq(start)
            .filter(|m| session.is_none_or(|id| m.session_id() == Some(id)))
            .take(count as usize)
            .map(|m| self.view_of(q, m, Perspective::Peek))
            .collect();
        let receiver_state = &mut self.receivers[r as usize];
        if let Some(last) = views.last() {
            let cursor = &mut receiver_state.peek_cursor;
            match cursor.iter_mut().find(|(p, _)| *p == q) {
                Some((_, seq)) => *seq = last.sequence_number,
                None => cursor.push((q, last.sequence_number)),
            }
        }
        let seqs: Vec<u64> = views.iter().map(|v| v.sequence_number).collect();
        for seq in seqs {
            self.remember(r, (q, seq), Handle::Peeked, false);
        }
        for v in &views {
            self.emit(
                q,
                v.sequence_number,
                EventKind::Peeked {
                    receiver: r,
                    delivery_count: v.delivery_count,
                },
                Some(Rule::Rcv11),
            );
        }
        Ok(views)
    }

    /// Receives up to `count` messages that are available now (RCV-01, RCV-02, TTL-06).
    pub fn receive(
        &mut self,
        receiver: &str,
        from: &str,
        mode: ReceiveMode,
        count: u32,
        options: ReceiveOptions,
    ) -> Result<Vec<MessageView>> {
        check_count("receive", count)?;
        if options
            .max_auto_lock_renewal
            .is_some_and(|d| !(0..=crate::limits::MAX_AUTO_RENEWAL).contains(&d))
        {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!(
                    "e-max-auto-renewal",
                    max = format_duration(crate::limits::MAX_AUTO_RENEWAL)
                ),
            ));
        }
        let q = self.resolve(from)?;
        self.check_receivable(q, from)?;
        self.check_session_held(receiver, q, from)?;
        let r = self.receiver_id(receiver);
        let got = self.receive_into(r, q, mode, count, &options)?;
        Ok(self.views(q, got))
    }

    /// What a client sees of the messages a receive got: a received-and-deleted one as it was
    /// taken, a locked one as it is stored.
    fn views(&self, q: QueueRef, got: Vec<(u64, Option<Message>)>) -> Vec<MessageView> {
        let stored = |seq: u64| {
            let m = self.get(q.entity).ok()?.store(q.dlq).messages.get(&seq)?;
            Some(self.view_of(q, m, Perspective::Receive))
        };
        got.into_iter()
            .filter_map(|(seq, taken)| match taken {
                Some(m) => Some(self.view_of(q, &m, Perspective::Receive)),
                None => stored(seq),
            })
            .collect()
    }

    /// Where a receiver may take messages from: not a topic (receive from its subscriptions),
    /// and not an entity that forwards what arrives there (FWD-01).
    pub(crate) fn check_receivable(&self, q: QueueRef, from: &str) -> Result<()> {
        let e = self.get(q.entity)?;
        if e.kind == EntityKind::Topic {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-receive-topic", from = from),
            ));
        }
        self.check_not_forwarding(q, from)
    }

    /// FWD-01: a forwarding source is neither received from nor peeked.
    fn check_not_forwarding(&self, q: QueueRef, from: &str) -> Result<()> {
        let e = self.get(q.entity)?;
        let (setting, target) = if q.dlq {
            (
                "ForwardDeadLetteredMessagesTo",
                &e.settings.forward_dead_lettered_messages_to,
            )
        } else {
            ("ForwardTo", &e.settings.forward_to)
        };
        if let Some(target) = target {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!(
                    "e-receive-forwarding",
                    from = from,
                    target = target,
                    setting = setting
                ),
            ));
        }
        Ok(())
    }

    /// SES-01/02: a session entity is received from only through a session the receiver holds.
    fn check_session_held(&self, receiver: &str, q: QueueRef, from: &str) -> Result<()> {
        let holds = self
            .receiver_ids
            .get(receiver)
            .and_then(|&r| self.held_session(r, q.entity));
        if self.is_session_queue(q) && holds.is_none() {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-receive-no-session", from = from, receiver = receiver),
            ));
        }
        Ok(())
    }

    /// Receives for receiver `r`: the SequenceNumbers it got, each with the message itself when
    /// it was received and deleted (a locked one stays stored). One function for a client and a
    /// traffic actor alike (each builds what it needs from this).
    pub(crate) fn receive_into(
        &mut self,
        r: u32,
        q: QueueRef,
        mode: ReceiveMode,
        count: u32,
        options: &ReceiveOptions,
    ) -> Result<Vec<(u64, Option<Message>)>> {
        self.get(q.entity)?;
        self.touch(q.entity);
        self.attach(r, q);
        let mut out = Vec::new();
        while out.len() < count as usize {
            let now = self.now;
            let Some(seq) = self.next_available(q, r) else {
                break;
            };
            let e = self.get(q.entity)?;
            let expired = e
                .store(q.dlq)
                .messages
                .get(&seq)
                .is_some_and(|m| m.is_expired_at(now));
            // TTL-06/07: never returned once expired; a receive collects what it scans past.
            // TTL-12: nothing expires in a DLQ.
            if expired && !q.dlq {
                let rule = if self.expiry_mode == ExpiryMode::Realistic {
                    Rule::Ttl07
                } else {
                    Rule::Ttl06
                };
                self.expire(q.entity, seq, rule);
                continue;
            }
            // RCV-07: a message whose failed deliveries already reach MaxDeliveryCount (it was
            // lowered since) is dead-lettered when next delivered, never handed out.
            if self.dead_letter_if_exhausted(q, seq) {
                continue;
            }
            match mode {
                ReceiveMode::PeekLock => {
                    if !self.lock(q, seq, r, options, false) {
                        break;
                    }
                    out.push((seq, None));
                }
                ReceiveMode::ReceiveAndDelete => {
                    // RCV-01: settled as it is sent; a failed transfer loses it.
                    let Some(m) = self.get_mut(q.entity)?.store_mut(q.dlq).remove(seq) else {
                        break;
                    };
                    if options.transfer_fails {
                        self.emit(
                            q,
                            seq,
                            EventKind::LostInTransfer { receiver: r },
                            Some(Rule::Rcv01),
                        );
                        continue;
                    }
                    self.remember(r, (q, seq), Handle::ReceivedAndDeleted, true);
                    self.emit(
                        q,
                        seq,
                        EventKind::ReceivedAndDeleted { receiver: r },
                        Some(Rule::Rcv01),
                    );
                    self.count_completed(m.enqueued_time);
                    out.push((seq, Some(m)));
                }
            }
        }
        Ok(out)
    }

    /// RCV-02: lock exclusively, LockedUntil = now + LockDuration, a new LockToken. Says
    /// whether it locked.
    pub(super) fn lock(
        &mut self,
        q: QueueRef,
        seq: u64,
        r: u32,
        options: &ReceiveOptions,
        by_seq: bool,
    ) -> bool {
        self.try_lock(q, seq, r, options, by_seq).is_some()
    }

    /// [`Namespace::lock`], with `?` for what is not there.
    fn try_lock(
        &mut self,
        q: QueueRef,
        seq: u64,
        r: u32,
        options: &ReceiveOptions,
        by_seq: bool,
    ) -> Option<()> {
        let token = self.next_lock_token();
        let now = self.now;
        // SES-02: a session's messages are locked as long as the session is.
        let session_until = self.session_lock_of(r, q).map(|l| l.locked_until);
        let e = self.get_mut(q.entity).ok()?;
        let locked_until = session_until.unwrap_or(after(now, e.settings.lock_duration));
        let auto_renew_until = options
            .max_auto_lock_renewal
            .filter(|d| *d > 0 && session_until.is_none())
            .map(|d| after(now, d));
        let m = e.store_mut(q.dlq).messages.get_mut(&seq)?;
        m.lock = Some(Box::new(Lock {
            token,
            holder: r,
            locked_until,
            auto_renew_until,
        }));
        let delivery_count = m.failed_deliveries.saturating_add(1);
        self.remember(r, (q, seq), Handle::Locked(token), true);
        self.emit(
            q,
            seq,
            EventKind::Locked {
                receiver: r,
                delivery_count,
                locked_until,
                by_sequence_number: by_seq,
            },
            Some(if by_seq { Rule::Rcv09 } else { Rule::Rcv02 }),
        );
        self.schedule_lapse(q, seq, token, locked_until);
        if auto_renew_until.is_some() {
            self.push_timer(
                auto_renew_at(now, locked_until),
                Timer::AutoRenew {
                    queue: q,
                    seq,
                    token: token.into(),
                },
            );
        }
        Some(())
    }

    /// RCV-04: auto lock renewal, until the maximum renewal duration.
    pub(super) fn auto_renew(&mut self, q: QueueRef, seq: u64, token: u128) {
        let now = self.now;
        let Ok(e) = self.get_mut(q.entity) else {
            return;
        };
        let Some(lock) = e
            .store_mut(q.dlq)
            .messages
            .get_mut(&seq)
            .and_then(|m| m.lock.as_mut())
        else {
            return;
        };
        let Some(until) = lock.auto_renew_until else {
            return;
        };
        if now >= until || lock.locked_until <= now {
            return;
        }
        let Some(locked_until) = self.renew_lock(q, seq, token, true) else {
            return;
        };
        let next = auto_renew_at(now, locked_until);
        if next < until {
            self.push_timer(
                next,
                Timer::AutoRenew {
                    queue: q,
                    seq,
                    token: token.into(),
                },
            );
        }
    }

    /// RCV-09: receive deferred messages by SequenceNumber. Any unknown number fails the whole call.
    /// TTL-13: an expired deferred message is dead-lettered (if set) and the call fails.
    pub fn receive_deferred(
        &mut self,
        receiver: &str,
        from: &str,
        seqs: &[u64],
    ) -> Result<Vec<MessageView>> {
        if seqs.is_empty() || seqs.len() > crate::limits::MAX_DEFERRED_SEQS {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!("e-deferred-count", max = crate::limits::MAX_DEFERRED_SEQS),
            ));
        }
        let q = self.resolve(from)?;
        self.check_receivable(q, from)?;
        self.check_session_held(receiver, q, from)?;
        // SES-03: in a session entity, only the held session's deferred messages.
        let session = self
            .receiver_ids
            .get(receiver)
            .and_then(|&r| self.held_session(r, q.entity))
            .and_then(|s| Some(self.get(q.entity).ok()?.sessions[s as usize].id.clone()));
        let mut seen = BTreeSet::new();
        if let Some(twice) = seqs.iter().find(|s| !seen.insert(**s)) {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-deferred-twice", seq = *twice),
            ));
        }
        let now = self.now;
        let e = self.get(q.entity)?;
        let store = e.store(q.dlq);
        let mut expired = Vec::new();
        for &seq in seqs {
            match store.messages.get(&seq) {
                Some(m)
                    if m.state == MessageState::Deferred
                        && m.lock.is_none()
                        && (session.is_none() || m.session_id() == session.as_deref()) =>
                {
                    if m.is_expired_at(now) && !q.dlq {
                        expired.push(seq);
                    }
                }
                _ => {
                    return Err(BrokerError::new(
                        ErrorKind::MessageNotFound,
                        text!("e-no-deferred", seq = seq, from = from),
                    ))
                }
            }
        }
        self.touch(q.entity);
        if !expired.is_empty() {
            for &seq in &expired {
                self.expire(q.entity, seq, Rule::Ttl13);
            }
            return Err(BrokerError::new(
                ErrorKind::MessageNotFound,
                text!("e-deferred-expired", seq = expired[0], from = from),
            ));
        }
        let r = self.receiver_id(receiver);
        self.attach(r, q);
        let options = ReceiveOptions::default();
        let got: Vec<(u64, Option<Message>)> = seqs
            .iter()
            .filter(|&&seq| {
                // RCV-07, as above: an exhausted message goes to the DLQ, not to the caller.
                !self.dead_letter_if_exhausted(q, seq) && self.lock(q, seq, r, &options, true)
            })
            .map(|&seq| (seq, None))
            .collect();
        Ok(self.views(q, got))
    }
}

/// A receive or peek asks for 1 to [`crate::limits::MAX_RECEIVE_COUNT`] messages.
fn check_count(call: &str, count: u32) -> Result<()> {
    let max = crate::limits::MAX_RECEIVE_COUNT;
    if (1..=max).contains(&count) {
        Ok(())
    } else {
        Err(BrokerError::new(
            ErrorKind::ArgumentOutOfRange,
            text!("e-count", call = call, max = max, count = count),
        ))
    }
}
