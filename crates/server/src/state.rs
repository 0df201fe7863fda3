//! `sbp serve --state FILE`: the broker taken up from the state file and the journal beside
//! it ([`take_up`]), and written to it now and then ([`checkpoint`]); the journal itself, what
//! makes each step durable before it is answered, is [`crate::journal`].
//!
//! Taking up: the state file, then every journal line after it replayed at its instant (the
//! engine is deterministic: a replayed receive gives the same lock tokens). A line whose index
//! the state already holds is passed over, so a crash between a checkpoint's rename and the
//! journal's cut loses and repeats nothing. A torn or unreadable tail is cut (and kept beside
//! as `FILE.journal.cut`), said with the number of lines kept.
use crate::broker::Broker;
use crate::journal::{journal_path, lock, parse_line, write_atomically, Journal, MAX_STATE_BYTES};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Writes the broker's state to `path` and cuts the journal to the lines after it (unless
/// `force`, only when steps were recorded since the last). Ok(true) when written; Err with what
/// to say when it could not be (a state too large is said once, until one is written again).
pub fn checkpoint(
    broker: &Mutex<Broker>,
    journal: &Journal,
    path: &Path,
    force: bool,
) -> Result<bool, String> {
    checkpoint_within(broker, journal, path, force, MAX_STATE_BYTES)
}

/// As [`checkpoint`], with a state of at most `max` bytes.
fn checkpoint_within(
    broker: &Mutex<Broker>,
    journal: &Journal,
    path: &Path,
    force: bool,
    max: usize,
) -> Result<bool, String> {
    let _one = lock(&journal.checkpointing);
    let (state, (upto, lines)) = {
        let mut broker = lock(broker);
        if !force && !journal.has_new() {
            return Ok(false);
        }
        (broker.state_within(max), journal.mark())
    };
    let text = match state {
        Ok(text) => text,
        Err(why) => {
            if journal.too_large_said.swap(true, Ordering::AcqRel) {
                return Ok(false);
            }
            return Err(format!(
                "{why}: {} keeps the last state written, and {} every step since (a restart replays them)",
                path.display(),
                journal.path.display()
            ));
        }
    };
    write_atomically(path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    journal.too_large_said.store(false, Ordering::Release);
    journal.checkpointed_lines.store(lines, Ordering::Release);
    journal
        .cut(upto)
        .map_err(|e| format!("cannot cut {}: {e}", journal.path.display()))?;
    Ok(true)
}

/// A broker taken up from `--state`, with what to say about it.
pub struct TakenUp {
    pub broker: Broker,
    /// What was taken up (for the standard output).
    pub notes: Vec<String>,
    /// What was cut or could not be read (for the standard error).
    pub warnings: Vec<String>,
}

/// Reads the state file of at most [`MAX_STATE_BYTES`].
fn read_state(path: &Path) -> Result<String, String> {
    let f = File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut bytes = Vec::new();
    f.take(MAX_STATE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() > MAX_STATE_BYTES {
        return Err(format!(
            "larger than {} MiB, the most a state file is",
            MAX_STATE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

/// Takes up the broker of `--state state`: the state file (or `fresh` when there is none), then
/// the journal beside it replayed; the journal is then opened for this run's steps. A state file
/// that does not hold together is refused with the reason (and left as it is); a journal's torn
/// or unreadable tail is cut, said, and kept beside.
pub fn take_up(
    state: &Path,
    fresh: impl FnOnce() -> Result<Broker, String>,
) -> Result<TakenUp, String> {
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    let mut broker = if state.exists() {
        let text = read_state(state)
            .map_err(|e| format!("{}: {e}; it is left as it is", state.display()))?;
        let broker = Broker::from_state(&text)
            .map_err(|e| format!("{}: {e}; it is left as it is", state.display()))?;
        notes.push(format!(
            "state taken up from {} (at {})",
            state.display(),
            sbp_engine::time::format_instant(broker.sim.now())
        ));
        broker
    } else {
        fresh()?
    };
    let path = journal_path(state);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("{}: cannot read it: {e}", path.display())),
    };
    let (mut kept, mut replayed, mut good_end) = (0usize, 0usize, 0usize);
    let mut bad = None;
    for piece in bytes.split_inclusive(|&b| b == b'\n') {
        let number = kept + 1;
        let Some(line) = piece.strip_suffix(b"\n") else {
            bad = Some(format!("line {number} is half-written"));
            break;
        };
        let (index, at, step) = match parse_line(line) {
            Ok(l) => l,
            Err(e) => {
                bad = Some(format!("line {number} is not a step: {e}"));
                break;
            }
        };
        let next = broker.sim.scenario.timeline.len();
        if index > next {
            bad = Some(format!(
                "line {number} is step {index} where {next} came next (a line is missing)"
            ));
            break;
        }
        // A line the state already holds (a crash came between its rename and the cut).
        if index == next {
            if let Err(e) = broker.replay(at, &step) {
                bad = Some(format!("line {number} does not replay: {e}"));
                break;
            }
            replayed += 1;
        }
        kept += 1;
        good_end += piece.len();
    }
    if let Some(why) = bad {
        let mut aside = path.as_os_str().to_owned();
        aside.push(".cut");
        let aside = PathBuf::from(aside);
        let cut = || -> std::io::Result<()> {
            std::fs::write(&aside, &bytes[good_end..])?;
            let f = OpenOptions::new().write(true).open(&path)?;
            f.set_len(good_end as u64)?;
            f.sync_all()
        };
        cut().map_err(|e| format!("{}: cannot cut its tail: {e}", path.display()))?;
        warnings.push(format!(
            "{}: kept {kept} lines; cut the {} bytes after them ({why}; they are kept in {})",
            path.display(),
            bytes.len() - good_end,
            aside.display()
        ));
    }
    if replayed > 0 {
        notes.push(format!(
            "{} steps replayed from {} (to {})",
            replayed,
            path.display(),
            sbp_engine::time::format_instant(broker.sim.now())
        ));
    }
    broker.catch_up_clock();
    let journal = Journal::open(path.clone(), good_end as u64)
        .map_err(|e| format!("{}: cannot open it: {e}", path.display()))?;
    broker.journal = Some(Arc::new(journal));
    Ok(TakenUp {
        broker,
        notes,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> Result<Broker, String> {
        let scenario = sbp_scenario::Scenario::from_json(
            r#"{"version": 1, "entities": [{"queue": "orders"}]}"#,
        )
        .map_err(|e| e.to_string())?;
        Broker::new(scenario, 1_700_000_000_000)
    }

    #[test]
    fn a_state_too_large_to_write_is_said_once_and_its_journal_kept_whole() {
        let dir = std::env::temp_dir().join(format!("sbp-journal-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a folder");
        let state = dir.join("state.json");
        let shared = crate::Shared::new(take_up(&state, fresh).expect("a broker").broker);
        assert_eq!(shared.checkpoint(&state, true), Ok(true));
        let base = std::fs::read(&state).expect("the state");
        for i in 0..20 {
            let def: sbp_scenario::SendDef = serde_json::from_value(
                serde_json::json!({ "to": "orders", "body": i.to_string() }),
            )
            .expect("a send");
            shared.lock().send("test", def).expect("sent");
        }
        shared.sync_journal();
        let journal = shared.journal.clone().expect("a journal");
        let lines = std::fs::read(journal.path()).expect("the journal");
        let tight = |force| checkpoint_within(&shared.broker, &journal, &state, force, 1_000);
        let said = tight(false).expect_err("said");
        assert!(said.contains("larger than 1000 bytes"), "{said}");
        assert!(
            said.contains("state.json.journal every step since"),
            "{said}"
        );
        // Said once; nothing written, nothing cut.
        assert_eq!(tight(true), Ok(false));
        assert_eq!(std::fs::read(&state).expect("the state"), base);
        assert_eq!(std::fs::read(journal.path()).expect("the journal"), lines);
        drop((journal, shared));
        let mut taken = take_up(&state, || Err("a state is there".into())).expect("taken up");
        assert!(
            taken.notes.iter().any(|n| n.contains("20 steps replayed")),
            "{:?}",
            taken.notes
        );
        taken.broker.tick();
        let now = taken.broker.sim.now();
        let queue = taken.broker.sim.ns.entity("orders").expect("the queue");
        assert_eq!(queue.counts(now).active, 20);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
