//! `sbp`: run Service Bus Playground scenario files headless.
mod built_in;
mod check;
mod documents;
mod fuzz;
mod fuzz_amqp;

use check::{load, read_limited};
use clap::{Parser, Subcommand};
use sbp_engine::time::{format_duration, format_instant, parse_duration};
use sbp_scenario::link::{decode_link, encode_link, Link};
use sbp_scenario::presets::PRESETS;
use sbp_scenario::{Scenario, Simulation};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sbp",
    version,
    about = "Service Bus Playground: run scenario files over the broker engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

// Parsed once per process: the size of `serve`'s options costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario and print its event log.
    Run {
        /// A scenario file, or `preset:<name>`.
        file: String,
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
        /// Run until this instant (e.g. "10m") instead of the last step or expectation.
        #[arg(long)]
        until: Option<String>,
        /// The work this run may take (operations, estimated before it runs): default 500000,
        /// at most 100000000.
        #[arg(long)]
        budget: Option<u64>,
    },
    /// Run a scenario to an instant and print the state there as JSON: each entity's counts and
    /// messages (status, holder, DeliveryCount, LockedUntil) and what each receiver holds, as
    /// the engine has them (the browser tests compare the page's drawing with it).
    State {
        /// A scenario file, or `preset:<name>`.
        file: String,
        /// The instant (e.g. "90s", "1500ms").
        #[arg(long)]
        at: String,
        /// The work this run may take: default 500000, at most 100000000.
        #[arg(long)]
        budget: Option<u64>,
    },
    /// Run scenarios and check their expectations; exits 1 if any fails.
    ///
    /// Documentation too: Markdown, MDX and HTML files, folders of them and http(s) URLs are
    /// read for playground links and embeds (share links, `?preset=`, `?lesson=`, iframes,
    /// `<service-bus-playground>`), and each is run with the expectations it carries. One
    /// without any is reported unchecked.
    Check {
        /// Scenario or lesson files, `preset:<name>`, documents, folders or URLs; with none,
        /// every preset.
        files: Vec<String>,
        /// The work each scenario's run may take: default 500000, at most 100000000.
        #[arg(long)]
        budget: Option<u64>,
        /// A scenario or link with no expectation fails instead of being reported unchecked.
        #[arg(long)]
        require_expectations: bool,
    },
    /// Print the share-link fragment of a scenario.
    Encode {
        file: String,
        /// Open the link at this instant (e.g. "1m").
        #[arg(long)]
        at: Option<String>,
        /// Open the link at this speed (1..100000).
        #[arg(long)]
        speed: Option<u32>,
    },
    /// Print the scenario a share link (a URL or its fragment) holds.
    Decode { link: String },
    /// The send lab (SEND-01..04): the same batch sent by each strategy, with its total time.
    SendLab {
        #[arg(long, default_value_t = 100)]
        count: u32,
        /// Round trip, e.g. "70ms".
        #[arg(long, default_value = "70ms")]
        rtt: String,
        /// The broker's store time, e.g. "10ms".
        #[arg(long, default_value = "10ms")]
        store: String,
        /// The semaphore's size for the bounded strategy.
        #[arg(long, default_value_t = 10)]
        semaphore: u32,
        /// Every Nth send meets ServerBusy (retried once after 800 ms); 0 = never.
        #[arg(long, default_value_t = 0)]
        server_busy_every: u32,
        /// Every Nth send meets QuotaExceeded; 0 = never.
        #[arg(long, default_value_t = 0)]
        quota_exceeded_every: u32,
        /// Print every send's timeline as JSON lines.
        #[arg(long)]
        json: bool,
    },
    /// Open and run mutated and random links and scenario files; report panics, and each
    /// input's time and peak memory against the budget (1 s, 256 MB). Exits 1 on any panic or
    /// input over budget.
    Fuzz {
        #[arg(long, default_value_t = 100_000)]
        inputs: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Fuzz `sbp serve`'s AMQP protocol core instead: sequences of frames built with their
        /// structure in mind, and mutated ones, fed in process.
        #[arg(long)]
        amqp: bool,
    },
    /// Print the rule list (ids, summaries and the playground's choices) as JSON.
    Rules,
    /// Read a Service Bus emulator Config.json and print the scenario that runs it (profile
    /// Emulator); what the playground does not model is listed on stderr.
    Import { config: String },
    /// Print a scenario's entities as an emulator Config.json; where the emulator's schema
    /// differs (limits, properties it lacks) is listed on stderr.
    Export { file: String },
    /// Print a scenario as SDK code: C# (Azure.Messaging.ServiceBus), Python (azure-servicebus)
    /// or JavaScript (@azure/service-bus).
    Code {
        /// cs, py or js.
        #[arg(long, default_value = "cs")]
        lang: String,
        /// A scenario file, or `preset:<name>`.
        file: String,
    },
    /// List the presets, or write them as files into a folder.
    Presets {
        /// Write each preset as NAME.json into this folder (made when missing), instead of
        /// listing them.
        #[arg(long, value_name = "FOLDER")]
        write: Option<PathBuf>,
    },
    /// Serve an AMQP endpoint that the Service Bus SDKs connect to with the emulator's
    /// connection string, over the playground's engine; each operation is printed, and the run
    /// can be recorded as a scenario.
    Serve {
        /// A scenario file, `preset:<name>` or an emulator Config.json: its entities are
        /// created. Without it: a queue `orders` and a topic `events` with a subscription
        /// `audit` ($Default rule).
        file: Option<String>,
        /// The AMQP address (any other than loopback only when asked: there is no
        /// authentication).
        #[arg(long, default_value = "127.0.0.1:5672")]
        amqp: String,
        /// Where the playground's UI (the built `dist/`) is served; `none` serves no UI.
        #[arg(long, default_value = "127.0.0.1:8080")]
        http: String,
        /// A name (besides localhost, 127.x.x.x, [::1] and the --http address) that the UI is
        /// reached by, as the browser's Host says it; repeat for more. Any other Host is
        /// refused: a page of another site could otherwise read the run.
        #[arg(long = "allow-host", value_name = "NAME")]
        allow_host: Vec<String>,
        /// The built UI's folder (`./scripts/build-ui.sh` makes `dist/`). Without it: the UI
        /// built into this `sbp` when it has one (a packaged `sbp`), else `dist`.
        #[arg(long)]
        dist: Option<PathBuf>,
        /// On Ctrl+C or SIGTERM, write the recorded run here (a scenario `sbp run` replays).
        #[arg(long)]
        record: Option<PathBuf>,
        /// Keep the broker's state here: taken up on start (a file that does not hold together
        /// is refused with the reason). Each operation is appended to FILE.journal before it is
        /// answered, and the state is written whole every 5 s and on stop, so a restart (even
        /// after kill -9) loses no message whose send was accepted.
        #[arg(long)]
        state: Option<PathBuf>,
        /// Serve the file's namespace (tier, settings) without its entities: a program that
        /// creates its own through the management API (`sbp code`'s, with
        /// SERVICEBUS_ADMIN_CONNECTION) starts from an empty namespace.
        #[arg(long = "no-entities", conflicts_with = "play")]
        no_entities: bool,
        /// Stop, as on Ctrl+C, when the standard input closes: a test harness that started this
        /// server gives it a pipe, so the server ends with the harness however that ends (kill
        /// -9 included).
        #[arg(long = "stop-with-stdin")]
        stop_with_stdin: bool,
        /// Run the scenario first to its end (its last step or expectation, as `sbp run`), then
        /// serve from there.
        #[arg(long)]
        play: bool,
        /// Print nothing per operation.
        #[arg(long)]
        quiet: bool,
        /// Serve the management API (what ServiceBusAdministrationClient speaks) over plain
        /// HTTP on ADDR, as the .NET client addresses the emulator (port 0: a free one).
        #[arg(long, value_name = "ADDR")]
        admin: Option<String>,
        /// Serve the management API over TLS on ADDR: the Python and JavaScript clients always
        /// use https. The certificate is --tls-cert's.
        #[arg(long = "admin-tls", value_name = "ADDR", requires = "tls_cert")]
        admin_tls: Option<String>,
        /// The localhost certificate of --admin-tls (PEM; its key in FILE.key): made on the
        /// first start, kept after. Trust it in the tests (docs/SERVE.md).
        #[arg(long = "tls-cert", value_name = "FILE")]
        tls_cert: Option<PathBuf>,
        /// Once every listener accepts, write FILE (JSON): the addresses (port 0 picks a free
        /// one), the connection strings and the URLs; a test harness waits for it.
        #[arg(long = "ready-file", value_name = "FILE")]
        ready_file: Option<PathBuf>,
        /// Run the broker's clock N times as fast as the wall clock (1 to 1000): a lock, a
        /// TTL or a scheduled message comes N times sooner. Times the SDKs see stay on the wall
        /// clock. The code `sbp code` writes keeps pace with SBP_SPEED=N.
        #[arg(long, default_value_t = 1)]
        speed: i64,
    },
}

/// Counts allocations, so `sbp fuzz` can measure each input's peak memory.
#[global_allocator]
static ALLOCATOR: fuzz::Counting = fuzz::Counting;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        // `sbp run x.json | head`: the reader has gone; stop quietly.
        Err(Failure::Closed) => ExitCode::SUCCESS,
        Err(Failure::Message(message)) => {
            let message = sbp_engine::error::clip(message, sbp_engine::error::MAX_MESSAGE);
            let _ = writeln!(std::io::stderr(), "error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Why a command stopped.
enum Failure {
    /// Standard output was closed (a broken pipe).
    Closed,
    Message(String),
}

impl From<&str> for Failure {
    fn from(m: &str) -> Failure {
        Failure::Message(m.into())
    }
}

impl From<String> for Failure {
    fn from(m: String) -> Failure {
        Failure::Message(m)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::Closed
        } else {
            Failure::Message(format!("cannot write the output: {e}"))
        }
    }
}

/// Says each warning on stderr.
fn warn(warnings: &[sbp_scenario::Text]) {
    for w in warnings {
        let _ = writeln!(std::io::stderr(), "warning: {w}");
    }
}

/// The state of `sim` now, as `sbp state` prints it.
fn state_json(sim: &Simulation) -> serde_json::Value {
    use sbp_engine::{CardStatus, PlaceKind, QueueRef};
    let now = sim.now();
    let messages = |entity: &sbp_engine::Entity, dlq: bool| -> Vec<serde_json::Value> {
        let q = QueueRef {
            entity: entity.id,
            dlq,
        };
        entity
            .store(dlq)
            .messages
            .values()
            .map(|m| {
                let card = sim.ns().card(q, m);
                let holder = match &card.status {
                    CardStatus::Locked { holder } => Some(holder.clone()),
                    _ => None,
                };
                serde_json::json!({
                    "seq": m.sequence_number,
                    "status": card.status.class(),
                    "holder": holder,
                    "delivery_count": card.delivery_count,
                    "locked_until": card.locked_until,
                })
            })
            .collect()
    };
    let entities: Vec<serde_json::Value> = sim
        .ns()
        .entities()
        .map(|e| {
            serde_json::json!({
                "path": e.path,
                "counts": e.counts(now),
                "messages": messages(e, false),
                "dlq": messages(e, true),
            })
        })
        .collect();
    let holders: Vec<serde_json::Value> = sim
        .ns()
        .map()
        .places
        .iter()
        .filter(|p| matches!(p.kind, PlaceKind::Receiver | PlaceKind::Consumers))
        .map(|p| serde_json::json!({ "name": p.label, "holds": p.depth }))
        .collect();
    serde_json::json!({ "at_ms": now, "entities": entities, "receivers": holders })
}

/// The work budget of a run: the default, or `--budget` within its bound (said on stderr when
/// raised, so a log shows it).
fn run_budget(asked: Option<u64>) -> Result<u64, Failure> {
    use sbp_engine::limits::{MAX_CLI_RUN_WORK, MAX_RUN_WORK};
    match asked {
        None => Ok(MAX_RUN_WORK),
        Some(n) if (1..=MAX_CLI_RUN_WORK).contains(&n) => {
            eprintln!("budget: {n} operations (default {MAX_RUN_WORK})");
            Ok(n)
        }
        Some(n) => Err(format!("--budget {n}: from 1 to {MAX_CLI_RUN_WORK}").into()),
    }
}

fn run(command: Cmd) -> Result<ExitCode, Failure> {
    let mut out = std::io::stdout().lock();
    match command {
        Cmd::Run {
            file,
            json,
            until,
            budget,
        } => {
            let budget = run_budget(budget)?;
            let scenario = load(&file)?;
            let mut sim = Simulation::new(&scenario).map_err(|e| format!("{file}: {e}"))?;
            let end = match until {
                Some(text) => parse_duration(&text).map_err(|e| format!("--until: {e}"))?,
                None => sim.end(),
            };
            scenario
                .check_run_within(end, budget)
                .map_err(|e| format!("{file}: {e}"))?;
            sim.advance_to(end);
            print_log(&mut out, &sim, json)?;
            if !json {
                for f in &sim.failures {
                    writeln!(out, "FAILED {f}")?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::State { file, at, budget } => {
            let budget = run_budget(budget)?;
            let scenario = load(&file)?;
            let mut sim = Simulation::new(&scenario).map_err(|e| format!("{file}: {e}"))?;
            let at = parse_duration(&at).map_err(|e| format!("--at: {e}"))?;
            scenario
                .check_run_within(at, budget)
                .map_err(|e| format!("{file}: {e}"))?;
            sim.advance_to(at);
            writeln!(out, "{}", state_json(&sim))?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Check {
            files,
            budget,
            require_expectations,
        } => {
            let budget = run_budget(budget)?;
            let all_passed = check::check(files, budget, require_expectations, &mut out)?;
            Ok(if all_passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Cmd::Encode { file, at, speed } => {
            let scenario = load(&file)?;
            let at = at
                .map(|t| parse_duration(&t))
                .transpose()
                .map_err(|e| format!("--at: {e}"))?;
            if let Some(x) = speed.filter(|x| !(1..=100_000).contains(x)) {
                return Err(format!("--speed {x} is not between 1 and 100000").into());
            }
            // A link at an instant carries the state there (a checkpoint), so it opens at once
            // however far it is: the scenario is run to it here, as `run --until` would.
            let link = match at {
                Some(at) => {
                    scenario
                        .check_run_to(at)
                        .map_err(|e| format!("{file}: {e}"))?;
                    let mut sim = Simulation::new(&scenario).map_err(|e| format!("{file}: {e}"))?;
                    sim.advance_to(at);
                    sbp_scenario::link::link_to(&mut sim, speed)
                }
                None => Link {
                    scenario,
                    at,
                    speed,
                    checkpoint: None,
                },
            };
            writeln!(out, "{}", encode_link(&link))?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Decode { link } => {
            let link = decode_link(&link).map_err(|e| e.to_string())?;
            writeln!(out, "{}", link.scenario.to_json_pretty())?;
            if let Some(at) = link.at {
                eprintln!("opens at {}", format_instant(at));
            }
            if let Some(bytes) = &link.checkpoint {
                match link
                    .open(None)
                    .map_err(|e| e.to_string())?
                    .checkpoint_refused
                {
                    None => eprintln!("with the state there ({} bytes)", bytes.len()),
                    Some(why) => eprintln!("with a state that is not taken up: {why}"),
                }
            }
            if let Some(x) = link.speed {
                eprintln!("at speed x{x}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::SendLab {
            count,
            rtt,
            store,
            semaphore,
            server_busy_every,
            quota_exceeded_every,
            json,
        } => {
            use sbp_engine::send_lab::{run as lab, Injected, SendLabSpec, SendStrategy};
            let rtt = parse_duration(&rtt).map_err(|e| format!("--rtt: {e}"))?;
            let store = parse_duration(&store).map_err(|e| format!("--store: {e}"))?;
            if count == 0 || count > 100_000 || semaphore == 0 {
                return Err("--count must be 1..100000 and --semaphore at least 1".into());
            }
            let injected = Injected {
                server_busy_every,
                quota_exceeded_every,
                ..Injected::default()
            };
            writeln!(
                out,
                "{count} sends, round trip {}, store {}",
                format_duration(rtt),
                format_duration(store)
            )?;
            for strategy in [
                SendStrategy::AwaitEach,
                SendStrategy::StartAllThenAwait,
                SendStrategy::Semaphore(semaphore),
                SendStrategy::FireAndForget,
            ] {
                let r = lab(&SendLabSpec {
                    count,
                    rtt,
                    store,
                    strategy,
                    injected: injected.clone(),
                    retry_delay: 800,
                    seed: 1,
                });
                if json {
                    for t in &r.traces {
                        writeln!(
                            out,
                            "{}",
                            serde_json::json!({ "strategy": format!("{strategy:?}"), "trace": t })
                        )?;
                    }
                }
                writeln!(out,
                    "{:<22} caller waits {:>9}  all settled at {:>9}  max in flight {:>5}  failures seen {:>3}, unseen {:>3}",
                    format!("{strategy:?}"),
                    format_duration(r.caller_done),
                    format_duration(r.all_settled),
                    r.max_in_flight,
                    r.observed_failures,
                    r.unobserved_failures
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Fuzz {
            inputs,
            seed,
            amqp: true,
        } => {
            let show = |r: &fuzz_amqp::Report| {
                format!(
                    "{} inputs ({} frames, {} broker operations) in {:.1} s: {} closed, {} panics, {} undecodable frames said, {} with bytes left held, {} recordings that replay otherwise, {} over budget; slowest {:.1} ms, largest peak {:.1} MB",
                    r.inputs,
                    r.frames,
                    r.steps,
                    r.total_s,
                    r.closed,
                    r.panics,
                    r.bad_output,
                    r.leaks,
                    r.diverged,
                    r.over_budget,
                    r.slowest_ms,
                    r.peak_bytes as f64 / (1024.0 * 1024.0)
                )
            };
            let report = fuzz_amqp::run(inputs, seed, |r| eprintln!("{}", show(r)))?;
            writeln!(out, "{}", show(&report))?;
            writeln!(out, "why the server closed connections (most often first):")?;
            for (why, n) in report.top_reasons(8) {
                writeln!(out, "  {n:>8}  {why}")?;
            }
            let passed = u64::from(!report.failed());
            writeln!(out, "fuzz --amqp: {passed} passed, {} failed", 1 - passed)?;
            Ok(if passed == 1 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Cmd::Fuzz { inputs, seed, .. } => {
            let show = |r: &fuzz::Report| {
                format!(
                    "{} inputs in {:.1} s: {} opened, {} refused, {} panics, {} over budget; slowest {:.1} ms, largest peak {:.1} MB",
                    r.inputs,
                    r.total_s,
                    r.opened,
                    r.refused,
                    r.panics,
                    r.over_budget,
                    r.slowest_ms,
                    r.peak_bytes as f64 / (1024.0 * 1024.0)
                )
            };
            let report = fuzz::run(inputs, seed, |r| eprintln!("{}", show(r)));
            writeln!(out, "{}", show(&report))?;
            writeln!(out, "slowest: {}", report.slowest)?;
            writeln!(out, "largest: {}", report.largest)?;
            let passed = u64::from(report.panics == 0 && report.over_budget == 0);
            writeln!(out, "fuzz: {passed} passed, {} failed", 1 - passed)?;
            Ok(if passed == 1 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Cmd::Rules => {
            write!(out, "{}", sbp_scenario::rules_data::rules_json())?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Import { config } => {
            let text = read_limited(&config)?;
            let imported =
                sbp_scenario::emulator::import(&text).map_err(|e| format!("{config}: {e}"))?;
            warn(&imported.warnings);
            writeln!(out, "{}", imported.scenario.to_json_pretty())?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Code { lang, file } => {
            let Some(lang) = sbp_scenario::code::Lang::from_name(&lang) else {
                return Err(format!("--lang {lang}: write cs, py or js").into());
            };
            let scenario = load(&file)?;
            let code = sbp_scenario::code::generate(&scenario, lang)
                .map_err(|e| format!("{file}: {e}"))?;
            write!(out, "{code}")?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Export { file } => {
            let scenario = load(&file)?;
            let exported =
                sbp_scenario::emulator::export(&scenario).map_err(|e| format!("{file}: {e}"))?;
            warn(&exported.warnings);
            let json = serde_json::to_string_pretty(&exported.config).unwrap_or_default();
            writeln!(out, "{json}")?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Serve {
            file,
            amqp,
            http,
            allow_host,
            dist,
            record,
            state,
            play,
            quiet,
            speed,
            ready_file,
            admin,
            admin_tls,
            tls_cert,
            no_entities,
            stop_with_stdin,
        } => {
            // Connections print from other threads: the standard output is not held here.
            drop(out);
            if tls_cert.is_some() && admin_tls.is_none() {
                let _ = writeln!(
                    std::io::stderr(),
                    "warning: --tls-cert is the certificate of --admin-tls; without it none is made"
                );
            }
            let ui = (http != "none").then_some((http, dist));
            serve(
                file,
                &amqp,
                ui,
                Serving {
                    record,
                    state,
                    play,
                    quiet,
                    speed,
                    allow_host,
                    ready_file,
                    admin,
                    admin_tls: admin_tls.zip(tls_cert),
                    no_entities,
                    stop_with_stdin,
                },
            )
        }
        Cmd::Presets { write } => {
            for (name, json) in PRESETS {
                let title = Scenario::from_json(json)
                    .map(|s| s.name)
                    .unwrap_or_default();
                match &write {
                    Some(dir) => {
                        std::fs::create_dir_all(dir)
                            .map_err(|e| format!("{}: {e}", dir.display()))?;
                        let path = dir.join(format!("{name}.json"));
                        std::fs::write(&path, json)
                            .map_err(|e| format!("{}: {e}", path.display()))?;
                        writeln!(out, "wrote {}", path.display())?;
                    }
                    None => writeln!(out, "{name:32} {title}")?,
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_log(out: &mut impl Write, sim: &Simulation, json: bool) -> std::io::Result<()> {
    let ns = &sim.ns();
    let words = sbp_engine::text::english();
    if !json {
        writeln!(
            out,
            "{:<10} {:<24} {:<34} {:>5}  {:<18} {:<8} WHAT",
            "TIME", "UTC", "ENTITY", "SEQ", "EVENT", "RULE"
        )?;
    }
    for e in ns.log() {
        let path = ns.event_path(e);
        let rule = e.rule.map(|r| r.id()).unwrap_or("-");
        let text = sbp_scenario::words::event_text(words, ns, e);
        if json {
            let line = serde_json::json!({
                "at_ms": e.at,
                "utc": sim.utc(e.at),
                "entity": path,
                "seq": (e.seq > 0).then_some(e.seq),
                "kind": e.kind.name(),
                "rule": e.rule.map(|r| r.id()),
                "text": text,
                "detail": e.kind,
            });
            writeln!(out, "{line}")?;
        } else {
            let seq = if e.seq > 0 {
                format!("#{}", e.seq)
            } else {
                String::new()
            };
            writeln!(
                out,
                "{:<10} {:<24} {:<34} {:>5}  {:<18} {:<8} {}",
                format_instant(e.at).trim_start_matches("t="),
                sim.utc(e.at),
                path,
                seq,
                e.kind.name(),
                rule,
                text
            )?;
        }
    }
    Ok(())
}

/// A line on the standard output that never panics: `sbp serve ... | head` goes on serving
/// when its reader has gone.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// As [`say!`], on the standard error.
macro_rules! said {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// An address of a listener: `127.0.0.1:5672`, `[::1]:5672` or a name such as
/// `localhost:5672` (its first address); the error names the option.
fn listen_address(option: &str, text: &str, example: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    text.to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| format!("{option} {text}: give an address such as {example}"))
}

/// The entities `sbp serve` starts with when given no file.
const SERVE_DEFAULT: &str = r#"{"version": 1, "name": "sbp serve",
  "entities": [{"queue": "orders"}, {"topic": "events"}, {"subscription": "events/subscriptions/audit"}]}"#;

/// `sbp serve`: the scenario's (or a Config.json's) entities behind an AMQP endpoint.
/// How `sbp serve` runs (its options beyond what it serves and where).
struct Serving {
    record: Option<PathBuf>,
    state: Option<PathBuf>,
    play: bool,
    quiet: bool,
    speed: i64,
    allow_host: Vec<String>,
    ready_file: Option<PathBuf>,
    /// The management API's plain address, and its TLS address with the certificate's file.
    admin: Option<String>,
    admin_tls: Option<(String, PathBuf)>,
    no_entities: bool,
    stop_with_stdin: bool,
}

fn serve(
    file: Option<String>,
    amqp: &str,
    ui: Option<(String, Option<PathBuf>)>,
    serving: Serving,
) -> Result<ExitCode, Failure> {
    let Serving {
        record,
        state,
        play,
        quiet,
        speed,
        allow_host,
        ready_file,
        admin,
        admin_tls,
        no_entities,
        stop_with_stdin,
    } = serving;
    let admin = admin
        .map(|a| listen_address("--admin", &a, "127.0.0.1:5300"))
        .transpose()?;
    let admin_tls = match admin_tls {
        Some((a, cert)) => {
            let addr = listen_address("--admin-tls", &a, "127.0.0.1:5301")?;
            let (acceptor, made) =
                sbp_server::tls::acceptor(&cert).map_err(|e| format!("--tls-cert: {e}"))?;
            if made {
                say!(
                    "made a localhost certificate: {} (its key: {})",
                    cert.display(),
                    sbp_server::tls::key_path(&cert).display()
                );
            }
            Some((addr, acceptor, cert))
        }
        None => None,
    };
    let addr = listen_address("--amqp", amqp, "127.0.0.1:5672")?;
    // A ready file's folder is there before anything starts (else the harness waits for ever).
    if let Some(path) = &ready_file {
        let folder = sbp_server::journal::folder_of(path);
        if !folder.is_dir() {
            return Err(format!(
                "--ready-file {}: the folder {} is not there",
                path.display(),
                folder.display()
            )
            .into());
        }
    }
    let ui = match ui {
        Some((http, dist)) => Some((
            listen_address("--http", &http, "127.0.0.1:8080, or none")?,
            match (dist, built_in::ui()) {
                (Some(dist), _) => sbp_server::site::Site::Folder(dist),
                (None, Some(files)) => sbp_server::site::Site::Memory(std::sync::Arc::new(files)),
                (None, None) => sbp_server::site::Site::Folder(PathBuf::from("dist")),
            },
        )),
        None => None,
    };
    let scenario = match &file {
        None => Scenario::from_json(SERVE_DEFAULT).map_err(|e| e.to_string())?,
        Some(f) if f.ends_with(".json") && !f.starts_with("preset:") => {
            let text = read_limited(f)?;
            if text.contains("\"UserConfig\"") {
                let imported =
                    sbp_scenario::emulator::import(&text).map_err(|e| format!("{f}: {e}"))?;
                warn(&imported.warnings);
                imported.scenario
            } else {
                Scenario::from_json(&text).map_err(|e| format!("{f}: {e}"))?
            }
        }
        Some(f) => load(f)?,
    };
    let mut entities_only = scenario.clone();
    entities_only.expect.clear();
    if no_entities {
        entities_only.entities.clear();
    }
    if !play {
        entities_only.timeline.clear();
    }
    // --play: the scenario runs first to its end (its last step or expectation, as `sbp run`),
    // and the wall clock goes on from there.
    let played = if play { scenario.end() } else { 0 };
    if play {
        entities_only
            .check_run_within(played, sbp_engine::limits::MAX_RUN_WORK)
            .map_err(|e| format!("--play: {e}"))?;
    }
    let now_ms = sbp_server::broker::unix_now();
    // A fresh broker over the file's entities, its run starting at `start` Unix ms: what the
    // server starts with (without a state to take up) and what `POST /reset` goes back to.
    let fresh = move |start: i64, generation: u64| {
        let mut scenario = entities_only.clone();
        // A reset's run has a seed of its own, so its lock tokens are not the last run's (a
        // message a client kept from before the reset settles nothing after it). With --play
        // the file's seed stays: the timeline must play as `sbp run` plays it.
        if !play {
            scenario.seed = scenario
                .seed
                .wrapping_add(generation.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        }
        let mut b = sbp_server::broker::Broker::new(scenario, start - played)?;
        if play {
            b.sim.advance_to(played);
        }
        Ok::<_, String>(b)
    };
    let first = || {
        let b = fresh(now_ms, 0)?;
        if play {
            say!("played the timeline to {}", format_instant(played));
        }
        Ok::<_, String>(b)
    };
    // --state: the state file, then its journal's steps replayed (sbp_server::journal).
    let mut broker = match &state {
        Some(path) => {
            let taken_up = sbp_server::state::take_up(path, first)?;
            for note in &taken_up.notes {
                say!("{note}");
            }
            for warning in &taken_up.warnings {
                said!("warning: {warning}");
            }
            taken_up.broker
        }
        None => {
            // Without --state the run's steps are kept in a temporary file as they are
            // recorded (not in memory), removed when the server stops.
            let mut broker = first()?;
            let journal = sbp_server::journal::Journal::temporary()
                .map_err(|e| format!("cannot make the run's temporary file: {e}"))?;
            broker.record_in(std::sync::Arc::new(journal));
            broker
        }
    };
    broker.verbose = !quiet;
    broker.set_speed(speed)?;
    if speed != 1 {
        say!("clock: {speed} times as fast as the wall clock (--speed)");
    }
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start: {e}"))?;
    runtime.block_on(async move {
        let mut shared = sbp_server::Shared::new(broker);
        shared.fresh = Some(Box::new(fresh));
        shared.state = state.clone();
        let server = sbp_server::Server::bind_shared(addr, shared)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        if !server.addr.ip().is_loopback() {
            said!(
                "warning: {} is reachable from other machines and there is no authentication",
                server.addr
            );
        }
        let names: Vec<String> = {
            let b = server
                .shared
                .broker
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            b.sim.ns().entities().map(|e| e.path.clone()).collect()
        };
        let listeners = std::sync::Arc::new(std::sync::OnceLock::new());
        let mut ready = sbp_server::control::Listeners {
            amqp: server.addr.to_string(),
            ..Default::default()
        };
        let mut urls = None;
        if let Some((http, site)) = ui {
            let built = site.is_built();
            let where_from = site.describe();
            let ui = sbp_server::serve_http(
                http,
                Some(site),
                server.shared.clone(),
                &allow_host,
                listeners.clone(),
            )
            .await
            .map_err(|e| format!("cannot listen on {http}: {e}"))?;
            if !ui.addr.ip().is_loopback() {
                said!(
                    "warning: {} is reachable from other machines; its pages ask for the \
                     token the URLs below carry (reached by another name than its address: \
                     --allow-host NAME)",
                    ui.addr
                );
            }
            ready.http = Some(ui.addr.to_string());
            if built {
                say!("playground: {}", ui.url(""));
                say!("watch this server live: {}", ui.url("live"));
                say!(
                    "a trainer's room for a workshop: {}",
                    ui.url_of("trainer/index.html", "")
                );
                urls = Some((ui.url(""), ui.url("live")));
            } else {
                say!(
                    "playground: not served ({where_from} has no built UI: ./scripts/build-ui.sh makes it)"
                );
            }
            say!(
                "test API: http://{}/health, POST /reset, POST /live/clock?by=MS (docs/SERVE.md)",
                ui.addr
            );
        }
        let mut admin_strings = Vec::new();
        let mut admin_lines = Vec::new();
        for (addr, tls) in admin
            .map(|a| (a, None))
            .into_iter()
            .chain(admin_tls.map(|(a, acceptor, cert)| (a, Some((acceptor, cert)))))
        {
            if !addr.ip().is_loopback() {
                said!(
                    "warning: the management API on {addr} is reachable from other machines and \
                     there is no authentication"
                );
            }
            let secure = tls.is_some();
            let (acceptor, cert) = tls.unzip();
            let bound =
                sbp_server::admin::serve(addr, acceptor, server.shared.clone(), &allow_host)
                    .await
                    .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            let string = sbp_server::admin::connection_string(&bound);
            if secure {
                ready.admin_tls = Some(bound.to_string());
                admin_lines.push(format!(
                    "management API (https, certificate {}): {bound}",
                    cert.map(|c| c.display().to_string()).unwrap_or_default()
                ));
            } else {
                ready.admin = Some(bound.to_string());
                admin_lines.push(format!("management API (http): {bound}"));
            }
            admin_lines.push(format!(
                "admin connection string (ServiceBusAdministrationClient):\n  {string}"
            ));
            admin_strings.push(string);
        }
        say!("sbp serve: AMQP on {}", server.addr);
        say!("entities: {}", names.join(", "));
        say!(
            "connection string:\n  {}",
            sbp_server::connection_string(&server.addr)
        );
        for line in admin_lines {
            say!("{line}");
        }
        let _ = std::io::stdout().flush();
        let shared = server.shared.clone();
        // The state as taken up is written at once: a journal begun now has its run's start
        // (its instants' origin) on disk, and a restart reads the journal from there.
        if let Some(path) = &state {
            save_state(&shared, path, true);
        }
        let amqp_addr = server.addr;
        let serving = tokio::spawn(server.run());
        // Every listener accepts now: the harness is told.
        let _ = listeners.set(ready.clone());
        if let Some(path) = &ready_file {
            let text = serde_json::json!({
                "pid": std::process::id(),
                "listeners": ready,
                "connection_string": sbp_server::connection_string(&amqp_addr),
                // The https one when there is one: what the Python and JavaScript clients take.
                "admin_connection_string": admin_strings.last(),
                "playground": urls.as_ref().map(|u| &u.0),
                "live": urls.as_ref().map(|u| &u.1),
            });
            sbp_server::journal::write_atomically(path, &format!("{text:#}\n"))
                .map_err(|e| format!("--ready-file {}: {e}", path.display()))?;
        }
        // Memory given back to the system now and then: a backlog received, a checkpoint
        // written, the heap's free pages are returned (glibc keeps them otherwise).
        let trimming = tokio::spawn(async {
            loop {
                tokio::time::sleep(TRIM_EVERY).await;
                let _ = tokio::task::spawn_blocking(give_back_free_memory).await;
            }
        });
        let saving = state.clone().map(|path| {
            let shared = shared.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(STATE_EVERY).await;
                    let (shared, path) = (shared.clone(), path.clone());
                    let _ = tokio::task::spawn_blocking(move || save_state(&shared, &path, false))
                        .await;
                }
            })
        });
        if stop_with_stdin {
            tokio::select! {
                _ = stop_signal() => {}
                _ = stdin_closed() => {}
            }
        } else {
            stop_signal().await;
        }
        if let Some(path) = &ready_file {
            let _ = std::fs::remove_file(path);
        }
        serving.abort();
        trimming.abort();
        if let Some(saving) = saving {
            saving.abort();
        }
        if let Some(path) = &state {
            shared.sync_journal();
            if save_state(&shared, path, true) {
                say!("state written to {}", path.display());
            }
        }
        if let Some(path) = record {
            let recording = shared
                .broker
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .recording()?;
            std::fs::write(&path, recording.to_json_pretty())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            say!(
                "recorded run written to {} (replay: sbp run {})",
                path.display(),
                path.display()
            );
        }
        Ok::<(), Failure>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// How often `sbp serve` gives free heap pages back to the system.
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Gives the heap's free pages back to the system (glibc's `malloc_trim`; elsewhere nothing).
fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's malloc_trim takes any pad and only returns free pages.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// How often `--state` is written whole when steps were recorded since (each step is in the
/// journal before it is answered; this keeps the journal short and a restart quick).
const STATE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Writes the broker's state to `path` and cuts its journal (`sbp_server::journal`); what could
/// not be written is said (a state too large once), and its journal is kept whole. Says whether
/// it was written.
fn save_state(shared: &sbp_server::Shared, path: &Path, force: bool) -> bool {
    match shared.checkpoint(path, force) {
        Ok(written) => written,
        Err(why) => {
            eprintln!("warning: {why}");
            false
        }
    }
}

/// The standard input's end (what is read is passed over), on a thread of its own.
async fn stdin_closed() {
    let (closed, wait) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let mut sink = [0u8; 4096];
        let mut input = std::io::stdin().lock();
        while matches!(std::io::Read::read(&mut input, &mut sink), Ok(n) if n > 0) {}
        let _ = closed.send(());
    });
    let _ = wait.await;
}

/// Ctrl+C, or SIGTERM where there is one.
async fn stop_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(t) => t,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
