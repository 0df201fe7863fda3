//! Invariants over random operation sequences. The test command runs a fast subset (256
//! sequences); `PROPTEST_CASES=100000 cargo test --release -p sbp-engine --test properties` is
//! a long run (docs/TESTING.md).
//!
//! After every operation: every accepted message is in exactly one place or has a terminal event
//! (conservation, counted from the log); sequence numbers are unique and increasing per entity;
//! DeliveryCount stays below MaxDeliveryCount in a main queue; nothing receivable is past its
//! ExpiresAt in exact mode, and no receive returns an expired message; a failed command changes
//! nothing but the log. Per sequence: the same seed gives the same log, and interleaving
//! next-due queries changes nothing.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use sbp_engine::time::{MINUTE, SECOND};
use sbp_engine::*;
use std::collections::BTreeMap;

const QUEUES: [&str; 4] = ["a", "b", "c", "d"];
const SOURCES: [&str; 9] = [
    "a",
    "b",
    "c",
    "t/subscriptions/s1",
    "t/subscriptions/s2",
    "a/$deadletterqueue",
    "t/subscriptions/s1/$deadletterqueue",
    "d",
    "d/$deadletterqueue",
];
const RECEIVERS: [&str; 3] = ["r1", "r2", "r3"];

#[derive(Clone, Debug)]
enum Op {
    Send {
        to: u8,
        ttl: Option<u32>,
        at_topic: bool,
    },
    Schedule {
        to: u8,
        in_ms: u32,
        ttl: Option<u32>,
    },
    Cancel {
        to: u8,
        seq: u8,
    },
    Receive {
        from: u8,
        r: u8,
        delete: bool,
        count: u8,
        renew: bool,
    },
    ReceiveDeferred {
        from: u8,
        r: u8,
        seqs: Vec<u8>,
    },
    Peek {
        from: u8,
        r: u8,
    },
    Settle {
        from: u8,
        r: u8,
        seq: u8,
        how: u8,
        /// Settle the message of an earlier receive (the n-th lock seen) with its LockToken,
        /// current or stale, by receiver `r` (its holder or not).
        token: Option<u8>,
    },
    Fault {
        kind: u8,
        r: u8,
        busy_ms: i64,
    },
    Update {
        entity: u8,
        lock_s: u8,
        max_delivery: u8,
    },
    /// FLT-01: a named rule added to or removed from s1.
    Rule {
        add: bool,
        name: u8,
    },
    /// SES-02..05 on the session queue d.
    Session {
        r: u8,
        op: u8,
        session: u8,
    },
    Advance {
        ms: u32,
    },
    NextDue,
}

fn op() -> impl Strategy<Value = Op> {
    let ttl = prop::option::of(1u32..120_000);
    prop_oneof![
        4 => (0u8..4, ttl.clone(), any::<bool>()).prop_map(|(to, ttl, at_topic)| Op::Send { to, ttl, at_topic }),
        1 => (0u8..3, 0u32..60_000, ttl).prop_map(|(to, in_ms, ttl)| Op::Schedule { to, in_ms, ttl }),
        1 => (0u8..3, 0u8..12).prop_map(|(to, seq)| Op::Cancel { to, seq }),
        4 => (0u8..9, 0u8..3, any::<bool>(), 0u8..4, any::<bool>())
            .prop_map(|(from, r, delete, count, renew)| Op::Receive { from, r, delete, count, renew }),
        1 => (0u8..9, 0u8..3, prop::collection::vec(0u8..12, 0..3))
            .prop_map(|(from, r, seqs)| Op::ReceiveDeferred { from, r, seqs }),
        1 => (0u8..9, 0u8..3).prop_map(|(from, r)| Op::Peek { from, r }),
        5 => (0u8..9, 0u8..3, 0u8..12, 0u8..7, prop::option::of(any::<u8>()))
            .prop_map(|(from, r, seq, how, token)| Op::Settle { from, r, seq, how, token }),
        1 => (0u8..4, 0u8..3, -5_000i64..30_000).prop_map(|(kind, r, busy_ms)| Op::Fault { kind, r, busy_ms }),
        1 => (0u8..5, 0u8..80, 0u8..5).prop_map(|(entity, lock_s, max_delivery)| Op::Update { entity, lock_s, max_delivery }),
        3 => (0u8..3, 0u8..6, 0u8..4).prop_map(|(r, op, session)| Op::Session { r, op, session }),
        1 => (any::<bool>(), 0u8..3).prop_map(|(add, name)| Op::Rule { add, name }),
        4 => (0u32..90_000).prop_map(|ms| Op::Advance { ms }),
        2 => Just(Op::NextDue),
    ]
}

/// The namespace every sequence starts from: three queues (b dead-letters expired messages and
/// forwards its dead-letters to c), a topic with two subscriptions (s2 forwards to a).
fn namespace(seed: u64, realistic: bool, max_delivery: u32) -> Namespace {
    let mode = if realistic {
        ExpiryMode::Realistic
    } else {
        ExpiryMode::Exact
    };
    let mut ns = Namespace::builder()
        .seed(seed)
        .expiry_mode(mode)
        .sweep_interval(10 * SECOND)
        .build();
    let base = EntitySettings {
        lock_duration: 10 * SECOND,
        max_delivery_count: max_delivery,
        ..EntitySettings::defaults(Tier::Standard)
    };
    let detecting = EntitySettings {
        requires_duplicate_detection: true,
        duplicate_detection_history_time_window: 20 * SECOND,
        ..base.clone()
    };
    ns.create_queue("c", detecting.clone()).unwrap();
    ns.create_queue(
        "b",
        EntitySettings {
            dead_lettering_on_message_expiration: true,
            forward_dead_lettered_messages_to: Some("c".into()),
            default_message_time_to_live: MINUTE,
            ..base.clone()
        },
    )
    .unwrap();
    ns.create_queue(
        "a",
        EntitySettings {
            dead_lettering_on_message_expiration: true,
            ..base.clone()
        },
    )
    .unwrap();
    ns.create_topic("t", detecting).unwrap();
    // d requires sessions (SES-01): a message without a SessionId is refused.
    ns.create_queue(
        "d",
        EntitySettings {
            requires_session: true,
            ..base.clone()
        },
    )
    .unwrap();
    // s1 takes what a SQL filter lets through, tagged by its action (FLT-03, FLT-04).
    let sql =
        sbp_engine::entity::SqlRule::new("sys.MessageId <> 'm0'", Some("SET seen = 1")).unwrap();
    ns.create_subscription(
        "t",
        "s1",
        base.clone(),
        SubscriptionRule::Sql(Box::new(sql)),
    )
    .unwrap();
    ns.create_subscription(
        "t",
        "s2",
        EntitySettings {
            forward_to: Some("a".into()),
            ..base
        },
        SubscriptionRule::MatchAll,
    )
    .unwrap();
    ns
}

fn command(ns: &Namespace, op: &Op, tokens: &[(String, u64, String)]) -> Option<Command> {
    // MessageIds from a small pool, so duplicate detection (on c and t) drops some (DUP-02).
    // SessionIds from a pool of three; a message with a TTL divisible by 4 has none.
    // An application property `n` of each type SQL filters bind differently (FLT-03): an int, a
    // long, a double or a string that reads as a number.
    let message = |ttl: &Option<u32>| NewMessage {
        time_to_live: ttl.map(i64::from),
        message_id: ttl.map(|t| format!("m{}", t % 5)),
        application_properties: ttl
            .map(|t| {
                let n = t % 7;
                let value = match t % 4 {
                    0 => PropertyValue::Int(n as i32),
                    1 => PropertyValue::Long(i64::from(n)),
                    2 => PropertyValue::Double(f64::from(n) / 2.0),
                    _ => PropertyValue::String(n.to_string()),
                };
                ("n".to_string(), value)
            })
            .into_iter()
            .collect(),
        system_properties: ttl
            .filter(|t| t % 4 != 0)
            .map(|t| ("SessionId".to_string(), format!("s{}", t % 3)))
            .into_iter()
            .collect(),
        ..Default::default()
    };
    Some(match op {
        Op::Send { to, ttl, at_topic } => Command::Send {
            to: if *at_topic {
                "t".into()
            } else {
                QUEUES[*to as usize].into()
            },
            message: message(ttl),
        },
        Op::Schedule { to, in_ms, ttl } => Command::Schedule {
            to: if *to == 2 {
                "t".into()
            } else {
                QUEUES[*to as usize].into()
            },
            message: message(ttl),
            at: ns.now() + i64::from(*in_ms),
        },
        Op::Cancel { to, seq } => Command::CancelScheduled {
            to: SOURCES[*to as usize].into(),
            seq: u64::from(*seq),
        },
        Op::Receive {
            from,
            r,
            delete,
            count,
            renew,
        } => Command::Receive {
            receiver: RECEIVERS[*r as usize].into(),
            from: SOURCES[*from as usize].into(),
            mode: if *delete {
                ReceiveMode::ReceiveAndDelete
            } else {
                ReceiveMode::PeekLock
            },
            count: u32::from(*count),
            options: ReceiveOptions {
                max_auto_lock_renewal: renew.then_some(25 * SECOND),
                transfer_fails: *delete && *count == 3,
            },
        },
        Op::ReceiveDeferred { from, r, seqs } => Command::ReceiveDeferred {
            receiver: RECEIVERS[*r as usize].into(),
            from: SOURCES[*from as usize].into(),
            seqs: seqs.iter().map(|s| u64::from(*s)).collect(),
        },
        Op::Peek { from, r } => Command::Peek {
            receiver: RECEIVERS[*r as usize].into(),
            from: SOURCES[*from as usize].into(),
            from_seq: Some(1),
            count: 5,
        },
        Op::Settle {
            from,
            r,
            seq,
            how,
            token,
        } => {
            let earlier = token
                .filter(|_| !tokens.is_empty())
                .map(|i| &tokens[usize::from(i) % tokens.len()]);
            Command::Settle {
                receiver: RECEIVERS[*r as usize].into(),
                from: earlier.map_or_else(|| SOURCES[*from as usize].into(), |t| t.0.clone()),
                seq: earlier.map_or(u64::from(*seq), |t| t.1),
                settlement: match how {
                    0 | 5 => Settlement::Complete,
                    1 => Settlement::Abandon,
                    2 => Settlement::DeadLetter {
                        reason: Some("Test".into()),
                        description: None,
                    },
                    3 => Settlement::Defer,
                    6 => Settlement::Release,
                    _ => Settlement::RenewLock,
                },
                lock_token: earlier.map(|t| t.2.clone()),
            }
        }
        Op::Fault { kind, r, busy_ms } => Command::Fault(match kind {
            0 => Fault::ServiceUpdate,
            1 => Fault::OsUpdate,
            2 => Fault::Disconnect {
                receiver: RECEIVERS[*r as usize].into(),
            },
            _ => Fault::ServerBusy { duration: *busy_ms },
        }),
        Op::Update {
            entity,
            lock_s,
            max_delivery,
        } => {
            let path = ["a", "b", "d", "t/subscriptions/s1", "t"][*entity as usize];
            let mut settings = ns.entity(path)?.settings.clone();
            settings.lock_duration = i64::from(*lock_s) * SECOND;
            settings.max_delivery_count = u32::from(*max_delivery);
            Command::UpdateEntity {
                path: path.into(),
                settings,
            }
        }
        Op::Rule { add, name } => {
            let subscription = "t/subscriptions/s1".to_string();
            let name = format!("r{name}");
            if *add {
                // Each rule with an action: a message it matches gets a copy of its own. The
                // filter and the action compute over `n` by its type.
                let action = format!("SET rule = '{name}'; SET twice = N * 2");
                let rule =
                    sbp_engine::entity::SqlRule::new("n > 1 OR n = '3'", Some(&action)).ok()?;
                Command::CreateRule {
                    subscription,
                    name,
                    rule: SubscriptionRule::Sql(Box::new(rule)),
                }
            } else {
                Command::DeleteRule { subscription, name }
            }
        }
        Op::Session { r, op, session } => Command::Session {
            receiver: RECEIVERS[*r as usize].into(),
            from: if *op == 5 { "a".into() } else { "d".into() },
            op: match op {
                0 => SessionOp::Accept {
                    session_id: (*session < 3).then(|| format!("s{session}")),
                },
                1 => SessionOp::RenewLock,
                // Now and then a state over the limit: refused, changing nothing.
                2 => SessionOp::SetState {
                    state: Some(
                        if *session == 3 {
                            "x".repeat(sbp_engine::limits::MAX_SESSION_STATE + 1)
                        } else {
                            format!("v{session}")
                        }
                        .into(),
                    ),
                },
                3 => SessionOp::GetState,
                _ => SessionOp::Close,
            },
        },
        Op::Advance { .. } | Op::NextDue => return None,
    })
}

/// How many messages the log says are stored now: accepted minus gone.
fn live_from_log(ns: &Namespace) -> i64 {
    let topic = |id: u32| ns.entity_name(id) == "t";
    ns.log()
        .iter()
        .map(|e| match &e.kind {
            EventKind::Sent { .. } if !topic(e.entity) => 1,
            EventKind::Scheduled { .. } => 1,
            EventKind::Activated { .. } if topic(e.entity) => -1,
            EventKind::ScheduleCancelled
            | EventKind::Completed { .. }
            | EventKind::ReceivedAndDeleted { .. }
            | EventKind::LostInTransfer { .. }
            | EventKind::ExpiredDropped => -1,
            _ => 0,
        })
        .sum()
}

fn check_invariants(ns: &Namespace, realistic: bool) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        ns.stored_messages() as i64,
        live_from_log(ns),
        "every accepted message is in one place or has a terminal event"
    );
    // Sequence numbers each entity gave out: unique and increasing.
    let mut given: BTreeMap<u32, u64> = BTreeMap::new();
    for e in ns.log() {
        let (entity, seq) = match e.kind {
            EventKind::Sent { .. } if !matches!(e.rule, Some(Rule::Top01 | Rule::Flt04)) => {
                (e.entity, e.seq)
            }
            EventKind::Scheduled { .. } => (e.entity, e.seq),
            EventKind::Forwarded {
                to,
                new_sequence_number,
            } => (to, new_sequence_number),
            _ => continue,
        };
        let last = given.insert(entity, seq).unwrap_or(0);
        prop_assert!(
            seq > last,
            "{} gave #{seq} after #{last}",
            ns.entity_name(entity)
        );
    }
    for e in ns.entities() {
        // SES-02/03: in a session entity every locked message is held by its session's holder,
        // locked exactly as long as the session.
        if e.settings.requires_session {
            for m in e.main.messages.values() {
                let Some(lock) = &m.lock else { continue };
                let session = e
                    .sessions
                    .iter()
                    .find(|s| Some(s.id.as_str()) == m.session_id())
                    .and_then(|s| s.lock);
                prop_assert!(
                    session.is_some_and(|s| s.holder == lock.holder
                        && s.locked_until == lock.locked_until
                        && s.locked_until > ns.now()),
                    "#{} in {} is locked outside its session's lock",
                    m.sequence_number,
                    e.path
                );
            }
        }
        // A locked delivery's DeliveryCount (raw + 1, MSG-02) never passes MaxDeliveryCount.
        // (A stored message may sit above a MaxDeliveryCount lowered since; it is dead-lettered
        // when next delivered.)
        for m in e.main.messages.values().filter(|m| m.lock.is_some()) {
            prop_assert!(
                m.failed_deliveries < e.settings.max_delivery_count,
                "#{} in {} is locked with DeliveryCount {}, MaxDeliveryCount {}",
                m.sequence_number,
                e.path,
                m.failed_deliveries + 1,
                e.settings.max_delivery_count
            );
        }
        if !realistic {
            for m in e.main.messages.available() {
                let seq = m.sequence_number;
                prop_assert!(
                    m.expires_at > ns.now(),
                    "#{seq} in {} is receivable at {} past its ExpiresAt {}",
                    e.path,
                    ns.now(),
                    m.expires_at
                );
            }
        }
    }
    Ok(())
}

/// What a client or the UI can see: every stored message (with its lock), the receivers'
/// handles, the metrics, the clock. (Not the timer heap: a next-due query drops stale timers.)
fn observable(ns: &Namespace) -> String {
    let stores: Vec<_> = ns
        .entities()
        .map(|e| {
            (
                &e.path,
                &e.settings,
                &e.main.messages,
                &e.dlq.messages,
                &e.sessions,
            )
        })
        .collect();
    let receivers: Vec<_> = ns
        .receivers()
        .iter()
        .map(|r| (&r.name, &r.attached, &r.handles))
        .collect();
    format!("{:?} {stores:?} {receivers:?} {:?}", ns.now(), ns.metrics())
}

/// Runs `ops`, checking the invariants after each; returns the namespace.
fn run(
    ops: &[Op],
    seed: u64,
    realistic: bool,
    max_delivery: u32,
    observe: bool,
) -> Result<Namespace, TestCaseError> {
    let mut ns = namespace(seed, realistic, max_delivery);
    // Every LockToken a receive returned, current or stale, for settlements by token.
    let mut tokens: Vec<(String, u64, String)> = Vec::new();
    for op in ops {
        match op {
            Op::Advance { ms } => ns.advance_to(ns.now() + i64::from(*ms)),
            Op::NextDue => {
                if observe {
                    // Asking what is next only reads (`&self`), and answers what the engine
                    // answered when asking dropped the stale timers first.
                    let mut pruned = ns.clone();
                    prop_assert_eq!(ns.next_event(), pruned.next_event_after_pruning());
                    prop_assert_eq!(ns.next_due(), pruned.next_due());
                }
            }
            _ => {
                let Some(c) = command(&ns, op, &tokens) else {
                    continue;
                };
                // `apply` first fires what is due now; that is not the command's doing.
                let now = ns.now();
                ns.advance_to(now);
                let before = ns.clone();
                let receives_main = matches!(&c, Command::Receive { from, .. } if !from.ends_with("$deadletterqueue"));
                let result = ns.apply(now, c);
                if let Ok(Reply::Messages(got)) = &result {
                    tokens.extend(got.iter().filter_map(|m| {
                        Some((m.entity.clone(), m.sequence_number, m.lock_token.clone()?))
                    }));
                }
                match result {
                    Err(_) => prop_assert!(
                        ns.same_state_except_log(&before),
                        "a failed {op:?} changed the state"
                    ),
                    Ok(Reply::Messages(got)) if receives_main => {
                        for m in got {
                            prop_assert!(
                                !m.nominally_expired,
                                "received expired #{}",
                                m.sequence_number
                            );
                            let max = ns
                                .entity(&m.entity)
                                .map_or(u32::MAX, |e| e.settings.max_delivery_count);
                            prop_assert!(
                                m.delivery_count <= max || m.lock_token.is_none(),
                                "#{} delivered with DeliveryCount {} over {max}",
                                m.sequence_number,
                                m.delivery_count
                            );
                        }
                    }
                    Ok(_) => {}
                }
            }
        }
        check_invariants(&ns, realistic)?;
    }
    Ok(ns)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        max_shrink_iters: 2_000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn invariants_hold_over_random_operation_sequences(
        ops in prop::collection::vec(op(), 1..60),
        seed: u64,
        realistic: bool,
        max_delivery in 1u32..4,
    ) {
        let observed = run(&ops, seed, realistic, max_delivery, true)?;
        let unobserved = run(&ops, seed, realistic, max_delivery, false)?;
        prop_assert_eq!(observed.log(), unobserved.log(), "observing changed the log");
        prop_assert_eq!(observable(&observed), observable(&unobserved), "observing changed the state");
        let again = run(&ops, seed, realistic, max_delivery, true)?;
        prop_assert_eq!(observed.log(), again.log(), "the same seed gave another log");
        // A link's checkpoint: the state saved and taken up by a namespace built alike is the
        // same state and goes on alike (an hour, every timer firing).
        let mut resumed = namespace(seed, realistic, max_delivery);
        let bytes = observed.clone().save(|_| {});
        prop_assert_eq!(resumed.resume(&bytes, |_| {}), Ok(()));
        prop_assert!(resumed.same_state_except_log(&observed), "the state taken up differs");
        let (mut went_on, until) = (observed.clone(), observed.now() + 3_600_000);
        went_on.advance_to(until);
        resumed.advance_to(until);
        prop_assert_eq!(resumed.log(), &went_on.log()[observed.log().len()..], "the state taken up went on otherwise");
        prop_assert_eq!(observable(&resumed), observable(&went_on));
    }
}
