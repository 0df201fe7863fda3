//! A link's checkpoint: the state at the link's instant, taken up instead of a replay. Taken up,
//! it is exactly the state a run to that instant has and goes on exactly as that run does; a
//! checkpoint that is damaged, crafted or another scenario's is refused with its reason, never
//! run, and never panics.
use proptest::prelude::*;
use sbp_scenario::link::{decode_link, encode_link, link_to, Link};
use sbp_scenario::presets::PRESETS;
use sbp_scenario::*;

fn scenario(index: usize) -> Scenario {
    Scenario::from_json(PRESETS[index % PRESETS.len()].1).expect("preset")
}

fn preset(name: &str) -> Scenario {
    scenario(PRESETS.iter().position(|(n, _)| *n == name).expect(name))
}

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn run_to(scenario: &Scenario, at: i64) -> Simulation {
    let mut sim = Simulation::new(scenario).expect("valid");
    sim.advance_to(at);
    sim
}

/// The simulation a link to `sim` opens (through its text, as a browser or the CLI gets it).
fn opened(sim: &mut Simulation) -> (Link, link::Opened) {
    let link = decode_link(&encode_link(&link_to(sim, Some(60)))).expect("the link reads");
    let opened = link.open(None).expect("the scenario is valid");
    (link, opened)
}

/// `restored` is `run` (the log aside: a restored one starts at the checkpoint) and goes on as
/// it does, to `until`.
fn assert_goes_on_alike(mut restored: Simulation, mut run: Simulation, until: i64) {
    let at = run.now();
    assert_eq!(restored.now(), at);
    assert!(
        restored.ns().same_state_except_log(run.ns()),
        "state differs at {at}"
    );
    assert_eq!(restored.checked, run.checked);
    let before = run.ns().log().len();
    assert_eq!(
        restored.ns().log_dropped(),
        run.ns().log_dropped() + before as u64,
        "the events before the checkpoint count as dropped"
    );
    restored.advance_to(until);
    run.advance_to(until);
    assert_eq!(
        restored.ns().log(),
        &run.ns().log()[before..],
        "the run after {at} differs"
    );
    assert!(restored.ns().same_state_except_log(run.ns()));
    assert_eq!(restored.failures, run.failures);
    assert_eq!(restored.checked, run.checked);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]
    /// Every preset, at any instant of its run: the link's checkpoint is taken up and goes on
    /// exactly as the run.
    #[test]
    fn a_link_checkpoint_goes_on_exactly_as_the_run(preset in 0usize..PRESETS.len(), at in 1i64..1_000) {
        let scenario = scenario(preset);
        let end = scenario.end().max(60_000);
        let at = end * at / 999;
        let mut run = run_to(&scenario, at);
        prop_assume!(run.failures.is_empty());
        let (link, opened) = opened(&mut run);
        prop_assert!(link.checkpoint.is_some());
        prop_assert!(opened.checkpoint_refused.is_none(), "{:?}", opened.checkpoint_refused);
        prop_assert_eq!(opened.at, None, "nothing to replay");
        assert_goes_on_alike(opened.sim, run, end + 60_000);
    }

    /// A checkpoint with bytes changed, cut or added is refused or taken up; taken up, it runs
    /// on (bounded) without a panic.
    #[test]
    fn a_damaged_checkpoint_never_panics(
        preset in 0usize..PRESETS.len(),
        at in 1i64..1_000,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..6),
    ) {
        let scenario = scenario(preset);
        let end = scenario.end().max(60_000);
        let mut run = run_to(&scenario, end * at / 999);
        let Some(mut bytes) = checkpoint::save(&mut run) else { return Ok(()) };
        for (i, b, how) in edits {
            let i = i.index(bytes.len().max(1));
            let at = i % bytes.len().max(1);
            match how {
                0 if !bytes.is_empty() => bytes[at] = b,
                1 if !bytes.is_empty() => bytes[at] ^= 1 << (b % 8),
                0 | 1 => {}
                2 => bytes.truncate(i),
                _ => bytes.insert(i.min(bytes.len()), b),
            }
        }
        let mut fresh = Simulation::new(&scenario).expect("valid");
        if checkpoint::restore(&mut fresh, run.now(), &bytes).is_ok() {
            let mut budget = 200_000;
            fresh.advance_within(end + 600_000, &mut budget);
        }
    }
}

#[test]
fn a_traffic_hour_link_opens_at_its_instant_without_a_replay() {
    let scenario = Scenario::from_json(
        r#"{"version":1,"entities":[{"queue":"q","max_delivery_count":3}],"timeline":[
            {"at":"0s","start_producer":{"name":"web","to":"q","rate":500}},
            {"at":"0s","start_consumers":{"name":"w","from":"q","instances":10,"processing":{"exponential":{"mean":"8ms"}}}}]}"#,
    )
    .expect("valid");
    // Far past what a link may replay when it opens (the open budget).
    let at = 20 * 60_000;
    assert!(link::openable_at(&scenario, at).is_err());
    let mut run = run_to(&scenario, at);
    let (link, opened) = opened(&mut run);
    assert_eq!(link.at, Some(at));
    assert!(opened.checkpoint_refused.is_none());
    // As the browser hands a link over, its payloads inflated (`1j`): within the link's limits.
    let bytes = link.checkpoint.clone().expect("a checkpoint");
    let unpacked = format!(
        "s=1j{}&t={at}&c=1j{}",
        base64_url(serde_json::to_string(&scenario).unwrap().as_bytes()),
        base64_url(&bytes)
    );
    assert_eq!(
        decode_link(&unpacked)
            .expect("within the limits")
            .checkpoint,
        Some(bytes)
    );
    assert_goes_on_alike(opened.sim, run, at + 60_000);
}

#[test]
fn a_checkpoint_goes_with_its_own_scenario_and_instant_only() {
    let scenario = preset("story-traffic-spike");
    let mut run = run_to(&scenario, 90_000);
    let bytes = checkpoint::save(&mut run).expect("a state to save");
    let refused = |scenario: &Scenario, at: i64, bytes: &[u8]| {
        let mut fresh = Simulation::new(scenario).expect("valid");
        let before = format!("{:?}", fresh.ns());
        let why = checkpoint::restore(&mut fresh, at, bytes)
            .expect_err("refused")
            .key;
        assert_eq!(
            format!("{:?}", fresh.ns()),
            before,
            "a refusal changes nothing"
        );
        why
    };
    let mut other = scenario.clone();
    other.seed += 1;
    assert_eq!(refused(&other, 90_000, &bytes), "s-checkpoint-scenario");
    assert_eq!(refused(&scenario, 60_000, &bytes), "s-checkpoint-instant");
    assert_eq!(
        refused(&scenario, 90_000, &bytes[..bytes.len() / 2]),
        "s-checkpoint-unreadable"
    );
    assert_eq!(refused(&scenario, 90_000, &[]), "s-checkpoint-unreadable");
    let mut newer = bytes.clone();
    newer[0] += 1;
    assert_eq!(refused(&scenario, 90_000, &newer), "s-link-newer");

    // A link whose checkpoint is not taken up opens as one without it: replayed to its instant
    // when that fits the open budget, with the reason.
    let mut link = link_to(&mut run, None);
    link.scenario = other;
    let opened = link.open(None).expect("valid");
    assert_eq!(opened.sim.now(), 0);
    assert_eq!(opened.at, Some(90_000));
    assert_eq!(
        opened.checkpoint_refused.map(|t| t.key),
        Some("s-checkpoint-scenario".into())
    );
}

#[test]
fn a_run_with_failed_checks_or_at_its_start_has_no_checkpoint() {
    let mut sim = Simulation::new(&preset("story-traffic-spike")).expect("valid");
    assert!(
        checkpoint::save(&mut sim).is_none(),
        "nothing to save at t=0"
    );
    let failing = Scenario::from_json(
        r#"{"version":1,"entities":[{"queue":"q"}],"expect":[{"at":"1s","counts":{"q":{"active":5}}}]}"#,
    )
    .expect("valid");
    let mut sim = run_to(&failing, 2_000);
    assert!(!sim.failures.is_empty());
    let link = link_to(&mut sim, None);
    assert!(
        link.checkpoint.is_none(),
        "failures are words, not state: the link replays"
    );
    assert_eq!(link.at, Some(2_000));
}

#[test]
fn a_link_with_a_checkpoint_but_no_instant_is_refused() {
    let mut run = run_to(&preset("story-traffic-spike"), 30_000);
    let text = encode_link(&link_to(&mut run, None));
    let without_instant: String = text
        .split('&')
        .filter(|p| !p.starts_with("t="))
        .collect::<Vec<_>>()
        .join("&");
    let err = decode_link(&without_instant).expect_err("refused");
    assert!(
        matches!(err, ScenarioError::Link(ref t) if t.key == "s-link-checkpoint-instant"),
        "{err:?}"
    );
}
