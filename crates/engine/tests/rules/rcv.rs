use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn r_rcv_01_receive_and_delete_settles_on_transfer_and_cannot_be_settled() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    ns.send("q", msg("b", None)).unwrap();
    let got = ns
        .receive(
            R,
            "q",
            ReceiveMode::ReceiveAndDelete,
            1,
            ReceiveOptions::default(),
        )
        .unwrap();
    assert_eq!(got[0].message_id, "a");
    assert!(!ns.entity("q").unwrap().main.messages.contains_key(&1));
    let err = settle(&mut ns, "q", 1, Settlement::Complete).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    let lost = ns
        .receive(
            R,
            "q",
            ReceiveMode::ReceiveAndDelete,
            1,
            ReceiveOptions {
                transfer_fails: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(lost.is_empty());
    assert_eq!(counts(&ns, "q").active, 0, "the failed transfer lost b");
    assert!(kinds(&ns, 2).contains(&"LostInTransfer"));
}

#[test]
fn r_rcv_02_peek_lock_is_exclusive_with_locked_until_and_a_token() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    ns.send("q", msg("b", None)).unwrap();
    ns.advance_to(SECOND);
    let first = ns
        .receive(
            "one",
            "q",
            ReceiveMode::PeekLock,
            1,
            ReceiveOptions::default(),
        )
        .unwrap();
    let second = ns
        .receive(
            "two",
            "q",
            ReceiveMode::PeekLock,
            1,
            ReceiveOptions::default(),
        )
        .unwrap();
    assert_eq!(first[0].message_id, "a");
    assert_eq!(
        second[0].message_id, "b",
        "a competing receiver gets the next unlocked message"
    );
    assert_eq!(first[0].locked_until, Some(31 * SECOND));
    assert_ne!(first[0].lock_token, second[0].lock_token);
    assert!(ns
        .receive(
            "three",
            "q",
            ReceiveMode::PeekLock,
            1,
            ReceiveOptions::default()
        )
        .unwrap()
        .is_empty());
}

#[test]
fn r_rcv_03_lock_duration_default_and_limits() {
    assert_eq!(settings().lock_duration, 30 * SECOND);
    let mut ns = ns();
    for bad in [4 * SECOND, 6 * MINUTE] {
        let err = ns
            .create_queue(
                "q",
                EntitySettings {
                    lock_duration: bad,
                    ..settings()
                },
            )
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::ArgumentOutOfRange);
        assert!(err.message.to_string().contains("5s..5m"));
    }
    queue(
        &mut ns,
        "q",
        EntitySettings {
            lock_duration: 5 * SECOND,
            ..settings()
        },
    );
    ns.send("q", msg("a", None)).unwrap();
    assert_eq!(recv(&mut ns, "q", 1)[0].locked_until, Some(5 * SECOND));
}

#[test]
fn r_rcv_04_renew_and_auto_renew_extend_the_lock_without_counting() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    recv(&mut ns, "q", 1);
    ns.advance_to(20 * SECOND);
    settle(&mut ns, "q", 1, Settlement::RenewLock).unwrap();
    ns.advance_to(45 * SECOND);
    let m = ns.message("q", 1, Perspective::Receive).unwrap();
    assert_eq!(m.locked_until, Some(50 * SECOND));
    assert_eq!(m.delivery_count, 1);
    // Auto renewal up to 2 minutes.
    ns.send("q", msg("b", None)).unwrap();
    ns.receive(
        "auto",
        "q",
        ReceiveMode::PeekLock,
        1,
        ReceiveOptions {
            max_auto_lock_renewal: Some(2 * MINUTE),
            ..Default::default()
        },
    )
    .unwrap();
    ns.advance_to(45 * SECOND + 2 * MINUTE - SECOND);
    assert!(
        ns.message("q", 2, Perspective::Receive)
            .unwrap()
            .locked_until
            .is_some(),
        "still locked by renewals"
    );
    ns.advance_to(45 * SECOND + 3 * MINUTE);
    assert!(
        ns.message("q", 2, Perspective::Receive)
            .unwrap()
            .locked_until
            .is_none(),
        "renewal stopped at its maximum"
    );
}

#[test]
fn r_rcv_05_complete_abandon_dead_letter() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    for id in ["a", "b", "c"] {
        ns.send("q", msg(id, None)).unwrap();
    }
    recv(&mut ns, "q", 3);
    settle(&mut ns, "q", 1, Settlement::Complete).unwrap();
    settle(&mut ns, "q", 2, Settlement::Abandon).unwrap();
    settle(
        &mut ns,
        "q",
        3,
        Settlement::DeadLetter {
            reason: Some("Invalid".into()),
            description: Some("bad json".into()),
        },
    )
    .unwrap();
    assert!(ns.message("q", 1, Perspective::Peek).is_none());
    assert_eq!(
        ns.message("q", 2, Perspective::Peek)
            .unwrap()
            .delivery_count,
        1
    );
    let d = assert_dead_lettered(&ns, "q", 3, "Invalid");
    assert_eq!(d.dead_letter_error_description.as_deref(), Some("bad json"));
}

/// RCV-05: AMQP's `released` (what an SDK sends for a message that arrived after its receive
/// call ended) ends the lock without counting the delivery, however often it happens; the
/// message is at the head again. Abandon, beside it, counts.
#[test]
fn r_rcv_05_release_ends_the_lock_without_counting_a_delivery() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    ns.send("q", msg("b", None)).unwrap();
    for _ in 0..20 {
        assert_eq!(recv(&mut ns, "q", 1)[0].message_id, "a");
        settle(&mut ns, "q", 1, Settlement::Release).unwrap();
    }
    let peeked = ns.message("q", 1, Perspective::Peek).unwrap();
    assert_eq!((peeked.delivery_count, peeked.locked_until), (0, None));
    assert_eq!(counts(&ns, "q").dead_lettered, 0);
    assert!(kinds(&ns, 1).contains(&"Released"));
    // A release needs the lock, as every settlement does (RCV-08).
    let err = settle(&mut ns, "q", 1, Settlement::Release).unwrap_err();
    assert_eq!(err.kind, ErrorKind::MessageLockLost);
    recv(&mut ns, "q", 1);
    settle(&mut ns, "q", 1, Settlement::Abandon).unwrap();
    assert_eq!(
        ns.message("q", 1, Perspective::Peek)
            .unwrap()
            .delivery_count,
        1
    );
}

#[test]
fn r_rcv_06_released_lock_returns_message_to_the_head() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    for id in ["a", "b", "c"] {
        ns.send("q", msg(id, None)).unwrap();
    }
    recv(&mut ns, "q", 1);
    ns.advance_to(30 * SECOND); // the lock on a lapses
    assert_eq!(recv(&mut ns, "q", 1)[0].message_id, "a");
}

/// RCV-06: each lapsed lock is counted in the metrics (apart from settlements refused for a
/// lost lock, which a lapse alone does not make).
#[test]
fn r_rcv_06_lapsed_locks_are_counted() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    for round in 1..=3 {
        recv(&mut ns, "q", 1);
        ns.advance_to(round * 30 * SECOND);
    }
    let total = ns.metrics().total();
    assert_eq!((total.locks_lapsed, total.lock_lost), (3, 0));
}

#[test]
fn r_rcv_07_max_delivery_count_dead_letters() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            max_delivery_count: 3,
            ..settings()
        },
    );
    assert!(ns
        .create_queue(
            "zero",
            EntitySettings {
                max_delivery_count: 0,
                ..settings()
            }
        )
        .is_err());
    assert_eq!(settings().max_delivery_count, 10);
    ns.send("q", msg("a", None)).unwrap();
    for round in 1..=3 {
        let got = recv(&mut ns, "q", 1);
        assert_eq!(got[0].delivery_count, round);
        ns.advance_to(ns.now() + 30 * SECOND);
    }
    let d = assert_dead_lettered(&ns, "q", 1, "MaxDeliveryCountExceeded");
    assert_eq!(d.delivery_count, 3);
}

/// RCV-08 in the log: a settlement refused for its lock is logged with the message it was for
/// and the rule, so a reader of the log (the page's, the terminal's) sees which and why.
#[test]
fn r_rcv_08_a_refused_settlement_is_logged_with_its_message_and_the_rule() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    recv(&mut ns, "q", 1);
    let complete = |from: &str| Command::Settle {
        receiver: R.into(),
        from: from.into(),
        seq: 1,
        settlement: Settlement::Complete,
        lock_token: None,
    };
    let err = ns.apply(31 * SECOND, complete("q")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::MessageLockLost);
    let logged = ns.log().last().expect("the rejection is logged");
    assert_eq!(logged.kind.name(), "Rejected");
    assert_eq!(logged.seq, 1);
    assert_eq!(logged.rule, Some(sbp_engine::rules::Rule::Rcv08));
    // Another refusal (no such entity) names neither.
    let err = ns.apply(31 * SECOND, complete("nowhere")).unwrap_err();
    assert_ne!(err.kind, ErrorKind::MessageLockLost);
    assert_eq!(ns.log().last().and_then(|e| e.rule), None);
}

#[test]
fn r_rcv_08_settle_after_lapse_or_twice_fails_and_disconnect_drops_locks() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    ns.send("q", msg("b", None)).unwrap();
    recv(&mut ns, "q", 1);
    ns.advance_to(31 * SECOND);
    for s in [
        Settlement::Complete,
        Settlement::Defer,
        Settlement::RenewLock,
        Settlement::DeadLetter {
            reason: None,
            description: None,
        },
    ] {
        assert_eq!(
            settle(&mut ns, "q", 1, s).unwrap_err().kind,
            ErrorKind::MessageLockLost
        );
    }
    let again = recv(&mut ns, "q", 1);
    settle(&mut ns, "q", again[0].sequence_number, Settlement::Complete).unwrap();
    assert_eq!(
        settle(&mut ns, "q", again[0].sequence_number, Settlement::Complete)
            .unwrap_err()
            .kind,
        ErrorKind::MessageLockLost
    );
    ns.receive(
        "flaky",
        "q",
        ReceiveMode::PeekLock,
        1,
        ReceiveOptions::default(),
    )
    .unwrap();
    ns.fault(Fault::Disconnect {
        receiver: "flaky".into(),
    })
    .unwrap();
    assert_eq!(counts(&ns, "q").locked, 0);
    assert_eq!(
        ns.settle("flaky", "q", 2, Settlement::Complete)
            .unwrap_err()
            .kind,
        ErrorKind::MessageLockLost
    );
}

#[test]
fn r_rcv_09_defer_and_receive_by_sequence_number() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    ns.send("q", msg("b", None)).unwrap();
    recv(&mut ns, "q", 1);
    settle(&mut ns, "q", 1, Settlement::Defer).unwrap();
    assert_eq!(
        recv(&mut ns, "q", 5).len(),
        1,
        "a deferred message is invisible to normal receive"
    );
    assert_eq!(
        ns.message("q", 1, Perspective::Peek).unwrap().state,
        MessageState::Deferred
    );
    let err = ns.receive_deferred(R, "q", &[1, 99]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::MessageNotFound);
    assert_eq!(
        counts(&ns, "q").deferred,
        1,
        "the failed call locked nothing"
    );
    let got = ns.receive_deferred(R, "q", &[1]).unwrap();
    assert_eq!(got[0].delivery_count, 2);
    assert!(got[0].locked_until.is_some());
    settle(&mut ns, "q", 1, Settlement::Complete).unwrap();
}

#[test]
fn r_rcv_10_service_update_and_entity_update_lose_every_lock() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    queue(&mut ns, "other", settings());
    ns.send("q", msg("a", None)).unwrap();
    ns.send("other", msg("b", None)).unwrap();
    recv(&mut ns, "q", 1);
    recv(&mut ns, "other", 1);
    ns.fault(Fault::ServiceUpdate).unwrap();
    assert_eq!(counts(&ns, "q").locked + counts(&ns, "other").locked, 0);
    assert_eq!(
        settle(&mut ns, "q", 1, Settlement::Complete)
            .unwrap_err()
            .kind,
        ErrorKind::MessageLockLost
    );
    recv(&mut ns, "q", 1);
    ns.update_entity(
        "q",
        EntitySettings {
            max_delivery_count: 5,
            ..settings()
        },
    )
    .unwrap();
    assert_eq!(counts(&ns, "q").active, 1, "receivable again");
    assert_eq!(
        settle(&mut ns, "q", 1, Settlement::Complete)
            .unwrap_err()
            .kind,
        ErrorKind::MessageLockLost
    );
    assert!(ns.log().iter().any(|e| e.rule == Some(Rule::Rcv10)));
}

#[test]
fn r_rcv_11_peek_never_locks_and_settling_a_peeked_message_is_a_client_error() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    ns.schedule("q", msg("b", None), HOUR).unwrap();
    ns.send("q", msg("c", None)).unwrap();
    recv(&mut ns, "q", 1);
    let peeked = ns.peek("browser", "q", None, 10).unwrap();
    assert_eq!(
        peeked.iter().map(|m| m.sequence_number).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert_eq!(peeked[1].state, MessageState::Scheduled);
    assert!(peeked[0].lock_token.is_none());
    let err = ns
        .settle("browser", "q", 3, Settlement::Complete)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    assert_eq!(
        ns.message("q", 3, Perspective::Peek)
            .unwrap()
            .delivery_count,
        0
    );
    assert_eq!(counts(&ns, "q").locked, 1);
}

#[test]
fn r_rcv_12_lost_lock_after_work_means_the_message_comes_again() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("order-42", None)).unwrap();
    let first = recv(&mut ns, "q", 1);
    ns.advance_to(40 * SECOND); // the work took longer than the lock
    assert_eq!(
        settle(&mut ns, "q", 1, Settlement::Complete)
            .unwrap_err()
            .kind,
        ErrorKind::MessageLockLost
    );
    let second = ns
        .receive(
            "r2",
            "q",
            ReceiveMode::PeekLock,
            1,
            ReceiveOptions::default(),
        )
        .unwrap();
    assert_eq!(second[0].message_id, first[0].message_id);
    assert_eq!(second[0].delivery_count, 2);
}

#[test]
fn r_rcv_11_peek_shows_scheduled_messages_on_queues_not_on_subscriptions() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.schedule("q", msg("later", None), HOUR).unwrap();
    let peeked = ns.peek("browser", "q", Some(1), 10).unwrap();
    assert_eq!(peeked.len(), 1);
    assert_eq!(peeked[0].state, MessageState::Scheduled);
    ns.create_topic("t", settings()).unwrap();
    ns.create_subscription("t", "s", settings(), SubscriptionRule::MatchAll)
        .unwrap();
    ns.schedule("t", msg("later", None), HOUR).unwrap();
    assert!(ns
        .peek("browser", "t/subscriptions/s", Some(1), 10)
        .unwrap()
        .is_empty());
    let err = ns.peek("browser", "t", Some(1), 10).unwrap_err();
    assert_eq!(
        err.kind,
        ErrorKind::InvalidOperation,
        "a topic is not peeked"
    );
    ns.advance_to(HOUR);
    assert_eq!(
        ns.peek("browser", "t/subscriptions/s", Some(1), 10)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn r_rcv_11_peek_may_show_an_expired_message_nothing_removed_yet() {
    let mut ns = Namespace::builder()
        .expiry_mode(ExpiryMode::Realistic)
        .seed(1)
        .build();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", Some(SECOND))).unwrap();
    ns.advance_to(MINUTE);
    let peeked = ns.peek("browser", "q", Some(1), 1).unwrap();
    assert!(peeked[0].nominally_expired);
}

#[test]
fn r_rcv_11_a_peeked_copy_of_a_locked_message_shows_no_lock() {
    // "Because Peek returns a disconnected snapshot, the lock state of a message can't be
    // observed on peeked messages" (Message browsing).
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    let got = recv(&mut ns, "q", 1);
    assert!(got[0].locked_until.is_some(), "the holder sees its lock");
    let peeked = ns.peek("browser", "q", None, 10).unwrap();
    assert_eq!(peeked[0].sequence_number, 1);
    assert_eq!(peeked[0].locked_until, None);
    assert_eq!(peeked[0].lock_token, None);
    assert_eq!(peeked[0].lock_holder, None);
    let as_received = ns.message("q", 1, Perspective::Receive).unwrap();
    assert_eq!(as_received.locked_until, got[0].locked_until);
}
