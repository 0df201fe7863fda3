use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn detecting(window: i64) -> EntitySettings {
    EntitySettings {
        requires_duplicate_detection: true,
        duplicate_detection_history_time_window: window,
        ..settings()
    }
}

#[test]
fn r_dup_01_chosen_at_creation_window_20s_to_7_days() {
    let mut ns = ns();
    assert_eq!(settings().duplicate_detection_history_time_window, MINUTE);
    for bad in [19 * SECOND, 7 * DAY + 1] {
        let err = ns.create_queue("q", detecting(bad)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::ArgumentOutOfRange);
        assert_eq!(
            err.field.as_deref(),
            Some("DuplicateDetectionHistoryTimeWindow")
        );
    }
    queue(&mut ns, "q", detecting(20 * SECOND));
    queue(&mut ns, "plain", settings());
    // Turning it on or off later is refused; the window may change.
    let err = ns.update_entity("plain", detecting(MINUTE)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidOperation);
    assert!(err.to_string().contains("DUP-01"), "{err}");
    assert!(ns.update_entity("q", settings()).is_err());
    ns.update_entity("q", detecting(7 * DAY)).unwrap();
    // A subscription has none of its own.
    ns.create_topic("t", detecting(MINUTE)).unwrap();
    let err = ns
        .create_subscription("t", "s", detecting(MINUTE), SubscriptionRule::MatchAll)
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("RequiresDuplicateDetection"));
}

#[test]
fn r_dup_02_a_duplicate_is_acknowledged_and_dropped_scheduled_ones_count_at_send() {
    let mut ns = ns();
    queue(&mut ns, "q", detecting(MINUTE));
    assert_eq!(ns.send("q", msg("order-1", None)).unwrap(), 1);
    ns.advance_to(10 * SECOND);
    // Acknowledged (no error), but no SequenceNumber and nothing stored.
    assert_eq!(ns.send("q", msg("order-1", None)).unwrap(), 0);
    assert_eq!(ns.schedule("q", msg("order-1", None), MINUTE).unwrap(), 0);
    assert_eq!(counts(&ns, "q").active, 1);
    assert_eq!(counts(&ns, "q").scheduled, 0);
    assert_eq!(ns.entity("q").unwrap().duplicates_dropped, 2);
    let dropped: Vec<&Event> = ns
        .log()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::DuplicateDropped { .. }))
        .collect();
    assert_eq!(dropped.len(), 2);
    assert_eq!(dropped[0].rule, Some(Rule::Dup02));
    // Another MessageId is no duplicate; it takes the next SequenceNumber (MSG-01).
    assert_eq!(ns.send("q", msg("order-2", None)).unwrap(), 2);
    // A scheduled message counts at send: its id is remembered from then.
    assert_eq!(
        ns.schedule("q", msg("later", None), 30 * MINUTE).unwrap(),
        3
    );
    assert_eq!(ns.send("q", msg("later", None)).unwrap(), 0);
    // Receivers only ever see the first of each.
    let got = recv(&mut ns, "q", 10);
    let ids: Vec<&str> = got.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids, vec!["order-1", "order-2"]);
    // Without duplicate detection the same id is two messages; without an id of its own a
    // message is never a duplicate.
    queue(&mut ns, "plain", settings());
    assert_eq!(ns.send("plain", msg("x", None)).unwrap(), 1);
    assert_eq!(ns.send("plain", msg("x", None)).unwrap(), 2);
    let unnamed = NewMessage::default();
    assert_eq!(ns.send("q", unnamed.clone()).unwrap(), 4);
    assert_eq!(ns.send("q", unnamed).unwrap(), 5);
}

#[test]
fn r_dup_02_a_topic_drops_a_duplicate_before_its_subscriptions_see_it() {
    let mut ns = ns();
    ns.create_topic("t", detecting(MINUTE)).unwrap();
    ns.create_subscription("t", "s", settings(), SubscriptionRule::MatchAll)
        .unwrap();
    ns.send("t", msg("a", None)).unwrap();
    assert_eq!(ns.send("t", msg("a", None)).unwrap(), 0);
    assert_eq!(counts(&ns, "t/subscriptions/s").active, 1);
}

#[test]
fn r_dup_03_the_window_slides_from_the_accepted_send() {
    let mut ns = ns();
    queue(&mut ns, "q", detecting(MINUTE));
    ns.send("q", msg("a", None)).unwrap();
    ns.advance_to(30 * SECOND);
    // A duplicate does not restart the window.
    assert_eq!(ns.send("q", msg("a", None)).unwrap(), 0);
    ns.advance_to(MINUTE - 1);
    assert_eq!(ns.send("q", msg("a", None)).unwrap(), 0);
    // A window after the accepted send it is new again, and remembered from then.
    ns.advance_to(MINUTE);
    assert_eq!(ns.send("q", msg("a", None)).unwrap(), 2);
    ns.advance_to(MINUTE + 59 * SECOND);
    assert_eq!(ns.send("q", msg("a", None)).unwrap(), 0);
    ns.advance_to(2 * MINUTE);
    assert_eq!(ns.send("q", msg("a", None)).unwrap(), 3);
    // Widening the window keeps what is remembered.
    ns.update_entity("q", detecting(HOUR)).unwrap();
    ns.advance_to(30 * MINUTE);
    assert_eq!(ns.send("q", msg("a", None)).unwrap(), 0);
}

#[test]
fn r_dup_02_a_message_forwarded_into_the_entity_is_not_checked() {
    // A choice (docs/RULES.md): no source says whether auto-forwarding into an entity with
    // duplicate detection checks the MessageId; the playground does not.
    let mut ns = ns();
    queue(
        &mut ns,
        "orders",
        EntitySettings {
            requires_duplicate_detection: true,
            ..settings()
        },
    );
    queue(
        &mut ns,
        "inbox",
        EntitySettings {
            forward_to: Some("orders".into()),
            ..settings()
        },
    );
    ns.send("orders", msg("same", None)).unwrap();
    ns.send("inbox", msg("same", None)).unwrap();
    assert_eq!(ns.entity("orders").unwrap().duplicates_dropped, 0);
    assert_eq!(counts(&ns, "orders").active, 2);
    // A direct send with that MessageId is a duplicate.
    ns.send("orders", msg("same", None)).unwrap();
    assert_eq!(ns.entity("orders").unwrap().duplicates_dropped, 1);
}
