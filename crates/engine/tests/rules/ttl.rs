use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

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
    assert!(err.message.to_string().contains("1s"), "{}", err.message);
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
    assert!(
        err.message.to_string().contains("14 days"),
        "{}",
        err.message
    );
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

pub fn topic_with_sub(ns: &mut Namespace, topic_ttl: i64, sub_ttl: i64) {
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
pub fn locked_with_ttl_10s(lock: i64) -> Namespace {
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

/// TTL-09: while a lock holds the message, its ExpiresAt is no event: what comes next is the
/// lock's lapse, not an expiry ("Next event" says what the engine will do).
#[test]
fn r_ttl_09_next_event_of_a_locked_message_is_its_lapse_not_its_expiry() {
    use sbp_engine::timer::Due;
    let mut ns = locked_with_ttl_10s(30 * SECOND);
    assert_eq!(
        ns.next_event(),
        Some((
            30 * SECOND,
            Due::LockLapse {
                path: "q".into(),
                seq: 1
            }
        ))
    );
    // Abandoned before its ExpiresAt, it is receivable again and its expiry is next.
    settle(&mut ns, "q", 1, Settlement::Abandon).unwrap();
    assert_eq!(
        ns.next_event(),
        Some((
            10 * SECOND,
            Due::Expire {
                path: "q".into(),
                seq: 1
            }
        ))
    );
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
        .to_string()
        .contains("TTL-14"));
    assert!(sbp_engine::describe::short_ttl_warning(MINUTE).is_none());
}

#[test]
fn r_ttl_05_a_scheduled_message_keeps_the_default_ttl_of_its_scheduling() {
    // A choice (docs/RULES.md): no source says which default a scheduled message takes when
    // the entity's DefaultMessageTimeToLive changes before it is enqueued; the playground
    // takes the one of the moment it was scheduled, and a direct send takes the new one.
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            default_message_time_to_live: HOUR,
            ..settings()
        },
    );
    ns.schedule("q", msg("scheduled", None), 10 * MINUTE)
        .unwrap();
    ns.update_entity(
        "q",
        EntitySettings {
            default_message_time_to_live: 2 * HOUR,
            ..settings()
        },
    )
    .unwrap();
    ns.advance_to(10 * MINUTE);
    ns.send("q", msg("direct", None)).unwrap();
    let scheduled = ns.message("q", 1, Perspective::Receive).unwrap();
    let direct = ns.message("q", 2, Perspective::Receive).unwrap();
    assert_eq!(scheduled.expires_at, 10 * MINUTE + HOUR);
    assert_eq!(direct.expires_at, 10 * MINUTE + 2 * HOUR);
}

/// TTL-06 in exact expiry: each message leaves at its own ExpiresAt, whatever the others of its
/// page of 64 SequenceNumbers do (the engine keeps one expiry timer per page): a later message
/// with a shorter TTL goes first, a longer one after it, each at its instant, in the log too.
#[test]
fn r_ttl_06_each_message_of_a_page_expires_at_its_own_instant() {
    let mut ns = ns();
    queue(&mut ns, "q", dlq_on_expiry());
    ns.send("q", msg("ten", Some(10 * SECOND))).unwrap();
    ns.send("q", msg("five", Some(5 * SECOND))).unwrap();
    ns.send("q", msg("twenty", Some(20 * SECOND))).unwrap();
    let mut expiries = Vec::new();
    while let Some(at) = ns.next_due() {
        ns.advance_to(at);
        for e in ns.log().iter().filter(|e| e.kind.name() == "DeadLettered") {
            if !expiries.contains(&(e.at, e.seq)) {
                expiries.push((e.at, e.seq));
            }
        }
    }
    assert_eq!(
        expiries,
        vec![(5 * SECOND, 2), (10 * SECOND, 1), (20 * SECOND, 3)]
    );
}

/// TTL-09 beside TTL-06: the page's first message locked past its ExpiresAt holds back no other
/// message's expiry: "Next event" names the next one, which expires at its instant, before a
/// scheduled message activates at the same instant (expiries fire first), as the log then shows.
#[test]
fn r_ttl_09_a_locked_first_message_holds_back_no_other_expiry() {
    use sbp_engine::timer::Due;
    let mut ns = locked_with_ttl_10s(MINUTE);
    ns.send("q", msg("b", Some(20 * SECOND))).unwrap();
    ns.schedule("q", msg("c", None), 20 * SECOND).unwrap();
    assert_eq!(
        ns.next_event(),
        Some((
            20 * SECOND,
            Due::Expire {
                path: "q".into(),
                seq: 2
            }
        ))
    );
    ns.advance_to(20 * SECOND);
    let c = counts(&ns, "q");
    assert_eq!((c.locked, c.active, c.dead_lettered), (1, 1, 1));
    let at_20: Vec<(&str, u64)> = ns
        .log()
        .iter()
        .filter(|e| e.at == 20 * SECOND)
        .map(|e| (e.kind.name(), e.seq))
        .collect();
    assert_eq!(at_20, vec![("DeadLettered", 2), ("Activated", 3)]);
}
