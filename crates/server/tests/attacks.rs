//! Attacks on `sbp serve`'s AMQP side, each found on loopback with a hand-written client and
//! kept here: the frames are written by hand (fe2o3-amqp-types performatives, raw bytes where
//! a real encoder would refuse), so nothing in the way tidies them up. After each, the server
//! still serves every other client.
use fe2o3_amqp_types::definitions::{ReceiverSettleMode, Role, SenderSettleMode};
use fe2o3_amqp_types::messaging::{
    Accepted, AmqpValue, Body, DeliveryState, Message, Source, Target, TargetArchetype,
};
use fe2o3_amqp_types::performatives::{
    Attach, Begin, Disposition, Flow, Open, Performative, Transfer,
};
use fe2o3_amqp_types::primitives::{Binary, Value};
use sbp_server::broker::Broker;
use sbp_server::frame::{self, FRAME_AMQP};
use sbp_server::shared::Limits;
use sbp_server::{Server, Shared};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start(limits: Limits) -> (std::net::SocketAddr, Arc<Shared>) {
    let scenario = sbp_scenario::Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "orders", "max_delivery_count": 100}]}"#,
    )
    .unwrap();
    let now = sbp_server::broker::unix_now();
    // As `sbp serve` runs it: the run's steps in a file as they are recorded, none in memory.
    let mut broker = Broker::new(scenario, now).unwrap();
    broker.record_in(std::sync::Arc::new(
        sbp_server::journal::Journal::temporary().unwrap(),
    ));
    let server = Server::bind_with("127.0.0.1:0".parse().unwrap(), broker, limits)
        .await
        .unwrap();
    let (addr, shared) = (server.addr, server.shared.clone());
    tokio::spawn(server.run());
    (addr, shared)
}

/// A client that writes frames as it is told.
struct Raw {
    s: TcpStream,
}

fn open(max_frame: u32, idle_ms: Option<u32>) -> Performative {
    Performative::Open(Open {
        container_id: "attacker".into(),
        hostname: None,
        max_frame_size: max_frame.into(),
        channel_max: 10.into(),
        idle_time_out: idle_ms,
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    })
}

fn begin() -> Performative {
    Performative::Begin(Begin {
        remote_channel: None,
        next_outgoing_id: 0,
        incoming_window: 100_000,
        outgoing_window: 100_000,
        handle_max: 100.into(),
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    })
}

/// An attach of `handle` to `address` in the client's role: it receives (peek-lock) or sends.
fn attach(handle: u32, address: &str, client_role: Role) -> Performative {
    Performative::Attach(Attach {
        name: format!("link-{handle}"),
        handle: handle.into(),
        role: client_role.clone(),
        snd_settle_mode: SenderSettleMode::Unsettled,
        rcv_settle_mode: ReceiverSettleMode::Second,
        source: Some(Box::new(Source {
            address: Some(address.into()),
            ..Default::default()
        })),
        target: Some(Box::new(TargetArchetype::Target(Target {
            address: Some(address.into()),
            ..Default::default()
        }))),
        unsettled: None,
        incomplete_unsettled: false,
        initial_delivery_count: (client_role == Role::Sender).then_some(0),
        max_message_size: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    })
}

/// A flow of the client's receiving link `handle`: `credit` from `delivery_count`, asking for
/// a drain or not.
fn credit(handle: u32, delivery_count: u32, credit: u32, drain: bool) -> Performative {
    Performative::Flow(Flow {
        next_incoming_id: Some(0),
        incoming_window: 100_000,
        next_outgoing_id: 0,
        outgoing_window: 100_000,
        handle: Some(handle.into()),
        delivery_count: Some(delivery_count),
        link_credit: Some(credit),
        available: None,
        drain,
        echo: false,
        properties: None,
    })
}

fn transfer(handle: u32, id: u32, more: bool, aborted: bool) -> Performative {
    Performative::Transfer(Transfer {
        handle: handle.into(),
        delivery_id: Some(id),
        delivery_tag: Some(Binary::from(id.to_be_bytes().to_vec())),
        message_format: Some(0),
        settled: Some(false),
        more,
        rcv_settle_mode: None,
        state: None,
        resume: false,
        aborted,
        batchable: false,
    })
}

/// An encoded message with a text body of `n` bytes.
fn message(n: usize) -> Vec<u8> {
    let m: Message<Body<Value>> = Message::builder()
        .body(Body::Value(AmqpValue(Value::String("x".repeat(n)))))
        .build();
    sbp_server::message::encode(m)
}

impl Raw {
    /// Connected, past the AMQP header (no SASL), nothing else said.
    async fn connect(addr: std::net::SocketAddr) -> Raw {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(&frame::AMQP_HEADER).await.unwrap();
        let mut header = [0u8; 8];
        s.read_exact(&mut header).await.unwrap();
        assert_eq!(header, frame::AMQP_HEADER);
        Raw { s }
    }

    /// Connected, opened and with a session on channel 0.
    async fn session(addr: std::net::SocketAddr) -> Raw {
        let mut raw = Raw::connect(addr).await;
        raw.send(0, open(65_536, None), &[]).await;
        assert!(matches!(raw.recv().await, Some(Performative::Open(_))));
        raw.send(0, begin(), &[]).await;
        assert!(matches!(raw.recv().await, Some(Performative::Begin(_))));
        raw
    }

    async fn send(&mut self, channel: u16, p: Performative, payload: &[u8]) {
        let bytes = frame::encode(FRAME_AMQP, channel, &p, payload);
        let _ = self.s.write_all(&bytes).await;
    }

    async fn send_bytes(&mut self, bytes: &[u8]) {
        let _ = self.s.write_all(bytes).await;
    }

    /// The next frame with a performative (heartbeats passed over) within 5 s; None when the
    /// connection ended.
    async fn recv(&mut self) -> Option<Performative> {
        self.recv_with_payload().await.map(|(p, _)| p)
    }

    async fn recv_with_payload(&mut self) -> Option<(Performative, bytes::BytesMut)> {
        loop {
            let f = tokio::time::timeout(
                Duration::from_secs(5),
                frame::read_frame(&mut self.s, 1 << 20),
            )
            .await
            .expect("the server answers within 5 s")
            .ok()?;
            if f.body.is_empty() {
                continue;
            }
            return frame::decode_performative(f.body).ok();
        }
    }

    /// Frames until one matches `want` (within 5 s each).
    async fn until(&mut self, want: impl Fn(&Performative) -> bool) -> Performative {
        loop {
            let p = self.recv().await.expect("a frame before the end");
            if want(&p) {
                return p;
            }
        }
    }
}

fn condition_of(p: &Performative) -> String {
    let e = match p {
        Performative::Close(c) => c.error.as_ref(),
        Performative::End(e) => e.error.as_ref(),
        Performative::Detach(d) => d.error.as_ref(),
        _ => None,
    };
    e.map(|e| {
        format!(
            "{:?} {}",
            e.condition,
            e.description.as_deref().unwrap_or("")
        )
    })
    .unwrap_or_default()
}

/// The server still takes a connection and a session.
async fn still_serves(addr: std::net::SocketAddr) {
    let _ = Raw::session(addr).await;
}

/// An `open` whose properties hold a value described 10,000 levels deep (30 KB) overflowed the
/// decoder's stack and killed the process before any authentication.
#[tokio::test]
async fn a_value_nested_ten_thousand_deep_is_a_decode_error_not_a_crash() {
    let (addr, _) = start(Limits::default()).await;
    let f = sbp_server::decode::nested_open_frame(10_000);
    let mut raw = Raw::connect(addr).await;
    raw.send_bytes(&f).await;
    let close = raw.until(|p| matches!(p, Performative::Close(_))).await;
    let why = condition_of(&close);
    assert!(
        why.contains("DecodeError") && why.contains("64 levels"),
        "{why}"
    );
    still_serves(addr).await;
}

/// A disposition over 0..=2^32-1 was iterated and answered id by id (ids never sent
/// included): both cores busy for minutes. Now it settles what is unsettled in the range, and
/// answers as ranges; a range that wraps past 2^32 is read as serial numbers.
#[tokio::test]
async fn a_disposition_over_every_id_settles_what_was_delivered_and_answers_at_once() {
    let (addr, shared) = start(Limits::default()).await;
    for i in 0..3 {
        let def = sbp_scenario::SendDef {
            to: "orders".into(),
            message_id: Some(format!("m{i}")),
            ..Default::default()
        };
        shared.lock().send("test", def).unwrap();
    }
    let mut raw = Raw::session(addr).await;
    raw.send(0, attach(0, "orders", Role::Receiver), &[]).await;
    raw.until(|p| matches!(p, Performative::Attach(_))).await;
    raw.send(0, credit(0, 0, 3, false), &[]).await;
    for _ in 0..3 {
        raw.until(|p| matches!(p, Performative::Transfer(_))).await;
    }
    let settle = |first: u32, last: u32| {
        Performative::Disposition(Disposition {
            role: Role::Receiver,
            first,
            last: Some(last),
            settled: false,
            state: Some(DeliveryState::Accepted(Accepted {})),
            batchable: false,
        })
    };
    // Deliveries 0, 1, 2 were sent: a range from 2^32-5 wrapping to 1 settles 0 and 1.
    let started = std::time::Instant::now();
    raw.send(0, settle(u32::MAX - 4, 1), &[]).await;
    let Performative::Disposition(d) = raw
        .until(|p| matches!(p, Performative::Disposition(_)))
        .await
    else {
        unreachable!()
    };
    assert_eq!((d.first, d.last), (0, Some(1)), "{d:?}");
    // Then every id: only 2 is left, answered alone.
    raw.send(0, settle(0, u32::MAX), &[]).await;
    let Performative::Disposition(d) = raw
        .until(|p| matches!(p, Performative::Disposition(_)))
        .await
    else {
        unreachable!()
    };
    assert_eq!((d.first, d.last), (2, None), "{d:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let counts = shared.lock().sim.ns().entity("orders").unwrap().counts(0);
    assert_eq!(
        (counts.active, counts.locked),
        (0, 0),
        "all three completed"
    );
    still_serves(addr).await;
}

/// Unfinished transfers: 4 MiB per link and 1,024 links per connection let one client hold
/// gigabytes. A delivery gathers at most the tier's largest message plus framing, and the
/// bytes held are budgeted per connection and for the process, given back when a transfer is
/// aborted, refused or its connection goes.
#[tokio::test]
async fn unfinished_transfers_are_held_to_the_tier_and_a_budget_and_given_back() {
    let limits = Limits {
        inflight: 500 * 1024,
        ..Limits::default()
    };
    let (addr, shared) = start(limits).await;
    let chunk = vec![0x40u8; 100 * 1024];
    let mut raw = Raw::session(addr).await;
    for h in 0..3 {
        raw.send(0, attach(h, "orders", Role::Sender), &[]).await;
        raw.until(|p| matches!(p, Performative::Flow(_))).await;
    }
    // Link 0: 256 KiB + 64 KiB may gather; the fourth 100 KiB frame passes it.
    for i in 0..4 {
        raw.send(0, transfer(0, 0, true, false), &chunk).await;
        if i < 3 {
            continue;
        }
        let d = raw.until(|p| matches!(p, Performative::Detach(_))).await;
        let why = condition_of(&d);
        assert!(why.contains("MessageSizeExceeded"), "{why}");
    }
    assert_eq!(
        shared.inflight(),
        0,
        "the refused delivery's bytes are given back"
    );
    // Links 1 and 2 gather 300 and 200 KiB: the process's 500 KiB budget is met, not
    // passed...
    for (h, frames) in [(1, 3), (2, 2)] {
        for _ in 0..frames {
            raw.send(0, transfer(h, h, true, false), &chunk).await;
        }
    }
    // ...and one more frame passes it: that link ends, naming the budget.
    raw.send(0, transfer(2, 2, true, false), &chunk).await;
    let d = raw.until(|p| matches!(p, Performative::Detach(_))).await;
    let why = condition_of(&d);
    assert!(why.contains("for all clients"), "{why}");
    // An aborted delivery is dropped unanswered, its bytes given back.
    raw.send(0, transfer(1, 1, false, true), &[]).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(shared.inflight(), 0);
    let counts = shared.lock().sim.ns().entity("orders").unwrap().counts(0);
    assert_eq!(counts.active, 0, "nothing unfinished was taken as a send");
    // A transfer on a link the server sends on, and one on a handle never attached.
    raw.send(0, attach(7, "orders", Role::Receiver), &[]).await;
    raw.until(|p| matches!(p, Performative::Attach(_))).await;
    raw.send(0, transfer(7, 9, false, false), &message(10))
        .await;
    let d = raw.until(|p| matches!(p, Performative::Detach(_))).await;
    assert!(condition_of(&d).contains("NotAllowed"), "{d:?}");
    raw.send(0, transfer(42, 10, false, false), &message(10))
        .await;
    let e = raw.until(|p| matches!(p, Performative::End(_))).await;
    assert!(condition_of(&e).contains("UnattachedHandle"), "{e:?}");
    // A connection that goes with unfinished transfers gives their bytes back.
    let mut other = Raw::session(addr).await;
    other.send(0, attach(0, "orders", Role::Sender), &[]).await;
    other.until(|p| matches!(p, Performative::Flow(_))).await;
    other.send(0, transfer(0, 0, true, false), &chunk).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(shared.inflight(), chunk.len());
    drop(other);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(shared.inflight(), 0);
    still_serves(addr).await;
}

/// 300 TCP connections that never speak held every slot for good. Now each has the handshake
/// time-out to send its open, and real clients are served after.
#[tokio::test]
async fn silent_sockets_are_closed_at_the_handshake_time_out_and_clients_served_after() {
    let limits = Limits {
        handshake: Duration::from_millis(800),
        ..Limits::default()
    };
    let (addr, _) = start(limits).await;
    let mut silent = Vec::new();
    for _ in 0..300 {
        silent.push(TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A client now: beyond the bound, it is told why.
    // After the time-out (and the refusals' own bound), every silent socket is closed.
    for mut s in silent {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(4), s.read_to_end(&mut rest)).await;
        assert!(
            read.is_ok(),
            "a silent socket is closed within the time-out"
        );
    }
    still_serves(addr).await;
}

/// A connection past its open that goes silent is closed at the idle time-out our open
/// offered; one that asked for an idle time-out gets empty frames at half of it.
#[tokio::test]
async fn an_idle_connection_is_closed_and_one_asking_for_heartbeats_gets_them() {
    let limits = Limits {
        idle: Duration::from_secs(1),
        ..Limits::default()
    };
    let (addr, _) = start(limits).await;
    let mut raw = Raw::connect(addr).await;
    raw.send(0, open(65_536, Some(1_000)), &[]).await;
    let Some(Performative::Open(ours)) = raw.recv().await else {
        panic!("our open")
    };
    assert_eq!(ours.idle_time_out, Some(1_000));
    // Silent: heartbeats come (an empty frame at about 500 ms), then the close at 1 s.
    let started = std::time::Instant::now();
    let f = tokio::time::timeout(
        Duration::from_secs(2),
        frame::read_frame(&mut raw.s, 1 << 20),
    )
    .await
    .expect("a frame")
    .expect("a heartbeat");
    assert!(f.body.is_empty(), "an empty frame first");
    let close = raw.until(|p| matches!(p, Performative::Close(_))).await;
    assert!(condition_of(&close).contains("idle time-out"), "{close:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    // A frame before open is refused.
    let mut raw = Raw::connect(addr).await;
    raw.send(0, begin(), &[]).await;
    let close = raw.until(|p| matches!(p, Performative::Close(_))).await;
    assert!(condition_of(&close).contains("its open"), "{close:?}");
    still_serves(addr).await;
}

/// A `$management` answer larger than the client's max-frame-size went in one frame. It goes
/// in transfers of at most that size, which put together decode as the answer.
#[tokio::test]
async fn a_management_answer_is_split_at_the_clients_max_frame_size() {
    let (addr, shared) = start(Limits::default()).await;
    for i in 0..8 {
        let def = sbp_scenario::SendDef {
            to: "orders".into(),
            message_id: Some(format!("m{i}")),
            body: "y".repeat(3000).as_str().into(),
            ..Default::default()
        };
        shared.lock().send("test", def).unwrap();
    }
    let mut raw = Raw::connect(addr).await;
    raw.send(0, open(512, None), &[]).await;
    raw.until(|p| matches!(p, Performative::Open(_))).await;
    raw.send(0, begin(), &[]).await;
    raw.until(|p| matches!(p, Performative::Begin(_))).await;
    raw.send(0, attach(0, "orders/$management", Role::Sender), &[])
        .await;
    raw.until(|p| matches!(p, Performative::Flow(_))).await;
    raw.send(0, attach(1, "orders/$management", Role::Receiver), &[])
        .await;
    raw.until(|p| matches!(p, Performative::Attach(a) if a.handle.0 == 1))
        .await;
    raw.send(0, credit(1, 0, 10, false), &[]).await;
    let mut body = fe2o3_amqp_types::primitives::OrderedMap::new();
    body.insert(Value::String("from-sequence-number".into()), Value::Long(1));
    body.insert(Value::String("message-count".into()), Value::Int(8));
    let request: Message<Body<Value>> = Message::builder()
        .application_properties(
            fe2o3_amqp_types::messaging::ApplicationProperties::builder()
                .insert("operation", "com.microsoft:peek-message")
                .build(),
        )
        .body(Body::Value(AmqpValue(Value::Map(body))))
        .build();
    let request = sbp_server::message::encode(request);
    // A request that fits one frame of 512 bytes.
    raw.send(0, transfer(0, 0, false, false), &request).await;
    let mut answer = Vec::new();
    let mut frames = 0;
    loop {
        let f = tokio::time::timeout(Duration::from_secs(5), frame::read_frame(&mut raw.s, 512))
            .await
            .expect("the answer comes")
            .expect("every frame within the 512 bytes asked for");
        if f.body.is_empty() {
            continue;
        }
        let (p, payload) = frame::decode_performative(f.body).unwrap();
        if let Performative::Transfer(t) = p {
            frames += 1;
            answer.extend_from_slice(&payload);
            if !t.more {
                break;
            }
        }
    }
    assert!(frames > 40, "{frames} frames");
    let m = sbp_server::message::decode(&answer).expect("the answer put together decodes");
    let text = format!("{m:?}");
    assert!(text.contains("messages"), "{text:.200}");
}

/// 200,000 flow frames grew the process by 220 MB and made a receive 60 times slower: each
/// asked the engine, recorded a named receive call (kept for good, each insert looking
/// through all of them), an outcome and log events. What is kept now follows what is held,
/// not the run's length.
#[tokio::test]
async fn many_flows_and_receive_calls_leave_nothing_behind_that_grows() {
    let (addr, shared) = start(Limits::default()).await;
    let mut raw = Raw::session(addr).await;
    raw.send(0, attach(0, "orders", Role::Receiver), &[]).await;
    raw.until(|p| matches!(p, Performative::Attach(_))).await;
    let flow = |n: u32| credit(0, n, 1, true);
    // Each drained flow is an SDK receive call that ends without a message.
    for n in 0..5_000u32 {
        raw.send(0, flow(n), &[]).await;
    }
    // Then messages received under locks and completed, one call each.
    for i in 0..300 {
        let def = sbp_scenario::SendDef {
            to: "orders".into(),
            message_id: Some(format!("m{i}")),
            ..Default::default()
        };
        shared.lock().send("test", def).unwrap();
    }
    let mut received = 0u32;
    while received < 300 {
        raw.send(0, flow(5_000 + received), &[]).await;
        let Performative::Transfer(t) = raw.until(|p| matches!(p, Performative::Transfer(_))).await
        else {
            unreachable!()
        };
        let id = t.delivery_id.expect("a delivery id");
        raw.send(
            0,
            Performative::Disposition(Disposition {
                role: Role::Receiver,
                first: id,
                last: None,
                settled: true,
                state: Some(DeliveryState::Accepted(Accepted {})),
                batchable: false,
            }),
            &[],
        )
        .await;
        received += 1;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let broker = shared.lock();
    assert!(broker.steps() > 5_000, "every call recorded");
    assert!(
        broker.sim.scenario().timeline.is_empty(),
        "on disk, not in memory"
    );
    assert!(
        broker.sim.named.len() <= 1,
        "{} calls kept",
        broker.sim.named.len()
    );
    assert!(
        broker.sim.outcomes.len() <= 2_000,
        "{}",
        broker.sim.outcomes.len()
    );
    assert!(
        broker.sim.ns().log().len() <= 2 * sbp_server::broker::LOG_LIMIT,
        "{}",
        broker.sim.ns().log().len()
    );
    let counts = broker.sim.ns().entity("orders").unwrap().counts(0);
    assert_eq!((counts.active, counts.locked), (0, 0));
}

/// A change wakes only the connections waiting on a queue it touched: a send to `orders`
/// wakes its waiter, not the one waiting on `audit` (32 connections of 1,024 receivers each
/// took 9.5 s to answer a new connection when every tick woke every receiver).
#[tokio::test]
async fn a_change_wakes_only_the_waiters_of_the_queue_it_touched() {
    let scenario = sbp_scenario::Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "orders"}, {"queue": "audit"}]}"#,
    )
    .unwrap();
    let shared = Shared::new(Broker::new(scenario, 1_764_000_000_000).unwrap());
    let (orders, audit) = {
        let b = shared.lock();
        (
            b.queue_key("orders").unwrap(),
            b.queue_key("audit").unwrap(),
        )
    };
    let (a, b) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(tokio::sync::Notify::new()),
    );
    let none = std::collections::BTreeSet::new();
    shared.bump(); // the entities' creation, before anyone waits
    shared.wait_on(1, &none, &[orders.clone()].into(), &a);
    shared.wait_on(2, &none, &[audit].into(), &b);
    let def = sbp_scenario::SendDef {
        to: "orders".into(),
        ..Default::default()
    };
    shared.lock().send("test", def).unwrap();
    shared.bump();
    let woke = |n: Arc<tokio::sync::Notify>| async move {
        tokio::time::timeout(Duration::from_millis(100), n.notified())
            .await
            .is_ok()
    };
    assert!(woke(a.clone()).await, "the waiter on orders looks again");
    assert!(!woke(b.clone()).await, "the waiter on audit is left alone");
    // One that stopped waiting is not woken either.
    shared.wait_on(1, &[orders].into(), &none, &a);
    let def = sbp_scenario::SendDef {
        to: "orders".into(),
        ..Default::default()
    };
    shared.lock().send("test", def).unwrap();
    shared.bump();
    assert!(!woke(a).await);
}

/// A receiver waits on a queue by its path: after a reset (a fresh run over the file's
/// entities) and after its entity is deleted and made again through the management API, a
/// send there still wakes it (waiting by the engine's entity index, it slept for good).
#[tokio::test]
async fn a_waiter_is_woken_after_a_reset_and_after_its_entity_is_made_again() {
    let file = r#"{"version": 1, "entities": [{"queue": "audit"}, {"queue": "orders"}]}"#;
    let mut shared = Shared::new(
        Broker::new(
            sbp_scenario::Scenario::from_json(file).unwrap(),
            1_764_000_000_000,
        )
        .unwrap(),
    );
    shared.fresh = Some(Box::new(move |start, _| {
        // The fresh run makes `orders` first: its index differs from the first run's.
        let swapped = r#"{"version": 1, "entities": [{"queue": "orders"}, {"queue": "audit"}]}"#;
        Broker::new(sbp_scenario::Scenario::from_json(swapped).unwrap(), start)
    }));
    let shared = Arc::new(shared);
    let notify = Arc::new(tokio::sync::Notify::new());
    let orders = shared.lock().queue_key("orders").unwrap();
    let none = std::collections::BTreeSet::new();
    shared.bump();
    shared.wait_on(1, &none, &[orders].into(), &notify);
    let woke = |n: Arc<tokio::sync::Notify>| async move {
        tokio::time::timeout(Duration::from_millis(100), n.notified())
            .await
            .is_ok()
    };
    let send = |to: &str| {
        let def = sbp_scenario::SendDef {
            to: to.into(),
            ..Default::default()
        };
        shared.lock().send("test", def).unwrap();
        shared.bump();
    };
    shared.reset().expect("reset");
    let _ = woke(notify.clone()).await; // the reset itself wakes every waiter
    send("audit");
    assert!(!woke(notify.clone()).await, "audit is not orders");
    send("orders");
    assert!(woke(notify.clone()).await, "orders after the reset");
    // Deleted and made again (a new index in the engine): the same queue to its waiter.
    for action in [
        sbp_scenario::Action::Delete("orders".into()),
        sbp_scenario::Action::Create(Box::new(sbp_scenario::EntityDef {
            queue: Some("orders".into()),
            ..Default::default()
        })),
    ] {
        shared.lock().run("admin", action).expect("done");
    }
    shared.bump();
    let _ = woke(notify.clone()).await;
    send("orders");
    assert!(woke(notify).await, "orders made again");
}
