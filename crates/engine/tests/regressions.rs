//! Regression tests for the bugs found by the random-sequence probe, the fuzz and the review
//! (issue "Exact under every input"), each named after what it checks.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use sbp_engine::time::{format_duration, HOUR, MINUTE, SECOND};
use sbp_engine::*;

mod common;
use common::assert_dead_lettered;

const R: &str = "r1";

fn settings() -> EntitySettings {
    EntitySettings::defaults(Tier::Standard)
}
fn ns_with(name: &str, s: EntitySettings) -> Namespace {
    let mut ns = Namespace::builder().seed(3).build();
    ns.create_queue(name, s).unwrap();
    ns
}
fn msg(ttl: Option<i64>) -> NewMessage {
    NewMessage {
        time_to_live: ttl,
        ..Default::default()
    }
}
fn receive(ns: &mut Namespace, from: &str) -> Vec<MessageView> {
    ns.receive(R, from, ReceiveMode::PeekLock, 1, ReceiveOptions::default())
        .unwrap()
}

/// Bug 1: asking for the next due timer dropped the expiry timer of a locked message, so after
/// an abandon the message never expired in exact mode.
#[test]
fn observing_the_next_due_timer_never_changes_when_a_message_expires() {
    let run = |observe: bool| {
        let mut ns = ns_with(
            "q",
            EntitySettings {
                dead_lettering_on_message_expiration: true,
                ..settings()
            },
        );
        ns.send("q", msg(Some(10 * SECOND))).unwrap();
        ns.advance_to(SECOND);
        receive(&mut ns, "q");
        if observe {
            ns.next_due();
            ns.next_event();
        }
        ns.advance_to(5 * SECOND);
        ns.settle(R, "q", 1, Settlement::Abandon).unwrap();
        ns.advance_to(20 * SECOND);
        ns
    };
    let (watched, unwatched) = (run(true), run(false));
    let dlq = |ns: &Namespace| ns.entity("q").unwrap().dlq.len();
    assert_eq!(dlq(&watched), 1, "expired at t=10s into the DLQ (TTL-11)");
    assert_eq!(dlq(&unwatched), 1);
    assert_eq!(watched.log(), unwatched.log());
}

/// Bug 2: formatting a duration of i64::MIN negated it and overflowed (a stack overflow).
#[test]
fn formatting_any_duration_never_overflows() {
    assert!(format_duration(i64::MIN).starts_with("-292271023years"));
    assert_eq!(format_duration(-1500), "-1s 500ms");
    assert_eq!(format_duration(0), "0s");
    let mut ns = ns_with("q", settings());
    let err = ns
        .apply(0, Command::Fault(Fault::ServerBusy { duration: i64::MIN }))
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ArgumentOutOfRange);
}

/// Bug 3: a dead-letter forwarded by ForwardDeadLetteredMessagesTo kept its failed deliveries.
#[test]
fn a_forwarded_dead_letter_starts_afresh_with_delivery_count_zero() {
    let mut ns = Namespace::builder().seed(3).build();
    ns.create_queue("retry", settings()).unwrap();
    ns.create_queue(
        "orders",
        EntitySettings {
            max_delivery_count: 3,
            forward_dead_lettered_messages_to: Some("retry".into()),
            ..settings()
        },
    )
    .unwrap();
    ns.send("orders", msg(None)).unwrap();
    for _ in 0..3 {
        receive(&mut ns, "orders");
        ns.settle(R, "orders", 1, Settlement::Abandon).unwrap();
    }
    let m = ns.message("retry", 1, Perspective::Peek).unwrap();
    assert_eq!(m.delivery_count, 0);
    receive(&mut ns, "retry");
    ns.settle(R, "retry", 1, Settlement::Abandon).unwrap();
    assert_eq!(
        ns.entity("retry").unwrap().dlq.len(),
        0,
        "one abandon is not ten"
    );
    assert_eq!(ns.entity("retry").unwrap().counts(ns.now()).active, 1);
}

/// Bug 4: receive, defer, receive deferred, defer... let DeliveryCount pass MaxDeliveryCount.
#[test]
fn deferring_counts_against_max_delivery_count() {
    let mut ns = ns_with(
        "q",
        EntitySettings {
            max_delivery_count: 2,
            ..settings()
        },
    );
    ns.send("q", msg(None)).unwrap();
    receive(&mut ns, "q");
    ns.settle(R, "q", 1, Settlement::Defer).unwrap();
    ns.receive_deferred(R, "q", &[1]).unwrap();
    ns.settle(R, "q", 1, Settlement::Defer).unwrap();
    let e = ns.entity("q").unwrap();
    assert!(
        e.main.is_empty(),
        "the second failed delivery reached the limit"
    );
    assert_dead_lettered(&ns, "q", 1, "MaxDeliveryCountExceeded");
}

/// Bug 5: a subscription, the entity itself or a DLQ path was accepted as a forward target.
#[test]
fn forward_targets_must_be_another_queue_or_topic() {
    let mut ns = Namespace::builder().seed(3).build();
    ns.create_queue("q", settings()).unwrap();
    ns.create_topic("t", settings()).unwrap();
    ns.create_subscription("t", "s", settings(), SubscriptionRule::MatchAll)
        .unwrap();
    let forward = |to: &str| EntitySettings {
        forward_to: Some(to.into()),
        ..settings()
    };
    for bad in ["t/subscriptions/s", "q/$deadletterqueue", "Q2", "missing"] {
        let err = ns.create_queue("q2", forward(bad)).unwrap_err();
        assert!(
            matches!(
                err.kind,
                ErrorKind::InvalidOperation | ErrorKind::MessagingEntityNotFound
            ),
            "{bad}: {err}"
        );
    }
    assert!(ns.entity("q2").is_none(), "nothing was created");
    assert!(ns.update_entity("q", forward("q")).is_err(), "not itself");
    let before = ns.entity("t/subscriptions/s").unwrap().settings.clone();
    assert!(ns
        .update_entity("t/subscriptions/s", forward("t/subscriptions/s"))
        .is_err());
    assert_eq!(ns.entity("t/subscriptions/s").unwrap().settings, before);
}

/// Bug 5: forwarding loops stop at the hop limit, also through a DLQ.
#[test]
fn a_forwarding_loop_through_a_dlq_ends_at_the_hop_limit() {
    let mut ns = Namespace::builder().seed(3).build();
    ns.create_queue("a", settings()).unwrap();
    ns.create_queue(
        "b",
        EntitySettings {
            forward_to: Some("a".into()),
            ..settings()
        },
    )
    .unwrap();
    // a forwards to b, b back to a: a loop.
    ns.update_entity(
        "a",
        EntitySettings {
            forward_to: Some("b".into()),
            ..settings()
        },
    )
    .unwrap();
    ns.send("a", msg(None)).unwrap();
    let stored = |p: &str| {
        let e = ns.entity(p).unwrap();
        (e.main.len(), e.dlq.len())
    };
    // a#1 -> b#1 -> a#2 -> b#2 -> a#3: four hops; the fifth is refused in a's DLQ.
    assert_eq!(stored("a"), (0, 1));
    assert_eq!(stored("b"), (0, 0));
    assert_dead_lettered(&ns, "a", 3, "MaxTransferHopCountExceeded");
}

/// Bug 6: cancelling on a DLQ path cancelled the main queue's message.
#[test]
fn cancel_scheduled_on_a_dead_letter_path_is_a_client_error() {
    let mut ns = ns_with("orders", settings());
    let seq = ns.schedule("orders", msg(None), HOUR).unwrap();
    let err = ns
        .cancel_scheduled("orders/$deadletterqueue", seq)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    assert_eq!(ns.entity("orders").unwrap().counts(0).scheduled, 1);
}

/// Bug 6: the same sequence number twice locked the message twice.
#[test]
fn receive_deferred_with_a_number_twice_is_a_client_error() {
    let mut ns = ns_with("q", settings());
    ns.send("q", msg(None)).unwrap();
    receive(&mut ns, "q");
    ns.settle(R, "q", 1, Settlement::Defer).unwrap();
    let before = ns.log().len();
    let err = ns.receive_deferred(R, "q", &[1, 1]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    assert_eq!(ns.log().len(), before, "nothing happened");
    assert_eq!(ns.receive_deferred(R, "q", &[1]).unwrap().len(), 1);
}

/// Bug 7: a queue whose only content was a scheduled message was deleted at the very instant
/// the message was enqueued.
#[test]
fn auto_delete_on_idle_counts_from_when_a_scheduled_message_is_enqueued() {
    let mut ns = ns_with(
        "temp",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            ..settings()
        },
    );
    ns.schedule("temp", msg(None), 10 * MINUTE).unwrap();
    ns.advance_to(10 * MINUTE);
    assert!(
        ns.entity("temp").is_some(),
        "not idle while the message waited"
    );
    assert_eq!(ns.entity("temp").unwrap().counts(ns.now()).active, 1);
    ns.advance_to(15 * MINUTE - 1);
    assert!(ns.entity("temp").is_some());
    ns.advance_to(15 * MINUTE);
    assert!(
        ns.entity("temp").is_none(),
        "idle for 5 minutes after the enqueue (IDLE-01)"
    );
}

/// Bug 8: rates were rounded to whole milliseconds (700/s sent 1000/s; nothing above 1000/s).
#[test]
fn a_producer_rate_is_kept_exactly() {
    // Messages at t = k x 1000/rate ms, k = 0, 1, ...: those up to t=9999ms.
    for (rate, expected) in [(700.0, 7_000), (400.0, 4_000), (2_500.0, 24_998), (0.5, 5)] {
        let mut ns = ns_with("q", settings());
        ns.start_producer(ProducerSpec::new("p", "q", rate))
            .unwrap();
        ns.advance_to(10 * SECOND - 1);
        assert_eq!(ns.metrics().total().sent, expected, "{rate}/s for 10 s");
    }
}

/// A failed settle registered its receiver; a failed receive_deferred touched the entity.
#[test]
fn a_failed_command_changes_nothing_but_the_log() {
    let mut ns = ns_with(
        "q",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            ..settings()
        },
    );
    ns.send("q", msg(None)).unwrap();
    ns.advance_to(MINUTE);
    let before = ns.clone();
    let log = ns.log().len();
    let failing = [
        Command::Settle {
            receiver: "nobody".into(),
            from: "q".into(),
            seq: 1,
            settlement: Settlement::Complete,
            lock_token: None,
        },
        Command::ReceiveDeferred {
            receiver: "nobody".into(),
            from: "q".into(),
            seqs: vec![1],
        },
        Command::CancelScheduled {
            to: "q".into(),
            seq: 1,
        },
        Command::Receive {
            receiver: "nobody".into(),
            from: "q".into(),
            mode: ReceiveMode::PeekLock,
            count: 0,
            options: ReceiveOptions::default(),
        },
    ];
    for c in failing {
        let err = ns.apply(MINUTE, c).unwrap_err();
        assert!(
            err.tracking_id.is_some() || err.kind.is_client_error(),
            "{err}"
        );
    }
    assert!(ns.same_state_except_log(&before));
    assert_eq!(ns.log().len(), log + 4, "four Rejected events");
}

/// A message quoting a huge value shows its start only.
#[test]
fn an_error_never_repeats_a_huge_value_in_full() {
    let mut ns = Namespace::builder().build();
    let name = "x".repeat(1_000_000);
    let err = ns
        .create_queue(&format!("{name}$"), settings())
        .unwrap_err();
    assert!(
        err.message.to_string().len() < 1_000,
        "{} bytes",
        err.message.to_string().len()
    );
}

/// A receive at the last instant time can name ends (it looped).
#[test]
fn a_receive_at_the_end_of_time_ends() {
    let mut ns = ns_with("q", settings());
    ns.send("q", msg(Some(SECOND))).unwrap();
    ns.send("q", msg(None)).unwrap();
    ns.start_consumers(ConsumerSpec {
        max_auto_lock_renewal: Some(HOUR),
        poll_interval: MINUTE,
        ..ConsumerSpec::new("c", "q")
    })
    .unwrap();
    ns.advance_to(10 * SECOND);
    let err = ns
        .apply(i64::MAX, Command::Fault(Fault::ServiceUpdate))
        .unwrap_err();
    assert!(
        err.message.to_string().contains("playground limit"),
        "{err}"
    );
    let got = ns
        .apply(
            sbp_engine::limits::LATEST_INSTANT,
            Command::Receive {
                receiver: R.into(),
                from: "q".into(),
                mode: ReceiveMode::PeekLock,
                count: 10,
                options: ReceiveOptions {
                    max_auto_lock_renewal: Some(HOUR),
                    transfer_fails: false,
                },
            },
        )
        .unwrap();
    let Reply::Messages(got) = got else {
        panic!("a receive replies with messages")
    };
    assert!(got.len() <= 1);
    ns.next_due();
    ns.advance_to(i64::MAX);
    assert_eq!(
        ns.now(),
        sbp_engine::limits::LATEST_INSTANT,
        "the clock ends there"
    );
}

/// Found by the property run: MaxDeliveryCount lowered below a stored message's failed
/// deliveries; the next receive handed it out with DeliveryCount past the limit.
#[test]
fn a_lowered_max_delivery_count_dead_letters_on_the_next_delivery() {
    let mut ns = ns_with("q", settings());
    ns.send("q", msg(None)).unwrap();
    receive(&mut ns, "q");
    ns.settle(R, "q", 1, Settlement::Abandon).unwrap();
    ns.update_entity(
        "q",
        EntitySettings {
            max_delivery_count: 1,
            ..settings()
        },
    )
    .unwrap();
    assert!(receive(&mut ns, "q").is_empty(), "not handed out");
    assert_dead_lettered(&ns, "q", 1, "MaxDeliveryCountExceeded");
}

/// Found by the property run: a next-due query dropped a locked message's expiry timer early,
/// so two expiries due at the same instant fired in the other order than without the query.
#[test]
fn observing_never_reorders_what_happens_at_one_instant() {
    let run = |observe: bool| {
        let mut ns = Namespace::builder().seed(0).build();
        let dlq = EntitySettings {
            dead_lettering_on_message_expiration: true,
            ..settings()
        };
        ns.create_queue("a", dlq).unwrap();
        ns.create_topic("t", settings()).unwrap();
        for (sub, forward) in [("s1", None), ("s2", Some("a".to_string()))] {
            let s = EntitySettings {
                forward_to: forward,
                ..settings()
            };
            ns.create_subscription("t", sub, s, SubscriptionRule::MatchAll)
                .unwrap();
        }
        ns.send("t", msg(Some(62_796))).unwrap();
        ns.advance_to(52_796);
        receive(&mut ns, "t/subscriptions/s1");
        if observe {
            ns.next_due();
        }
        ns.fault(Fault::ServiceUpdate).unwrap();
        ns.advance_to(62_796);
        ns.log().to_vec()
    };
    assert_eq!(run(true), run(false));
}

/// The UI placed errors by searching their text; an error now names its field.
#[test]
fn a_settings_error_names_its_field() {
    let mut ns = Namespace::builder().build();
    let err = ns
        .create_queue(
            "q",
            EntitySettings {
                lock_duration: SECOND,
                ..settings()
            },
        )
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("LockDuration"));
    ns.create_queue("q", settings()).unwrap();
    let err = ns
        .update_entity(
            "q",
            EntitySettings {
                forward_to: Some("q".into()),
                ..settings()
            },
        )
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("ForwardTo"));
}

/// Bug 9: error texts said "abandond" and "deferd".
#[test]
fn settling_a_received_and_deleted_message_names_the_settlement_in_plain_words() {
    let mut ns = ns_with("q", settings());
    ns.send("q", msg(None)).unwrap();
    ns.receive(
        R,
        "q",
        ReceiveMode::ReceiveAndDelete,
        1,
        ReceiveOptions::default(),
    )
    .unwrap();
    for (s, verb) in [
        (Settlement::Abandon, "abandon"),
        (Settlement::Defer, "defer"),
    ] {
        let err = ns.settle(R, "q", 1, s).unwrap_err();
        assert!(
            err.message
                .to_string()
                .contains(&format!("so {verb} is refused")),
            "{err}"
        );
        assert!(
            !err.message.to_string().contains("abandond")
                && !err.message.to_string().contains("deferd")
        );
    }
}

/// Every run bounded: a namespace built with the playground's bounds refuses sends past the
/// messages it may store and past the body bytes it may hold, naming the limit, and changes
/// nothing else.
#[test]
fn a_namespace_refuses_sends_past_its_message_and_body_bounds() {
    let mut ns = Namespace::builder()
        .max_messages(Some(3))
        .max_body_bytes(Some(10))
        .build();
    ns.create_queue("q", settings()).unwrap();
    let body = |n: usize| NewMessage {
        body: "x".repeat(n).into(),
        ..Default::default()
    };
    ns.send("q", body(4)).unwrap();
    ns.send("q", body(4)).unwrap();
    let err = ns.send("q", body(4)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::QuotaExceeded);
    assert!(
        err.message.to_string().contains("MB of message bodies"),
        "{err}"
    );
    assert!(err.tracking_id.is_some());
    ns.send("q", body(2)).unwrap();
    assert_eq!(ns.stored_totals(), (3, 10));
    let err = ns.send("q", body(0)).unwrap_err();
    assert!(
        err.message.to_string().contains("at most 3 messages"),
        "{err}"
    );
    assert_eq!(
        ns.stored_totals(),
        (3, 10),
        "nothing stored past the bounds"
    );
}

/// Found by an attack on `sbp serve`: application properties were outside the store's byte
/// budget, so messages of empty bodies and large properties grew the process past it. They
/// count now, and the budget comes back when the messages are received.
#[test]
fn properties_count_in_the_stored_bytes_and_come_back_when_drained() {
    let mut ns = Namespace::builder().max_body_bytes(Some(1_000)).build();
    ns.create_queue("q", settings()).unwrap();
    let with_props = || {
        let mut m = NewMessage::default();
        m.application_properties
            .insert("k".into(), PropertyValue::String("v".repeat(399)));
        m
    };
    ns.send("q", with_props()).unwrap();
    ns.send("q", with_props()).unwrap();
    assert_eq!(ns.stored_totals(), (2, 800));
    let err = ns.send("q", with_props()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::QuotaExceeded);
    assert_eq!(
        ns.stored_totals(),
        (2, 800),
        "nothing stored past the bound"
    );
    ns.receive(
        R,
        "q",
        ReceiveMode::ReceiveAndDelete,
        2,
        ReceiveOptions::default(),
    )
    .unwrap();
    assert_eq!(ns.stored_totals(), (0, 0));
    ns.send("q", with_props()).unwrap();
}

/// Found re-reading the change: settling with a LockToken checks it is the settling receiver's
/// lock, not only the message's (another client's message object does not settle it).
#[test]
fn a_lock_token_settles_only_for_the_receiver_that_holds_it() {
    let mut ns = ns_with("q", settings());
    ns.send("q", msg(None)).unwrap();
    let got = ns
        .receive(
            "other",
            "q",
            ReceiveMode::PeekLock,
            1,
            ReceiveOptions::default(),
        )
        .unwrap();
    let token = got[0].lock_token.clone().unwrap();
    // R is a receiver too, with nothing left to get.
    assert!(receive(&mut ns, "q").is_empty());
    let err = ns
        .settle_with_token(R, "q", 1, &token, Settlement::Complete)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::MessageLockLost);
    ns.settle_with_token("other", "q", 1, &token, Settlement::Complete)
        .unwrap();
    assert!(ns.entity("q").unwrap().main.is_empty());
}

/// Found by the fuzzer's "one clock tick on" after opening a link: a producer's burst of 10,000
/// sends is one timer, so a browser tick of 20,000 timers could be 200 million sends. The budget
/// of an advance counts the events a timer makes beyond its first.
#[test]
fn a_burst_takes_its_sends_off_an_advances_budget() {
    let mut ns = ns_with("q", settings());
    ns.start_producer(ProducerSpec {
        burst: Some(Burst {
            every: 100,
            size: 10_000,
        }),
        ..ProducerSpec::new("p", "q", 1.0)
    })
    .unwrap();
    let mut budget = 20_000;
    let reached = ns.advance_by(HOUR, &mut budget);
    assert!(!reached, "an hour of bursts is more than one budget");
    let sent = ns.metrics().total().sent + ns.metrics().total().rejected;
    assert!(
        sent <= 20_000 + 10_000,
        "{sent} sends for a budget of 20,000"
    );
    assert!(sent >= 10_000, "the first burst went out: {sent}");
}

/// Found reviewing the checkpoint reader: an absent entity is one byte of a link and hundreds of
/// bytes of memory, so a crafted state of two million of them would have taken most of a
/// gigabyte before its check. The lists of one load may take at most 128 MB: it is refused first.
#[test]
fn a_crafted_state_of_millions_of_absent_entities_is_refused_before_it_takes_memory() {
    let mut ns = ns_with("q", settings());
    let mut bytes = vec![0x01]; // now: 1 ms (a varint)
    let mut n: u64 = 2_000_000;
    while n >= 0x80 {
        bytes.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
    bytes.extend(std::iter::repeat_n(0u8, 2_000_000)); // each: None
                                                       // The rest of a state, all empty: without the bound it reads whole (and is refused later,
                                                       // as not holding together, after the memory is taken).
    bytes.extend([0u8; 18]);
    assert_eq!(ns.resume(&bytes, |_| {}), Err("s-checkpoint-unreadable"));
    assert!(ns.entity("q").is_some(), "a refusal changes nothing");
}

/// Issue 32: asking what is next only reads (`&self`). A lock settled by a direct call leaves
/// its lapse check on top of the timers; the answer skips it to the next live lock's lapse, as
/// the engine answered when asking dropped stale timers, and changes nothing.
#[test]
fn asking_what_is_next_reads_past_a_settled_locks_lapse_check() {
    let mut ns = ns_with("q", settings());
    ns.send("q", msg(None)).unwrap();
    ns.send("q", msg(None)).unwrap();
    receive(&mut ns, "q");
    ns.advance_to(SECOND);
    receive(&mut ns, "q");
    ns.advance_to(2 * SECOND);
    ns.settle(R, "q", 1, Settlement::Complete).unwrap();
    let before = ns.clone();
    let lock = settings().lock_duration;
    let (at, due) = ns.next_event().expect("the second lock lapses");
    assert_eq!(at, SECOND + lock);
    assert_eq!(
        due,
        sbp_engine::Due::LockLapse {
            path: "q".into(),
            seq: 2
        }
    );
    assert_eq!(ns.next_due(), Some(SECOND + lock));
    assert!(ns.same_state_except_log(&before) && ns.log() == before.log());
    assert_eq!(
        ns.clone().next_event_after_pruning(),
        Some((at, due)),
        "as the pruning answer"
    );
}
