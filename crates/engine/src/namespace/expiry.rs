use super::*;

impl Namespace {
    // ----- expiry and dead-lettering ---------------------------------------------------------

    /// Removes an expired message from the main queue: to the DLQ with TTLExpiredException when
    /// DeadLetteringOnMessageExpiration is set, else dropped (TTL-11).
    pub(super) fn expire(&mut self, entity: u32, seq: u64, because: Rule) {
        let Ok(e) = self.get_mut(entity) else { return };
        let flag = e.settings.dead_lettering_on_message_expiration;
        let Some(m) = e.main.remove(seq) else { return };
        let q = QueueRef { entity, dlq: false };
        self.metrics.at(self.now).expired += 1;
        // The log names the rule that made expiry happen now (sweep, scan, release); a plain
        // timer is TTL-11's own case.
        let rule = if because == Rule::Ttl06 {
            Rule::Ttl11
        } else {
            because
        };
        if flag {
            self.dead_letter(
                q,
                m,
                Cow::Borrowed(TTL_EXPIRED_REASON),
                Cow::Borrowed(TTL_EXPIRED_DESCRIPTION),
                rule,
            );
        } else {
            self.emit(q, seq, EventKind::ExpiredDropped, Some(rule));
        }
    }

    /// Moves a message (already taken out of its store) to the entity's DLQ, or to
    /// ForwardDeadLetteredMessagesTo. DLQ-03: reason and description are application properties too.
    pub(super) fn dead_letter(
        &mut self,
        from: QueueRef,
        mut m: Message,
        reason: Cow<'static, str>,
        description: Cow<'static, str>,
        rule: Rule,
    ) {
        let entity = from.entity;
        let Ok(e) = self.get(entity) else { return };
        let forward = e.settings.forward_dead_lettered_messages_to.clone();
        self.metrics.at(self.now).dead_lettered += 1;
        m.lock = None;
        m.state = MessageState::Active;
        m.extra_mut().dead_letter = Some(DeadLetter {
            reason: reason.clone(),
            description: description.clone(),
            source: None,
        });
        let seq = m.sequence_number;
        self.emit(
            from,
            seq,
            EventKind::DeadLettered {
                reason,
                description,
            },
            Some(rule),
        );
        let dlq = QueueRef { entity, dlq: true };
        // FWD-03: to ForwardDeadLetteredMessagesTo instead of the DLQ. FWD-02 (the playground's
        // choice): that counts as a hop too, so a loop through DLQs ends at the hop limit.
        if let Some(target) = forward.filter(|_| m.transfer_hops < MAX_FORWARD_HOPS) {
            // DeadLetterSource: the entity the message was dead-lettered in.
            if let Some(dl) = m.extra_mut().dead_letter.as_mut() {
                dl.source = Some(self.entity_name(entity).to_string());
            }
            match self.forward(dlq, m, &target, Rule::Fwd03) {
                None => return,
                Some(back) => m = back,
            }
        }
        if let Ok(e) = self.get_mut(entity) {
            e.dlq.insert(m);
        }
    }

    /// TTL-06 exact mode: message `seq` of `entity` expires at `expires_at`. Each page of 64
    /// messages has one expiry timer, at its first ExpiresAt (a message earlier than the
    /// page's timer sets it earlier): a million messages with a TimeToLive set about 16,000
    /// timers, not a million, and a rewind checkpoint copies those.
    pub(super) fn arm_expiry(&mut self, entity: u32, seq: u64, expires_at: Instant) {
        let Ok(e) = self.get_mut(entity) else { return };
        let pages = &mut e.main.messages;
        if expires_at == NEVER || pages.expiry_armed(seq).is_none_or(|at| at <= expires_at) {
            return;
        }
        pages.set_expiry_armed(seq, expires_at);
        self.push_timer(expires_at, Timer::Expire { entity, seq });
    }

    /// The expiry timer of `seq`'s page at `at`: its receivable messages due by then expire,
    /// in SequenceNumber order (as one timer each would fire), and the timer is set again for
    /// the page's next ExpiresAt. A page whose first message was locked, settled or moved
    /// since has nothing due: its timer only moves (TTL-09: a locked message's expiry waits).
    pub(super) fn expire_page(&mut self, at: Instant, entity: u32, seq: u64) {
        let due: Vec<u64> = match self.get(entity) {
            Ok(e) => e
                .main
                .messages
                .expiring(seq, at)
                .map(|m| m.sequence_number)
                .collect(),
            Err(_) => return,
        };
        for s in due {
            self.expire(entity, s, Rule::Ttl06);
        }
        self.rearm_expiry(entity, seq);
    }

    /// Sets the expiry timer of `seq`'s page for its first ExpiresAt, or none.
    pub(super) fn rearm_expiry(&mut self, entity: u32, seq: u64) {
        let Ok(e) = self.get_mut(entity) else { return };
        let pages = &mut e.main.messages;
        let next = pages.first_expiry(seq);
        pages.set_expiry_armed(seq, next.unwrap_or(NEVER));
        if let Some(at) = next {
            self.push_timer(at, Timer::Expire { entity, seq });
        }
    }

    /// TTL-08: a sweep while a receiver is attached collects every expired message.
    pub(super) fn sweep(&mut self, entity: u32) {
        let now = self.now;
        let Ok(e) = self.get_mut(entity) else { return };
        let attached = e.attached_receivers > 0;
        if !attached {
            e.sweep_at = None;
            return;
        }
        let expired: Vec<u64> = e
            .main
            .messages
            .available()
            .filter(|m| m.is_expired_at(now))
            .map(|m| m.sequence_number)
            .collect();
        for seq in expired {
            self.expire(entity, seq, Rule::Ttl08);
        }
        let next = after(now, self.sweep_interval);
        if let Ok(e) = self.get_mut(entity) {
            e.sweep_at = Some(next);
        }
        self.push_timer(next, Timer::Sweep { entity });
    }
}
