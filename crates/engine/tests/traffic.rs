//! Producers and consumers (issue: traffic, clients and faults), on the namespace's own timers.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use sbp_engine::time::{HOUR, MINUTE, SECOND};
use sbp_engine::*;

mod common;
use common::assert_dead_lettered;

fn ns_with(queue: EntitySettings) -> Namespace {
    let mut ns = Namespace::builder().seed(42).build();
    ns.create_queue("jobs", queue).unwrap();
    ns
}
fn settings() -> EntitySettings {
    EntitySettings::defaults(Tier::Standard)
}
fn counts(ns: &Namespace) -> Counts {
    ns.entity("jobs").unwrap().counts(ns.now())
}

#[test]
fn a_producer_sends_at_its_rate_with_its_message_ids() {
    let mut ns = ns_with(settings());
    ns.start_producer(ProducerSpec {
        message_id_prefix: Some("job-".into()),
        ..ProducerSpec::new("web", "jobs", 10.0)
    })
    .unwrap();
    ns.advance_to(10 * SECOND - 1);
    assert_eq!(counts(&ns).active, 100);
    assert_eq!(
        ns.message("jobs", 100, Perspective::Peek)
            .unwrap()
            .message_id,
        "job-100"
    );
    ns.stop_producer("web").unwrap();
    ns.advance_to(MINUTE);
    assert_eq!(counts(&ns).active, 100, "a stopped producer sends nothing");
    assert_eq!(ns.metrics().total().sent, 100);
}

#[test]
fn spikes_and_bursts_change_the_rate() {
    let mut ns = ns_with(settings());
    let spec = ProducerSpec {
        spike: Some(Spike {
            from: 10 * SECOND,
            duration: 10 * SECOND,
            factor: 5.0,
        }),
        burst: Some(Burst {
            every: MINUTE,
            size: 50,
        }),
        ..ProducerSpec::new("web", "jobs", 1.0)
    };
    ns.start_producer(spec).unwrap();
    ns.advance_to(30 * SECOND - 1);
    // 10 s at 1/s + 10 s at 5/s + 10 s at 1/s, plus one burst of 50 at t=0.
    assert_eq!(counts(&ns).active, 10 + 50 + 10 + 50);
}

#[test]
fn consumers_complete_and_metrics_measure_throughput_and_latency() {
    let mut ns = ns_with(settings());
    ns.start_producer(ProducerSpec::new("web", "jobs", 10.0))
        .unwrap();
    ns.start_consumers(ConsumerSpec {
        instances: 2,
        processing: Processing::Fixed(100),
        ..ConsumerSpec::new("workers", "jobs")
    })
    .unwrap();
    ns.advance_to(MINUTE);
    let total = ns.metrics().total();
    assert!(total.completed >= 595, "{total:?}");
    assert!(
        total.mean_latency().unwrap() >= 100,
        "latency includes the processing time"
    );
    assert!(total.mean_latency().unwrap() < 2 * SECOND);
}

#[test]
fn a_slow_backend_lets_jobs_expire_into_the_dlq() {
    let mut ns = ns_with(EntitySettings {
        dead_lettering_on_message_expiration: true,
        ..settings()
    });
    ns.start_producer(ProducerSpec {
        ttl: Some(30 * SECOND),
        ..ProducerSpec::new("web", "jobs", 20.0)
    })
    .unwrap();
    ns.start_consumers(ConsumerSpec {
        processing: Processing::Fixed(SECOND),
        ..ConsumerSpec::new("backend", "jobs")
    })
    .unwrap();
    ns.advance_to(2 * MINUTE);
    let total = ns.metrics().total();
    assert!(total.expired > 1000, "{total:?}");
    assert_eq!(counts(&ns).dead_lettered, total.dead_lettered);
}

#[test]
fn r_rcv_07_a_crashing_consumer_drives_messages_to_max_delivery_count() {
    let mut ns = ns_with(EntitySettings {
        max_delivery_count: 3,
        lock_duration: 5 * SECOND,
        ..settings()
    });
    ns.send(
        "jobs",
        NewMessage {
            message_id: Some("poison".into()),
            ..Default::default()
        },
    )
    .unwrap();
    ns.start_consumers(ConsumerSpec {
        crash: 1.0,
        processing: Processing::Fixed(100),
        ..ConsumerSpec::new("crashy", "jobs")
    })
    .unwrap();
    ns.advance_to(MINUTE);
    assert_dead_lettered(&ns, "jobs", 1, "MaxDeliveryCountExceeded");
    assert_eq!(ns.metrics().total().crashed, 3);
}

#[test]
fn r_rcv_12_lost_lock_after_work_processes_twice_unless_idempotent() {
    let run = |idempotent: bool| {
        let mut ns = ns_with(EntitySettings {
            lock_duration: 5 * SECOND,
            ..settings()
        });
        for i in 0..20 {
            ns.send(
                "jobs",
                NewMessage {
                    message_id: Some(format!("order-{i}")),
                    ..Default::default()
                },
            )
            .unwrap();
        }
        // Work takes up to 8 s: some of it outlasts the 5 s lock.
        ns.start_consumers(ConsumerSpec {
            processing: Processing::Uniform {
                min: 100,
                max: 8 * SECOND,
            },
            idempotent,
            ..ConsumerSpec::new("workers", "jobs")
        })
        .unwrap();
        ns.advance_to(10 * MINUTE);
        ns.metrics().total()
    };
    let plain = run(false);
    assert!(plain.lock_lost >= 1, "{plain:?}");
    assert_eq!(plain.duplicates_processed, plain.lock_lost);
    let idem = run(true);
    assert!(idem.lock_lost >= 1);
    assert_eq!(idem.duplicates_processed, 0);
    assert_eq!(idem.duplicates_skipped, idem.lock_lost);
}

#[test]
fn r_rcv_04_auto_renewal_keeps_long_work_from_losing_its_lock() {
    let mut ns = ns_with(EntitySettings {
        lock_duration: 5 * SECOND,
        ..settings()
    });
    ns.send("jobs", NewMessage::default()).unwrap();
    ns.start_consumers(ConsumerSpec {
        processing: Processing::Fixed(20 * SECOND),
        max_auto_lock_renewal: Some(MINUTE),
        ..ConsumerSpec::new("slow", "jobs")
    })
    .unwrap();
    ns.advance_to(MINUTE);
    let total = ns.metrics().total();
    assert_eq!((total.completed, total.lock_lost), (1, 0));
}

#[test]
fn shares_of_abandon_dead_letter_and_defer() {
    let mut ns = ns_with(EntitySettings {
        max_delivery_count: 100,
        ..settings()
    });
    for _ in 0..1000 {
        ns.send("jobs", NewMessage::default()).unwrap();
    }
    ns.start_consumers(ConsumerSpec {
        instances: 10,
        processing: Processing::Exponential { mean: 50 },
        dead_letter: 0.2,
        defer: 0.1,
        ..ConsumerSpec::new("w", "jobs")
    })
    .unwrap();
    ns.advance_to(HOUR);
    let c = counts(&ns);
    assert!((150..250).contains(&c.dead_lettered), "{c:?}");
    assert!((60..140).contains(&c.deferred), "{c:?}");
    assert_eq!(c.active + c.locked, 0);
}

#[test]
fn traffic_is_deterministic_and_the_log_can_be_bounded() {
    let run = |limit: Option<usize>| {
        let mut ns = Namespace::builder().seed(9).log_limit(limit).build();
        ns.create_queue("jobs", settings()).unwrap();
        ns.start_producer(ProducerSpec::new("web", "jobs", 100.0))
            .unwrap();
        ns.start_consumers(ConsumerSpec {
            instances: 3,
            processing: Processing::Exponential { mean: 20 },
            abandon: 0.1,
            crash: 0.05,
            ..ConsumerSpec::new("w", "jobs")
        })
        .unwrap();
        ns.advance_to(MINUTE);
        ns
    };
    let (a, b) = (run(None), run(None));
    assert_eq!(
        serde_json::to_string(a.log()).unwrap(),
        serde_json::to_string(b.log()).unwrap()
    );
    let bounded = run(Some(1000));
    assert!(bounded.log().len() < 2000);
    assert_eq!(
        bounded.log().len() as u64 + bounded.log_dropped(),
        a.log().len() as u64
    );
    assert_eq!(bounded.log().last(), a.log().last());
}

#[test]
fn invalid_actor_settings_are_refused() {
    let mut ns = ns_with(settings());
    assert!(ns
        .start_producer(ProducerSpec::new("p", "nope", 1.0))
        .is_err());
    assert!(ns
        .start_producer(ProducerSpec::new("p", "jobs", -1.0))
        .is_err());
    assert!(ns
        .start_consumers(ConsumerSpec {
            abandon: 0.7,
            crash: 0.5,
            ..ConsumerSpec::new("c", "jobs")
        })
        .is_err());
    assert!(ns
        .start_consumers(ConsumerSpec {
            instances: 0,
            ..ConsumerSpec::new("c", "jobs")
        })
        .is_err());
    assert!(ns.stop_producer("ghost").is_err());
}

#[test]
fn metrics_stay_bounded_over_a_year() {
    let mut ns = ns_with(settings());
    ns.send("jobs", NewMessage::default()).unwrap();
    ns.advance_to(365 * 24 * HOUR);
    ns.send("jobs", NewMessage::default()).unwrap();
    assert!(ns.metrics().buckets.len() <= sbp_engine::metrics::MAX_BUCKETS);
    assert_eq!(ns.metrics().total().sent, 2);
}

/// SES-01..04 under traffic: a producer spreads its messages over sessions; session-aware
/// consumers each work one session at a time, several in parallel, and every session is
/// completed in SequenceNumber order.
#[test]
fn session_consumers_work_sessions_in_parallel_each_in_order() {
    let mut ns = ns_with(EntitySettings {
        requires_session: true,
        ..settings()
    });
    // Without sessions the producer's sends are refused (SES-01).
    ns.start_producer(ProducerSpec {
        max_messages: Some(5),
        ..ProducerSpec::new("plain", "jobs", 10.0)
    })
    .unwrap();
    ns.advance_to(SECOND);
    assert_eq!(ns.metrics().total().rejected, 5);
    ns.start_producer(ProducerSpec {
        sessions: Some(4),
        max_messages: Some(400),
        ..ProducerSpec::new("web", "jobs", 100.0)
    })
    .unwrap();
    ns.start_consumers(ConsumerSpec {
        instances: 3,
        processing: Processing::Fixed(20),
        ..ConsumerSpec::new("workers", "jobs")
    })
    .unwrap();
    ns.advance_to(2 * MINUTE);
    assert_eq!(ns.metrics().total().completed, 400);
    assert_eq!(counts(&ns).active + counts(&ns).locked, 0);
    // Completed in order within each session; several sessions held at once.
    let mut last: std::collections::BTreeMap<String, u64> = Default::default();
    let mut holders: std::collections::BTreeSet<u32> = Default::default();
    for e in ns.log() {
        match &e.kind {
            EventKind::Completed { .. } => {
                let session = format!("web-s{}", (e.seq - 1) % 4 + 1);
                let before = last.insert(session.clone(), e.seq).unwrap_or(0);
                assert!(e.seq > before, "{session}: #{} after #{before}", e.seq);
            }
            EventKind::SessionLocked { receiver, .. } => {
                holders.insert(*receiver);
            }
            _ => {}
        }
    }
    assert_eq!(last.len(), 4);
    assert_eq!(holders.len(), 3, "every consumer held a session");
}

/// A link's checkpoint: traffic saved mid-run (crashes, renewals, abandons, sessions of work in
/// flight) and taken up by a namespace built alike goes on with the same log, natively and in
/// wasm32 (where `usize` is 32 bits).
#[test]
fn traffic_saved_mid_run_and_taken_up_goes_on_alike() {
    let build = || {
        let mut ns = ns_with(EntitySettings {
            max_delivery_count: 3,
            ..settings()
        });
        ns.start_producer(ProducerSpec::new("web", "jobs", 50.0))
            .unwrap();
        ns.start_consumers(ConsumerSpec {
            instances: 3,
            processing: Processing::Exponential { mean: 40 },
            abandon: 0.1,
            crash: 0.05,
            max_auto_lock_renewal: Some(MINUTE),
            ..ConsumerSpec::new("w", "jobs")
        })
        .unwrap();
        ns
    };
    let mut run = build();
    run.advance_to(5 * MINUTE + 7);
    let bytes = run.save(|_| {});
    let mut resumed = build();
    resumed.resume(&bytes, |_| {}).unwrap();
    assert!(resumed.same_state_except_log(&run));
    let before = run.log().len();
    run.advance_to(10 * MINUTE);
    resumed.advance_to(10 * MINUTE);
    assert_eq!(resumed.log(), &run.log()[before..]);
    assert!(resumed.metrics().total().completed > 10_000);
    // Cut short, the same bytes are refused and change nothing.
    let mut other = build();
    let err = other.resume(&bytes[..bytes.len() - 1], |_| {}).unwrap_err();
    assert_eq!(err, "s-checkpoint-unreadable");
    assert!(other.same_state_except_log(&build()));
}
