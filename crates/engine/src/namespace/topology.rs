//! FWD-01: which forward targets are valid, and the playground's bound on how many copies one
//! message can become through fan-out (TOP-01) and forwarding chains (FWD-02).
use super::*;

use crate::limits::MAX_COPIES_PER_MESSAGE;

/// The entity a settings change is for, before it exists or as it is.
#[derive(Clone, Copy)]
pub(super) enum Change {
    NewQueue,
    NewTopic,
    NewSubscription { topic: u32 },
    Update(u32),
}

/// The id standing for an entity not created yet.
const NEW: u32 = u32::MAX;

/// Who forwards to whom and which subscriptions each topic has, with a change applied; by
/// entity id (ids are dense), the entity being created last ([`NEW`]).
struct Topology {
    forward: Vec<Option<u32>>,
    dlq_forward: Vec<Option<u32>>,
    subscriptions: Vec<Option<Vec<u32>>>,
}

impl Topology {
    fn new(ids: usize) -> Topology {
        Topology {
            forward: vec![None; ids + 1],
            dlq_forward: vec![None; ids + 1],
            subscriptions: vec![None; ids + 1],
        }
    }

    /// Where `id`'s entries are.
    fn slot(&self, id: u32) -> usize {
        if id == NEW {
            self.forward.len() - 1
        } else {
            id as usize
        }
    }

    /// How many copies a message arriving at `id` after `hops` forwards ends as (at most).
    fn copies(&self, id: u32, hops: u8, memo: &mut [Option<u64>]) -> u64 {
        let i = self.slot(id);
        let key = i * (usize::from(MAX_FORWARD_HOPS) + 1) + usize::from(hops);
        if let Some(known) = memo[key] {
            return known;
        }
        let n = if let Some(subs) = &self.subscriptions[i] {
            subs.iter().fold(0u64, |sum, &s| {
                sum.saturating_add(self.copies(s, hops, memo))
            })
        } else {
            match self.forward[i] {
                Some(target) if hops < MAX_FORWARD_HOPS => self.copies(target, hops + 1, memo),
                _ => 1,
            }
        };
        memo[key] = Some(n);
        n
    }

    /// The worst case over every entity and every dead-letter forward.
    fn worst(&self, ids: impl Iterator<Item = u32>) -> u64 {
        let mut memo = vec![None; self.forward.len() * (usize::from(MAX_FORWARD_HOPS) + 1)];
        let mut worst = 0;
        for id in ids {
            worst = worst.max(self.copies(id, 0, &mut memo));
        }
        for &target in self.dlq_forward.iter().flatten() {
            worst = worst.max(self.copies(target, 1, &mut memo));
        }
        worst
    }
}

impl Namespace {
    /// FWD-01: ForwardTo and ForwardDeadLetteredMessagesTo name an existing queue or topic of
    /// this namespace, not a subscription, a dead-letter queue or the entity itself, and not on
    /// Basic. And no message may become more than [`MAX_COPIES_PER_MESSAGE`] copies.
    pub(super) fn check_forwarding(
        &self,
        path: &str,
        settings: &EntitySettings,
        change: Change,
    ) -> Result<()> {
        let targets = [
            ("ForwardTo", &settings.forward_to),
            (
                "ForwardDeadLetteredMessagesTo",
                &settings.forward_dead_lettered_messages_to,
            ),
        ];
        let is_topic = match change {
            Change::Update(id) => self.get(id)?.kind == EntityKind::Topic,
            Change::NewTopic => true,
            Change::NewQueue | Change::NewSubscription { .. } => false,
        };
        if is_topic && targets.iter().any(|(_, t)| t.is_some()) {
            return Err(BrokerError::new(
                ErrorKind::InvalidOperation,
                text!("e-forward-topic", path = path),
            ));
        }
        let mut resolved = [None, None];
        for (i, (setting, target)) in targets.into_iter().enumerate() {
            let Some(target) = target else { continue };
            let invalid = |why: crate::text::Text| {
                Err(BrokerError::new(
                    ErrorKind::InvalidOperation,
                    text!("e-forward", setting = setting, target = target, why = why),
                )
                .on_field(setting))
            };
            if !self.tier.has_topics() {
                return Err(BrokerError::new(
                    ErrorKind::NotSupported,
                    text!("e-forward-basic", setting = setting),
                ));
            }
            if target.trim().trim_matches('/').eq_ignore_ascii_case(path) {
                return invalid(text!("e-forward-itself"));
            }
            let q = self.resolve(target).map_err(|_| {
                BrokerError::new(
                    ErrorKind::MessagingEntityNotFound,
                    text!("e-forward-missing", setting = setting, target = target),
                )
                .on_field(setting)
            })?;
            if q.dlq {
                return invalid(text!("e-forward-dlq"));
            }
            if matches!(self.get(q.entity)?.kind, EntityKind::Subscription { .. }) {
                return invalid(text!("e-forward-subscription"));
            }
            resolved[i] = Some(q.entity);
        }
        let copies = self.worst_copies(change, resolved);
        if copies > MAX_COPIES_PER_MESSAGE {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                text!("e-copies", copies = copies, max = MAX_COPIES_PER_MESSAGE),
            ));
        }
        Ok(())
    }

    /// The most copies one message can become, with `change` given the forward targets `to`.
    fn worst_copies(&self, change: Change, to: [Option<u32>; 2]) -> u64 {
        let mut t = Topology::new(self.entities.len());
        for e in self.entities.iter().flatten() {
            let target = |f: &Option<String>| {
                f.as_deref()
                    .and_then(|p| self.resolve(p).ok())
                    .filter(|q| !q.dlq)
                    .map(|q| q.entity)
            };
            let i = e.id as usize;
            t.forward[i] = target(&e.settings.forward_to);
            t.dlq_forward[i] = target(&e.settings.forward_dead_lettered_messages_to);
            if e.kind == EntityKind::Topic {
                t.subscriptions[i] = Some(e.subscriptions.clone());
            }
        }
        let id = match change {
            Change::NewQueue | Change::NewTopic => NEW,
            Change::NewSubscription { topic } => {
                t.subscriptions[topic as usize]
                    .get_or_insert_with(Vec::new)
                    .push(NEW);
                NEW
            }
            Change::Update(id) => id,
        };
        let i = t.slot(id);
        t.forward[i] = to[0];
        t.dlq_forward[i] = to[1];
        let ids = self.entities.iter().flatten().map(|e| e.id).chain([NEW]);
        t.worst(ids)
    }
}
