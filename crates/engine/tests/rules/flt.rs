use super::*;
use sbp_engine::entity::SqlRule;
use std::collections::BTreeMap;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn topic(ns: &mut Namespace, subs: Vec<(&str, SubscriptionRule)>) {
    ns.create_topic("t", settings()).unwrap();
    for (name, rule) in subs {
        ns.create_subscription("t", name, settings(), rule).unwrap();
    }
}

/// Properties of strings.
fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Application properties with their types.
fn typed(pairs: &[(&str, PropertyValue)]) -> BTreeMap<String, PropertyValue> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn text(s: &str) -> PropertyValue {
    PropertyValue::String(s.into())
}

fn sql(filter: &str, action: Option<&str>) -> SubscriptionRule {
    SubscriptionRule::Sql(Box::new(SqlRule::new(filter, action).unwrap()))
}

fn got(ns: &Namespace, sub: &str) -> u64 {
    counts(ns, &format!("t/subscriptions/{sub}")).active
}

#[test]
fn r_flt_01_a_new_subscription_takes_everything_and_an_unmatched_message_is_dropped() {
    let mut ns = ns();
    topic(
        &mut ns,
        vec![
            ("default", SubscriptionRule::MatchAll),
            ("none", sql("1 = 0", None)),
        ],
    );
    // Accepted (a SequenceNumber of the topic's), copied where a rule matches, else nowhere.
    assert_eq!(ns.send("t", msg("a", None)).unwrap(), 1);
    assert_eq!((got(&ns, "default"), got(&ns, "none")), (1, 0));
    ns.delete_entity("t/subscriptions/default").unwrap();
    assert_eq!(ns.send("t", msg("b", None)).unwrap(), 2);
    assert_eq!(got(&ns, "none"), 0);
}

#[test]
fn r_flt_01_several_rules_one_plain_copy_and_one_per_action() {
    let mut ns = ns();
    topic(&mut ns, vec![("s", sql("size > 0", None))]);
    let path = "t/subscriptions/s";
    assert_eq!(ns.entity(path).unwrap().rules[0].0, "$Default");
    // Named rules are added and removed; names are unique (ignoring case) and 1..50 characters.
    let red = SubscriptionRule::Correlation {
        subject: None,
        correlation_id: None,
        message_id: None,
        application_properties: typed(&[("color", text("red"))]),
        system_properties: props(&[]),
        action: None,
    };
    ns.create_rule(path, "red", red.clone()).unwrap();
    ns.create_rule(path, "tag", sql("size > 10", Some("SET big = 1")))
        .unwrap();
    ns.create_rule(path, "mark", sql("color = 'red'", Some("SET red = 1")))
        .unwrap();
    let before = ns.clone();
    for (name, kind) in [
        ("RED", ErrorKind::MessagingEntityAlreadyExists),
        ("", ErrorKind::ArgumentOutOfRange),
        (&"x".repeat(51), ErrorKind::ArgumentOutOfRange),
    ] {
        assert_eq!(
            ns.create_rule(path, name, red.clone()).unwrap_err().kind,
            kind
        );
    }
    assert_eq!(
        ns.create_rule("t", "x", red.clone()).unwrap_err().kind,
        ErrorKind::InvalidOperation
    );
    assert_eq!(
        ns.delete_rule(path, "nope").unwrap_err().kind,
        ErrorKind::MessagingEntityNotFound
    );
    assert!(ns.same_state_except_log(&before));
    let message = |id: &str, color: &str, size: i32| NewMessage {
        message_id: Some(id.into()),
        application_properties: typed(&[
            ("color", text(color)),
            ("size", PropertyValue::Int(size)),
        ]),
        ..Default::default()
    };
    // Matched by $Default and red (no action): one plain copy; by tag and mark: one each.
    ns.send("t", message("a", "red", 12)).unwrap();
    let s = ns.entity(path).unwrap();
    let copies: Vec<(Option<&PropertyValue>, Option<&PropertyValue>)> = s
        .main
        .messages
        .values()
        .map(|m| {
            let p = &m.extra().unwrap().application_properties;
            (p.get("big"), p.get("red"))
        })
        .collect();
    // FLT-04: `SET big = 1` sets a long (an integer constant is a long).
    let one = PropertyValue::Long(1);
    assert_eq!(
        copies,
        [(None, None), (Some(&one), None), (None, Some(&one))]
    );
    let named: Vec<Option<&str>> = ns
        .log()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Sent { rule_name, .. } if e.seq > 0 && e.rule != Some(Rule::Ttl01) => {
                Some(rule_name.as_deref())
            }
            _ => None,
        })
        .collect();
    assert_eq!(named, [None, Some("tag"), Some("mark")]);
    // Without its rules a subscription takes nothing.
    for name in ["$Default", "red", "tag", "mark"] {
        ns.delete_rule(path, name).unwrap();
    }
    let stored = ns.entity(path).unwrap().main.len();
    ns.send("t", message("b", "red", 12)).unwrap();
    assert_eq!(ns.entity(path).unwrap().main.len(), stored);
}

#[test]
fn r_flt_02_a_correlation_filter_needs_every_property_it_sets() {
    let mut ns = ns();
    let rule = SubscriptionRule::Correlation {
        subject: Some("order".into()),
        correlation_id: None,
        message_id: None,
        application_properties: typed(&[("region", text("eu"))]),
        system_properties: props(&[("To", "billing"), ("ContentType", "application/json")]),
        action: None,
    };
    topic(&mut ns, vec![("c", rule)]);
    let message = |subject: &str, region: &str, to: &str| NewMessage {
        subject: Some(subject.into()),
        application_properties: typed(&[("region", text(region))]),
        system_properties: props(&[("To", to), ("ContentType", "application/json")]),
        ..msg("m", None)
    };
    ns.send("t", message("order", "eu", "billing")).unwrap();
    ns.send("t", message("order", "us", "billing")).unwrap();
    ns.send("t", message("order", "eu", "shipping")).unwrap();
    ns.send("t", message("invoice", "eu", "billing")).unwrap();
    assert_eq!(got(&ns, "c"), 1);
    let m = ns
        .message("t/subscriptions/c", 1, Perspective::Peek)
        .unwrap();
    assert_eq!(
        m.system_properties.get("To").map(String::as_str),
        Some("billing")
    );
}

#[test]
fn r_flt_03_sql_filters_over_system_and_application_properties_unknown_is_no_match() {
    let mut ns = ns();
    topic(
        &mut ns,
        vec![
            ("big", sql("quantity > 10 AND sys.Label = 'order'", None)),
            (
                "eu",
                sql("region IN ('de', 'nl', 'sv') OR region LIKE 'eu-%'", None),
            ),
            (
                "untagged",
                sql("NOT EXISTS(region) AND priority IS NULL", None),
            ),
            (
                "math",
                sql("quantity * 2 + 1 = 25 AND sys.MessageId <> 'skip'", None),
            ),
            ("not-big", sql("NOT (quantity > 10)", None)),
        ],
    );
    let send = |ns: &mut Namespace, id: &str, p: &[(&str, PropertyValue)]| {
        let m = NewMessage {
            subject: Some("order".into()),
            application_properties: typed(p),
            ..msg(id, None)
        };
        ns.send("t", m).unwrap();
    };
    let int = PropertyValue::Int;
    send(
        &mut ns,
        "1",
        &[("quantity", int(12)), ("region", text("nl"))],
    );
    send(
        &mut ns,
        "2",
        &[("quantity", int(3)), ("region", text("eu-west"))],
    );
    send(&mut ns, "3", &[]);
    send(&mut ns, "skip", &[("quantity", int(12))]);
    assert_eq!(got(&ns, "big"), 2); // 1 and skip
    assert_eq!(got(&ns, "eu"), 2); // 1 (IN), 2 (LIKE)
    assert_eq!(got(&ns, "untagged"), 2); // 3 and skip
    assert_eq!(got(&ns, "math"), 1); // 1 (12 * 2 + 1), not skip
                                     // A missing quantity: NOT (unknown) is unknown, no match (3 is not in "not-big").
    assert_eq!(got(&ns, "not-big"), 1); // 2
                                        // Outside the subset: refused at creation, naming what was not understood.
    let err = SqlRule::new("quantity == 10", None).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("SqlFilter"));
    assert!(err.to_string().contains("FLT-03"), "{err}");
    assert!(SqlRule::new("sys.Unknown = 1", None).is_err());
}

#[test]
fn r_flt_04_an_action_changes_the_subscriptions_copy_only() {
    let mut ns = ns();
    topic(
        &mut ns,
        vec![
            ("plain", SubscriptionRule::MatchAll),
            (
                "tagged",
                sql(
                    "1 = 1",
                    Some("SET routed = 'yes'; SET sys.Label = 'copy'; REMOVE secret"),
                ),
            ),
        ],
    );
    let m = NewMessage {
        subject: Some("original".into()),
        application_properties: typed(&[("secret", text("x"))]),
        ..msg("a", None)
    };
    ns.send("t", m).unwrap();
    let plain = ns
        .message("t/subscriptions/plain", 1, Perspective::Peek)
        .unwrap();
    let tagged = ns
        .message("t/subscriptions/tagged", 1, Perspective::Peek)
        .unwrap();
    assert_eq!(plain.subject.as_deref(), Some("original"));
    assert_eq!(
        plain
            .application_properties
            .get("secret")
            .and_then(PropertyValue::as_str),
        Some("x")
    );
    assert_eq!(tagged.subject.as_deref(), Some("copy"));
    assert_eq!(
        tagged
            .application_properties
            .get("routed")
            .and_then(PropertyValue::as_str),
        Some("yes")
    );
    assert!(!tagged.application_properties.contains_key("secret"));
    let sent: Vec<_> = ns
        .log()
        .iter()
        .filter(|e| e.entity == ns.entity("t/subscriptions/tagged").unwrap().id)
        .collect();
    assert_eq!(sent[sent.len() - 1].rule, Some(Rule::Flt04));
    assert!(SqlRule::new("1 = 1", Some("DELETE x")).is_err());
}

#[test]
fn r_flt_03_properties_compare_by_their_type_a_string_is_not_a_number() {
    let mut ns = ns();
    topic(
        &mut ns,
        vec![
            ("big", sql("quantity > 100", None)),
            ("exact", sql("quantity = 250", None)),
            ("text", sql("quantity = '250'", None)),
            ("half", sql("quantity / 2 = 125 AND ratio * 2 = 1.5", None)),
            ("truncated", sql("odd / 2 = 3", None)),
            ("joined", sql("region + '-' + quantity = 'eu-250'", None)),
            ("flag", sql("express = TRUE", None)),
        ],
    );
    let send = |ns: &mut Namespace, p: &[(&str, PropertyValue)]| {
        let m = NewMessage {
            application_properties: typed(p),
            ..msg("m", None)
        };
        ns.send("t", m).unwrap();
    };
    // A string that reads as a number is still a string: no binding with a number, unknown.
    send(&mut ns, &[("quantity", text("250"))]);
    assert_eq!(
        (got(&ns, "big"), got(&ns, "exact"), got(&ns, "text")),
        (0, 0, 1)
    );
    // An int, a long and a double compare with each other (promoted).
    send(&mut ns, &[("quantity", PropertyValue::Int(250))]);
    send(&mut ns, &[("quantity", PropertyValue::Long(250))]);
    send(&mut ns, &[("quantity", PropertyValue::Double(250.0))]);
    assert_eq!(
        (got(&ns, "big"), got(&ns, "exact"), got(&ns, "text")),
        (3, 3, 1)
    );
    // Arithmetic binds as C# does: an integer division truncates, a double stays a double.
    send(
        &mut ns,
        &[
            ("quantity", PropertyValue::Int(250)),
            ("ratio", PropertyValue::Double(0.75)),
            ("odd", PropertyValue::Long(7)),
            ("region", text("eu")),
            ("express", PropertyValue::Bool(true)),
        ],
    );
    assert_eq!(got(&ns, "half"), 1);
    assert_eq!(got(&ns, "truncated"), 1);
    assert_eq!(got(&ns, "joined"), 1);
    assert_eq!(got(&ns, "flag"), 1);
    // A boolean sent as the text "true" is not a boolean.
    send(&mut ns, &[("express", text("true"))]);
    assert_eq!(got(&ns, "flag"), 1);
}

#[test]
fn r_flt_02_a_correlation_filter_matches_a_property_by_value_and_type() {
    let mut ns = ns();
    let rule = SubscriptionRule::Correlation {
        subject: None,
        correlation_id: None,
        message_id: None,
        application_properties: typed(&[("n", PropertyValue::Int(1))]),
        system_properties: props(&[]),
        action: None,
    };
    topic(&mut ns, vec![("c", rule)]);
    for v in [
        PropertyValue::Int(1),
        PropertyValue::Long(1),
        text("1"),
        PropertyValue::Double(1.0),
    ] {
        let m = NewMessage {
            application_properties: typed(&[("n", v)]),
            ..msg("m", None)
        };
        ns.send("t", m).unwrap();
    }
    assert_eq!(got(&ns, "c"), 1, "only the int 1");
}

#[test]
fn r_flt_04_an_action_sets_a_value_of_the_expressions_type() {
    let mut ns = ns();
    topic(
        &mut ns,
        vec![(
            "s",
            sql(
                "1 = 1",
                Some("SET l = 2; SET d = 0.5; SET b = TRUE; SET s = 'x'; SET twice = n * 2"),
            ),
        )],
    );
    let m = NewMessage {
        application_properties: typed(&[("n", PropertyValue::Int(21))]),
        ..msg("m", None)
    };
    ns.send("t", m).unwrap();
    let copy = ns
        .message("t/subscriptions/s", 1, Perspective::Peek)
        .unwrap();
    let p = &copy.application_properties;
    assert_eq!(p.get("l"), Some(&PropertyValue::Long(2)));
    assert_eq!(p.get("d"), Some(&PropertyValue::Double(0.5)));
    assert_eq!(p.get("b"), Some(&PropertyValue::Bool(true)));
    assert_eq!(p.get("s"), Some(&text("x")));
    // An int times a long constant is a long (C#'s promotion).
    assert_eq!(p.get("twice"), Some(&PropertyValue::Long(42)));
}

/// The .NET SDK's RuleManager live tests: `Color = 'yellow'` takes messages with "color";
/// `SET Priority = 'high'` changes their "priority"; a correlation filter's "Color" matches
/// "color".
#[test]
fn r_flt_03_property_names_match_regardless_of_case_and_set_updates_the_one_there() {
    let mut ns = ns();
    let correlation = SubscriptionRule::Correlation {
        subject: None,
        correlation_id: None,
        message_id: None,
        application_properties: typed(&[("Color", text("blue"))]),
        system_properties: props(&[]),
        action: None,
    };
    topic(
        &mut ns,
        vec![
            ("sql", sql("Color = 'blue'", Some("SET Priority = 'high'"))),
            ("corr", correlation),
            ("gone", sql("1 = 1", Some("REMOVE PRIORITY"))),
        ],
    );
    let m = NewMessage {
        application_properties: typed(&[("color", text("blue")), ("priority", text("low"))]),
        ..msg("m", None)
    };
    ns.send("t", m).unwrap();
    assert_eq!((got(&ns, "sql"), got(&ns, "corr")), (1, 1));
    let copy = ns
        .message("t/subscriptions/sql", 1, Perspective::Peek)
        .unwrap();
    let p = &copy.application_properties;
    assert_eq!(p.get("priority"), Some(&text("high")));
    assert!(!p.contains_key("Priority"), "no second property: {p:?}");
    let removed = ns
        .message("t/subscriptions/gone", 1, Perspective::Peek)
        .unwrap();
    assert!(!removed.application_properties.contains_key("priority"));
}

/// The .NET SDK's `RuleManagerLiveTests.CorrelationRuleFilterWithSqlRuleAction`: a correlation
/// filter's rule with a SQL action acts on its copy.
#[test]
fn r_flt_04_a_correlation_filters_action_acts_on_its_copy() {
    let mut ns = ns();
    let rule = SubscriptionRule::Correlation {
        subject: None,
        correlation_id: None,
        message_id: None,
        application_properties: typed(&[("Color", text("blue"))]),
        system_properties: props(&[]),
        action: Some(sbp_engine::entity::SqlAction::new("SET Priority = 'high'").unwrap()),
    };
    topic(&mut ns, vec![("s", rule)]);
    for color in ["blue", "red"] {
        let m = NewMessage {
            application_properties: typed(&[("color", text(color)), ("priority", text("low"))]),
            ..msg(color, None)
        };
        ns.send("t", m).unwrap();
    }
    assert_eq!(got(&ns, "s"), 1);
    let copy = ns
        .message("t/subscriptions/s", 1, Perspective::Peek)
        .unwrap();
    assert_eq!(
        copy.application_properties.get("priority"),
        Some(&text("high"))
    );
    assert!(ns.log().iter().any(|e| e.rule == Some(Rule::Flt04)));
    assert!(sbp_engine::entity::SqlAction::new("DROP x").is_err());
}

#[test]
fn r_flt_01_each_copy_names_the_rule_that_delivered_it() {
    let mut ns = ns();
    topic(&mut ns, vec![("s", sql("size > 100", None))]);
    let path = "t/subscriptions/s";
    ns.create_rule(path, "small", sql("size < 10", None))
        .unwrap();
    ns.create_rule(path, "tag", sql("size < 10", Some("SET tagged = 1")))
        .unwrap();
    ns.send(
        "t",
        NewMessage {
            application_properties: typed(&[("size", PropertyValue::Int(5))]),
            ..Default::default()
        },
    )
    .unwrap();
    let names: Vec<(u64, Option<String>, u64)> = [1u64, 2]
        .iter()
        .filter_map(|seq| ns.message(path, *seq, Perspective::Peek))
        .map(|m| (m.sequence_number, m.rule_name, m.enqueued_sequence_number))
        .collect();
    // The plain copy by the first matching rule without an action; the acted one by its rule;
    // both were submitted to the topic as #1 (EnqueuedSequenceNumber).
    assert_eq!(
        names,
        vec![(1, Some("small".into()), 1), (2, Some("tag".into()), 1)]
    );
}
