//! The namespace as a map: places, standing edges, and the edge each event moves a message along.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use sbp_engine::time::SECOND;
use sbp_engine::*;

fn settings() -> EntitySettings {
    EntitySettings::defaults(Tier::Standard)
}
fn queue(ns: &Namespace, path: &str, dlq: bool) -> Place {
    Place::Queue(QueueRef {
        entity: ns.entity(path).expect("entity").id,
        dlq,
    })
}

/// A topic fanning out to two subscriptions, one forwarding to a queue whose DLQ a consumer
/// group reads; every movement lands on a standing edge of the map.
#[test]
fn fan_out_forward_dead_letter_receive_and_settle_move_along_the_maps_edges() {
    let mut ns = Namespace::builder().seed(3).build();
    ns.create_queue(
        "work",
        EntitySettings {
            max_delivery_count: 1,
            ..settings()
        },
    )
    .unwrap();
    ns.create_topic("orders", settings()).unwrap();
    ns.create_subscription("orders", "audit", settings(), SubscriptionRule::MatchAll)
        .unwrap();
    ns.create_subscription(
        "orders",
        "ship",
        EntitySettings {
            forward_to: Some("work".into()),
            ..settings()
        },
        SubscriptionRule::MatchAll,
    )
    .unwrap();
    ns.start_consumers(ConsumerSpec {
        abandon: 1.0,
        ..ConsumerSpec::new("workers", "work")
    })
    .unwrap();
    let before = ns.log().len();
    ns.send("orders", NewMessage::default()).unwrap();
    ns.advance_to(10 * SECOND);
    let map = ns.map();
    let flows: Vec<Flow> = ns.log()[before..]
        .iter()
        .filter_map(|e| map.flow(e))
        .collect();
    let moved = |from: Place, to: Place, movement: Movement| {
        flows
            .iter()
            .any(|f| f.from == from && f.to == to && f.movement == movement)
    };
    let topic = queue(&ns, "orders", false);
    let (audit, ship, work) = (
        queue(&ns, "orders/subscriptions/audit", false),
        queue(&ns, "orders/subscriptions/ship", false),
        queue(&ns, "work", false),
    );
    assert!(moved(Place::Client, topic, Movement::Send));
    assert!(moved(topic, audit, Movement::FanOut));
    assert!(moved(topic, ship, Movement::FanOut));
    assert!(moved(ship, work, Movement::Forward));
    assert!(moved(work, Place::Consumers(0), Movement::Receive));
    assert!(moved(Place::Consumers(0), work, Movement::Settle));
    assert!(moved(work, queue(&ns, "work", true), Movement::DeadLetter));
    // "Your sends" feed the topic; the queue a forward feeds gets no such edge.
    let client_edge = |to: Place| {
        map.edges
            .iter()
            .any(|e| e.from == Place::Client && e.to == to)
    };
    assert!(client_edge(topic));
    assert!(!client_edge(work), "a forward target is fed by the forward");
    // Every movement between two places runs along a standing edge (either way).
    for f in flows.iter().filter(|f| f.movement != Movement::Vanish) {
        assert!(
            map.edges
                .iter()
                .any(|e| (e.from, e.to) == (f.from, f.to) || (e.from, e.to) == (f.to, f.from)),
            "{f:?} has no edge"
        );
    }
    // Places in creation order: adding an entity later appends, nothing moves.
    let order: Vec<Place> = map.places.iter().map(|p| p.place).collect();
    ns.create_queue("later", settings()).unwrap();
    let after: Vec<Place> = ns.map().places.iter().map(|p| p.place).collect();
    let kept: Vec<Place> = after
        .iter()
        .copied()
        .filter(|p| order.contains(p))
        .collect();
    assert_eq!(kept, order, "existing places keep their order");
}

#[test]
fn a_filter_and_the_forward_settings_label_their_edges() {
    let mut ns = Namespace::builder().build();
    ns.create_queue("dlq-sink", settings()).unwrap();
    ns.create_queue(
        "q",
        EntitySettings {
            forward_dead_lettered_messages_to: Some("dlq-sink".into()),
            ..settings()
        },
    )
    .unwrap();
    ns.create_topic("t", settings()).unwrap();
    ns.create_subscription(
        "t",
        "red",
        settings(),
        SubscriptionRule::Correlation {
            subject: Some("red".into()),
            correlation_id: None,
            message_id: None,
            application_properties: Default::default(),
            system_properties: Default::default(),
            action: None,
        },
    )
    .unwrap();
    let map = ns.map();
    let label = |m: Movement| {
        map.edges
            .iter()
            .filter(|e| e.movement == m)
            .map(|e| e.label.clone())
            .collect::<Vec<_>>()
    };
    assert!(label(Movement::FanOut).contains(&"Subject = red".to_string()));
    let forward = map
        .edges
        .iter()
        .find(|e| e.movement == Movement::Forward)
        .expect("a forward edge");
    assert_eq!(forward.label, "ForwardDeadLetteredMessagesTo");
    assert_eq!(forward.from, queue(&ns, "q", true));
    assert_eq!(forward.to, queue(&ns, "dlq-sink", false));
}

#[test]
fn a_copy_changed_by_a_rules_action_still_fans_out_along_the_topics_edge() {
    let mut ns = Namespace::builder().seed(3).build();
    ns.create_topic("t", settings()).unwrap();
    let rule = sbp_engine::entity::SqlRule::new("1 = 1", Some("SET tagged = 'yes'")).unwrap();
    ns.create_subscription("t", "s", settings(), SubscriptionRule::Sql(Box::new(rule)))
        .unwrap();
    let before = ns.log().len();
    ns.send("t", NewMessage::default()).unwrap();
    let map = ns.map();
    let flows: Vec<Flow> = ns.log()[before..]
        .iter()
        .filter_map(|e| map.flow(e))
        .collect();
    let (topic, sub) = (
        queue(&ns, "t", false),
        queue(&ns, "t/subscriptions/s", false),
    );
    assert!(flows
        .iter()
        .any(|f| f.from == topic && f.to == sub && f.movement == Movement::FanOut));
    assert!(!flows
        .iter()
        .any(|f| f.to == sub && f.movement == Movement::Send));
}

/// A receiver's place counts the locks it holds now: once its lock lapsed (RCV-06) it holds
/// nothing, though it keeps the handle a late settlement is refused with (RCV-08).
#[test]
fn a_receiver_holds_nothing_once_its_lock_lapsed() {
    let mut ns = Namespace::builder().seed(1).build();
    ns.create_queue("orders", settings()).unwrap();
    ns.send("orders", NewMessage::default()).unwrap();
    ns.receive(
        "worker",
        "orders",
        ReceiveMode::PeekLock,
        1,
        ReceiveOptions::default(),
    )
    .unwrap();
    let held = |ns: &Namespace| {
        ns.map()
            .places
            .iter()
            .find(|p| p.kind == PlaceKind::Receiver)
            .map(|p| p.depth)
    };
    assert_eq!(held(&ns), Some(1));
    ns.advance_to(30 * SECOND); // LockDuration 30s: the lock lapses
    assert_eq!(held(&ns), Some(0));
}
