use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

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
    assert!(err.message.to_string().contains("5 minutes"));
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

#[test]
fn r_idle_02_a_new_rule_keeps_a_subscription_alive() {
    let mut ns = ns();
    ns.create_topic("t", settings()).unwrap();
    let idle = EntitySettings {
        auto_delete_on_idle: 5 * MINUTE,
        ..settings()
    };
    ns.create_subscription("t", "s", idle, SubscriptionRule::MatchAll)
        .unwrap();
    ns.advance_to(4 * MINUTE);
    ns.create_rule(
        "t/subscriptions/s",
        "late",
        SubscriptionRule::Sql(Box::new(
            sbp_engine::entity::SqlRule::new("1 = 1", None).unwrap(),
        )),
    )
    .unwrap();
    ns.advance_to(8 * MINUTE);
    assert!(
        ns.entity("t/subscriptions/s").is_some(),
        "the rule was activity at 4 min"
    );
    ns.advance_to(9 * MINUTE);
    assert!(ns.entity("t/subscriptions/s").is_none());
}

#[test]
fn r_idle_03_a_forwarding_source_reports_auto_delete_on_idle_as_max_value() {
    // "When autoforwarding is setup, the value for AutoDeleteOnIdle on the source entity is
    // automatically set to the maximum value of the data type" (Chaining entities).
    let mut ns = ns();
    queue(&mut ns, "target", settings());
    let asked = EntitySettings {
        auto_delete_on_idle: 10 * MINUTE,
        forward_to: Some("target".into()),
        ..settings()
    };
    queue(&mut ns, "fwd", asked.clone());
    assert_eq!(
        ns.entity("fwd").unwrap().settings.auto_delete_on_idle,
        MAX_VALUE
    );
    // On an update too; the target keeps what it was given.
    let plain = EntitySettings {
        auto_delete_on_idle: 10 * MINUTE,
        ..settings()
    };
    queue(&mut ns, "later", plain.clone());
    assert_eq!(
        ns.entity("later").unwrap().settings.auto_delete_on_idle,
        10 * MINUTE
    );
    ns.update_entity("later", asked).unwrap();
    assert_eq!(
        ns.entity("later").unwrap().settings.auto_delete_on_idle,
        MAX_VALUE
    );
    ns.update_entity("target", plain).unwrap();
    assert_eq!(
        ns.entity("target").unwrap().settings.auto_delete_on_idle,
        10 * MINUTE
    );
}
