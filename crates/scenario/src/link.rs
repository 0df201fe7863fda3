//! The share-link fragment: `s=<payload>` plus optional `&t=<instant ms>&x=<speed>&c=<payload>`.
//! The payload is versioned: `1j<base64url JSON>` or, when smaller, `1z<base64url deflate(JSON)>`;
//! `c=` carries the simulation's state at `t` (`crate::checkpoint`), bytes in the same wrapping.
//! Decoding any string gives a scenario or a clear error, never a panic, within size limits.
use crate::{Scenario, ScenarioError, Text};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sbp_engine::limits::MAX_OPEN_WORK;
use sbp_engine::time::{format_instant, Instant};

/// The longest fragment accepted (a checkpoint's payload aside).
pub const MAX_FRAGMENT: usize = 256 * 1024;
/// The longest checkpoint payload accepted: [`crate::checkpoint::MAX_CHECKPOINT`] bytes in
/// base64 (as the browser hands it over, unpacked).
pub const MAX_CHECKPOINT_PAYLOAD: usize = crate::checkpoint::MAX_CHECKPOINT / 3 * 4 + 8;
/// The largest scenario JSON a payload may unpack to.
pub const MAX_JSON: usize = 4 * 1024 * 1024;

/// What a link holds: the scenario, and optionally the instant and speed to open at.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub scenario: Scenario,
    pub at: Option<i64>,
    pub speed: Option<u32>,
    /// The state at `at` (`crate::checkpoint`), so the link opens there without a replay.
    pub checkpoint: Option<Vec<u8>>,
}

/// The scenario as a compact, URL-safe payload (packed when that is smaller and the `inflate`
/// feature, which brings miniz_oxide, is on).
pub fn encode_scenario(scenario: &Scenario) -> String {
    encode_bytes(&serde_json::to_vec(scenario).unwrap_or_default())
}

/// Bytes as a payload: `1z` packed when that is smaller (with the `inflate` feature), else `1j`.
pub fn encode_bytes(bytes: &[u8]) -> String {
    #[cfg(feature = "inflate")]
    {
        let packed = miniz_oxide::deflate::compress_to_vec(bytes, 9);
        if packed.len() < bytes.len() {
            return format!("1z{}", URL_SAFE_NO_PAD.encode(packed));
        }
    }
    format!("1j{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// A packed payload's JSON, at most [`MAX_JSON`] bytes.
#[cfg(feature = "inflate")]
fn inflate(bytes: &[u8]) -> Option<Vec<u8>> {
    miniz_oxide::inflate::decompress_to_vec_with_limit(bytes, MAX_JSON).ok()
}

/// Without the `inflate` feature (the browser's build) a packed payload has been inflated by the
/// browser before it gets here; one that reaches this did not inflate there.
#[cfg(not(feature = "inflate"))]
fn inflate(_: &[u8]) -> Option<Vec<u8>> {
    None
}

pub fn decode_scenario(payload: &str) -> Result<Scenario, ScenarioError> {
    let text = decode_payload(payload)?;
    Scenario::from_json(&text)
        .map_err(|e| ScenarioError::Link(sbp_engine::text!("s-link-scenario", what = e.text())))
}

/// A payload's JSON text (`1j...` or `1z...`): what a scenario link and a lesson link carry.
pub fn decode_payload(payload: &str) -> Result<String, ScenarioError> {
    match String::from_utf8(decode_bytes(payload, MAX_FRAGMENT, "s-link-long")?) {
        Ok(text) => Ok(text),
        Err(_) => Err(ScenarioError::Link(Text::new("s-link-utf8"))),
    }
}

/// A payload's bytes (`1j...` or `1z...`, at most `longest` characters: longer, the error is
/// `too_long`), at most [`MAX_JSON`] of them.
pub fn decode_bytes(
    payload: &str,
    longest: usize,
    too_long: &'static str,
) -> Result<Vec<u8>, ScenarioError> {
    let err = |key: &'static str| Err(ScenarioError::Link(Text::new(key)));
    let payload = payload.trim();
    if payload.len() > longest {
        return err(too_long);
    }
    if payload.is_empty() {
        return err("s-link-empty");
    }
    let (version, rest) = payload.split_at(
        payload
            .char_indices()
            .nth(2)
            .map_or(payload.len(), |(i, _)| i),
    );
    let (version, kind) = (version.chars().next(), version.chars().nth(1));
    match version {
        Some('1') => {}
        Some(v) if v.is_ascii_digit() => return err("s-link-newer"),
        _ => return err("s-link-not-ours"),
    }
    let Ok(bytes) = URL_SAFE_NO_PAD.decode(rest.trim_end_matches('=')) else {
        return err("s-link-base64");
    };
    match kind {
        Some('z') => inflate(&bytes).map_or_else(|| err("s-link-inflate"), Ok),
        Some('j') if bytes.len() <= MAX_JSON => Ok(bytes),
        Some('j') => err("s-link-long"),
        _ => err("s-link-encoding"),
    }
}

/// Whether a link may open `scenario` at `at`: within the playground's last instant, and
/// replaying to it takes no more than [`MAX_OPEN_WORK`] (about a second in a browser).
pub fn openable_at(scenario: &Scenario, at: Instant) -> Result<(), Text> {
    crate::step::check_instant("t", at)?;
    let work = scenario.work_until(at);
    if work > MAX_OPEN_WORK {
        return Err(sbp_engine::text!(
            "s-link-work",
            at = format_instant(at),
            work = work,
            max = MAX_OPEN_WORK
        ));
    }
    Ok(())
}

/// A link to `scenario` at `at` if it can open there (see [`openable_at`]), else at its start.
pub fn link_at(scenario: Scenario, at: Instant, speed: Option<u32>) -> Link {
    let at = openable_at(&scenario, at).ok().map(|_| at);
    Link {
        scenario,
        at,
        speed,
        checkpoint: None,
    }
}

/// A link to the running `sim` at its instant: with a checkpoint of its state when it has one
/// to save (`crate::checkpoint`), so it opens there however far it is; else as [`link_at`].
pub fn link_to(sim: &mut crate::Simulation, speed: Option<u32>) -> Link {
    match crate::checkpoint::save(sim) {
        Some(bytes) => Link {
            scenario: sim.scenario.clone(),
            at: Some(sim.now()),
            speed,
            checkpoint: Some(bytes),
        },
        None => link_at(sim.scenario.clone(), sim.now(), speed),
    }
}

/// A link to `sim` as it is now whose scenario also carries what shows now as an expectation
/// at this instant ([`crate::Simulation::expectation_now`]: the embed form's "Check that..."),
/// with the checkpoint made for that scenario (so the link opens here without a replay). The
/// copy it is made from is the link's own state taken up again (the code a link opens with,
/// rather than a clone of the whole simulation: the page's wasm stays as small).
pub fn link_checking_now(
    sim: &mut crate::Simulation,
    selected: Option<(&str, u64)>,
    speed: Option<u32>,
) -> Link {
    let check = sim.expectation_now(selected);
    let mut link = link_to(sim, speed);
    // After every expectation already checked: it is checked when the run next moves on, and
    // holds then (nothing more happens at this instant).
    let index = link
        .scenario
        .expect
        .partition_point(|e| e.at.ms() <= check.at.ms());
    let opened = link
        .checkpoint
        .is_some()
        .then(|| link.open(None).ok())
        .flatten()
        .filter(|o| o.checkpoint_refused.is_none());
    match opened {
        Some(mut opened) => {
            opened.sim.scenario.expect.insert(index, check);
            opened.sim.next_expect = opened.sim.next_expect.min(index);
            link_to(&mut opened.sim, speed)
        }
        // No state to carry (t=0): the link replays, checking on its way.
        None => {
            link.scenario.expect.insert(index, check);
            link
        }
    }
}

/// A link opened: the simulation (at the link's instant when its checkpoint was taken up, else
/// at t=0), the instant to run it to, and why a checkpoint was not taken up.
pub struct Opened {
    pub sim: crate::Simulation,
    pub at: Option<Instant>,
    pub checkpoint_refused: Option<Text>,
}

impl Link {
    /// A link to `scenario` at `at`, with no speed and no state: what a preset, a file or an
    /// undo opens.
    pub fn at(scenario: Scenario, at: Option<Instant>) -> Link {
        Link {
            scenario,
            at,
            speed: None,
            checkpoint: None,
        }
    }

    /// The simulation this link opens (`default_log_limit` as
    /// [`crate::Simulation::with_default_log_limit`]). A checkpoint that is not taken up leaves
    /// the link as one without it: run to its instant if a replay there fits the open budget,
    /// else from its start.
    pub fn open(&self, default_log_limit: Option<usize>) -> Result<Opened, ScenarioError> {
        let mut sim = crate::Simulation::build(&self.scenario, default_log_limit)?;
        let (Some(bytes), Some(at)) = (&self.checkpoint, self.at) else {
            return Ok(Opened {
                sim,
                at: self.at,
                checkpoint_refused: None,
            });
        };
        match crate::checkpoint::restore(&mut sim, at, bytes) {
            Ok(()) => Ok(Opened {
                sim,
                at: None,
                checkpoint_refused: None,
            }),
            Err(why) => Ok(Opened {
                at: openable_at(&self.scenario, at).ok().map(|_| at),
                sim,
                checkpoint_refused: Some(why),
            }),
        }
    }
}

/// `s=...&t=...&x=...&c=...`
pub fn encode_link(link: &Link) -> String {
    let checkpoint = link.checkpoint.as_deref().map(encode_bytes);
    link_fragment(
        &encode_scenario(&link.scenario),
        checkpoint.as_deref(),
        link,
    )
}

/// The fragment for `link` with its scenario (and checkpoint) already encoded as payloads
/// (`1j...` or `1z...`): the browser packs them itself, with its own deflate, to keep
/// miniz_oxide's compressor out of the wasm.
pub fn link_fragment(payload: &str, checkpoint: Option<&str>, link: &Link) -> String {
    let mut out = format!("s={payload}");
    if let Some(at) = link.at {
        out.push_str(&format!("&t={at}"));
    }
    if let Some(x) = link.speed {
        out.push_str(&format!("&x={x}"));
    }
    if let (Some(c), Some(_)) = (checkpoint, link.at) {
        out.push_str(&format!("&c={c}"));
    }
    out
}

/// Accepts a whole URL, a `#fragment`, or the fragment's text.
pub fn decode_link(text: &str) -> Result<Link, ScenarioError> {
    decode(text).map_err(ScenarioError::clipped)
}

fn decode(text: &str) -> Result<Link, ScenarioError> {
    // What the link holds is quoted short: a broken link can be as long as the longest link.
    use sbp_engine::error::quote;
    let bad = |m: Text| Err(ScenarioError::Link(m));
    if text.len() > MAX_FRAGMENT + MAX_CHECKPOINT_PAYLOAD + 2048 {
        return bad(Text::new("s-link-long"));
    }
    let fragment = text.trim().rsplit_once('#').map_or(text.trim(), |(_, f)| f);
    let mut scenario = None;
    let (mut at, mut speed, mut checkpoint) = (None, None, None);
    for part in fragment.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        match key {
            "s" => scenario = Some(decode_scenario(value)?),
            "t" => match value.parse::<i64>() {
                Ok(t) if t >= 0 => at = Some(t),
                _ => return bad(sbp_engine::text!("s-link-instant", value = quote(value))),
            },
            "x" => match value.parse::<u32>() {
                Ok(x) if (1..=100_000).contains(&x) => speed = Some(x),
                _ => return bad(sbp_engine::text!("s-link-speed", value = quote(value))),
            },
            "c" => {
                checkpoint = Some(decode_bytes(
                    value,
                    MAX_CHECKPOINT_PAYLOAD,
                    "s-checkpoint-size",
                )?)
            }
            "embed" => {}
            other => return bad(sbp_engine::text!("s-link-part", part = quote(other))),
        }
    }
    // With a checkpoint the link opens without a replay; should the checkpoint not be taken
    // up, the page opens the scenario as far as a replay goes (`Link::open`).
    if let (Some(s), Some(t)) = (&scenario, at) {
        match checkpoint {
            None => openable_at(s, t),
            Some(_) => crate::step::check_instant("t", t),
        }
        .map_err(ScenarioError::Link)?;
    }
    if checkpoint.is_some() && at.is_none() {
        return bad(Text::new("s-link-checkpoint-instant"));
    }
    match scenario {
        Some(scenario) => Ok(Link {
            scenario,
            at,
            speed,
            checkpoint,
        }),
        None => bad(Text::new("s-link-no-scenario")),
    }
}
