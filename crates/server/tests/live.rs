//! The live feed a page follows (`/live/events`, `/live/status`, `/live/clock`), over HTTP on
//! loopback, with an AMQP client (fe2o3-amqp) acting on the broker: the page gets the run so
//! far, then each step and the clock; a clock move lapses a lock the client then cannot
//! settle; a clock move without its header or out of bounds (at once, or in all ahead of the
//! wall clock) changes nothing; past the feed cap one more page is told 503.
use fe2o3_amqp::types::messaging::{Body, Message, Outcome};
use fe2o3_amqp::types::primitives::Value;
use fe2o3_amqp::{Connection, Receiver, Sender, Session};
use sbp_server::broker::Broker;
use sbp_server::Server;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

struct Running {
    amqp: std::net::SocketAddr,
    http: std::net::SocketAddr,
    shared: std::sync::Arc<sbp_server::Shared>,
}

async fn start() -> Running {
    let scenario = sbp_scenario::Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "orders", "lock_duration": "30s", "max_delivery_count": 5}]}"#,
    )
    .unwrap();
    let now = sbp_server::broker::unix_now();
    let server = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        Broker::new(scenario, now).unwrap(),
    )
    .await
    .unwrap();
    let dist = std::env::temp_dir().join(format!("sbp-live-test-{}", std::process::id()));
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>t</title>").unwrap();
    let http = sbp_server::serve_http(
        "127.0.0.1:0".parse().unwrap(),
        Some(sbp_server::site::Site::Folder(dist)),
        server.shared.clone(),
        &[],
        Default::default(),
    )
    .await
    .unwrap()
    .addr;
    let running = Running {
        amqp: server.addr,
        http,
        shared: server.shared.clone(),
    };
    tokio::spawn(server.run());
    running
}

/// One HTTP/1.1 request; the status and the body (the connection closes after it).
async fn request(http: std::net::SocketAddr, head: &str) -> (u16, String) {
    let mut s = TcpStream::connect(http).await.unwrap();
    s.write_all(
        format!("{head}\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut text = String::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_string(&mut text))
        .await
        .unwrap()
        .unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

/// The feed, read event by event: (kind, data).
struct Feed(BufReader<TcpStream>);

impl Feed {
    async fn open(http: std::net::SocketAddr) -> Feed {
        let mut s = TcpStream::connect(http).await.unwrap();
        s.write_all(
            b"GET /live/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
        )
        .await
        .unwrap();
        Feed(BufReader::new(s))
    }

    async fn next(&mut self) -> (String, String) {
        let (mut kind, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            tokio::time::timeout(Duration::from_secs(5), self.0.read_line(&mut line))
                .await
                .expect("the feed goes on")
                .unwrap();
            // Chunked transfer: the chunk sizes are lines of hex digits between events.
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(k) = line.strip_prefix("event: ") {
                kind = k.to_string();
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            } else if line.is_empty() && !kind.is_empty() {
                return (kind, data);
            }
        }
    }

    /// The next event of `kind`, skipping the others.
    async fn next_of(&mut self, kind: &str) -> serde_json::Value {
        loop {
            let (k, data) = self.next().await;
            if k == kind {
                return serde_json::from_str(&data).unwrap();
            }
        }
    }
}

#[tokio::test]
async fn a_page_follows_the_run_and_moves_the_clock() {
    let r = start().await;
    let (status, body) = request(r.http, "GET /live/status HTTP/1.1").await;
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["server"], "sbp serve");

    let mut feed = Feed::open(r.http).await;
    let first = feed.next_of("scenario").await;
    assert_eq!(first["scenario"]["entities"][0]["queue"], "orders");
    assert_eq!(
        first["scenario"]["timeline"]
            .as_array()
            .map_or(0, |t| t.len()),
        0
    );

    let mut connection =
        Connection::open("live-test-client", format!("amqp://{}", r.amqp).as_str())
            .await
            .unwrap();
    let mut session = Session::begin(&mut connection).await.unwrap();
    let mut sender = Sender::attach(&mut session, "live-sender", "orders")
        .await
        .unwrap();
    let outcome: Outcome = sender
        .send(Message::builder().value("watched").build())
        .await
        .unwrap();
    assert!(outcome.is_accepted());

    // The send arrives as a step at its index, with the body the client sent.
    let step = feed.next_of("step").await;
    assert_eq!(step["index"], 0);
    assert_eq!(step["step"]["send"]["to"], "orders");
    // (an amqp-value string: kept as its AMQP encoding, 0xa1 0x07 "watched").
    assert_eq!(
        step["step"]["send"]["body"],
        serde_json::json!({"amqp_value": "oQd3YXRjaGVk"})
    );

    // The clock comes every 250 ms with who is connected: the client by its container id.
    let now = feed.next_of("now").await;
    let clients = now["clients"].to_string();
    assert!(clients.contains("live-test-client"), "{clients}");
    assert!(clients.contains("live-sender"), "{clients}");

    let mut receiver = Receiver::attach(&mut session, "live-receiver", "orders")
        .await
        .unwrap();
    let delivery = receiver.recv::<Body<Value>>().await.unwrap();
    let step = feed.next_of("step").await;
    assert_eq!(step["index"], 1);
    assert!(step["step"]["receive"].is_object(), "{step}");

    // Without its header a clock move is refused and changes nothing.
    let before = r.shared.broker.lock().unwrap().sim.now();
    let (status, body) = request(r.http, "POST /live/clock?by=60000 HTTP/1.1").await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("x-sbp-live"), "{body}");
    // Out of bounds: refused with the limit named.
    let (status, body) = request(
        r.http,
        "POST /live/clock?by=999999999999 HTTP/1.1\r\nx-sbp-live: 1",
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("at once"), "{body}");
    assert!(r.shared.broker.lock().unwrap().sim.now() < before + 60_000);

    // Next event: the lock's lapse (LockedUntil, 30 s on), at once. The client's settlement
    // then fails (RCV-07: the lock lapsed, the message is available again).
    let (status, body) = request(r.http, "POST /live/clock?next HTTP/1.1\r\nx-sbp-live: 1").await;
    assert_eq!(status, 200, "{body}");
    let moved: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        moved["now"].as_i64().unwrap() >= before + 30_000,
        "{moved} vs {before}"
    );
    let now = feed.next_of("now").await;
    assert!(now["now"].as_i64().unwrap() >= before + 30_000);
    {
        // The lock lapsed (RCV-07) at the moved instant; the message went back and the
        // receiver's outstanding credit may take it again, as a second delivery.
        let broker = r.shared.broker.lock().unwrap();
        let lapsed = broker
            .sim
            .ns()
            .log()
            .iter()
            .any(|e| matches!(e.kind, sbp_engine::EventKind::LockLapsed));
        assert!(lapsed, "the lock lapsed");
    }
    // The client's accept names the lapsed lock: the message is not completed (the client
    // is told message-lock-lost; the Python SDK's MessageLockLostError is checked in
    // tests/sdk).
    let _ = receiver.accept(&delivery).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    {
        let broker = r.shared.broker.lock().unwrap();
        let c = broker
            .sim
            .ns()
            .entity("orders")
            .unwrap()
            .counts(broker.sim.now());
        assert_eq!(c.active + c.locked, 1, "not completed: {c:?}");
    }

    // +1 min: the clock moves by exactly that.
    let (status, body) = request(
        r.http,
        "POST /live/clock?by=60000 HTTP/1.1\r\nx-sbp-live: 1",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let after: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(after["now"].as_i64().unwrap() >= moved["now"].as_i64().unwrap() + 60_000);
    let _ = connection.close().await;
}

#[tokio::test]
async fn a_new_page_gets_the_run_so_far() {
    let r = start().await;
    let mut connection = Connection::open("early-client", format!("amqp://{}", r.amqp).as_str())
        .await
        .unwrap();
    let mut session = Session::begin(&mut connection).await.unwrap();
    let mut sender = Sender::attach(&mut session, "s", "orders").await.unwrap();
    for i in 0..3 {
        let outcome: Outcome = sender
            .send(Message::builder().value(format!("m{i}")).build())
            .await
            .unwrap();
        assert!(outcome.is_accepted());
    }
    let mut feed = Feed::open(r.http).await;
    let first = feed.next_of("scenario").await;
    let timeline = first["scenario"]["timeline"].as_array().unwrap();
    assert_eq!(timeline.len(), 3);
    // The page's engine replays it to the server's instant and has what the server has.
    let scenario = sbp_scenario::Scenario::from_json(&first["scenario"].to_string()).unwrap();
    let mut sim = sbp_scenario::Simulation::new(&scenario).unwrap();
    sim.advance_to(first["now"].as_i64().unwrap());
    assert_eq!(
        sim.ns().entity("orders").unwrap().counts(sim.now()).active,
        3
    );
    let _ = connection.close().await;
}

#[tokio::test]
async fn the_page_moves_the_clock_at_most_its_limit_ahead_of_the_wall_clock() {
    let r = start().await;
    let day = 24 * 3_600_000i64;
    let ahead = sbp_server::broker::MAX_CLOCK_AHEAD_MS;
    // Up to the limit, a day at a time.
    for _ in 0..ahead / day {
        let (status, body) = request(
            r.http,
            &format!("POST /live/clock?by={day} HTTP/1.1\r\nx-sbp-live: 1"),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    // One more is refused with the limit named, and changes nothing; the clock still runs
    // (it is nowhere near the engine's end).
    let before = r.shared.lock().sim.now();
    let (status, body) = request(
        r.http,
        &format!("POST /live/clock?by={day} HTTP/1.1\r\nx-sbp-live: 1"),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let limit = sbp_engine::time::format_duration(ahead);
    assert!(body.contains(&format!("at most {limit} ahead")), "{body}");
    assert!(r.shared.lock().sim.now() < before + 60_000);
    assert!(r.shared.lock().sim.now() < sbp_engine::limits::LATEST_INSTANT - day);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(r.shared.lock().now() > before, "the clock runs");
}

#[tokio::test]
async fn past_the_feed_cap_one_more_page_is_told_503() {
    let r = start().await;
    let mut feeds = Vec::new();
    for _ in 0..sbp_server::live::MAX_FEEDS {
        let mut feed = Feed::open(r.http).await;
        feed.next_of("scenario").await;
        feeds.push(feed);
    }
    let (status, body) = request(r.http, "GET /live/events HTTP/1.1").await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains(&format!("at most {} pages", sbp_server::live::MAX_FEEDS)),
        "{body}"
    );
    // A page that leaves gives its place back (its feed ends at the next event it misses).
    drop(feeds.pop());
    let mut followed = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut s = TcpStream::connect(r.http).await.unwrap();
        s.write_all(b"GET /live/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .unwrap();
        let mut head = [0u8; 12];
        tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut head))
            .await
            .unwrap()
            .unwrap();
        if &head == b"HTTP/1.1 200" {
            followed = true;
            break;
        }
    }
    assert!(followed, "a new page follows once one left");
}
