//! `--state`'s journal at the broker's level: a send synced is taken up after a crash (no
//! clean stop, no checkpoint after it), with its lock tokens; a torn tail is cut and said; a
//! state written mid-run goes on with the journal's lines after it; a checkpoint writes the
//! state now, not the run; a state past the links' 2 MB checkpoint limit is written and taken
//! up.
use sbp_server::broker::{Broker, Settle};
use sbp_server::journal::journal_path;
use sbp_server::state::take_up;
use sbp_server::Shared;
use std::path::PathBuf;

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sbp-journal-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

fn fresh() -> Result<Broker, String> {
    let scenario =
        sbp_scenario::Scenario::from_json(r#"{"version": 1, "entities": [{"queue": "orders"}]}"#)
            .map_err(|e| e.to_string())?;
    let now = sbp_server::broker::unix_now();
    Broker::new(scenario, now)
}

fn send(shared: &Shared, body: &str) {
    let def: sbp_scenario::SendDef =
        serde_json::from_value(serde_json::json!({ "to": "orders", "body": body }))
            .expect("a send");
    shared.lock().send("test", def).expect("sent");
}

fn active(broker: &mut Broker) -> u64 {
    broker.tick();
    let now = broker.sim.now();
    broker
        .sim
        .ns()
        .entity("orders")
        .expect("the queue")
        .counts(now)
        .active
}

/// Taken up as a restart takes it up, without the fresh broker (a state must be there).
fn restart(state: &std::path::Path) -> sbp_server::state::TakenUp {
    take_up(state, || Err("no state to take up".into())).expect("taken up")
}

#[test]
fn a_send_synced_is_taken_up_after_a_crash_with_its_lock_tokens() {
    let dir = folder("crash");
    let state = dir.join("state.json");
    let shared = Shared::new(take_up(&state, fresh).expect("a broker").broker);
    assert_eq!(shared.checkpoint(&state, true), Ok(true));
    for i in 0..5 {
        send(&shared, &format!("m{i}"));
    }
    let token = {
        let mut b = shared.lock();
        let got = b
            .receive("test", "orders", "r", sbp_engine::ReceiveMode::PeekLock, 1)
            .expect("received");
        got[0].lock_token.clone().expect("locked")
    };
    // What a connection does before it writes the disposition: the steps are on disk.
    shared.sync_journal();
    // The crash: no checkpoint, no clean stop; the process's memory is gone.
    drop(shared);
    let mut taken = restart(&state);
    assert!(
        taken.notes.iter().any(|n| n.contains("6 steps replayed")),
        "{:?}",
        taken.notes
    );
    assert_eq!(active(&mut taken.broker), 4);
    // The replayed receive gave the same lock token: the client settles with it.
    taken
        .broker
        .settle("test", &token, Settle::Complete, None, None)
        .expect("the lock token the client holds settles");
    assert_eq!(active(&mut taken.broker), 4);
    // The next receive call is named after the replayed ones (its locks do not collide).
    let got = taken
        .broker
        .receive("test", "orders", "r", sbp_engine::ReceiveMode::PeekLock, 1)
        .expect("received");
    assert_eq!(got.len(), 1);
    assert!(taken
        .broker
        .held(got[0].lock_token.as_deref().unwrap_or_default())
        .is_some_and(|h| h.name == "c2.1"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_torn_journal_tail_is_cut_and_said_and_the_lines_before_it_kept() {
    let dir = folder("torn");
    let state = dir.join("state.json");
    let shared = Shared::new(take_up(&state, fresh).expect("a broker").broker);
    assert_eq!(shared.checkpoint(&state, true), Ok(true));
    for i in 0..3 {
        send(&shared, &format!("m{i}"));
    }
    shared.sync_journal();
    drop(shared);
    let journal = journal_path(&state);
    let whole = std::fs::read(&journal).expect("the journal");
    // A crash mid-write: half of a fourth line.
    let mut torn = whole.clone();
    torn.extend_from_slice(br#"{"index": 3, "at": 12, "step": {"at": "#);
    std::fs::write(&journal, &torn).expect("written");
    let mut taken = restart(&state);
    assert!(
        taken.warnings.iter().any(|w| w.contains("kept 3 lines")
            && w.contains("half-written")
            && w.contains("state.json.journal.cut")),
        "{:?}",
        taken.warnings
    );
    assert_eq!(active(&mut taken.broker), 3);
    assert_eq!(std::fs::read(&journal).expect("the journal"), whole);
    drop(taken);
    // A line that is not JSON at all, then more: cut there too, never a refusal to start.
    let mut bad = whole.clone();
    bad.extend_from_slice(b"not json\n{}\n");
    std::fs::write(&journal, &bad).expect("written");
    let mut taken = restart(&state);
    assert!(
        taken
            .warnings
            .iter()
            .any(|w| w.contains("kept 3 lines") && w.contains("line 4 is not a step")),
        "{:?}",
        taken.warnings
    );
    assert_eq!(active(&mut taken.broker), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_state_written_mid_run_takes_up_the_lines_before_it_as_the_run_and_replays_those_after() {
    let dir = folder("between");
    let state = dir.join("state.json");
    let shared = Shared::new(take_up(&state, fresh).expect("a broker").broker);
    for i in 0..4 {
        send(&shared, &format!("m{i}"));
    }
    assert_eq!(shared.checkpoint(&state, false), Ok(true));
    for i in 4..7 {
        send(&shared, &format!("m{i}"));
    }
    shared.sync_journal();
    // The crash: no checkpoint after the last three.
    drop(shared);
    let mut taken = restart(&state);
    assert!(taken.warnings.is_empty(), "{:?}", taken.warnings);
    assert!(
        taken.notes.iter().any(|n| n.contains("after 4 steps"))
            && taken.notes.iter().any(|n| n.contains("3 steps replayed")),
        "{:?}",
        taken.notes
    );
    assert_eq!(active(&mut taken.broker), 7, "nothing lost, nothing twice");
    assert_eq!(taken.broker.steps(), 7, "the whole run");
    // None of it in memory: the recording reads the journal.
    assert!(taken.broker.sim.scenario().timeline.is_empty());
    let recording = taken.broker.recording().expect("the recording");
    assert_eq!(recording.timeline.len(), 7);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Found by the soak run: each checkpoint wrote the whole run (every step, bodies included)
/// and built it as a JSON tree under the broker's lock, so memory, checkpoints and restarts
/// grew with the run's length (785 MB in a minute of traffic). The state now holds what is
/// stored; the steps are the journal's, appended once.
#[test]
fn a_checkpoint_writes_the_state_now_not_the_run() {
    let dir = folder("drained");
    let state = dir.join("state.json");
    // The wall clock is the test's: it moves past the locks' lapse before each checkpoint
    // (the engine keeps a taken lock's lapse until then, settled or not).
    let started = sbp_server::broker::unix_now();
    let wall = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(started + 1_000));
    let read = wall.clone();
    let clocked = move || {
        fresh().map(|b| {
            b.with_wall_clock(std::sync::Arc::new(move || {
                read.load(std::sync::atomic::Ordering::SeqCst)
            }))
        })
    };
    let later = |ms: i64| {
        wall.fetch_add(ms, std::sync::atomic::Ordering::SeqCst);
    };
    let shared = Shared::new(take_up(&state, clocked).expect("a broker").broker);
    let drain = |n: usize| {
        for i in 0..n {
            send(&shared, &format!("{i:04}").repeat(200));
        }
        let mut broker = shared.lock();
        let got = broker
            .receive(
                "test",
                "orders",
                "r",
                sbp_engine::ReceiveMode::PeekLock,
                n as u32,
            )
            .expect("received");
        for m in got {
            let token = m.lock_token.expect("a lock");
            broker
                .settle("test", &token, Settle::Complete, None, None)
                .expect("completed");
        }
    };
    drain(100);
    later(60_000);
    assert_eq!(shared.checkpoint(&state, false), Ok(true));
    let small_run = std::fs::metadata(&state).expect("the state").len();
    drain(2_000);
    later(60_000);
    assert_eq!(shared.checkpoint(&state, false), Ok(true));
    let long_run = std::fs::metadata(&state).expect("the state").len();
    let journal = std::fs::metadata(journal_path(&state))
        .expect("the journal")
        .len();
    // Twenty-one times the run, the same queue (empty): the state holds no step; what grows
    // is the receiver's record of the messages it held (the engine forgets those of messages
    // gone past 1,000 a receiver), a few dozen bytes each, not the messages' steps.
    let text = std::fs::read_to_string(&state).expect("the state");
    assert!(!text.contains("\"timeline\":[{"), "no steps in the state");
    assert!(
        long_run * 10 < journal && long_run < small_run + 2_100 * 40,
        "{small_run} then {long_run} bytes, the journal {journal}"
    );
    drop(shared);
    let taken = restart(&state);
    let counts = taken
        .broker
        .sim
        .ns()
        .entity("orders")
        .expect("orders")
        .counts(0);
    assert_eq!((counts.active, counts.locked), (0, 0));
    // Every send, two receive calls and every completion.
    assert_eq!(taken.broker.steps(), 2_100 + 2 + 2_100);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_state_past_2_mb_is_written_and_taken_up_with_the_run_from_the_journal() {
    let dir = folder("large");
    let state = dir.join("state.json");
    let shared = Shared::new(take_up(&state, fresh).expect("a broker").broker);
    // 1,100 bodies of 4,000 bytes (a step's largest body is 4 KiB): the engine's checkpoint
    // alone is past the links' 2 MB, the state file past the 4 MiB once read.
    for i in 0..1_100 {
        send(&shared, &format!("{i:04}").repeat(1_000));
    }
    shared.sync_journal();
    let journal = std::fs::metadata(journal_path(&state))
        .expect("journal")
        .len();
    assert_eq!(shared.checkpoint(&state, false), Ok(true));
    // The journal is the recording: only appended to.
    let after = std::fs::metadata(journal_path(&state))
        .expect("journal")
        .len();
    assert_eq!(after, journal);
    // Nothing new: nothing written.
    assert_eq!(shared.checkpoint(&state, false), Ok(false));
    let size = std::fs::metadata(&state).expect("the state").len();
    assert!(size > 4 << 20, "{size} bytes");
    drop(shared);
    let mut taken = restart(&state);
    assert!(
        taken.notes[0].contains("state taken up"),
        "{:?}",
        taken.notes
    );
    assert_eq!(active(&mut taken.broker), 1_100);
    assert_eq!(taken.broker.steps(), 1_100);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Found running the SDK checks: a state removed to start afresh left its journal, which was
/// then replayed onto the fresh broker (another run's messages came back). A journal without
/// its state is set aside, said, and the start is fresh.
#[test]
fn a_journal_without_its_state_is_set_aside_and_the_start_is_fresh() {
    let dir = folder("orphan");
    let state = dir.join("state.json");
    let shared = Shared::new(take_up(&state, fresh).expect("a broker").broker);
    assert_eq!(shared.checkpoint(&state, true), Ok(true));
    send(&shared, "from the run before");
    shared.sync_journal();
    drop(shared);
    std::fs::remove_file(&state).expect("the state removed");
    let mut taken = take_up(&state, fresh).expect("a fresh start");
    assert!(
        taken
            .warnings
            .iter()
            .any(|w| w.contains("no state beside it") && w.contains("state.json.journal.old")),
        "{:?}",
        taken.warnings
    );
    assert_eq!(active(&mut taken.broker), 0);
    assert_eq!(taken.broker.steps(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Found by the long soak run: a restart read every line of the journal, the run so far
/// included (7 s to listen again after 360,000 messages). It starts reading where the state's
/// step is: a line before it, even a damaged one, is not read.
#[test]
fn a_restart_reads_the_journal_from_the_states_step_on() {
    let dir = folder("seek");
    let state = dir.join("state.json");
    let shared = Shared::new(take_up(&state, fresh).expect("a broker").broker);
    for i in 0..5 {
        send(&shared, &format!("before {i}"));
    }
    assert_eq!(shared.checkpoint(&state, false), Ok(true));
    send(&shared, "after");
    shared.sync_journal();
    drop(shared);
    // The first line made unreadable: were it read, the take-up would cut the journal there.
    let journal = journal_path(&state);
    let mut bytes = std::fs::read(&journal).expect("the journal");
    bytes[0] = b'#';
    std::fs::write(&journal, &bytes).expect("written");
    let mut taken = restart(&state);
    assert!(taken.warnings.is_empty(), "{:?}", taken.warnings);
    assert!(
        taken.notes.iter().any(|n| n.contains("1 steps replayed")),
        "{:?}",
        taken.notes
    );
    assert_eq!(active(&mut taken.broker), 6);
    assert_eq!(taken.broker.steps(), 6);
    let _ = std::fs::remove_dir_all(&dir);
}
