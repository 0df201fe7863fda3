//! `sbp serve --state FILE`: what keeps an accepted message across a crash. Every step the
//! broker records is appended to `FILE.journal` as one line (its index in the timeline, its
//! instant, the step) while the broker is held, and [`Journal::sync`] makes what was appended
//! durable (one fdatasync for every append since the last, outside the broker's lock). The
//! journal is only ever appended to: it is the run's recording on disk. Now and then the state
//! is written whole to `FILE` (a checkpoint: temporary file, fsync, rename, fsync of the
//! folder), naming the step it is taken after.
//!
//! Taking up the state and the journal, and checkpoints: [`crate::state`].
use sbp_engine::time::Instant;
use sbp_scenario::Step;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The largest state file `--state` writes and reads, and the largest engine checkpoint in it:
/// one rule for both, so a state that is written is one that is taken up. A state past it is
/// said once and not written, and a restart replays the journal from the last state written.
pub const MAX_STATE_BYTES: usize = 64 << 20;

/// One journal line: the step at `index` of the run, at its instant, and a line end.
pub(crate) fn line(index: usize, at: Instant, step: &Step) -> String {
    let mut line = serde_json::json!({ "index": index, "at": at, "step": step }).to_string();
    line.push('\n');
    line
}

/// `FILE.journal`, beside the state file `FILE`.
pub fn journal_path(state: &Path) -> PathBuf {
    beside(state, ".journal")
}

/// The file beside `path` whose name is `path`'s with `suffix` added (`FILE.journal`,
/// `FILE.key`).
pub fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The journal of a running broker: appended under the broker's lock, synced without it.
pub struct Journal {
    pub(crate) path: PathBuf,
    disk: Mutex<Disk>,
    /// One fdatasync at a time; a caller whose lines a running one covers waits for it, then
    /// finds them synced and returns.
    syncing: Mutex<()>,
    /// One checkpoint at a time (the periodic one and the one on stop).
    pub(crate) checkpointing: Mutex<()>,
    /// Offsets in the journal: what is written to the file (not yet durable) and what is
    /// synced.
    written: AtomicU64,
    synced: AtomicU64,
    /// Lines appended in all, and how many the last state written holds.
    lines: AtomicU64,
    pub(crate) checkpointed_lines: AtomicU64,
    /// A write or sync failed: said once (the steps after it are kept only by a checkpoint).
    failed: AtomicBool,
    /// The state was too large to write: said once until one is written again.
    pub(crate) too_large_said: AtomicBool,
    /// `--state`'s journal, synced before answers go out; else the recording of a run without
    /// `--state`, a temporary file removed when the server stops, never synced.
    durable: bool,
}

impl Drop for Journal {
    fn drop(&mut self) {
        if !self.durable {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

struct Disk {
    file: Arc<File>,
    /// The offset after the last line written.
    end: u64,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Journal {
    /// The journal at `path`, `len` bytes of good lines long (`lines` of them, all in the
    /// state taken up), opened to append.
    pub(crate) fn open(path: PathBuf, len: u64, lines: u64) -> std::io::Result<Journal> {
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(Journal {
            path,
            disk: Mutex::new(Disk {
                file: Arc::new(file),
                end: len,
            }),
            syncing: Mutex::new(()),
            checkpointing: Mutex::new(()),
            written: AtomicU64::new(len),
            synced: AtomicU64::new(len),
            lines: AtomicU64::new(lines),
            checkpointed_lines: AtomicU64::new(u64::MAX),
            failed: AtomicBool::new(false),
            too_large_said: AtomicBool::new(false),
            durable: true,
        })
    }

    /// The recording of a run without `--state`: a new file in the system's temporary folder,
    /// removed when the journal is dropped; never synced (nothing is promised across a crash).
    pub fn temporary() -> std::io::Result<Journal> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "sbp-serve-{}-{}.steps",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&path);
        let mut journal = Journal::open(path, 0, 0)?;
        journal.durable = false;
        Ok(journal)
    }

    /// Where the lines end now and how many there are (taken with the broker held: a copy of
    /// the run so far reads up to there, after the broker is let go).
    pub fn mark(&self) -> (u64, u64) {
        let disk = lock(&self.disk);
        (disk.end, self.lines.load(Ordering::Acquire))
    }

    /// The steps of the first `end` bytes (a [`Journal::mark`]), read from the file.
    pub fn read_steps(&self, end: u64) -> Result<Vec<Step>, String> {
        use std::io::Read;
        let cannot = |e: std::io::Error| format!("cannot read {}: {e}", self.path.display());
        let file = File::open(&self.path).map_err(cannot)?;
        let mut reader = std::io::BufReader::new(file.take(end));
        let mut steps = Vec::new();
        let mut buf = Vec::new();
        while let Some(line) = read_line(&mut reader, &mut buf).map_err(cannot)? {
            let (_, _, step, _) = line
                .map_err(|why| format!("{} line {} {why}", self.path.display(), steps.len() + 1))?;
            steps.push(step);
        }
        Ok(steps)
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
        let line = line(index, at, step);
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
                "warning: cannot {what} {}: {e}; the steps from now on are not recorded (the state is kept when it is written)",
                self.path.display()
            );
        }
    }

    /// Makes every line appended so far durable: one fdatasync covers every append before it,
    /// and a call with nothing new returns at once. The broker is not held meanwhile.
    pub fn sync(&self) {
        if !self.durable {
            return;
        }
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

    /// Empties the journal (a reset: the run starts afresh), durably.
    pub fn clear(&self) -> std::io::Result<()> {
        let _one = lock(&self.syncing);
        let mut disk = lock(&self.disk);
        disk.file.set_len(0)?;
        if self.durable {
            disk.file.sync_all()?;
        }
        disk.end = 0;
        self.written.store(0, Ordering::Release);
        self.synced.store(0, Ordering::Release);
        self.lines.store(0, Ordering::Release);
        self.checkpointed_lines.store(u64::MAX, Ordering::Release);
        self.failed.store(false, Ordering::Release);
        Ok(())
    }

    /// Whether lines were appended since the last state written.
    pub(crate) fn has_new(&self) -> bool {
        self.lines.load(Ordering::Acquire) != self.checkpointed_lines.load(Ordering::Acquire)
    }

    /// Lines appended in all (taken with the state, the broker held).
    pub(crate) fn lines(&self) -> u64 {
        self.lines.load(Ordering::Acquire)
    }
}

/// The folder a file `path` is in (`.` for a bare name).
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Syncs the folder holding `path`, so a rename into it is durable.
fn sync_folder(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    File::open(folder_of(path))?.sync_all()?;
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Writes `text` to `path` so that a crash leaves the old file or the new one whole: a
/// temporary file beside it, synced, renamed over it, and the folder synced.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = beside(path, ".tmp");
    let mut file = File::create(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)?;
    sync_folder(path)
}

/// A journal line as read: the step (its index, instant and the bytes its line took), or why
/// the line is not one (half-written: no line end; or not a step).
pub(crate) type Line = Result<(usize, Instant, Step, u64), String>;

/// The next journal line from `reader` (read into `buf`); None at the end.
pub(crate) fn read_line(
    reader: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<Line>> {
    buf.clear();
    let n = reader.read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    let Some(line) = buf.strip_suffix(b"\n") else {
        return Ok(Some(Err("is half-written".into())));
    };
    Ok(Some(match parse_line(line) {
        Ok((index, at, step)) => Ok((index, at, step, n as u64)),
        Err(e) => Err(format!("is not a step: {e}")),
    }))
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
