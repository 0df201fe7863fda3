//! Precise expectations: naming what a call returned, settling by that name, checking what it
//! returned, property checks beyond equality, error classes, entity settings, and checks
//! between two steps of one instant. Each test runs a scenario as a docs author would write it.
use sbp_scenario::*;

fn run(json: &str) -> Simulation {
    let scenario = Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&scenario).unwrap();
    sim.run_to_end();
    sim
}

#[test]
fn a_stale_named_handle_after_redelivery_gives_message_lock_lost() {
    let sim = run(r#"{"version":1,
        "entities":[{"queue":"q","lock_duration":"5s"}],
        "timeline":[
          {"at":"0s","send":{"to":"q"}},
          {"at":"0s","receive":{"from":"q","as":"first"}},
          {"at":"6s","receive":{"from":"q","as":"second"}},
          {"at":"7s","complete":{"from":"q","message":"first"},"expect_error":"MessageLockLost"},
          {"at":"7s","complete":{"from":"q","message":"second"}}
        ],
        "expect":[{"at":"7s",
          "counts":{"q":{"active":0,"locked":0}},
          "returned":{
            "first":{"seqs":[1],"messages":[{"DeliveryCount":1,"LockToken":{"present":true}}]},
            "second":{"count":1,"messages":[{"DeliveryCount":2,"LockToken":{"differs_from":"first.LockToken"}}]}
          }}]}"#);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
}

#[test]
fn settling_a_peeked_or_received_and_deleted_name_is_a_client_error() {
    let sim = run(r#"{"version":1,
        "entities":[{"queue":"q"}],
        "timeline":[
          {"at":"0s","send":{"to":"q","count":2}},
          {"at":"1s","peek":{"from":"q","count":2,"as":"browsed"}},
          {"at":"2s","complete":{"from":"q","message":"browsed"},"expect_error":"client"},
          {"at":"3s","receive":{"from":"q","mode":"receive_and_delete","as":"gone"}},
          {"at":"4s","abandon":{"from":"q","message":"gone"},"expect_error":["InvalidOperation","MessageLockLost"]},
          {"at":"5s","receive":{"from":"q","as":"rest"}},
          {"at":"6s","receive":{"from":"q","as":"nothing"}}
        ],
        "expect":[{"at":"6s","returned":{
            "browsed":{"seqs":[1,2],"messages":[{"LockToken":{"present":false}},{"DeliveryCount":0}]},
            "gone":{"seqs":[1],"messages":[{"SequenceNumber":1,"LockToken":{"present":false}}]},
            "rest":{"seqs":[2]},
            "nothing":{"count":0}
          }}]}"#);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
}

#[test]
fn a_property_within_a_range_and_a_failed_check_says_why() {
    let ok = run(r#"{"version":1,
        "entities":[{"queue":"q"}],
        "timeline":[{"at":"0s","send":{"to":"q","ttl":"1m"}},{"at":"10s","receive":{"from":"q","as":"r"}}],
        "expect":[{"at":"10s","returned":{"r":{"messages":[{
            "LockedUntil":{"min":"30s","max":"1m"},"ExpiresAt":{"min":"59s","max":"61s"},"DeliveryCount":{"min":1,"max":1}}]}}}]}"#);
    assert!(ok.failures.is_empty(), "{:#?}", ok.failures);
    let failing = run(r#"{"version":1,
        "entities":[{"queue":"q"}],
        "timeline":[{"at":"0s","send":{"to":"q","ttl":"1m"}},{"at":"10s","receive":{"from":"q","as":"r"}}],
        "expect":[{"at":"10s","returned":{"r":{"messages":[{"LockedUntil":{"max":"20s"}}]}}}]}"#);
    assert_eq!(failing.failures.len(), 1);
    assert!(
        failing.failures[0]
            .to_string()
            .contains("LockedUntil: expected -..t=20s, got t=40s"),
        "{:?}",
        failing.failures
    );
}

#[test]
fn expect_error_takes_a_class_or_a_list_and_unknown_names_are_refused() {
    let sim = run(r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[
        {"at":"0s","complete":{"from":"q","seq":1},"expect_error":"any"},
        {"at":"0s","receive":{"from":"nowhere"},"expect_error":["MessageLockLost","MessagingEntityNotFound"]},
        {"at":"0s","receive":{"from":"nowhere"},"expect_error":"client"}]}"#);
    assert_eq!(sim.failures.len(), 1, "{:#?}", sim.failures);
    assert!(sim.failures[0]
        .to_string()
        .contains("expected client, got MessagingEntityNotFound"));
    let err = Scenario::from_json(
        r#"{"version":1,"timeline":[{"at":"0s","receive":{"from":"q"},"expect_error":["Nope"]}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("\"Nope\""), "{err}");
}

#[test]
fn entity_settings_are_observable_a_basic_default_ttl_is_14_days() {
    let sim = run(
        r#"{"version":1,"namespace":{"tier":"Basic"},"entities":[{"queue":"q"}],
        "expect":[{"at":"0s","settings":{"q":{"DefaultMessageTimeToLive":"14d","LockDuration":"30s","MaxDeliveryCount":10,"ForwardTo":null}}}]}"#,
    );
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
    let wrong = run(r#"{"version":1,"entities":[{"queue":"q"}],
        "expect":[{"at":"0s","settings":{"q":{"DefaultMessageTimeToLive":"14d"}}}]}"#);
    assert!(
        wrong.failures[0]
            .to_string()
            .contains("expected t=14days, got never")
            || wrong.failures[0]
                .to_string()
                .contains("expected 14days, got MaxValue"),
        "{:?}",
        wrong.failures
    );
}

#[test]
fn an_expect_step_checks_between_two_steps_of_one_instant() {
    let sim = run(r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[
        {"at":"5s","send":{"to":"q"}},
        {"at":"5s","expect":{"counts":{"q":{"active":1}}}},
        {"at":"5s","receive":{"from":"q","mode":"receive_and_delete"}},
        {"at":"5s","expect":{"counts":{"q":{"active":0}}}}],
      "expect":[{"at":"5s","counts":{"q":{"active":0}}}]}"#);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
    let wrong = run(r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[
        {"at":"5s","send":{"to":"q"}},
        {"at":"5s","expect":{"counts":{"q":{"active":0}}}}]}"#);
    assert_eq!(wrong.failures.len(), 1, "{:#?}", wrong.failures);
}

#[test]
fn naming_nothing_that_exists_is_a_clear_failure() {
    let sim = run(r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[
        {"at":"0s","complete":{"from":"q","message":"ghost"},"expect_error":"client"}],
        "expect":[{"at":"1s","returned":{"ghost":{"count":0}}}]}"#);
    assert_eq!(sim.failures.len(), 1, "{:#?}", sim.failures);
    assert!(sim.failures[0]
        .to_string()
        .contains("no step so far is named \"ghost\""));
}

/// A call name with a dot in it ("a.b") is one name: settling by it finds that call (the name
/// was split apart in one place and not the other, which panicked).
#[test]
fn a_call_name_with_a_dot_settles_that_call() {
    let sim = run(r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[
        {"at":"0s","send":{"to":"q","count":2}},
        {"at":"0s","receive":{"from":"q","count":2,"as":"batch.one"}},
        {"at":"1s","complete":{"from":"q","message":"batch.one"}},
        {"at":"1s","complete":{"from":"q","message":"batch.one.2"}}],
      "expect":[{"at":"1s","counts":{"q":{"active":0,"locked":0}}}]}"#);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
}

#[test]
fn counts_and_returned_counts_take_a_range_and_a_miss_names_it() {
    let scenario = r#"{"version":1,
        "entities":[{"queue":"q"}],
        "timeline":[{"at":"0s","send":{"to":"q","count":3}},{"at":"1s","receive":{"from":"q","count":2,"as":"r"}}],
        "expect":[{"at":"1s","counts":{"q":{"active":{"min":1,"max":3},"locked":{"min":2}}},
          "returned":{"r":{"count":{"min":1,"max":2}}}}]}"#;
    let sim = run(scenario);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
    let missed = run(&scenario
        .replace(r#"{"min":1,"max":3}"#, r#"{"max":0}"#)
        .replace(r#"{"min":1,"max":2}"#, r#"{"min":3}"#));
    let words: Vec<String> = missed.failures.iter().map(|f| f.to_string()).collect();
    assert_eq!(words.len(), 2, "{words:#?}");
    assert!(
        words[0].contains("..0") && words[0].contains("got 1"),
        "{words:#?}"
    );
    assert!(words[1].contains("3.."), "{words:#?}");
    // A range written back is a range; an exact count a number.
    let text = Scenario::from_json(scenario).unwrap().to_json_pretty();
    let written: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        written["expect"][0]["counts"]["q"]["active"],
        serde_json::json!({"min": 1, "max": 3})
    );
    let back = Scenario::from_json(&text).unwrap();
    assert_eq!(back, Scenario::from_json(scenario).unwrap());
}

#[test]
fn an_expected_error_may_name_words_of_its_message() {
    let scenario = r#"{"version":1,
        "entities":[{"queue":"s","requires_session":true}],
        "timeline":[{"at":"0s","send":{"to":"s"},
          "expect_error":{"kind":"InvalidOperation","message_contains":"SessionId"}}]}"#;
    let sim = run(scenario);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
    let wrong = run(&scenario.replace(
        r#""message_contains":"SessionId""#,
        r#""message_contains":"quota""#,
    ));
    assert_eq!(wrong.failures.len(), 1, "{:#?}", wrong.failures);
    assert!(
        wrong.failures[0].to_string().contains("saying \"quota\""),
        "{}",
        wrong.failures[0]
    );
    // Both keys are needed, and nothing else.
    for bad in [
        r#"{"kind":"InvalidOperation"}"#,
        r#"{"kind":"InvalidOperation","message_contains":"x","extra":1}"#,
    ] {
        let json = scenario.replace(
            r#"{"kind":"InvalidOperation","message_contains":"SessionId"}"#,
            bad,
        );
        assert!(Scenario::from_json(&json).is_err(), "{bad}");
    }
}

#[test]
fn events_count_what_the_log_holds_of_a_kind() {
    let scenario = r#"{"version":1,
        "entities":[{"queue":"q"}],
        "timeline":[{"at":"0s","send":{"to":"q"}},{"at":"0s","receive":{"from":"q"}},
          {"at":"10s","renew_lock":{"from":"q","seq":1}}],
        "expect":[{"at":"5s","events":{"LockRenewed":{"max":0}}},
          {"at":"10s","events":{"LockRenewed":{"min":1,"max":1},"Locked":{"min":1}}}]}"#;
    let sim = run(scenario);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
    let wrong = run(&scenario.replace(r#"{"min":1,"max":1}"#, r#"{"min":2}"#));
    assert_eq!(wrong.failures.len(), 1, "{:#?}", wrong.failures);
    assert!(wrong.failures[0].to_string().contains("LockRenewed"));
}

#[test]
fn a_named_session_call_returns_its_session_id_locked_until_and_state() {
    let scenario = r#"{"version":1,
        "entities":[{"queue":"s","requires_session":true,"lock_duration":"30s"}],
        "timeline":[
          {"at":"0s","send":{"to":"s","system_properties":{"SessionId":"alice"}}},
          {"at":"1s","session":{"receiver":"w","from":"s","op":"accept","as":"accepted"}},
          {"at":"2s","session":{"receiver":"w","from":"s","op":"set_state","state":"step-1"}},
          {"at":"10s","session":{"receiver":"w","from":"s","op":"renew_lock","as":"renewed"}},
          {"at":"11s","session":{"receiver":"w","from":"s","op":"get_state","as":"state"}},
          {"at":"12s","receive":{"from":"s","receiver":"w","as":"got"}}
        ],
        "expect":[{"at":"12s","returned":{
          "accepted":{"session":{"SessionId":"alice","LockedUntil":"31s"}},
          "renewed":{"session":{"LockedUntil":"40s"}},
          "state":{"session":{"State":"step-1"}},
          "got":{"messages":[{"SessionId":"alice","SystemProperties":{"SessionId":"alice"}}]}
        },
        "messages":[{"entity":"s","seq":1,"view":"receive","properties":{"SessionId":"alice"}}]}]}"#;
    let sim = run(scenario);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
    let wrong = run(&scenario.replace(r#""LockedUntil":"40s""#, r#""LockedUntil":"41s""#));
    assert_eq!(wrong.failures.len(), 1, "{:#?}", wrong.failures);
    // A message call has no session to check.
    let not_session = run(&scenario.replace(
        r#""got":{"messages""#,
        r#""got":{"session":{"SessionId":"alice"},"messages""#,
    ));
    assert_eq!(not_session.failures.len(), 1, "{:#?}", not_session.failures);
}

/// SES-05: a session's state is bytes: `{"base64": ...}` sets bytes that are not text, and
/// `returned` shows them the same way; only the state may be bytes (a receiver named with
/// bytes is refused, naming the field).
#[test]
fn r_ses_05_a_session_state_of_bytes_is_kept_as_they_are() {
    let scenario = r#"{"version":1,
        "entities":[{"queue":"s","requires_session":true}],
        "timeline":[
          {"at":"0s","send":{"to":"s","system_properties":{"SessionId":"alice"}}},
          {"at":"1s","session":{"receiver":"w","from":"s","op":"accept"}},
          {"at":"2s","session":{"receiver":"w","from":"s","op":"set_state","state":{"base64":"/wD+"}}},
          {"at":"3s","session":{"receiver":"w","from":"s","op":"get_state","as":"state"}}
        ],
        "expect":[{"at":"3s","returned":{"state":{"session":{"State":{"base64":"/wD+"}}}}}]}"#;
    let sim = run(scenario);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
    let wrong = run(&scenario.replace(
        r#""State":{"base64":"/wD+"}"#,
        r#""State":{"base64":"/wD/"}"#,
    ));
    assert_eq!(wrong.failures.len(), 1, "{:#?}", wrong.failures);
    let bad = scenario.replace(
        r#""receiver":"w","from":"s","op":"accept""#,
        r#""receiver":{"base64":"dw=="},"from":"s","op":"accept""#,
    );
    let err = sbp_scenario::Scenario::from_json(&bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains("receiver"), "{err}");
}

#[test]
fn r_flt_01_true_filter_and_false_filter_by_name() {
    let scenario = r#"{"version":1,
        "entities":[{"topic":"t"},
          {"subscription":"t/subscriptions/all","rule":{"filter":"TrueFilter"}},
          {"subscription":"t/subscriptions/none","rule":{"filter":"FalseFilter"}},
          {"subscription":"t/subscriptions/marked","rule":{"filter":"TrueFilter","action":"SET marked = 1"}}],
        "timeline":[{"at":"0s","send":{"to":"t"}}],
        "expect":[{"at":"0s","counts":{"t/subscriptions/all":{"active":1},"t/subscriptions/none":{"active":0},
          "t/subscriptions/marked":{"active":1}},
          "messages":[{"entity":"t/subscriptions/marked","seq":1,"properties":{"ApplicationProperties":{"marked":{"long":1}}}}]}]}"#;
    let sim = run(scenario);
    assert!(sim.failures.is_empty(), "{:#?}", sim.failures);
    for bad in [
        r#"{"filter":"MaybeFilter"}"#,
        r#"{"filter":"TrueFilter","sql":"a = 1"}"#,
        r#"{"filter":"FalseFilter","subject":"x"}"#,
    ] {
        let json = scenario.replace(r#"{"filter":"FalseFilter"}"#, bad);
        let refused = Scenario::from_json(&json)
            .map_err(|e| e.to_string())
            .and_then(|s| Simulation::new(&s).map(|_| ()).map_err(|e| e.to_string()));
        let err = refused.expect_err(bad);
        assert!(err.contains("filter") || err.contains("Filter"), "{err}");
    }
}

/// The embed form's "Check that...": what shows at an instant, as an expectation there. The
/// scenario that carries it passes; changed so that it no longer does what was shown, it fails
/// naming the count and the message property (RCV-07: the third lapse dead-letters).
#[test]
fn r_rcv_07_what_shows_now_as_an_expectation_passes_and_fails_once_the_scenario_changes() {
    let scenario = sbp_scenario::presets::preset("lapsed-locks-to-dlq")
        .unwrap()
        .unwrap();
    let mut sim = Simulation::new(&scenario).unwrap();
    let end = scenario.end();
    sim.advance_to(end);
    let dead = sim
        .ns()
        .entities()
        .find(|e| e.dlq_counts(end).active > 0)
        .map(|e| e.path.clone())
        .expect("a message dead-lettered by the end");
    let dlq = format!("{dead}/$deadletterqueue");
    let expectation = sim.expectation_now(Some((&dlq, 1)));
    assert_eq!(expectation.messages.len(), 1, "{expectation:?}");
    assert_eq!(
        expectation.messages[0].properties.get("DeadLetterReason"),
        Some(&serde_json::json!("MaxDeliveryCountExceeded"))
    );
    let mut checked = scenario.clone();
    checked.expect = vec![expectation];
    checked.validate().unwrap();
    let mut again = Simulation::new(&checked).unwrap();
    assert!(again.run_to_end(), "{:?}", again.failures);
    // One more delivery allowed: the message is not dead-lettered at that instant.
    let text = checked
        .to_json_pretty()
        .replace("\"max_delivery_count\": 3", "\"max_delivery_count\": 10");
    assert_ne!(
        text,
        checked.to_json_pretty(),
        "the preset names max_delivery_count 3"
    );
    let changed = sbp_scenario::Scenario::from_json(&text).unwrap();
    let mut sim = Simulation::new(&changed).unwrap();
    assert!(!sim.run_to_end());
    let said = sim
        .failures
        .iter()
        .map(|f| f.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(said.contains("dead_lettered"), "{said}");
    assert!(said.contains(&dlq), "{said}");
}

/// A count on a dead-letter queue's own path: its messages are active there; a dead_lettered
/// count on that path is refused naming the entity's count instead.
#[test]
fn a_dead_lettered_count_on_a_dead_letter_queue_path_is_refused_with_the_entity_s_name() {
    let json = r#"{"version":1,"entities":[{"queue":"orders"}],
        "expect":[{"at":"0s","counts":{"orders/$deadletterqueue":{"dead_lettered":1}}}]}"#;
    let err = sbp_scenario::Scenario::from_json(json)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("orders/$deadletterqueue has no dead_lettered count")
            && err.contains("orders dead_lettered"),
        "{err}"
    );
    let fine = json.replace("dead_lettered", "active");
    assert!(sbp_scenario::Scenario::from_json(&fine).is_ok());
}

/// A link made with "Check that...": it opens at its instant from its own saved state (no
/// notice that the state was not taken up), and its run from the start passes the check it
/// carries, in the browser as in `sbp check` (RCV-07: the message dead-lettered there).
#[test]
fn r_rcv_07_a_link_checking_what_shows_now_opens_from_its_own_state_and_passes() {
    let scenario = sbp_scenario::presets::preset("lapsed-locks-to-dlq")
        .unwrap()
        .unwrap();
    let mut sim = Simulation::new(&scenario).unwrap();
    sim.advance_to(scenario.end() / 2);
    let before = sim.checked;
    let link = sbp_scenario::link::link_checking_now(&mut sim, None, Some(10));
    assert_eq!(
        sim.scenario().expect.len(),
        scenario.expect.len(),
        "the page's own run is unchanged"
    );
    assert_eq!(link.scenario.expect.len(), scenario.expect.len() + 1);
    let text = sbp_scenario::link::encode_link(&link);
    let decoded = sbp_scenario::link::decode_link(&text).unwrap();
    let mut opened = decoded.open(None).unwrap();
    assert!(
        opened.checkpoint_refused.is_none(),
        "{:?}",
        opened.checkpoint_refused
    );
    assert_eq!(opened.sim.now(), sim.now());
    assert_eq!(opened.sim.checked, before);
    assert!(opened.sim.run_to_end(), "{:?}", opened.sim.failures);
    assert_eq!(opened.sim.checked, scenario.expect.len() + 1);
    let mut replay = Simulation::new(&decoded.scenario).unwrap();
    assert!(replay.run_to_end(), "{:?}", replay.failures);
}
