//! Rewind in the engine, without rendering: a producer at 1,000 msg/s and ten consumers falling
//! behind (each message 100 ms of work on average: about 900 more stored every second), run with
//! the browser's checkpoints (`Rewind::starting_at`) until 200,000 and then about 1,000,000
//! messages are stored; then twenty moves to instants of the run (the browser benchmark's
//! sequence), each timed from the move to the state there (restore and replay), and the last
//! two compared with a fresh run to the same instant (the saved states are the same bytes).
//! Memory: the live heap with the checkpoints, and without them. The 1,000,000 again with a
//! TimeToLive of a day on every message (each then has an ExpiresAt to keep, and exact expiry
//! its page's timer).
//!
//! `cargo bench -p sbp-scenario --bench rewind`.
use sbp_scenario::{Rewind, Scenario, Simulation};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Counts live heap bytes.
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
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn backlog(seconds: u64, ttl: bool) -> Scenario {
    let ttl = if ttl {
        r#","default_message_time_to_live":"1d""#
    } else {
        ""
    };
    Scenario::from_json(&format!(
        r#"{{"version":1,"entities":[{{"queue":"orders"{ttl}}}],"timeline":[
            {{"at":"0s","start_producer":{{"name":"web","to":"orders","rate":1000}}}},
            {{"at":"0s","start_consumers":{{"name":"workers","from":"orders","instances":10,
              "processing":{{"exponential":{{"mean":"100ms"}}}}}}}},
            {{"at":"{seconds}s","stop_producer":"web"}}]}}"#
    ))
    .expect("a valid scenario")
}

fn saved(sim: &mut Simulation) -> Vec<u8> {
    sbp_scenario::checkpoint::save_within(sim, usize::MAX).expect("saved")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn run(seconds: u64, ttl: bool) {
    let scenario = backlog(seconds, ttl);
    let end = seconds as i64 * 1000;
    // The run alone, without checkpoints: its heap per stored message.
    let heap_before = LIVE.load(Ordering::Relaxed);
    let mut alone = Simulation::new(&scenario).expect("valid");
    alone.advance_to(end);
    let alone_heap = LIVE.load(Ordering::Relaxed) - heap_before;
    drop(alone);
    let heap_before = LIVE.load(Ordering::Relaxed);
    let mut sim = Simulation::new(&scenario).expect("valid");
    let started = Instant::now();
    let mut rewind = Rewind::starting_at(&mut sim);
    let mut budget = usize::MAX;
    rewind.advance(&mut sim, end, &mut budget);
    let run_s = started.elapsed().as_secs_f64();
    let stored = sim.ns().stored_messages();
    let heap = LIVE.load(Ordering::Relaxed) - heap_before;
    let (checkpoints_at_end, estimated_at_end) = (rewind.len(), rewind.bytes());

    // The browser benchmark's sequence of instants.
    let mut seed: u64 = 7;
    let mut random = || {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        seed as f64 / 2_147_483_648.0
    };
    let mut moves = Vec::new();
    let mut last = Vec::new();
    for _ in 0..20 {
        let at = (random() * end as f64) as i64;
        let t = Instant::now();
        if !rewind.seek(&mut sim, at) {
            sim = Simulation::new(&scenario).expect("valid");
        }
        let mut budget = usize::MAX;
        rewind.advance(&mut sim, at, &mut budget);
        moves.push(t.elapsed().as_secs_f64() * 1e3);
        last.push(at);
    }
    let at = sim.now();
    let mut fresh = Simulation::new(&scenario).expect("valid");
    fresh.advance_to(at);
    assert_eq!(
        saved(&mut sim),
        saved(&mut fresh),
        "a rewind to {at} equals a fresh run"
    );
    drop(fresh);

    moves.sort_by(f64::total_cmp);
    println!(
        "backlog of {stored} stored messages{} ({seconds} s simulated, run with checkpoints in {run_s:.1} s): \
         the run alone {:.0} MB ({:.0} B per stored message); {checkpoints_at_end} checkpoints hold {:.1} MB more \
         ({:.1} MB estimated)",
        if ttl { " with a TimeToLive" } else { "" },
        alone_heap as f64 / 1e6,
        alone_heap as f64 / stored.max(1) as f64,
        heap.saturating_sub(alone_heap) as f64 / 1e6,
        estimated_at_end as f64 / 1e6,
    );
    println!(
        "  20 moves to random instants (restore + replay): median {:.1} ms, p95 {:.1} ms, slowest {:.1} ms",
        percentile(&moves, 0.5),
        percentile(&moves, 0.95),
        moves[moves.len() - 1],
    );
}

fn main() {
    // `cargo test --benches` passes --bench too; run the real thing only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    println!("sbp-scenario rewind benchmark (release build)");
    let sizes: Vec<(u64, bool)> = match std::env::var("SBP_BENCH_SECONDS") {
        Ok(v) => v
            .split(',')
            .filter_map(|s| s.parse().ok())
            .map(|s| (s, false))
            .collect(),
        // About 200,000 and 1,000,000 stored, and 1,000,000 with a TimeToLive.
        Err(_) => vec![(222, false), (1_105, false), (1_105, true)],
    };
    for (seconds, ttl) in sizes {
        run(seconds, ttl);
    }
}
