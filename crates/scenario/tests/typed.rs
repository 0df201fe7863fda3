//! Typed application properties in the scenario format (issue 19): every type read, written
//! and read back the same; what cannot be one is refused with the reason.
use sbp_engine::PropertyValue;
use sbp_scenario::Scenario;

fn sent(properties: &str) -> Result<Scenario, String> {
    Scenario::from_json(&format!(
        r#"{{"version": 1, "entities": [{{"queue": "q"}}],
            "timeline": [{{"at": "0s", "send": {{"to": "q", "properties": {properties}}}}}]}}"#
    ))
    .map_err(|e| e.to_string())
}

fn properties(s: &Scenario) -> std::collections::BTreeMap<String, PropertyValue> {
    match &s.timeline[0].action {
        Some(sbp_scenario::Action::Send(send)) => send.properties.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_type_is_read_written_and_read_back_alike() {
    let s = sent(
        r#"{"s": "10", "i": 10, "big": 3000000000, "l": {"long": 5}, "text-long": {"long": "9007199254740993"},
            "d": 1.5, "whole": {"double": 2}, "nan": {"double": "NaN"}, "inf": {"double": "-Infinity"},
            "b": false, "n": null, "t": {"timestamp": "2026-01-01T00:00:00.25Z"},
            "u": {"uuid": "5A22D8B7-6F39-4418-ADE4-9A5F17AF5DD3"}, "forced": {"int": 7}, "str": {"string": "x"}}"#,
    )
    .unwrap();
    let p = properties(&s);
    assert_eq!(p["s"], PropertyValue::String("10".into()));
    assert_eq!(p["i"], PropertyValue::Int(10));
    assert_eq!(p["big"], PropertyValue::Long(3_000_000_000));
    assert_eq!(p["l"], PropertyValue::Long(5));
    assert_eq!(p["text-long"], PropertyValue::Long(9_007_199_254_740_993));
    assert_eq!(p["whole"], PropertyValue::Double(2.0));
    assert_eq!(p["nan"], PropertyValue::Double(f64::NAN));
    assert_eq!(p["t"], PropertyValue::Timestamp(1_767_225_600_250));
    assert_eq!(p["u"].type_name(), "uuid");
    assert_eq!(p["forced"], PropertyValue::Int(7));
    let again = Scenario::from_json(&s.to_json_pretty()).unwrap();
    assert_eq!(properties(&again), p, "{}", s.to_json_pretty());
}

#[test]
fn a_value_that_is_not_of_its_type_is_refused_with_the_reason() {
    for (bad, reason) in [
        (r#"{"x": {"int": 3000000000}}"#, "32 bits"),
        (r#"{"x": {"decimal": 1}}"#, "not a type"),
        (r#"{"x": {"uuid": "nope"}}"#, "not a uuid"),
        (r#"{"x": {"long": 1, "int": 2}}"#, "one key"),
        (r#"{"x": [1, 2]}"#, "a string, a number"),
        (r#"{"x": {"timestamp": "yesterday"}}"#, "yesterday"),
    ] {
        let err = sent(bad).expect_err(bad);
        assert!(err.contains(reason), "{bad}: {err}");
    }
}

/// A body is bytes: text when it is UTF-8, else written `{"base64": ...}`; the size that counts
/// is the bytes' (SEND-04), and generated code sends the same bytes.
#[test]
fn a_body_is_bytes_with_a_text_view_when_it_is_utf8() {
    let s = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q"}],
            "timeline": [{"at": "0s", "send": {"to": "q", "body": {"base64": "AAEC/w=="}}},
                         {"at": "0s", "send": {"to": "q", "body": "grüß"}}]}"#,
    )
    .unwrap();
    let again = Scenario::from_json(&s.to_json_pretty()).unwrap();
    assert_eq!(again, s);
    assert!(s.to_json_pretty().contains(r#""base64": "AAEC/w==""#));
    let mut sim = sbp_scenario::Simulation::new(&s).unwrap();
    sim.run_to_end();
    let bytes = sim
        .ns()
        .message("q", 1, sbp_engine::Perspective::Peek)
        .unwrap();
    assert_eq!(bytes.body.bytes, vec![0, 1, 2, 255]);
    assert_eq!((bytes.body.text(), bytes.body_size), (None, 4));
    let text = sim
        .ns()
        .message("q", 2, sbp_engine::Perspective::Peek)
        .unwrap();
    assert_eq!((text.body.text(), text.body_size), (Some("grüß"), 6));
    for (lang, want) in [
        (
            sbp_scenario::code::Lang::CSharp,
            "Convert.FromBase64String(\"AAEC/w==\")",
        ),
        (
            sbp_scenario::code::Lang::Python,
            "base64.b64decode(\"AAEC/w==\")",
        ),
        (
            sbp_scenario::code::Lang::JavaScript,
            "Buffer.from(\"AAEC/w==\", \"base64\")",
        ),
    ] {
        let code = sbp_scenario::code::generate(&s, lang).unwrap();
        assert!(code.contains(want), "{code}");
    }
    let err = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q"}],
            "timeline": [{"at": "0s", "send": {"to": "q", "body": {"base64": "***"}}}]}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("base64"), "{err}");
}
