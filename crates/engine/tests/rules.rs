//! One test (at least) per rule of SPEC.md, named after its id. They run natively and, through
//! wasm-bindgen-test, for wasm32-unknown-unknown.
use sbp_engine::send_lab::{self, Injected, SendLabSpec, SendStrategy};
use sbp_engine::time::{after, parse_duration, DAY, MAX_VALUE, MINUTE, NEVER, SECOND};
use sbp_engine::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const R: &str = "r1";

fn ns() -> Namespace {
    Namespace::builder().seed(1).build()
}
fn settings() -> EntitySettings {
    EntitySettings::defaults(Tier::Standard)
}
fn dlq_on_expiry() -> EntitySettings {
    EntitySettings {
        dead_lettering_on_message_expiration: true,
        ..settings()
    }
}
fn msg(id: &str, ttl: Option<i64>) -> NewMessage {
    NewMessage {
        message_id: Some(id.into()),
        time_to_live: ttl,
        body: "hello".into(),
        ..Default::default()
    }
}
fn recv(ns: &mut Namespace, from: &str, count: u32) -> Vec<MessageView> {
    ns.receive(
        R,
        from,
        ReceiveMode::PeekLock,
        count,
        ReceiveOptions::default(),
    )
    .unwrap()
}
fn settle(ns: &mut Namespace, from: &str, seq: u64, s: Settlement) -> Result<(), BrokerError> {
    ns.settle(R, from, seq, s)
}
fn kinds(ns: &Namespace, seq: u64) -> Vec<&'static str> {
    ns.log()
        .iter()
        .filter(|e| e.seq == seq)
        .map(|e| e.kind.name())
        .collect()
}
fn counts(ns: &Namespace, path: &str) -> Counts {
    ns.entity(path).unwrap().counts(ns.now())
}
fn queue(ns: &mut Namespace, name: &str, s: EntitySettings) {
    ns.create_queue(name, s).unwrap();
}

#[test]
fn r_msg_01_sequence_numbers_start_at_1_gap_free_and_survive_abandon_and_defer() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    let seqs: Vec<u64> = (0..3)
        .map(|i| ns.send("q", msg(&format!("m{i}"), None)).unwrap())
        .collect();
    assert_eq!(seqs, vec![1, 2, 3]);
    let got = recv(&mut ns, "q", 2);
    settle(&mut ns, "q", got[0].sequence_number, Settlement::Abandon).unwrap();
    settle(&mut ns, "q", got[1].sequence_number, Settlement::Defer).unwrap();
    assert!(ns.entity("q").unwrap().main.messages.contains_key(&1));
    assert!(ns.entity("q").unwrap().main.messages.contains_key(&2));
    assert_eq!(ns.send("q", msg("m3", None)).unwrap(), 4);
}

#[test]
fn r_msg_02_delivery_count_is_1_on_first_lock_and_peek_shows_raw() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    assert_eq!(ns.peek(R, "q", Some(1), 1).unwrap()[0].delivery_count, 0);
    let first = recv(&mut ns, "q", 1);
    assert_eq!(first[0].delivery_count, 1);
    settle(&mut ns, "q", 1, Settlement::Abandon).unwrap();
    assert_eq!(ns.peek("p", "q", Some(1), 1).unwrap()[0].delivery_count, 1);
    assert_eq!(recv(&mut ns, "q", 1)[0].delivery_count, 2);
}

#[test]
fn r_msg_03_max_value_means_never_and_nothing_overflows() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", Some(MAX_VALUE))).unwrap();
    ns.schedule("q", msg("b", Some(MAX_VALUE)), 10 * DAY)
        .unwrap();
    ns.advance_to(i64::MAX - 1);
    let a = ns.message("q", 1, Perspective::Receive).unwrap();
    assert_eq!(a.expires_at, NEVER);
    assert_eq!(after(i64::MAX - 5, MAX_VALUE), NEVER);
    assert_eq!(parse_duration("MaxValue").unwrap(), MAX_VALUE);
    assert_eq!(counts(&ns, "q").active, 2);
}

#[test]
fn r_ttl_01_expires_at_is_enqueued_time_plus_ttl() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.advance_to(5 * SECOND);
    ns.send("q", msg("a", Some(30 * SECOND))).unwrap();
    let m = ns.message("q", 1, Perspective::Peek).unwrap();
    assert_eq!(m.enqueued_time, 5 * SECOND);
    assert_eq!(m.expires_at, 35 * SECOND);
}

#[test]
fn r_ttl_02_entity_default_applies_and_caps_longer_ttl() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            default_message_time_to_live: MINUTE,
            ..settings()
        },
    );
    ns.send("q", msg("long", Some(DAY))).unwrap();
    ns.send("q", msg("none", None)).unwrap();
    assert_eq!(
        ns.message("q", 1, Perspective::Peek).unwrap().time_to_live,
        MINUTE
    );
    assert_eq!(
        ns.message("q", 1, Perspective::Peek).unwrap().expires_at,
        MINUTE
    );
    assert_eq!(
        ns.message("q", 2, Perspective::Receive).unwrap().expires_at,
        MINUTE
    );
    assert!(ns
        .log()
        .iter()
        .any(|e| e.rule == Some(Rule::Ttl02) && e.seq == 1));
}

#[test]
fn r_ttl_03_defaults_and_limits() {
    assert_eq!(
        EntitySettings::defaults(Tier::Standard).default_message_time_to_live,
        MAX_VALUE
    );
    assert_eq!(
        EntitySettings::defaults(Tier::Premium).default_message_time_to_live,
        MAX_VALUE
    );
    assert_eq!(
        EntitySettings::defaults(Tier::Basic).default_message_time_to_live,
        14 * DAY
    );
    let mut ns = ns();
    let err = ns
        .create_queue(
            "q",
            EntitySettings {
                default_message_time_to_live: 500,
                ..settings()
            },
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ArgumentOutOfRange);
    assert!(err.message.contains("1s"), "{}", err.message);
    let mut basic = Namespace::builder().tier(Tier::Basic).build();
    let err = basic
        .create_queue(
            "q",
            EntitySettings {
                default_message_time_to_live: 15 * DAY,
                ..EntitySettings::defaults(Tier::Basic)
            },
        )
        .unwrap_err();
    assert!(err.message.contains("14 days"), "{}", err.message);
    // Message TTL unset = MaxValue: with the Standard default, it never expires.
    queue(&mut ns, "ok", settings());
    ns.send("ok", msg("a", None)).unwrap();
    assert_eq!(
        ns.message("ok", 1, Perspective::Receive)
            .unwrap()
            .expires_at,
        NEVER
    );
}

fn topic_with_sub(ns: &mut Namespace, topic_ttl: i64, sub_ttl: i64) {
    ns.create_topic(
        "t",
        EntitySettings {
            default_message_time_to_live: topic_ttl,
            ..settings()
        },
    )
    .unwrap();
    ns.create_subscription(
        "t",
        "s",
        EntitySettings {
            default_message_time_to_live: sub_ttl,
            ..settings()
        },
        SubscriptionRule::MatchAll,
    )
    .unwrap();
}

#[test]
fn r_ttl_04_subscription_ttl_is_min_of_message_topic_and_subscription() {
    let mut ns = ns();
    topic_with_sub(&mut ns, 10 * MINUTE, 30 * MINUTE);
    ns.send("t", msg("none", None)).unwrap();
    ns.send("t", msg("long", Some(HOUR))).unwrap();
    ns.send("t", msg("short", Some(MINUTE))).unwrap();
    let p = "t/subscriptions/s";
    assert_eq!(
        ns.message(p, 1, Perspective::Receive).unwrap().expires_at,
        10 * MINUTE
    );
    assert_eq!(
        ns.message(p, 2, Perspective::Receive).unwrap().expires_at,
        10 * MINUTE
    );
    assert_eq!(
        ns.message(p, 3, Perspective::Receive).unwrap().expires_at,
        MINUTE
    );
}
use sbp_engine::time::HOUR;

#[test]
fn r_ttl_05_scheduled_message_expires_at_schedule_plus_ttl() {
    let mut ns = ns();
    queue(&mut ns, "q", dlq_on_expiry());
    ns.schedule("q", msg("a", Some(10 * MINUTE)), 5 * MINUTE)
        .unwrap();
    ns.advance_to(10 * MINUTE + SECOND);
    assert_eq!(counts(&ns, "q").active, 1, "not expired at send time + TTL");
    ns.advance_to(15 * MINUTE - 1);
    assert_eq!(counts(&ns, "q").active, 1);
    ns.advance_to(15 * MINUTE);
    assert_eq!(counts(&ns, "q").dead_lettered, 1);
}

#[test]
fn r_ttl_06_expired_message_is_never_received() {
    let mut ns = Namespace::builder()
        .expiry_mode(ExpiryMode::Realistic)
        .build();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", Some(SECOND))).unwrap();
    ns.send("q", msg("b", None)).unwrap();
    ns.advance_to(2 * SECOND);
    let got = recv(&mut ns, "q", 10);
    assert_eq!(
        got.iter()
            .map(|m| m.message_id.as_str())
            .collect::<Vec<_>>(),
        vec!["b"]
    );
}

#[test]
fn r_ttl_07_lazy_expiry_counts_and_peeks_but_never_receives() {
    let mut ns = Namespace::builder()
        .expiry_mode(ExpiryMode::Realistic)
        .build();
    queue(&mut ns, "q", dlq_on_expiry());
    ns.send("q", msg("a", Some(SECOND))).unwrap();
    ns.advance_to(MINUTE);
    assert_eq!(counts(&ns, "q").active, 1);
    assert_eq!(counts(&ns, "q").expired_uncollected, 1);
    let peeked = ns.peek(R, "q", None, 10).unwrap();
    assert!(peeked[0].nominally_expired);
    assert!(recv(&mut ns, "q", 1).is_empty());
    assert_eq!(
        counts(&ns, "q").dead_lettered,
        1,
        "the receive scan collected it"
    );
}

#[test]
fn r_ttl_08_realistic_mode_sweeps_only_while_a_receiver_is_attached() {
    let mut ns = Namespace::builder()
        .expiry_mode(ExpiryMode::Realistic)
        .sweep_interval(10 * SECOND)
        .build();
    queue(&mut ns, "q", dlq_on_expiry());
    ns.send("q", msg("a", Some(SECOND))).unwrap();
    ns.advance_to(HOUR);
    assert_eq!(
        counts(&ns, "q").dead_lettered,
        0,
        "not enforced without a receiver"
    );
    ns.send("q", msg("b", None)).unwrap();
    let got = recv(&mut ns, "q", 1); // scans past the expired one, attaches the receiver
    assert_eq!(got[0].message_id, "b");
    ns.send("q", msg("c", Some(SECOND))).unwrap();
    ns.advance_to(HOUR + 30 * SECOND);
    assert_eq!(counts(&ns, "q").dead_lettered, 2, "the sweep collected c");
    assert!(ns.log().iter().any(|e| e.rule == Some(Rule::Ttl08)));
}

/// TTL-09's setting: a message with a 10 s TTL, locked at t=0 for `lock`, on a queue that
/// dead-letters expired messages.
fn locked_with_ttl_10s(lock: i64) -> Namespace {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            lock_duration: lock,
            ..dlq_on_expiry()
        },
    );
    ns.send("q", msg("a", Some(10 * SECOND))).unwrap();
    recv(&mut ns, "q", 1);
    ns
}

#[test]
fn r_ttl_09_locked_message_is_not_expired_complete_succeeds() {
    let mut ns = locked_with_ttl_10s(MINUTE);
    ns.advance_to(30 * SECOND);
    assert_eq!(counts(&ns, "q").locked, 1);
    settle(&mut ns, "q", 1, Settlement::Complete).unwrap();
    let c = counts(&ns, "q");
    assert_eq!((c.active, c.locked, c.dead_lettered), (0, 0, 0));
    assert!(ns.log().iter().any(|e| e.rule == Some(Rule::Ttl09)));
}

#[test]
fn r_ttl_09_abandon_after_expiry_dead_letters_at_once() {
    let mut ns = locked_with_ttl_10s(MINUTE);
    ns.advance_to(30 * SECOND);
    settle(&mut ns, "q", 1, Settlement::Abandon).unwrap();
    assert_eq!(counts(&ns, "q").dead_lettered, 1);
    let d = ns
        .message("q/$deadletterqueue", 1, Perspective::Peek)
        .unwrap();
    assert_eq!(d.dead_letter_reason.as_deref(), Some("TTLExpiredException"));
}

#[test]
fn r_ttl_09_lapse_after_expiry_expires_at_once() {
    let mut ns = locked_with_ttl_10s(30 * SECOND);
    ns.advance_to(29 * SECOND);
    assert_eq!(counts(&ns, "q").dead_lettered, 0);
    ns.advance_to(30 * SECOND);
    assert_eq!(counts(&ns, "q").dead_lettered, 1);
}

#[test]
fn r_ttl_10_peek_shows_max_value_when_only_the_entity_default_applies() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            default_message_time_to_live: HOUR,
            ..settings()
        },
    );
    ns.send("q", msg("own", Some(MINUTE))).unwrap();
    ns.send("q", msg("default", None)).unwrap();
    let peek = ns.peek(R, "q", Some(1), 2).unwrap();
    assert_eq!(peek[0].expires_at, MINUTE);
    assert_eq!(peek[1].expires_at, NEVER);
    let got = recv(&mut ns, "q", 2);
    assert_eq!(got[1].expires_at, HOUR);
}

#[test]
fn r_ttl_11_expired_message_dead_lettered_with_flag_dropped_without() {
    let mut ns = ns();
    queue(&mut ns, "with", dlq_on_expiry());
    queue(&mut ns, "without", settings());
    ns.send("with", msg("a", Some(SECOND))).unwrap();
    ns.send("without", msg("b", Some(SECOND))).unwrap();
    ns.advance_to(SECOND);
    let d = ns
        .message("with/$deadletterqueue", 1, Perspective::Peek)
        .unwrap();
    assert_eq!(d.dead_letter_reason.as_deref(), Some("TTLExpiredException"));
    assert_eq!(
        d.dead_letter_error_description.as_deref(),
        Some("The message expired and was dead lettered.")
    );
    let c = counts(&ns, "without");
    assert_eq!((c.active, c.dead_lettered), (0, 0));
    assert!(kinds(&ns, 1).contains(&"ExpiredDropped"));
}

#[test]
fn r_ttl_12_nothing_expires_in_a_dead_letter_queue() {
    let mut ns = ns();
    queue(&mut ns, "q", dlq_on_expiry());
    ns.send("q", msg("a", Some(SECOND))).unwrap();
    ns.advance_to(365 * DAY);
    assert_eq!(counts(&ns, "q").dead_lettered, 1);
    let got = recv(&mut ns, "q/$deadletterqueue", 1);
    assert_eq!(got.len(), 1);
}

#[test]
fn r_ttl_13_deferred_message_not_swept_then_fails_with_message_not_found() {
    let mut ns = ns();
    queue(&mut ns, "q", dlq_on_expiry());
    ns.send("q", msg("a", Some(MINUTE))).unwrap();
    recv(&mut ns, "q", 1);
    settle(&mut ns, "q", 1, Settlement::Defer).unwrap();
    ns.advance_to(HOUR);
    assert_eq!(
        counts(&ns, "q").deferred,
        1,
        "a sweep does not expire a deferred message"
    );
    let err = ns.receive_deferred(R, "q", &[1]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::MessageNotFound);
    assert_eq!(counts(&ns, "q").dead_lettered, 1);
}

#[test]
fn r_ttl_14_very_short_ttl_warns() {
    assert!(sbp_engine::describe::short_ttl_warning(500)
        .unwrap()
        .contains("TTL-14"));
    assert!(sbp_engine::describe::short_ttl_warning(MINUTE).is_none());
}

#[test]
fn r_idle_01_idle_entity_deleted_with_messages_and_minimum_5_minutes() {
    let mut ns = ns();
    let err = ns
        .create_queue(
            "tiny",
            EntitySettings {
                auto_delete_on_idle: MINUTE,
                ..settings()
            },
        )
        .unwrap_err();
    assert!(err.message.contains("5 minutes"));
    queue(
        &mut ns,
        "q",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            ..settings()
        },
    );
    ns.send("q", msg("a", None)).unwrap();
    ns.advance_to(5 * MINUTE - 1);
    assert!(ns.entity("q").is_some());
    ns.advance_to(5 * MINUTE);
    assert!(ns.entity("q").is_none());
    assert!(ns.log().iter().any(|e| e.rule == Some(Rule::Idle01)));
}

#[test]
fn r_idle_02_peek_and_receive_keep_a_queue_alive_and_scheduled_messages_too() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            ..settings()
        },
    );
    ns.advance_to(4 * MINUTE);
    ns.peek(R, "q", None, 1).unwrap();
    ns.advance_to(8 * MINUTE);
    assert!(ns.entity("q").is_some(), "the peek at 4 min kept it alive");
    ns.schedule("q", msg("later", None), 20 * MINUTE).unwrap();
    ns.advance_to(19 * MINUTE);
    assert!(
        ns.entity("q").is_some(),
        "a scheduled message keeps it alive"
    );
    ns.advance_to(25 * MINUTE + 1);
    assert!(ns.entity("q").is_none());
    // A topic: operations on a subscription keep it alive; sends to the topic do not keep the subscription.
    ns.create_topic(
        "t",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            ..settings()
        },
    )
    .unwrap();
    ns.create_subscription(
        "t",
        "s",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            ..settings()
        },
        SubscriptionRule::MatchAll,
    )
    .unwrap();
    ns.advance_to(29 * MINUTE);
    ns.peek(R, "t/subscriptions/s", None, 1).unwrap();
    ns.advance_to(31 * MINUTE);
    assert!(ns.entity("t").is_some());
    ns.send("t", msg("x", None)).unwrap();
    ns.advance_to(34 * MINUTE + 1);
    assert!(
        ns.entity("t/subscriptions/s").is_none(),
        "sends to the topic do not count for the subscription"
    );
    assert!(ns.entity("t").is_some());
}

#[test]
fn r_idle_03_auto_forwarding_entity_is_never_idle() {
    let mut ns = ns();
    queue(&mut ns, "target", settings());
    queue(
        &mut ns,
        "fwd",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            forward_to: Some("target".into()),
            ..settings()
        },
    );
    ns.advance_to(DAY);
    assert!(ns.entity("fwd").is_some());
}

#[test]
fn r_idle_04_operations_on_a_deleted_entity_fail() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            ..settings()
        },
    );
    ns.advance_to(10 * MINUTE);
    let err = ns.send("q", msg("a", None)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::MessagingEntityNotFound);
    let err = ns
        .receive(R, "q", ReceiveMode::PeekLock, 1, ReceiveOptions::default())
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::MessagingEntityNotFound);
}

#[test]
fn r_send_01_rejection_carries_code_tracking_id_and_retryability() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.fault(Fault::ServerBusy {
        duration: 10 * SECOND,
    })
    .unwrap();
    let busy = ns.send("q", msg("a", None)).unwrap_err();
    assert_eq!(busy.kind, ErrorKind::ServerBusy);
    assert!(busy.is_transient);
    assert_eq!(busy.tracking_id.as_ref().map(String::len), Some(36));
    let big = NewMessage {
        body_size: Some(300 * 1024),
        ..msg("b", None)
    };
    ns.advance_to(10 * SECOND);
    let too_large = ns.send("q", big).unwrap_err();
    assert!(!too_large.is_transient);
    assert!(too_large.tracking_id.is_some());
    assert_ne!(busy.tracking_id, too_large.tracking_id);
}

#[test]
fn r_send_02_awaiting_each_send_costs_n_round_trips_overlapping_does_not() {
    let run = |strategy| send_lab::run(&SendLabSpec::seed_example(strategy));
    let one_by_one = run(SendStrategy::AwaitEach);
    assert!(
        one_by_one.caller_done >= 8 * SECOND,
        "{}",
        one_by_one.caller_done
    );
    let overlapped = run(SendStrategy::StartAllThenAwait);
    assert!(overlapped.caller_done < SECOND);
    let bounded = run(SendStrategy::Semaphore(10));
    assert!(bounded.caller_done < SECOND && bounded.caller_done > overlapped.caller_done);
    assert_eq!(
        bounded.max_in_flight, 10,
        "the semaphore bounds the sends in flight"
    );
}

#[test]
fn r_send_03_fire_and_forget_hides_its_queue_and_failures() {
    let spec = SendLabSpec {
        injected: Injected {
            quota_exceeded_every: 10,
            ..Default::default()
        },
        ..SendLabSpec::seed_example(SendStrategy::FireAndForget)
    };
    let r = send_lab::run(&spec);
    assert_eq!(r.caller_done, 0, "the caller moves on at once");
    assert_eq!(r.max_in_flight, 100, "every send waits in the hidden queue");
    assert_eq!((r.unobserved_failures, r.observed_failures), (10, 0));
    assert!(r.traces.iter().all(|t| !t.observed));
    let awaited = send_lab::run(&SendLabSpec {
        strategy: SendStrategy::AwaitEach,
        ..spec
    });
    assert_eq!(
        (awaited.unobserved_failures, awaited.observed_failures),
        (0, 10)
    );
}

#[test]
fn r_send_01_lab_rejections_carry_tracking_ids_and_busy_is_retried() {
    let spec = SendLabSpec {
        injected: Injected {
            server_busy_every: 4,
            entity_not_found_every: 25,
            ..Default::default()
        },
        ..SendLabSpec::seed_example(SendStrategy::AwaitEach)
    };
    let r = send_lab::run(&spec);
    let busy = &r.traces[3];
    let rejection = busy.rejection.as_ref().unwrap();
    assert_eq!(
        (
            rejection.error,
            rejection.is_transient,
            busy.attempts,
            busy.stored
        ),
        (ErrorKind::ServerBusy, true, 2, true)
    );
    assert_eq!(rejection.tracking_id.len(), 36);
    let gone = &r.traces[24];
    assert_eq!(
        (gone.rejection.as_ref().unwrap().error, gone.stored),
        (ErrorKind::MessagingEntityNotFound, false)
    );
    assert_eq!(busy.settled - busy.started, 80 + 800 + 80);
}

#[test]
fn r_send_04_rejections_not_found_quota_too_large_busy() {
    let mut ns = ns();
    queue(
        &mut ns,
        "small",
        EntitySettings {
            max_size_bytes: 8,
            ..settings()
        },
    );
    assert_eq!(
        ns.send("nope", msg("a", None)).unwrap_err().kind,
        ErrorKind::MessagingEntityNotFound
    );
    ns.send("small", msg("a", None)).unwrap();
    assert_eq!(
        ns.send("small", msg("b", None)).unwrap_err().kind,
        ErrorKind::QuotaExceeded
    );
    let huge = NewMessage {
        body_size: Some(257 * 1024),
        ..msg("c", None)
    };
    assert_eq!(
        ns.send("small", huge.clone()).unwrap_err().kind,
        ErrorKind::MessageSizeExceeded
    );
    let mut premium = Namespace::builder().tier(Tier::Premium).build();
    premium
        .create_queue("q", EntitySettings::defaults(Tier::Premium))
        .unwrap();
    assert!(premium.send("q", huge).is_ok(), "Premium allows 100 MB");
    ns.fault(Fault::ServerBusy { duration: SECOND }).unwrap();
    assert_eq!(
        ns.send("small", msg("d", None)).unwrap_err().kind,
        ErrorKind::ServerBusy
    );
}

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
        assert!(err.message.contains("5s..5m"));
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
        ns.message("q", 2, Perspective::Peek)
            .unwrap()
            .locked_until
            .is_some(),
        "still locked by renewals"
    );
    ns.advance_to(45 * SECOND + 3 * MINUTE);
    assert!(
        ns.message("q", 2, Perspective::Peek)
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
    let d = ns
        .message("q/$deadletterqueue", 3, Perspective::Peek)
        .unwrap();
    assert_eq!(d.dead_letter_reason.as_deref(), Some("Invalid"));
    assert_eq!(d.dead_letter_error_description.as_deref(), Some("bad json"));
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
    let d = ns
        .message("q/$deadletterqueue", 1, Perspective::Peek)
        .unwrap();
    assert_eq!(
        d.dead_letter_reason.as_deref(),
        Some("MaxDeliveryCountExceeded")
    );
    assert_eq!(d.delivery_count, 3);
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
fn r_dlq_01_paths_and_topics_have_none() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    topic_with_sub(&mut ns, MAX_VALUE, MAX_VALUE);
    assert!(ns.resolve("q/$deadletterqueue").unwrap().dlq);
    assert!(
        ns.resolve("t/subscriptions/s/$DeadLetterQueue")
            .unwrap()
            .dlq
    );
    assert_eq!(
        ns.resolve("t/$deadletterqueue").unwrap_err().kind,
        ErrorKind::MessagingEntityNotFound
    );
}

#[test]
fn r_dlq_02_dlq_can_be_peeked_and_received_but_not_dead_lettered_again() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    ns.send("q", msg("b", None)).unwrap();
    recv(&mut ns, "q", 2);
    settle(
        &mut ns,
        "q",
        1,
        Settlement::DeadLetter {
            reason: Some("x".into()),
            description: None,
        },
    )
    .unwrap();
    settle(
        &mut ns,
        "q",
        2,
        Settlement::DeadLetter {
            reason: Some("y".into()),
            description: None,
        },
    )
    .unwrap();
    let d = "q/$deadletterqueue";
    assert_eq!(ns.peek(R, d, None, 10).unwrap().len(), 2);
    recv(&mut ns, d, 1);
    let err = settle(
        &mut ns,
        d,
        1,
        Settlement::DeadLetter {
            reason: None,
            description: None,
        },
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    let rad = ns
        .receive(
            R,
            d,
            ReceiveMode::ReceiveAndDelete,
            5,
            ReceiveOptions::default(),
        )
        .unwrap();
    assert_eq!(rad.len(), 1);
}

#[test]
fn r_dlq_03_reason_and_description_are_also_application_properties() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            max_delivery_count: 1,
            ..settings()
        },
    );
    ns.send("q", msg("a", None)).unwrap();
    recv(&mut ns, "q", 1);
    settle(&mut ns, "q", 1, Settlement::Abandon).unwrap();
    let d = ns
        .message("q/$deadletterqueue", 1, Perspective::Peek)
        .unwrap();
    assert_eq!(
        d.application_properties
            .get("DeadLetterReason")
            .map(String::as_str),
        Some("MaxDeliveryCountExceeded")
    );
    assert!(d
        .application_properties
        .contains_key("DeadLetterErrorDescription"));
}

#[test]
fn r_sch_01_scheduled_until_its_time_cancel_removes() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    let a = ns.schedule("q", msg("a", None), MINUTE).unwrap();
    let b = ns.schedule("q", msg("b", None), MINUTE).unwrap();
    assert_eq!(
        ns.message("q", a, Perspective::Peek).unwrap().state,
        MessageState::Scheduled
    );
    assert!(recv(&mut ns, "q", 5).is_empty());
    ns.cancel_scheduled("q", b).unwrap();
    assert_eq!(
        ns.cancel_scheduled("q", b).unwrap_err().kind,
        ErrorKind::MessageNotFound
    );
    ns.advance_to(MINUTE);
    let m = ns.message("q", a, Perspective::Peek).unwrap();
    assert_eq!((m.state, m.enqueued_time), (MessageState::Active, MINUTE));
    assert!(ns.message("q", b, Perspective::Peek).is_none());
}

#[test]
fn r_top_01_topic_copies_to_matching_subscriptions_each_with_own_settings() {
    let mut ns = ns();
    ns.create_topic("t", settings()).unwrap();
    ns.create_subscription(
        "t",
        "all",
        EntitySettings {
            max_delivery_count: 1,
            ..settings()
        },
        SubscriptionRule::MatchAll,
    )
    .unwrap();
    let rule = SubscriptionRule::Correlation {
        subject: Some("invoice".into()),
        correlation_id: None,
        message_id: None,
        application_properties: Default::default(),
    };
    ns.create_subscription("t", "invoices", settings(), rule)
        .unwrap();
    ns.send(
        "t",
        NewMessage {
            subject: Some("invoice".into()),
            ..msg("i", None)
        },
    )
    .unwrap();
    ns.send(
        "t",
        NewMessage {
            subject: Some("order".into()),
            ..msg("o", None)
        },
    )
    .unwrap();
    assert_eq!(counts(&ns, "t/subscriptions/all").active, 2);
    assert_eq!(counts(&ns, "t/subscriptions/invoices").active, 1);
    recv(&mut ns, "t/subscriptions/all", 1);
    settle(&mut ns, "t/subscriptions/all", 1, Settlement::Abandon).unwrap();
    assert_eq!(
        counts(&ns, "t/subscriptions/all").dead_lettered,
        1,
        "its own MaxDeliveryCount of 1"
    );
    assert_eq!(counts(&ns, "t/subscriptions/invoices").active, 1);
}

#[test]
fn r_tier_01_basic_has_no_topics_and_ttl_at_most_14_days() {
    let mut basic = Namespace::builder().tier(Tier::Basic).build();
    assert_eq!(
        basic
            .create_topic("t", EntitySettings::defaults(Tier::Basic))
            .unwrap_err()
            .kind,
        ErrorKind::NotSupported
    );
    basic
        .create_queue("q", EntitySettings::defaults(Tier::Basic))
        .unwrap();
    basic.send("q", msg("a", Some(MAX_VALUE))).unwrap();
    assert_eq!(
        basic.message("q", 1, Perspective::Peek).unwrap().expires_at,
        14 * DAY
    );
    let mut standard = ns();
    standard.create_topic("t", settings()).unwrap();
}

#[test]
fn forwarding_moves_messages_and_dead_letters() {
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
fn open_question_max_delivery_count_wins_over_expiry() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            max_delivery_count: 1,
            ..dlq_on_expiry()
        },
    );
    ns.send("q", msg("a", Some(10 * SECOND))).unwrap();
    recv(&mut ns, "q", 1);
    ns.advance_to(30 * SECOND);
    let d = ns
        .message("q/$deadletterqueue", 1, Perspective::Peek)
        .unwrap();
    assert_eq!(
        d.dead_letter_reason.as_deref(),
        Some("MaxDeliveryCountExceeded")
    );
}

#[test]
fn next_due_and_next_event_name_the_next_timer() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", Some(MINUTE))).unwrap();
    recv(&mut ns, "q", 1);
    assert_eq!(ns.next_due(), Some(30 * SECOND));
    let (at, what) = ns.next_event().unwrap();
    assert_eq!(at, 30 * SECOND);
    assert_eq!(what, "lock of #1 in q lapses");
    settle(&mut ns, "q", 1, Settlement::Complete).unwrap();
    assert_eq!(ns.next_due(), None, "stale timers are skipped");
}

#[test]
fn a_receivers_handles_stay_bounded_but_recent_double_settles_still_fail_with_lock_lost() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    for round in 0..25u64 {
        for _ in 0..1000 {
            ns.send("q", msg("m", None)).unwrap();
        }
        for m in ns
            .receive(
                R,
                "q",
                ReceiveMode::PeekLock,
                1000,
                ReceiveOptions::default(),
            )
            .unwrap()
        {
            settle(&mut ns, "q", m.sequence_number, Settlement::Complete).unwrap();
        }
        let last = (round + 1) * 1000;
        // RCV-08 for a message settled a moment ago.
        assert_eq!(
            settle(&mut ns, "q", last, Settlement::Complete)
                .unwrap_err()
                .kind,
            ErrorKind::MessageLockLost
        );
    }
    assert!(
        ns.receivers()[0].handles.len() <= 20_000,
        "{}",
        ns.receivers()[0].handles.len()
    );
}

#[test]
fn r_idle_01_a_shorter_auto_delete_on_idle_takes_effect_from_the_update() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            auto_delete_on_idle: HOUR,
            ..settings()
        },
    );
    ns.advance_to(MINUTE);
    ns.update_entity(
        "q",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            ..settings()
        },
    )
    .unwrap();
    ns.advance_to(6 * MINUTE - 1);
    assert!(ns.entity("q").is_some());
    ns.advance_to(6 * MINUTE);
    assert!(
        ns.entity("q").is_none(),
        "deleted 5 minutes after the update, not after an hour"
    );
    queue(
        &mut ns,
        "r",
        EntitySettings {
            auto_delete_on_idle: 5 * MINUTE,
            ..settings()
        },
    );
    ns.update_entity("r", settings()).unwrap();
    ns.advance_to(HOUR);
    assert!(ns.entity("r").is_some(), "AutoDeleteOnIdle back to never");
}
