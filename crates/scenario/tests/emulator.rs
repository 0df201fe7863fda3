//! The emulator's Config.json in and out (issue 10, PRO-01): a real-world config imports with
//! the expected warnings, the schema's limits are enforced, and import -> export -> import keeps
//! every modelled property.
use sbp_engine::time::{HOUR, MINUTE, SECOND};
use sbp_engine::{SubscriptionRule, Tier};
use sbp_scenario::emulator::{export, import, parse_iso};
use sbp_scenario::{Scenario, Simulation};

const CONFIG: &str = include_str!("data/emulator-config.json");

fn keys(warnings: &[sbp_scenario::Text]) -> Vec<String> {
    warnings.iter().map(|w| w.key.to_string()).collect()
}

#[test]
fn a_real_world_config_imports_with_what_is_not_modelled_said() {
    let imported = import(CONFIG).expect("imports");
    let s = &imported.scenario;
    assert_eq!(s.namespace.tier, Tier::Emulator);
    let mut warned = keys(&imported.warnings);
    warned.sort();
    assert_eq!(warned, vec!["x-logging"]);
    // SES-01: sessions are modelled: the carts queue requires them.
    let carts = s
        .entities
        .iter()
        .find(|d| d.queue.as_deref() == Some("carts"))
        .and_then(|d| d.settings.requires_session);
    assert_eq!(carts, Some(true));
    // The entities, with orders before what forwards to it (FWD-01).
    let sim = Simulation::new(s).expect("runs");
    let names: Vec<&str> = sim.ns().entities_by_id().map(|e| e.path.as_str()).collect();
    let position = |p: &str| names.iter().position(|n| *n == p).expect(p);
    assert!(position("orders") < position("orders.inbox"));
    assert!(position("orders") < position("events/subscriptions/audit"));
    let orders = sim.ns().entity("orders").unwrap();
    assert!(orders.settings.requires_duplicate_detection);
    assert_eq!(
        orders.settings.duplicate_detection_history_time_window,
        20 * SECOND
    );
    assert_eq!(orders.settings.lock_duration, MINUTE);
    assert_eq!(orders.settings.max_delivery_count, 3);
    assert!(orders.settings.dead_lettering_on_message_expiration);
    let inbox = sim.ns().entity("orders.inbox").unwrap();
    assert_eq!(inbox.settings.forward_to.as_deref(), Some("orders"));
    assert_eq!(inbox.settings.default_message_time_to_live, 30 * MINUTE);
    // Properties a config leaves out take the emulator's defaults (PRO-01).
    let carts = sim.ns().entity("carts").unwrap();
    assert_eq!(carts.settings.default_message_time_to_live, HOUR);
    assert_eq!(carts.settings.max_delivery_count, 3);
    let billing = sim.ns().entity("events/subscriptions/billing").unwrap();
    let SubscriptionRule::Correlation {
        subject,
        correlation_id,
        message_id,
        application_properties,
        system_properties,
        ..
    } = &billing.rules[0].1
    else {
        panic!("a correlation filter")
    };
    // FLT-01: under its own name.
    assert_eq!(billing.rules[0].0, "app-prop-filter-1");
    // FLT-02: every field of the emulator's correlation filter is modelled.
    assert_eq!(system_properties.get("To").map(String::as_str), Some("xyz"));
    assert_eq!(system_properties.len(), 5);
    assert_eq!(subject.as_deref(), Some("subject1"));
    assert_eq!(correlation_id.as_deref(), Some("id1"));
    assert_eq!(message_id.as_deref(), Some("msgid1"));
    assert_eq!(
        application_properties
            .get("prop1")
            .and_then(sbp_engine::PropertyValue::as_str),
        Some("value1")
    );
    // FLT-03, FLT-04: the SQL filter and its action.
    let SubscriptionRule::Sql(premium) = &sim
        .ns()
        .entity("events/subscriptions/premium")
        .unwrap()
        .rules[0]
        .1
    else {
        panic!("a SQL filter")
    };
    assert_eq!(
        premium.filter,
        "sys.MessageId = '123' OR userProp1 = 'value1'"
    );
    assert_eq!(premium.action.as_deref(), Some("SET sys.To = 'Entity'"));
}

#[test]
fn traffic_plays_through_an_imported_config() {
    let mut s = import(CONFIG).expect("imports").scenario;
    let steps: Vec<sbp_scenario::Step> = serde_json::from_str(
        r#"[{"at": "0s", "send": {"to": "orders.inbox", "message_id": "a"}},
            {"at": "1s", "send": {"to": "orders.inbox", "message_id": "a"}},
            {"at": "2s", "send": {"to": "events", "subject": "subject1"}}]"#,
    )
    .unwrap();
    s.timeline = steps;
    let mut sim = Simulation::new(&s).unwrap();
    sim.run_to_end();
    assert!(sim.failures.is_empty(), "{:?}", sim.failures);
    // Forwarded into orders, whose duplicate detection drops the second (DUP-02), and the
    // topic's copy for audit forwarded there too.
    let orders = sim.ns().entity("orders").unwrap();
    assert_eq!(
        orders.duplicates_dropped, 0,
        "forwards are not checked for duplicates"
    );
    assert_eq!(orders.main.len(), 3);
}

#[test]
fn the_emulator_schema_limits_are_enforced_naming_the_limit() {
    for (from, to) in [
        (r#""MaxDeliveryCount": 3"#, r#""MaxDeliveryCount": 11"#),
        (
            r#""DefaultMessageTimeToLive": "PT30M""#,
            r#""DefaultMessageTimeToLive": "PT2H""#,
        ),
        (r#""LockDuration": "PT2M""#, r#""LockDuration": "PT30S""#),
    ] {
        let config = CONFIG.replacen(from, to, 1);
        assert_ne!(config, CONFIG);
        let err = import(&config).expect_err("refused").to_string();
        assert!(err.contains("PRO-01") || err.contains("emulator"), "{err}");
    }
    let err = import(&CONFIG.replacen(
        r#""LockDuration": "PT1M""#,
        r#""LockDuration": "one minute""#,
        1,
    ))
    .expect_err("refused")
    .to_string();
    assert!(
        err.contains("LockDuration") && err.contains("one minute"),
        "{err}"
    );
    assert!(import("{}").is_err());
    assert!(import("not json").is_err());
    // Broken JSON is said as JSON, not as a field named "?".
    for broken in ["not json", "{ not json", "{\"UserConfig\" 1}"] {
        let err = import(broken).expect_err("refused");
        assert_eq!(err.key, "x-json", "{broken}: {err}");
        assert!(!err.to_string().starts_with('?'), "{broken}: {err}");
    }
}

#[test]
fn import_export_import_keeps_every_modelled_property() {
    let first = import(CONFIG).expect("imports").scenario;
    let exported = export(&first).expect("exports");
    let text = serde_json::to_string_pretty(&exported.config).unwrap();
    let second = import(&text).expect("imports again");
    let settings = |s: &Scenario| {
        let sim = Simulation::new(s).unwrap();
        sim.ns()
            .entities_by_id()
            .map(|e| (e.path.clone(), e.settings.clone(), e.rules.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(settings(&first), settings(&second.scenario));
    // What the playground does not model cannot come back: said once, on the first import.
    assert!(!keys(&second.warnings).contains(&"x-sql".to_string()));
}

#[test]
fn exporting_a_scenario_beyond_the_emulator_says_how_it_differs() {
    let scenario = Scenario::from_json(
        r#"{"version": 1, "entities": [
            {"queue": "q", "lock_duration": "5s", "max_delivery_count": 20, "auto_delete_on_idle": "1h"},
            {"topic": "t"}],
          "timeline": [{"at": "0s", "send": {"to": "q"}}]}"#,
    )
    .unwrap();
    let out = export(&scenario).expect("exports");
    let mut warned = keys(&out.warnings);
    warned.sort();
    assert_eq!(
        warned,
        vec![
            "x-clamped",         // q's TTL MaxValue -> PT1H
            "x-clamped",         // q's MaxDeliveryCount 20 -> 10
            "x-clamped",         // t's TTL MaxValue -> PT1H
            "x-no-subscription", // t
            "x-not-in-schema",   // q's AutoDeleteOnIdle
            "x-profile",         // Standard
            "x-timeline",
        ]
    );
    let q = &out.config["UserConfig"]["Namespaces"][0]["Queues"][0]["Properties"];
    assert_eq!(q["DefaultMessageTimeToLive"], "PT1H");
    assert_eq!(q["MaxDeliveryCount"], 10);
    assert_eq!(q["LockDuration"], "PT5S");
    assert_eq!(
        parse_iso(q["DuplicateDetectionHistoryTimeWindow"].as_str().unwrap()),
        Some(MINUTE)
    );
}

#[test]
fn a_sql_filter_outside_the_subset_is_said_and_the_rest_opens() {
    let config = CONFIG.replacen(
        "sys.MessageId = '123' OR userProp1 = 'value1'",
        "sys.MessageId == '123'",
        1,
    );
    let imported = import(&config).expect("imports");
    let warned = keys(&imported.warnings);
    assert!(
        warned.contains(&"x-sql-unsupported".to_string()),
        "{warned:?}"
    );
    let said = imported
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        said.contains("Rules[0]") && said.contains("FLT-03"),
        "{said}"
    );
    let sim = Simulation::new(&imported.scenario).unwrap();
    assert_eq!(
        sim.ns()
            .entity("events/subscriptions/premium")
            .unwrap()
            .rules,
        vec![("$Default".to_string(), SubscriptionRule::MatchAll)]
    );
}

/// FLT-01: a subscription with several rules imports each under its name, plays (a rule with an
/// action gives a copy of its own), and exports them back.
#[test]
fn r_flt_01_several_rules_import_play_and_export() {
    let config = r#"{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns", "Queues": [], "Topics": [
        {"Name": "events", "Properties": {}, "Subscriptions": [
            {"Name": "all", "Properties": {}, "Rules": [
                {"Name": "red", "Properties": {"FilterType": "Correlation", "CorrelationFilter": {"Properties": {"color": "red"}}}},
                {"Name": "big", "Properties": {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "size > 10"},
                    "Action": {"SqlExpression": "SET tagged = 'big'"}}}
            ]}
        ]}
    ]}]}}"#;
    let mut s = import(config).expect("imports").scenario;
    s.timeline = serde_json::from_str(
        r#"[{"at": "0s", "send": {"to": "events", "message_id": "m1", "properties": {"color": "red", "size": 12}}},
            {"at": "1s", "send": {"to": "events", "message_id": "m2", "properties": {"color": "blue", "size": 1}}}]"#,
    )
    .unwrap();
    let mut sim = Simulation::new(&s).unwrap();
    sim.run_to_end();
    let all = sim.ns().entity("events/subscriptions/all").unwrap();
    let names: Vec<&str> = all.rules.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["red", "big"]);
    // m1 matches both: the plain copy (red) and big's own, acted on; m2 matches neither.
    assert_eq!(all.main.len(), 2);
    let tagged: Vec<Option<&str>> = all
        .main
        .messages
        .values()
        .map(|m| {
            m.extra()
                .and_then(|e| e.application_properties.get("tagged"))
                .and_then(sbp_engine::PropertyValue::as_str)
        })
        .collect();
    assert_eq!(tagged, [None, Some("big")]);
    let exported = export(&s).expect("exports").config;
    let rules = &exported["UserConfig"]["Namespaces"][0]["Topics"][0]["Subscriptions"][0]["Rules"];
    assert_eq!(rules[0]["Name"], "red");
    assert_eq!(rules[1]["Name"], "big");
    assert_eq!(
        rules[1]["Properties"]["Action"]["SqlExpression"],
        "SET tagged = 'big'"
    );
}

/// A correlation filter's property of a type the config cannot hold (a timestamp, a uuid) is
/// written as its text, and said; numbers and booleans keep JSON's types.
#[test]
fn r_pro_01_a_property_type_the_config_lacks_is_said() {
    let s = Scenario::from_json(
        r#"{"version": 1, "entities": [{"topic": "t"}, {"subscription": "t/subscriptions/s",
            "rule": {"properties": {"n": 5, "ok": true, "at": {"timestamp": "2026-01-01T00:00:00Z"}}}}]}"#,
    )
    .unwrap();
    let exported = export(&s).expect("exports");
    let props = &exported.config["UserConfig"]["Namespaces"][0]["Topics"][0]["Subscriptions"][0]
        ["Rules"][0]["Properties"]["CorrelationFilter"]["Properties"];
    assert_eq!(props["n"], 5);
    assert_eq!(props["ok"], true);
    assert_eq!(props["at"], "2026-01-01T00:00:00Z");
    assert!(keys(&exported.warnings).contains(&"x-type".to_string()));
}

/// FLT-04: a correlation filter's action is read from a config, played, and written back.
#[test]
fn r_flt_04_a_correlation_filters_action_is_imported_played_and_exported() {
    let config = r#"{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns", "Queues": [], "Topics": [
        {"Name": "events", "Properties": {}, "Subscriptions": [
            {"Name": "blue", "Properties": {}, "Rules": [
                {"Name": "tag", "Properties": {"FilterType": "Correlation",
                    "CorrelationFilter": {"Properties": {"Color": "blue"}},
                    "Action": {"SqlExpression": "SET Priority = 'high'"}}}
            ]}
        ]}
    ]}]}}"#;
    let imported = import(config).expect("imports");
    assert!(
        keys(&imported.warnings).is_empty(),
        "{:?}",
        imported.warnings
    );
    let mut s = imported.scenario;
    s.timeline = serde_json::from_str(
        r#"[{"at": "0s", "send": {"to": "events", "properties": {"color": "blue", "priority": "low"}}}]"#,
    )
    .unwrap();
    let mut sim = Simulation::new(&s).unwrap();
    sim.run_to_end();
    let copy = sim
        .ns()
        .message(
            "events/subscriptions/blue",
            1,
            sbp_engine::Perspective::Peek,
        )
        .unwrap();
    assert_eq!(
        copy.application_properties
            .get("priority")
            .and_then(sbp_engine::PropertyValue::as_str),
        Some("high")
    );
    let exported = export(&s).expect("exports").config;
    let rule =
        &exported["UserConfig"]["Namespaces"][0]["Topics"][0]["Subscriptions"][0]["Rules"][0];
    assert_eq!(
        rule["Properties"]["Action"]["SqlExpression"],
        "SET Priority = 'high'"
    );
    let cs = sbp_scenario::code::generate(&s, sbp_scenario::code::Lang::CSharp).unwrap();
    assert!(
        cs.contains(r#"{ Action = new SqlRuleAction("SET Priority = 'high'") }"#),
        "{cs}"
    );
}

/// A Config.json with one topic of `subscriptions` subscriptions named `name(i)`.
fn config_with_topic(subscriptions: usize, name: impl Fn(usize) -> String) -> String {
    let subs: Vec<serde_json::Value> = (1..=subscriptions)
        .map(|i| serde_json::json!({"Name": name(i), "Properties": {}}))
        .collect();
    serde_json::json!({"UserConfig": {
        "Namespaces": [{"Name": "sbemulatorns", "Queues": [],
            "Topics": [{"Name": "events", "Properties": {}, "Subscriptions": subs}]}],
        "Logging": {"Type": "File"}
    }})
    .to_string()
}

#[test]
fn pro_01_a_config_beyond_the_emulators_subscriptions_or_names_is_refused_naming_it() {
    let fifty = import(&config_with_topic(50, |i| format!("s{i}"))).expect("50 import");
    Simulation::new(&fifty.scenario).expect("50 run");
    let err = import(&config_with_topic(51, |i| format!("s{i}")))
        .map(|i| Simulation::new(&i.scenario).map(|_| ()))
        .map_err(|e| e.to_string());
    let text = match err {
        Err(e) => e,
        Ok(Err(e)) => e.to_string(),
        Ok(Ok(())) => panic!("51 subscriptions taken"),
    };
    assert!(text.contains("50") && text.contains("PRO-01"), "{text}");
    let err = import(&config_with_topic(1, |_| "audit-".into()))
        .map(|i| Simulation::new(&i.scenario).map(|_| ()))
        .map_err(|e| e.to_string());
    let text = match err {
        Err(e) => e,
        Ok(Err(e)) => e.to_string(),
        Ok(Ok(())) => panic!("a name ending in '-' taken"),
    };
    assert!(text.contains("audit-") && text.contains("PRO-01"), "{text}");
}

#[test]
fn pro_01_an_empty_correlation_filter_is_refused_at_import() {
    for filter in [r#"{}"#, r#"{"Properties": {}}"#] {
        let config = serde_json::json!({"UserConfig": {
            "Namespaces": [{"Name": "sbemulatorns", "Queues": [],
                "Topics": [{"Name": "events", "Properties": {}, "Subscriptions": [{
                    "Name": "s", "Properties": {},
                    "Rules": [{"Name": "r", "Properties": {"FilterType": "Correlation",
                        "CorrelationFilter": serde_json::from_str::<serde_json::Value>(filter).unwrap()}}]}]}]}],
            "Logging": {"Type": "File"}
        }})
        .to_string();
        let err = import(&config).expect_err(filter).to_string();
        assert!(
            err.contains("CorrelationFilter") && err.contains("PRO-01"),
            "{err}"
        );
    }
}
