use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn sessionful() -> EntitySettings {
    EntitySettings {
        requires_session: true,
        ..settings()
    }
}

/// A message of session `session`.
fn in_session(id: &str, session: &str) -> NewMessage {
    let mut m = msg(id, None);
    m.system_properties
        .insert("SessionId".into(), session.to_string());
    m
}

fn accept(
    ns: &mut Namespace,
    receiver: &str,
    from: &str,
    id: Option<&str>,
) -> Result<SessionView, BrokerError> {
    ns.session(
        receiver,
        from,
        SessionOp::Accept {
            session_id: id.map(String::from),
        },
    )
}

fn recv_as(
    ns: &mut Namespace,
    receiver: &str,
    from: &str,
    count: u32,
) -> Result<Vec<u64>, BrokerError> {
    ns.receive(
        receiver,
        from,
        ReceiveMode::PeekLock,
        count,
        ReceiveOptions::default(),
    )
    .map(|ms| ms.iter().map(|m| m.sequence_number).collect())
}

#[test]
fn r_ses_01_chosen_at_creation_and_every_message_needs_a_session_id() {
    let mut ns = ns();
    queue(&mut ns, "q", sessionful());
    queue(&mut ns, "plain", settings());
    // Turning it on or off later is refused.
    for (path, s) in [("q", settings()), ("plain", sessionful())] {
        let err = ns.update_entity(path, s).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidOperation);
        assert_eq!(err.field.as_deref(), Some("RequiresSession"));
    }
    // A topic has none; its subscriptions may.
    let err = ns.create_topic("t", sessionful()).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("RequiresSession"));
    ns.create_topic("t", settings()).unwrap();
    ns.create_subscription("t", "s", sessionful(), SubscriptionRule::MatchAll)
        .unwrap();
    ns.create_subscription("t", "all", settings(), SubscriptionRule::MatchAll)
        .unwrap();
    // A send to a session queue without a SessionId fails and changes nothing but the log.
    let before = ns.clone();
    let err = ns.send("q", msg("a", None)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    assert!(err.to_string().contains("SES-01"), "{err}");
    assert!(ns.same_state_except_log(&before));
    assert_eq!(ns.send("q", in_session("a", "s1")).unwrap(), 1);
    // A topic takes it; the session subscription's copy without one is dead-lettered there.
    ns.send("t", msg("b", None)).unwrap();
    let sub = "t/subscriptions/s";
    assert_eq!(counts(&ns, sub).active, 0);
    let dl = ns
        .message(&format!("{sub}/$deadletterqueue"), 1, Perspective::Peek)
        .expect("dead-lettered");
    assert_eq!(
        dl.dead_letter_reason.as_deref(),
        Some("Session id is null.")
    );
    assert_eq!(counts(&ns, "t/subscriptions/all").active, 1);
    let event = ns
        .log()
        .iter()
        .find(|e| matches!(e.kind, EventKind::DeadLettered { .. }))
        .unwrap();
    assert_eq!(event.rule, Some(Rule::Ses01));
}

#[test]
fn r_ses_02_a_receiver_accepts_a_session_and_holds_its_lock_alone() {
    let mut ns = ns();
    queue(&mut ns, "q", sessionful());
    ns.send("q", in_session("a1", "a")).unwrap();
    ns.send("q", in_session("b1", "b")).unwrap();
    // No receive without a session.
    let err = recv_as(&mut ns, "r1", "q", 1).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    ns.advance_to(SECOND);
    // The next available session is the one with the first available message.
    let a = accept(&mut ns, "r1", "q", None).unwrap();
    assert_eq!(a.session_id, "a");
    assert_eq!(a.locked_until, SECOND + 30 * SECOND);
    // While r1 holds it nobody else can accept it; the next one is b.
    let err = accept(&mut ns, "r2", "q", Some("a")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::SessionCannotBeLocked);
    assert_eq!(accept(&mut ns, "r2", "q", None).unwrap().session_id, "b");
    let err = accept(&mut ns, "r3", "q", None).unwrap_err();
    assert_eq!(err.kind, ErrorKind::ServiceTimeout);
    assert!(err.is_transient);
    // A receiver holds one session per entity.
    let err = accept(&mut ns, "r1", "q", Some("c")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    // Its messages are locked as long as the session; renewing moves both.
    let got = ns
        .receive(
            "r1",
            "q",
            ReceiveMode::PeekLock,
            1,
            ReceiveOptions::default(),
        )
        .unwrap();
    assert_eq!(got[0].locked_until, Some(31 * SECOND));
    ns.advance_to(20 * SECOND);
    let renewed = ns.session("r1", "q", SessionOp::RenewLock).unwrap();
    assert_eq!(renewed.locked_until, 50 * SECOND);
    let m = ns.message("q", 1, Perspective::Receive).unwrap();
    assert_eq!(m.locked_until, Some(50 * SECOND));
    // A session message's own lock cannot be renewed: the session's is.
    let err = ns.settle("r1", "q", 1, Settlement::RenewLock).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    // Past the first LockedUntil nothing lapsed.
    ns.advance_to(40 * SECOND);
    ns.settle("r1", "q", 1, Settlement::Complete).unwrap();
    // A named session with no messages yet can be accepted (and waited on).
    assert_eq!(
        accept(&mut ns, "r3", "q", Some("later"))
            .unwrap()
            .session_id,
        "later"
    );
    let accepted = ns
        .log()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::SessionLocked { .. }))
        .count();
    assert_eq!(accepted, 4);
}

#[test]
fn r_ses_03_a_session_is_delivered_in_order_only_to_its_holder() {
    let mut ns = ns();
    queue(&mut ns, "q", sessionful());
    for (id, session) in [
        ("a1", "a"),
        ("b1", "b"),
        ("a2", "a"),
        ("b2", "b"),
        ("a3", "a"),
    ] {
        ns.send("q", in_session(id, session)).unwrap();
    }
    accept(&mut ns, "r1", "q", Some("a")).unwrap();
    accept(&mut ns, "r2", "q", Some("b")).unwrap();
    // Each holder gets its own session's messages, in SequenceNumber order.
    assert_eq!(recv_as(&mut ns, "r1", "q", 10).unwrap(), vec![1, 3, 5]);
    assert_eq!(recv_as(&mut ns, "r2", "q", 1).unwrap(), vec![2]);
    // Abandoned, #2 comes back to its session's holder first, before #4.
    ns.settle("r2", "q", 2, Settlement::Abandon).unwrap();
    assert_eq!(recv_as(&mut ns, "r2", "q", 10).unwrap(), vec![2, 4]);
    // Nobody else can settle another holder's message.
    let err = ns.settle("r2", "q", 1, Settlement::Complete).unwrap_err();
    assert!(matches!(
        err.kind,
        ErrorKind::InvalidOperation | ErrorKind::SessionLockLost
    ));
    // Deferred messages come back by number to the holder of their session only.
    ns.settle("r1", "q", 3, Settlement::Defer).unwrap();
    let err = ns.receive_deferred("r2", "q", &[3]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::MessageNotFound);
    assert_eq!(ns.receive_deferred("r1", "q", &[3]).unwrap().len(), 1);
}

#[test]
fn r_ses_04_a_lapse_counts_a_failed_delivery_closing_does_not() {
    let mut ns = ns();
    queue(&mut ns, "q", sessionful());
    ns.send("q", in_session("a1", "a")).unwrap();
    ns.send("q", in_session("a2", "a")).unwrap();
    accept(&mut ns, "r1", "q", Some("a")).unwrap();
    assert_eq!(recv_as(&mut ns, "r1", "q", 1).unwrap(), vec![1]);
    // The session lock lapses at 30 s: released, and #1 counts a failed delivery.
    ns.advance_to(30 * SECOND);
    assert!(ns.log().iter().any(|e| matches!(
        e.kind,
        EventKind::SessionReleased {
            cause: SessionEnd::Lapsed,
            ..
        }
    ) && e.rule == Some(Rule::Ses04)));
    let m = ns.message("q", 1, Perspective::Peek).unwrap();
    assert_eq!(m.delivery_count, 1);
    let m = ns.message("q", 1, Perspective::Receive).unwrap();
    assert_eq!(m.locked_until, None);
    // The holder's settlement fails with SessionLockLost, and so does its renewal.
    let err = ns.settle("r1", "q", 1, Settlement::Complete).unwrap_err();
    assert_eq!(err.kind, ErrorKind::SessionLockLost);
    let err = ns.session("r1", "q", SessionOp::RenewLock).unwrap_err();
    assert_eq!(err.kind, ErrorKind::SessionLockLost);
    // Another receiver takes the session over; closing it brings #1 and #2 back uncounted.
    accept(&mut ns, "r2", "q", None).unwrap();
    assert_eq!(recv_as(&mut ns, "r2", "q", 2).unwrap(), vec![1, 2]);
    ns.session("r2", "q", SessionOp::Close).unwrap();
    let one = ns.message("q", 1, Perspective::Peek).unwrap();
    let two = ns.message("q", 2, Perspective::Peek).unwrap();
    assert_eq!((one.delivery_count, two.delivery_count), (1, 0));
    let err = ns.settle("r2", "q", 2, Settlement::Complete).unwrap_err();
    assert_eq!(err.kind, ErrorKind::SessionLockLost);
    // The session is free again at once.
    assert_eq!(accept(&mut ns, "r1", "q", None).unwrap().session_id, "a");
    // A fault loses session locks too (RCV-10).
    recv_as(&mut ns, "r1", "q", 1).unwrap();
    ns.fault(Fault::ServiceUpdate).unwrap();
    assert!(recv_as(&mut ns, "r1", "q", 1).is_err());
    assert_eq!(
        ns.message("q", 1, Perspective::Peek)
            .unwrap()
            .delivery_count,
        2
    );
}

#[test]
fn r_ses_04_at_max_delivery_count_a_lapsed_session_message_is_dead_lettered() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            max_delivery_count: 2,
            ..sessionful()
        },
    );
    ns.send("q", in_session("a1", "a")).unwrap();
    for round in 0..2 {
        accept(&mut ns, "r1", "q", Some("a")).unwrap();
        assert_eq!(
            recv_as(&mut ns, "r1", "q", 1).unwrap(),
            vec![1],
            "round {round}"
        );
        ns.advance_to(ns.now() + 30 * SECOND);
    }
    let dl = ns
        .message("q/$deadletterqueue", 1, Perspective::Peek)
        .expect("dead-lettered");
    assert_eq!(
        dl.dead_letter_reason.as_deref(),
        Some("MaxDeliveryCountExceeded")
    );
}

#[test]
fn r_ses_05_session_state_is_kept_by_the_session_not_the_holder() {
    let mut ns = ns();
    queue(&mut ns, "q", sessionful());
    ns.send("q", in_session("a1", "a")).unwrap();
    accept(&mut ns, "r1", "q", Some("a")).unwrap();
    assert_eq!(
        ns.session("r1", "q", SessionOp::GetState).unwrap().state,
        None
    );
    ns.session(
        "r1",
        "q",
        SessionOp::SetState {
            state: Some("step 2".into()),
        },
    )
    .unwrap();
    // Too large a state is refused, naming the limit, and changes nothing (not even the
    // entity's last activity, a second later).
    ns.advance_to(SECOND);
    let before = ns.clone();
    let err = ns
        .session(
            "r1",
            "q",
            SessionOp::SetState {
                state: Some("x".repeat(limits::MAX_SESSION_STATE + 1).into()),
            },
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ArgumentOutOfRange);
    assert!(err.to_string().contains("262144"), "{err}");
    assert!(ns.same_state_except_log(&before));
    // Up to one Standard message: 200 KB is taken. The state is bytes, kept as they are (the
    // SDKs set any bytes: not text here).
    let bytes = sbp_engine::Body::data(vec![0xff, 0, b's', 0xfe]);
    for state in ["x".repeat(200 * 1024).into(), bytes.clone()] {
        ns.session("r1", "q", SessionOp::SetState { state: Some(state) })
            .unwrap();
    }
    // Only the holder gets or sets it.
    let err = ns.session("r2", "q", SessionOp::GetState).unwrap_err();
    assert_eq!(err.kind, ErrorKind::SessionLockLost);
    ns.session("r1", "q", SessionOp::Close).unwrap();
    // The next holder finds it.
    let view = accept(&mut ns, "r2", "q", None).unwrap();
    assert_eq!(view.state, Some(bytes));
    assert!(ns.log().iter().any(
        |e| matches!(e.kind, EventKind::SessionStateSet { .. }) && e.rule == Some(Rule::Ses05)
    ));
}

/// The .NET SDK's `SessionReceiverLiveTests.RoundRobinSessions`: a session receiver peeking
/// from the first SequenceNumber sees its own session's messages only.
#[test]
fn r_ses_03_a_session_receiver_peeks_its_own_sessions_messages_only() {
    let mut ns = ns();
    ns.create_queue("q", sessionful()).unwrap();
    for (id, session) in [("a1", "a"), ("b1", "b"), ("a2", "a"), ("c1", "c")] {
        ns.send("q", in_session(id, session)).unwrap();
    }
    accept(&mut ns, "rb", "q", Some("b")).unwrap();
    let peeked: Vec<String> = ns
        .peek("rb", "q", Some(1), 10)
        .unwrap()
        .into_iter()
        .map(|v| v.message_id)
        .collect();
    assert_eq!(peeked, ["b1"]);
    accept(&mut ns, "ra", "q", Some("a")).unwrap();
    let a: Vec<String> = ns
        .peek("ra", "q", Some(1), 1)
        .unwrap()
        .into_iter()
        .chain(ns.peek("ra", "q", None, 5).unwrap())
        .map(|v| v.message_id)
        .collect();
    assert_eq!(a, ["a1", "a2"], "the cursor moves within the session");
}
