//! `sbp check`: scenarios, lessons and presets run with their expectations; documentation
//! (Markdown, MDX, HTML: files, folders, URLs) read for the playground links and embeds it
//! holds, each run with the expectations it carries. One without any is reported unchecked,
//! and fails with `--require-expectations`.
use crate::documents::{self, Found, Target};
use sbp_scenario::presets::PRESETS;
use sbp_scenario::{Scenario, Simulation};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The largest scenario file or document read: as large as a state of `sbp serve` (a run it
/// recorded carries bodies of up to 256 KB; a link unpacks to at most 4 MB,
/// `sbp_scenario::link::MAX_JSON`).
pub const MAX_FILE: u64 = sbp_server::journal::MAX_STATE_BYTES as u64;
/// A page or lesson fetched for `sbp check URL`: at most this many bytes, this long.
pub const MAX_FETCH_BYTES: u64 = 16 * 1024 * 1024;
pub const FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// All fetching of one `sbp check` run: past it, nothing more is fetched (said).
pub const FETCH_BUDGET: std::time::Duration = std::time::Duration::from_secs(300);
/// Answers kept for a second asking (each at most [`MAX_FETCH_BYTES`]: lessons and pages are
/// small, but the bound holds anyway).
const MAX_FETCHES_KEPT: usize = 64;

/// Reads a scenario file of at most [`MAX_FILE`] bytes (a device that never ends, such as
/// /dev/zero, is refused once it passes that).
pub fn read_limited(file: &str) -> Result<String, String> {
    let f = std::fs::File::open(Path::new(file)).map_err(|e| format!("cannot read {file}: {e}"))?;
    let mut bytes = Vec::new();
    f.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {file}: {e}"))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!(
            "{file} is larger than {} MB; a scenario file is at most that",
            MAX_FILE / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{file} is not UTF-8 text"))
}

pub fn load(file: &str) -> Result<Scenario, String> {
    if let Some(name) = file.strip_prefix("preset:") {
        return match sbp_scenario::presets::preset(name) {
            Some(s) => s.map_err(|e| format!("preset {name}: {e}")),
            None => Err(format!(
                "there is no preset \"{name}\"; `sbp presets` lists them"
            )),
        };
    }
    let text = read_limited(file)?;
    Scenario::from_json(&text).map_err(|e| format!("{file}: {e}"))
}

/// What `sbp check` checks: a scenario, or a lesson (a JSON object with "parts").
pub enum Checkable {
    Scenario(Scenario),
    Lesson(sbp_scenario::lesson::Lesson),
}

/// Reads `file` once and tells a lesson from a scenario; an unreadable one is an error naming
/// the file.
pub fn load_checkable(file: &str) -> Result<Checkable, String> {
    if file.starts_with("preset:") {
        return load(file).map(Checkable::Scenario);
    }
    let text = read_limited(file)?;
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) if v.get("parts").is_some() => sbp_scenario::lesson::Lesson::from_value(&v)
            .map(Checkable::Lesson)
            .map_err(|e| format!("{file}: {e}")),
        // A scenario, or not JSON at all: the scenario reader says where it goes wrong.
        _ => Scenario::from_json(&text)
            .map(Checkable::Scenario)
            .map_err(|e| format!("{file}: {e}")),
    }
}

/// How one checked thing came out.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Verdict {
    Passed,
    /// Ran, with nothing to check.
    Unchecked,
    Failed,
}

/// The tally of a `sbp check`, and how an unchecked one counts.
struct Tally<'o, W: Write> {
    out: &'o mut W,
    passed: usize,
    unchecked: usize,
    failed: usize,
    require_expectations: bool,
    fetcher: Fetcher,
}

impl<W: Write> Tally<'_, W> {
    fn say(
        &mut self,
        verdict: Verdict,
        label: &str,
        detail: &str,
        why: &[String],
    ) -> std::io::Result<()> {
        match verdict {
            Verdict::Passed => {
                self.passed += 1;
                writeln!(self.out, "ok   {label} ({detail})")?;
            }
            Verdict::Unchecked if !self.require_expectations => {
                self.unchecked += 1;
                writeln!(self.out, "unchecked {label} ({detail})")?;
            }
            Verdict::Unchecked => {
                self.failed += 1;
                writeln!(self.out, "FAIL {label} ({detail}; --require-expectations)")?;
            }
            Verdict::Failed => {
                self.failed += 1;
                writeln!(self.out, "FAIL {label}")?;
                for line in why {
                    writeln!(self.out, "  {line}")?;
                }
            }
        }
        Ok(())
    }

    /// Runs `scenario` to its end with its expectations.
    fn scenario(
        &mut self,
        label: &str,
        scenario: Result<Scenario, String>,
        budget: u64,
    ) -> std::io::Result<()> {
        let outcome = scenario.and_then(|s| {
            s.check_run_within(s.end(), budget)
                .and_then(|_| Simulation::new(&s))
                .map_err(|e| e.to_string())
        });
        match outcome {
            Err(message) => self.say(Verdict::Failed, label, "", &[message]),
            Ok(mut sim) => {
                let passed = sim.run_to_end();
                let (events, checks) = (sim.ns().log().len(), sim.scenario().expect.len());
                if !passed {
                    let why: Vec<String> = sim.failures.iter().map(|f| f.to_string()).collect();
                    self.say(Verdict::Failed, label, "", &why)
                } else if checks == 0 {
                    let detail = format!(
                        "{events} events, no expectation: it runs, but nothing is checked; the \
                         embed form's \"Check that...\" adds expectations"
                    );
                    self.say(Verdict::Unchecked, label, &detail, &[])
                } else {
                    self.say(
                        Verdict::Passed,
                        label,
                        &format!(
                            "{events} events, {checks} {}",
                            if checks == 1 { "check" } else { "checks" }
                        ),
                        &[],
                    )
                }
            }
        }
    }

    /// A lesson: its start scenario, each prediction's computed answer, each goal reached by
    /// its solution.
    fn lesson(
        &mut self,
        label: &str,
        lesson: &sbp_scenario::lesson::Lesson,
    ) -> std::io::Result<()> {
        match lesson.check() {
            Ok(answers) => {
                let said: Vec<String> = answers.iter().map(|a| a.value.clone()).collect();
                let detail = format!(
                    "lesson, {} parts; answers: {}",
                    lesson.parts.len(),
                    said.join(", ")
                );
                self.say(Verdict::Passed, label, &detail, &[])
            }
            Err(message) => self.say(Verdict::Failed, label, "", &[message.to_string()]),
        }
    }
}

/// Where a document's relative links lead: its folder on disk, or its URL.
enum Base {
    Folder(PathBuf),
    Url(url::Url),
}

/// `sbp check ARGS`: writes a line per thing checked and the tally; says whether all passed
/// (an unchecked one passes unless `require_expectations`).
pub fn check(
    args: Vec<String>,
    budget: u64,
    require_expectations: bool,
    out: &mut impl Write,
) -> std::io::Result<bool> {
    let args: Vec<String> = if args.is_empty() {
        PRESETS.iter().map(|(n, _)| format!("preset:{n}")).collect()
    } else {
        args
    };
    let mut tally = Tally {
        out,
        passed: 0,
        unchecked: 0,
        failed: 0,
        require_expectations,
        fetcher: Fetcher::new(),
    };
    for arg in &args {
        if arg.starts_with("http://") || arg.starts_with("https://") {
            if arg.contains("#s=") || arg.contains("&s=") {
                check_found(
                    &mut tally,
                    arg,
                    &documents::find(arg, false),
                    &Base::Folder(PathBuf::new()),
                    budget,
                )?;
                continue;
            }
            match url::Url::parse(arg)
                .map_err(|e| e.to_string())
                .and_then(|u| tally.fetcher.get(u.as_str()).map(|t| (u, t)))
            {
                Ok((url, text)) => {
                    let found = documents::find(&text, documents::is_markdown(arg));
                    check_found(&mut tally, arg, &found, &Base::Url(url), budget)?;
                }
                Err(why) => tally.say(Verdict::Failed, arg, "", &[why])?,
            }
        } else if Path::new(arg).is_dir() {
            match documents_under(Path::new(arg)) {
                Ok(Walked {
                    documents,
                    unread,
                    passed_over,
                }) => {
                    for (dir, why) in unread {
                        tally.say(Verdict::Failed, &dir.to_string_lossy(), "", &[why])?;
                    }
                    for dir in passed_over {
                        writeln!(
                            tally.out,
                            "{}: a link to a folder, passed over (name it to check it)",
                            dir.display()
                        )?;
                    }
                    if documents.is_empty() {
                        writeln!(tally.out, "{arg}: no Markdown or HTML document")?;
                    }
                    for file in documents {
                        check_document_file(&mut tally, &file.to_string_lossy(), budget)?;
                    }
                }
                Err(why) => tally.say(Verdict::Failed, arg, "", &[why])?,
            }
        } else if documents::is_document(arg) {
            check_document_file(&mut tally, arg, budget)?;
        } else {
            match load_checkable(arg) {
                Ok(Checkable::Scenario(s)) => tally.scenario(arg, Ok(s), budget)?,
                Ok(Checkable::Lesson(lesson)) => tally.lesson(arg, &lesson)?,
                Err(why) => tally.say(Verdict::Failed, arg, "", &[why])?,
            }
        }
    }
    let Tally {
        passed,
        unchecked,
        failed,
        ..
    } = tally;
    let out = tally.out;
    if unchecked > 0 {
        writeln!(
            out,
            "{passed} passed, {failed} failed, {unchecked} unchecked (no expectation)"
        )?;
    } else {
        writeln!(out, "{passed} passed, {failed} failed")?;
    }
    Ok(failed == 0)
}

fn check_document_file<W: Write>(
    tally: &mut Tally<'_, W>,
    file: &str,
    budget: u64,
) -> std::io::Result<()> {
    match read_limited(file) {
        Ok(text) => {
            let folder = Path::new(file)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            check_found(
                tally,
                file,
                &documents::find(&text, documents::is_markdown(file)),
                &Base::Folder(folder),
                budget,
            )
        }
        Err(why) => tally.say(Verdict::Failed, file, "", &[why]),
    }
}

fn check_found<W: Write>(
    tally: &mut Tally<'_, W>,
    name: &str,
    found: &[Found],
    base: &Base,
    budget: u64,
) -> std::io::Result<()> {
    if found.is_empty() {
        return writeln!(tally.out, "{name}: no playground link");
    }
    for f in found {
        let at = format!("{name}:{}", f.line);
        match &f.target {
            Target::Scenario(link) => match sbp_scenario::link::decode_link(link) {
                Ok(link) => {
                    tally.scenario(&format!("{at} scenario link"), Ok(link.scenario), budget)?
                }
                Err(e) => tally.say(
                    Verdict::Failed,
                    &format!("{at} playground link"),
                    "",
                    &[format!("its scenario cannot be read: {e}")],
                )?,
            },
            Target::Preset(preset) => tally.scenario(
                &format!("{at} preset {preset}"),
                load(&format!("preset:{preset}")),
                budget,
            )?,
            Target::Lesson { id, page } => {
                let label = format!("{at} lesson {id}");
                match lesson_text(base, page, id, &mut tally.fetcher) {
                    Ok(Some((text, read))) => {
                        let lesson = serde_json::from_str::<serde_json::Value>(&text)
                            .map_err(|e| e.to_string())
                            .and_then(|v| {
                                sbp_scenario::lesson::Lesson::from_value(&v)
                                    .map_err(|e| e.to_string())
                            });
                        match lesson {
                            Ok(lesson) => tally.lesson(&format!("{label} ({read})"), &lesson)?,
                            Err(why) => tally.say(Verdict::Failed, &label, "", &[why])?,
                        }
                    }
                    Ok(None) => tally.say(
                        Verdict::Unchecked,
                        &label,
                        &format!(
                            "its file lessons/{id}.json is not beside the page here, and this \
                             sbp carries no site (a packaged one does); `sbp check LESSON.json` \
                             checks a lesson file"
                        ),
                        &[],
                    )?,
                    Err(why) => tally.say(Verdict::Failed, &label, "", &[why])?,
                }
            }
            Target::Broken(why) => tally.say(
                Verdict::Failed,
                &format!("{at} playground link"),
                "",
                std::slice::from_ref(why),
            )?,
        }
    }
    Ok(())
}

/// The lesson `id`'s file: beside `page` on disk, else in the site this `sbp` carries (a
/// packaged one: the lessons of its own version), else fetched beside a page on the web;
/// with where it was read (for the report). None when none of these holds it.
fn lesson_text(
    base: &Base,
    page: &str,
    id: &str,
    fetcher: &mut Fetcher,
) -> Result<Option<(String, &'static str)>, String> {
    let file = documents::lesson_file(page, id)
        .ok_or_else(|| format!("\"{id}\" is not a lesson's id (letters, digits and hyphens)"))?;
    let on_the_web = file.starts_with("http://") || file.starts_with("https://");
    if let (Base::Folder(folder), false) = (base, on_the_web) {
        let path = folder.join(file.trim_start_matches('/'));
        if path.is_file() {
            return read_limited(&path.to_string_lossy()).map(|t| Some((t, "beside the page")));
        }
    }
    if let Some(text) = crate::built_in::lesson(id) {
        return Ok(Some((text, "as this sbp carries it")));
    }
    if crate::built_in::has_site() && !on_the_web && matches!(base, Base::Folder(_)) {
        return Err(format!(
            "there is no lesson \"{id}\" beside the page nor in this sbp's site"
        ));
    }
    let url = match (base, on_the_web) {
        (_, true) => url::Url::parse(&file).map_err(|e| format!("{file}: {e}"))?,
        (Base::Url(page), false) => page.join(&file).map_err(|e| format!("{file}: {e}"))?,
        (Base::Folder(_), false) => return Ok(None),
    };
    // A page fetched names lessons on its own site only: it does not send this check to
    // other hosts.
    if let Base::Url(page) = base {
        if url.origin() != page.origin() {
            return Err(format!(
                "its lesson file {url} is on another site than the page; it is not fetched"
            ));
        }
    }
    fetcher.get(url.as_str()).map(|t| Some((t, "fetched")))
}

/// What a folder holds for `sbp check`.
struct Walked {
    /// The Markdown and HTML documents, in order (a link to a file followed).
    documents: Vec<PathBuf>,
    /// Folders that could not be read, and why (the rest is read all the same).
    unread: Vec<(PathBuf, String)>,
    /// Links to folders, not followed (a link may lead back up: no loop is walked).
    passed_over: Vec<PathBuf>,
}

/// The Markdown and HTML documents under `folder` (not in hidden folders, node_modules or a
/// copy of the playground's site); at most [`documents::MAX_DOCUMENTS`].
fn documents_under(folder: &Path) -> Result<Walked, String> {
    let mut walked = Walked {
        documents: Vec::new(),
        unread: Vec::new(),
        passed_over: Vec::new(),
    };
    let mut todo = vec![folder.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if dir == folder => return Err(format!("cannot read {}: {e}", dir.display())),
            Err(e) => {
                let why = format!("cannot read this folder: {e}");
                walked.unread.push((dir, why));
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            // A link is followed to a file, never to a folder.
            let (is_dir, is_file) = if kind.is_symlink() {
                match std::fs::metadata(&path) {
                    Ok(m) if m.is_dir() => {
                        walked.passed_over.push(path);
                        continue;
                    }
                    Ok(m) => (false, m.is_file()),
                    Err(_) => continue,
                }
            } else {
                (kind.is_dir(), kind.is_file())
            };
            if is_dir {
                // The playground's own site copied into the docs: its pages are not the docs'.
                let playground = ["element.js", "embed.js", "lessons/index.json"]
                    .iter()
                    .all(|f| path.join(f).is_file());
                if !name.starts_with('.') && name != "node_modules" && !playground {
                    todo.push(path);
                }
            } else if is_file && documents::is_document(&name) {
                walked.documents.push(path);
                if walked.documents.len() > documents::MAX_DOCUMENTS {
                    return Err(format!(
                        "{} holds more than {} documents; name a smaller folder",
                        folder.display(),
                        documents::MAX_DOCUMENTS
                    ));
                }
            }
        }
    }
    walked.documents.sort();
    walked.passed_over.sort();
    Ok(walked)
}

/// Pages and lessons fetched over http(s), each once, all within [`FETCH_BUDGET`] for the run.
struct Fetcher {
    fetched: std::collections::HashMap<String, Result<String, String>>,
    deadline: std::time::Instant,
}

impl Fetcher {
    fn new() -> Fetcher {
        Fetcher {
            fetched: Default::default(),
            deadline: std::time::Instant::now() + FETCH_BUDGET,
        }
    }

    /// The text at `url`: at most [`MAX_FETCH_BYTES`], within [`FETCH_TIMEOUT`] and what is left
    /// of the run's [`FETCH_BUDGET`]; the same answer for the same address.
    fn get(&mut self, url: &str) -> Result<String, String> {
        if let Some(answer) = self.fetched.get(url) {
            return answer.clone();
        }
        let left = self
            .deadline
            .saturating_duration_since(std::time::Instant::now());
        let answer = if left.is_zero() {
            Err(format!(
                "not fetched: this run's {} s for fetching are spent ({url})",
                FETCH_BUDGET.as_secs()
            ))
        } else {
            fetch(url, left.min(FETCH_TIMEOUT))
        };
        if self.fetched.len() < MAX_FETCHES_KEPT {
            self.fetched.insert(url.to_string(), answer.clone());
        }
        answer
    }
}

/// One page's text over http(s): at most [`MAX_FETCH_BYTES`], within `timeout`.
fn fetch(url: &str, timeout: std::time::Duration) -> Result<String, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .build()
        .into();
    let mut answer = agent
        .get(url)
        .call()
        .map_err(|e| format!("cannot fetch {url}: {e}"))?;
    answer
        .body_mut()
        .with_config()
        .limit(MAX_FETCH_BYTES)
        .read_to_string()
        .map_err(|e| {
            format!(
                "cannot read {url} (at most {} MB of text): {e}",
                MAX_FETCH_BYTES / (1024 * 1024)
            )
        })
}
