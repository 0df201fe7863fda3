//! `sbp serve --state FILE`: the broker taken up from the state file and the journal beside
//! it ([`take_up`]), and written to it now and then ([`checkpoint`]); the journal itself, what
//! makes each step durable before it is answered, is [`crate::journal`].
//!
//! The journal holds every step of the run, one line each: it is the recording on disk, only
//! ever appended to. The state file holds the engine's state at a step of it (the checkpoint,
//! the locks given, the scenario's entities, how many steps it is taken after), so writing it
//! costs what the state is now, not the run's length. Taking up: the state file, the journal's
//! lines before its step as the run so far, the lines after it replayed at their instants (the
//! engine is deterministic: a replayed receive gives the same lock tokens). A torn or
//! unreadable tail is cut (and kept beside as `FILE.journal.cut`), said with the number of
//! lines kept. A state file of version 1 (the steps in it, the journal cut after it) is taken
//! up too.
use crate::broker::Broker;
use crate::journal::{journal_path, lock, read_line, write_atomically, Journal, MAX_STATE_BYTES};
use sbp_scenario::Step;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Writes the broker's state to `path` (unless `force`, only when steps were recorded since
/// the last). Ok(true) when written; Err with what to say when it could not be (a state too
/// large is said once, until one is written again).
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
    let (state, lines) = {
        let mut broker = lock(broker);
        if !force && !journal.has_new() {
            return Ok(false);
        }
        (broker.state_within(max), journal.lines())
    };
    let text = match state {
        Ok(text) => text,
        Err(why) => {
            if journal.too_large_said.swap(true, Ordering::AcqRel) {
                return Ok(false);
            }
            return Err(format!(
                "{why}: {} keeps the last state written, and {} every step (a restart replays those after it)",
                path.display(),
                journal.path.display()
            ));
        }
    };
    write_atomically(path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    journal.too_large_said.store(false, Ordering::Release);
    journal.checkpointed_lines.store(lines, Ordering::Release);
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

/// Takes up the broker of `--state state`: the state file (or `fresh` when there is none: a
/// journal left without its state is set aside), then the journal's lines after the step it
/// was written at replayed (those before it are the
/// run so far, on disk, not read into memory); the journal is then kept for this run's steps.
/// A state file that does not hold together is refused with the reason (and left as it is); a
/// journal's torn or unreadable tail is cut, said, and kept beside.
pub fn take_up(
    state: &Path,
    fresh: impl FnOnce() -> Result<Broker, String>,
) -> Result<TakenUp, String> {
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    let path = journal_path(state);
    let mut broker = if state.exists() {
        let text = read_state(state)
            .map_err(|e| format!("{}: {e}; it is left as it is", state.display()))?;
        let broker = Broker::from_state(&text)
            .map_err(|e| format!("{}: {e}; it is left as it is", state.display()))?;
        notes.push(format!(
            "state taken up from {} (at {}, after {} steps)",
            state.display(),
            sbp_engine::time::format_instant(broker.sim.now()),
            broker.steps()
        ));
        broker
    } else {
        // No state: a fresh start (the state is written as the server starts, so a journal
        // without one is left from a run whose state was removed to start afresh). It is set
        // aside, not replayed onto the fresh broker.
        if std::fs::metadata(&path).is_ok_and(|m| m.len() > 0) {
            let aside = crate::journal::beside(&path, ".old");
            std::fs::rename(&path, &aside)
                .map_err(|e| format!("{}: cannot set it aside: {e}", path.display()))?;
            warnings.push(format!(
                "{} had no state beside it: a fresh start; it is kept as {}",
                path.display(),
                aside.display()
            ));
        }
        fresh()?
    };
    // Steps the broker holds in memory (a state of version 1's, or `--play`'s): they become
    // the journal's first lines when it has none; when it has some, it holds them already
    // (the same steps, written by the run that made it).
    let held = broker.sim.take_run_steps();
    if !held.is_empty() {
        let empty = std::fs::metadata(&path).map_or(true, |m| m.len() == 0);
        if empty {
            write_first_lines(&path, broker.steps(), &held)
                .map_err(|e| format!("{}: cannot write it: {e}", path.display()))?;
        }
        broker.mark_recorded(held.len());
    }
    let recorded = broker.steps();
    let (mut lines, mut replayed, mut good_end) = (0usize, 0usize, 0u64);
    let mut bad = None;
    if let Ok(mut file) = File::open(&path) {
        // The lines before the state's step are the run so far: not read. The state says
        // where its step's line starts (when the journal is that long).
        let len = file.metadata().map_or(0, |m| m.len());
        if let Some(at) = broker.journal_at.filter(|at| *at <= len) {
            file.seek(SeekFrom::Start(at))
                .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
            good_end = at;
            lines = recorded;
        }
        let mut reader = std::io::BufReader::new(file);
        let mut buf = Vec::new();
        while let Some(line) = read_line(&mut reader, &mut buf)
            .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?
        {
            let number = lines + 1;
            let (index, at, step, n) = match line {
                Ok(l) => l,
                Err(why) => {
                    bad = Some(format!("line {number} {why}"));
                    break;
                }
            };
            let next = broker.steps();
            if index > next || (index < next && index != lines) {
                bad = Some(format!(
                    "line {number} is step {index} where {} came next (a line is missing)",
                    lines.min(next)
                ));
                break;
            }
            if index == next {
                if let Err(e) = broker.replay(at, &step) {
                    bad = Some(format!("step {index} does not replay: {e}"));
                    break;
                }
                replayed += 1;
            }
            lines += 1;
            good_end += n;
        }
    }
    if let Some(why) = bad {
        let aside = crate::journal::beside(&path, ".cut");
        let cut = || -> std::io::Result<u64> {
            let mut f = OpenOptions::new().read(true).write(true).open(&path)?;
            f.seek(SeekFrom::Start(good_end))?;
            let mut tail = Vec::new();
            f.read_to_end(&mut tail)?;
            std::fs::write(&aside, &tail)?;
            f.set_len(good_end)?;
            f.sync_all()?;
            Ok(tail.len() as u64)
        };
        let cut = cut().map_err(|e| format!("{}: cannot cut its tail: {e}", path.display()))?;
        warnings.push(format!(
            "{}: kept {lines} lines; cut the {cut} bytes after them ({why}; they are kept in {})",
            path.display(),
            aside.display()
        ));
    }
    if lines < recorded {
        warnings.push(format!(
            "{} holds {lines} of the {recorded} steps the state was written after: the state is taken up, the recording lacks the others",
            path.display()
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
    let journal = Journal::open(path.clone(), good_end, lines as u64)
        .map_err(|e| format!("{}: cannot open it: {e}", path.display()))?;
    broker.record_in(Arc::new(journal));
    Ok(TakenUp {
        broker,
        notes,
        warnings,
    })
}

/// Writes `steps` (from step `first` on) as an empty journal's lines: a new file, synced,
/// renamed over it.
fn write_first_lines(path: &Path, first: usize, steps: &[Step]) -> std::io::Result<()> {
    let mut text = String::new();
    for (i, step) in steps.iter().enumerate() {
        text.push_str(&crate::journal::line(first + i, step.at.ms(), step));
    }
    write_atomically(path, &text)
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
            said.contains("state.json.journal every step (a restart replays those after it)"),
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
        let queue = taken.broker.sim.ns().entity("orders").expect("the queue");
        assert_eq!(queue.counts(now).active, 20);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
