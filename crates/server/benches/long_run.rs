//! `cargo bench -p sbp-server --bench long_run`: what one operation costs after 1k and after
//! 1M operations done, and what memory a run holds, with `sbp serve` in this process on
//! loopback and a Rust client (fe2o3-amqp). An operation is a recorded step of the run
//! (`Broker::run`): a send, a receive call (one per credit flow; a drained flow that ends with
//! no message is an empty one), a settlement.
//!
//! Measured at both points: a send-then-receive round trip over AMQP, an empty receive call
//! (a flow with drain, answered by the server's drained flow), and one send, PeekLock receive
//! and complete through the broker's API in process (the engine's cost without the network).
//!
//! Memory: the process's RSS (VmRSS) and its live heap (a counting allocator), and the bytes
//! the recording holds (the timeline, one step per operation, kept by design), so that what
//! must come back after a drain is told apart from the recording.
//!
//! `SBP_BENCH_OPS` sets the run's length (1,000,000 by default). Figures in
//! docs/PERFORMANCE.md.
use fe2o3_amqp::connection::ConnectionHandle;
use fe2o3_amqp::session::SessionHandle;
use fe2o3_amqp::types::messaging::Body;
use fe2o3_amqp::types::primitives::Value;
use fe2o3_amqp::{Receiver, Sender, Session};
use fe2o3_amqp_types::definitions::{ReceiverSettleMode, Role, SenderSettleMode};
use fe2o3_amqp_types::messaging::{Source, Target, TargetArchetype};
use fe2o3_amqp_types::performatives::{Attach, Begin, Flow, Open, Performative};
use sbp_server::broker::{Broker, Settle};
use sbp_server::frame::{self, FRAME_AMQP};
use sbp_server::{Server, Shared};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The system's allocator, counting the bytes allocated and not yet freed.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as the caller's contract with `GlobalAlloc::alloc`.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as the caller's contract with `GlobalAlloc::dealloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as the caller's contract with `GlobalAlloc::alloc_zeroed`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as the caller's contract with `GlobalAlloc::realloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live_heap() -> i64 {
    LIVE.load(Ordering::Relaxed) as i64
}

/// The process's resident set (VmRSS), in bytes.
fn rss() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        .map_or(0, |kb| kb * 1024)
}

unsafe extern "C" {
    /// glibc: gives the heap's free pages back to the system.
    fn malloc_trim(pad: usize) -> i32;
}

fn mb(bytes: i64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The steps recorded so far (the operations done).
fn steps(shared: &Shared) -> usize {
    shared.lock().steps()
}

/// What the process holds at one point of the run.
struct Snapshot {
    label: String,
    steps: usize,
    /// Of those, the steps still in memory (the rest are in the run's file).
    in_memory: usize,
    /// The timeline's capacity (its buffer), in steps.
    capacity: usize,
    rss: i64,
    heap: i64,
}

fn snapshot(shared: &Shared, label: &str) -> Snapshot {
    let (steps, in_memory, capacity) = {
        let b = shared.lock();
        (
            b.steps(),
            b.sim.scenario().timeline.len(),
            b.sim.scenario().timeline.capacity(),
        )
    };
    Snapshot {
        label: label.to_string(),
        steps,
        in_memory,
        capacity,
        rss: rss(),
        heap: live_heap(),
    }
}

/// The bytes the first `n` steps kept in memory hold on the heap, measured by copying them:
/// packed (a buffer of exactly `n` steps), and with the timeline's buffer at `capacity` steps.
fn recording_bytes(shared: &Shared, n: usize, capacity: usize) -> (i64, i64) {
    let b = shared.lock();
    let before = live_heap();
    let copy = b.sim.scenario().timeline[..n.min(b.sim.scenario().timeline.len())].to_vec();
    let packed = live_heap() - before;
    drop(copy);
    let slot = std::mem::size_of::<sbp_scenario::Step>() as i64;
    (packed, packed + (capacity as i64 - n as i64) * slot)
}

/// A raw AMQP client for empty receive calls: a receiving link on `idle`, whose flows with
/// drain the server answers with a drained flow (no message).
struct Drainer {
    s: TcpStream,
    delivery_count: u32,
}

impl Drainer {
    async fn connect(addr: std::net::SocketAddr, address: &str) -> Drainer {
        let s = TcpStream::connect(addr).await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut d = Drainer {
            s,
            delivery_count: 0,
        };
        d.s.write_all(&frame::AMQP_HEADER).await.unwrap();
        let mut header = [0u8; 8];
        d.s.read_exact(&mut header).await.unwrap();
        d.send(Performative::Open(Open {
            container_id: "bench-drainer".into(),
            hostname: None,
            max_frame_size: 65_536.into(),
            channel_max: 10.into(),
            idle_time_out: None,
            outgoing_locales: None,
            incoming_locales: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        }))
        .await;
        d.until(|p| matches!(p, Performative::Open(_))).await;
        d.send(Performative::Begin(Begin {
            remote_channel: None,
            next_outgoing_id: 0,
            incoming_window: 100_000,
            outgoing_window: 100_000,
            handle_max: 10.into(),
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        }))
        .await;
        d.until(|p| matches!(p, Performative::Begin(_))).await;
        d.send(Performative::Attach(Attach {
            name: "bench-drainer".into(),
            handle: 0.into(),
            role: Role::Receiver,
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
            initial_delivery_count: None,
            max_message_size: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        }))
        .await;
        d.until(|p| matches!(p, Performative::Attach(_))).await;
        d
    }

    async fn send(&mut self, p: Performative) {
        let bytes = frame::encode(FRAME_AMQP, 0, &p, &[]);
        self.s.write_all(&bytes).await.unwrap();
    }

    async fn until(&mut self, want: impl Fn(&Performative) -> bool) -> Performative {
        loop {
            let f = frame::read_frame(&mut self.s, 1 << 20).await.unwrap();
            if f.body.is_empty() {
                continue;
            }
            let (p, _) = frame::decode_performative(f.body).unwrap();
            if want(&p) {
                return p;
            }
        }
    }

    /// One empty receive call: a flow of one credit with drain, to the server's drained flow.
    async fn drain(&mut self) {
        self.send(Performative::Flow(Flow {
            next_incoming_id: Some(0),
            incoming_window: 100_000,
            next_outgoing_id: 0,
            outgoing_window: 100_000,
            handle: Some(0.into()),
            delivery_count: Some(self.delivery_count),
            link_credit: Some(1),
            available: None,
            drain: true,
            echo: false,
            properties: None,
        }))
        .await;
        let Performative::Flow(f) = self
            .until(|p| matches!(p, Performative::Flow(f) if f.handle.is_some() && f.drain))
            .await
        else {
            unreachable!()
        };
        self.delivery_count = f.delivery_count.unwrap_or(self.delivery_count + 1);
    }
}

/// Median and p95 of `ms`, in milliseconds.
fn median_p95(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(|a, b| a.total_cmp(b));
    (ms[ms.len() / 2], ms[ms.len() * 95 / 100])
}

struct Latency {
    round_trip: (f64, f64),
    empty_receive: (f64, f64),
    in_process: (f64, f64),
}

const TRIES: usize = 300;

struct Client {
    addr: std::net::SocketAddr,
    connection: ConnectionHandle<()>,
    sender: Rotating,
    receiver: Receiver,
    drainer: Drainer,
}

/// Each figure over [`TRIES`] tries, one after another.
async fn measure(shared: &Shared, c: &mut Client) -> Latency {
    let mut rounds = Vec::with_capacity(TRIES);
    for _ in 0..TRIES {
        let t = Instant::now();
        let sender = c.sender.room(&mut c.connection, 1).await;
        sender.send("ping").await.unwrap();
        let d = c.receiver.recv::<Body<Value>>().await.unwrap();
        rounds.push(t.elapsed().as_secs_f64() * 1000.0);
        c.receiver.accept(&d).await.unwrap();
    }
    let mut empty = Vec::with_capacity(TRIES);
    for _ in 0..TRIES {
        let t = Instant::now();
        c.drainer.drain().await;
        empty.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut in_process = Vec::with_capacity(TRIES);
    for i in 0..TRIES {
        let t = Instant::now();
        {
            let mut b = shared.lock();
            let def = sbp_scenario::SendDef {
                to: "inproc".into(),
                message_id: Some(format!("x{i}")),
                ..Default::default()
            };
            b.send("bench", def).unwrap();
            let got = b
                .receive(
                    "bench",
                    "inproc",
                    "bench-inproc",
                    sbp_engine::ReceiveMode::PeekLock,
                    1,
                )
                .unwrap();
            let token = got[0].lock_token.clone().unwrap();
            b.settle("bench", &token, Settle::Complete, None, None)
                .unwrap();
        }
        in_process.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    Latency {
        round_trip: median_p95(rounds),
        empty_receive: median_p95(empty),
        in_process: median_p95(in_process),
    }
}

/// Transfers sent on one session before the sender moves to a fresh one: the run opens and
/// ends sessions as it goes, as long-lived clients do (one session past the server's incoming
/// window of 8,192 is `tests/rust_client.rs`'s).
const PER_SESSION: usize = 8_000;

/// A sender to `address` on its own session of `connection`, moved to a fresh session before
/// [`PER_SESSION`] transfers.
struct Rotating {
    session: SessionHandle<()>,
    sender: Sender,
    address: String,
    sent: usize,
    sessions: usize,
}

impl Rotating {
    async fn attach(connection: &mut ConnectionHandle<()>, address: &str) -> Rotating {
        let mut session = Session::begin(connection).await.unwrap();
        let sender = Sender::attach(&mut session, format!("{address}-sender-0"), address)
            .await
            .unwrap();
        Rotating {
            session,
            sender,
            address: address.to_string(),
            sent: 0,
            sessions: 1,
        }
    }

    /// The sender, on a session with room for `n` more transfers.
    async fn room(&mut self, connection: &mut ConnectionHandle<()>, n: usize) -> &mut Sender {
        if self.sent + n > PER_SESSION {
            let mut session = Session::begin(connection).await.unwrap();
            let name = format!("{}-sender-{}", self.address, self.sessions);
            let sender = Sender::attach(&mut session, name, self.address.as_str())
                .await
                .unwrap();
            let old = std::mem::replace(&mut self.sender, sender);
            let _ = old.close().await;
            let mut old = std::mem::replace(&mut self.session, session);
            let _ = old.end().await;
            self.sent = 0;
            self.sessions += 1;
        }
        self.sent += n;
        &mut self.sender
    }

    /// `n` messages sent pipelined, then each outcome awaited.
    async fn send_pipelined(&mut self, connection: &mut ConnectionHandle<()>, n: usize, tag: &str) {
        let sender = self.room(connection, n).await;
        let mut pending = Vec::with_capacity(n);
        for i in 0..n {
            pending.push(sender.send_batchable(format!("{tag}{i}")).await.unwrap());
        }
        for p in pending {
            assert!(p.await.unwrap().is_accepted());
        }
    }
}

/// `n` messages received and accepted.
async fn receive_all(receiver: &mut Receiver, n: usize) {
    for _ in 0..n {
        let d = receiver.recv::<Body<Value>>().await.unwrap();
        receiver.accept(&d).await.unwrap();
    }
}

async fn connect(addr: std::net::SocketAddr) -> (ConnectionHandle<()>, SessionHandle<()>) {
    let stream = TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let mut connection = fe2o3_amqp::Connection::builder()
        .container_id("bench")
        .open_with_stream(stream)
        .await
        .unwrap();
    let session = Session::begin(&mut connection).await.unwrap();
    (connection, session)
}

/// A server in this process on loopback, and a client connected to it: a sender and a
/// receiver on `orders`, and a raw receiver on `idle` for empty receive calls.
async fn start() -> (Arc<Shared>, Client, SessionHandle<()>) {
    let scenario = sbp_scenario::Scenario::from_json(
        r#"{"version": 1, "entities": [{"queue": "orders"}, {"queue": "idle"},
            {"queue": "inproc"}, {"queue": "store"}]}"#,
    )
    .unwrap();
    let now = sbp_server::broker::unix_now();
    // As `sbp serve` runs it: the run's steps go to a file as they are recorded.
    let mut broker = Broker::new(scenario, now).unwrap();
    broker.record_in(Arc::new(sbp_server::journal::Journal::temporary().unwrap()));
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), broker)
        .await
        .unwrap();
    let (addr, shared): (_, Arc<Shared>) = (server.addr, server.shared.clone());
    tokio::spawn(server.run());
    let (mut connection, mut session) = connect(addr).await;
    let sender = Rotating::attach(&mut connection, "orders").await;
    let receiver = Receiver::attach(&mut session, "bench-receiver", "orders")
        .await
        .unwrap();
    let drainer = Drainer::connect(addr, "idle").await;
    let c = Client {
        addr,
        connection,
        sender,
        receiver,
        drainer,
    };
    (shared, c, session)
}

/// `n` small messages stored in `store` (pipelined, on a connection of their own), then all
/// received and completed; the snapshots after each.
async fn store_and_drain(
    shared: &Shared,
    addr: std::net::SocketAddr,
    n: usize,
    round: usize,
) -> [Snapshot; 2] {
    let (mut store_conn, mut store_session) = connect(addr).await;
    let mut store_sender = Rotating::attach(&mut store_conn, "store").await;
    for _ in 0..n / 1_000 {
        store_sender
            .send_pipelined(&mut store_conn, 1_000, "s")
            .await;
    }
    let stored = snapshot(shared, &format!("{n} messages stored ({round})"));
    let mut store_receiver = Receiver::attach(&mut store_session, "store-receiver", "store")
        .await
        .unwrap();
    receive_all(&mut store_receiver, n).await;
    // The last dispositions reach the server.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    {
        let b = shared.lock();
        let counts = b.sim.ns().entity("store").unwrap().counts(b.sim.now());
        assert_eq!((counts.active, counts.locked), (0, 0), "all drained");
    }
    let _ = store_receiver.close().await;
    let _ = store_sender.sender.close().await;
    let _ = store_sender.session.end().await;
    let _ = store_session.end().await;
    let _ = store_conn.close().await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    [stored, snapshot(shared, &format!("all drained ({round})"))]
}

#[tokio::main]
async fn main() {
    let total: usize = std::env::var("SBP_BENCH_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    const STORED: usize = 100_000;
    let mut snaps = vec![];
    let start_rss = rss();
    let (shared, mut c, mut session) = start().await;
    let addr = c.addr;
    snaps.push(snapshot(&shared, "connected, nothing done"));

    // One cycle of the bulk: sends, then receives and completes, then empty receive calls.
    async fn cycle(c: &mut Client, sends: usize, drains: usize) {
        c.sender.send_pipelined(&mut c.connection, sends, "b").await;
        receive_all(&mut c.receiver, sends).await;
        for _ in 0..drains {
            c.drainer.drain().await;
        }
    }

    while steps(&shared) < 1_000 {
        cycle(&mut c, 100, 10).await;
    }
    let done_1k = steps(&shared);
    snaps.push(snapshot(&shared, "after 1k operations"));
    eprintln!("1k reached");
    let at_1k = measure(&shared, &mut c).await;
    eprintln!("1k measured");

    // Memory: STORED small messages stored, then drained (received and completed), twice.
    snaps.push(snapshot(&shared, "before storing"));
    for round in 1..=2 {
        snaps.extend(store_and_drain(&shared, addr, STORED, round).await);
    }

    let t = Instant::now();
    let bulk_from = steps(&shared);
    while steps(&shared) < total {
        cycle(&mut c, 1_000, 100).await;
    }
    let bulk_rate = (steps(&shared) - bulk_from) as f64 / t.elapsed().as_secs_f64();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let done_1m = steps(&shared);
    snaps.push(snapshot(&shared, &format!("after {done_1m} operations")));
    let at_1m = measure(&shared, &mut c).await;
    // The control: a fresh server and client in this process, now, after 1k operations.
    let (fresh, mut fresh_c, _fresh_session) = start().await;
    while steps(&fresh) < 1_000 {
        cycle(&mut fresh_c, 100, 10).await;
    }
    let control = measure(&fresh, &mut fresh_c).await;
    let (named, outcomes, log) = {
        let b = shared.lock();
        (
            b.sim.named.len(),
            b.sim.outcomes.len(),
            b.sim.ns().log().len(),
        )
    };

    println!("sbp serve in process, Rust client (fe2o3-amqp) on loopback; {TRIES} tries each");
    println!(
        "{:<34} {:>22} {:>22} {:>8}",
        "", "after 1k ops", "after 1M ops", "ratio"
    );
    println!(
        "{:<34} {:>22} {:>22}",
        "operations done before measuring", done_1k, done_1m
    );
    for (what, a, b) in [
        ("send -> receive (AMQP)", at_1k.round_trip, at_1m.round_trip),
        (
            "empty receive, drain (AMQP)",
            at_1k.empty_receive,
            at_1m.empty_receive,
        ),
        (
            "send+receive+complete (in process)",
            at_1k.in_process,
            at_1m.in_process,
        ),
    ] {
        println!(
            "{what:<34} {:>22} {:>22} {:>8}",
            format!("{:.3} / {:.3} ms", a.0, a.1),
            format!("{:.3} / {:.3} ms", b.0, b.1),
            format!("{:.2}x", b.0 / a.0)
        );
    }
    println!("  (median / p95)");
    println!(
        "control, a fresh server now after 1k ops: send -> receive {:.3} / {:.3} ms, empty receive {:.3} / {:.3} ms, in process {:.3} / {:.3} ms",
        control.round_trip.0,
        control.round_trip.1,
        control.empty_receive.0,
        control.empty_receive.1,
        control.in_process.0,
        control.in_process.1
    );
    println!("bulk: {bulk_rate:.0} operations/s (1,000 sends pipelined, received and accepted, 100 empty receive calls a cycle)");
    println!("kept at the end: {named} named calls, {outcomes} step outcomes, {log} log events");

    println!("\nmemory (RSS {} before the server)", mb(start_rss));
    println!(
        "{:<26} {:>9} {:>10} {:>10} {:>12} {:>12}",
        "", "steps", "RSS", "heap", "recording", "heap - rec."
    );
    let mut per_step = 0.0;
    for s in &snaps {
        let (packed, rec) = recording_bytes(&shared, s.in_memory, s.capacity);
        if s.in_memory > 0 {
            per_step = packed as f64 / s.in_memory as f64;
        }
        println!(
            "{:<26} {:>9} {:>10} {:>10} {:>12} {:>12}",
            s.label,
            s.steps,
            mb(s.rss),
            mb(s.heap),
            mb(rec),
            mb(s.heap - rec)
        );
    }
    println!(
        "recording in memory: {per_step:.0} B a step kept (packed; {} B of it the step's slot); the run's file: {}",
        std::mem::size_of::<sbp_scenario::Step>(),
        mb(shared.lock().journal.as_ref().map_or(0, |j| j.mark().0 as i64))
    );
    // SAFETY: glibc's malloc_trim takes any pad and only gives free pages back.
    unsafe { malloc_trim(0) };
    println!("RSS after malloc_trim(0) at the end: {}", mb(rss()));
    let _ = session.end().await;
    let _ = c.connection.close().await;
}
