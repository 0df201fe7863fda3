//! The HTTP side's door and bounds, over real sockets on loopback: a Host or an Origin of
//! another site is refused (DNS rebinding), a name given with `--allow-host` is taken, a
//! listener off loopback asks for its token and then takes its cookie, a half-sent header
//! does not hold its socket past `HEADER_READ_TIMEOUT`, and connections past
//! `MAX_HTTP_CONNECTIONS` are closed at once while service resumes after they go.
use sbp_server::broker::Broker;
use sbp_server::http::{HEADER_READ_TIMEOUT, MAX_HTTP_CONNECTIONS};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Running {
    /// Where to connect (loopback, also when the listener is on every address).
    http: SocketAddr,
    ui: sbp_server::Ui,
    shared: Arc<sbp_server::Shared>,
}

/// An HTTP listener on `bind` (port 0) over a broker with a queue, with `allow_hosts`.
async fn start(bind: &str, allow_hosts: &[&str]) -> Running {
    let scenario =
        sbp_scenario::Scenario::from_json(r#"{"version": 1, "entities": [{"queue": "orders"}]}"#)
            .unwrap();
    let now = sbp_server::broker::unix_now();
    let shared = Arc::new(sbp_server::Shared::new(Broker::new(scenario, now).unwrap()));
    let dist = std::env::temp_dir().join(format!("sbp-http-test-{}", std::process::id()));
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>t</title>").unwrap();
    let allow: Vec<String> = allow_hosts.iter().map(|h| h.to_string()).collect();
    let ui = sbp_server::serve_http(
        bind.parse().unwrap(),
        Some(sbp_server::site::Site::Folder(dist)),
        shared.clone(),
        &allow,
        Default::default(),
    )
    .await
    .unwrap();
    Running {
        http: SocketAddr::from(([127, 0, 0, 1], ui.addr.port())),
        ui,
        shared,
    }
}

/// Sends `head` (a request line and headers, without the blank line) and reads the response
/// head: its status and its header lines (lower case).
async fn ask(http: SocketAddr, head: &str) -> (u16, String) {
    let mut s = TcpStream::connect(http).await.unwrap();
    s.write_all(format!("{head}\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    // The head is enough (an event stream goes on after it).
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
            .await
            .expect("a response within 5 s")
            .unwrap();
        assert!(
            n > 0,
            "closed before a response: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).to_string();
    let status = text[9..12].parse().unwrap();
    (status, text.to_ascii_lowercase())
}

/// Sends `head` and reads the whole response (the connection closes after it): its status
/// and its body.
async fn exchange(http: SocketAddr, head: &str) -> (u16, String) {
    let mut s = TcpStream::connect(http).await.unwrap();
    s.write_all(format!("{head}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut text = String::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_string(&mut text))
        .await
        .expect("the whole response within 5 s")
        .unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

fn now(r: &Running) -> i64 {
    r.shared.lock().sim.now()
}

#[tokio::test]
async fn a_page_of_another_site_is_refused_by_its_host() {
    let r = start("127.0.0.1:0", &[]).await;
    let port = r.http.port();
    let before = now(&r);
    // What a rebinding page sends: its own name as Host. Nothing is read, the clock stays.
    for head in [
        "GET /live/status HTTP/1.1\r\nHost: evil.example",
        "GET /live/events HTTP/1.1\r\nHost: evil.example:8080",
        "GET / HTTP/1.1\r\nHost: evil.example",
        "GET /live/status HTTP/1.1\r\nHost: localhost.evil.example",
        "POST /live/clock?by=60000 HTTP/1.1\r\nHost: evil.example\r\nx-sbp-live: 1",
        // No Host at all is no name it answers to either.
        "GET /live/status HTTP/1.1",
    ] {
        let (status, body) = exchange(r.http, head).await;
        assert_eq!(status, 403, "{head}: {body}");
        assert!(body.contains("--allow-host NAME"), "{head}: {body}");
    }
    assert!(now(&r) < before + 60_000, "the clock did not move");
    // Loopback's names, with any port or none, are answered.
    for host in [
        format!("localhost:{port}"),
        "localhost".to_string(),
        "app.localhost:1234".to_string(),
        format!("127.0.0.1:{port}"),
        "127.0.0.2".to_string(),
        format!("[::1]:{port}"),
    ] {
        let (status, body) = exchange(
            r.http,
            &format!("GET /live/status HTTP/1.1\r\nHost: {host}"),
        )
        .await;
        assert_eq!(status, 200, "{host}: {body}");
    }
}

#[tokio::test]
async fn a_name_given_with_allow_host_is_answered() {
    let r = start("127.0.0.1:0", &["sbp.test"]).await;
    let (status, body) = exchange(r.http, "GET /live/status HTTP/1.1\r\nHost: sbp.test:8080").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = exchange(r.http, "GET / HTTP/1.1\r\nHost: SBP.test").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = exchange(r.http, "GET /live/status HTTP/1.1\r\nHost: other.test").await;
    assert_eq!(status, 403, "{body}");
}

#[tokio::test]
async fn an_origin_of_another_site_is_refused() {
    let r = start("127.0.0.1:0", &[]).await;
    let port = r.http.port();
    let before = now(&r);
    for origin in [
        "http://evil.example",
        "http://evil.example:8080",
        "null",
        "file://",
    ] {
        let (status, body) = exchange(
            r.http,
            &format!(
                "POST /live/clock?by=60000 HTTP/1.1\r\nHost: localhost:{port}\r\nx-sbp-live: 1\r\nOrigin: {origin}"
            ),
        )
        .await;
        assert_eq!(status, 403, "{origin}: {body}");
        assert!(body.contains("Origin"), "{body}");
        let (status, _) = exchange(
            r.http,
            &format!("GET /live/status HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: {origin}"),
        )
        .await;
        assert_eq!(status, 403, "{origin}");
    }
    assert!(now(&r) < before + 60_000, "the clock did not move");
    // The page's own origin moves the clock.
    let (status, body) = exchange(
        r.http,
        &format!(
            "POST /live/clock?by=60000 HTTP/1.1\r\nHost: localhost:{port}\r\nx-sbp-live: 1\r\nOrigin: http://localhost:{port}"
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(now(&r) >= before + 60_000);
}

#[tokio::test]
async fn off_loopback_the_token_is_asked_for_then_carried_by_a_cookie() {
    let r = start("0.0.0.0:0", &[]).await;
    let port = r.http.port();
    let token = r.ui.token.clone().expect("a token off loopback");
    assert_eq!(token.len(), 32);
    assert!(
        r.ui.url("live").ends_with(&format!("?live&token={token}")),
        "{}",
        r.ui.url("live")
    );
    let host = format!("Host: localhost:{port}");
    // Without the token (or with another), nothing; the refusal says how to get in.
    for head in [
        format!("GET /live/status HTTP/1.1\r\n{host}"),
        format!("GET / HTTP/1.1\r\n{host}"),
        format!("GET /?token=0123 HTTP/1.1\r\n{host}"),
        format!("GET /?token={}0 HTTP/1.1\r\n{host}", token),
        format!("GET /live/events HTTP/1.1\r\n{host}\r\nCookie: sbp_token_{port}=nope"),
    ] {
        let (status, body) = exchange(r.http, &head).await;
        assert_eq!(status, 401, "{head}: {body}");
        assert!(body.contains("?token="), "{body}");
    }
    // The printed URL's GET lets in and sets the cookie the page's later requests carry.
    let (status, head) = ask(
        r.http,
        &format!("GET /?live&token={token} HTTP/1.1\r\n{host}"),
    )
    .await;
    assert_eq!(status, 200, "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .expect("a cookie");
    assert!(cookie.contains("httponly"), "{cookie}");
    assert!(cookie.contains("samesite=strict"), "{cookie}");
    let pair = format!("sbp_token_{port}={token}");
    assert!(cookie.starts_with(&pair), "{cookie}");
    let (status, body) = exchange(
        r.http,
        &format!("GET /live/status HTTP/1.1\r\n{host}\r\nCookie: a=b; {pair}"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, head) = ask(
        r.http,
        &format!("GET /live/events HTTP/1.1\r\n{host}\r\nCookie: {pair}"),
    )
    .await;
    assert_eq!(status, 200, "{head}");
    // The door comes first: the token does not make another site's Host good.
    let (status, _) = exchange(
        r.http,
        &format!("GET /live/status HTTP/1.1\r\nHost: evil.example\r\nCookie: {pair}"),
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_half_sent_header_is_closed_within_the_timeout() {
    let r = start("127.0.0.1:0", &[]).await;
    let started = Instant::now();
    let mut s = TcpStream::connect(r.http).await.unwrap();
    s.write_all(b"GET /live/status HTTP/1.1\r\nHost: loc")
        .await
        .unwrap();
    // An idle socket that sends nothing is closed as well.
    let mut idle = TcpStream::connect(r.http).await.unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(
        HEADER_READ_TIMEOUT + Duration::from_secs(3),
        s.read_to_end(&mut rest),
    )
    .await
    .expect("the half-sent request's socket is closed")
    .ok();
    assert!(started.elapsed() >= HEADER_READ_TIMEOUT - Duration::from_secs(1));
    tokio::time::timeout(Duration::from_secs(3), idle.read_to_end(&mut rest))
        .await
        .expect("the idle socket is closed")
        .ok();
}

#[tokio::test]
async fn connections_past_the_cap_are_closed_and_service_resumes_after_they_go() {
    let r = start("127.0.0.1:0", &[]).await;
    // Fill every place with a kept-alive connection that has been answered (so it is surely
    // taken in, and stays until the header timeout).
    let mut tasks = Vec::new();
    for _ in 0..MAX_HTTP_CONNECTIONS {
        let http = r.http;
        tasks.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(http).await.unwrap();
            s.write_all(b"GET /live/status HTTP/1.1\r\nHost: localhost\r\n\r\n")
                .await
                .unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 1024];
            // The status is small: its head and body arrive as one.
            while !got.ends_with(b"}") {
                let n = s.read(&mut buf).await.unwrap();
                assert!(n > 0);
                got.extend_from_slice(&buf[..n]);
            }
            s
        }));
    }
    let mut held = Vec::new();
    for t in tasks {
        held.push(
            tokio::time::timeout(Duration::from_secs(8), t)
                .await
                .expect("each answered in time")
                .unwrap(),
        );
    }
    // One more is told why and closed at once.
    let mut extra = TcpStream::connect(r.http).await.unwrap();
    let _ = extra
        .write_all(b"GET /live/status HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await;
    let mut text = Vec::new();
    tokio::time::timeout(Duration::from_secs(2), extra.read_to_end(&mut text))
        .await
        .expect("closed at once")
        .ok();
    let text = String::from_utf8_lossy(&text);
    assert!(!text.contains("200 OK"), "{text}");
    // When they go, a normal request is answered.
    drop(held);
    let mut answered = None;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut s = TcpStream::connect(r.http).await.unwrap();
        s.write_all(b"GET /live/status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut text = String::new();
        let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_string(&mut text)).await;
        if text.starts_with("HTTP/1.1 200") {
            answered = Some(text);
            break;
        }
    }
    assert!(answered.is_some_and(|t| t.contains("sbp serve")));
}
