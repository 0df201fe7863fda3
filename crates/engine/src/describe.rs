//! One-line explanations of events ("why is this message here?") and warnings.
use crate::event::{Event, EventKind};
use crate::namespace::{queue_path, Namespace};
use crate::time::{format_duration, format_instant, Duration, SECOND};

/// TTL-14: below this a TTL may expire messages before any receiver sees them.
pub const SHORT_TTL: Duration = 10 * SECOND;

/// TTL-14: a warning for a very short TTL, or None.
pub fn short_ttl_warning(ttl: Duration) -> Option<String> {
    (ttl < SHORT_TTL).then(|| {
        format!(
            "A TTL of {} is very short: the message may expire before any receiver sees it (TTL-14).",
            format_duration(ttl)
        )
    })
}

impl Namespace {
    /// The path an event is about ("orders/$deadletterqueue"), or "namespace".
    pub fn event_path(&self, e: &Event) -> String {
        if e.entity == u32::MAX {
            "namespace".into()
        } else {
            queue_path(self.entity_name(e.entity), e.dlq)
        }
    }

    /// A sentence saying what happened and why.
    pub fn describe(&self, e: &Event) -> String {
        let r = |id: u32| self.receiver_name(id).to_string();
        let msg = format!("#{}", e.seq);
        match &e.kind {
            EventKind::EntityCreated => "created".into(),
            EventKind::EntityUpdated => "settings updated; every lock on it is lost".into(),
            EventKind::EntityDeleted => match e.rule {
                Some(_) => "deleted with all its messages after being idle for AutoDeleteOnIdle".into(),
                None => "deleted".into(),
            },
            EventKind::Sent { expires_at, ttl_capped } => {
                let cap = if *ttl_capped { ", its TTL capped by the entity's DefaultMessageTimeToLive" } else { "" };
                format!("{msg} enqueued{cap}; ExpiresAt {}", format_instant(*expires_at))
            }
            EventKind::Scheduled { scheduled_enqueue_time } => {
                format!("{msg} scheduled for {}", format_instant(*scheduled_enqueue_time))
            }
            EventKind::ScheduleCancelled => format!("{msg}: schedule cancelled"),
            EventKind::Activated { expires_at } => {
                format!("{msg} enqueued at its scheduled time; ExpiresAt {}", format_instant(*expires_at))
            }
            EventKind::Peeked { receiver, delivery_count } => {
                format!("{msg} peeked by {} (DeliveryCount {delivery_count}, no lock)", r(*receiver))
            }
            EventKind::Locked { receiver, delivery_count, locked_until, by_sequence_number } => format!(
                "{msg} locked by {}{} until {} (DeliveryCount {delivery_count}{})",
                r(*receiver),
                if *by_sequence_number { " by sequence number" } else { "" },
                format_instant(*locked_until),
                if *delivery_count > 1 { ", a redelivery" } else { "" }
            ),
            EventKind::ReceivedAndDeleted { receiver } => {
                format!("{msg} received and deleted by {}", r(*receiver))
            }
            EventKind::LostInTransfer { receiver } => format!(
                "{msg} was deleted on receive but the transfer to {} failed: the message is lost",
                r(*receiver)
            ),
            EventKind::LockRenewed { locked_until, auto } => format!(
                "{msg}: lock {}renewed until {}",
                if *auto { "auto-" } else { "" },
                format_instant(*locked_until)
            ),
            EventKind::Completed { receiver, nominally_expired } => format!(
                "{msg} completed by {}{}",
                r(*receiver),
                if *nominally_expired { " after its nominal expiry: success, not dead-lettered" } else { "" }
            ),
            EventKind::Abandoned { receiver } => format!("{msg} abandoned by {}", r(*receiver)),
            EventKind::Deferred { receiver } => {
                format!("{msg} deferred by {}: only receivable by sequence number", r(*receiver))
            }
            EventKind::LockLapsed => format!("{msg}: lock lapsed without settlement"),
            EventKind::LockLost { cause } => format!("{msg}: lock lost through {}", cause.text()),
            EventKind::Requeued { failed_deliveries } => format!(
                "{msg} back at its place in the queue ({failed_deliveries} failed deliveries so far)"
            ),
            EventKind::DeadLettered { reason, description } => {
                if description.is_empty() {
                    format!("{msg} dead-lettered: {reason}")
                } else {
                    format!("{msg} dead-lettered: {reason} ({description})")
                }
            }
            EventKind::ExpiredDropped => {
                format!("{msg} expired and was dropped (DeadLetteringOnMessageExpiration is off)")
            }
            EventKind::Forwarded { to, new_sequence_number } => format!(
                "{msg} auto-forwarded to {} as #{new_sequence_number}",
                self.entity_name(*to)
            ),
            EventKind::ReceiverAttached { receiver } => format!("{} starts receiving", r(*receiver)),
            EventKind::ReceiverDetached { receiver } => format!("{} stops receiving", r(*receiver)),
            EventKind::Fault { what } => format!("fault: {what}"),
            EventKind::Actor { what } => what.to_string(),
            EventKind::Rejected { operation, error } => format!("{operation} failed: {}", error.name()),
        }
    }
}
