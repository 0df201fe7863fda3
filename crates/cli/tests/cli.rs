//! The CLI as a user runs it.
use std::process::Command;

fn sbp(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sbp"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sbp-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn check_runs_every_preset() {
    let (code, out, _) = sbp(&["check"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("22 passed, 0 failed"), "{out}");
}

#[test]
fn run_prints_a_table_and_json_lines() {
    let (code, out, _) = sbp(&["run", "preset:ttl-expiry-to-dlq"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("DeadLettered")
            && out.contains("TTL-11")
            && out.contains("TTLExpiredException"),
        "{out}"
    );
    assert!(out.contains("2026-01-01T00:00:30"), "UTC shown: {out}");
    let (_, json, _) = sbp(&["run", "--json", "preset:ttl-expiry-to-dlq"]);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines
        .iter()
        .any(|l| l["kind"] == "DeadLettered" && l["rule"] == "TTL-11" && l["at_ms"] == 30000));
}

#[test]
fn failed_expectation_exits_non_zero_with_a_diff() {
    let text = sbp_scenario::presets::PRESETS[0]
        .1
        .replace("\"dead_lettered\": 1", "\"dead_lettered\": 5");
    let path = temp_file("broken.json", &text);
    let (code, out, _) = sbp(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("dead_lettered: expected 5, got 1"), "{out}");
}

#[test]
fn malformed_file_gets_a_clear_message() {
    let path = temp_file(
        "bad.json",
        "{\"version\": 1, \"entities\": [ {\"queue\": \"q\", \"lock_duration\": \"2s\"} ] }",
    );
    let (code, _, err) = sbp(&["run", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("LockDuration 2s is outside 5s..5m"), "{err}");
    let path = temp_file("notjson.json", "{ nope");
    let (code, _, err) = sbp(&["run", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn encode_then_decode_round_trips() {
    let (code, link, _) = sbp(&[
        "encode",
        "preset:scheduled-ttl",
        "--at",
        "1m",
        "--speed",
        "60",
    ]);
    assert_eq!(code, 0);
    // A link at an instant carries the state there (`c=`), so it opens without a replay.
    assert!(link.contains("&t=60000&x=60&c=1"), "{link}");
    let (code, json, err) = sbp(&["decode", link.trim()]);
    assert_eq!(code, 0, "{err}");
    assert!(json.contains("Scheduled 5 min ahead"));
    assert!(err.contains("opens at t=1m"));
    assert!(err.contains("with the state there"), "{err}");
    let (code, _, err) = sbp(&["decode", "#s=1zgarbage"]);
    assert_eq!(code, 2);
    assert!(err.contains("the link is broken"), "{err}");
}

#[test]
fn send_lab_reproduces_the_seed() {
    let (code, out, _) = sbp(&["send-lab"]);
    assert_eq!(code, 0);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("AwaitEach").contains("caller waits        8s"),
        "{out}"
    );
    assert!(
        line("StartAllThenAwait").contains("caller waits      80ms"),
        "{out}"
    );
    assert!(
        line("Semaphore(10)").contains("caller waits     800ms"),
        "{out}"
    );
    assert!(
        line("FireAndForget").contains("caller waits        0s"),
        "{out}"
    );
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbp"))
        .args(["run", "preset:story-traffic-spike"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    // Read one line, then hang up (as `| head -1` does).
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[cfg(unix)]
#[test]
fn an_endless_file_is_refused_at_the_size_limit() {
    let (code, _, err) = sbp(&["run", "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(err.contains("larger than 64 MB"), "{err}");
}

#[test]
fn an_error_shows_the_start_of_a_huge_value_only() {
    let name = "x".repeat(1_000_000);
    let path = temp_file(
        "huge.json",
        &format!(r#"{{"version":1,"entities":[{{"queue":"{name}$"}}]}}"#),
    );
    let (code, _, err) = sbp(&["run", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.len() < 2_000, "{} bytes", err.len());
    assert!(err.contains("not a valid entity name"), "{err}");
}

#[test]
fn a_min_i64_duration_in_an_expectation_is_reported_not_a_crash() {
    let path = temp_file(
        "min.json",
        r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[{"at":"0s","send":{"to":"q"}}],
            "expect":[{"at":"1s","messages":[{"entity":"q","seq":1,"properties":{"TimeToLive":-9223372036854775808}}]}]}"#,
    );
    let (code, out, err) = sbp(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("TimeToLive: expected -"), "{out}");
}

#[test]
fn import_prints_a_scenario_that_runs_and_export_writes_it_back_as_a_config() {
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenario/tests/data/emulator-config.json"
    );
    let (code, scenario, warnings) = sbp(&["import", config]);
    assert_eq!(code, 0, "{warnings}");
    assert!(scenario.contains("\"tier\": \"Emulator\""), "{scenario}");
    // SES-01: RequiresSession is modelled now; what is not (logging) is still said.
    assert!(!warnings.contains("RequiresSession"), "{warnings}");
    assert!(
        scenario.contains("\"requires_session\": true"),
        "{scenario}"
    );
    let path = temp_file("imported.json", &scenario);
    let (code, out, _) = sbp(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let (code, exported, warnings) = sbp(&["export", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{warnings}");
    let v: serde_json::Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(v["UserConfig"]["Namespaces"][0]["Name"], "sbemulatorns");
    assert_eq!(
        v["UserConfig"]["Namespaces"][0]["Topics"][0]["Subscriptions"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let (code, _, err) = sbp(&["import", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("UserConfig"), "{err}");
}

/// Issue 19: a run of one's own file may take more work than a link, when asked and said;
/// still bounded.
#[test]
fn a_run_past_the_default_budget_runs_with_budget_and_the_bound_is_named() {
    let heavy = temp_file(
        "heavy.json",
        r#"{"version": 1, "entities": [{"queue": "q"}],
            "timeline": [{"at": "0s", "start_producer": {"name": "p", "to": "q", "rate": 1000}},
                         {"at": "0s", "start_consumers": {"name": "c", "from": "q", "instances": 4, "mode": "receive_and_delete", "processing": {"fixed": "1ms"}}},
                         {"at": "10m", "stop_producer": "p"}],
            "expect": [{"at": "10m", "metrics": {"sent": {"min": 590000}}}]}"#,
    );
    let file = heavy.to_str().unwrap();
    let (code, out, _) = sbp(&["check", file]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("500000"), "refused naming the default: {out}");
    let (code, out, err) = sbp(&["check", "--budget", "2000000", file]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("budget: 2000000"), "said: {err}");
    let (code, _, err) = sbp(&["run", "--budget", "100000001", file]);
    assert_ne!(code, 0);
    assert!(err.contains("100000000"), "the bound named: {err}");
}

/// A one-thread HTTP server on 127.0.0.1 answering each GET with `pages[path]` (404 else),
/// for `count` requests.
fn serve_pages(pages: Vec<(&'static str, String)>, count: usize) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(count) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) <= 2 {
                    break;
                }
            }
            let path = first.split(' ').nth(1).unwrap_or("").to_string();
            let page = pages.iter().find(|(p, _)| *p == path);
            let (status, body) = match page {
                Some((_, body)) => ("200 OK", body.clone()),
                None => ("404 Not Found", "not found".to_string()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

#[test]
fn check_reads_the_playground_links_of_documents_folders_and_urls() {
    let (_, with_checks, _) = sbp(&["encode", "preset:ttl-expiry-to-dlq"]);
    let bare = temp_file(
        "bare.json",
        r#"{"version":1,"entities":[{"queue":"orders"}],"timeline":[{"at":"0s","send":{"to":"orders"}}]}"#,
    );
    let (_, without, _) = sbp(&["encode", bare.to_str().unwrap()]);
    let lesson = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../web/lessons/auto-delete-on-idle.json"
    ))
    .unwrap();
    let docs = std::env::temp_dir().join(format!("sbp-cli-docs-{}", std::process::id()));
    std::fs::create_dir_all(docs.join("guide/pg/lessons")).unwrap();
    std::fs::create_dir_all(docs.join("node_modules")).unwrap();
    std::fs::write(
        docs.join("guide/pg/lessons/auto-delete-on-idle.json"),
        &lesson,
    )
    .unwrap();
    let page = format!(
        "# Locks\n[watch](pg/index.html?embed=1#{})\n\
         <iframe src=\"pg/index.html?embed=1&amp;preset=sessions\"></iframe>\n\
         <service-bus-playground lesson=\"auto-delete-on-idle\" site=\"pg/\"></service-bus-playground>\n\
         [no checks](pg/#{})\n",
        with_checks.trim(),
        without.trim()
    );
    std::fs::write(docs.join("guide/locks.md"), &page).unwrap();
    std::fs::write(docs.join("node_modules/skipped.md"), "[x](pg/#s=1jbroken)").unwrap();
    // A link to a document is followed; a link to a folder (here, a loop) is not.
    std::os::unix::fs::symlink(docs.join("guide/locks.md"), docs.join("linked.md")).unwrap();
    std::os::unix::fs::symlink(&docs, docs.join("loop")).unwrap();
    let folder = docs.to_str().unwrap();
    let (code, out, _) = sbp(&["check", folder]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("linked.md:2 scenario link (3 events, 2 checks)"),
        "{out}"
    );
    assert!(
        out.contains("loop: a link to a folder, passed over"),
        "{out}"
    );
    std::fs::remove_file(docs.join("linked.md")).unwrap();
    std::fs::remove_file(docs.join("loop")).unwrap();
    let (code, out, _) = sbp(&["check", folder]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("locks.md:2 scenario link (3 events, 2 checks)"),
        "{out}"
    );
    assert!(out.contains("locks.md:3 preset sessions ("), "{out}");
    assert!(
        out.contains("locks.md:4 lesson auto-delete-on-idle (beside the page) (lesson, 3 parts"),
        "{out}"
    );
    assert!(
        out.contains("unchecked") && out.contains("locks.md:5 scenario link"),
        "{out}"
    );
    assert!(out.contains("3 passed, 0 failed, 1 unchecked"), "{out}");
    assert!(
        !out.contains("skipped.md"),
        "node_modules is not read: {out}"
    );
    // With --require-expectations the link without one fails.
    let (code, out, _) = sbp(&["check", "--require-expectations", folder]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL") && out.contains("--require-expectations"),
        "{out}"
    );
    // A broken link, and a preset that is not there, fail naming the line.
    std::fs::write(
        docs.join("guide/broken.html"),
        "<p>\n<a href=\"pg/#s=1jdamaged\">x</a>\n<iframe src=\"pg/?preset=nowhere\"></iframe>",
    )
    .unwrap();
    let (code, out, _) = sbp(&["check", docs.join("guide/broken.html").to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("broken.html:2 playground link") && out.contains("cannot be read"),
        "{out}"
    );
    assert!(
        out.contains("broken.html:3 preset nowhere") && out.contains("no preset"),
        "{out}"
    );
    // A page over http: its links, and the lesson beside it fetched.
    // The lesson named twice is fetched once (the server answers two requests only).
    let twice = page.replace("pg/", "playground/")
        + "<service-bus-playground lesson=\"auto-delete-on-idle\" site=\"playground/\"></service-bus-playground>\n";
    let site = serve_pages(
        vec![
            ("/docs/locks.html", twice),
            ("/docs/playground/lessons/auto-delete-on-idle.json", lesson),
        ],
        2,
    );
    let (code, out, _) = sbp(&["check", &format!("{site}/docs/locks.html")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("locks.html:4 lesson auto-delete-on-idle (fetched) (lesson, 3 parts"),
        "{out}"
    );
    assert!(
        out.contains("locks.html:6 lesson auto-delete-on-idle (fetched) (lesson, 3 parts"),
        "{out}"
    );
    assert!(out.contains("4 passed, 0 failed, 1 unchecked"), "{out}");
    // A URL that does not answer is named.
    let (code, out, _) = sbp(&["check", "http://127.0.0.1:9/nothing.md"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("cannot fetch"), "{out}");
}
