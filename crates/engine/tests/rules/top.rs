use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

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
        system_properties: Default::default(),
        action: None,
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
fn r_top_01_a_subscription_name_has_at_most_50_characters() {
    // The SDK's CreateSubscriptionOptions.SubscriptionName: "Value cannot exceed 50 chars".
    let mut ns = ns();
    ns.create_topic("t", settings()).unwrap();
    let fifty = "s".repeat(50);
    ns.create_subscription("t", &fifty, settings(), SubscriptionRule::MatchAll)
        .unwrap();
    let err = ns
        .create_subscription("t", &"s".repeat(51), settings(), SubscriptionRule::MatchAll)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ArgumentOutOfRange);
    assert_eq!(err.field.as_deref(), Some("Name"));
}
