use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

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
            .and_then(PropertyValue::as_str),
        Some("MaxDeliveryCountExceeded")
    );
    assert!(d
        .application_properties
        .contains_key("DeadLetterErrorDescription"));
}

#[test]
fn r_dlq_02_a_locked_dead_letter_card_offers_every_settlement_but_dead_letter() {
    let mut ns = ns();
    queue(&mut ns, "q", dlq_on_expiry());
    ns.send("q", msg("a", Some(SECOND))).unwrap();
    ns.advance_to(SECOND);
    recv(&mut ns, "q/$deadletterqueue", 1);
    let q = ns.resolve("q/$deadletterqueue").unwrap();
    let m = &ns.entity("q").unwrap().dlq.messages.get(&1).unwrap();
    let card = ns.card(q, m);
    assert!(!card.settlements.contains(&SettleKind::DeadLetter));
    assert!(card.settlements.contains(&SettleKind::Complete));
    assert_eq!(card.expiry, CardExpiry::NeverInDeadLetterQueue, "TTL-12");
    assert_eq!(
        card.dead_letter_reason.as_deref(),
        Some("TTLExpiredException")
    );
}
