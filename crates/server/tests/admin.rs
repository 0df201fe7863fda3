//! The management API over plain HTTP (`--admin`, as the .NET client addresses the emulator),
//! on loopback with raw requests: entities made, read, changed, listed and deleted with the
//! service's statuses, each a step of the run that the recording replays; and the attacks kept
//! as tests: a body past the bound, nested past the bound, a document type (entity expansion),
//! XML that is not well-formed, a Host of another site; each refused with the reason, changing
//! nothing.
use sbp_server::broker::Broker;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start() -> (SocketAddr, Arc<sbp_server::Shared>) {
    let scenario = sbp_scenario::Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "orders"}, {"topic": "events"}]}"#,
    )
    .unwrap();
    let shared = Arc::new(sbp_server::Shared::new(
        Broker::new(scenario, sbp_server::broker::unix_now()).unwrap(),
    ));
    let addr = sbp_server::admin::serve("127.0.0.1:0".parse().unwrap(), None, shared.clone(), &[])
        .await
        .unwrap();
    (addr, shared)
}

/// Sends one request (`host` as its Host) and reads the whole response: status and body.
async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &str,
    body: &[u8],
) -> (u16, String) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost:{}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        addr.port(),
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let _ = s.write_all(body).await;
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut got))
        .await
        .expect("a response within 10 s")
        .unwrap();
    let text = String::from_utf8_lossy(&got).to_string();
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn entry(description: &str) -> Vec<u8> {
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">{description}</content></entry>"#
    )
    .into_bytes()
}

const SB: &str = r#"xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" xmlns:i="http://www.w3.org/2001/XMLSchema-instance""#;

#[tokio::test]
async fn entities_are_made_read_changed_listed_and_deleted_as_steps_of_the_run() {
    let (addr, shared) = start().await;
    let queue = entry(&format!(
        "<QueueDescription {SB}><LockDuration>PT45S</LockDuration><MaxDeliveryCount>4</MaxDeliveryCount></QueueDescription>"
    ));
    let (status, body) = request(addr, "PUT", "/invoices?api-version=2021-05", "", &queue).await;
    assert_eq!(status, 201, "{body}");
    assert!(
        body.contains("<LockDuration>PT45S</LockDuration>"),
        "{body}"
    );
    assert!(
        body.contains("<MaxDeliveryCount>4</MaxDeliveryCount>"),
        "{body}"
    );
    // An empty description: the service's defaults (LockDuration 1 min, duplicate window 10 min).
    let empty = entry(&format!("<QueueDescription {SB}/>"));
    let (status, body) = request(addr, "PUT", "/plain", "", &empty).await;
    assert_eq!(status, 201, "{body}");
    assert!(body.contains("<LockDuration>PT1M</LockDuration>"), "{body}");
    assert!(
        body.contains(
            "<DuplicateDetectionHistoryTimeWindow>PT10M</DuplicateDetectionHistoryTimeWindow>"
        ),
        "{body}"
    );
    assert_eq!(request(addr, "DELETE", "/plain", "", b"").await.0, 200);
    // 409 for a name taken, as the service.
    let (status, body) = request(addr, "PUT", "/invoices", "", &queue).await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body.contains("<Code>409</Code>") && body.contains("already exists"),
        "{body}"
    );
    // An update changes what it names.
    let update = entry(&format!(
        "<QueueDescription {SB}><MaxDeliveryCount>9</MaxDeliveryCount></QueueDescription>"
    ));
    let (status, body) = request(addr, "PUT", "/invoices", "If-Match: *\r\n", &update).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("<MaxDeliveryCount>9</MaxDeliveryCount>"),
        "{body}"
    );
    // A bad value: 400 naming it, nothing made.
    let bad = entry(&format!(
        "<QueueDescription {SB}><LockDuration>PT1S</LockDuration></QueueDescription>"
    ));
    let (status, body) = request(addr, "PUT", "/too-short", "", &bad).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("LockDuration"), "{body}");
    // A subscription with a correlation rule, and a rule added by SQL.
    let sub = entry(&format!(
        r#"<SubscriptionDescription {SB}><DefaultRuleDescription><Filter i:type="CorrelationFilter"><CorrelationId>c1</CorrelationId><Properties><KeyValueOfstringanyType><Key>n</Key><Value xmlns:d6p1="http://www.w3.org/2001/XMLSchema" i:type="d6p1:int">5</Value></KeyValueOfstringanyType></Properties></Filter><Name>mine</Name></DefaultRuleDescription></SubscriptionDescription>"#
    ));
    let (status, body) = request(addr, "PUT", "/events/Subscriptions/audit", "", &sub).await;
    assert_eq!(status, 201, "{body}");
    assert!(
        body.contains("<id>http://localhost:") && body.contains("/events/Subscriptions/audit</id>"),
        "{body}"
    );
    let rule = entry(&format!(
        r#"<RuleDescription {SB}><Filter i:type="SqlFilter"><SqlExpression>amount &gt; 100</SqlExpression></Filter><Action i:type="SqlRuleAction"><SqlExpression>SET tier = 'gold'</SqlExpression></Action><Name>big</Name></RuleDescription>"#
    ));
    let (status, body) = request(
        addr,
        "PUT",
        "/events/subscriptions/audit/rules/big",
        "",
        &rule,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = request(addr, "GET", "/events/Subscriptions/audit/Rules", "", b"").await;
    assert_eq!(status, 200);
    assert!(
        body.contains("<title type=\"text\">mine</title>") && body.contains("amount &gt; 100"),
        "{body}"
    );
    assert!(body.contains(r#"i:type="d6p1:int">5</Value>"#), "{body}");
    // A GET of a name not there: 200 with an empty feed, as the service.
    let (status, body) = request(addr, "GET", "/nowhere", "", b"").await;
    assert_eq!(status, 200);
    assert!(
        body.starts_with("<feed") && !body.contains("<entry"),
        "{body}"
    );
    // Lists are paged: self, then next while more remain.
    let (_, body) = request(addr, "GET", "/$Resources/queues?$skip=0&$top=1", "", b"").await;
    assert!(
        body.contains(r#"rel="next""#) && body.contains("$skip=1&amp;$top=1"),
        "{body}"
    );
    let (_, body) = request(addr, "GET", "/$Resources/queues?$skip=1&$top=1", "", b"").await;
    assert!(!body.contains(r#"rel="next""#), "{body}");
    // Deleted: 200 with nothing; again: 404.
    assert_eq!(request(addr, "DELETE", "/invoices", "", b"").await.0, 200);
    assert_eq!(request(addr, "DELETE", "/invoices", "", b"").await.0, 404);
    // Each change is a step of the run: its recording replays to the same entities.
    let mut broker = shared.lock();
    let recording = broker.recording().expect("the run");
    let keys: Vec<&str> = recording
        .timeline
        .iter()
        .filter_map(|s| s.action.as_ref().map(|a| a.key()))
        .collect();
    assert_eq!(
        keys,
        [
            "create", "create", "delete", "create", "update", "create", "create", "add_rule",
            "delete"
        ]
    );
    let mut replay = sbp_scenario::Simulation::new(&recording).expect("a scenario");
    replay.advance_to(recording.end());
    assert!(replay.failures.is_empty(), "{:?}", replay.failures);
    let rules = &replay
        .ns()
        .entity("events/subscriptions/audit")
        .expect("the subscription")
        .rules;
    assert_eq!(
        rules.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["mine", "big"]
    );
    assert!(replay.ns().entity("invoices").is_none());
}

#[tokio::test]
async fn attacks_are_refused_with_the_reason_and_change_nothing() {
    let (addr, shared) = start().await;
    let steps = || shared.lock().steps();
    let first = steps();
    let deep = format!("<QueueDescription>{}", "<a>".repeat(10_000));
    let bombs = [
        (entry(&deep), "nested deeper than 32"),
        (b"<entry><content>".to_vec(), "ends inside"),
        (
            b"<!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;\">]><entry>&b;</entry>".to_vec(),
            "document type",
        ),
        (entry("<TopicThing/>"), "holds no QueueDescription or TopicDescription"),
        (
            entry(&format!("<QueueDescription {SB}><MaxDeliveryCount>many</MaxDeliveryCount></QueueDescription>")),
            "MaxDeliveryCount",
        ),
        // What the playground does not model is refused, not ignored.
        (
            entry(&format!("<QueueDescription {SB}><Status>Disabled</Status></QueueDescription>")),
            "Status \"Disabled\": the playground models only \"Active\"",
        ),
        (
            entry(&format!("<QueueDescription {SB}><UserMetadata>m</UserMetadata></QueueDescription>")),
            "keeps no UserMetadata",
        ),
    ];
    for (body, why) in bombs {
        let (status, answer) = request(addr, "PUT", "/q", "", &body).await;
        assert_eq!(status, 400, "{answer}");
        assert!(answer.contains(why), "{answer} should say {why}");
    }
    let with_parameters = entry(&format!(
        r#"<RuleDescription {SB}><Filter i:type="SqlFilter"><SqlExpression>a = @p</SqlExpression><Parameters><KeyValueOfstringanyType><Key>@p</Key><Value>1</Value></KeyValueOfstringanyType></Parameters></Filter><Name>r</Name></RuleDescription>"#
    ));
    let (status, answer) = request(
        addr,
        "PUT",
        "/events/Subscriptions/s/Rules/r",
        "",
        &with_parameters,
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("SQL parameters"), "{answer}");
    assert_eq!(steps(), first, "nothing was recorded");
    // A rule's update the engine refuses leaves the rule as it was (it was removed first).
    let sub = entry(&format!("<SubscriptionDescription {SB}/>"));
    assert_eq!(
        request(addr, "PUT", "/events/Subscriptions/keep", "", &sub)
            .await
            .0,
        201
    );
    let bad_rule = entry(&format!(
        r#"<RuleDescription {SB}><Filter i:type="SqlFilter"><SqlExpression>color = = (</SqlExpression></Filter></RuleDescription>"#
    ));
    let (status, answer) = request(
        addr,
        "PUT",
        "/events/Subscriptions/keep/Rules/$Default",
        "If-Match: *\r\n",
        &bad_rule,
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    let (_, rules) = request(addr, "GET", "/events/Subscriptions/keep/Rules", "", b"").await;
    assert!(
        rules.contains("<title type=\"text\">$Default</title>"),
        "{rules}"
    );
    // Names a URL cannot carry, or XML cannot write back: refused.
    let q = entry(&format!("<QueueDescription {SB}/>"));
    for path in [
        "/.",
        "/..",
        "/a/./b",
        "/events/Subscriptions/keep/Rules/%01",
    ] {
        let (status, answer) = request(addr, "PUT", path, "", &q).await;
        assert_eq!(status, 400, "{path}: {answer}");
    }
    let before = steps();
    // Past the body bound: refused before it is read whole.
    let huge = vec![b'x'; sbp_server::admin::xml::MAX_BODY + 1];
    let (status, _) = request(addr, "PUT", "/q", "", &huge).await;
    assert_eq!(status, 413);
    // A Host of another site (DNS rebinding): refused.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(
        b"GET /$Resources/queues HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    let mut got = Vec::new();
    s.read_to_end(&mut got).await.unwrap();
    assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 403"));
    // A body sent slowly (a tenth of it, then nothing): 408 at the bound, the socket let go.
    let mut slow = TcpStream::connect(addr).await.unwrap();
    let started = std::time::Instant::now();
    slow.write_all(
        format!(
            "PUT /slow HTTP/1.1\r\nHost: localhost:{}\r\nContent-Length: 1000\r\n\r\n<entry>",
            addr.port()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut got = Vec::new();
    let limit = sbp_server::admin::REQUEST_TIMEOUT + Duration::from_secs(5);
    tokio::time::timeout(limit, slow.read_to_end(&mut got))
        .await
        .expect("answered within the bound")
        .unwrap();
    assert!(
        String::from_utf8_lossy(&got).starts_with("HTTP/1.1 408"),
        "{got:?}"
    );
    assert!(started.elapsed() >= sbp_server::admin::REQUEST_TIMEOUT);
    assert_eq!(steps(), before, "nothing was recorded");
    assert!(shared.lock().sim.ns().entity("q").is_none());
}

mod property {
    use super::*;
    use proptest::prelude::*;

    /// One request of a random sequence: a method, a path among a few names, a description
    /// among valid, odd and broken ones.
    fn op() -> impl Strategy<Value = (u8, u8, u8, bool)> {
        (0u8..3, 0u8..8, 0u8..10, any::<bool>())
    }

    const PATHS: [&str; 8] = [
        "/q1",
        "/q2",
        "/events",
        "/t1",
        "/t1/Subscriptions/s1",
        "/events/subscriptions/s2",
        "/events/Subscriptions/s2/Rules/r1",
        "/t1/subscriptions/s1/rules/$Default",
    ];

    fn body(kind: u8) -> Vec<u8> {
        match kind {
            0 => entry(&format!("<QueueDescription {SB}/>")),
            1 => entry(&format!("<TopicDescription {SB}><DefaultMessageTimeToLive>PT10M</DefaultMessageTimeToLive></TopicDescription>")),
            2 => entry(&format!("<SubscriptionDescription {SB}><LockDuration>PT1M</LockDuration><MaxDeliveryCount>2</MaxDeliveryCount></SubscriptionDescription>")),
            3 => entry(&format!(r#"<RuleDescription {SB}><Filter i:type="SqlFilter"><SqlExpression>n &gt; 1</SqlExpression></Filter><Name>r1</Name></RuleDescription>"#)),
            4 => entry(&format!("<QueueDescription {SB}><LockDuration>P1D</LockDuration></QueueDescription>")),
            5 => entry(&format!(r#"<RuleDescription {SB}><Filter i:type="SqlFilter"><SqlExpression>n &gt;</SqlExpression></Filter></RuleDescription>"#)),
            6 => b"<entry><content>".to_vec(),
            7 => entry(&format!("<QueueDescription {SB}><RequiresSession>true</RequiresSession><ForwardTo>sb://localhost/q2</ForwardTo></QueueDescription>")),
            8 => entry(&format!("<SubscriptionDescription {SB}><ForwardTo>q1</ForwardTo></SubscriptionDescription>")),
            _ => vec![0xff, 0xfe, b'<'],
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Whatever the sequence: every answer is one the service gives (never a 5xx, which
        /// the SDKs would retry), a refused request records nothing, and the recording of
        /// what was taken replays to the same entities and rules.
        #[test]
        fn any_sequence_of_requests_is_answered_and_replays(ops in proptest::collection::vec(op(), 1..40)) {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async {
                let (addr, shared) = start().await;
                for (method, path, kind, update) in ops {
                    let before = shared.lock().steps();
                    let method = ["GET", "PUT", "DELETE"][method as usize];
                    let headers = if update { "If-Match: *\r\n" } else { "" };
                    let payload = if method == "PUT" { body(kind) } else { Vec::new() };
                    let (status, answer) = request(addr, method, PATHS[path as usize], headers, &payload).await;
                    prop_assert!(matches!(status, 200 | 201 | 400 | 403 | 404 | 409), "{status} {answer}");
                    let after = shared.lock().steps();
                    if status >= 400 || method == "GET" {
                        // A refusal by the engine is a failed step of the run; any other changes nothing.
                        prop_assert!(after - before <= 1);
                        if method == "GET" {
                            prop_assert_eq!(after, before);
                        }
                    }
                }
                let mut broker = shared.lock();
                let recording = broker.recording().expect("the run");
                let mut replay = sbp_scenario::Simulation::new(&recording).expect("a scenario");
                replay.advance_to(recording.end());
                prop_assert!(replay.failures.is_empty(), "{:?}", replay.failures);
                let shape = |ns: &sbp_engine::Namespace| -> Vec<(String, Vec<String>)> {
                    ns.entities()
                        .map(|e| (e.path.clone(), e.rules.iter().map(|(n, _)| n.clone()).collect()))
                        .collect()
                };
                prop_assert_eq!(shape(replay.ns()), shape(broker.sim.ns()));
                Ok(())
            })?;
        }

        /// Any bytes, and XML-like text of the descriptions' own names, into the description
        /// reader: refused with a reason or read, never a panic.
        #[test]
        fn any_bytes_are_read_or_refused(
            bytes in proptest::collection::vec(any::<u8>(), 0..2048),
            text in "(<(Filter|Action|Properties|KeyValueOfstringanyType|Key|Value|SqlExpression|LockDuration|MaxSizeInMegabytes|Name|Parameters)( i:type=\"(d6p1:)?(int|long|string|dateTime|SqlFilter|CorrelationFilter|TrueFilter|SqlRuleAction)\")?>|</[A-Za-z]{1,8}>|[A-Za-z0-9 &;#PTMS.:-]{0,10}){0,60}",
        ) {
            let wrapped = format!("<RuleDescription>{text}</RuleDescription>");
            for input in [bytes.as_slice(), text.as_bytes(), wrapped.as_bytes()] {
                let Ok(root) = sbp_server::admin::xml::parse(input) else { continue };
                let _ = sbp_server::admin::atom::settings(&root, sbp_engine::Tier::Standard);
                if let Ok(rule) = sbp_server::admin::atom::rule(&root, "r") {
                    let _ = sbp_scenario::step::subscription_rule(Some(&rule));
                }
            }
        }
    }
}

/// A client that sends requests and never reads the answers is dropped once what is written
/// has waited [`sbp_server::http::WRITE_TIMEOUT`] for it: it does not keep its place for good.
#[tokio::test]
async fn a_client_that_never_reads_is_dropped() {
    let (addr, _shared) = start().await;
    for i in 0..40 {
        let q = entry(&format!("<QueueDescription {SB}/>"));
        assert_eq!(
            request(addr, "PUT", &format!("/queue-{i:03}"), "", &q)
                .await
                .0,
            201
        );
    }
    let mut s = TcpStream::connect(addr).await.unwrap();
    let one = format!(
        "GET /$Resources/queues?$top=1000 HTTP/1.1\r\nHost: localhost:{}\r\n\r\n",
        addr.port()
    );
    // Requests whose answers (about 100 KB each) fill the socket's buffers many times over.
    let started = std::time::Instant::now();
    for _ in 0..400 {
        if tokio::time::timeout(Duration::from_secs(1), s.write_all(one.as_bytes()))
            .await
            .is_err()
        {
            break; // the server stopped reading: its answers wait for us
        }
    }
    tokio::time::sleep(sbp_server::http::WRITE_TIMEOUT + Duration::from_secs(2)).await;
    // Dropped: what was sent before is read, then the end, well short of 400 answers.
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut got)).await;
    assert!(read.is_ok(), "the connection was closed");
    let answers = String::from_utf8_lossy(&got)
        .matches("HTTP/1.1 200")
        .count();
    assert!(answers < 400, "{answers} answers");
    assert!(started.elapsed() >= sbp_server::http::WRITE_TIMEOUT);
}
