use super::topology::Change;
use super::*;

/// The SDK's CreateSubscriptionOptions.SubscriptionName: "Value cannot exceed 50 chars".
const MAX_SUBSCRIPTION_NAME: usize = 50;

impl Namespace {
    pub(super) fn check_name(&self, path: &str) -> Result<()> {
        let valid = !path.is_empty()
            && path.len() <= 260
            && path
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
            && !path.starts_with('/')
            && !path.ends_with('/')
            && !path.contains("$");
        if !valid {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!("e-bad-name", name = crate::error::quote(path)),
            )
            .on_field("Name"));
        }
        // Counted by name (the live entities are among the names ever made), not over every
        // entity ever made: a queue deleted and made again does not make the next create dearer.
        if self.entities().count() >= crate::limits::MAX_ENTITIES {
            return Err(BrokerError::new(
                ErrorKind::QuotaExceeded,
                text!("e-max-entities", max = crate::limits::MAX_ENTITIES),
            ));
        }
        if self.entity(path).is_some() {
            return Err(BrokerError::new(
                ErrorKind::MessagingEntityAlreadyExists,
                text!("e-exists", path = path),
            )
            .on_field("Name"));
        }
        Ok(())
    }

    pub(super) fn add_entity(
        &mut self,
        path: &str,
        kind: EntityKind,
        settings: EntitySettings,
        rules: Vec<(String, SubscriptionRule)>,
    ) -> u32 {
        let id = u32::try_from(self.entity_names.len()).unwrap_or(u32::MAX);
        self.entity_names.push(path.to_string());
        let settings = settings.as_kept();
        self.entities
            .push(Some(Entity::new(id, path, kind, settings, rules, self.now)));
        self.paths.insert(path.to_string(), id);
        self.emit(
            QueueRef {
                entity: id,
                dlq: false,
            },
            0,
            EventKind::EntityCreated,
            None,
        );
        self.touch(id);
        id
    }

    /// PRO-01: the emulator holds at most 50 queues and topics.
    fn check_emulator_room(&self) -> Result<()> {
        let queues_and_topics = self
            .entities()
            .filter(|e| !matches!(e.kind, EntityKind::Subscription { .. }))
            .count();
        if self.tier == Tier::Emulator
            && queues_and_topics >= crate::settings::EMULATOR_MAX_QUEUES_AND_TOPICS
        {
            return Err(BrokerError::new(
                ErrorKind::QuotaExceeded,
                text!(
                    "e-emulator-entities",
                    max = crate::settings::EMULATOR_MAX_QUEUES_AND_TOPICS
                ),
            ));
        }
        Ok(())
    }

    /// PRO-01: the emulator's names: a letter or digit first and last (its config schema's
    /// pattern, for queues, topics, subscriptions and rules alike).
    fn check_emulator_name(&self, name: &str) -> Result<()> {
        if self.tier == Tier::Emulator && !crate::settings::is_emulator_name(name) {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!("e-emulator-name", name = crate::error::quote(name)),
            )
            .on_field("Name"));
        }
        Ok(())
    }

    /// PRO-01: an emulator subscription locks for 1 min at least.
    fn check_emulator_subscription(&self, settings: &EntitySettings) -> Result<()> {
        let min = crate::settings::EMULATOR_SUBSCRIPTION_MIN_LOCK;
        if self.tier == Tier::Emulator && settings.lock_duration < min {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!(
                    "e-emulator-subscription-lock",
                    value = crate::time::format_duration(settings.lock_duration)
                ),
            )
            .on_field("LockDuration"));
        }
        Ok(())
    }

    /// A new queue's or topic's name: valid, room for it (the emulator's bounds), and no `/`
    /// (`slash` says so for its kind).
    fn check_new_name(&self, name: &str, slash: text::Text) -> Result<()> {
        self.check_name(name)?;
        self.check_emulator_name(name)?;
        self.check_emulator_room()?;
        if name.contains('/') {
            return Err(BrokerError::new(ErrorKind::ArgumentOutOfRange, slash));
        }
        Ok(())
    }

    pub fn create_queue(&mut self, name: &str, settings: EntitySettings) -> Result<()> {
        self.check_new_name(name, text!("e-queue-slash", name = name))?;
        settings.validate(self.tier)?;
        self.check_forwarding(name, &settings, Change::NewQueue)?;
        self.add_entity(name, EntityKind::Queue, settings, Vec::new());
        Ok(())
    }

    pub fn create_topic(&mut self, name: &str, settings: EntitySettings) -> Result<()> {
        // TIER-01: Basic has no topics.
        if !self.tier.has_topics() {
            return Err(BrokerError::new(
                ErrorKind::NotSupported,
                text!("e-basic-no-topics", name = name),
            ));
        }
        self.check_new_name(name, text!("e-topic-slash", name = name))?;
        settings.validate(self.tier)?;
        // SES-01: sessions are a queue's or a subscription's.
        if settings.requires_session {
            return Err(
                BrokerError::new(ErrorKind::InvalidOperation, text!("e-session-topic"))
                    .on_field("RequiresSession"),
            );
        }
        self.check_forwarding(name, &settings, Change::NewTopic)?;
        self.add_entity(name, EntityKind::Topic, settings, Vec::new());
        Ok(())
    }

    pub fn create_subscription(
        &mut self,
        topic: &str,
        name: &str,
        settings: EntitySettings,
        rule: SubscriptionRule,
    ) -> Result<()> {
        let rules = vec![(crate::entity::DEFAULT_RULE.to_string(), rule)];
        self.create_subscription_with_rules(topic, name, settings, rules)
    }

    /// FLT-01: a subscription with its rules (none: `$Default`, which takes every message).
    pub fn create_subscription_with_rules(
        &mut self,
        topic: &str,
        name: &str,
        settings: EntitySettings,
        mut rules: Vec<(String, SubscriptionRule)>,
    ) -> Result<()> {
        if rules.is_empty() {
            rules.push((
                crate::entity::DEFAULT_RULE.to_string(),
                SubscriptionRule::MatchAll,
            ));
        }
        if rules.len() > crate::limits::MAX_RULES {
            return Err(BrokerError::new(
                ErrorKind::QuotaExceeded,
                text!("e-max-rules", max = crate::limits::MAX_RULES),
            ));
        }
        for (i, (rule_name, _)) in rules.iter().enumerate() {
            check_rule_name(rule_name)?;
            if rules[..i]
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(rule_name))
            {
                return Err(BrokerError::new(
                    ErrorKind::MessagingEntityAlreadyExists,
                    text!("e-rule-exists", name = rule_name, path = name),
                ));
            }
        }
        let q = self.resolve(topic)?;
        let topic_entity = self.get(q.entity)?;
        // DUP-01: duplicate detection is the topic's (its subscriptions get what it accepted).
        if settings.requires_duplicate_detection {
            return Err(
                BrokerError::new(ErrorKind::InvalidOperation, text!("e-dup-subscription"))
                    .on_field("RequiresDuplicateDetection"),
            );
        }
        if topic_entity.kind != EntityKind::Topic {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-not-topic", name = topic),
            ));
        }
        let path = format!("{topic}/subscriptions/{name}");
        if name.contains('/') {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!("e-subscription-slash", name = name),
            ));
        }
        // The SDK's CreateSubscriptionOptions.SubscriptionName: at most 50 characters.
        if name.chars().count() > MAX_SUBSCRIPTION_NAME {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!("e-subscription-name-length", max = MAX_SUBSCRIPTION_NAME),
            )
            .on_field("Name"));
        }
        self.check_name(&path)?;
        self.check_emulator_name(name)?;
        for (rule_name, _) in &rules {
            if rule_name != crate::entity::DEFAULT_RULE {
                self.check_emulator_name(rule_name)?;
            }
        }
        let max_subscriptions = crate::settings::EMULATOR_MAX_SUBSCRIPTIONS;
        if self.tier == Tier::Emulator
            && self.get(q.entity)?.subscriptions.len() >= max_subscriptions
        {
            return Err(BrokerError::new(
                ErrorKind::QuotaExceeded,
                text!(
                    "e-emulator-subscriptions",
                    topic = topic,
                    max = max_subscriptions
                ),
            ));
        }
        settings.validate(self.tier)?;
        self.check_emulator_subscription(&settings)?;
        self.check_forwarding(
            &path,
            &settings,
            Change::NewSubscription { topic: q.entity },
        )?;
        let id = self.add_entity(
            &path,
            EntityKind::Subscription { topic: q.entity },
            settings,
            rules,
        );
        self.get_mut(q.entity)?.subscriptions.push(id);
        self.touch(q.entity);
        Ok(())
    }

    /// Changes an entity's settings. RCV-10: every lock on it is lost.
    pub fn update_entity(&mut self, path: &str, settings: EntitySettings) -> Result<()> {
        let q = self.resolve(path)?;
        if q.dlq {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-dlq-no-settings"),
            ));
        }
        settings.validate(self.tier)?;
        if matches!(self.get(q.entity)?.kind, EntityKind::Subscription { .. }) {
            self.check_emulator_subscription(&settings)?;
        }
        // DUP-01: chosen at creation.
        if settings.requires_duplicate_detection
            != self.get(q.entity)?.settings.requires_duplicate_detection
        {
            return Err(
                BrokerError::new(ErrorKind::InvalidOperation, text!("e-dup-change"))
                    .on_field("RequiresDuplicateDetection"),
            );
        }
        // SES-01: chosen at creation.
        if settings.requires_session != self.get(q.entity)?.settings.requires_session {
            return Err(
                BrokerError::new(ErrorKind::InvalidOperation, text!("e-session-change"))
                    .on_field("RequiresSession"),
            );
        }
        let path = self.entity_name(q.entity).to_string();
        self.check_forwarding(&path, &settings, Change::Update(q.entity))?;
        let settings = settings.as_kept();
        let limit = settings.auto_delete_on_idle;
        self.get_mut(q.entity)?.settings = settings;
        self.emit(q, 0, EventKind::EntityUpdated, Some(Rule::Rcv10));
        // The update is activity (IDLE-02), and AutoDeleteOnIdle may have changed: re-arm.
        if limit < MAX_VALUE {
            self.arm_idle_check(q.entity, after(self.now, limit));
        } else {
            self.get_mut(q.entity)?.idle_at = None;
        }
        self.touch(q.entity);
        for dlq in [false, true] {
            let queue = QueueRef {
                entity: q.entity,
                dlq,
            };
            for seq in self.get(q.entity)?.store(dlq).locked_seqs() {
                self.lose_lock(queue, seq, LockLossCause::EntityUpdated);
            }
        }
        self.lose_sessions(Some(q.entity), None);
        Ok(())
    }

    /// FLT-01: adds a named rule to a subscription (names are unique within it).
    pub fn create_rule(
        &mut self,
        subscription: &str,
        name: &str,
        rule: SubscriptionRule,
    ) -> Result<()> {
        check_rule_name(name)?;
        self.check_emulator_name(name)?;
        let id = self.subscription_id(subscription)?;
        let max = crate::limits::MAX_RULES;
        let e = self.get(id)?;
        if e.rules.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return Err(BrokerError::new(
                ErrorKind::MessagingEntityAlreadyExists,
                text!("e-rule-exists", name = name, path = subscription),
            ));
        }
        if e.rules.len() >= max {
            return Err(BrokerError::new(
                ErrorKind::QuotaExceeded,
                text!("e-max-rules", max = max),
            ));
        }
        self.get_mut(id)?.rules.push((name.to_string(), rule));
        self.rules_changed(id);
        Ok(())
    }

    /// FLT-01: removes a subscription's rule (without rules it takes nothing).
    pub fn delete_rule(&mut self, subscription: &str, name: &str) -> Result<()> {
        let id = self.subscription_id(subscription)?;
        let rules = &mut self.get_mut(id)?.rules;
        let Some(i) = rules.iter().position(|(n, _)| n.eq_ignore_ascii_case(name)) else {
            return Err(BrokerError::new(
                ErrorKind::MessagingEntityNotFound,
                text!("e-no-rule", name = name, path = subscription),
            ));
        };
        rules.remove(i);
        self.rules_changed(id);
        Ok(())
    }

    /// FLT-01: a subscription's rules changed: logged, and activity (IDLE-02).
    fn rules_changed(&mut self, id: u32) {
        let q = QueueRef {
            entity: id,
            dlq: false,
        };
        self.emit(q, 0, EventKind::EntityUpdated, Some(Rule::Flt01));
        self.touch(id);
    }

    /// The id of subscription `path`: rules are a subscription's.
    fn subscription_id(&self, path: &str) -> Result<u32> {
        let q = self.resolve(path)?;
        match self.get(q.entity)?.kind {
            EntityKind::Subscription { .. } if !q.dlq => Ok(q.entity),
            _ => Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-rule-not-subscription", path = path),
            )),
        }
    }

    pub fn delete_entity(&mut self, path: &str) -> Result<()> {
        let q = self.resolve(path)?;
        if q.dlq {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-dlq-no-delete"),
            ));
        }
        self.remove_entity(q.entity, None);
        Ok(())
    }

    pub(super) fn remove_entity(&mut self, id: u32, rule: Option<Rule>) {
        let Some(entity) = self.entities.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        // Its path stays in `paths`, naming a gone id (resolving it finds nothing), until an
        // entity of that name is created again.
        if let EntityKind::Subscription { topic } = entity.kind {
            if let Ok(t) = self.get_mut(topic) {
                t.subscriptions.retain(|&s| s != id);
            }
        }
        self.emit(
            QueueRef {
                entity: id,
                dlq: false,
            },
            0,
            EventKind::EntityDeleted,
            rule,
        );
        for sub in entity.subscriptions {
            self.remove_entity(sub, rule);
        }
    }

    /// Records activity for IDLE-01/02 and arms the idle timer when it is not armed.
    pub(super) fn touch(&mut self, id: u32) {
        let now = self.now;
        let Ok(e) = self.get_mut(id) else { return };
        e.last_activity = now;
        let limit = e.settings.auto_delete_on_idle;
        let kind = e.kind;
        if limit < MAX_VALUE && e.idle_at.is_none() {
            self.arm_idle_check(id, after(now, limit));
        }
        // IDLE-02: operations on a subscription keep its topic alive.
        if let EntityKind::Subscription { topic } = kind {
            self.touch(topic);
        }
    }

    /// IDLE-01/02/03: deletes the entity if it has been idle for AutoDeleteOnIdle.
    pub(super) fn idle_check(&mut self, id: u32) {
        let now = self.now;
        let Ok(e) = self.get_mut(id) else { return };
        let limit = e.settings.auto_delete_on_idle;
        // IDLE-03: an entity that auto-forwards counts as having a receiver.
        if limit >= MAX_VALUE || e.settings.forward_to.is_some() {
            e.idle_at = None;
            return;
        }
        let deadline = after(e.last_activity, limit);
        // IDLE-02: scheduled messages waiting keep the entity from being idle.
        let has_scheduled = e
            .main
            .messages
            .values()
            .any(|m| m.state == MessageState::Scheduled);
        if deadline > now || has_scheduled {
            let next = if has_scheduled {
                after(now, limit)
            } else {
                deadline
            };
            self.arm_idle_check(id, next);
            return;
        }
        self.remove_entity(id, Some(Rule::Idle01));
    }

    /// One idle check per entity: a new one makes any earlier one stale.
    pub(super) fn arm_idle_check(&mut self, id: u32, at: Instant) {
        let Ok(e) = self.get_mut(id) else { return };
        e.idle_at = Some(at);
        self.push_timer(at, Timer::IdleCheck { entity: id });
    }
}

/// FLT-01: a rule's name has 1 to 50 characters (the service's limit).
fn check_rule_name(name: &str) -> Result<()> {
    let max = crate::limits::MAX_RULE_NAME;
    if name.is_empty() || name.chars().count() > max {
        return Err(BrokerError::new(
            ErrorKind::ArgumentOutOfRange,
            text!("e-rule-name", max = max),
        )
        .on_field("RuleName"));
    }
    Ok(())
}
