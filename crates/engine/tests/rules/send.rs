use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn r_send_01_rejection_carries_code_tracking_id_and_retryability() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.fault(Fault::ServerBusy {
        duration: 10 * SECOND,
    })
    .unwrap();
    let busy = ns.send("q", msg("a", None)).unwrap_err();
    assert_eq!(busy.kind, ErrorKind::ServerBusy);
    assert!(busy.is_transient);
    assert_eq!(busy.tracking_id.as_ref().map(String::len), Some(36));
    let big = NewMessage {
        body_size: Some(300 * 1024),
        ..msg("b", None)
    };
    ns.advance_to(10 * SECOND);
    let too_large = ns.send("q", big).unwrap_err();
    assert!(!too_large.is_transient);
    assert!(too_large.tracking_id.is_some());
    assert_ne!(busy.tracking_id, too_large.tracking_id);
}

#[test]
fn r_send_02_awaiting_each_send_costs_n_round_trips_overlapping_does_not() {
    let run = |strategy| send_lab::run(&SendLabSpec::seed_example(strategy));
    let one_by_one = run(SendStrategy::AwaitEach);
    assert!(
        one_by_one.caller_done >= 8 * SECOND,
        "{}",
        one_by_one.caller_done
    );
    let overlapped = run(SendStrategy::StartAllThenAwait);
    assert!(overlapped.caller_done < SECOND);
    let bounded = run(SendStrategy::Semaphore(10));
    assert!(bounded.caller_done < SECOND && bounded.caller_done > overlapped.caller_done);
    assert_eq!(
        bounded.max_in_flight, 10,
        "the semaphore bounds the sends in flight"
    );
}

#[test]
fn r_send_03_fire_and_forget_hides_its_queue_and_failures() {
    let spec = SendLabSpec {
        injected: Injected {
            quota_exceeded_every: 10,
            ..Default::default()
        },
        ..SendLabSpec::seed_example(SendStrategy::FireAndForget)
    };
    let r = send_lab::run(&spec);
    assert_eq!(r.caller_done, 0, "the caller moves on at once");
    assert_eq!(r.max_in_flight, 100, "every send waits in the hidden queue");
    assert_eq!((r.unobserved_failures, r.observed_failures), (10, 0));
    assert!(r.traces.iter().all(|t| !t.observed));
    let awaited = send_lab::run(&SendLabSpec {
        strategy: SendStrategy::AwaitEach,
        ..spec
    });
    assert_eq!(
        (awaited.unobserved_failures, awaited.observed_failures),
        (0, 10)
    );
}

#[test]
fn r_send_01_lab_rejections_carry_tracking_ids_and_busy_is_retried() {
    let spec = SendLabSpec {
        injected: Injected {
            server_busy_every: 4,
            entity_not_found_every: 25,
            ..Default::default()
        },
        ..SendLabSpec::seed_example(SendStrategy::AwaitEach)
    };
    let r = send_lab::run(&spec);
    let busy = &r.traces[3];
    let rejection = busy.rejection.as_ref().unwrap();
    assert_eq!(
        (
            rejection.error,
            rejection.is_transient,
            busy.attempts,
            busy.stored
        ),
        (ErrorKind::ServerBusy, true, 2, true)
    );
    assert_eq!(rejection.tracking_id.len(), 36);
    let gone = &r.traces[24];
    assert_eq!(
        (gone.rejection.as_ref().unwrap().error, gone.stored),
        (ErrorKind::MessagingEntityNotFound, false)
    );
    assert_eq!(busy.settled - busy.started, 80 + 800 + 80);
}

#[test]
fn r_send_04_rejections_not_found_quota_too_large_busy() {
    let mut ns = ns();
    queue(
        &mut ns,
        "small",
        EntitySettings {
            max_size_bytes: 8,
            ..settings()
        },
    );
    assert_eq!(
        ns.send("nope", msg("a", None)).unwrap_err().kind,
        ErrorKind::MessagingEntityNotFound
    );
    ns.send("small", msg("a", None)).unwrap();
    assert_eq!(
        ns.send("small", msg("b", None)).unwrap_err().kind,
        ErrorKind::QuotaExceeded
    );
    let huge = NewMessage {
        body_size: Some(257 * 1024),
        ..msg("c", None)
    };
    assert_eq!(
        ns.send("small", huge.clone()).unwrap_err().kind,
        ErrorKind::MessageSizeExceeded
    );
    let mut premium = Namespace::builder().tier(Tier::Premium).build();
    premium
        .create_queue("q", EntitySettings::defaults(Tier::Premium))
        .unwrap();
    assert!(premium.send("q", huge).is_ok(), "Premium allows 100 MB");
    ns.fault(Fault::ServerBusy { duration: SECOND }).unwrap();
    assert_eq!(
        ns.send("small", msg("d", None)).unwrap_err().kind,
        ErrorKind::ServerBusy
    );
}
