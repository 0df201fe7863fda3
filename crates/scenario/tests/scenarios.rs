use proptest::prelude::*;
use sbp_scenario::link::{decode_link, encode_link, Link};
use sbp_scenario::presets::PRESETS;
use sbp_scenario::*;

fn log_text(sim: &Simulation) -> String {
    let words = sbp_engine::text::english().clone();
    sim.ns()
        .log()
        .iter()
        .map(|e| {
            format!(
                "{} {} {} {}\n",
                e.at,
                sim.ns().event_path(e),
                e.seq,
                words::event_text(&words, sim.ns(), e)
            )
        })
        .collect()
}

#[test]
fn every_preset_passes_its_expectations() {
    for (name, json) in PRESETS {
        let scenario = Scenario::from_json(json).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut sim = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(sim.run_to_end(), "{name}: {:#?}", sim.failures);
        assert!(!scenario.expect.is_empty(), "{name} has expectations");
    }
}

#[test]
fn same_scenario_twice_gives_the_same_event_log() {
    for (name, json) in PRESETS {
        let scenario = Scenario::from_json(json).unwrap();
        let run = || {
            let mut sim = Simulation::new(&scenario).unwrap();
            sim.run_to_end();
            (
                log_text(&sim),
                serde_json::to_string(sim.ns().log()).unwrap(),
            )
        };
        assert_eq!(run(), run(), "{name}");
    }
}

#[test]
fn a_broken_expectation_fails_with_a_clear_diff() {
    let json = PRESETS[0]
        .1
        .replace("\"dead_lettered\": 1", "\"dead_lettered\": 2");
    let mut sim = Simulation::new(&Scenario::from_json(&json).unwrap()).unwrap();
    assert!(!sim.run_to_end());
    assert!(
        sim.failures[0]
            .to_string()
            .contains("orders dead_lettered: expected 2, got 1"),
        "{:?}",
        sim.failures
    );
}

#[test]
fn unknown_fields_and_bad_values_are_named() {
    let typo = r#"{"version":1,"entities":[{"queue":"q","lock_duraton":"10s"}]}"#;
    let err = Scenario::from_json(typo).unwrap_err().to_string();
    assert!(err.contains("lock_duraton"), "{err}");
    let bad_dur = r#"{"version":1,"timeline":[{"at":"ten seconds","peek":{"from":"q"}}]}"#;
    assert!(Scenario::from_json(bad_dur)
        .unwrap_err()
        .to_string()
        .contains("duration"));
    let two =
        r#"{"version":1,"timeline":[{"at":"1s","peek":{"from":"q"},"receive":{"from":"q"}}]}"#;
    assert!(Scenario::from_json(two)
        .unwrap_err()
        .to_string()
        .contains("exactly one action"));
    let out_of_range = r#"{"version":1,"entities":[{"queue":"q","lock_duration":"1s"}]}"#;
    let err = Simulation::new(&Scenario::from_json(out_of_range).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("LockDuration") && err.contains("5s..5m"),
        "{err}"
    );
    let version = r#"{"version":2}"#;
    assert!(Scenario::from_json(version)
        .unwrap_err()
        .to_string()
        .contains("version 2"));
    let step_typo = r#"{"version":1,"timeline":[{"at":"1s","send":{"to":"q","tll":"1s"}}]}"#;
    assert!(Scenario::from_json(step_typo)
        .unwrap_err()
        .to_string()
        .contains("tll"));
    let update_typo =
        r#"{"version":1,"timeline":[{"at":"1s","update":{"entity":"q","max_deliveries":1}}]}"#;
    assert!(Scenario::from_json(update_typo).is_err());
}

#[test]
fn link_round_trip_keeps_scenario_instant_and_speed() {
    for (_, json) in PRESETS {
        let scenario = Scenario::from_json(json).unwrap();
        let link = Link {
            scenario: scenario.clone(),
            at: Some(12_345),
            speed: Some(60),
            checkpoint: None,
        };
        let text = encode_link(&link);
        assert!(
            text.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=&".contains(c)),
            "URL-safe: {text}"
        );
        assert!(text.starts_with("s=1z"), "compressed when that helps");
        let back = decode_link(&format!("https://example.test/#{text}")).unwrap();
        assert_eq!(back, link);
    }
}

#[test]
fn broken_links_give_clear_errors() {
    let good = encode_link(&Link {
        scenario: Scenario::from_json(PRESETS[0].1).unwrap(),
        at: None,
        speed: None,
        checkpoint: None,
    });
    let cases = [
        ("", "no scenario"),
        ("s=", "holds no scenario"),
        ("s=9zAAAA", "newer version"),
        ("s=1z!!!!", "base64"),
        ("s=1zAAAA", "decompress"),
        ("s=1jbm90IGpzb24", "cannot read"),
        ("x=999999", "speed"),
        ("foo=1", "unknown part"),
    ];
    for (text, want) in cases {
        let err = decode_link(text).unwrap_err().to_string();
        assert!(err.contains(want), "{text}: {err}");
    }
    // What a broken link holds is quoted short: its start, cut with "…".
    for text in [
        format!("{}=1", "A".repeat(200 * 1024)),
        format!("t={}", "9".repeat(200 * 1024)),
        format!("x={}", "9".repeat(200 * 1024)),
    ] {
        let err = decode_link(&text).unwrap_err().to_string();
        assert!(
            err.len() < 200 && err.contains('…'),
            "{} bytes: {err}",
            err.len()
        );
    }
    let truncated = &good[..good.len() / 2];
    assert!(decode_link(truncated).is_err());
    let huge = format!("s=1j{}", "A".repeat(300 * 1024));
    assert!(decode_link(&huge)
        .unwrap_err()
        .to_string()
        .contains("longer"));
}

proptest! {
    #[test]
    fn decoding_any_string_never_panics(s in ".{0,400}") {
        let _ = decode_link(&s);
        let _ = decode_link(&format!("s=1z{s}"));
        let _ = decode_link(&format!("s=1j{s}"));
    }

    #[test]
    fn any_ttl_and_count_round_trip_through_a_link(ttl in 0i64..10_000_000, count in 1u32..50, seed: u64) {
        let scenario = Scenario {
            seed,
            entities: vec![EntityDef { queue: Some("q".into()), ..Default::default() }],
            timeline: vec![Step::new(Action::Send(SendDef { to: "q".into(), ttl: Some(Dur(ttl)), count: Some(count), ..Default::default() }))],
            ..Default::default()
        };
        let link = Link { scenario, at: None, speed: None, checkpoint: None };
        prop_assert_eq!(decode_link(&encode_link(&link)).unwrap(), link);
    }
}

#[test]
fn user_steps_are_recorded_and_later_steps_stay() {
    let mut sim =
        Simulation::new(&Scenario::from_json(sbp_scenario::presets::PRESETS[0].1).unwrap())
            .unwrap();
    sim.advance_to(5_000);
    let fault = Step::new(Action::Fault(FaultDef::ServiceUpdate));
    assert!(sim
        .schedule_step(fault, 60_000)
        .unwrap()
        .to_string()
        .contains("t=1m"));
    let send = Step::new(Action::Send(SendDef {
        to: "orders".into(),
        message_id: Some("late".into()),
        ..Default::default()
    }));
    sim.push_step(send).unwrap();
    let ats: Vec<i64> = sim.scenario().timeline.iter().map(|s| s.at.ms()).collect();
    assert_eq!(ats, vec![0, 5_000, 60_000]);
    // The recorded scenario replays to the same state.
    let mut replay = Simulation::new(sim.scenario()).unwrap();
    sim.advance_to(120_000);
    replay.advance_to(120_000);
    assert_eq!(
        serde_json::to_string(sim.ns().log()).unwrap(),
        serde_json::to_string(replay.ns().log()).unwrap()
    );
}

#[test]
fn r_ttl_14_a_very_short_ttl_send_warns() {
    let mut sim =
        Simulation::new(&Scenario::from_json(sbp_scenario::presets::PRESETS[0].1).unwrap())
            .unwrap();
    let short = Step::new(Action::Send(SendDef {
        to: "orders".into(),
        ttl: Some(Dur(500)),
        ..Default::default()
    }));
    assert!(sim.push_step(short).unwrap().to_string().contains("TTL-14"));
    let long = Step::new(Action::Send(SendDef {
        to: "orders".into(),
        ttl: Some(Dur(60_000)),
        ..Default::default()
    }));
    assert!(!sim.push_step(long).unwrap().to_string().contains("TTL-14"));
}

/// The browser fetches `presets/index.json` (the presets are data, not compiled into the wasm):
/// it lists every preset, in order, with its title.
#[test]
fn the_preset_index_lists_every_preset_with_its_title() {
    let index: Vec<serde_json::Value> =
        serde_json::from_str(include_str!("../presets/index.json")).unwrap();
    let listed: Vec<(String, String)> = index
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["title"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = PRESETS
        .iter()
        .map(|(n, j)| (n.to_string(), Scenario::from_json(j).unwrap().name))
        .collect();
    assert_eq!(listed, expected);
}

/// A step's JSON is format version 1, whatever the types behind it: pinned byte for byte.
#[test]
fn a_step_keeps_format_version_1() {
    let json = r#"{"at":"10s","note":"n","expect_error":"MessageLockLost","complete":{"from":"orders","seq":1,"receiver":"worker"}}"#;
    let step: Step = serde_json::from_str(json).unwrap();
    assert_eq!(step.action.as_ref().map(Action::key), Some("complete"));
    assert_eq!(serde_json::to_string(&step).unwrap(), json);
    for (_, preset) in PRESETS {
        let scenario = Scenario::from_json(preset).unwrap();
        let again = Scenario::from_json(&serde_json::to_string(&scenario).unwrap()).unwrap();
        assert_eq!(again, scenario);
    }
}

/// Every run bounded: a scenario whose work to its end is over the budget is refused before it
/// runs, naming the limit; a consumer group sharing a producer's name does not end the producer.
#[test]
fn a_scenario_over_the_work_budget_is_refused_naming_the_limit() {
    let heavy = r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[
        {"at":"0s","start_producer":{"name":"a","to":"q","rate":10000}},
        {"at":"1s","start_consumers":{"name":"a","from":"q"}},
        {"at":"1h","stop_producer":"a"}]}"#;
    let scenario = Scenario::from_json(heavy).unwrap();
    let err = scenario
        .check_run_to(scenario.end())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("playground limit") && err.contains("500000"),
        "{err}"
    );
    // As a link it still opens (at its start; the browser plays it on a bounded budget per
    // frame), so a scenario recorded in the browser is never lost.
    let link = encode_link(&Link {
        scenario: scenario.clone(),
        at: None,
        speed: None,
        checkpoint: None,
    });
    assert!(decode_link(&link).is_ok());
    let light = heavy.replace("\"rate\":10000", "\"rate\":10");
    let light = Scenario::from_json(&light).unwrap();
    assert!(light.check_run_to(light.end()).is_ok());
    // A step past the last instant, a rate past the limit: refused with the field named.
    let late = r#"{"version":1,"timeline":[{"at":"31d","note":"late"}]}"#;
    assert!(Scenario::from_json(late)
        .unwrap_err()
        .to_string()
        .contains("t=0..30days"));
    let fast = r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[{"at":"0s","start_producer":{"name":"p","to":"q","rate":20000}}]}"#;
    assert!(Scenario::from_json(fast)
        .unwrap_err()
        .to_string()
        .contains("rate: 20000 is not between 0 and 10000"));
}

/// A link's instant must be reachable within the open budget; the error names the limit.
#[test]
fn a_link_that_would_replay_too_much_is_refused() {
    let scenario = Scenario::from_json(
        r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[{"at":"0s","start_producer":{"name":"p","to":"q","rate":1000}}]}"#,
    )
    .unwrap();
    let far = encode_link(&Link {
        scenario: scenario.clone(),
        at: Some(3_600_000),
        speed: None,
        checkpoint: None,
    });
    let err = decode_link(&far).unwrap_err().to_string();
    assert!(err.contains("playground limit"), "{err}");
    // The UI's links keep the instant only when it can be reached.
    let kept = sbp_scenario::link::link_at(scenario.clone(), 60_000, None);
    assert_eq!(kept.at, Some(60_000));
    let dropped = sbp_scenario::link::link_at(scenario, 3_600_000, None);
    assert_eq!(dropped.at, None);
    assert!(decode_link(&encode_link(&dropped)).is_ok());
}

/// A link's instant past the playground's last instant is refused, naming the limit.
#[test]
fn a_link_past_the_last_instant_is_refused() {
    let scenario = Scenario::from_json(r#"{"version":1}"#).unwrap();
    let late = encode_link(&Link {
        scenario,
        at: Some(sbp_engine::limits::LATEST_INSTANT + 1),
        speed: None,
        checkpoint: None,
    });
    let err = decode_link(&late).unwrap_err().to_string();
    assert!(
        err.contains("is outside t=0..30days (playground limit)"),
        "{err}"
    );
}

/// The browser shows the rule texts from its catalog (data, not compiled into the wasm): the
/// English catalog must say every rule of the engine as the engine does, and each choice.
#[test]
fn the_catalogs_rule_texts_match_the_engine() {
    let en = sbp_engine::text::english();
    for rule in sbp_engine::Rule::ALL {
        assert_eq!(
            en.get(&format!("rule-{}", rule.id())),
            Some(rule.summary()),
            "web/i18n/en.ftl: rule-{}",
            rule.id()
        );
    }
    for (i, choice) in sbp_scenario::rules_data::CHOICES.iter().enumerate() {
        assert_eq!(en.get(&format!("choice-{}", i + 1)), Some(*choice));
    }
    assert_eq!(
        en.get(&format!(
            "choice-{}",
            sbp_scenario::rules_data::CHOICES.len() + 1
        )),
        None
    );
}

/// What a settlement did is said as what happened to which message (the browser's status line
/// reads it out), not as the broker's bare "done".
#[test]
fn a_settlement_says_what_happened_to_which_message() {
    let mut sim =
        Simulation::new(&Scenario::from_json(sbp_scenario::presets::PRESETS[0].1).unwrap())
            .unwrap();
    let step = |json: &str| {
        serde_json::from_str::<Step>(&json.replacen('{', r#"{"at": "0s", "#, 1)).unwrap()
    };
    sim.push_step(step(r#"{"send": {"to": "orders"}}"#))
        .unwrap();
    let got = sim.push_step(step(r#"{"receive": {"from": "orders"}}"#));
    assert_eq!(got.unwrap().to_string(), "got #1");
    let seq = sim.ns().log().last().map_or(0, |e| e.seq);
    let done = sim.push_step(step(&format!(
        r#"{{"complete": {{"from": "orders", "seq": {seq}}}}}"#
    )));
    assert_eq!(
        done.unwrap().to_string(),
        format!("#{seq} completed in orders")
    );
    let fault = sim.push_step(step(r#"{"fault": "service_update"}"#));
    assert!(fault.unwrap().to_string().starts_with("done: fault"));
}

/// A preset worded again in another language (the reader switched): the run's name,
/// description and each narration take the other words, a step recorded since keeps its own
/// (none), what the run does is unchanged, and wording it back gives the scenario it was.
#[test]
fn a_run_reworded_takes_the_words_of_the_same_steps_and_does_the_same() {
    let worded = |name: &str, notes: [&str; 3]| {
        format!(
            r#"{{ "version": 1, "name": "{name}", "description": "{name}: about",
            "entities": [ {{ "queue": "orders" }} ],
            "timeline": [
              {{ "at": "0s", "note": "{}" }},
              {{ "at": "10s", "note": "{}", "send": {{ "to": "orders", "ttl": "1m" }} }},
              {{ "at": "20s", "send": {{ "to": "orders" }} }},
              {{ "at": "30s", "note": "{}", "receive": {{ "from": "orders" }} }}
            ] }}"#,
            notes[0], notes[1], notes[2]
        )
    };
    let english = Scenario::from_json(&worded("Sends", ["Start.", "One sent.", "One taken."]))
        .expect("reads");
    let german = Scenario::from_json(&worded(
        "Senden",
        ["Los.", "Eine gesendet.", "Eine genommen."],
    ))
    .expect("reads");
    let mut sim = Simulation::new(&english).expect("runs");
    sim.advance_to(5_000);
    // The learner's own send at 5 s: before the preset's steps at 10 s and later (their
    // places in the timeline move by one).
    let mine = Step {
        action: Some(step::Action::Send(model::SendDef {
            to: "orders".into(),
            ..Default::default()
        })),
        ..Default::default()
    };
    sim.push_step(mine).expect("a send");
    sim.advance_to(40_000);
    let before = (
        sim.ns().total_counts(),
        log_text(&sim),
        sim.scenario().clone(),
    );

    sim.reword(&german);
    let notes: Vec<Option<&str>> = sim
        .scenario()
        .timeline
        .iter()
        .map(|s| s.note.as_deref())
        .collect();
    assert_eq!(
        notes,
        [
            Some("Los."),
            None,
            Some("Eine gesendet."),
            None,
            Some("Eine genommen.")
        ]
    );
    assert_eq!(sim.scenario().name, "Senden");
    assert_eq!(sim.scenario().description, "Senden: about");
    assert_eq!(
        (sim.ns().total_counts(), log_text(&sim)),
        (before.0, before.1.clone())
    );
    let without_words = |s: &Scenario| {
        s.timeline
            .iter()
            .map(|s| (s.at, s.action.clone(), s.expect_error.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(without_words(sim.scenario()), without_words(&before.2));

    sim.reword(&english);
    assert_eq!(*sim.scenario(), before.2);
}
