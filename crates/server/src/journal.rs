//! `sbp serve --state FILE`: what keeps an accepted message across a crash. Every step the
//! broker records is appended to `FILE.journal` as one line (its index in the timeline, its
//! instant, the step) while the broker is held, and [`Journal::sync`] makes what was appended
//! durable (one fdatasync for every append since the last, outside the broker's lock). Now and
//! then the state is written whole to `FILE` (a checkpoint: temporary file, fsync, rename,
//! fsync of the folder) and the journal is cut to the lines after it.
//!
//! Taking up ([`take_up`]): the state file, then every journal line after it replayed at its
//! instant (the engine is deterministic: a replayed receive gives the same lock tokens). A line
//! whose index the state already holds is passed over, so a crash between a checkpoint's
//! rename and the journal's cut loses and repeats nothing. A torn or unreadable tail is cut
//! (and kept beside as `FILE.journal.cut`), said with the number of lines kept.
use crate::broker::Broker;
use sbp_engine::time::Instant;
use sbp_scenario::Step;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The largest state file `--state` writes and reads, and the largest engine checkpoint in it:
/// one rule for both, so a state that is written is one that is taken up. A state past it is
/// said once and not written; the journal is then kept whole, and a restart replays it from
/// the last state written.
pub const MAX_STATE_BYTES: usize = 64 << 20;

/// `FILE.journal`, beside the state file `FILE`.
pub fn journal_path(state: &Path) -> PathBuf {
    let mut name = state.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// The journal of a running broker: appended under the broker's lock, synced without it.
pub struct Journal {
    path: PathBuf,
    disk: Mutex<Disk>,
    /// One fdatasync at a time; a caller whose lines a running one covers waits for it, then
    /// finds them synced and returns.
    syncing: Mutex<()>,
    /// One checkpoint at a time (the periodic one and the one on stop).
    checkpointing: Mutex<()>,
    /// Offsets in the journal as if never cut: what is written to the file (not yet durable)
    /// and what is synced.
    written: AtomicU64,
    synced: AtomicU64,
    /// Lines appended in all, and how many the last state written holds.
    lines: AtomicU64,
    checkpointed_lines: AtomicU64,
    /// A write or sync failed: said once (the steps after it are kept only by a checkpoint).
    failed: AtomicBool,
    /// The state was too large to write: said once until one is written again.
    too_large_said: AtomicBool,
}

struct Disk {
    file: Arc<File>,
    /// The offset (as if never cut) of the file's first byte.
    base: u64,
    /// The offset after the last line written.
    end: u64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Journal {
    /// The journal at `path`, `len` bytes of good lines long, opened to append.
    fn open(path: PathBuf, len: u64) -> std::io::Result<Journal> {
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(Journal {
            path,
            disk: Mutex::new(Disk {
                file: Arc::new(file),
                base: 0,
                end: len,
            }),
            syncing: Mutex::new(()),
            checkpointing: Mutex::new(()),
            written: AtomicU64::new(len),
            synced: AtomicU64::new(len),
            lines: AtomicU64::new(0),
            checkpointed_lines: AtomicU64::new(u64::MAX),
            failed: AtomicBool::new(false),
            too_large_said: AtomicBool::new(false),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the step recorded at `index` of the timeline (called while the broker is held,
    /// so the lines are in the timeline's order). The line goes to the file at once (a crash of
    /// the process keeps it); [`Journal::sync`] makes it survive the machine's too.
    pub fn append(&self, index: usize, at: Instant, step: &Step) {
        if self.failed.load(Ordering::Acquire) {
            return;
        }
        let mut line = serde_json::json!({ "index": index, "at": at, "step": step }).to_string();
        line.push('\n');
        let mut disk = lock(&self.disk);
        match (&*disk.file).write_all(line.as_bytes()) {
            Ok(()) => {
                disk.end += line.len() as u64;
                self.written.store(disk.end, Ordering::Release);
                self.lines.fetch_add(1, Ordering::AcqRel);
            }
            // A line partly written would end the journal there: nothing more is appended.
            Err(e) => self.fail("write", &e),
        }
    }

    fn fail(&self, what: &str, e: &std::io::Error) {
        if !self.failed.swap(true, Ordering::AcqRel) {
            eprintln!(
                "warning: cannot {what} {}: {e}; the steps from now on are kept only when the state is written",
                self.path.display()
            );
        }
    }

    /// Makes every line appended so far durable: one fdatasync covers every append before it,
    /// and a call with nothing new returns at once. The broker is not held meanwhile.
    pub fn sync(&self) {
        let target = self.written.load(Ordering::Acquire);
        if self.synced.load(Ordering::Acquire) >= target || self.failed.load(Ordering::Acquire) {
            return;
        }
        let _one = lock(&self.syncing);
        if self.synced.load(Ordering::Acquire) >= target {
            return;
        }
        let (file, end) = {
            let disk = lock(&self.disk);
            (disk.file.clone(), disk.end)
        };
        match file.sync_data() {
            Ok(()) => {
                self.synced.fetch_max(end, Ordering::AcqRel);
            }
            Err(e) => self.fail("sync", &e),
        }
    }

    /// Whether lines were appended since the last state written.
    fn has_new(&self) -> bool {
        self.lines.load(Ordering::Acquire) != self.checkpointed_lines.load(Ordering::Acquire)
    }

    /// Where the journal ends now, and its line count (taken with the state, the broker held).
    fn mark(&self) -> (u64, u64) {
        let disk = lock(&self.disk);
        (disk.end, self.lines.load(Ordering::Acquire))
    }

    /// Cuts the lines before `upto` (a state written holds them): the lines after it are copied
    /// to a new file, synced, and renamed over the journal. The copy is made without the file's
    /// lock, then what was appended meanwhile is added under it.
    fn cut(&self, upto: u64) -> std::io::Result<()> {
        let (base, end) = {
            let disk = lock(&self.disk);
            (disk.base, disk.end)
        };
        if upto <= base {
            return Ok(());
        }
        let mut tmp_name = self.path.as_os_str().to_owned();
        tmp_name.push(".tmp");
        let tmp = PathBuf::from(tmp_name);
        let mut out = File::create(&tmp)?;
        let mut from = File::open(&self.path)?;
        from.seek(SeekFrom::Start(upto - base))?;
        std::io::copy(&mut (&mut from).take(end - upto), &mut out)?;
        out.sync_data()?;
        let mut disk = lock(&self.disk);
        if disk.end > end {
            std::io::copy(&mut (&mut from).take(disk.end - end), &mut out)?;
            out.sync_data()?;
        }
        std::fs::rename(&tmp, &self.path)?;
        disk.file = Arc::new(out);
        disk.base = upto;
        // Everything in the new file is synced (the folder follows: until then a crash finds
        // the old journal, which holds every line of the new one).
        self.synced.fetch_max(disk.end, Ordering::AcqRel);
        drop(disk);
        sync_folder(&self.path)
    }
}

/// Syncs the folder holding `path`, so a rename into it is durable.
fn sync_folder(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        File::open(folder)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Writes `text` to `path` so that a crash leaves the old file or the new one whole: a
/// temporary file beside it, synced, renamed over it, and the folder synced.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    let mut file = File::create(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)?;
    sync_folder(path)
}

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

/// One journal line: a step at its instant, at its index in the timeline.
fn parse_line(line: &[u8]) -> Result<(usize, Instant, Step), String> {
    #[derive(serde::Deserialize)]
    struct Line {
        index: usize,
        at: Instant,
        step: Step,
    }
    let line: Line = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    Ok((line.index, line.at, line.step))
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
