//! `--state`'s journal at the broker's level: a send synced is taken up after a crash (no
//! clean stop, no checkpoint after it), with its lock tokens; a torn tail is cut and said; a
//! crash between a checkpoint's rename and the journal's cut repeats nothing; a state past the
//! links' 2 MB checkpoint limit is written and taken up.
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
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_millis() as i64;
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
        .ns
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
fn a_crash_between_a_checkpoints_rename_and_the_cut_repeats_nothing() {
    let dir = folder("between");
    let state = dir.join("state.json");
    let shared = Shared::new(take_up(&state, fresh).expect("a broker").broker);
    assert_eq!(shared.checkpoint(&state, true), Ok(true));
    for i in 0..4 {
        send(&shared, &format!("m{i}"));
    }
    shared.sync_journal();
    // The state written whole, then the crash before the journal is cut: every line of the
    // journal is also in the state.
    let text = shared.lock().state().expect("a state");
    sbp_server::journal::write_atomically(&state, &text).expect("written");
    drop(shared);
    let mut taken = restart(&state);
    assert!(taken.warnings.is_empty(), "{:?}", taken.warnings);
    assert!(
        !taken.notes.iter().any(|n| n.contains("replayed")),
        "{:?}",
        taken.notes
    );
    assert_eq!(active(&mut taken.broker), 4);
    assert_eq!(taken.broker.sim.scenario.timeline.len(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_checkpoint_cuts_the_journal_and_a_state_past_2_mb_is_written_and_taken_up() {
    let dir = folder("large");
    let state = dir.join("state.json");
    let shared = Shared::new(take_up(&state, fresh).expect("a broker").broker);
    // 700 bodies of 4,000 bytes (a step's largest body is 4 KiB): the engine's checkpoint
    // alone is past the links' 2 MB, the state file past the 4 MiB once read.
    for i in 0..700 {
        send(&shared, &format!("{i:04}").repeat(1_000));
    }
    shared.sync_journal();
    assert!(
        std::fs::metadata(journal_path(&state))
            .expect("journal")
            .len()
            > 2_800_000
    );
    assert_eq!(shared.checkpoint(&state, false), Ok(true));
    // The journal holds nothing the state does not: it is cut to nothing.
    assert_eq!(
        std::fs::metadata(journal_path(&state))
            .expect("journal")
            .len(),
        0
    );
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
    assert_eq!(active(&mut taken.broker), 700);
    let _ = std::fs::remove_dir_all(&dir);
}
