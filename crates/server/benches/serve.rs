//! `cargo bench -p sbp-server`: messages through `sbp serve` on loopback with a Rust client
//! (fe2o3-amqp): sent one after another (each awaiting its outcome) and pipelined (batchable
//! sends, outcomes awaited after), then received and accepted; and one message's round trip.
//! Figures in docs/PERFORMANCE.md.
use fe2o3_amqp::types::messaging::{Body, Outcome};
use fe2o3_amqp::types::primitives::Value;
use fe2o3_amqp::{Connection, Receiver, Sender, Session};
use sbp_server::broker::Broker;
use sbp_server::Server;
use std::time::Instant;

const N: usize = 5_000;

#[tokio::main]
async fn main() {
    let scenario =
        sbp_scenario::Scenario::from_json(r#"{"version": 1, "entities": [{"queue": "orders"}]}"#)
            .unwrap();
    let now = sbp_server::broker::unix_now();
    let server = Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        Broker::new(scenario, now).unwrap(),
    )
    .await
    .unwrap();
    let addr = server.addr;
    tokio::spawn(server.run());
    // The client's socket without Nagle's delay, as the SDKs' own.
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let mut connection = Connection::builder()
        .container_id("bench")
        .open_with_stream(stream)
        .await
        .unwrap();
    let mut session = Session::begin(&mut connection).await.unwrap();
    let mut sender = Sender::attach(&mut session, "bench-sender", "orders")
        .await
        .unwrap();
    let mut receiver = Receiver::attach(&mut session, "bench-receiver", "orders")
        .await
        .unwrap();

    let t = Instant::now();
    for i in 0..N {
        let outcome: Outcome = sender.send(format!("m{i}")).await.unwrap();
        assert!(outcome.is_accepted());
    }
    let sequential = N as f64 / t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut pending = Vec::with_capacity(N);
    for i in 0..N {
        pending.push(sender.send_batchable(format!("p{i}")).await.unwrap());
    }
    for p in pending {
        assert!(p.await.unwrap().is_accepted());
    }
    let pipelined = N as f64 / t.elapsed().as_secs_f64();

    let t = Instant::now();
    for _ in 0..2 * N {
        let d = receiver.recv::<Body<Value>>().await.unwrap();
        receiver.accept(&d).await.unwrap();
    }
    let received = (2 * N) as f64 / t.elapsed().as_secs_f64();

    let mut rounds = Vec::new();
    for _ in 0..500 {
        let t = Instant::now();
        sender.send("ping").await.unwrap();
        let d = receiver.recv::<Body<Value>>().await.unwrap();
        rounds.push(t.elapsed().as_secs_f64() * 1000.0);
        receiver.accept(&d).await.unwrap();
    }
    rounds.sort_by(|a, b| a.total_cmp(b));
    println!("Rust client (fe2o3-amqp) through sbp serve on loopback, {N} messages each:");
    println!("  send, each awaited:     {sequential:>8.0} msg/s");
    println!("  send, pipelined:        {pipelined:>8.0} msg/s");
    println!("  receive and accept:     {received:>8.0} msg/s");
    println!(
        "  send -> receive:        median {:.2} ms, p95 {:.2} ms",
        rounds[rounds.len() / 2],
        rounds[rounds.len() * 95 / 100]
    );
    let _ = session.end().await;
    let _ = connection.close().await;
}
