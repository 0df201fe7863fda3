//! `sbp fuzz`: share links, lesson links and scenario and lesson files, mutated from the presets,
//! the lessons and random, opened and run as the browser and the CLI would. Counts panics, and measures each input's time and peak
//! memory against the budget (a link opens or is refused within 1 s and 256 MB).
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use sbp_engine::limits::{LATEST_INSTANT, MAX_RATE};
use sbp_scenario::link::{decode_link, encode_link, Link};
use sbp_scenario::presets::PRESETS;
use sbp_scenario::{Scenario, Simulation};
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Counts the bytes allocated now and the most since the last reset.
pub struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded to the system allocator with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) };
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

/// Starts measuring one input's memory: the bytes allocated now (its base).
pub fn start_measuring() -> usize {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    base
}

/// The most bytes allocated above `base` since [`start_measuring`].
pub fn peak_since(base: usize) -> usize {
    PEAK.load(Ordering::Relaxed).saturating_sub(base)
}

/// The budget every input must keep.
const MAX_MS: f64 = 1_000.0;
const MAX_BYTES: usize = 256 * 1024 * 1024;

#[derive(Default)]
pub struct Report {
    pub inputs: u64,
    pub opened: u64,
    pub refused: u64,
    pub panics: u64,
    pub over_budget: u64,
    pub slowest_ms: f64,
    pub slowest: String,
    pub peak_bytes: usize,
    pub largest: String,
    pub total_s: f64,
}

/// Runs `inputs` inputs from `seed`. Panicking inputs are written to `sbp-fuzz-panic-<n>.txt`.
pub fn run(inputs: u64, seed: u64, mut progress: impl FnMut(&Report)) -> Report {
    let presets: Vec<Value> = PRESETS
        .iter()
        .filter_map(|(_, j)| serde_json::from_str(j).ok())
        .collect();
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut report = Report::default();
    let started = Instant::now();
    // Quiet panics: they are counted and saved, not printed one by one.
    std::panic::set_hook(Box::new(|_| {}));
    for i in 0..inputs {
        let input = make_input(&mut rng, &presets);
        let base = start_measuring();
        let t = Instant::now();
        let outcome = std::panic::catch_unwind(|| open_and_run(&input));
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let bytes = peak_since(base);
        report.inputs += 1;
        match outcome {
            Ok(true) => report.opened += 1,
            Ok(false) => report.refused += 1,
            Err(_) => {
                report.panics += 1;
                let _ = std::fs::write(format!("sbp-fuzz-panic-{i}.txt"), &input.text);
            }
        }
        if ms > report.slowest_ms {
            report.slowest_ms = ms;
            report.slowest = input.describe();
        }
        if bytes > report.peak_bytes {
            report.peak_bytes = bytes;
            report.largest = input.describe();
        }
        if ms > MAX_MS || bytes > MAX_BYTES {
            report.over_budget += 1;
            let _ = std::fs::write(format!("sbp-fuzz-over-budget-{i}.txt"), &input.text);
        }
        if (i + 1) % 100_000 == 0 {
            report.total_s = started.elapsed().as_secs_f64();
            progress(&report);
        }
    }
    let _ = std::panic::take_hook();
    report.total_s = started.elapsed().as_secs_f64();
    report
}

/// An input: a link (as the browser gets it) or a file (as the CLI reads it), holding a
/// scenario or a lesson.
struct Input {
    link: bool,
    lesson: bool,
    /// An emulator Config.json (read as `sbp import` and the emulator page read one).
    config: bool,
    text: String,
}

/// The emulator config to mutate.
const CONFIG: &str = include_str!("../../scenario/tests/data/emulator-config.json");

/// Lessons to mutate (the browser fetches them; `#lesson=` links carry their like).
const LESSONS: [&str; 3] = [
    include_str!("../../../web/lessons/ttl-basics.json"),
    include_str!("../../../web/lessons/max-delivery-count.json"),
    include_str!("../../../web/lessons/topic-ttl.json"),
];

impl Input {
    fn describe(&self) -> String {
        let kind = match (self.config, self.link, self.lesson) {
            (true, _, _) => "emulator config",
            (_, true, false) => "link",
            (_, true, true) => "lesson link",
            (_, false, false) => "file",
            (_, false, true) => "lesson file",
        };
        let start: String = self.text.chars().take(120).collect();
        format!("{kind} of {} bytes: {start}", self.text.len())
    }
}

/// Opens the input as the browser (a link, replayed to its instant) or the CLI (a file, run to
/// its end) does. Says whether it was accepted.
fn open_and_run(input: &Input) -> bool {
    if input.config {
        // As the emulator page reads a config: imported, exported again, and run.
        let Ok(imported) = sbp_scenario::emulator::import(&input.text) else {
            return false;
        };
        let _ = sbp_scenario::emulator::export(&imported.scenario);
        if let Ok(mut sim) = Simulation::new(&imported.scenario) {
            sim.run_to_end();
        }
        return true;
    }
    if input.lesson {
        // As the browser opens a `#lesson=` link (or the CLI a lesson file): read it, then play
        // it as `sbp check` does (every answer computed, every solution played, bounded).
        let json = if input.link {
            let Some(payload) = input.text.strip_prefix("lesson=") else {
                return false;
            };
            match sbp_scenario::link::decode_payload(payload) {
                Ok(json) => json,
                Err(_) => return false,
            }
        } else if input.text.len() > sbp_scenario::link::MAX_JSON {
            // As the CLI reads a file: at most MAX_JSON bytes.
            return false;
        } else {
            input.text.clone()
        };
        let Ok(lesson) = sbp_scenario::lesson::Lesson::from_json(&json) else {
            return false;
        };
        let _ = lesson.check();
        return true;
    }
    if input.link {
        let Ok(link) = decode_link(&input.text) else {
            return false;
        };
        // As the browser opens it: at its checkpoint, or replayed to its instant (within the
        // open budget); then one clock tick on, as a reader would press play.
        let Ok(opened) = link.open(Some(100_000)) else {
            return false;
        };
        let mut sim = opened.sim;
        sim.advance_to(opened.at.unwrap_or(0));
        sim.next_due();
        let mut budget = 20_000;
        sim.advance_within(sim.now() + 3_600_000, &mut budget);
        true
    } else {
        // As the CLI reads a file: at most MAX_JSON bytes.
        if input.text.len() > sbp_scenario::link::MAX_JSON {
            return false;
        }
        let Ok(scenario) = Scenario::from_json(&input.text) else {
            return false;
        };
        if scenario.check_run_to(scenario.end()).is_err() {
            return false;
        }
        let Ok(mut sim) = Simulation::new(&scenario) else {
            return false;
        };
        sim.run_to_end();
        // As the emulator page shows a scenario: as a config and as code.
        let _ = sbp_scenario::emulator::export(&scenario);
        let lang = [
            sbp_scenario::code::Lang::CSharp,
            sbp_scenario::code::Lang::Python,
            sbp_scenario::code::Lang::JavaScript,
        ][input.text.len() % 3];
        let _ = sbp_scenario::code::generate(&scenario, lang);
        true
    }
}

fn make_input(rng: &mut Pcg64Mcg, presets: &[Value]) -> Input {
    let link = rng.random_bool(0.5);
    if rng.random_bool(0.2) {
        return lesson_input(rng, link);
    }
    if rng.random_bool(0.1) {
        let mut v: Value = serde_json::from_str(CONFIG).unwrap_or_default();
        for _ in 0..rng.random_range(1..5) {
            mutate(rng, &mut v);
        }
        return Input {
            link: false,
            lesson: false,
            config: true,
            text: serde_json::to_string(&v).unwrap_or_default(),
        };
    }
    let kind = rng.random_range(0..10);
    let text = match kind {
        // Random text, and random text after a link's prefix.
        0 => random_text(rng),
        1 => format!(
            "s=1{}{}",
            ["z", "j", "x"][rng.random_range(0..3)],
            random_text(rng)
        ),
        // A preset mutated as JSON, as a file or a link.
        _ => {
            let mut v = presets[rng.random_range(0..presets.len())].clone();
            for _ in 0..rng.random_range(1..5) {
                mutate(rng, &mut v);
            }
            let text = serde_json::to_string(&v).unwrap_or_default();
            if !link {
                return Input {
                    link,
                    lesson: false,
                    config: false,
                    text,
                };
            }
            match Scenario::from_json(&text) {
                Ok(scenario) => {
                    let at = match rng.random_range(0..4) {
                        0 => None,
                        1 => Some(rng.random_range(0..=LATEST_INSTANT)),
                        2 => Some(rng.random_range(0..3_600_000)),
                        _ => Some(
                            [i64::MAX, i64::MIN, -1, LATEST_INSTANT + 1][rng.random_range(0..4)],
                        ),
                    };
                    let checkpoint = match at {
                        Some(at) if rng.random_bool(0.4) => checkpoint_at(rng, &scenario, at),
                        _ => None,
                    };
                    let mut fragment = encode_link(&Link {
                        scenario,
                        at,
                        speed: Some(60),
                        checkpoint,
                    });
                    if rng.random_bool(0.2) {
                        corrupt(rng, &mut fragment);
                    }
                    fragment
                }
                // The JSON as a link's payload, as a broken or hand-made link would carry it.
                Err(_) => format!("s=1j{}", base64_url(&text)),
            }
        }
    };
    Input {
        link,
        lesson: false,
        config: false,
        text,
    }
}

/// A lesson mutated: its scenario as a scenario would be, a heavy step added to a part's
/// solution (or repeated there), or a random node made extreme; as a file or a `#lesson=` link.
fn lesson_input(rng: &mut Pcg64Mcg, link: bool) -> Input {
    let mut v: Value =
        serde_json::from_str(LESSONS[rng.random_range(0..LESSONS.len())]).unwrap_or_default();
    for _ in 0..rng.random_range(1..4) {
        match rng.random_range(0..3) {
            // (`Value`'s index panics on what is not an object: mutations may have made it so.)
            0 => {
                if let Some(scenario) = v.get_mut("scenario") {
                    mutate(rng, scenario);
                }
            }
            1 => {
                let parts = v.get("parts").and_then(Value::as_array).map_or(0, Vec::len);
                let i = rng.random_range(0..parts.max(1));
                if let Some(part) = v
                    .get_mut("parts")
                    .and_then(|p| p.get_mut(i))
                    .and_then(Value::as_object_mut)
                {
                    let step = heavy_step(rng);
                    let n = if rng.random_bool(0.3) {
                        rng.random_range(1..2_000)
                    } else {
                        1
                    };
                    match part.get_mut("solution").and_then(Value::as_array_mut) {
                        Some(s) => s.extend(std::iter::repeat_n(step, n)),
                        None => {
                            part.insert("solution".into(), Value::Array(vec![step; n]));
                        }
                    }
                }
            }
            _ => {
                let wild = wild_value(rng);
                replace_random_node(rng, &mut v, wild);
            }
        }
    }
    let text = serde_json::to_string(&v).unwrap_or_default();
    Input {
        link,
        lesson: true,
        config: false,
        text: if link {
            format!("lesson=1j{}", base64_url(&text))
        } else {
            text
        },
    }
}

fn base64_url(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

fn random_text(rng: &mut Pcg64Mcg) -> String {
    let len = rng.random_range(0..400);
    (0..len)
        .map(|_| {
            if rng.random_bool(0.9) {
                char::from(rng.random_range(0x20u8..0x7f))
            } else {
                char::from_u32(rng.random_range(0..0x11_0000)).unwrap_or('?')
            }
        })
        .collect()
}

/// The checkpoint of `scenario` at `at` (when a run there is within the CLI's budget), its bytes
/// changed, cut or added to now and then.
fn checkpoint_at(rng: &mut Pcg64Mcg, scenario: &Scenario, at: i64) -> Option<Vec<u8>> {
    scenario.check_run_to(at).ok()?;
    let mut sim = Simulation::new(scenario).ok()?;
    sim.advance_to(at);
    let mut bytes = sbp_scenario::checkpoint::save(&mut sim)?;
    if rng.random_bool(0.5) {
        for _ in 0..rng.random_range(1..4) {
            let i = rng.random_range(0..=bytes.len());
            match rng.random_range(0..4) {
                0 if i < bytes.len() => bytes[i] ^= 1 << rng.random_range(0..8),
                1 if i < bytes.len() => bytes[i] = rng.random(),
                2 => bytes.truncate(i),
                _ => bytes.insert(i, rng.random()),
            }
        }
    }
    Some(bytes)
}

fn corrupt(rng: &mut Pcg64Mcg, text: &mut String) {
    let mut bytes = std::mem::take(text).into_bytes();
    for _ in 0..rng.random_range(1..4) {
        if bytes.is_empty() {
            break;
        }
        let i = rng.random_range(0..bytes.len());
        match rng.random_range(0..3) {
            0 => bytes[i] = rng.random_range(0x21..0x7f),
            1 => {
                bytes.remove(i);
            }
            _ => bytes.truncate(i),
        }
    }
    *text = String::from_utf8_lossy(&bytes).into_owned();
}

/// Extreme values, and steps that ask for as much work as they can.
fn wild_value(rng: &mut Pcg64Mcg) -> Value {
    match rng.random_range(0..22) {
        0 => json!(i64::MIN),
        1 => json!(i64::MAX),
        2 => json!(u64::MAX),
        3 => json!(-1),
        4 => json!(0),
        5 => json!(1e300),
        6 => json!(0.5),
        7 => json!("MaxValue"),
        8 => json!("30d"),
        9 => json!("31d"),
        10 => json!("1000000000d"),
        11 => json!("-5s"),
        12 => json!("1ms"),
        13 => json!("x".repeat(rng.random_range(0..100_000))),
        14 => json!(null),
        15 => json!(true),
        16 => json!({}),
        17 => json!([]),
        18 => json!(MAX_RATE),
        19 => json!(100_000),
        20 => json!("orders/$deadletterqueue"),
        _ => json!("t/subscriptions/s"),
    }
}

fn heavy_step(rng: &mut Pcg64Mcg) -> Value {
    let at = ["0s", "1s", "1h", "29d", "30d"][rng.random_range(0..5)];
    let long = "x".repeat(2000);
    let names = ["a", "a.b", "a.1", "a.b.2", ".", "", long.as_str()];
    let name = names[rng.random_range(0..names.len())];
    match rng.random_range(0..12) {
        0 => json!({"at": at, "start_producer": {"name": "p", "to": "orders", "rate": MAX_RATE,
                "burst": {"every": "100ms", "size": 10000}, "spike": {"from": "0s", "duration": "30d", "factor": 1}}}),
        1 => json!({"at": at, "start_consumers": {"name": "c", "from": "orders", "instances": 100,
                "poll_interval": "10ms", "processing": {"exponential": {"mean": "1ms"}}, "abandon": 0.5}}),
        2 => {
            json!({"at": at, "send": {"to": "orders", "count": 10000, "ttl": "1ms", "body": "x".repeat(4000)}})
        }
        3 => {
            json!({"at": at, "receive": {"from": "orders", "count": 10000, "max_auto_lock_renewal": "1d"}})
        }
        4 => {
            json!({"at": at, "send": {"to": "orders", "scheduled_enqueue_time": "30d", "count": 10000}})
        }
        5 => json!({"at": at, "create": {"queue": "loop", "forward_to": "orders"}}),
        6 => {
            json!({"at": at, "update": {"entity": "orders", "forward_to": "loop", "forward_dead_lettered_messages_to": "loop"}})
        }
        7 => json!({"at": at, "fault": {"server_busy": "30d"}}),
        // Named calls and settlements by name (`as`, `message`), with awkward names.
        9 => json!({"at": at, "receive": {"from": "orders", "count": 3, "as": name}}),
        10 => json!({"at": at, "peek": {"from": "orders", "count": 3, "as": name}}),
        11 => json!({"at": at, "complete": {"from": "orders", "message": name}}),
        _ => json!({"at": at, "peek": {"from": "orders", "count": 10000}}),
    }
}

/// One mutation somewhere in the scenario.
fn mutate(rng: &mut Pcg64Mcg, v: &mut Value) {
    match rng.random_range(0..6) {
        // A step that asks for a lot, appended to the timeline.
        0 => {
            let step = heavy_step(rng);
            if let Some(t) = v.get_mut("timeline").and_then(Value::as_array_mut) {
                t.push(step);
            } else if let Some(o) = v.as_object_mut() {
                o.insert("timeline".into(), json!([step]));
            }
        }
        // An array repeated many times (steps, entities, expectations).
        1 => {
            let key = ["timeline", "entities", "expect"][rng.random_range(0..3)];
            if let Some(a) = v.get_mut(key).and_then(Value::as_array_mut) {
                if let Some(first) = a.first().cloned() {
                    let n = rng.random_range(1..3_000);
                    a.extend(std::iter::repeat_n(first, n));
                }
            }
        }
        // The namespace made realistic with the fastest sweep.
        2 => {
            if let Some(o) = v.as_object_mut() {
                o.insert(
                    "namespace".into(),
                    json!({"expiry": "realistic", "sweep_interval": "1s"}),
                );
            }
        }
        // A random node replaced by an extreme value.
        _ => {
            let wild = wild_value(rng);
            replace_random_node(rng, v, wild);
        }
    }
}

fn replace_random_node(rng: &mut Pcg64Mcg, v: &mut Value, wild: Value) {
    replace_at_depth(rng, v, wild, 6);
}

fn replace_at_depth(rng: &mut Pcg64Mcg, v: &mut Value, wild: Value, depth: u32) {
    if depth == 0 || rng.random_bool(0.2) {
        *v = wild;
        return;
    }
    match v {
        Value::Object(o) if !o.is_empty() => {
            let i = rng.random_range(0..o.len());
            if let Some(child) = o.values_mut().nth(i) {
                replace_at_depth(rng, child, wild, depth - 1);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            let i = rng.random_range(0..a.len());
            replace_at_depth(rng, &mut a[i], wild, depth - 1);
        }
        _ => *v = wild,
    }
}
