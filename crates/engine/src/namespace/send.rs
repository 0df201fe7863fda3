use super::*;

impl Namespace {
    /// SEND-01/04: the checks a broker makes before it accepts a message.
    pub(super) fn check_send(&mut self, q: QueueRef, message: &NewMessage) -> Result<()> {
        if q.dlq {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-send-dlq"),
            ));
        }
        let size = message.body_size.unwrap_or(message.body.len() as u64);
        let max = self.tier.max_message_size();
        if size > max {
            return Err(self.rejection(
                ErrorKind::MessageSizeExceeded,
                text!(
                    "e-too-large",
                    size = size,
                    tier = self.tier.to_string(),
                    max = max
                ),
            ));
        }
        if self.now < self.server_busy_until {
            return Err(self.rejection(
                ErrorKind::ServerBusy,
                text!(
                    "e-server-busy",
                    until = crate::time::format_instant(self.server_busy_until)
                ),
            ));
        }
        let e = self.get(q.entity)?;
        if matches!(e.kind, EntityKind::Subscription { .. }) {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-send-subscription"),
            ));
        }
        // SES-01: a session queue takes only messages with a SessionId.
        if e.settings.requires_session && !message.system_properties.contains_key("SessionId") {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-session-id-missing", to = self.entity_name(q.entity)),
            ));
        }
        // The playground's bounds on what a namespace stores: one pass over the entities.
        if self.max_messages.is_some() || self.max_body_bytes.is_some() {
            let (messages, bytes) = self.stored_totals();
            if let Some(limit) = self.max_messages.filter(|l| messages >= *l) {
                return Err(self.rejection(
                    ErrorKind::QuotaExceeded,
                    text!("e-max-messages", max = limit),
                ));
            }
            let body = message.held_bytes();
            if let Some(limit) = self
                .max_body_bytes
                .filter(|l| bytes.saturating_add(body) > *l)
            {
                return Err(self.rejection(
                    ErrorKind::QuotaExceeded,
                    text!("e-max-body-bytes", mb = limit / (1024 * 1024)),
                ));
            }
        }
        let e = self.get(q.entity)?;
        let stored = e.stored_bytes();
        let limit = e.settings.max_size_bytes;
        if stored.saturating_add(size) > limit {
            return Err(self.rejection(
                ErrorKind::QuotaExceeded,
                text!("e-entity-full", stored = stored, max = limit),
            ));
        }
        Ok(())
    }

    /// DUP-02, DUP-03: a send whose MessageId the entity accepted within its
    /// DuplicateDetectionHistoryTimeWindow is acknowledged and dropped (logged). A message
    /// without a MessageId of its own is never a duplicate.
    fn drop_duplicate(&mut self, q: QueueRef, message: &NewMessage) -> Result<bool> {
        let now = self.now;
        let e = self.get_mut(q.entity)?;
        let Some(id) = message
            .message_id
            .as_deref()
            .filter(|_| e.settings.requires_duplicate_detection)
        else {
            return Ok(false);
        };
        let window = e.settings.duplicate_detection_history_time_window;
        if !e
            .history
            .get_or_insert_with(Default::default)
            .seen(id, now, window)
        {
            return Ok(false);
        }
        e.duplicates_dropped += 1;
        let message_id = id.to_string();
        self.emit(
            q,
            0,
            EventKind::DuplicateDropped { message_id },
            Some(Rule::Dup02),
        );
        Ok(true)
    }

    /// Sends a message and returns its SequenceNumber (for a topic, the topic's; 0 for a
    /// duplicate dropped, DUP-02).
    pub fn send(&mut self, to: &str, message: NewMessage) -> Result<u64> {
        let q = self.resolve(to)?;
        self.send_to(q, message)
    }

    /// 0 when DUP-02 dropped it as a duplicate (SequenceNumbers start at 1).
    pub(crate) fn send_to(&mut self, q: QueueRef, message: NewMessage) -> Result<u64> {
        self.check_send(q, &message)?;
        self.touch(q.entity);
        if self.drop_duplicate(q, &message)? {
            return Ok(0);
        }
        let default_ttl = self.get(q.entity)?.settings.default_message_time_to_live;
        let capped = message.time_to_live.is_some_and(|t| t > default_ttl);
        let seq = self.get_mut(q.entity)?.take_seq();
        let m = self.new_stored(q.entity, seq, message, None)?;
        // TTL-01: ExpiresAt = EnqueuedTime + TTL; TTL-02: a longer TTL is capped by the default.
        let rule = if capped { Rule::Ttl02 } else { Rule::Ttl01 };
        self.emit(
            q,
            seq,
            EventKind::Sent {
                expires_at: m.expires_at,
                ttl_capped: capped,
                rule_name: None,
            },
            Some(rule),
        );
        self.metrics.at(self.now).sent += 1;
        self.arrive(q.entity, m);
        Ok(seq)
    }

    /// SCH-01: schedules a message; it is enqueued at `at`. Returns its SequenceNumber.
    pub fn schedule(&mut self, to: &str, message: NewMessage, at: Instant) -> Result<u64> {
        let q = self.resolve(to)?;
        self.schedule_to(q, message, at)
    }

    pub(crate) fn schedule_to(
        &mut self,
        q: QueueRef,
        message: NewMessage,
        at: Instant,
    ) -> Result<u64> {
        self.check_send(q, &message)?;
        self.touch(q.entity);
        // DUP-02: a scheduled message counts at send.
        if self.drop_duplicate(q, &message)? {
            return Ok(0);
        }
        let at = at.max(self.now);
        let seq = self.get_mut(q.entity)?.take_seq();
        let mut m = self.new_stored(q.entity, seq, message, Some(at))?;
        m.state = MessageState::Scheduled;
        m.scheduled_enqueue_time = Some(at);
        // TTL-05: expiry counts from the scheduled enqueue time.
        m.enqueue_at(at);
        self.get_mut(q.entity)?.main.insert(m);
        self.emit(
            q,
            seq,
            EventKind::Scheduled {
                scheduled_enqueue_time: at,
            },
            Some(Rule::Sch01),
        );
        self.metrics.at(self.now).sent += 1;
        self.push_timer(
            at,
            Timer::Activate {
                entity: q.entity,
                seq,
            },
        );
        Ok(seq)
    }

    /// SCH-01: cancelling removes a scheduled message.
    pub fn cancel_scheduled(&mut self, to: &str, seq: u64) -> Result<()> {
        let q = self.resolve(to)?;
        if q.dlq {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-cancel-dlq", to = to),
            ));
        }
        let e = self.get(q.entity)?;
        if !e
            .main
            .messages
            .get(&seq)
            .is_some_and(|m| m.state == MessageState::Scheduled)
        {
            return Err(BrokerError::new(
                ErrorKind::MessageNotFound,
                text!("e-no-scheduled", seq = seq, to = to),
            ));
        }
        self.touch(q.entity);
        self.get_mut(q.entity)?.main.remove(seq);
        self.emit(q, seq, EventKind::ScheduleCancelled, Some(Rule::Sch01));
        Ok(())
    }

    /// Builds the stored message: TTL-01/02/03 (the entity default caps and fills in the TTL).
    pub(super) fn new_stored(
        &mut self,
        entity: u32,
        seq: u64,
        new: NewMessage,
        scheduled: Option<Instant>,
    ) -> Result<Message> {
        let default_ttl = self.get(entity)?.settings.default_message_time_to_live;
        let own_ttl = new
            .time_to_live
            .map(|t| t.clamp(0, MAX_VALUE).min(default_ttl));
        let effective_ttl = own_ttl.unwrap_or(default_ttl);
        let enqueued = scheduled.unwrap_or(self.now);
        let extra = if new.subject.is_some()
            || new.correlation_id.is_some()
            || !new.application_properties.is_empty()
            || !new.system_properties.is_empty()
        {
            Some(Box::new(crate::message::Extra {
                subject: new.subject,
                correlation_id: new.correlation_id,
                application_properties: new.application_properties,
                dead_letter: None,
                system_properties: new.system_properties,
                rule_name: None,
            }))
        } else {
            None
        };
        Ok(Message {
            sequence_number: seq,
            message_id: new.message_id.unwrap_or_else(|| seq.to_string()),
            enqueued_time: enqueued,
            own_ttl,
            effective_ttl,
            expires_at: after(enqueued, effective_ttl),
            scheduled_enqueue_time: None,
            state: MessageState::Active,
            lock: None,
            failed_deliveries: 0,
            body_size: new.body_size.unwrap_or(new.body.len() as u64),
            body: new.body,
            extra,
            transfer_hops: 0,
            enqueued_sequence_number: seq,
        })
    }

    /// A message arrives at a queue or topic at `self.now`: fanned out to the subscriptions
    /// (TOP-01), forwarded (FWD-01/02), or stored.
    pub(super) fn arrive(&mut self, entity: u32, mut m: Message) {
        let q = QueueRef { entity, dlq: false };
        let Ok(e) = self.get(entity) else { return };
        let kind = e.kind;
        let forward_to = e.settings.forward_to.clone();
        m.enqueue_at(self.now);
        if kind == EntityKind::Topic {
            return self.fan_out(entity, m);
        }
        if let Some(target) = forward_to {
            if m.transfer_hops >= MAX_FORWARD_HOPS {
                // FWD-02: a fifth hop is refused; the message is dead-lettered where it is.
                let description = format!(
                    "The message was forwarded {MAX_FORWARD_HOPS} times; it would take a fifth hop to '{target}'."
                );
                return self.dead_letter(
                    q,
                    m,
                    Cow::Borrowed(MAX_HOPS_REASON),
                    Cow::Owned(description),
                    Rule::Fwd02,
                );
            }
            match self.forward(q, m, &target, Rule::Fwd01) {
                None => return,
                Some(back) => m = back,
            }
        }
        // SES-01: a copy without a SessionId cannot be stored in a session subscription.
        if self.is_session_queue(q) && m.session_id().is_none() {
            return self.dead_letter(
                q,
                m,
                Cow::Borrowed(SESSION_ID_NULL_REASON),
                Cow::Borrowed(SESSION_ID_NULL_DESCRIPTION),
                Rule::Ses01,
            );
        }
        self.store_active(entity, m);
    }

    /// TOP-01, FLT-01 and TTL-04: a subscription whose rules match gets one copy for the
    /// matching rules without an action, and one more for each matching rule with an action
    /// (FLT-04: acted on, its rule named in the log); each with the smallest TTL.
    fn fan_out(&mut self, topic: u32, m: Message) {
        let Ok(t) = self.get(topic) else { return };
        let topic_default = t.settings.default_message_time_to_live;
        let subs: Vec<u32> = t.subscriptions.clone();
        for sub in subs {
            let Ok(s) = self.get(sub) else { continue };
            let sub_default = s.settings.default_message_time_to_live;
            // The copies: None the plain one, Some(i) the one of rule i with an action.
            let mut copies: Vec<Option<usize>> = Vec::new();
            // The first matching rule without an action names the plain copy.
            let mut plain_rule = None;
            for (i, (_, rule)) in s.rules.iter().enumerate() {
                if !rule.matches(&m) {
                    continue;
                }
                match rule {
                    r if r.has_action() => copies.push(Some(i)),
                    _ if !copies.contains(&None) => {
                        plain_rule = Some(i);
                        copies.insert(0, None)
                    }
                    _ => {}
                }
            }
            for (n, acting) in copies.into_iter().enumerate() {
                let mut copy = m.clone();
                // A second copy in one subscription takes the topic's next SequenceNumber
                // (the playground's choice: numbers stay unique in a subscription).
                if n > 0 {
                    if let Ok(t) = self.get_mut(topic) {
                        copy.sequence_number = t.take_seq();
                    }
                }
                let mut rule_name = None;
                if let Some((name, r)) = acting.and_then(|i| self.get(sub).ok()?.rules.get(i)) {
                    r.act(&mut copy);
                    rule_name = Some(name.clone());
                }
                // FLT-01: the copy remembers the rule that delivered it (RuleName).
                let delivered_by = acting
                    .or(plain_rule)
                    .and_then(|i| Some(self.get(sub).ok()?.rules.get(i)?.0.clone()));
                copy.extra_mut().rule_name = delivered_by;
                let rule = if rule_name.is_some() {
                    Rule::Flt04
                } else {
                    Rule::Top01
                };
                // TTL-04: min(message TTL, topic default, subscription default).
                copy.own_ttl = m.own_ttl.map(|t| t.min(sub_default));
                copy.effective_ttl = copy.own_ttl.unwrap_or(topic_default.min(sub_default));
                self.emit(
                    QueueRef {
                        entity: sub,
                        dlq: false,
                    },
                    copy.sequence_number,
                    EventKind::Sent {
                        expires_at: after(self.now, copy.effective_ttl),
                        ttl_capped: false,
                        rule_name,
                    },
                    Some(rule),
                );
                self.arrive(sub, copy);
            }
        }
    }

    /// FWD-01/03: moves a message to the queue or topic `target`, which gives it its own
    /// SequenceNumber; it starts afresh there (DeliveryCount 0, no lock) and counts a hop. The
    /// message comes back (Some) if the target is gone or is no queue or topic.
    pub(super) fn forward(
        &mut self,
        from: QueueRef,
        mut m: Message,
        target: &str,
        rule: Rule,
    ) -> Option<Message> {
        let Some(to) = self.resolve(target).ok().filter(|to| !to.dlq) else {
            return Some(m);
        };
        let Ok(t) = self.get_mut(to.entity) else {
            return Some(m);
        };
        if matches!(t.kind, EntityKind::Subscription { .. }) {
            return Some(m);
        }
        let new_seq = t.take_seq();
        let default_ttl = t.settings.default_message_time_to_live;
        self.emit(
            from,
            m.sequence_number,
            EventKind::Forwarded {
                to: to.entity,
                new_sequence_number: new_seq,
            },
            Some(rule),
        );
        m.sequence_number = new_seq;
        m.lock = None;
        m.state = MessageState::Active;
        m.failed_deliveries = 0;
        m.transfer_hops = m.transfer_hops.saturating_add(1);
        // A dead-letter forwarded out of a DLQ starts afresh under the target's default TTL (its
        // own TTL has already run out); an ordinary forward keeps its TTL, from the new enqueue.
        m.own_ttl = if from.dlq {
            None
        } else {
            m.own_ttl.map(|t| t.min(default_ttl))
        };
        m.effective_ttl = m.own_ttl.unwrap_or(default_ttl);
        self.touch(to.entity);
        self.arrive(to.entity, m);
        None
    }

    /// Stores an Active message in a queue or subscription and arms its expiry (exact mode).
    pub(super) fn store_active(&mut self, entity: u32, m: Message) {
        let expires_at = m.expires_at;
        let seq = m.sequence_number;
        let exact = self.expiry_mode == ExpiryMode::Exact;
        let Ok(e) = self.get_mut(entity) else { return };
        // SES-02: a session is known from its first message on.
        if let Some(id) = m.session_id().filter(|_| e.settings.requires_session) {
            e.session_index(id);
        }
        e.main.insert(m);
        if exact {
            self.arm_expiry(entity, seq, expires_at);
        }
    }

    /// SCH-01: the scheduled time has come: enqueue it (EnqueuedTime = now).
    pub(super) fn activate(&mut self, entity: u32, seq: u64) {
        let Ok(e) = self.get_mut(entity) else { return };
        let Some(mut m) = e.main.remove(seq) else {
            return;
        };
        m.state = MessageState::Active;
        m.enqueue_at(self.now);
        self.emit(
            QueueRef { entity, dlq: false },
            seq,
            EventKind::Activated {
                expires_at: m.expires_at,
            },
            Some(Rule::Sch01),
        );
        // IDLE-02: the entity was not idle while the message waited; idle time counts from now.
        self.touch(entity);
        self.arrive(entity, m);
    }
}
