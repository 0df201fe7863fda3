//! A trainer's room over HTTP on loopback: the load of a workshop (100 learners joining,
//! reporting and answering at once against one room, the trainer's feed following), the
//! trainer's moves and reveals reaching every learner's feed, and the attacks on its routes
//! (no header, wrong keys, bodies too large or malformed, unknown rooms), each changing
//! nothing.
use sbp_server::broker::Broker;
use sbp_server::Server;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

async fn start() -> SocketAddr {
    let scenario =
        sbp_scenario::Scenario::from_json(r#"{"version": 1, "entities": [{"queue": "q"}]}"#)
            .unwrap();
    let server = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        Broker::new(scenario, sbp_server::broker::unix_now()).unwrap(),
    )
    .await
    .unwrap();
    let http = sbp_server::serve_http(
        "127.0.0.1:0".parse().unwrap(),
        None,
        server.shared.clone(),
        &[],
        Default::default(),
    )
    .await
    .unwrap()
    .addr;
    tokio::spawn(server.run());
    http
}

/// One HTTP/1.1 request with `body`; the status and the body answered.
async fn request(
    http: SocketAddr,
    head: &str,
    extra: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    let mut s = TcpStream::connect(http).await.unwrap();
    s.write_all(
        format!(
            "{head} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut text = String::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_string(&mut text))
        .await
        .expect("answered in time")
        .unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or_default())
}

/// A change, as a page asks it (with the header).
async fn post(http: SocketAddr, path: &str, body: &str) -> (u16, serde_json::Value) {
    request(http, &format!("POST {path}"), "x-sbp-live: 1\r\n", body).await
}

/// A room's feed, read event by event.
struct Feed(BufReader<TcpStream>);

impl Feed {
    async fn open(http: SocketAddr, path: &str) -> Feed {
        let mut s = TcpStream::connect(http).await.unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
            .await
            .unwrap();
        Feed(BufReader::new(s))
    }

    async fn next(&mut self) -> (String, serde_json::Value) {
        let (mut kind, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            tokio::time::timeout(Duration::from_secs(10), self.0.read_line(&mut line))
                .await
                .expect("the feed goes on")
                .unwrap();
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(k) = line.strip_prefix("event: ") {
                kind = k.to_string();
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            } else if line.is_empty() && !kind.is_empty() {
                return (kind, serde_json::from_str(&data).unwrap());
            }
        }
    }

    /// The first `room` view for which `done` holds.
    async fn until(&mut self, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        loop {
            let (kind, view) = self.next().await;
            assert_eq!(kind, "room", "{view}");
            if done(&view) {
                return view;
            }
        }
    }
}

async fn open_room(http: SocketAddr) -> (String, String) {
    let (status, opened) = post(http, "/rooms", "").await;
    assert_eq!(status, 200, "{opened}");
    (
        opened["room"].as_str().unwrap().to_string(),
        opened["key"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_learners_join_one_room_and_the_trainer_sees_each_and_the_spread() {
    let http = start().await;
    let (room, trainer) = open_room(http).await;
    let mut trainer_feed = Feed::open(http, &format!("/rooms/{room}/trainer?key={trainer}")).await;
    let first = trainer_feed.until(|_| true).await;
    assert_eq!(first["learners"].as_array().unwrap().len(), 0);

    // 100 learners at once: each joins, follows its own feed, and reports three parts of a
    // lesson, answering part 2's prediction (a third answer "40s", the rest "never").
    let learners: Vec<_> = (0..100)
        .map(|i| {
            let room = room.clone();
            tokio::spawn(async move {
                let (status, joined) =
                    post(http, &format!("/rooms/{room}/join"), &format!(r#"{{"name": "learner {i}"}}"#)).await;
                assert_eq!(status, 200, "{joined}");
                let key = joined["key"].as_str().unwrap().to_string();
                let feed = Feed::open(http, &format!("/rooms/{room}/learner?key={key}")).await;
                for part in 0..3 {
                    let answer = match (part, i % 3) {
                        (1, 0) => r#", "answer": "40s""#,
                        (1, _) => r#", "answer": "never""#,
                        _ => "",
                    };
                    let body = format!(
                        r#"{{"lesson": "lazy-expiry", "part": {part}, "of": 4, "reached": {}, "hints": {}{answer}}}"#,
                        part == 2,
                        i % 2
                    );
                    let (status, said) =
                        post(http, &format!("/rooms/{room}/report?key={key}"), &body).await;
                    assert_eq!(status, 200, "{said}");
                }
                feed
            })
        })
        .collect();
    let mut feeds = Vec::new();
    for learner in learners {
        feeds.push(learner.await.unwrap());
    }

    let view = trainer_feed
        .until(|v| {
            v["learners"].as_array().unwrap().len() == 100
                && v["learners"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|l| l["part"] == 3)
        })
        .await;
    let hints: u64 = view["learners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["hints"].as_u64().unwrap())
        .sum();
    // Every other learner shows a hint in each of the three parts.
    assert_eq!(hints, 150);
    assert!(view["learners"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l["goals"] == 1));
    let spread = &view["predictions"][0];
    assert_eq!(
        spread["answers"],
        serde_json::json!([["never", 66], ["40s", 34]])
    );
    assert_eq!(spread["revealed"], false);

    // Hidden from every learner until the trainer reveals it; then every learner's feed has it.
    for feed in &mut feeds {
        let view = feed.until(|_| true).await;
        assert_eq!(view["revealed"], serde_json::json!([]), "{view}");
    }
    let (status, _) = post(
        http,
        &format!("/rooms/{room}/reveal?key={trainer}"),
        r#"{"lesson": "lazy-expiry", "part": 1}"#,
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = post(
        http,
        &format!("/rooms/{room}/move?key={trainer}"),
        r#"{"lesson": "sessions"}"#,
    )
    .await;
    assert_eq!(status, 200);
    for feed in &mut feeds {
        let view = feed
            .until(|v| v["moves"] == 1 && v["revealed"] != serde_json::json!([]))
            .await;
        assert_eq!(view["lesson"], "sessions");
        assert_eq!(
            view["revealed"][0]["answers"],
            serde_json::json!([["never", 66], ["40s", 34]])
        );
    }

    // The trainer closes the room: every feed is told.
    let (status, _) = post(http, &format!("/rooms/{room}/close?key={trainer}"), "").await;
    assert_eq!(status, 200);
    let (kind, said) = feeds[0].next().await;
    assert_eq!(kind, "closed");
    assert!(said["error"].as_str().unwrap().contains("no room"));
}

#[tokio::test]
async fn attacks_on_a_room_are_refused_with_their_limit_and_change_nothing() {
    let http = start().await;
    let (room, trainer) = open_room(http).await;
    let (_, joined) = post(http, &format!("/rooms/{room}/join"), r#"{"name": "Ann"}"#).await;
    let learner = joined["key"].as_str().unwrap().to_string();
    let before = Feed::open(http, &format!("/rooms/{room}/trainer?key={trainer}"))
        .await
        .until(|_| true)
        .await;

    let lesson = r#"{"lesson": "sessions"}"#;
    let huge = format!(r#"{{"name": "{}"}}"#, "x".repeat(10_000));
    let cases: Vec<(String, &str, String, u16, &str)> = vec![
        // Without the header a page of another origin cannot send.
        (
            format!("POST /rooms/{room}/move?key={trainer}"),
            "",
            lesson.into(),
            403,
            "x-sbp-live",
        ),
        (
            format!("POST /rooms/{room}/join"),
            "",
            r#"{"name": "Bo"}"#.into(),
            403,
            "x-sbp-live",
        ),
        ("POST /rooms".into(), "", String::new(), 403, "x-sbp-live"),
        // Keys that are not the trainer's.
        (
            format!("POST /rooms/{room}/move?key={learner}"),
            "x-sbp-live: 1\r\n",
            lesson.into(),
            403,
            "trainer",
        ),
        (
            format!("POST /rooms/{room}/reveal?key="),
            "x-sbp-live: 1\r\n",
            lesson.into(),
            403,
            "trainer",
        ),
        (
            format!("POST /rooms/{room}/close?key={learner}"),
            "x-sbp-live: 1\r\n",
            String::new(),
            403,
            "trainer",
        ),
        // A key that is not a learner's.
        (
            format!("POST /rooms/{room}/report?key={trainer}"),
            "x-sbp-live: 1\r\n",
            r#"{"lesson": "a", "part": 0, "of": 1}"#.into(),
            403,
            "learner",
        ),
        // Bodies too large, malformed, or with fields no page sends.
        (
            format!("POST /rooms/{room}/join"),
            "x-sbp-live: 1\r\n",
            huge,
            413,
            "",
        ),
        (
            format!("POST /rooms/{room}/join"),
            "x-sbp-live: 1\r\n",
            "{\"name\":".into(),
            400,
            "does not read",
        ),
        (
            format!("POST /rooms/{room}/join"),
            "x-sbp-live: 1\r\n",
            r#"{"name": "Bo", "ip": "1.2.3.4"}"#.into(),
            400,
            "unknown field",
        ),
        (
            format!("POST /rooms/{room}/join"),
            "x-sbp-live: 1\r\n",
            r#"{"name": "<script>\u0000"}"#.into(),
            400,
            "no control characters",
        ),
        (
            format!("POST /rooms/{room}/move?key={trainer}"),
            "x-sbp-live: 1\r\n",
            r#"{"lesson": "../x"}"#.into(),
            400,
            "a-z, 0-9",
        ),
        // A room that is not there.
        (
            "POST /rooms/ffff/join".into(),
            "x-sbp-live: 1\r\n",
            r#"{"name": "Bo"}"#.into(),
            404,
            "no room ffff",
        ),
        (
            "GET /rooms/ffff/learner?key=x".into(),
            "",
            String::new(),
            404,
            "no room",
        ),
        (
            format!("GET /rooms/{room}/trainer?key={learner}"),
            "",
            String::new(),
            403,
            "trainer",
        ),
    ];
    for (head, extra, body, status, says) in cases {
        let (got, answer) = request(http, &head, extra, &body).await;
        assert_eq!(got, status, "{head}: {answer}");
        assert!(
            answer.to_string().contains(says),
            "{head}: {answer} does not say {says}"
        );
    }
    let after = Feed::open(http, &format!("/rooms/{room}/trainer?key={trainer}"))
        .await
        .until(|_| true)
        .await;
    assert_eq!(before, after);
}
