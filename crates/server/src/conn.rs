//! One client connection: SASL, then the AMQP connection, its sessions and links, as the
//! Service Bus SDKs use them (../shared/AMQP-NOTES.md, each fact with the SDK file it was read
//! from). A small broker-side state machine on fe2o3-amqp-types and serde_amqp: the delivery
//! tags (16-byte lock tokens) and the dispositions echoed are this server's to decide.
use crate::broker::{QueueKey, Settle};
use crate::frame::{self, FrameError, RawFrame, FRAME_AMQP, FRAME_SASL};
use crate::message::{self, Shown};
use crate::shared::Shared;
use bytes::BytesMut;
use fe2o3_amqp_types::definitions::{Error as AmqpError, ErrorCondition, Role, SenderSettleMode};
use fe2o3_amqp_types::messaging::{
    Accepted, AmqpValue, ApplicationProperties, Body, DeliveryState, Message, MessageId, Modified,
    Properties, Rejected, TargetArchetype,
};
use fe2o3_amqp_types::performatives::{
    Attach, Begin, Close, Detach, Disposition, End, Flow, Open, Performative, Transfer,
};
use fe2o3_amqp_types::primitives::{Array, Binary, OrderedMap, SimpleValue, Symbol, Value};
use fe2o3_amqp_types::sasl::{SaslCode, SaslInit, SaslMechanisms, SaslOutcome};
use sbp_engine::{BrokerError, ErrorKind};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// The source filter that asks for a session (azure-sdk-for-python `_common/constants.py`).
const SESSION_FILTER: &str = "com.microsoft:session-filter";
/// .NET ticks at the Unix epoch: the session's locked-until travels in ticks.
const DOTNET_EPOCH_TICKS: i64 = 621_355_968_000_000_000;

/// The bounds one connection keeps (said in the error when one is passed).
pub const MAX_SESSIONS: usize = 16;
pub const MAX_LINKS_PER_SESSION: usize = 64;
/// The longest container id, link name or address taken (an entity path is at most 260
/// characters; the SDKs' link names add a GUID).
pub const MAX_NAME: usize = 1024;
/// Credit granted to a client's sender link at a time.
const SENDER_CREDIT: u32 = 1000;
/// The most messages one delivery round takes from the engine for a link.
const MAX_ROUND: u32 = 100;

#[derive(Clone, Debug)]
enum Node {
    Cbs,
    /// `<entity>/$management`.
    Management(String),
    Entity(String),
}

#[derive(Debug)]
struct Link {
    name: String,
    /// The client's role: true when the client receives.
    client_receives: bool,
    node: Node,
    peek_lock: bool,
    /// SES-02: the session this receiver holds (a session filter on attach).
    session: Option<String>,
    credit: u32,
    delivery_count: u32,
    drain: bool,
    /// A transfer arriving in several frames.
    partial: Option<(Transfer, BytesMut)>,
    /// The queue a receiving link takes from, as the broker's log names it: what it waits on.
    queue: Option<QueueKey>,
}

#[derive(Debug, Default)]
struct Session {
    out_channel: u16,
    next_outgoing_id: u32,
    next_delivery_id: u32,
    links: HashMap<u32, Link>,
    /// Delivery id -> lock token, for the client's dispositions (a range of ids settles what
    /// is here in it, nothing else).
    unsettled: BTreeMap<u32, String>,
    /// Handles this server detached whose client has not answered yet: frames still in flight
    /// on them are passed over, not taken for frames on an unknown handle.
    detaching: std::collections::BTreeSet<u32>,
    /// How many unsettled deliveries make the next look for those the broker let go.
    prune_unsettled_at: usize,
    /// Transfers the client may still send before this server widens its incoming window
    /// again (part 2, 2.5.6); one beyond it ends the session with window-violation.
    incoming_left: u32,
}

pub struct Conn {
    id: u64,
    peer: String,
    client: String,
    shared: Arc<Shared>,
    out: Vec<u8>,
    max_frame: u32,
    sessions: HashMap<u16, Session>,
    closed: bool,
    /// Whether the client's `open` came (every other frame must follow it).
    opened: bool,
    /// The idle time-out the client's `open` asked for: empty frames go out at half of it.
    peer_idle: Option<std::time::Duration>,
    /// The largest message (the tier's, SEND-04) plus [`FRAMING`]: what one unfinished
    /// transfer may gather.
    max_delivery: usize,
    /// Bytes of unfinished transfers this connection holds (at most [`CONN_INFLIGHT`]).
    inflight: usize,
    /// Woken when a queue this connection waits on is touched ([`Shared::bump`]).
    wake: Arc<tokio::sync::Notify>,
    /// The queues this connection's receiving links with credit wait on, as registered.
    waiting_on: BTreeSet<QueueKey>,
}

/// What a message's sections may add to its body, header and properties included, over the
/// tier's largest message.
pub const FRAMING: usize = 64 * 1024;
/// Bytes of unfinished transfers one connection may hold, all its links together.
pub const CONN_INFLIGHT: usize = 64 * 1024 * 1024;
/// Unsettled deliveries a session keeps before the first look for those the broker let go.
const PRUNE_UNSETTLED_FROM: usize = 1_024;
/// The incoming window this server grants a session, in transfer frames; widened again when
/// half of it is used.
pub const INCOMING_WINDOW: u32 = 8192;

/// An AMQP error with all three fields written: the Python SDK reads a rejected send's error
/// as `[condition, description, info]` and fails on a shorter list (`_pyamqp/client.py`
/// `_on_send_complete`).
fn error(condition: &str, description: impl Into<String>) -> AmqpError {
    AmqpError {
        condition: ErrorCondition::Custom(Symbol::from(condition)),
        description: Some(description.into()),
        info: Some(Box::default()),
    }
}

/// The AMQP condition the SDKs map each error to (azure-sdk-for-js core-amqp `errors.ts`,
/// .NET `AmqpExceptionHelper`).
pub fn condition(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::MessageLockLost => "com.microsoft:message-lock-lost",
        ErrorKind::MessageNotFound => "com.microsoft:message-not-found",
        ErrorKind::MessagingEntityNotFound => "amqp:not-found",
        ErrorKind::MessagingEntityAlreadyExists => "com.microsoft:entity-already-exists",
        ErrorKind::QuotaExceeded => "amqp:resource-limit-exceeded",
        ErrorKind::MessageSizeExceeded => "amqp:link:message-size-exceeded",
        ErrorKind::ServerBusy => "com.microsoft:server-busy",
        ErrorKind::ArgumentOutOfRange => "com.microsoft:argument-out-of-range",
        ErrorKind::NotSupported => "amqp:not-implemented",
        ErrorKind::InvalidOperation => "amqp:not-allowed",
        ErrorKind::SessionLockLost => "com.microsoft:session-lock-lost",
        ErrorKind::SessionCannotBeLocked => "com.microsoft:session-cannot-be-locked",
        ErrorKind::ServiceTimeout => "com.microsoft:timeout",
    }
}

/// The delivery ids of `unsettled` from `first` to `last`, as serial numbers (RFC 1982, as
/// part 2, 2.8.10 has them): a range whose end is below its start wraps past 2^32.
fn unsettled_in(unsettled: &BTreeMap<u32, String>, first: u32, last: u32) -> Vec<u32> {
    if first <= last {
        unsettled.range(first..=last).map(|(id, _)| *id).collect()
    } else {
        unsettled
            .range(first..)
            .chain(unsettled.range(..=last))
            .map(|(id, _)| *id)
            .collect()
    }
}

/// Settlement results in runs: ids in a row (each the one after the last, wrapping) that had
/// no failure go as one range; a failure goes alone with its error.
fn runs(results: &[(u32, Option<BrokerError>)]) -> Vec<(u32, u32, Option<&BrokerError>)> {
    let mut out: Vec<(u32, u32, Option<&BrokerError>)> = Vec::new();
    for (id, failure) in results {
        match (out.last_mut(), failure) {
            (Some((_, last, None)), None) if last.wrapping_add(1) == *id => *last = *id,
            _ => out.push((*id, *id, failure.as_ref())),
        }
    }
    out
}

/// A frame naming a handle that is not attached: a session error (part 2, 2.7.5 and 2.8.15).
fn unattached(handle: u32) -> AmqpError {
    error(
        "amqp:session:unattached-handle",
        format!("handle {handle} is not attached"),
    )
}

fn broker_error(e: &BrokerError) -> AmqpError {
    let text = e.message.to_string();
    // The JavaScript SDK knows a missing entity by the service's words (core-amqp
    // `translate`: /The messaging entity .* could not be found/).
    let description = if e.kind == ErrorKind::MessagingEntityNotFound {
        format!("The messaging entity named here could not be found: {text}")
    } else {
        text
    };
    error(condition(e.kind), description)
}

/// The entity path an address names: without `amqps://host/` or `sb://host/`, with the
/// SDKs' `Subscriptions` and `$DeadLetterQueue` as the engine spells them.
pub fn entity_path(address: &str) -> String {
    let path = match address.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or("", |(_, p)| p),
        None => address,
    };
    path.trim_matches('/')
        .split('/')
        .map(|seg| {
            if seg.eq_ignore_ascii_case("subscriptions") {
                "subscriptions".to_string()
            } else if seg.eq_ignore_ascii_case("$deadletterqueue") {
                "$deadletterqueue".to_string()
            } else {
                seg.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn node_of(address: &str) -> Node {
    let path = entity_path(address);
    if path.eq_ignore_ascii_case("$cbs") {
        Node::Cbs
    } else if let Some(entity) = path
        .strip_suffix("/$management")
        .or_else(|| path.strip_suffix("/$Management"))
    {
        Node::Management(entity.to_string())
    } else {
        Node::Entity(path)
    }
}

/// The receiver a `$management` request speaks for (`associated-link-name`).
fn associated_link(m: &message::WireMessage) -> Option<String> {
    match app_prop(m, "associated-link-name")? {
        SimpleValue::String(s) => Some(s.clone()),
        SimpleValue::Symbol(s) => Some(s.0.clone()),
        _ => None,
    }
}

fn app_prop<'a>(m: &'a message::WireMessage, key: &str) -> Option<&'a SimpleValue> {
    m.application_properties
        .as_ref()?
        .0
        .iter()
        .find(|(k, _)| k.as_str() == key)
        .map(|(_, v)| v)
}

/// `SBP_SERVE_TRACE=1`: every frame in and out on stderr.
fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("SBP_SERVE_TRACE").is_some_and(|v| v == "1"))
}

/// The protocol headers and SASL, up to the AMQP header: what every connection goes through
/// first, a refused one too. SASL offers ANONYMOUS (Python, JavaScript), MSSBCBS (.NET) and
/// PLAIN; any credentials are taken: the endpoint is for local development. False when the
/// client is not one this server can go on with (it has been told where the protocol allows).
async fn greet(reader: &mut OwnedReadHalf, writer: &mut OwnedWriteHalf) -> bool {
    let Ok(mut header) = frame::read_header(reader).await else {
        return false;
    };
    if header == frame::SASL_HEADER {
        let mechanisms = SaslMechanisms {
            sasl_server_mechanisms: Array(vec![
                Symbol::from("ANONYMOUS"),
                Symbol::from("MSSBCBS"),
                Symbol::from("PLAIN"),
            ]),
        };
        let mut out = frame::SASL_HEADER.to_vec();
        out.extend(frame::encode(FRAME_SASL, 0, &mechanisms, &[]));
        if writer.write_all(&out).await.is_err() {
            return false;
        }
        let init = match frame::read_frame(reader, frame::MIN_MAX_FRAME_SIZE * 8).await {
            Ok(f) if f.kind == FRAME_SASL => frame::decode_sasl::<SaslInit>(&f.body).is_ok(),
            _ => false,
        };
        let outcome = SaslOutcome {
            code: if init { SaslCode::Ok } else { SaslCode::Auth },
            additional_data: None,
        };
        let _ = writer
            .write_all(&frame::encode(FRAME_SASL, 0, &outcome, &[]))
            .await;
        if !init {
            return false;
        }
        header = match frame::read_header(reader).await {
            Ok(h) => h,
            Err(_) => return false,
        };
    }
    // The header this server speaks, then, for any other, the connection ends (part 2, 2.2).
    let _ = writer.write_all(&frame::AMQP_HEADER).await;
    header == frame::AMQP_HEADER
}

/// How long a refused connection is given to hear why (its headers and SASL, then `open` and
/// `close`): it is closed at the end of it whatever it sent.
pub const REFUSE_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Answers a connection the server cannot take: after SASL (if asked) and the AMQP header,
/// an `open` and a `close` carrying `amqp:resource-limit-exceeded` with the limit named; all
/// within [`REFUSE_TIME`].
pub async fn refuse(stream: TcpStream, why: String) {
    let (mut reader, mut writer) = stream.into_split();
    let answer = async {
        if !greet(&mut reader, &mut writer).await {
            return;
        }
        let mut out = frame::encode(FRAME_AMQP, 0, &Performative::Open(our_open(0, None)), &[]);
        let close = Close {
            error: Some(error("amqp:resource-limit-exceeded", why)),
        };
        out.extend(frame::encode(
            FRAME_AMQP,
            0,
            &Performative::Close(close),
            &[],
        ));
        let _ = writer.write_all(&out).await;
    };
    let _ = tokio::time::timeout(REFUSE_TIME, answer).await;
}

/// This server's `open`: its name, the largest frame, the channels it takes and the idle
/// time-out it keeps.
fn our_open(channel_max: u16, idle: Option<std::time::Duration>) -> Open {
    Open {
        container_id: "sbp-serve".into(),
        hostname: None,
        max_frame_size: frame::MAX_FRAME_SIZE.into(),
        channel_max: channel_max.into(),
        idle_time_out: idle.map(|d| u32::try_from(d.as_millis()).unwrap_or(u32::MAX)),
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    }
}

/// An empty frame: AMQP's heartbeat (part 2, 2.4.5).
const HEARTBEAT: [u8; 8] = [0, 0, 0, 8, 2, 0, 0, 0];

impl Conn {
    pub fn new(peer: String, shared: Arc<Shared>) -> Conn {
        let id = shared
            .next_client
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let largest = shared.lock().sim.ns.tier().max_message_size();
        let max_delivery = usize::try_from(largest)
            .unwrap_or(usize::MAX)
            .saturating_add(FRAMING);
        Conn {
            id,
            peer,
            client: String::new(),
            shared,
            out: Vec::new(),
            max_frame: frame::MAX_FRAME_SIZE,
            sessions: HashMap::new(),
            closed: false,
            opened: false,
            peer_idle: None,
            max_delivery,
            inflight: 0,
            wake: Arc::default(),
            waiting_on: BTreeSet::new(),
        }
    }

    fn who(&self) -> String {
        if self.client.is_empty() {
            self.peer.clone()
        } else {
            self.client.chars().take(24).collect()
        }
    }

    /// Says who this client is and which entities its links reach, for the live page.
    fn publish(&self) {
        let mut links: Vec<serde_json::Value> = self
            .sessions
            .values()
            .flat_map(|s| s.links.values())
            .filter_map(|l| match &l.node {
                Node::Entity(path) => Some(serde_json::json!({
                    "role": if l.client_receives { "receiver" } else { "sender" },
                    "entity": path,
                    "name": l.name,
                    "session": l.session,
                })),
                _ => None,
            })
            .collect();
        links.sort_by_key(|l| l.to_string());
        let name = if self.client.is_empty() {
            &self.peer
        } else {
            &self.client
        };
        self.shared.set_client(
            self.id,
            Some(serde_json::json!({ "name": name, "links": links })),
        );
    }

    fn push(&mut self, channel: u16, p: Performative, payload: &[u8]) {
        if trace() {
            eprintln!("-> {} [{channel}] {p:?}", self.who());
        }
        self.out
            .extend_from_slice(&frame::encode(FRAME_AMQP, channel, &p, payload));
    }

    /// Runs the connection to its end. Errors that end it are said to the client in `close`.
    /// The client has [`Limits::handshake`] from the accept to its `open`; after that, a
    /// connection silent for longer than [`Limits::idle`] (the idle time-out our `open`
    /// offers) is closed, and when the client's `open` asks for an idle time-out, an empty
    /// frame goes out at half of it whenever nothing else did.
    ///
    /// [`Limits::handshake`]: crate::shared::Limits::handshake
    /// [`Limits::idle`]: crate::shared::Limits::idle
    pub async fn run(mut self, stream: TcpStream) {
        let limits = self.shared.limits;
        let handshake_ends = tokio::time::Instant::now() + limits.handshake;
        let (mut reader, mut writer) = stream.into_split();
        let greeted =
            tokio::time::timeout_at(handshake_ends, greet(&mut reader, &mut writer)).await;
        if greeted != Ok(true) {
            return;
        }
        // One frame read ahead at most: what a connection holds is bounded by two frames.
        let (tx, mut rx) = mpsc::channel::<Result<RawFrame, FrameError>>(1);
        let max = self.max_frame;
        let read_task = tokio::spawn(async move {
            loop {
                let f = frame::read_frame(&mut reader, max).await;
                let end = f.is_err();
                if tx.send(f).await.is_err() || end {
                    break;
                }
            }
        });
        let mut heard = tokio::time::Instant::now();
        let mut said = tokio::time::Instant::now();
        while !self.closed {
            // Before the client's open: the handshake's end; after: the idle time-out.
            let silent_until = if self.opened {
                heard + limits.idle
            } else {
                handshake_ends
            };
            let heartbeat_at = self.peer_idle.map(|t| said + t / 2);
            tokio::select! {
                f = rx.recv() => {
                    heard = tokio::time::Instant::now();
                    match f {
                        Some(Ok(f)) => self.on_frame(f),
                        Some(Err(FrameError::Closed)) | None => break,
                        Some(Err(e)) => {
                            let err = match &e {
                                FrameError::TooLarge { .. } => error("amqp:connection:framing-error", e.to_string()),
                                _ => error("amqp:decode-error", e.to_string()),
                            };
                            self.close(err);
                        }
                    }
                },
                _ = self.wake.notified() => self.deliver_all(),
                _ = tokio::time::sleep_until(silent_until) => {
                    let why = if self.opened {
                        format!("no frame for {} s: the idle time-out this server's open offered", limits.idle.as_secs())
                    } else {
                        format!("no open within {} s of connecting (sbp serve's handshake time-out)", limits.handshake.as_secs())
                    };
                    self.close(error("amqp:resource-limit-exceeded", why));
                }
                _ = tokio::time::sleep_until(heartbeat_at.unwrap_or(silent_until)), if heartbeat_at.is_some() => {
                    if self.out.is_empty() {
                        self.out.extend_from_slice(&HEARTBEAT);
                    }
                }
            }
            self.wait_on_queues();
            if !self.out.is_empty() {
                // What is answered (a send's disposition above all) is on disk first
                // (`--state`): one sync covers every step recorded so far.
                self.shared.sync_journal();
                let out = std::mem::take(&mut self.out);
                if writer.write_all(&out).await.is_err() {
                    break;
                }
                said = tokio::time::Instant::now();
            }
        }
        read_task.abort();
        self.drop_partials();
        self.shared
            .wait_on(self.id, &self.waiting_on, &BTreeSet::new(), &self.wake);
        self.shared.set_client(self.id, None);
    }

    /// Ends the connection with `err` said in a `close`.
    fn close(&mut self, err: AmqpError) {
        eprintln!(
            "{}: closing: {}",
            self.who(),
            err.description.as_deref().unwrap_or("")
        );
        self.push(0, Performative::Close(Close { error: Some(err) }), &[]);
        self.closed = true;
    }

    fn on_frame(&mut self, f: RawFrame) {
        if f.kind != FRAME_AMQP || f.body.is_empty() {
            return; // a heartbeat
        }
        let (p, payload) = match frame::decode_performative(f.body) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("{}: closing: {e}", self.who());
                let err = error("amqp:decode-error", e.to_string());
                self.push(0, Performative::Close(Close { error: Some(err) }), &[]);
                self.closed = true;
                return;
            }
        };
        if trace() {
            eprintln!("<- {} [{}] {p:?}", self.who(), f.channel);
        }
        // Part 2, 2.4.1: open comes first; a session's frames need its begin.
        if !self.opened && !matches!(p, Performative::Open(_)) {
            return self.close(error(
                "amqp:not-allowed",
                "the first frame of a connection is its open",
            ));
        }
        let in_session = matches!(
            p,
            Performative::Flow(_) | Performative::Disposition(_) | Performative::Detach(_)
        );
        if in_session && !self.sessions.contains_key(&f.channel) {
            return self.close(error(
                "amqp:not-allowed",
                format!("a frame on channel {}, which has no session", f.channel),
            ));
        }
        // What the live page lists changes with these.
        let relist = matches!(
            p,
            Performative::Open(_)
                | Performative::Attach(_)
                | Performative::Detach(_)
                | Performative::End(_)
        );
        match p {
            Performative::Open(open) => self.on_open(open),
            Performative::Begin(begin) => self.on_begin(f.channel, begin),
            Performative::Attach(attach) => self.on_attach(f.channel, attach),
            Performative::Flow(flow) => self.on_flow(f.channel, flow),
            Performative::Transfer(t) => self.on_transfer(f.channel, t, payload),
            Performative::Disposition(d) => self.on_disposition(f.channel, d),
            Performative::Detach(d) => self.on_detach(f.channel, d),
            Performative::End(_) => {
                if let Some(s) = self.sessions.remove(&f.channel) {
                    for link in s.links.into_values() {
                        self.forget_partial(link.partial);
                    }
                    self.push(s.out_channel, Performative::End(End { error: None }), &[]);
                }
            }
            Performative::Close(_) => {
                self.push(0, Performative::Close(Close { error: None }), &[]);
                self.closed = true;
            }
        }
        if relist {
            self.publish();
        }
    }

    fn on_open(&mut self, open: Open) {
        if self.opened {
            return self.close(error("amqp:not-allowed", "a second open on one connection"));
        }
        if open.container_id.len() > MAX_NAME {
            return self.close(error(
                "amqp:invalid-field",
                format!("a container id has at most {MAX_NAME} bytes (sbp serve's limit)"),
            ));
        }
        self.opened = true;
        self.client = open.container_id.clone();
        self.max_frame = open
            .max_frame_size
            .0
            .clamp(frame::MIN_MAX_FRAME_SIZE, frame::MAX_FRAME_SIZE);
        // 0 asks for none; under a second would have this server do little but heartbeats.
        self.peer_idle = open
            .idle_time_out
            .filter(|ms| *ms > 0)
            .map(|ms| std::time::Duration::from_millis(u64::from(ms.max(1000))));
        let reply = our_open(MAX_SESSIONS as u16 - 1, Some(self.shared.limits.idle));
        self.push(0, Performative::Open(reply), &[]);
    }

    fn on_begin(&mut self, channel: u16, begin: Begin) {
        if self.sessions.len() >= MAX_SESSIONS {
            return self.close(error(
                "amqp:resource-limit-exceeded",
                format!("a connection has at most {MAX_SESSIONS} sessions (sbp serve's limit)"),
            ));
        }
        if self.sessions.contains_key(&channel) || begin.remote_channel.is_some() {
            return self.close(error(
                "amqp:not-allowed",
                format!("a begin on channel {channel}, which has a session already"),
            ));
        }
        // The lowest channel of ours no session uses.
        let out_channel = (0..=MAX_SESSIONS as u16)
            .find(|c| self.sessions.values().all(|s| s.out_channel != *c))
            .unwrap_or(0);
        self.sessions.insert(
            channel,
            Session {
                out_channel,
                incoming_left: INCOMING_WINDOW,
                prune_unsettled_at: PRUNE_UNSETTLED_FROM,
                ..Default::default()
            },
        );
        let reply = Begin {
            remote_channel: Some(channel),
            next_outgoing_id: 0,
            incoming_window: INCOMING_WINDOW,
            outgoing_window: 1 << 20,
            handle_max: (MAX_LINKS_PER_SESSION as u32 - 1).into(),
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        };
        self.push(out_channel, Performative::Begin(reply), &[]);
    }

    /// Ends the session on `channel` with `err` (a frame its state does not allow): its links
    /// and their unfinished transfers go with it.
    fn end_session(&mut self, channel: u16, err: AmqpError) {
        let Some(s) = self.sessions.remove(&channel) else {
            return self.close(err);
        };
        for link in s.links.into_values() {
            self.forget_partial(link.partial);
        }
        self.push(
            s.out_channel,
            Performative::End(End { error: Some(err) }),
            &[],
        );
    }

    /// Detaches a link with `err` (closed: the client must attach again).
    fn end_link(&mut self, channel: u16, handle: u32, err: AmqpError) {
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        let out_channel = s.out_channel;
        s.detaching.insert(handle);
        let partial = s.links.remove(&handle).and_then(|l| l.partial);
        self.forget_partial(partial);
        self.push(
            out_channel,
            Performative::Detach(Detach {
                handle: handle.into(),
                closed: true,
                error: Some(err),
            }),
            &[],
        );
    }

    /// Remembers a handle this server detached until the client's detach answers it.
    fn detached_by_us(&mut self, channel: u16, handle: u32) {
        if let Some(s) = self.sessions.get_mut(&channel) {
            s.detaching.insert(handle);
        }
    }

    /// Gives back the budget an unfinished transfer held.
    fn forget_partial(&mut self, partial: Option<(Transfer, BytesMut)>) {
        if let Some((_, bytes)) = partial {
            self.give_back(bytes.len());
        }
    }

    /// Gives back `bytes` of this connection's and the process's budget.
    fn give_back(&mut self, bytes: usize) {
        self.inflight = self.inflight.saturating_sub(bytes);
        self.shared.give_inflight(bytes);
    }

    /// Every unfinished transfer of the connection given back (it ends).
    fn drop_partials(&mut self) {
        let partials: Vec<_> = self
            .sessions
            .values_mut()
            .flat_map(|s| s.links.values_mut())
            .filter_map(|l| l.partial.take())
            .collect();
        for p in partials {
            self.forget_partial(Some(p));
        }
    }

    fn on_attach(&mut self, channel: u16, a: Attach) {
        let Some(session) = self.sessions.get(&channel) else {
            return self.close(error(
                "amqp:not-allowed",
                format!("an attach on channel {channel}, which has no session"),
            ));
        };
        if session.links.contains_key(&a.handle.0) {
            return self.end_session(
                channel,
                error(
                    "amqp:session:handle-in-use",
                    format!("handle {} is attached already", a.handle.0),
                ),
            );
        }
        let out_channel = session.out_channel;
        let refused = if session.links.len() >= MAX_LINKS_PER_SESSION {
            Some(format!(
                "a session has at most {MAX_LINKS_PER_SESSION} links (sbp serve's limit)"
            ))
        } else if a.name.len() > MAX_NAME {
            Some(format!(
                "a link name has at most {MAX_NAME} bytes (sbp serve's limit)"
            ))
        } else {
            None
        };
        let client_receives = a.role == Role::Receiver;
        let address = if client_receives {
            a.source.as_ref().and_then(|s| s.address.clone())
        } else {
            match a.target.as_deref() {
                Some(TargetArchetype::Target(t)) => t.address.clone(),
                _ => None,
            }
        };
        let address = address.filter(|a| a.len() <= MAX_NAME);
        let node = node_of(address.as_deref().unwrap_or(""));
        // An entity that does not exist: the attach is answered, then detached with not-found.
        let (missing, queue) = match &node {
            Node::Entity(path) | Node::Management(path) => {
                let broker = self.shared.lock();
                (broker.sim.ns.resolve(path).err(), broker.queue_key(path))
            }
            Node::Cbs => (None, None),
        };
        let handle = a.handle.0;
        // SES-02: a session filter (the SessionId, or null for the next available) accepts a
        // session for this receiver; the reply names it and its LockedUntil (.NET ticks).
        let mut a = a;
        let mut session = None;
        let mut properties = None;
        let mut missing = missing;
        let filter = a
            .source
            .as_ref()
            .and_then(|s| s.filter.as_ref())
            .and_then(|f| {
                f.iter()
                    .find(|(k, _)| k.0 == SESSION_FILTER)
                    .map(|(_, v)| v.clone())
            });
        if let (Some(wanted), true, Node::Entity(entity), None, None) =
            (filter, client_receives, &node, &missing, &refused)
        {
            let wanted = match wanted {
                Value::String(s) => Some(s),
                Value::Described(d) => match d.value {
                    Value::String(s) => Some(s),
                    _ => None,
                },
                _ => None,
            };
            let who = self.who();
            let accepted = {
                let mut broker = self.shared.lock();
                let start = broker.clock();
                broker
                    .session(
                        &who,
                        entity,
                        &a.name,
                        sbp_scenario::SessionOpDef::Accept,
                        wanted,
                        None,
                    )
                    .map(|v| (v, start))
            };
            match accepted {
                Ok((Some(v), start)) => {
                    let ticks = start.utc(v.locked_until) * 10_000 + DOTNET_EPOCH_TICKS;
                    let mut p = OrderedMap::new();
                    p.insert(
                        Symbol::from("com.microsoft:locked-until-utc"),
                        Value::Long(ticks),
                    );
                    properties = Some(p);
                    if let Some(src) = a.source.as_mut() {
                        let mut f = src.filter.clone().unwrap_or_default();
                        f.insert(
                            Symbol::from(SESSION_FILTER),
                            Value::String(v.session_id.clone()),
                        );
                        src.filter = Some(f);
                    }
                    session = Some(v.session_id);
                }
                Ok((None, _)) => {}
                Err(e) => missing = Some(e),
            }
        }
        let reply = Attach {
            name: a.name.clone(),
            handle: a.handle.clone(),
            role: if client_receives {
                Role::Sender
            } else {
                Role::Receiver
            },
            snd_settle_mode: a.snd_settle_mode.clone(),
            rcv_settle_mode: a.rcv_settle_mode.clone(),
            // A node that does not exist: the attach says so with no terminus of ours, and
            // the detach that follows carries the error (as the service does).
            source: if missing.is_some() && client_receives {
                None
            } else {
                a.source.clone()
            },
            target: if missing.is_some() && !client_receives {
                None
            } else {
                a.target.clone()
            },
            unsettled: None,
            incomplete_unsettled: false,
            initial_delivery_count: client_receives.then_some(0),
            max_message_size: Some(u64::from(frame::MAX_FRAME_SIZE) * 64),
            offered_capabilities: None,
            desired_capabilities: None,
            properties,
        };
        self.push(out_channel, Performative::Attach(reply), &[]);
        let refuse = |e: AmqpError| Detach {
            handle: a.handle.clone(),
            closed: true,
            error: Some(e),
        };
        if let Some(why) = refused {
            let e = error("amqp:resource-limit-exceeded", why);
            self.push(out_channel, Performative::Detach(refuse(e)), &[]);
            self.detached_by_us(channel, handle);
            return;
        }
        if let Some(e) = missing {
            self.push(
                out_channel,
                Performative::Detach(refuse(broker_error(&e))),
                &[],
            );
            self.detached_by_us(channel, handle);
            return;
        }
        let peek_lock = a.snd_settle_mode != SenderSettleMode::Settled;
        let link = Link {
            name: a.name.clone(),
            client_receives,
            node,
            peek_lock,
            session: None,
            credit: 0,
            delivery_count: a.initial_delivery_count.unwrap_or(0),
            drain: false,
            partial: None,
            queue,
        };
        let link = Link { session, ..link };
        if let Some(s) = self.sessions.get_mut(&channel) {
            s.links.insert(handle, link);
        }
        if !client_receives {
            // The client sends once it has credit.
            let delivery_count = a.initial_delivery_count.unwrap_or(0);
            self.grant(channel, handle, delivery_count, SENDER_CREDIT);
        }
    }

    fn session_flow(&self, channel: u16) -> Option<(u16, u32)> {
        self.sessions
            .get(&channel)
            .map(|s| (s.out_channel, s.next_outgoing_id))
    }

    /// Gives a client's sending link `credit` from its `delivery_count` on (a flow), and keeps
    /// it: a transfer beyond it is refused.
    fn grant(&mut self, channel: u16, handle: u32, delivery_count: u32, credit: u32) {
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        if let Some(link) = s.links.get_mut(&handle) {
            link.credit = credit;
        }
        let (out_channel, next_outgoing_id) = (s.out_channel, s.next_outgoing_id);
        let flow = Flow {
            next_incoming_id: None,
            incoming_window: 1 << 20,
            next_outgoing_id,
            outgoing_window: 1 << 20,
            handle: Some(handle.into()),
            delivery_count: Some(delivery_count),
            link_credit: Some(credit),
            available: None,
            drain: false,
            echo: false,
            properties: None,
        };
        self.push(out_channel, Performative::Flow(flow), &[]);
    }

    fn on_flow(&mut self, channel: u16, flow: Flow) {
        let Some(handle) = flow.handle.as_ref().map(|h| h.0) else {
            return; // a session-level flow: the windows are large
        };
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        let Some(link) = s.links.get_mut(&handle) else {
            if !s.detaching.contains(&handle) {
                self.end_session(channel, unattached(handle));
            }
            return;
        };
        if !link.client_receives {
            return;
        }
        // Core spec 2.6.7: credit = the receiver's delivery-count + link-credit - ours.
        let theirs = flow.delivery_count.unwrap_or(link.delivery_count);
        let credit = flow.link_credit.unwrap_or(0);
        link.credit = theirs
            .wrapping_add(credit)
            .wrapping_sub(link.delivery_count);
        link.drain = flow.drain;
        self.deliver(channel, handle);
    }

    /// Every receiving link of every session looks for messages (after a change).
    fn deliver_all(&mut self) {
        let waiting: Vec<(u16, u32, String, Option<String>)> = self
            .sessions
            .iter()
            .flat_map(|(c, s)| {
                s.links.iter().filter_map(|(h, l)| match &l.node {
                    Node::Entity(e) if l.client_receives && l.credit > 0 => {
                        Some((*c, *h, e.clone(), l.session.clone()))
                    }
                    _ => None,
                })
            })
            .collect();
        // One look at the broker for all of them; a receive only where a message is there.
        let ready: Vec<(u16, u32)> = {
            let broker = self.shared.lock();
            waiting
                .into_iter()
                .filter(|(_, _, e, session)| broker.has_available(e, session.as_deref()))
                .map(|(c, h, _, _)| (c, h))
                .collect()
        };
        for (c, h) in ready {
            self.deliver(c, h);
        }
    }

    /// Tells the server which queues this connection waits on now (its receiving links with
    /// credit), so that it is woken when one of them is touched, and only then.
    fn wait_on_queues(&mut self) {
        let now: BTreeSet<QueueKey> = self
            .sessions
            .values()
            .flat_map(|s| s.links.values())
            .filter(|l| l.client_receives && l.credit > 0)
            .filter_map(|l| l.queue)
            .collect();
        if now != self.waiting_on {
            self.shared
                .wait_on(self.id, &self.waiting_on, &now, &self.wake);
            self.waiting_on = now;
        }
    }

    /// Sends what the engine gives for the credit a receiving link has; on drain, uses up the
    /// rest of the credit and says so.
    fn deliver(&mut self, channel: u16, handle: u32) {
        let who = self.who();
        let Some(link) = self
            .sessions
            .get(&channel)
            .and_then(|s| s.links.get(&handle))
        else {
            return;
        };
        let Node::Entity(entity) = &link.node else {
            return;
        };
        let (entity, receiver, peek_lock, credit) = (
            entity.clone(),
            link.name.clone(),
            link.peek_lock,
            link.credit,
        );
        if credit > 0 {
            let got = {
                let mut broker = self.shared.lock();
                let start = broker.clock();
                broker
                    .receive(&who, &entity, &receiver, peek_lock, credit.min(MAX_ROUND))
                    .map(|ms| (ms, start))
            };
            if let Ok((messages, start)) = got {
                let any = !messages.is_empty();
                for m in messages {
                    self.transfer(channel, handle, &m, start, peek_lock);
                }
                if any && !peek_lock {
                    self.shared.bump();
                }
            }
        }
        let Some(link) = self
            .sessions
            .get_mut(&channel)
            .and_then(|s| s.links.get_mut(&handle))
        else {
            return;
        };
        if link.drain && link.credit > 0 {
            link.delivery_count = link.delivery_count.wrapping_add(link.credit);
            link.credit = 0;
            link.drain = false;
            let dc = link.delivery_count;
            let Some((out_channel, next_outgoing_id)) = self.session_flow(channel) else {
                return;
            };
            let flow = Flow {
                next_incoming_id: None,
                incoming_window: 1 << 20,
                next_outgoing_id,
                outgoing_window: 1 << 20,
                handle: Some(handle.into()),
                delivery_count: Some(dc),
                link_credit: Some(0),
                available: None,
                drain: true,
                echo: false,
                properties: None,
            };
            self.push(out_channel, Performative::Flow(flow), &[]);
        }
    }

    fn transfer(
        &mut self,
        channel: u16,
        handle: u32,
        m: &sbp_engine::MessageView,
        start: crate::broker::Clock,
        peek_lock: bool,
    ) {
        let payload = message::encode(message::from_view(m, start, Shown::Received));
        let tag: Vec<u8> = match m.lock_token.as_deref().and_then(message::lock_tag) {
            Some(tag) => tag.to_vec(),
            None => m.sequence_number.to_be_bytes().to_vec(),
        };
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        let delivery_id = s.next_delivery_id;
        s.next_delivery_id = s.next_delivery_id.wrapping_add(1);
        if peek_lock {
            if let Some(token) = &m.lock_token {
                s.unsettled.insert(delivery_id, token.clone());
            }
        }
        // Deliveries the client never settles (their locks lapsed, their messages gone) are
        // let go once the map has doubled since the last look: its size follows the locks
        // the broker still keeps, not the run's length.
        if s.unsettled.len() >= s.prune_unsettled_at {
            let broker = self.shared.lock();
            s.unsettled.retain(|_, token| broker.held(token).is_some());
            drop(broker);
            s.prune_unsettled_at = (2 * s.unsettled.len()).max(PRUNE_UNSETTLED_FROM);
        }
        if let Some(link) = s.links.get_mut(&handle) {
            link.delivery_count = link.delivery_count.wrapping_add(1);
            link.credit = link.credit.saturating_sub(1);
        }
        self.send_delivery(channel, handle, delivery_id, tag, !peek_lock, &payload);
    }

    /// Sends one delivery on our sending link `handle`: in several transfers (`more`) when it
    /// is larger than a frame of the client's max-frame-size.
    fn send_delivery(
        &mut self,
        channel: u16,
        handle: u32,
        delivery_id: u32,
        tag: Vec<u8>,
        settled: bool,
        payload: &[u8],
    ) {
        let room = (self.max_frame as usize).saturating_sub(512).max(256);
        let chunks: Vec<&[u8]> = if payload.is_empty() {
            vec![payload]
        } else {
            payload.chunks(room).collect()
        };
        let last = chunks.len() - 1;
        for (i, chunk) in chunks.into_iter().enumerate() {
            let first = i == 0;
            let t = Transfer {
                handle: handle.into(),
                delivery_id: first.then_some(delivery_id),
                delivery_tag: first.then(|| Binary::from(tag.clone())),
                message_format: first.then_some(0),
                settled: first.then_some(settled),
                more: i != last,
                rcv_settle_mode: None,
                state: None,
                resume: false,
                aborted: false,
                batchable: false,
            };
            let Some(s) = self.sessions.get_mut(&channel) else {
                return;
            };
            s.next_outgoing_id = s.next_outgoing_id.wrapping_add(1);
            let out_channel = s.out_channel;
            self.push(out_channel, Performative::Transfer(t), chunk);
        }
    }

    /// A transfer from the client (part 2, 2.6.12 and 2.7.5), held to the session's incoming
    /// window, the link's credit, the largest message of the tier and the bytes this
    /// connection and the process may hold for unfinished transfers; an aborted one is
    /// dropped. A frame breaking one of them ends its link or session with the condition the
    /// spec names.
    fn on_transfer(&mut self, channel: u16, t: Transfer, payload: BytesMut) {
        let handle = t.handle.0;
        let Some(s) = self.sessions.get_mut(&channel) else {
            return self.close(error(
                "amqp:not-allowed",
                format!("a transfer on channel {channel}, which has no session"),
            ));
        };
        if s.incoming_left == 0 {
            return self.end_session(
                channel,
                error(
                    "amqp:session:window-violation",
                    format!(
                        "more than the {INCOMING_WINDOW} transfers the incoming window allowed"
                    ),
                ),
            );
        }
        s.incoming_left -= 1;
        let widen = s.incoming_left < INCOMING_WINDOW / 2;
        let Some(link) = s.links.get_mut(&handle) else {
            if s.detaching.contains(&handle) {
                return; // sent before our detach reached the client
            }
            return self.end_session(channel, unattached(handle));
        };
        if link.client_receives {
            return self.end_link(
                channel,
                handle,
                error(
                    "amqp:not-allowed",
                    "a transfer on a link whose sender is this server",
                ),
            );
        }
        // A new delivery takes a credit; one beyond the credit is refused.
        let partial = link.partial.take();
        if partial.is_none() {
            if link.credit == 0 {
                return self.end_link(
                    channel,
                    handle,
                    error(
                        "amqp:link:transfer-limit-exceeded",
                        "a transfer beyond the link credit this server granted",
                    ),
                );
            }
            link.credit -= 1;
            link.delivery_count = link.delivery_count.wrapping_add(1);
        }
        let low = link.credit < SENDER_CREDIT / 2;
        let dc = link.delivery_count;
        let node = link.node.clone();
        if widen {
            self.widen_window(channel);
        }
        // Gather a multi-frame transfer; the first frame carries the delivery's fields.
        let held = partial.as_ref().map_or(0, |(_, b)| b.len());
        let (first, whole) = match partial {
            Some((first, mut bytes)) => {
                bytes.extend_from_slice(&payload);
                (first, bytes)
            }
            None => (t.clone(), payload),
        };
        if t.aborted {
            // Part 2, 2.6.14: an aborted delivery is discarded, and not answered.
            self.give_back(held);
            return;
        }
        if t.more {
            let grown = whole.len() - held;
            let refusal = if whole.len() > self.max_delivery {
                Some((
                    "amqp:link:message-size-exceeded",
                    format!(
                        "a message has at most {} bytes on this tier, with {} of framing",
                        self.max_delivery - FRAMING,
                        FRAMING
                    ),
                ))
            } else if self.inflight + grown > CONN_INFLIGHT {
                Some((
                    "amqp:resource-limit-exceeded",
                    format!(
                        "a connection holds at most {} MiB of unfinished transfers (sbp serve's limit)",
                        CONN_INFLIGHT >> 20
                    ),
                ))
            } else if !self.shared.take_inflight(grown) {
                Some((
                    "amqp:resource-limit-exceeded",
                    format!(
                        "sbp serve holds at most {} MiB of unfinished transfers for all clients",
                        self.shared.limits.inflight >> 20
                    ),
                ))
            } else {
                None
            };
            if let Some((condition, why)) = refusal {
                self.give_back(held);
                return self.end_link(channel, handle, error(condition, why));
            }
            self.inflight += grown;
            if let Some(link) = self
                .sessions
                .get_mut(&channel)
                .and_then(|s| s.links.get_mut(&handle))
            {
                link.partial = Some((first, whole));
            }
            return;
        }
        self.give_back(held);
        let bytes = whole.freeze();
        let outcome = match node {
            Node::Entity(entity) => self.on_send(&entity, first.message_format, &bytes),
            Node::Cbs => self.on_request(channel, None, &bytes),
            Node::Management(entity) => self.on_request(channel, Some(entity), &bytes),
        };
        if first.settled != Some(true) {
            if let Some(id) = first.delivery_id {
                let (out_channel, _) = self.session_flow(channel).unwrap_or((0, 0));
                let d = Disposition {
                    role: Role::Receiver,
                    first: id,
                    last: None,
                    settled: true,
                    state: Some(outcome),
                    batchable: false,
                };
                self.push(out_channel, Performative::Disposition(d), &[]);
            }
        }
        if low {
            self.grant(channel, handle, dc, SENDER_CREDIT);
        }
    }

    /// Widens the session's incoming window to [`INCOMING_WINDOW`] again (a session flow).
    fn widen_window(&mut self, channel: u16) {
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        s.incoming_left = INCOMING_WINDOW;
        let flow = Flow {
            next_incoming_id: None,
            incoming_window: INCOMING_WINDOW,
            next_outgoing_id: s.next_outgoing_id,
            outgoing_window: 1 << 20,
            handle: None,
            delivery_count: None,
            link_credit: None,
            available: None,
            drain: false,
            echo: false,
            properties: None,
        };
        let out_channel = s.out_channel;
        self.push(out_channel, Performative::Flow(flow), &[]);
    }

    /// A message (or a batch) sent to an entity: accepted, or rejected with the error the SDK
    /// maps (SEND-01).
    fn on_send(&mut self, entity: &str, format: Option<u32>, bytes: &[u8]) -> DeliveryState {
        let who = self.who();
        let messages = message::decode(bytes).and_then(|m| message::unbatch(format, m));
        let messages = match messages {
            Ok(m) => m,
            Err(e) => {
                return DeliveryState::Rejected(Rejected {
                    error: Some(error("amqp:decode-error", e)),
                })
            }
        };
        let mut broker = self.shared.lock();
        let start = broker.clock();
        let mut result = Ok(());
        for m in &messages {
            let def = match message::to_send(m, entity, start) {
                Ok(def) => def,
                Err(e) => {
                    result = Err(error("amqp:invalid-field", e));
                    break;
                }
            };
            if let Err(e) = broker.send(&who, def) {
                result = Err(broker_error(&e));
                break;
            }
        }
        drop(broker);
        self.shared.bump();
        match result {
            Ok(()) => DeliveryState::Accepted(Accepted {}),
            Err(e) => DeliveryState::Rejected(Rejected { error: Some(e) }),
        }
    }

    fn on_disposition(&mut self, channel: u16, d: Disposition) {
        if d.role != Role::Receiver {
            return;
        }
        let who = self.who();
        let last = d.last.unwrap_or(d.first);
        let Some(state) = d.state.clone() else {
            return;
        };
        let (how, reason, description) = match &state {
            DeliveryState::Accepted(_) => (Some(Settle::Complete), None, None),
            DeliveryState::Modified(Modified {
                undeliverable_here: Some(true),
                ..
            }) => (Some(Settle::Defer), None, None),
            DeliveryState::Modified(_) => (Some(Settle::Abandon), None, None),
            // Released: the SDK gives back what arrived outside a receive call; the delivery
            // does not count (RCV-05, AMQP 1.0 part 3.4.4).
            DeliveryState::Released(_) => (Some(Settle::Release), None, None),
            DeliveryState::Rejected(Rejected { error }) => {
                let info = error.as_ref().and_then(|e| e.info.as_deref());
                let field = |k: &str| {
                    info.and_then(|f| {
                        f.iter()
                            .find(|(key, _)| key.0 == k)
                            .and_then(|(_, v)| match v {
                                Value::String(s) => Some(s.clone()),
                                _ => None,
                            })
                    })
                };
                (
                    Some(Settle::DeadLetter),
                    field("DeadLetterReason"),
                    field("DeadLetterErrorDescription"),
                )
            }
            _ => (None, None, None),
        };
        let Some(how) = how else { return };
        // Only what this session holds unsettled in the range is settled: ids never sent are
        // passed over, at the cost of what is there, not of the range's width (2^32 at most).
        let ids = self
            .sessions
            .get(&channel)
            .map(|s| unsettled_in(&s.unsettled, d.first, last))
            .unwrap_or_default();
        let mut results = Vec::with_capacity(ids.len());
        for id in ids {
            let Some(token) = self
                .sessions
                .get_mut(&channel)
                .and_then(|s| s.unsettled.remove(&id))
            else {
                continue;
            };
            let result =
                self.shared
                    .lock()
                    .settle(&who, &token, how, reason.clone(), description.clone());
            results.push((id, result.err()));
        }
        self.shared.bump();
        if d.settled {
            return;
        }
        // The settled reply each SDK waits for: the outcome it asked for (without the
        // dead-letter error, which the SDKs would take for a failure), or the error; ids in a
        // row with the same answer go as one range.
        let (out_channel, _) = self.session_flow(channel).unwrap_or((0, 0));
        let echo = match state {
            DeliveryState::Rejected(_) => DeliveryState::Rejected(Rejected { error: None }),
            other => other,
        };
        for (first, last, failure) in runs(&results) {
            let state = match failure {
                Some(e) => DeliveryState::Rejected(Rejected {
                    error: Some(broker_error(e)),
                }),
                None => echo.clone(),
            };
            let reply = Disposition {
                role: Role::Sender,
                first,
                last: (last != first).then_some(last),
                settled: true,
                state: Some(state),
                batchable: false,
            };
            self.push(out_channel, Performative::Disposition(reply), &[]);
        }
    }

    fn on_detach(&mut self, channel: u16, d: Detach) {
        let handle = d.handle.0;
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        // A detach that answers ours (a link this server refused or ended) is not answered.
        let Some(mut link) = s.links.remove(&handle) else {
            if !s.detaching.remove(&handle) {
                self.end_session(channel, unattached(handle));
            }
            return;
        };
        self.forget_partial(link.partial.take());
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        let out_channel = s.out_channel;
        // SES-04: closing a session receiver closes its session (nothing counted).
        if let (Some(_), Node::Entity(entity)) = (&link.session, &link.node) {
            let who = self.who();
            let _ = self.shared.lock().session(
                &who,
                entity,
                &link.name,
                sbp_scenario::SessionOpDef::Close,
                None,
                None,
            );
            self.shared.bump();
        }
        self.push(
            out_channel,
            Performative::Detach(Detach {
                handle: handle.into(),
                closed: true,
                error: None,
            }),
            &[],
        );
    }

    /// A `$cbs` or `$management` request; the answer goes on the session's receiving link of
    /// that node.
    fn on_request(&mut self, channel: u16, entity: Option<String>, bytes: &[u8]) -> DeliveryState {
        let Ok(request) = message::decode(bytes) else {
            return DeliveryState::Rejected(Rejected {
                error: Some(error(
                    "amqp:decode-error",
                    "the request could not be decoded",
                )),
            });
        };
        let operation = match app_prop(&request, "operation") {
            Some(SimpleValue::String(s)) => s.clone(),
            Some(SimpleValue::Symbol(s)) => s.0.clone(),
            _ => String::new(),
        };
        let (status, description, body, kind) = match &entity {
            // Any token is taken: the endpoint is for local development (202, as the service).
            None => (202, "Accepted".to_string(), Value::Null, None),
            Some(entity) => match self.management(entity, &operation, &request) {
                Ok((status, body)) => (status, "OK".to_string(), body, None),
                Err(e) => (
                    match e.kind {
                        ErrorKind::MessageLockLost | ErrorKind::SessionLockLost => 410,
                        ErrorKind::MessageNotFound | ErrorKind::MessagingEntityNotFound => 404,
                        ErrorKind::ServerBusy => 503,
                        _ => 400,
                    },
                    e.message.to_string(),
                    Value::Null,
                    Some(e.kind),
                ),
            },
        };
        // The condition names the error's kind, as the SDKs map it (azure-servicebus
        // `_ERROR_CODE_TO_ERROR_MAPPING`: message-not-found is MessageNotFoundError).
        let error_condition =
            (status >= 400).then(|| condition(kind.unwrap_or(ErrorKind::InvalidOperation)));
        let request_id = request
            .properties
            .as_ref()
            .and_then(|p| p.message_id.clone());
        let reply_to = request.properties.as_ref().and_then(|p| p.reply_to.clone());
        let mut application = OrderedMap::new();
        application.insert("statusCode".to_string(), SimpleValue::Int(status));
        application.insert("status-code".to_string(), SimpleValue::Int(status));
        application.insert(
            "statusDescription".to_string(),
            SimpleValue::String(description.clone()),
        );
        application.insert(
            "status-description".to_string(),
            SimpleValue::String(description),
        );
        if let Some(c) = error_condition {
            application.insert(
                "errorCondition".to_string(),
                SimpleValue::Symbol(Symbol::from(c)),
            );
        }
        let response: message::WireMessage = Message {
            header: None,
            delivery_annotations: None,
            message_annotations: None,
            properties: Some(Properties {
                correlation_id: request_id.or(Some(MessageId::String(String::new()))),
                to: reply_to.clone(),
                ..Default::default()
            }),
            application_properties: Some(ApplicationProperties(application)),
            body: Body::Value(AmqpValue(body)),
            footer: None,
        };
        self.reply(channel, entity.is_none(), reply_to.as_deref(), response);
        DeliveryState::Accepted(Accepted {})
    }

    /// A `$management` operation on `entity`, on the broker held for it; the waiting
    /// receivers look again after.
    fn management(
        &self,
        entity: &str,
        operation: &str,
        request: &message::WireMessage,
    ) -> Result<(i32, Value), BrokerError> {
        let who = self.who();
        let link = associated_link(request).unwrap_or_else(|| who.clone());
        let answer = crate::mgmt::handle(
            &mut self.shared.lock(),
            &who,
            &link,
            entity,
            operation,
            &request.body,
        );
        self.shared.bump();
        answer
    }

    /// Sends a response on the client's receiving link for `$cbs` or `$management` (the one
    /// whose target is the request's reply-to, else the first).
    fn reply(
        &mut self,
        channel: u16,
        cbs: bool,
        reply_to: Option<&str>,
        response: message::WireMessage,
    ) {
        let Some(s) = self.sessions.get(&channel) else {
            return;
        };
        let mut candidates: Vec<(&u32, &Link)> = s
            .links
            .iter()
            .filter(|(_, l)| {
                l.client_receives
                    && matches!(l.node, Node::Cbs) == cbs
                    && !matches!(l.node, Node::Entity(_))
            })
            .collect();
        candidates.sort_by_key(|(h, _)| **h);
        let chosen = candidates
            .iter()
            .find(|(_, l)| reply_to.is_some() && l.name.contains(reply_to.unwrap_or_default()))
            .or_else(|| candidates.first())
            .map(|(h, _)| **h);
        let Some(handle) = chosen else { return };
        let payload = message::encode(response);
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        let delivery_id = s.next_delivery_id;
        s.next_delivery_id = s.next_delivery_id.wrapping_add(1);
        if let Some(l) = s.links.get_mut(&handle) {
            l.delivery_count = l.delivery_count.wrapping_add(1);
            l.credit = l.credit.saturating_sub(1);
        }
        let tag = delivery_id.to_be_bytes().to_vec();
        self.send_delivery(channel, handle, delivery_id, tag, true, &payload);
    }
}
