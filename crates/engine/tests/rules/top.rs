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
