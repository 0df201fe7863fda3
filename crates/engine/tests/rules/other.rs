use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn open_question_max_delivery_count_wins_over_expiry() {
    let mut ns = ns();
    queue(
        &mut ns,
        "q",
        EntitySettings {
            max_delivery_count: 1,
            ..dlq_on_expiry()
        },
    );
    ns.send("q", msg("a", Some(10 * SECOND))).unwrap();
    recv(&mut ns, "q", 1);
    ns.advance_to(30 * SECOND);
    assert_dead_lettered(&ns, "q", 1, "MaxDeliveryCountExceeded");
}

#[test]
fn next_due_and_next_event_name_the_next_timer() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", Some(MINUTE))).unwrap();
    recv(&mut ns, "q", 1);
    assert_eq!(ns.next_due(), Some(30 * SECOND));
    let (at, what) = ns.next_event().unwrap();
    assert_eq!(at, 30 * SECOND);
    assert_eq!(
        what,
        sbp_engine::Due::LockLapse {
            path: "q".into(),
            seq: 1
        }
    );
    settle(&mut ns, "q", 1, Settlement::Complete).unwrap();
    assert_eq!(ns.next_due(), None, "stale timers are skipped");
}

#[test]
fn a_receivers_handles_stay_bounded_but_recent_double_settles_still_fail_with_lock_lost() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    for round in 0..25u64 {
        for _ in 0..1000 {
            ns.send("q", msg("m", None)).unwrap();
        }
        for m in ns
            .receive(
                R,
                "q",
                ReceiveMode::PeekLock,
                1000,
                ReceiveOptions::default(),
            )
            .unwrap()
        {
            settle(&mut ns, "q", m.sequence_number, Settlement::Complete).unwrap();
        }
        let last = (round + 1) * 1000;
        // RCV-08 for a message settled a moment ago.
        assert_eq!(
            settle(&mut ns, "q", last, Settlement::Complete)
                .unwrap_err()
                .kind,
            ErrorKind::MessageLockLost
        );
    }
    assert!(
        ns.receivers()[0].handles.len() <= 20_000,
        "{}",
        ns.receivers()[0].handles.len()
    );
}
