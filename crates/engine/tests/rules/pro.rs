use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn emulator() -> Namespace {
    Namespace::builder().tier(Tier::Emulator).seed(1).build()
}

#[test]
fn r_pro_01_the_emulator_profile_follows_its_config_schema() {
    // Its defaults: TTL 1 h, LockDuration 1 min, MaxDeliveryCount 3, duplicate window 20 s.
    let d = EntitySettings::defaults(Tier::Emulator);
    assert_eq!(d.default_message_time_to_live, HOUR);
    assert_eq!(d.lock_duration, MINUTE);
    assert_eq!(d.max_delivery_count, 3);
    assert_eq!(d.duplicate_detection_history_time_window, 20 * SECOND);
    let mut ns = emulator();
    ns.create_queue("q", d.clone()).unwrap();
    // A message's TTL is capped at the entity's 1 h (TTL-02).
    ns.send("q", msg("a", Some(DAY))).unwrap();
    assert_eq!(
        ns.message("q", 1, Perspective::Receive).unwrap().expires_at,
        HOUR
    );
    // Its limits, each refused naming the field.
    let refused = |ns: &mut Namespace, s: EntitySettings, field: &str| {
        let err = ns.create_queue("bad", s).unwrap_err();
        assert_eq!(err.kind, ErrorKind::ArgumentOutOfRange);
        assert_eq!(err.field.as_deref(), Some(field));
        assert!(err.to_string().contains("PRO-01"), "{err}");
    };
    for ttl in [4 * MINUTE, HOUR + 1] {
        let s = EntitySettings {
            default_message_time_to_live: ttl,
            ..d.clone()
        };
        refused(&mut ns, s, "DefaultMessageTimeToLive");
    }
    for window in [4 * SECOND, 5 * MINUTE + 1] {
        let s = EntitySettings {
            duplicate_detection_history_time_window: window,
            ..d.clone()
        };
        refused(&mut ns, s, "DuplicateDetectionHistoryTimeWindow");
    }
    let s = EntitySettings {
        max_delivery_count: 11,
        ..d.clone()
    };
    refused(&mut ns, s, "MaxDeliveryCount");
    // What Azure allows and the emulator refuses is the other way round too: a 5 s window.
    let mut azure = ns_standard();
    let s = EntitySettings {
        duplicate_detection_history_time_window: 5 * SECOND,
        ..settings()
    };
    assert!(azure.create_queue("w", s.clone()).is_err());
    let emulator_window = EntitySettings {
        requires_duplicate_detection: true,
        duplicate_detection_history_time_window: 5 * SECOND,
        ..d.clone()
    };
    ns.create_queue("w", emulator_window).unwrap();
    // A subscription locks for 1 min at least.
    ns.create_topic("t", d.clone()).unwrap();
    let short = EntitySettings {
        lock_duration: 30 * SECOND,
        ..d.clone()
    };
    let err = ns
        .create_subscription("t", "s", short, SubscriptionRule::MatchAll)
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("LockDuration"));
    ns.create_subscription("t", "s", d.clone(), SubscriptionRule::MatchAll)
        .unwrap();
    // At most 50 queues and topics (subscriptions do not count).
    for i in 4..=50 {
        ns.create_queue(&format!("q{i}"), d.clone()).unwrap();
    }
    let err = ns.create_queue("one-more", d.clone()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::QuotaExceeded);
    ns.create_subscription("t", "s2", d, SubscriptionRule::MatchAll)
        .unwrap();
}

fn ns_standard() -> Namespace {
    Namespace::builder().tier(Tier::Standard).seed(1).build()
}

#[test]
fn r_pro_01_the_emulator_holds_50_subscriptions_a_topic() {
    let d = EntitySettings::defaults(Tier::Emulator);
    let mut ns = emulator();
    ns.create_topic("t", d.clone()).unwrap();
    for i in 1..=50 {
        ns.create_subscription("t", &format!("s{i}"), d.clone(), SubscriptionRule::MatchAll)
            .unwrap();
    }
    let err = ns
        .create_subscription("t", "s51", d.clone(), SubscriptionRule::MatchAll)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::QuotaExceeded);
    assert!(
        err.to_string().contains("50") && err.to_string().contains("PRO-01"),
        "{err}"
    );
    assert!(ns.entity("t/subscriptions/s51").is_none());
    // Azure's Standard tier takes a 51st.
    let mut azure = ns_standard();
    azure.create_topic("t", settings()).unwrap();
    for i in 1..=51 {
        azure
            .create_subscription(
                "t",
                &format!("s{i}"),
                settings(),
                SubscriptionRule::MatchAll,
            )
            .unwrap();
    }
}

#[test]
fn r_pro_01_the_emulator_names_start_and_end_with_a_letter_or_digit() {
    let d = EntitySettings::defaults(Tier::Emulator);
    let mut ns = emulator();
    for bad in ["-orders", "orders.", "_q", "a_"] {
        let err = ns.create_queue(bad, d.clone()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::ArgumentOutOfRange, "{bad}");
        assert_eq!(err.field.as_deref(), Some("Name"));
        assert!(err.to_string().contains("PRO-01"), "{err}");
        assert!(ns.create_topic(bad, d.clone()).is_err(), "{bad}");
    }
    for good in ["a", "orders", "order-v2.eu_1", "9"] {
        ns.create_queue(good, d.clone()).unwrap();
    }
    ns.create_topic("t", d.clone()).unwrap();
    assert!(ns
        .create_subscription("t", "sub-", d.clone(), SubscriptionRule::MatchAll)
        .is_err());
    let rules = vec![("_rule".to_string(), SubscriptionRule::MatchAll)];
    assert!(ns
        .create_subscription_with_rules("t", "s", d.clone(), rules)
        .is_err());
    ns.create_subscription("t", "s", d, SubscriptionRule::MatchAll)
        .unwrap();
    assert!(ns
        .create_rule("t/subscriptions/s", "rule.", SubscriptionRule::MatchAll)
        .is_err());
    // Azure takes those names ("Cannot start or end with a slash" is its only such rule).
    let mut azure = ns_standard();
    azure.create_queue("-orders", settings()).unwrap();
    azure.create_queue("orders.", settings()).unwrap();
}
