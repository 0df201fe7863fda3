//! What the terminal says of each operation: the rule of what that operation did, not of an
//! earlier one.
use sbp_scenario::{Scenario, SendDef};
use sbp_server::broker::{unix_now, Broker, Settle};

/// A send, a receive and a complete are told with their rules (TTL-01, RCV-02, RCV-05); a peek
/// and a receive that finds nothing log nothing, and are told with none (they used to repeat
/// the last settlement's RCV-05).
#[test]
fn r_rcv_05_each_operation_is_told_with_the_rule_of_what_it_did_and_a_peek_with_none() {
    let scenario = Scenario::from_json(r#"{"version":1,"entities":[{"queue":"orders"}]}"#).unwrap();
    let mut broker = Broker::new(scenario, unix_now()).unwrap();
    let send = SendDef {
        to: "orders".into(),
        ..SendDef::default()
    };
    broker.send("sender", send).unwrap();
    assert_eq!(broker.last_step_rule(), Some("TTL-01"));
    let receive = |broker: &mut Broker| {
        broker
            .receive(
                "receiver",
                "orders",
                "r",
                sbp_engine::ReceiveMode::PeekLock,
                1,
            )
            .unwrap()
    };
    let got = receive(&mut broker);
    assert_eq!(broker.last_step_rule(), Some("RCV-02"));
    let token = got[0].lock_token.clone().expect("a lock token");
    broker
        .settle("receiver", &token, Settle::Complete, None, None)
        .unwrap();
    assert_eq!(broker.last_step_rule(), Some("RCV-05"));
    broker.peek("receiver", "orders", None, 10).unwrap();
    assert_eq!(broker.last_step_rule(), None, "a peek");
    let none = receive(&mut broker);
    assert!(none.is_empty());
    assert_eq!(broker.last_step_rule(), None, "an empty receive");
}
