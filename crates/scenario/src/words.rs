//! The engine's events in words: the engine logs data (an `EventKind` with its values); this
//! says it in a catalog's language. The CLI words with the English catalog, the browser with the
//! one the reader chose; one text per event either way.
use crate::catalog::Catalog;
use sbp_engine::event::{Event, EventKind, SessionEnd};
use sbp_engine::time::format_instant;
use sbp_engine::{Due, Namespace};

/// A sentence saying what happened and why, in `cat`'s language.
pub fn event_text(cat: &Catalog, ns: &Namespace, e: &Event) -> String {
    let seq = format!("#{}", e.seq);
    let r = |id: u32| ns.receiver_name(id).to_string();
    let one = |key: &str| cat.format(key, &[("seq", &seq)]);
    let with = |key: &str, args: &[(&str, &str)]| {
        let mut all = vec![("seq", seq.as_str())];
        all.extend_from_slice(args);
        cat.format(key, &all)
    };
    // An optional clause: its own text, or nothing.
    let clause = |on: bool, key: &str| {
        if on {
            cat.format(key, &[])
        } else {
            String::new()
        }
    };
    match &e.kind {
        EventKind::EntityCreated => one("ev-created"),
        EventKind::EntityUpdated => one("ev-updated"),
        EventKind::EntityDeleted if e.rule.is_some() => one("ev-deleted-idle"),
        EventKind::EntityDeleted => one("ev-deleted"),
        EventKind::Sent {
            expires_at,
            ttl_capped,
            rule_name,
        } => with(
            "ev-sent",
            &[
                ("capped", &clause(*ttl_capped, "ev-sent-capped")),
                ("expires", &format_instant(*expires_at)),
                (
                    "rule",
                    &rule_name.as_ref().map_or_else(String::new, |name| {
                        cat.format("ev-sent-rule", &[("name", name)])
                    }),
                ),
            ],
        ),
        EventKind::Scheduled {
            scheduled_enqueue_time,
        } => with(
            "ev-scheduled",
            &[("at", &format_instant(*scheduled_enqueue_time))],
        ),
        EventKind::ScheduleCancelled => one("ev-schedule-cancelled"),
        EventKind::Activated { expires_at } => {
            with("ev-activated", &[("expires", &format_instant(*expires_at))])
        }
        EventKind::Peeked {
            receiver,
            delivery_count,
        } => with(
            "ev-peeked",
            &[
                ("receiver", &r(*receiver)),
                ("count", &delivery_count.to_string()),
            ],
        ),
        EventKind::Locked {
            receiver,
            delivery_count,
            locked_until,
            by_sequence_number,
        } => with(
            "ev-locked",
            &[
                ("receiver", &r(*receiver)),
                ("byseq", &clause(*by_sequence_number, "ev-locked-by-seq")),
                ("until", &format_instant(*locked_until)),
                ("count", &delivery_count.to_string()),
                ("again", &clause(*delivery_count > 1, "ev-locked-again")),
            ],
        ),
        EventKind::ReceivedAndDeleted { receiver } => {
            with("ev-received-deleted", &[("receiver", &r(*receiver))])
        }
        EventKind::LostInTransfer { receiver } => {
            with("ev-lost-in-transfer", &[("receiver", &r(*receiver))])
        }
        EventKind::LockRenewed { locked_until, auto } => with(
            if *auto {
                "ev-lock-auto-renewed"
            } else {
                "ev-lock-renewed"
            },
            &[("until", &format_instant(*locked_until))],
        ),
        EventKind::Completed {
            receiver,
            nominally_expired,
        } => with(
            "ev-completed",
            &[
                ("receiver", &r(*receiver)),
                ("late", &clause(*nominally_expired, "ev-completed-late")),
            ],
        ),
        EventKind::Abandoned { receiver } => with("ev-abandoned", &[("receiver", &r(*receiver))]),
        EventKind::Released { receiver } => with("ev-released", &[("receiver", &r(*receiver))]),
        EventKind::Deferred { receiver } => with("ev-deferred", &[("receiver", &r(*receiver))]),
        EventKind::LockLapsed => one("ev-lock-lapsed"),
        EventKind::LockLost { cause } => {
            with("ev-lock-lost", &[("cause", &cat.format(cause.key(), &[]))])
        }
        EventKind::Requeued { failed_deliveries } => {
            with("ev-requeued", &[("failed", &failed_deliveries.to_string())])
        }
        EventKind::DeadLettered {
            reason,
            description,
        } if description.is_empty() => with("ev-dead-lettered", &[("reason", reason)]),
        EventKind::DeadLettered {
            reason,
            description,
        } => with(
            "ev-dead-lettered-described",
            &[("reason", reason), ("description", description)],
        ),
        EventKind::ExpiredDropped => one("ev-expired-dropped"),
        EventKind::DuplicateDropped { message_id } => {
            with("ev-duplicate-dropped", &[("id", message_id)])
        }
        EventKind::Forwarded {
            to,
            new_sequence_number,
        } => with(
            "ev-forwarded",
            &[
                ("to", ns.entity_name(*to)),
                ("newseq", &format!("#{new_sequence_number}")),
            ],
        ),
        EventKind::ReceiverAttached { receiver } => {
            with("ev-receiver-attached", &[("receiver", &r(*receiver))])
        }
        EventKind::SessionLocked {
            receiver,
            session,
            locked_until,
            renewed,
        } => with(
            if *renewed {
                "ev-session-renewed"
            } else {
                "ev-session-accepted"
            },
            &[
                ("receiver", &r(*receiver)),
                ("session", session),
                ("until", &format_instant(*locked_until)),
            ],
        ),
        EventKind::SessionReleased {
            receiver,
            session,
            cause,
        } => with(
            match cause {
                SessionEnd::Lapsed => "ev-session-lapsed",
                SessionEnd::Lost => "ev-session-lost",
                SessionEnd::Closed => "ev-session-closed",
            },
            &[("receiver", &r(*receiver)), ("session", session)],
        ),
        EventKind::SessionStateSet { session } => with("ev-session-state", &[("session", session)]),
        EventKind::ReceiverDetached { receiver } => {
            with("ev-receiver-detached", &[("receiver", &r(*receiver))])
        }
        EventKind::Fault { what } => with("ev-fault", &[("what", &cat.text(what))]),
        EventKind::Actor { what } => cat.text(what),
        EventKind::Rejected { operation, error } => with(
            "ev-rejected",
            &[
                ("operation", &cat.format(&format!("op-{operation}"), &[])),
                ("error", error.name()),
            ],
        ),
    }
}

/// What happens next in `cat`'s language: "step 3: receive from orders", "lock of #1 in orders
/// lapses". (A step's own description is the scenario format's, in English.)
pub fn next_text(cat: &Catalog, next: &crate::Next) -> String {
    let due = match next {
        crate::Next::Step { number, action } => {
            return cat.format(
                "due-step",
                &[
                    ("number", &number.to_string()),
                    ("action", &cat.text(action)),
                ],
            )
        }
        crate::Next::Timer(due) => due,
    };
    let (key, path, seq) = match due {
        Due::Expire { path, seq } => ("due-expire", path, *seq),
        Due::LockLapse { path, seq } => ("due-lapse", path, *seq),
        Due::AutoRenew { path, seq } => ("due-renew", path, *seq),
        Due::Activate { path, seq } => ("due-activate", path, *seq),
        Due::IdleCheck { path } => ("due-idle", path, 0),
        Due::Sweep { path } => ("due-sweep", path, 0),
        Due::SessionLapse { path, session } => {
            return cat.format("due-session-lapse", &[("path", path), ("session", session)])
        }
        Due::Produce { name } => ("due-produce", name, 0),
        Due::ConsumerWake { name } => ("due-wake", name, 0),
        Due::ConsumerDone { name } => ("due-done", name, 0),
    };
    cat.format(
        key,
        &[("path", path), ("name", path), ("seq", &format!("#{seq}"))],
    )
}
