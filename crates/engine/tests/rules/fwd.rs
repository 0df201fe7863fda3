use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn forwarding(to: &str) -> EntitySettings {
    EntitySettings {
        forward_to: Some(to.into()),
        ..settings()
    }
}

#[test]
fn r_fwd_01_targets_are_other_queues_or_topics_of_the_namespace() {
    let mut ns = ns();
    queue(&mut ns, "orders", settings());
    ns.create_topic("events", settings()).unwrap();
    ns.create_subscription("events", "audit", settings(), SubscriptionRule::MatchAll)
        .unwrap();
    let refused = [
        ("events/subscriptions/audit", ErrorKind::InvalidOperation),
        ("orders/$deadletterqueue", ErrorKind::InvalidOperation),
        ("nowhere", ErrorKind::MessagingEntityNotFound),
    ];
    for (target, kind) in refused {
        let err = ns.create_queue("src", forwarding(target)).unwrap_err();
        assert_eq!(err.kind, kind, "{target}: {err}");
        assert!(err.message.to_string().contains("FWD-01"), "{err}");
    }
    // The entity itself, names compared ignoring case.
    let err = ns
        .update_entity("orders", forwarding("ORDERS"))
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    // A topic does not forward; its subscriptions do.
    assert!(ns.update_entity("events", forwarding("orders")).is_err());
    ns.create_queue("src", forwarding("events")).unwrap();
    ns.update_entity("events/subscriptions/audit", forwarding("orders"))
        .unwrap();
    // Not on Basic.
    let mut basic = Namespace::builder().tier(Tier::Basic).build();
    basic.create_queue("a", settings_basic()).unwrap();
    let err = basic
        .create_queue(
            "b",
            EntitySettings {
                forward_to: Some("a".into()),
                ..settings_basic()
            },
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotSupported);
}

fn settings_basic() -> EntitySettings {
    EntitySettings::defaults(Tier::Basic)
}

#[test]
fn r_fwd_01_a_forwarded_message_gets_the_targets_sequence_number_and_starts_afresh() {
    let mut ns = ns();
    queue(&mut ns, "target", settings());
    ns.send("target", msg("first", None)).unwrap();
    queue(&mut ns, "src", forwarding("target"));
    ns.send("src", msg("a", Some(HOUR))).unwrap();
    assert_eq!(counts(&ns, "src").active, 0);
    let m = ns.message("target", 2, Perspective::Peek).unwrap();
    assert_eq!(m.message_id, "a");
    assert_eq!(m.delivery_count, 0);
    assert_eq!(m.expires_at, HOUR, "its own TTL, from the new enqueue");
    assert!(ns.log().iter().any(|e| e.rule == Some(Rule::Fwd01)));
}

#[test]
fn r_fwd_01_a_forwarding_source_cannot_be_received_from() {
    let mut ns = ns();
    queue(&mut ns, "target", settings());
    queue(
        &mut ns,
        "src",
        EntitySettings {
            forward_dead_lettered_messages_to: Some("target".into()),
            ..forwarding("target")
        },
    );
    let log = ns.log().len();
    for from in ["src", "src/$deadletterqueue"] {
        let err = ns
            .receive(R, from, ReceiveMode::PeekLock, 1, ReceiveOptions::default())
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidOperation, "{from}");
        assert!(err.message.to_string().contains("FWD-01"));
    }
    assert!(ns.start_consumers(ConsumerSpec::new("c", "src")).is_err());
    assert_eq!(ns.log().len(), log, "nothing happened");
    assert!(ns.receivers().is_empty(), "no receiver was registered");
}

#[test]
fn r_fwd_02_a_chain_stops_at_four_hops_with_max_transfer_hop_count_exceeded() {
    let mut ns = ns();
    queue(&mut ns, "q5", settings());
    for (name, to) in [
        ("q4", "q5"),
        ("q3", "q4"),
        ("q2", "q3"),
        ("q1", "q2"),
        ("q0", "q1"),
    ] {
        queue(&mut ns, name, forwarding(to));
    }
    // q0 -> q1 -> q2 -> q3 -> q4 are four hops; q4 would take a fifth, to q5.
    ns.send("q0", msg("a", None)).unwrap();
    assert_eq!(counts(&ns, "q5").active, 0);
    let e = ns.entity("q4").unwrap();
    assert_eq!(e.dlq.len(), 1);
    assert_dead_lettered(&ns, "q4", 1, "MaxTransferHopCountExceeded");
    assert!(ns.log().iter().any(|e| e.rule == Some(Rule::Fwd02)));
    // Three hops arrive.
    ns.send("q1", msg("b", None)).unwrap();
    assert_eq!(counts(&ns, "q5").active, 1);
}

#[test]
fn r_fwd_02_one_message_may_not_become_more_copies_than_the_playground_allows() {
    let mut ns = ns();
    ns.create_topic("t", settings()).unwrap();
    // 100 subscriptions, each forwarding back to the topic: 100^4 copies at the hop limit.
    ns.create_subscription("t", "s0", settings(), SubscriptionRule::MatchAll)
        .unwrap();
    let mut refused = None;
    for i in 1..100 {
        let name = format!("s{i}");
        if let Err(e) =
            ns.create_subscription("t", &name, forwarding("t"), SubscriptionRule::MatchAll)
        {
            refused = Some((i, e));
            break;
        }
    }
    let (at, err) = refused.expect("the fan-out limit is reached");
    assert!(at < 100);
    assert_eq!(err.kind, ErrorKind::ArgumentOutOfRange);
    assert!(err.message.to_string().contains("10000"), "{err}");
    ns.send("t", msg("a", None)).unwrap();
    assert!(ns.stored_messages() <= sbp_engine::limits::MAX_COPIES_PER_MESSAGE);
}

#[test]
fn r_fwd_03_dead_letters_go_to_forward_dead_lettered_messages_to() {
    let mut ns = ns();
    queue(&mut ns, "target", settings());
    queue(&mut ns, "dead", settings());
    queue(
        &mut ns,
        "src",
        EntitySettings {
            forward_to: Some("target".into()),
            ..settings()
        },
    );
    queue(
        &mut ns,
        "dl",
        EntitySettings {
            max_delivery_count: 1,
            forward_dead_lettered_messages_to: Some("dead".into()),
            ..settings()
        },
    );
    ns.send("src", msg("a", None)).unwrap();
    assert_eq!(counts(&ns, "target").active, 1);
    assert_eq!(counts(&ns, "src").active, 0);
    ns.send("dl", msg("b", Some(HOUR))).unwrap();
    recv(&mut ns, "dl", 1);
    settle(&mut ns, "dl", 1, Settlement::Abandon).unwrap();
    let m = ns.message("dead", 1, Perspective::Peek).unwrap();
    assert_eq!(m.dead_letter_source.as_deref(), Some("dl"));
    assert_eq!(
        m.expires_at,
        sbp_engine::time::NEVER,
        "a forwarded dead-letter takes the target's default TTL"
    );
    assert_eq!(
        m.dead_letter_reason.as_deref(),
        Some("MaxDeliveryCountExceeded")
    );
}

#[test]
fn r_fwd_01_a_forwarding_source_is_not_peeked_either() {
    let mut ns = ns();
    queue(&mut ns, "target", settings());
    queue(&mut ns, "src", forwarding("target"));
    ns.send("src", msg("a", None)).unwrap();
    let before = ns.snapshot(usize::MAX);
    let err = ns.peek(R, "src", None, 1).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    assert!(err.to_string().contains("FWD-01"), "{err}");
    assert!(
        ns.same_state_except_log(&before),
        "a refused peek changes nothing"
    );
    assert_eq!(ns.peek(R, "target", None, 1).unwrap().len(), 1);
}

#[test]
fn r_fwd_01_a_session_entity_does_not_auto_forward() {
    // "Autoforwarding isn't supported for session-enabled queues or subscriptions."
    let mut ns = ns();
    queue(&mut ns, "target", settings());
    let err = ns
        .create_queue(
            "sessions",
            EntitySettings {
                requires_session: true,
                ..forwarding("target")
            },
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotSupported);
    assert_eq!(err.field.as_deref(), Some("ForwardTo"));
    assert!(ns.entity("sessions").is_none());
    let session_queue = EntitySettings {
        requires_session: true,
        ..settings()
    };
    queue(&mut ns, "s", session_queue.clone());
    let err = ns
        .update_entity(
            "s",
            EntitySettings {
                forward_to: Some("target".into()),
                ..session_queue
            },
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotSupported);
    assert_eq!(ns.entity("s").unwrap().settings.forward_to, None);
}

#[test]
fn r_fwd_01_a_forwarded_message_keeps_its_enqueued_sequence_number() {
    // ServiceBusReceivedMessage.EnqueuedSequenceNumber: "For messages that have been
    // auto-forwarded, this property reflects the sequence number that had first been assigned
    // to the message at its original point of submission."
    let mut ns = ns();
    queue(&mut ns, "target", settings());
    for id in ["x", "y"] {
        ns.send("target", msg(id, None)).unwrap();
    }
    queue(&mut ns, "src", forwarding("target"));
    ns.send("src", msg("a", None)).unwrap();
    let m = ns.message("target", 3, Perspective::Receive).unwrap();
    assert_eq!(m.message_id, "a");
    assert_eq!((m.sequence_number, m.enqueued_sequence_number), (3, 1));
    // A message sent there directly shows its own number.
    let direct = ns.message("target", 2, Perspective::Receive).unwrap();
    assert_eq!(direct.enqueued_sequence_number, 2);
}
