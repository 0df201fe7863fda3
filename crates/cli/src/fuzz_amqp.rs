//! `sbp fuzz --amqp`: `sbp serve`'s protocol core fed sequences of frames built with their
//! structure in mind, in process (no socket): an open and a begin most of the time, then
//! attaches to entities, `$cbs`, `$management` and nowhere, flows of any credit, transfers
//! whole, in pieces, aborted, beyond credit or on unknown handles, carrying messages whose
//! sections nest, batch and grow (or random bytes), dispositions over any range of ids
//! (wrapping ones too), detaches, ends, closes; and frames mutated from valid ones (bits
//! flipped, lengths changed, a value nested thousands deep). Each input runs on a fresh
//! broker. Checked: no panic; every frame the core says decodes; the bytes of unfinished
//! transfers all given back when the connection ends; the run's recording (what `--record`
//! writes) replays to the state the run reached; each input within 1 s and 64 MB.
use crate::fuzz::{peak_since, start_measuring};
use bytes::BytesMut;
use fe2o3_amqp_types::definitions::{
    Error as AmqpError, ReceiverSettleMode, Role, SenderSettleMode,
};
use fe2o3_amqp_types::messaging::{
    Accepted, AmqpSequence, AmqpValue, ApplicationProperties, Batch, Body, Data, DeliveryState,
    Message, Modified, Properties, Rejected, Released, Source, Target, TargetArchetype,
};
use fe2o3_amqp_types::performatives::{
    Attach, Begin, Close, Detach, Disposition, End, Flow, Open, Performative, Transfer,
};
use fe2o3_amqp_types::primitives::{Binary, OrderedMap, Symbol, Value};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use sbp_server::broker::Broker;
use sbp_server::conn::Connection;
use sbp_server::frame::{self, FRAME_AMQP};
use sbp_server::Shared;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The budget every input must keep.
const MAX_MS: f64 = 1_000.0;
const MAX_BYTES: usize = 64 * 1024 * 1024;

#[derive(Default)]
pub struct Report {
    pub inputs: u64,
    pub frames: u64,
    /// Broker operations the inputs' frames became.
    pub steps: u64,
    /// Inputs whose connection the core closed with an error (what bad frames should get).
    pub closed: u64,
    pub panics: u64,
    /// Frames the core said that do not decode.
    pub bad_output: u64,
    /// Inputs after which bytes of unfinished transfers were still held.
    pub leaks: u64,
    /// Inputs whose recording (what `--record` writes) did not replay to the state reached.
    pub diverged: u64,
    pub over_budget: u64,
    pub slowest_ms: f64,
    pub peak_bytes: usize,
    pub total_s: f64,
    /// Why the core closed connections, and how often (what the inputs reached).
    pub why_closed: std::collections::BTreeMap<String, u64>,
}

impl Report {
    /// The most frequent reasons the core closed a connection, most frequent first.
    pub fn top_reasons(&self, n: usize) -> Vec<(&str, u64)> {
        let mut all: Vec<(&str, u64)> = self
            .why_closed
            .iter()
            .map(|(w, c)| (w.as_str(), *c))
            .collect();
        all.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        all.truncate(n);
        all
    }

    pub fn failed(&self) -> bool {
        self.panics + self.bad_output + self.leaks + self.diverged + self.over_budget > 0
    }
}

const SCENARIO: &str = r#"{"version": 1, "entities": [
  {"queue": "orders", "max_delivery_count": 3},
  {"queue": "sessions", "requires_session": true},
  {"topic": "events"},
  {"subscription": "events/subscriptions/all"}
]}"#;

const ADDRESSES: [&str; 9] = [
    "orders",
    "orders/$management",
    "$cbs",
    "orders/$deadletterqueue",
    "sessions",
    "events",
    "events/subscriptions/all",
    "nowhere",
    "amqps://localhost/orders",
];

/// Runs `inputs` inputs from `seed`. An input that fails is written to
/// `sbp-fuzz-amqp-<n>.bin` (its frames' bytes, as a client would send them after the header).
pub fn run(inputs: u64, seed: u64, mut progress: impl FnMut(&Report)) -> Result<Report, String> {
    let scenario = sbp_scenario::Scenario::from_json(SCENARIO)
        .map_err(|e| format!("the fuzzer's own scenario: {e}"))?;
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut report = Report::default();
    let started = Instant::now();
    std::panic::set_hook(Box::new(|_| {}));
    for i in 0..inputs {
        let base = start_measuring();
        let t = Instant::now();
        let scenario = scenario.clone();
        let mut input_rng = Pcg64Mcg::seed_from_u64(rng.random());
        let mut sent = Vec::new();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_input(scenario, &mut input_rng, &mut sent)
        }));
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let bytes = peak_since(base);
        report.inputs += 1;
        report.frames += sent.len() as u64;
        let failed = match outcome {
            Ok(o) => {
                report.closed += u64::from(o.closed);
                report.steps += o.steps;
                if let Some(why) = o.why {
                    *report.why_closed.entry(why).or_default() += 1;
                }
                report.bad_output += o.bad_output;
                report.leaks += u64::from(o.leaked);
                report.diverged += u64::from(!o.replays);
                o.bad_output > 0 || o.leaked || !o.replays
            }
            Err(_) => {
                report.panics += 1;
                true
            }
        };
        report.slowest_ms = report.slowest_ms.max(ms);
        report.peak_bytes = report.peak_bytes.max(bytes);
        let over = ms > MAX_MS || bytes > MAX_BYTES;
        report.over_budget += u64::from(over);
        if failed || over {
            let _ = std::fs::write(format!("sbp-fuzz-amqp-{i}.bin"), sent.concat());
        }
        if (i + 1) % 10_000 == 0 {
            report.total_s = started.elapsed().as_secs_f64();
            progress(&report);
        }
    }
    let _ = std::panic::take_hook();
    report.total_s = started.elapsed().as_secs_f64();
    Ok(report)
}

struct Outcome {
    closed: bool,
    /// Why the core closed it (digits as N), when it did.
    why: Option<String>,
    /// The broker operations the frames became (sends, receives, settlements, requests).
    steps: u64,
    /// Whether the run's recording replays to the state it reached.
    replays: bool,
    bad_output: u64,
    leaked: bool,
}

/// Writes one input, a frame at a time, to a fresh connection core (each frame chosen knowing
/// what the core answered so far: a session it ended is begun again, a link it detached is
/// not named again, most of the time), the bytes parsed as the driver parses them; its clock
/// moves a little with each frame. The frames sent are kept in `sent` (the input, to write
/// down when it fails: the core is deterministic, so they replay it).
fn run_input(
    scenario: sbp_scenario::Scenario,
    rng: &mut Pcg64Mcg,
    sent: &mut Vec<Vec<u8>>,
) -> Outcome {
    const T0: i64 = 1_764_000_000_000;
    let mut outcome = Outcome {
        closed: false,
        why: None,
        steps: 0,
        replays: true,
        bad_output: 0,
        leaked: false,
    };
    let Ok(broker) = Broker::new(scenario, T0) else {
        return outcome;
    };
    let broker = broker.with_wall_clock(Arc::new(|| T0));
    let shared = Arc::new(Shared::new(broker));
    let mut now = Instant::now();
    let mut c = Connection::new("fuzz".into(), shared.clone(), now);
    let mut buf = BytesMut::new();
    let mut m = Model::default();
    let frames = rng.random_range(1..40);
    for _ in 0..frames {
        let bytes = next_frame(rng, &mut m);
        buf.extend_from_slice(&bytes);
        sent.push(bytes);
        while c.state() != sbp_server::conn::State::Closed {
            match frame::parse(&mut buf, frame::MAX_FRAME_SIZE) {
                Ok(Some(f)) => c.on_frame(now, f),
                Ok(None) => break,
                Err(e) => c.on_frame_error(&e),
            }
        }
        c.on_wake();
        now += Duration::from_millis(50);
        c.on_timeout(now);
        let said = c.take_output(now);
        outcome.bad_output += m.hear(&said);
        if c.state() == sbp_server::conn::State::Closed {
            outcome.closed = true;
            outcome.why = c
                .closed_because()
                .map(|why| why.split_once(": closing: ").map_or(why, |(_, w)| w))
                .map(|why| {
                    why.chars()
                        .map(|ch| if ch.is_ascii_digit() { 'N' } else { ch })
                        .collect::<String>()
                })
                .map(|why| why.chars().take(70).collect());
            break;
        }
    }
    c.end();
    outcome.leaked = shared.inflight() != 0;
    let recording = {
        let mut broker = shared.lock();
        outcome.steps = broker.sim.scenario().timeline.len() as u64;
        broker.recording()
    };
    let Ok(recording) = recording else {
        outcome.replays = false;
        return outcome;
    };
    // What `--record` writes replays to the state the live run reached.
    outcome.replays = sbp_scenario::Simulation::new(&recording)
        .map(|mut sim| sim.run_to_end())
        .unwrap_or(false);
    outcome
}

fn encode(channel: u16, p: &Performative, payload: &[u8]) -> Vec<u8> {
    frame::encode(FRAME_AMQP, channel, p, payload)
}

/// What the generator knows of the connection it is writing for: which handles it attached
/// (so most frames name one of them, and reach past the first checks).
#[derive(Default)]
struct Model {
    opened: bool,
    session: bool,
    attached: Vec<u32>,
    /// Of those, the ones the client receives on.
    receiving: Vec<u32>,
    /// Handles the core detached, not yet answered.
    detached: Vec<u32>,
    /// The core ended the session: the client's end is owed.
    ended: bool,
}

impl Model {
    /// A handle: an attached one most of the time (one the client receives on, or sends on,
    /// as asked), else any.
    fn handle(&self, rng: &mut Pcg64Mcg, receiving: bool) -> u32 {
        let fitting: Vec<u32> = self
            .attached
            .iter()
            .copied()
            .filter(|h| self.receiving.contains(h) == receiving)
            .collect();
        if !fitting.is_empty() && rng.random_bool(0.95) {
            fitting[rng.random_range(0..fitting.len())]
        } else if !self.attached.is_empty() && rng.random_bool(0.5) {
            self.attached[rng.random_range(0..self.attached.len())]
        } else {
            rng.random_range(0..8)
        }
    }
}

impl Model {
    /// Reads what the core said: a session or link it ended is gone. How many of its frames
    /// do not parse or decode (none should).
    fn hear(&mut self, out: &[u8]) -> u64 {
        let mut buf = BytesMut::from(out);
        let mut bad = 0;
        loop {
            match frame::parse(&mut buf, u32::MAX) {
                Ok(Some(f)) if f.body.is_empty() => {}
                Ok(Some(f)) => match frame::decode_performative(f.body) {
                    Ok((Performative::End(e), _)) => {
                        // Ours answered, or the server's own: then the client answers it.
                        self.ended = e.error.is_some();
                        self.session = false;
                        self.attached.clear();
                        self.receiving.clear();
                    }
                    Ok((Performative::Detach(d), _)) => {
                        self.attached.retain(|h| *h != d.handle.0);
                        self.receiving.retain(|h| *h != d.handle.0);
                        self.detached.push(d.handle.0);
                    }
                    Ok(_) => {}
                    Err(_) => bad += 1,
                },
                Ok(None) => return bad + u64::from(!buf.is_empty()),
                Err(_) => return bad + 1,
            }
        }
    }
}

/// The next frame a client sends, after the protocol header: an open and a begin first (most
/// of the time), then what a session's frames are, a few of them breaking its state.
fn next_frame(rng: &mut Pcg64Mcg, m: &mut Model) -> Vec<u8> {
    if !m.opened && rng.random_bool(0.97) {
        m.opened = true;
        return encode(0, &open(rng), &[]);
    }
    if m.ended && rng.random_bool(0.95) {
        m.ended = false;
        return encode(0, &Performative::End(End { error: None }), &[]);
    }
    if !m.session && !m.ended && rng.random_bool(0.95) {
        m.session = true;
        m.attached.clear();
        return encode(0, &begin(), &[]);
    }
    // A detach of ours is answered, most of the time.
    if let Some(handle) = m.detached.pop() {
        if rng.random_bool(0.9) {
            let detach = Detach {
                handle: handle.into(),
                closed: true,
                error: None,
            };
            return encode(0, &Performative::Detach(detach), &[]);
        }
    }
    // About 3 frames in 100 break the state (another channel, a second begin, a close, a
    // nested or mutated frame).
    let channel = if rng.random_bool(0.01) {
        rng.random_range(1..4)
    } else {
        0
    };
    let mut pick = rng.random_range(0..1000);
    // A flow or a transfer with no link of its kind attached: an attach first, mostly.
    let kind = match pick {
        200..=349 => Some(true),
        350..=679 => Some(false),
        _ => None,
    };
    if let Some(receiving) = kind {
        let none = !m
            .attached
            .iter()
            .any(|h| m.receiving.contains(h) == receiving);
        if none && rng.random_bool(0.9) {
            pick = if receiving { 0 } else { 100 };
        }
    }
    match pick {
        0..=199 => {
            let handle = if rng.random_bool(0.95) {
                (0..8).find(|h| !m.attached.contains(h)).unwrap_or(0)
            } else {
                rng.random_range(0..8)
            };
            if !m.attached.contains(&handle) {
                m.attached.push(handle);
            }
            // The first half of the range receives, the second sends.
            let receives = if pick < 100 {
                rng.random_bool(0.8)
            } else {
                rng.random_bool(0.2)
            };
            m.receiving.retain(|h| *h != handle);
            if receives {
                m.receiving.push(handle);
            }
            let role = if receives {
                Role::Receiver
            } else {
                Role::Sender
            };
            encode(channel, &attach(rng, handle, role), &[])
        }
        200..=349 => {
            let handle = m.handle(rng, true);
            encode(channel, &flow(rng, handle), &[])
        }
        350..=679 => {
            let handle = m.handle(rng, false);
            let (t, payload) = transfer(rng, handle);
            encode(channel, &t, &payload)
        }
        680..=899 => encode(channel, &disposition(rng), &[]),
        900..=949 => {
            let receiving = rng.random_bool(0.5);
            let handle = m.handle(rng, receiving);
            m.attached.retain(|h| *h != handle);
            let detach = Detach {
                handle: handle.into(),
                closed: rng.random_bool(0.8),
                error: None,
            };
            encode(channel, &Performative::Detach(detach), &[])
        }
        950..=959 => {
            m.session = false;
            encode(0, &Performative::End(End { error: None }), &[])
        }
        960..=961 => encode(0, &Performative::Close(Close { error: None }), &[]),
        962..=964 => encode(channel, &begin(), &[]),
        965..=979 => vec![0, 0, 0, 8, 2, 0, 0, 0], // a heartbeat
        980..=986 => nested_frame(rng),
        _ => {
            // A valid frame, mutated.
            let handle = m.handle(rng, false);
            let (t, payload) = transfer(rng, handle);
            mutate(rng, encode(channel, &t, &payload))
        }
    }
}

fn open(rng: &mut Pcg64Mcg) -> Performative {
    Performative::Open(Open {
        container_id: if rng.random_bool(0.02) {
            "c".repeat(2_000)
        } else {
            "fuzz".into()
        },
        hostname: None,
        max_frame_size: [512, 4096, 65_536, u32::MAX][rng.random_range(0..4)].into(),
        channel_max: rng.random_range(0..20u16).into(),
        idle_time_out: rng.random_bool(0.3).then(|| rng.random_range(0..5_000)),
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    })
}

fn begin() -> Performative {
    Performative::Begin(Begin {
        remote_channel: None,
        next_outgoing_id: 0,
        incoming_window: 10_000,
        outgoing_window: 10_000,
        handle_max: 100.into(),
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    })
}

fn attach(rng: &mut Pcg64Mcg, handle: u32, client_role: Role) -> Performative {
    let address = if rng.random_bool(0.5) {
        "orders"
    } else {
        ADDRESSES[rng.random_range(0..ADDRESSES.len())]
    }
    .to_string();
    let mut source = Source {
        address: Some(address.clone()),
        ..Default::default()
    };
    if rng.random_bool(0.2) {
        let mut filter = OrderedMap::new();
        let wanted = match rng.random_range(0..3) {
            0 => Value::Null,
            1 => Value::String("s1".into()),
            _ => Value::String("x".repeat(200)),
        };
        filter.insert(Symbol::from("com.microsoft:session-filter"), wanted);
        source.filter = Some(filter);
    }
    Performative::Attach(Attach {
        name: format!("link-{}", rng.random_range(0..8)),
        handle: handle.into(),
        role: client_role.clone(),
        snd_settle_mode: if rng.random_bool(0.8) {
            SenderSettleMode::Unsettled
        } else {
            SenderSettleMode::Settled
        },
        rcv_settle_mode: ReceiverSettleMode::First,
        source: Some(Box::new(source)),
        target: Some(Box::new(TargetArchetype::Target(Target {
            address: Some(address),
            ..Default::default()
        }))),
        unsettled: None,
        incomplete_unsettled: false,
        initial_delivery_count: (client_role == Role::Sender).then(|| rng.random()),
        max_message_size: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    })
}

fn flow(rng: &mut Pcg64Mcg, handle: u32) -> Performative {
    Performative::Flow(Flow {
        next_incoming_id: Some(rng.random_range(0..10)),
        incoming_window: rng.random(),
        next_outgoing_id: rng.random_range(0..10),
        outgoing_window: rng.random(),
        handle: rng.random_bool(0.95).then(|| handle.into()),
        delivery_count: rng.random_bool(0.8).then(|| rng.random_range(0..20)),
        link_credit: Some(if rng.random_bool(0.1) {
            u32::MAX
        } else {
            rng.random_range(0..200)
        }),
        available: None,
        drain: rng.random_bool(0.3),
        echo: rng.random_bool(0.1),
        properties: None,
    })
}

fn transfer(rng: &mut Pcg64Mcg, handle: u32) -> (Performative, Vec<u8>) {
    let more = rng.random_bool(0.15);
    let t = Transfer {
        handle: handle.into(),
        delivery_id: Some(rng.random_range(0..20)),
        delivery_tag: Some(Binary::from(vec![rng.random(); 4])),
        message_format: Some(if rng.random_bool(0.1) { 0x8001_3700 } else { 0 }),
        settled: Some(rng.random_bool(0.2)),
        more,
        rcv_settle_mode: None,
        state: None,
        resume: false,
        aborted: rng.random_bool(0.05),
        batchable: false,
    };
    let payload = match rng.random_range(0..10) {
        0 => (0..rng.random_range(0..300))
            .map(|_| rng.random())
            .collect(),
        1 => vec![0x40; rng.random_range(0..200_000)],
        2 => request(rng),
        _ => message(rng),
    };
    (Performative::Transfer(t), payload)
}

/// A value nested `depth` deep in lists, maps and described values.
fn nested_value(rng: &mut Pcg64Mcg, depth: usize) -> Value {
    let mut v = Value::String("leaf".into());
    for _ in 0..depth {
        v = match rng.random_range(0..3) {
            0 => Value::List(vec![v]),
            1 => {
                let mut m = OrderedMap::new();
                m.insert(Value::String("k".into()), v);
                Value::Map(m)
            }
            _ => Value::Described(Box::new(serde_amqp::described::Described {
                descriptor: serde_amqp::descriptor::Descriptor::Code(0x77),
                value: v,
            })),
        };
    }
    v
}

fn message(rng: &mut Pcg64Mcg) -> Vec<u8> {
    let body = match rng.random_range(0..4) {
        0 => Body::Data(Batch::new(vec![Data(Binary::from(vec![
            b'x';
            rng.random_range(
                0..6_000
            )
        ]))])),
        1 => {
            let depth = rng.random_range(0..80);
            Body::Value(AmqpValue(nested_value(rng, depth)))
        }
        2 => Body::Sequence(Batch::new(vec![AmqpSequence(vec![Value::Int(
            rng.random(),
        )])])),
        _ => Body::Value(AmqpValue(Value::String("hello".into()))),
    };
    let mut props = ApplicationProperties::builder();
    for i in 0..rng.random_range(0..4) {
        props = props.insert(format!("p{i}"), "v".repeat(rng.random_range(0..300)));
    }
    let m: Message<Body<Value>> = Message::builder()
        .properties(Properties {
            message_id: Some(format!("m{}", rng.random_range(0..50)).into()),
            ..Default::default()
        })
        .application_properties(props.build())
        .body(body)
        .build();
    sbp_server::message::encode(m)
}

/// A `$management` request (or a `$cbs` token): an operation the server knows or not, with a
/// body of the fields it reads, some of them wrong.
fn request(rng: &mut Pcg64Mcg) -> Vec<u8> {
    const OPERATIONS: [&str; 6] = [
        "com.microsoft:peek-message",
        "com.microsoft:renew-lock",
        "com.microsoft:receive-by-sequence-number",
        "com.microsoft:update-disposition",
        "com.microsoft:set-session-state",
        "com.microsoft:nothing",
    ];
    let mut body = OrderedMap::new();
    body.insert(
        Value::String("from-sequence-number".into()),
        Value::Long(rng.random_range(-2..5)),
    );
    body.insert(
        Value::String("message-count".into()),
        Value::Int(rng.random()),
    );
    body.insert(
        Value::String("sequence-numbers".into()),
        Value::List(vec![Value::Long(rng.random_range(0..5))]),
    );
    body.insert(
        Value::String("lock-tokens".into()),
        Value::List(vec![Value::Uuid([rng.random(); 16].into())]),
    );
    body.insert(
        Value::String("disposition-status".into()),
        Value::String("completed".into()),
    );
    let m: Message<Body<Value>> = Message::builder()
        .properties(Properties {
            message_id: Some(String::from("r").into()),
            reply_to: Some("link-1".to_string()),
            ..Default::default()
        })
        .application_properties(
            ApplicationProperties::builder()
                .insert(
                    "operation",
                    OPERATIONS[rng.random_range(0..OPERATIONS.len())],
                )
                .build(),
        )
        .body(Body::Value(AmqpValue(Value::Map(body))))
        .build();
    sbp_server::message::encode(m)
}

fn disposition(rng: &mut Pcg64Mcg) -> Performative {
    let first = if rng.random_bool(0.2) {
        u32::MAX - rng.random_range(0..5)
    } else {
        rng.random_range(0..20)
    };
    let last = match rng.random_range(0..4) {
        0 => None,
        1 => Some(u32::MAX),
        2 => Some(rng.random_range(0..20)),
        _ => Some(first.wrapping_add(rng.random_range(0..5))),
    };
    let state = match rng.random_range(0..6) {
        0 => DeliveryState::Accepted(Accepted {}),
        1 => DeliveryState::Released(Released {}),
        2 => DeliveryState::Modified(Modified {
            delivery_failed: Some(true),
            undeliverable_here: Some(rng.random_bool(0.5)),
            message_annotations: None,
        }),
        3 => DeliveryState::Rejected(Rejected {
            error: Some(AmqpError {
                condition: fe2o3_amqp_types::definitions::ErrorCondition::Custom(Symbol::from(
                    "com.microsoft:dead-letter",
                )),
                description: Some("d".into()),
                info: None,
            }),
        }),
        4 => DeliveryState::Rejected(Rejected { error: None }),
        _ => DeliveryState::Accepted(Accepted {}),
    };
    Performative::Disposition(Disposition {
        role: if rng.random_bool(0.9) {
            Role::Receiver
        } else {
            Role::Sender
        },
        first,
        last,
        settled: rng.random_bool(0.5),
        state: Some(state),
        batchable: false,
    })
}

/// An open whose properties hold a value nested up to thousands deep (what overflowed the
/// decoder's stack).
fn nested_frame(rng: &mut Pcg64Mcg) -> Vec<u8> {
    let depth = [10, 63, 64, 65, 300, 10_000][rng.random_range(0..6)];
    sbp_server::decode::nested_open_frame(depth)
}

/// Bits flipped, a length field changed, or bytes cut or added.
fn mutate(rng: &mut Pcg64Mcg, mut bytes: Vec<u8>) -> Vec<u8> {
    for _ in 0..rng.random_range(1..6) {
        if bytes.is_empty() {
            break;
        }
        let at = rng.random_range(0..bytes.len());
        match rng.random_range(0..4) {
            0 => bytes[at] ^= 1 << rng.random_range(0..8),
            1 => {
                bytes[at] =
                    [0x00, 0x40, 0xa1, 0xb1, 0xc0, 0xd0, 0xe0, 0xf0, 0xff][rng.random_range(0..9)]
            }
            2 => bytes.truncate(at.max(8)),
            _ => {
                let extra: Vec<u8> = (0..rng.random_range(1..20)).map(|_| rng.random()).collect();
                bytes.splice(at..at, extra);
            }
        }
    }
    // The frame's size field kept true most of the time, so the body is what is fuzzed.
    if bytes.len() >= 8 && rng.random_bool(0.8) {
        let size = (bytes.len() as u32).to_be_bytes();
        bytes[..4].copy_from_slice(&size);
    }
    bytes
}
