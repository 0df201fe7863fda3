//! Scenarios as SDK code (issue 10): every preset in C#, Python and JavaScript; the Python
//! parses (`python3 -m py_compile`), the JavaScript parses (`node --check`), the C# has balanced
//! structure; three presets are pinned as snapshots (`UPDATE_SNAPSHOTS=1` rewrites them after a
//! review against the SDKs' documented method names).
use sbp_scenario::code::{generate, Lang};
use sbp_scenario::presets::PRESETS;
use sbp_scenario::Scenario;
use std::path::{Path, PathBuf};
use std::process::Command;

const LANGS: [Lang; 3] = [Lang::CSharp, Lang::Python, Lang::JavaScript];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/code")
}

fn scratch(name: &str, code: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sbp-code-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let path = d.join(name);
    std::fs::write(&path, code).unwrap();
    path
}

/// The program in `file` parses: `python3 -m py_compile`, `node --check` (C# has no compiler
/// here: `balanced` stands in for it).
fn assert_parses(lang: Lang, file: &Path, label: &str) {
    let out = match lang {
        Lang::Python => Command::new("python3")
            .args(["-m", "py_compile"])
            .arg(file)
            .output()
            .expect("python3 (scripts/setup.sh installs it)"),
        Lang::JavaScript => Command::new("node")
            .arg("--check")
            .arg(file)
            .output()
            .expect("node"),
        Lang::CSharp => return,
    };
    assert!(
        out.status.success(),
        "{label}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Braces, brackets and parentheses balance outside strings and comments.
fn balanced(code: &str) -> Result<(), String> {
    let mut stack = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut chars = line.chars().peekable();
        let mut in_string = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' if in_string => {
                    chars.next();
                }
                '"' => in_string = !in_string,
                '/' if !in_string && chars.peek() == Some(&'/') => break,
                '(' | '[' | '{' if !in_string => stack.push((c, n + 1)),
                ')' | ']' | '}' if !in_string => {
                    let want = match c {
                        ')' => '(',
                        ']' => '[',
                        _ => '{',
                    };
                    match stack.pop() {
                        Some((open, _)) if open == want => {}
                        other => return Err(format!("line {}: {c} closes {other:?}", n + 1)),
                    }
                }
                _ => {}
            }
        }
        if in_string {
            return Err(format!("line {}: a string is not closed", n + 1));
        }
    }
    match stack.pop() {
        None => Ok(()),
        Some((c, line)) => Err(format!("{c} opened on line {line} is not closed")),
    }
}

#[test]
fn every_preset_is_written_in_three_languages_that_parse() {
    for (name, json) in PRESETS {
        let scenario = Scenario::from_json(json).unwrap();
        for lang in LANGS {
            let code = generate(&scenario, lang).unwrap_or_else(|e| panic!("{name}: {e}"));
            let file = scratch(&format!("{name}.{}", lang.extension()), &code);
            match lang {
                Lang::CSharp => {
                    balanced(&code).unwrap_or_else(|e| panic!("{name}.cs: {e}"));
                    assert!(code.contains("new ServiceBusClient(connection, "));
                }
                lang => assert_parses(lang, &file, &format!("{name}.{}", lang.extension())),
            }
        }
    }
}

#[test]
fn three_presets_match_their_reviewed_snapshots() {
    for name in [
        "lapsed-locks-to-dlq",
        "defer-and-receive-by-seq",
        "topic-ttl-smaller",
    ] {
        let json = PRESETS.iter().find(|(n, _)| *n == name).unwrap().1;
        let scenario = Scenario::from_json(json).unwrap();
        for lang in LANGS {
            let code = generate(&scenario, lang).unwrap();
            let path = dir().join(format!("{name}.{}", lang.extension()));
            if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
                std::fs::write(&path, &code).unwrap();
            }
            let pinned = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{path:?}: {e} (UPDATE_SNAPSHOTS=1 writes it)"));
            assert_eq!(
                code, pinned,
                "{path:?} changed: review, then UPDATE_SNAPSHOTS=1"
            );
        }
    }
}

#[test]
fn the_code_uses_the_sdks_method_names_for_each_step() {
    let scenario = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q", "max_delivery_count": 3},
              {"topic": "t"}, {"subscription": "t/subscriptions/s", "rule": {"subject": "a"}}],
            "timeline": [
              {"at": "0s", "send": {"to": "q", "message_id": "m", "ttl": "1m", "subject": "x"}},
              {"at": "0s", "send": {"to": "q", "scheduled_enqueue_time": "1h"}},
              {"at": "0s", "send": {"to": "t", "count": 3}},
              {"at": "1s", "receive": {"from": "q", "count": 1, "as": "first"}},
              {"at": "2s", "renew_lock": {"from": "q", "message": "first"}},
              {"at": "3s", "abandon": {"from": "q", "message": "first"}},
              {"at": "4s", "receive": {"from": "q"}},
              {"at": "5s", "dead_letter": {"from": "q", "seq": 1, "reason": "bad", "description": "no id"}},
              {"at": "6s", "cancel_scheduled": {"to": "q", "seq": 2}},
              {"at": "7s", "peek": {"from": "t/subscriptions/s", "count": 3}},
              {"at": "8s", "receive": {"from": "t/subscriptions/s", "mode": "receive_and_delete", "count": 3}},
              {"at": "9s", "update": {"entity": "t/subscriptions/s", "lock_duration": "1m"}}]}"#,
    )
    .unwrap();
    let expect = |lang: Lang, names: &[&str]| {
        let code = generate(&scenario, lang).unwrap();
        for n in names {
            assert!(code.contains(n), "{lang:?} lacks {n}:\n{code}");
        }
    };
    expect(
        Lang::CSharp,
        &[
            "CreateQueueAsync",
            "CreateSubscriptionAsync",
            "CorrelationRuleFilter { Subject = \"a\" }",
            "SendMessageAsync",
            "ScheduleMessageAsync",
            "ReceiveMessagesAsync",
            "RenewMessageLockAsync",
            "AbandonMessageAsync",
            "DeadLetterMessageAsync(m, \"bad\", \"no id\")",
            "var m = Message(\"c2\", 0);",
            "CancelScheduledMessageAsync(scheduled[\"q#2\"])",
            "PeekMessagesAsync(3)",
            "ServiceBusReceiveMode.ReceiveAndDelete",
            "TimeToLive = TimeSpan.FromMilliseconds(60000)",
            "GetSubscriptionAsync(\"t\", \"s\")",
            "UpdateSubscriptionAsync(properties)",
            "if (admin is not null)",
            "MaxRetries = 0",
        ],
    );
    expect(
        Lang::Python,
        &[
            "create_queue",
            "create_rule",
            "CorrelationRuleFilter(label=\"a\")",
            "send_messages",
            "sender(\"t\", True)",
            "client.get_topic_sender(path) if topic else client.get_queue_sender(path)",
            "schedule_messages",
            "receive_messages",
            "renew_message_lock",
            "abandon_message",
            "dead_letter_message(m, reason=\"bad\", error_description=\"no id\")",
            "m = message(\"c2\", 0)",
            "cancel_scheduled_messages(scheduled[\"q#2\"])",
            "peek_messages(max_message_count=3)",
            "ServiceBusReceiveMode.RECEIVE_AND_DELETE",
            "admin.get_subscription(\"t\", \"s\")",
            "admin.update_subscription(\"t\", properties)",
            "if admin:",
            "retry_total=0",
        ],
    );
    expect(
        Lang::JavaScript,
        &[
            "createQueue",
            "createRule",
            "{ subject: \"a\" }",
            "sendMessages",
            "scheduleMessages",
            "receiveMessages",
            "renewMessageLock",
            "abandonMessage",
            "deadLetterMessage(m, { deadLetterReason: \"bad\"",
            "const m = message(\"c2\", 0);",
            "cancelScheduledMessages(scheduledNumbers.get(\"q#2\"))",
            "peekMessages(3)",
            "\"receiveAndDelete\"",
            "timeToLive: 60000",
            "admin.getSubscription(\"t\", \"s\")",
            "admin.updateSubscription(properties)",
            "if (admin) {",
            "maxAutoLockRenewalDurationInMs: 0",
        ],
    );
}

#[test]
fn a_scenario_too_heavy_to_run_is_refused_not_written() {
    let heavy = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q"}],
            "timeline": [{"at": "0s", "start_producer": {"name": "p", "to": "q", "rate": 10000}},
                         {"at": "1h", "stop_producer": "p"}]}"#,
    )
    .unwrap();
    let err = generate(&heavy, Lang::Python).unwrap_err().to_string();
    assert!(err.contains("500000"), "{err}");
}

/// A text that tries to leave every place it can land in generated code: a quote and a
/// backslash to close a literal; a line end of each kind (`\r`, U+2028, U+2029, U+0085) to
/// close a comment, each followed by a call; an interpolation for C#, Python and JavaScript; a
/// bidirectional override; the other quote characters and a comment start. At most 50
/// characters, so it fits a rule name.
const HOSTILE: &str =
    "\"\\\rPWNED()\u{2028}PWNED()\u{2029}PWNED()\u{85}PWNED()\u{202E}${PWNED()}`'#";

/// `code` with its string literals and line comments taken out (the generator writes user text
/// only in double-quoted literals and line comments; `comment` is `//` or `#`).
fn outside_literals_and_comments(code: &str, comment: &str) -> String {
    let mut out = String::new();
    for line in code.split('\n') {
        let mut chars = line.char_indices().peekable();
        let mut in_string = false;
        while let Some((i, c)) = chars.next() {
            if in_string {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => in_string = false,
                    _ => {}
                }
            } else if c == '"' {
                in_string = true;
            } else if line[i..].starts_with(comment) {
                break;
            } else {
                out.push(c);
            }
        }
        assert!(!in_string, "a literal runs past its line: {line}");
        out.push('\n');
    }
    out
}

/// The hostile text in every field of the format that reaches generated code.
fn hostile_scenario() -> Scenario {
    let h = HOSTILE;
    let sql = h.replace('\'', "''");
    let json = serde_json::json!({
        "version": 1,
        "name": h,
        "description": h,
        "entities": [
            {"queue": "q", "requires_session": false},
            {"queue": "s", "requires_session": true},
            {"topic": "t"},
            {"subscription": "t/subscriptions/sql",
             "rule": {"name": h, "sql": format!("p = '{sql}'"), "action": format!("SET x = '{sql}'")}},
            {"subscription": "t/subscriptions/corr",
             "rule": {"subject": h, "correlation_id": h, "message_id": h,
                      "properties": {h: h}, "system_properties": {"To": h, "ReplyTo": h}}}
        ],
        "timeline": [
            {"at": "0s", "note": h, "send": {"to": "q", "message_id": h, "subject": h,
              "correlation_id": h, "properties": {h: h}, "system_properties": {"To": h}, "body": h}},
            {"at": "0s", "send": {"to": "q", "message_id": h, "count": 2, "body": h}},
            {"at": "0s", "send": {"to": "q", "message_id": h, "count": 2,
              "scheduled_enqueue_time": "1h"}},
            {"at": "0s", "send": {"to": "t", "message_id": h, "subject": h, "properties": {"p": h}}},
            {"at": "0s", "send": {"to": "s", "system_properties": {"SessionId": h}, "body": h}},
            {"at": "1s", "note": h, "receive": {"from": "q", "receiver": h, "count": 1, "as": "m"}},
            {"at": "2s", "dead_letter": {"from": "q", "message": "m", "reason": h, "description": h}},
            {"at": "3s", "session": {"receiver": h, "from": "s", "op": "accept", "session_id": h}},
            {"at": "3s", "session": {"receiver": h, "from": "s", "op": "set_state", "state": h}},
            {"at": "4s", "add_rule": {"subscription": "t/subscriptions/corr",
              "rule": {"name": format!("{h}2"), "sql": format!("p = '{sql}'")}}},
            {"at": "5s", "remove_rule": {"subscription": "t/subscriptions/corr", "rule": {"name": format!("{h}2")}}},
            {"at": "6s", "start_producer": {"name": h, "to": "q", "rate": 1, "max_messages": 2,
              "message_id_prefix": h}},
            {"at": "6s", "start_consumers": {"name": h, "from": "q"}},
            {"at": "8s", "stop_producer": h}
        ]
    });
    Scenario::from_json(&json.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

/// Issue 18 (security): text from a scenario never leaves the literal or comment it is written
/// in, in any of the three languages; the programs still parse.
#[test]
fn text_from_a_scenario_cannot_become_code() {
    let scenario = hostile_scenario();
    for lang in LANGS {
        let code = generate(&scenario, lang).unwrap();
        let bad = code
            .chars()
            .find(|&c| c != '\n' && sbp_scenario::code_text::is_hazard(c));
        assert_eq!(bad, None, "{lang:?} writes a hazard as itself:\n{code}");
        let comment = if lang == Lang::Python { "#" } else { "//" };
        let bare = outside_literals_and_comments(&code, comment);
        assert!(
            !bare.contains("PWNED"),
            "{lang:?}: text became code:\n{code}"
        );
        assert!(
            code.contains("PWNED"),
            "{lang:?}: the text is not written at all"
        );
        let file = scratch(&format!("hostile.{}", lang.extension()), &code);
        match lang {
            Lang::CSharp => balanced(&code).unwrap(),
            Lang::Python => {
                // Python's own tokenizer: no name token PWNED anywhere.
                let out = Command::new("python3")
                    .arg("-c")
                    .arg(
                        "import sys, tokenize\n\
                         toks = list(tokenize.open(sys.argv[1]).readlines())\n\
                         import io\n\
                         names = [t.string for t in tokenize.generate_tokens(io.StringIO(''.join(toks)).readline) if t.type == tokenize.NAME]\n\
                         compile(''.join(toks), sys.argv[1], 'exec')\n\
                         sys.exit(1 if 'PWNED' in names else 0)",
                    )
                    .arg(&file)
                    .output()
                    .expect("python3");
                assert!(
                    out.status.success(),
                    "hostile.py: {}\n{code}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            Lang::JavaScript => assert_parses(lang, &file, "hostile.js"),
        }
    }
}

/// PEP 263: a title on line 1 or 2 that names an encoding would have Python read the file in
/// it (`coding: utf-7` makes `+AAo-` a line end). Line 1 names UTF-8, so the title cannot.
#[test]
fn a_title_cannot_choose_the_python_files_encoding() {
    let json = serde_json::json!({
        "version": 1,
        "name": "coding: utf-7 +AAo-PWNED()",
        "description": "coding: utf-7 +AAo-PWNED()",
        "entities": [{"queue": "q"}],
        "timeline": []
    });
    let scenario = Scenario::from_json(&json.to_string()).unwrap();
    let code = generate(&scenario, Lang::Python).unwrap();
    assert!(code.starts_with("# -*- coding: utf-8 -*-\n"), "{code}");
    let file = scratch("utf7.py", &code);
    let out = Command::new("python3")
        .arg(&file)
        .env("SERVICEBUS_CONNECTION", "not used")
        .output()
        .expect("python3");
    // The program fails on the bogus connection string, never in PWNED.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("PWNED"), "{stderr}");
}

#[test]
fn a_system_property_outside_the_sdks_names_is_refused() {
    let json = r#"{"version": 1, "entities": [{"queue": "q"}],
        "timeline": [{"at": "0s", "send": {"to": "q", "system_properties": {"x = 1; PWNED()": "v"}}}]}"#;
    let err = Scenario::from_json(json).unwrap_err().to_string();
    assert!(err.contains("SessionId"), "{err}");
}

/// Issue 19 (typed messages): application properties are written with their types, C#'s in one
/// initializer (two would not compile: CS1912), and the programs still parse.
#[test]
fn application_properties_are_written_with_their_types() {
    let scenario = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q"}, {"topic": "t"},
            {"subscription": "t/subscriptions/s", "rule": {"properties": {"n": 1, "kind": "a"}}}],
          "timeline": [{"at": "0s", "send": {"to": "q", "properties": {
            "n": 10, "l": {"long": 5}, "d": 1.5, "whole": {"double": 2}, "ok": true,
            "s": "10", "at": {"timestamp": "2026-01-01T00:00:00Z"},
            "id": {"uuid": "5a22d8b7-6f39-4418-ade4-9a5f17af5dd3"}, "none": null}}}]}"#,
    )
    .unwrap();
    let cs = generate(&scenario, Lang::CSharp).unwrap();
    assert!(
        cs.contains(r#"ApplicationProperties = { ["at"] = DateTimeOffset.Parse("2026-01-01T00:00:00Z"), ["d"] = 1.5, ["id"] = Guid.Parse("5a22d8b7-6f39-4418-ade4-9a5f17af5dd3"), ["l"] = 5L, ["n"] = 10, ["none"] = null, ["ok"] = true, ["s"] = "10", ["whole"] = 2.0 }"#),
        "{cs}"
    );
    assert!(
        cs.contains(
            r#"new CorrelationRuleFilter { ApplicationProperties = { ["kind"] = "a", ["n"] = 1 } }"#
        ),
        "{cs}"
    );
    balanced(&cs).unwrap();
    let py = generate(&scenario, Lang::Python).unwrap();
    assert!(
        py.contains(r#""ok": True"#)
            && py.contains(r#""none": None"#)
            && py.contains(r#""s": "10""#),
        "{py}"
    );
    let js = generate(&scenario, Lang::JavaScript).unwrap();
    assert!(
        js.contains(r#""at": new Date("2026-01-01T00:00:00Z")"#),
        "{js}"
    );
    for (lang, code) in [(Lang::Python, py), (Lang::JavaScript, js)] {
        let file = scratch(&format!("typed.{}", lang.extension()), &code);
        assert_parses(lang, &file, "typed");
    }
}

#[test]
fn an_update_writes_what_it_changes_switched_off_too_and_never_a_setting_fixed_at_creation() {
    let scenario = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q", "requires_session": true,
              "dead_lettering_on_message_expiration": true, "lock_duration": "30s"}],
            "timeline": [{"at": "1s", "update": {"entity": "q", "dead_lettering_on_message_expiration": false}}]}"#,
    )
    .unwrap();
    let py = generate(&scenario, Lang::Python).unwrap();
    let update = &py
        [py.find("properties = admin.get_queue").unwrap()..py.find("admin.update_queue").unwrap()];
    assert!(
        update.contains("properties.dead_lettering_on_message_expiration = False"),
        "{update}"
    );
    assert!(!update.contains("lock_duration"), "{update}");
    assert!(!update.contains("requires_session"), "{update}");
    let js = generate(&scenario, Lang::JavaScript).unwrap();
    assert!(js.contains("properties.deadLetteringOnMessageExpiration = false;"));
}

#[test]
fn a_settlement_names_the_message_the_program_received_and_checks_follow_each_receive() {
    let json = PRESETS
        .iter()
        .find(|(n, _)| *n == "defer-and-receive-by-seq")
        .unwrap()
        .1;
    let py = generate(&Scenario::from_json(json).unwrap(), Lang::Python).unwrap();
    // The deferred message is asked for by the number the broker gave the program.
    assert!(
        py.contains("receive_deferred_messages([seq(\"c1\", 0)])"),
        "{py}"
    );
    // An unknown number keeps the playground's, and the error is checked by name.
    assert!(py.contains("receive_deferred_messages([99])"));
    assert!(py.contains(", \"MessageNotFound\"):\n"), "{py}");
    assert!(
        py.contains("check(\"receive 1 from orders as receiver: messages\", \"1\", str(len(got)))")
    );
    assert!(py.contains("sys.exit(1)"));
}

#[test]
fn producers_and_consumers_become_bounded_loops() {
    let json = PRESETS
        .iter()
        .find(|(n, _)| *n == "story-crashing-consumer")
        .unwrap()
        .1;
    let scenario = Scenario::from_json(json).unwrap();
    let py = generate(&scenario, Lang::Python).unwrap();
    assert!(
        py.contains(
            "start_producer(\"shop\", \"orders\", False, 10, 40, \"order-\", 0, (0, 0, 1))"
        ),
        "{py}"
    );
    assert!(
        py.contains("start_consumers(\"flaky\", \"orders\", 1, True, lambda: 0.2, 0.5, 0, 0, 2)")
    );
    assert!(py.contains("t.join(timeout=10)"));
    let js = generate(&scenario, Lang::JavaScript).unwrap();
    assert!(js.contains("startProducer(\"shop\", \"orders\", 10, 40, \"order-\", 0, [0, 0, 1]);"));
    assert!(js.contains("await Promise.all(actors);"));
    let cs = generate(&scenario, Lang::CSharp).unwrap();
    assert!(
        cs.contains("StartProducer(\"shop\", \"orders\", 10, 40, \"order-\", 0, (0, 0, 1));"),
        "{cs}"
    );
    assert!(
        cs.contains("StartConsumers(\"flaky\", \"orders\", 1, true, () => 200, 0.5, 0, 0, 2000);")
    );
    assert!(cs.contains("foreach (var stop in stops.Values) stop.Cancel();"));
    assert!(cs.contains("await Task.WhenAll(actors);"));
    // A producer without max_messages stops at 10,000.
    let spike = PRESETS
        .iter()
        .find(|(n, _)| *n == "story-traffic-spike")
        .unwrap()
        .1;
    let py = generate(&Scenario::from_json(spike).unwrap(), Lang::Python).unwrap();
    assert!(
        py.contains(", 10000, \"job-\", 30000, (60000, 60000, 10))"),
        "{py}"
    );
}

/// At an expectation the program reads what peek shows of each entity it counts (its
/// dead-letter queue too when the dead-lettered count is named) and checks it against the
/// playground's store at that instant; an entity a peek would keep alive (AutoDeleteOnIdle,
/// IDLE-02) is said and left unread.
#[test]
fn expectations_are_checked_with_peek_where_a_peek_changes_nothing() {
    let s = Scenario::from_json(
        r#"{"version": 1,
            "entities": [{"queue": "q"}, {"queue": "idle", "auto_delete_on_idle": "10m"}],
            "timeline": [
              {"at": "0s", "send": {"to": "q", "message_id": "a"}},
              {"at": "0s", "send": {"to": "q", "message_id": "b", "ttl": "5s"}},
              {"at": "0s", "send": {"to": "idle", "message_id": "c"}}],
            "expect": [{"at": "10s", "counts": {"q": {"active": 1, "dead_lettered": 0},
                                                "idle": {"active": 1}}}]}"#,
    )
    .unwrap();
    // Asked again at most until 5 s after the last instant (no step comes after it).
    let shown = r#""q", "active 1, deferred 0, scheduled 0", 15000)"#;
    let dlq = r#""q/$deadletterqueue", "active 0, deferred 0, scheduled 0", 15000)"#;
    for (lang, call) in [
        (Lang::Python, "counted("),
        (Lang::JavaScript, "await counted("),
        (Lang::CSharp, "await Counted("),
    ] {
        let code = generate(&s, lang).unwrap();
        // The check waits for the expectation's instant, after the TTL of b ran out.
        let at = code
            .find("t=10s: messages by State")
            .expect("a check at 10 s");
        assert!(code[..at].contains("10000)"), "{lang:?}: no wait for 10 s");
        assert!(code.contains(&format!("{call}{shown}")), "{lang:?}\n{code}");
        assert!(code.contains(&format!("{call}{dlq}")), "{lang:?}\n{code}");
        assert!(!code.contains(&format!("{call}\"idle\"")), "{lang:?}");
        assert!(code.contains("idle has AutoDeleteOnIdle"), "{lang:?}");
    }
}

/// Issue 34: every call to the broker is one attempt that is checked. An error the playground
/// did not show is a difference named with its step, caught so that the program goes on to
/// its summary and exit code; a call asked again (fewer messages than expected, a count that
/// differs) stops at the next step's instant, so that step runs on time.
#[test]
fn every_call_is_a_checked_attempt_and_asking_again_stops_at_the_next_step() {
    let s = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q"}],
            "timeline": [
              {"at": "0s", "send": {"to": "q", "message_id": "a"}},
              {"at": "1s", "receive": {"from": "q", "count": 1}},
              {"at": "3s", "complete": {"from": "q", "seq": 1}},
              {"at": "4s", "fault": "service_update"}],
            "expect": [{"at": "2s", "counts": {"q": {"active": 1}}}]}"#,
    )
    .unwrap();
    for (lang, caught, receive, counted) in [
        (
            Lang::Python,
            "with step(\"t=1s: receive 1 from q as receiver\"):\n            got = receive(",
            "receive(receiver(\"receiver\", \"q\", ServiceBusReceiveMode.PEEK_LOCK), 1, 1, 2000)",
            "counted(\"q\", \"active 1, deferred 0, scheduled 0\", 3000)",
        ),
        (
            Lang::JavaScript,
            "await step(\"t=1s: receive 1 from q as receiver\", undefined, async () => {\n        {\n            const got = await receive(",
            "await receive(receiver(\"receiver\", \"q\", \"peekLock\"), 1, 1, 2000)",
            "await counted(\"q\", \"active 1, deferred 0, scheduled 0\", 3000)",
        ),
        (
            Lang::CSharp,
            "await Step(\"t=1s: receive 1 from q as receiver\", null, async () =>\n{\n    {\n        var got = await ReceiveAsync(",
            "await ReceiveAsync(Receiver(\"receiver\", \"q\", ServiceBusReceiveMode.PeekLock), 1, 1, 2000)",
            "await Counted(\"q\", \"active 1, deferred 0, scheduled 0\", 3000)",
        ),
    ] {
        let code = generate(&s, lang).unwrap();
        assert!(code.contains(caught), "{lang:?}\n{code}");
        // Each step's calls are held by the step helper (`step`, C#'s `Step`), which checks
        // the error raised against the one the playground showed (NO_ERROR for none).
        for step in ["t=0s: send a message to q", "t=3s: complete #1 in q (receiver)"] {
            assert!(
                code.contains(&format!("tep(\"{step}\"")),
                "{lang:?}: {step}\n{code}"
            );
        }
        assert!(code.contains("expected ?? NO_ERROR, failure(e)") || code.contains("expected or NO_ERROR, failure(e)") || code.contains("expected ?? NO_ERROR, Failure(e)"), "{lang:?}\n{code}");
        // A fault is said, not called: nothing to catch.
        assert!(!code.contains("\"t=4s: "), "{lang:?}\n{code}");
        assert!(code.contains(receive), "{lang:?}\n{code}");
        assert!(code.contains(counted), "{lang:?}\n{code}");
    }
}

/// Issue 34: with the management API, an entity the namespace has already is not made again;
/// its settings as the broker has them are compared with the playground's first, each named
/// ("q MaxDeliveryCount"), durations in ms. A topic has no lock to compare.
#[test]
fn with_the_management_api_an_entity_there_is_compared_and_one_missing_made() {
    let s = Scenario::from_json(
        r#"{"version": 1, "entities": [
              {"queue": "q", "max_delivery_count": 3, "lock_duration": "5s"},
              {"topic": "t"},
              {"subscription": "t/subscriptions/s"}]}"#,
    )
    .unwrap();
    let py = generate(&s, Lang::Python).unwrap();
    for line in [
        "            settings1 = found(admin.get_queue, \"q\")\n            if settings1 is None:\n                admin.create_queue(\"q\", lock_duration=timedelta(milliseconds=5000), max_delivery_count=3)\n                settings1 = admin.get_queue(\"q\")\n",
        "check(\"q MaxDeliveryCount\", \"3\", str(settings1.max_delivery_count))",
        "check(\"q LockDuration (ms)\", \"5000\", ms(settings1.lock_duration))",
        "settings3 = found(admin.get_subscription, \"t\", \"s\")",
    ] {
        assert!(py.contains(line), "{line}\n{py}");
    }
    assert!(!py.contains("t LockDuration"), "a topic has no lock");
    let js = generate(&s, Lang::JavaScript).unwrap();
    for line in [
        "if (!(await admin.queueExists(\"q\"))) {",
        "const settings1 = await admin.getQueue(\"q\");",
        "check(\"q LockDuration (ms)\", \"5000\", isoMs(settings1.lockDuration));",
        "if (!(await admin.subscriptionExists(\"t\", \"s\"))) {",
    ] {
        assert!(js.contains(line), "{line}\n{js}");
    }
    let cs = generate(&s, Lang::CSharp).unwrap();
    for line in [
        "if (!(await admin.QueueExistsAsync(\"q\")).Value)",
        "var settings1 = (await admin.GetQueueAsync(\"q\")).Value;",
        "Check(\"q MaxDeliveryCount\", \"3\", settings1.MaxDeliveryCount.ToString());",
    ] {
        assert!(cs.contains(line), "{line}\n{cs}");
    }
    balanced(&cs).unwrap();
    for (lang, code) in [(Lang::Python, &py), (Lang::JavaScript, &js)] {
        let file = scratch(&format!("settings.{}", lang.extension()), code);
        assert_parses(lang, &file, "settings");
    }
}

/// Issue 34: every message an expectation names is checked at its instant, as peek shows it in
/// the playground and in the broker: DeliveryCount (the deliveries that failed so far, in every
/// SDK: MSG-02) and DeadLetterReason; its LockedUntil is said, not compared. The message is
/// asked for by the number the program received it with (C#'s `Seq`, the others' `seq`).
#[test]
fn a_message_an_expectation_names_is_checked_as_peek_shows_it() {
    let json = PRESETS
        .iter()
        .find(|(n, _)| *n == "lapsed-locks-to-dlq")
        .unwrap()
        .1;
    let s = Scenario::from_json(json).unwrap();
    let py = generate(&s, Lang::Python).unwrap();
    for line in [
        "m = peeked(\"orders/$deadletterqueue\", seq(\"c3\", 0))",
        "check(\"orders/$deadletterqueue #1 at t=25s, as peek shows it: DeadLetterReason\", \"MaxDeliveryCountExceeded\",",
        "check(\"orders/$deadletterqueue #1 at t=25s, as peek shows it: DeliveryCount\", \"3\",",
        // At 12 s the message is locked in its second delivery: peek shows one failed so far.
        "check(\"orders #1 at t=12s, as peek shows it: DeliveryCount\", \"1\",",
        "# orders #1 at t=12s: its LockedUntil is not compared",
    ] {
        assert!(py.contains(line), "{line}\n{py}");
    }
    let cs = generate(&s, Lang::CSharp).unwrap();
    assert!(
        cs.contains("var m = await Peeked(\"orders/$deadletterqueue\", Seq(\"c3\", 0));"),
        "{cs}"
    );
    assert!(!cs.contains(" seq(\""), "C# names its helper Seq\n{cs}");
    let js = generate(&s, Lang::JavaScript).unwrap();
    assert!(
        js.contains("const m = await peeked(\"orders/$deadletterqueue\", seq(\"c3\", 0));"),
        "{js}"
    );
}

/// Issue 34: the Python imports only what the program uses (pyflakes clean, as
/// `tests/sdk/presets.sh` checks for every preset): a uuid or a binary body brings its module.
#[test]
fn the_python_imports_only_what_it_uses() {
    let plain = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q"}],
            "timeline": [{"at": "0s", "send": {"to": "q"}}]}"#,
    )
    .unwrap();
    let py = generate(&plain, Lang::Python).unwrap();
    for unused in [
        "import uuid",
        "import base64",
        "SqlRuleFilter",
        "NEXT_AVAILABLE_SESSION",
    ] {
        assert!(!py.contains(unused), "{unused}\n{py}");
    }
    assert!(py.contains("import os\n") && py.contains("ServiceBusMessage"));
    let typed = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q"}],
            "timeline": [{"at": "0s", "send": {"to": "q", "body": {"base64": "AAEC/w=="},
              "properties": {"id": {"uuid": "6f1e2c3a-0000-4000-8000-000000000001"}}}}]}"#,
    )
    .unwrap();
    let py = generate(&typed, Lang::Python).unwrap();
    assert!(
        py.contains("import base64\n") && py.contains("import uuid\n"),
        "{py}"
    );
}

/// Issue 34: the expectations a client can read are checked at their instant: whether an entity
/// exists and its settings, through the management API (asked again until the next instant, as
/// the broker's instants lag the program's), and without it said as not checked; the
/// playground's totals and log, which no broker gives a client, are said as not checked.
#[test]
fn expectations_the_management_api_reads_are_checked_and_the_others_said() {
    let s = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "reply", "auto_delete_on_idle": "5m"},
              {"queue": "q", "max_delivery_count": 3}],
            "timeline": [{"at": "0s", "send": {"to": "reply"}}, {"at": "6m", "send": {"to": "q"}}],
            "expect": [
              {"at": "4m 59s", "exists": {"reply": true}},
              {"at": "5m", "exists": {"reply": false},
               "settings": {"q": {"MaxDeliveryCount": 3, "ForwardTo": null}}},
              {"at": "6m", "metrics": {"sent": {"min": 2}}, "events": {"Sent": {"min": 2}}}]}"#,
    )
    .unwrap();
    for (lang, exists, setting, unread) in [
        (
            Lang::Python,
            "check(\"reply at t=5m: exists, as the management API reads it\", \"false\", present(lambda: found(admin.get_queue, \"reply\") is not None, \"false\", 360000))",
            "check(\"q at t=5m, as the management API reads it: MaxDeliveryCount\", \"3\", str(now.max_delivery_count))",
            "print(\"reply at t=5m: not checked without SERVICEBUS_ADMIN_CONNECTION",
        ),
        (
            Lang::JavaScript,
            "check(\"reply at t=5m: exists, as the management API reads it\", \"false\", await present(() => admin.queueExists(\"reply\"), \"false\", 360000));",
            "check(\"q at t=5m, as the management API reads it: MaxDeliveryCount\", \"3\", String(now.maxDeliveryCount));",
            "console.log(\"reply at t=5m: not checked without SERVICEBUS_ADMIN_CONNECTION",
        ),
        (
            Lang::CSharp,
            "Check(\"reply at t=5m: exists, as the management API reads it\", \"false\", await Present(async () => (await admin.QueueExistsAsync(\"reply\")).Value, \"false\", 360000));",
            "Check(\"q at t=5m, as the management API reads it: MaxDeliveryCount\", \"3\", now.MaxDeliveryCount.ToString());",
            "Console.WriteLine(\"reply at t=5m: not checked without SERVICEBUS_ADMIN_CONNECTION",
        ),
    ] {
        let code = generate(&s, lang).unwrap();
        for line in [exists, setting, unread] {
            assert!(code.contains(line), "{lang:?} lacks {line}\n{code}");
        }
        // Read at 4m 59s, before the queue's deletion at 5m: asked again until 5m.
        assert!(code.contains("\"true\", 300000)"), "{lang:?}\n{code}");
        assert!(
            code.contains("q ForwardTo: not compared"),
            "{lang:?}\n{code}"
        );
        for said in [
            "the playground's totals at t=6m (sent) are not checked",
            "the playground's log at t=6m (Sent) is not checked",
        ] {
            assert!(code.contains(said), "{lang:?} lacks {said}\n{code}");
        }
    }
}

/// Issue 34: code a user would copy. The Python program runs from `main()`, its client and the
/// senders and receivers it opens closed by `with` blocks (an ExitStack); the JavaScript
/// declares only what it uses (eslint's no-unused-vars: tests/sdk/presets.sh lints every
/// preset's program), a word or helper no step needs taken out with its comment.
#[test]
fn the_programs_run_from_main_close_what_they_open_and_declare_only_what_they_use() {
    let s = Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "q"}],
            "timeline": [{"at": "0s", "send": {"to": "q", "message_id": "a"}}]}"#,
    )
    .unwrap();
    let py = generate(&s, Lang::Python).unwrap();
    for line in [
        "\ndef main() -> None:\n    with client, links:\n",
        "links.enter_context(client.get_topic_sender(path) if topic else client.get_queue_sender(path))",
        "\n        with step(\"t=0s: send a message to q\"):\n            sender(\"q\", False).send_messages(",
        "\n        summary()\n\n\nif __name__ == \"__main__\":\n    main()\n",
    ] {
        assert!(py.contains(line), "Python lacks {line}\n{py}");
    }
    let js = generate(&s, Lang::JavaScript).unwrap();
    assert!(js.contains("const sender = (path) =>"), "{js}");
    assert!(js.contains("await step(\"t=0s: send a message to q\", undefined, async () => {\n        await sender(\"q\").sendMessages("), "{js}");
    for unused in [
        "const receive =",
        "const receiver =",
        "const present =",
        "const peeked =",
        "const seq =",
        "const LOOP_FAILED",
        "const scheduledNumbers",
        // The comment of a helper taken out goes with it.
        "Message `number` of an entity",
    ] {
        assert!(!js.contains(unused), "{unused} is not used\n{js}");
    }
    // A helper another one calls stays with it: `counted` peeks through its own receivers, and
    // `check` is what every step's helper calls.
    assert!(
        js.contains("const check = ") && js.contains("const failure = "),
        "{js}"
    );
}
