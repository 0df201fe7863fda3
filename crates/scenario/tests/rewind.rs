//! Instant rewind: going to an instant through checkpoints ends in exactly the state a fresh run
//! to that instant has (the log aside, of which a checkpoint keeps the last part).
use proptest::prelude::*;
use sbp_scenario::presets::PRESETS;
use sbp_scenario::rewind::CHECKPOINT_LOG;
use sbp_scenario::*;

fn scenario(index: usize) -> Scenario {
    Scenario::from_json(PRESETS[index % PRESETS.len()].1).expect("preset")
}

/// A fresh run of `scenario` to `at`.
fn fresh(scenario: &Scenario, at: i64) -> Simulation {
    let mut sim = Simulation::new(scenario).expect("valid");
    sim.advance_to(at);
    sim
}

fn assert_same(rewound: &Simulation, fresh: &Simulation) {
    assert_eq!(rewound.now(), fresh.now());
    assert!(
        rewound.ns().same_state_except_log(fresh.ns()),
        "state differs at {}",
        rewound.now()
    );
    let (a, b) = (rewound.ns().log(), fresh.ns().log());
    let kept = a.len().min(b.len());
    assert!(kept >= a.len().min(CHECKPOINT_LOG));
    assert_eq!(a[a.len() - kept..], b[b.len() - kept..], "log tails differ");
    assert_eq!(
        rewound.ns().log_dropped() + a.len() as u64,
        fresh.ns().log_dropped() + b.len() as u64,
        "event counts differ"
    );
    assert_eq!(rewound.outcomes, fresh.outcomes);
    assert_eq!(rewound.failures, fresh.failures);
    assert_eq!(rewound.checked, fresh.checked);
}

/// Goes to `at` as the browser does: from the running simulation or the nearest checkpoint.
fn go(rewind: &mut Rewind, sim: &mut Simulation, at: i64) {
    assert!(
        rewind.seek(sim, at) || {
            *sim = Simulation::new(sim.scenario()).expect("valid");
            true
        }
    );
    let mut budget = usize::MAX;
    assert!(rewind.advance(sim, at, &mut budget));
}

proptest! {
    // 64 cases in the test command; PROPTEST_CASES=N for a long run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]
    #[test]
    fn seeking_through_checkpoints_equals_a_fresh_run(
        preset in 0usize..PRESETS.len(),
        every in 1usize..400,
        moves in prop::collection::vec(0i64..1_000, 1..8),
    ) {
        let scenario = scenario(preset);
        let end = scenario.end().max(60_000);
        let mut sim = Simulation::new(&scenario).expect("valid");
        let mut rewind = Rewind::with_spacing(&mut sim, every);
        for m in moves {
            let at = end * m / 999;
            go(&mut rewind, &mut sim, at);
            assert_same(&sim, &fresh(&scenario, at));
        }
    }
}

#[test]
fn a_recorded_step_forgets_the_checkpoints_after_it_and_a_rewind_keeps_it() {
    let index = PRESETS
        .iter()
        .position(|(name, _)| *name == "story-traffic-spike")
        .expect("preset");
    let scenario = scenario(index);
    let mut sim = Simulation::new(&scenario).expect("valid");
    let mut rewind = Rewind::with_spacing(&mut sim, 3);
    go(&mut rewind, &mut sim, 90_000);
    assert_eq!(rewind.furthest(), 90_000);
    let before = rewind.len();
    go(&mut rewind, &mut sim, 30_000);
    let step = Step::new(Action::Fault(FaultDef::ServiceUpdate));
    sim.push_step(step).expect("recorded");
    rewind.forget_from(30_000);
    assert!(rewind.len() < before, "later checkpoints are forgotten");
    assert_eq!(
        rewind.furthest(),
        30_000,
        "the run is known up to the recorded step"
    );
    assert!(rewind.instants().all(|t| t < 30_000));
    go(&mut rewind, &mut sim, 120_000);
    go(&mut rewind, &mut sim, 10_000);
    go(&mut rewind, &mut sim, 100_000);
    assert_same(&sim, &fresh(&sim.scenario().clone(), 100_000));
    assert!(sim
        .scenario()
        .timeline
        .iter()
        .any(|s| matches!(s.action, Some(Action::Fault(_)))));
}

#[test]
fn checkpoints_stay_within_their_memory_and_count_bounds_on_a_long_traffic_run() {
    let scenario = Scenario::from_json(
        r#"{"version":1,"entities":[{"queue":"q"}],"timeline":[
            {"at":"0s","start_producer":{"name":"web","to":"q","rate":1000}},
            {"at":"0s","start_consumers":{"name":"w","from":"q","instances":10,"processing":{"exponential":{"mean":"8ms"}}}}]}"#,
    )
    .expect("valid");
    let mut sim = Simulation::new(&scenario).expect("valid");
    let mut rewind = Rewind::with_spacing(&mut sim, 50);
    let mut budget = usize::MAX;
    assert!(rewind.advance(&mut sim, 600_000, &mut budget));
    assert!(rewind.len() <= sbp_scenario::rewind::MAX_CHECKPOINTS);
    assert!(rewind.bytes() <= sbp_scenario::rewind::CHECKPOINT_BYTES);
    assert!(rewind.len() > 100, "a long run keeps many checkpoints");
    let mut last = -1;
    for t in rewind.instants() {
        assert!(t >= last, "checkpoints in time order");
        last = t;
    }
    go(&mut rewind, &mut sim, 123_456);
    assert_same(&sim, &fresh(&scenario, 123_456));
}

#[test]
fn checkpoints_of_a_large_state_share_it_and_rewinding_stays_exact() {
    // 120,000 stored messages by t=11s, then only a trickle: every checkpoint after it shares
    // the stored messages, so checkpoints go on being taken, and together they take what
    // changed, not 120,000 messages each. Every message has a TimeToLive: expiry timers are one
    // per page of 64 messages, so a checkpoint's copy of the timers stays small too.
    let sends: Vec<String> = (0..12)
        .map(|i| format!(r#"{{"at":"{i}s","send":{{"to":"q","count":10000}}}}"#))
        .collect();
    let scenario = Scenario::from_json(&format!(
        r#"{{"version":1,"entities":[{{"queue":"q","default_message_time_to_live":"1h"}}],"timeline":[
            {{"at":"0s","start_producer":{{"name":"web","to":"q","rate":10}}}},{}]}}"#,
        sends.join(",")
    ))
    .expect("valid");
    let mut sim = Simulation::new(&scenario).expect("valid");
    let mut rewind = Rewind::with_spacing(&mut sim, 50);
    let mut budget = usize::MAX;
    assert!(rewind.advance(&mut sim, 30_000, &mut budget));
    assert!(sim.ns().stored_messages() > 120_000);
    let kept: Vec<i64> = rewind.instants().collect();
    let late = kept.iter().filter(|&&t| t > 12_000).count();
    assert!(
        late >= 3,
        "checkpoints of the large state are kept: {kept:?}"
    );
    assert!(
        rewind.bytes() < 8 << 20,
        "they share the stored messages: {} bytes estimated",
        rewind.bytes()
    );
    go(&mut rewind, &mut sim, 20_000);
    assert_same(&sim, &fresh(&scenario, 20_000));
}
