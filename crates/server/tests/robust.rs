//! Bad input on the wire: a client that sends garbage, an oversized frame or vanishes
//! mid-transfer gets an AMQP error or is dropped, and the server keeps serving every other
//! client. Random bytes never panic the frame and message decoders.
use proptest::prelude::*;
use sbp_server::broker::Broker;
use sbp_server::frame::{self, FRAME_SASL};
use sbp_server::Server;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start() -> std::net::SocketAddr {
    let scenario =
        sbp_scenario::Scenario::from_json(r#"{"version": 1, "entities": [{"queue": "orders"}]}"#)
            .unwrap();
    let broker = Broker::new(scenario, 1_764_000_000_000).unwrap();
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), broker)
        .await
        .unwrap();
    let addr = server.addr;
    tokio::spawn(server.run());
    addr
}

/// Opens a connection and reads the SASL mechanisms the server offers: it is serving.
async fn offers_sasl(addr: std::net::SocketAddr) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&frame::SASL_HEADER).await.unwrap();
    let mut header = [0u8; 8];
    tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut header))
        .await
        .expect("the server answers")
        .unwrap();
    assert_eq!(header, frame::SASL_HEADER);
    let f = tokio::time::timeout(Duration::from_secs(5), frame::read_frame(&mut s, 4096))
        .await
        .expect("the server offers its mechanisms")
        .unwrap();
    assert_eq!(f.kind, FRAME_SASL);
    f.body.to_vec()
}

/// Reads until the server closes the connection (or 5 s pass); what it sent.
async fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut all)).await;
    all
}

#[tokio::test]
async fn garbage_an_oversized_frame_and_a_vanished_client_leave_the_server_serving() {
    let addr = start().await;
    let mechanisms = offers_sasl(addr).await;
    for m in ["ANONYMOUS", "MSSBCBS", "PLAIN"] {
        assert!(
            mechanisms.windows(m.len()).any(|w| w == m.as_bytes()),
            "{m}"
        );
    }
    // Not AMQP at all: the server says the header it speaks and closes.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
    let got = read_to_close(&mut s).await;
    assert_eq!(&got[..8], &frame::AMQP_HEADER);
    // AMQP, then a frame claiming 1 GiB: refused before it is read, with a framing error.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&frame::AMQP_HEADER).await.unwrap();
    s.write_all(&[0x40, 0, 0, 0, 2, 0, 0, 0]).await.unwrap();
    let got = read_to_close(&mut s).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.contains("framing-error"), "{text}");
    // A frame of garbage after the header: a decode error.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&frame::AMQP_HEADER).await.unwrap();
    let mut f = vec![0, 0, 0, 16, 2, 0, 0, 0];
    f.extend_from_slice(&[0xff; 8]);
    s.write_all(&f).await.unwrap();
    let got = read_to_close(&mut s).await;
    assert!(String::from_utf8_lossy(&got).contains("decode-error"));
    // A client that vanishes half-way through a frame.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&frame::AMQP_HEADER).await.unwrap();
    s.write_all(&[0, 0, 1, 0, 2, 0]).await.unwrap();
    drop(s);
    // Every other client is still served.
    offers_sasl(addr).await;
}

thread_local! {
    static RT: tokio::runtime::Runtime =
        tokio::runtime::Builder::new_current_thread().build().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Any bytes: the frame reader and the performative and message decoders answer with an
    /// error or a value, never a panic.
    #[test]
    fn random_bytes_never_panic_the_decoders(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = RT.with(|rt| rt.block_on(frame::read_frame(&mut &bytes[..], 4096)));
        let _ = frame::decode_performative(bytes::BytesMut::from(&bytes[..]));
        let _ = sbp_server::message::decode(&bytes);
    }

    /// Performative-shaped bodies (a descriptor 0x10..0x18 and a list) with random fields.
    #[test]
    fn random_performatives(code in 0x10u8..0x19, fields in proptest::collection::vec(any::<u8>(), 0..200), wide in any::<bool>()) {
        let mut body = vec![0x00, 0x53, code];
        if wide {
            body.push(0xd0);
            body.extend_from_slice(&((fields.len() + 4) as u32).to_be_bytes());
            body.extend_from_slice(&4u32.to_be_bytes());
        } else {
            body.push(0xc0);
            body.push((fields.len() as u8).wrapping_add(1));
            body.push(4);
        }
        body.extend_from_slice(&fields);
        let _ = frame::decode_performative(bytes::BytesMut::from(&body[..]));
    }

    /// A valid frame header over random bodies: decoded or refused, never a panic.
    #[test]
    fn random_bodies_behind_a_valid_header(body in proptest::collection::vec(any::<u8>(), 0..256), kind in 0u8..2) {
        let mut f = ((body.len() + 8) as u32).to_be_bytes().to_vec();
        f.extend_from_slice(&[2, kind, 0, 0]);
        f.extend_from_slice(&body);
        if let Ok(frame) = RT.with(|rt| rt.block_on(frame::read_frame(&mut &f[..], 4096))) {
            let _ = frame::decode_performative(frame.body);
        }
    }
}

/// A 20-byte frame body whose string claims 4 GB: refused from what is there (decoding reads a
/// slice, never a stream that would first allocate the length claimed).
#[test]
fn a_length_claimed_beyond_the_frame_is_refused() {
    let mut body = vec![
        0x00, 0x53, 0x10, 0xc0, 0x08, 0x01, 0xb1, 0xfa, 0xc8, 0x2b, 0x3a,
    ];
    body.extend_from_slice(b"abc");
    assert!(frame::decode_performative(bytes::BytesMut::from(&body[..])).is_err());
    let mut message = vec![0x00, 0x53, 0x77, 0xb1, 0xff, 0xff, 0xff, 0xf0];
    message.extend_from_slice(b"short");
    assert!(sbp_server::message::decode(&message).is_err());
}

/// `--state`: a state written and taken up again holds the messages; one that does not hold
/// together is refused with its reason.
#[test]
fn a_state_round_trips_and_a_damaged_one_is_refused() {
    let scenario =
        sbp_scenario::Scenario::from_json(r#"{"version": 1, "entities": [{"queue": "orders"}]}"#)
            .unwrap();
    let now = sbp_server::broker::unix_now();
    let mut broker = Broker::new(scenario, now - 5_000).unwrap();
    let def = sbp_scenario::SendDef {
        to: "orders".into(),
        message_id: Some("kept".into()),
        ..Default::default()
    };
    assert_eq!(broker.send("test", def).unwrap(), vec![1]);
    let text = broker.state().expect("a state");
    // A broker without a journal keeps its steps, and its state holds them.
    let mut again = Broker::from_state(&text).unwrap();
    assert_eq!(again.steps(), 1);
    let got = again
        .receive("test", "orders", "r", sbp_engine::ReceiveMode::PeekLock, 5)
        .unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].message_id, "kept");
    for damaged in [
        "{}".to_string(),
        "not json".to_string(),
        text.replace("\"checkpoint\":\"", "\"checkpoint\":\"AAAA"),
        text.replace("\"version\":2", "\"version\":9"),
    ] {
        assert!(Broker::from_state(&damaged).is_err(), "{damaged:.60}");
    }
}

/// One connection beyond the bound: its client is told the limit in an AMQP `close`; the
/// others are served on.
#[tokio::test]
async fn a_connection_beyond_the_bound_is_told_the_limit() {
    let addr = start().await;
    let mut held = Vec::new();
    for _ in 0..sbp_server::MAX_CONNECTIONS {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(&frame::SASL_HEADER).await.unwrap();
        let mut header = [0u8; 8];
        s.read_exact(&mut header).await.unwrap();
        held.push(s);
    }
    let mut extra = TcpStream::connect(addr).await.unwrap();
    extra.write_all(&frame::AMQP_HEADER).await.unwrap();
    let got = read_to_close(&mut extra).await;
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.contains("resource-limit-exceeded") && text.contains("256"),
        "{text}"
    );
    drop(held);
    tokio::time::sleep(Duration::from_millis(200)).await;
    offers_sasl(addr).await;
}
