//! `cargo bench -p sbp-engine`: one million messages through send, receive and complete; one
//! million messages expiring in one jump of the clock; a plain VecDeque push/pop of the same count
//! as the baseline (the engine's cost is reported as a ratio to it); memory per stored message.
use sbp_engine::time::SECOND;
use sbp_engine::{
    EntitySettings, Namespace, NewMessage, ReceiveMode, ReceiveOptions, Settlement,
    SubscriptionRule, Tier,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Counts live heap bytes, to report memory per stored message.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

const N: usize = 1_000_000;
const BATCH: u32 = 1_000;

fn message(i: usize, ttl: Option<i64>) -> NewMessage {
    NewMessage {
        message_id: Some(format!("m-{i}")),
        time_to_live: ttl,
        ..Default::default()
    }
}

/// The baseline: the same messages pushed through a plain VecDeque.
fn baseline() -> f64 {
    let start = Instant::now();
    let mut q: VecDeque<NewMessage> = VecDeque::new();
    for i in 0..N {
        q.push_back(message(i, None));
    }
    while let Some(m) = q.pop_front() {
        black_box(m);
    }
    start.elapsed().as_secs_f64()
}

fn queue(ns: &mut Namespace, dlq: bool) {
    let settings = EntitySettings {
        dead_lettering_on_message_expiration: dlq,
        ..EntitySettings::defaults(Tier::Standard)
    };
    ns.create_queue("q", settings).expect("queue");
}

fn send_receive_complete() -> f64 {
    send_receive_complete_with(EntitySettings::defaults(Tier::Standard))
}

/// The same through a queue with `settings` (duplicate detection: every MessageId remembered).
fn send_receive_complete_with(settings: EntitySettings) -> f64 {
    let mut ns = Namespace::builder().seed(1).build();
    ns.create_queue("q", settings).expect("queue");
    let start = Instant::now();
    for i in 0..N {
        ns.send("q", message(i, None)).expect("send");
    }
    loop {
        let got = ns
            .receive(
                "r",
                "q",
                ReceiveMode::PeekLock,
                BATCH,
                ReceiveOptions::default(),
            )
            .expect("receive");
        if got.is_empty() {
            break;
        }
        for m in got {
            ns.settle("r", "q", m.sequence_number, Settlement::Complete)
                .expect("complete");
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    assert_eq!(ns.entity("q").map(|e| e.main.len()), Some(0));
    elapsed
}

/// FLT-03: sends to a topic whose three subscriptions have SQL filters (a third of the
/// messages match each), each copy then received and completed. Per message sent.
fn sql_fan_out(n: usize) -> f64 {
    use sbp_engine::entity::SqlRule;
    let mut ns = Namespace::builder().seed(1).build();
    let settings = EntitySettings::defaults(Tier::Standard);
    ns.create_topic("t", settings.clone()).expect("topic");
    let filters = [
        "quantity > 20",
        "region IN ('de', 'nl') AND quantity <= 20",
        "sys.Label LIKE 'ord%' AND NOT EXISTS(region)",
    ];
    for (i, f) in filters.iter().enumerate() {
        let rule = SubscriptionRule::Sql(Box::new(SqlRule::new(f, None).expect("filter")));
        ns.create_subscription("t", &format!("s{i}"), settings.clone(), rule)
            .expect("subscription");
    }
    let start = Instant::now();
    for i in 0..n {
        let mut m = message(i, None);
        m.subject = Some("order".into());
        let props = match i % 3 {
            0 => vec![("quantity", "30")],
            1 => vec![("quantity", "5"), ("region", "nl")],
            _ => vec![("quantity", "1")],
        };
        m.application_properties = props
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        ns.send("t", m).expect("send");
        if i % BATCH as usize == 0 || i + 1 == n {
            for s in 0..3 {
                let path = format!("t/subscriptions/s{s}");
                loop {
                    let got = ns
                        .receive(
                            "r",
                            &path,
                            ReceiveMode::ReceiveAndDelete,
                            BATCH,
                            ReceiveOptions::default(),
                        )
                        .expect("receive");
                    if got.is_empty() {
                        break;
                    }
                }
            }
        }
    }
    start.elapsed().as_secs_f64() / n as f64
}

fn expiry_jump(dlq: bool) -> (f64, usize) {
    let mut ns = Namespace::builder().seed(1).build();
    queue(&mut ns, dlq);
    for i in 0..N {
        ns.send("q", message(i, Some(10 * SECOND))).expect("send");
    }
    let events_before = ns.log().len();
    let start = Instant::now();
    ns.advance_to(10 * SECOND);
    let elapsed = start.elapsed().as_secs_f64();
    assert_eq!(ns.entity("q").map(|e| e.main.len()), Some(0));
    (elapsed, ns.log().len() - events_before)
}

/// A producer at 1,000 msg/s and ten consumers for a simulated hour, with the log bounded as the
/// browser bounds it.
fn traffic_hour() -> (f64, u64) {
    use sbp_engine::{ConsumerSpec, Processing, ProducerSpec};
    let mut ns = Namespace::builder()
        .seed(1)
        .log_limit(Some(100_000))
        .build();
    queue(&mut ns, false);
    ns.start_producer(ProducerSpec::new("web", "q", 1000.0))
        .expect("producer");
    ns.start_consumers(ConsumerSpec {
        instances: 10,
        processing: Processing::Exponential { mean: 8 },
        ..ConsumerSpec::new("w", "q")
    })
    .expect("consumers");
    let start = Instant::now();
    ns.advance_to(3600 * SECOND);
    (
        start.elapsed().as_secs_f64(),
        ns.metrics().total().completed,
    )
}

fn memory_per_message() -> (f64, f64) {
    let before = LIVE.load(Ordering::Relaxed);
    let mut ns = Namespace::builder().seed(1).build();
    queue(&mut ns, false);
    for i in 0..N {
        ns.send("q", message(i, Some(3600 * SECOND))).expect("send");
    }
    let with_log = LIVE.load(Ordering::Relaxed) - before;
    let log_bytes = std::mem::size_of_val(ns.log());
    black_box(&ns);
    (
        with_log as f64 / N as f64,
        (with_log - log_bytes.min(with_log)) as f64 / N as f64,
    )
}

fn main() {
    // `cargo test --benches` passes --bench too; run the real thing only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    // SBP_BENCH=traffic runs only the traffic hour (for a profiler).
    if std::env::var("SBP_BENCH").as_deref() == Ok("traffic") {
        let (secs, completed) = traffic_hour();
        println!("traffic hour: {:.1} ms, {completed} completed", secs * 1e3);
        return;
    }
    println!("sbp-engine benchmark, {N} messages (release build)");
    let base = (0..3).map(|_| baseline()).fold(f64::MAX, f64::min);
    let engine = (0..3)
        .map(|_| send_receive_complete())
        .fold(f64::MAX, f64::min);
    let ns_per = |secs: f64| secs * 1e9 / N as f64;
    println!(
        "baseline VecDeque push+pop:        {:>8.1} ms  ({:>6.1} ns/message)",
        base * 1e3,
        ns_per(base)
    );
    println!(
        "send+receive+complete (PeekLock):  {:>8.1} ms  ({:>6.1} ns/message)",
        engine * 1e3,
        ns_per(engine)
    );
    let ratio = engine / base;
    println!(
        "ratio to baseline:                 {ratio:>8.1}x  (budget 20x: {})",
        if ratio <= 20.0 { "ok" } else { "OVER" }
    );
    let duplicates = (0..3)
        .map(|_| {
            send_receive_complete_with(EntitySettings {
                requires_duplicate_detection: true,
                duplicate_detection_history_time_window: 7 * sbp_engine::time::DAY,
                ..EntitySettings::defaults(Tier::Standard)
            })
        })
        .fold(f64::MAX, f64::min);
    println!(
        "  with duplicate detection (7 days): {:>7.1} ms  ({:>6.1} ns/message; every MessageId kept)",
        duplicates * 1e3,
        ns_per(duplicates)
    );
    let sql = sql_fan_out(200_000);
    println!(
        "topic, 3 SQL-filtered subscriptions: {:>6.1} ns per message sent (fan-out, receive)",
        sql * 1e9
    );
    let (drop_secs, drop_events) = expiry_jump(false);
    let (dlq_secs, dlq_events) = expiry_jump(true);
    println!(
        "1M expire in one jump (dropped):   {:>8.1} ms  ({drop_events} events; budget 1000 ms: {})",
        drop_secs * 1e3,
        if drop_secs < 1.0 { "ok" } else { "OVER" }
    );
    println!(
        "1M expire in one jump (to DLQ):    {:>8.1} ms  ({dlq_events} events; budget 1000 ms: {})",
        dlq_secs * 1e3,
        if dlq_secs < 1.0 { "ok" } else { "OVER" }
    );
    let (traffic_secs, completed) = traffic_hour();
    println!(
        "1,000 msg/s + 10 consumers, 1 h:   {:>8.1} ms  ({completed} completed, {:.2} us/message)",
        traffic_secs * 1e3,
        traffic_secs * 1e6 / completed.max(1) as f64
    );
    let (with_log, without_log) = memory_per_message();
    println!("memory per stored message:         {with_log:>8.0} B with its Sent event, {without_log:.0} B without");
}
