//! A checkpoint in a share link (`c=`): the simulation's state at the link's instant, so a link
//! at a far instant opens at once instead of replaying from the start (an hour of 1,000 msg/s
//! is 3.6 million messages). It goes with its own scenario only (the scenario's hash is in it)
//! and at its own instant; the engine checks the state holds together before it takes it up
//! ([`sbp_engine::Namespace::resume`]). A simulation whose checks have failed is not saved (the
//! failures are words in the reader's language, not state): its link replays as before.
use crate::run::{NamedCall, Simulation};
use crate::{Scenario, Text};
use sbp_engine::saved::{Io, Saved};
use sbp_engine::time::Instant;

/// The format's version, first in the bytes: a newer one is refused by name.
const VERSION: u8 = 5;
/// The largest checkpoint a link carries (bytes, before packing): a larger state makes a link
/// without one.
pub const MAX_CHECKPOINT: usize = 2 << 20;

/// What a checkpoint holds besides the namespace's state, which follows it.
struct Head {
    /// FNV-1a of the scenario as JSON.
    scenario: u64,
    at: Instant,
    next_step: usize,
    next_expect: usize,
    checked: usize,
}

impl Head {
    fn visit(&mut self, named: &mut Vec<(String, NamedCall)>, io: &mut dyn Io) {
        let mut version = VERSION;
        version.visit(io);
        if version != VERSION {
            return io.fail();
        }
        self.scenario.visit(io);
        self.at.visit(io);
        self.next_step.visit(io);
        self.next_expect.visit(io);
        self.checked.visit(io);
        named.visit(io);
    }
}

/// FNV-1a (64 bits) of the scenario's JSON: which scenario a checkpoint belongs to.
fn scenario_hash(scenario: &Scenario) -> u64 {
    serde_json::to_string(scenario)
        .unwrap_or_default()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// The checkpoint of `sim` as it is now, if there is something to save (past t=0, no failed
/// check) within [`MAX_CHECKPOINT`].
pub fn save(sim: &mut Simulation) -> Option<Vec<u8>> {
    save_within(sim, MAX_CHECKPOINT)
}

/// As [`save`], within `max` bytes: a file of `sbp serve --state` is not a link, and holds
/// larger states under its own limit (the same one [`restore_within`] is given on reading).
pub fn save_within(sim: &mut Simulation, max: usize) -> Option<Vec<u8>> {
    save_as(sim, max, Covers::Scenario)
}

/// As [`save_within`], the checkpoint going with the scenario's entities and settings whatever
/// its timeline: `sbp serve`'s, whose timeline is the run recorded so far. Its cost is the
/// state's, not the run's length (the scenario is hashed without the timeline); the timeline
/// it is taken up with must hold the steps before its place ([`restore_without_timeline`]).
pub fn save_without_timeline(sim: &mut Simulation, max: usize) -> Option<Vec<u8>> {
    save_as(sim, max, Covers::Entities)
}

/// What a checkpoint's scenario hash covers.
#[derive(Clone, Copy)]
enum Covers {
    /// The whole scenario (a link: its checkpoint goes with that scenario only).
    Scenario,
    /// Everything but the timeline (`sbp serve`: the timeline is the run recorded so far).
    Entities,
}

/// The hash of `scenario` as `covers` says (the timeline taken out and put back, not copied).
fn hash_of(scenario: &mut Scenario, covers: Covers) -> u64 {
    match covers {
        Covers::Scenario => scenario_hash(scenario),
        Covers::Entities => {
            let timeline = std::mem::take(&mut scenario.timeline);
            let hash = scenario_hash(scenario);
            scenario.timeline = timeline;
            hash
        }
    }
}

fn save_as(sim: &mut Simulation, max: usize, covers: Covers) -> Option<Vec<u8>> {
    // A link at t=0 replays nothing: it needs none. `sbp serve`'s state always has one (its
    // steps are not in it).
    let nothing_to_save = matches!(covers, Covers::Scenario) && sim.now() == 0;
    if nothing_to_save || !sim.failures.is_empty() {
        return None;
    }
    let mut head = Head {
        scenario: hash_of(&mut sim.scenario, covers),
        at: sim.now(),
        next_step: sim.next_step,
        next_expect: sim.next_expect,
        checked: sim.checked,
    };
    let Simulation { ns, named, .. } = sim;
    let bytes = ns.save(|io| head.visit(&mut named.0, io));
    (bytes.len() <= max).then_some(bytes)
}

/// `fresh` (the scenario's simulation at t=0, built as the page builds it) taken to the state
/// in `bytes`, which must be `scenario`'s at `at`. On an error `fresh` is unchanged.
pub fn restore(fresh: &mut Simulation, at: Instant, bytes: &[u8]) -> Result<(), Text> {
    restore_within(fresh, at, bytes, MAX_CHECKPOINT)
}

/// As [`restore`], taking a checkpoint of up to `max` bytes (as [`save_within`] wrote it).
pub fn restore_within(
    fresh: &mut Simulation,
    at: Instant,
    bytes: &[u8],
    max: usize,
) -> Result<(), Text> {
    restore_as(fresh, at, bytes, max, Covers::Scenario)
}

/// As [`restore_within`], for a checkpoint [`save_without_timeline`] wrote: `fresh`'s timeline
/// holds at least the steps before the checkpoint's place.
pub fn restore_without_timeline(
    fresh: &mut Simulation,
    at: Instant,
    bytes: &[u8],
    max: usize,
) -> Result<(), Text> {
    restore_as(fresh, at, bytes, max, Covers::Entities)
}

fn restore_as(
    fresh: &mut Simulation,
    at: Instant,
    bytes: &[u8],
    max: usize,
    covers: Covers,
) -> Result<(), Text> {
    let bad = |key: &'static str| Err(Text::new(key));
    if bytes.len() > max {
        return bad("s-checkpoint-size");
    }
    match bytes.first() {
        Some(&VERSION) => {}
        Some(v) if *v > VERSION => return Err(Text::new("s-link-newer")),
        _ => return bad("s-checkpoint-unreadable"),
    }
    let mut head = Head {
        scenario: 0,
        at: 0,
        next_step: 0,
        next_expect: 0,
        checked: 0,
    };
    let mut named = Vec::new();
    let mut ns = fresh.ns.snapshot(0);
    ns.resume(bytes, |io| head.visit(&mut named, io))
        .map_err(Text::new)?;
    if head.scenario != hash_of(&mut fresh.scenario, covers) {
        return bad("s-checkpoint-scenario");
    }
    let timeline = &fresh.scenario.timeline;
    let expect = &fresh.scenario.expect;
    let (next_step, next_expect) = (head.next_step, head.next_expect);
    if head.at != at
        || ns.now() != at
        || next_step > timeline.len()
        || next_expect > expect.len()
        || head.checked > timeline.len() + expect.len()
        || timeline[..next_step].iter().any(|s| s.at.ms() > at)
        || timeline[next_step..].iter().any(|s| s.at.ms() < at)
        || expect[..next_expect].iter().any(|e| e.at.ms() > at)
        || expect[next_expect..].iter().any(|e| e.at.ms() < at)
    {
        return bad("s-checkpoint-instant");
    }
    fresh.ns = ns;
    fresh.next_step = next_step;
    fresh.next_expect = next_expect;
    fresh.checked = head.checked;
    fresh.named = crate::vecmap::VecMap(named);
    Ok(())
}
