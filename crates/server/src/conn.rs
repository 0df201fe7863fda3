//! One client connection: SASL, then the AMQP connection, its sessions and links, as the
//! Service Bus SDKs use them (../shared/AMQP-NOTES.md, each fact with the SDK file it was read
//! from). A small broker-side state machine on fe2o3-amqp-types and serde_amqp: the delivery
//! tags (16-byte lock tokens) and the dispositions echoed are this server's to decide.
use crate::broker::Settle;
use crate::shared::Shared;
use crate::frame::{self, FrameError, RawFrame, FRAME_AMQP, FRAME_SASL};
use crate::message::{self, Shown};
use bytes::BytesMut;
use fe2o3_amqp_types::definitions::{
    Error as AmqpError, ErrorCondition, ReceiverSettleMode, Role, SenderSettleMode,
};
use fe2o3_amqp_types::messaging::{
    Accepted, AmqpValue, ApplicationProperties, Body, DeliveryState, Message, MessageId, Modified,
    Properties, Rejected, Source, Target, TargetArchetype,
};
use fe2o3_amqp_types::performatives::{
    Attach, Begin, Close, Detach, Disposition, End, Flow, Open, Performative, Transfer,
};
use fe2o3_amqp_types::primitives::{Array, Binary, OrderedMap, SimpleValue, Symbol, Value};
use fe2o3_amqp_types::sasl::{SaslCode, SaslInit, SaslMechanisms, SaslOutcome};
use sbp_engine::{BrokerError, ErrorKind};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// The source filter that asks for a session (azure-sdk-for-python `_common/constants.py`).
const SESSION_FILTER: &str = "com.microsoft:session-filter";
/// .NET ticks at the Unix epoch: the session's locked-until travels in ticks.
const DOTNET_EPOCH_TICKS: i64 = 621_355_968_000_000_000;

/// The bounds one connection keeps (said in the error when one is passed).
pub const MAX_SESSIONS: usize = 16;
pub const MAX_LINKS_PER_SESSION: usize = 64;
/// Credit granted to a client's sender link at a time.
const SENDER_CREDIT: u32 = 1000;
/// The most messages one delivery round takes from the engine for a link.
const MAX_ROUND: u32 = 100;

#[derive(Debug)]
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
}

#[derive(Debug, Default)]
struct Session {
    out_channel: u16,
    next_outgoing_id: u32,
    next_delivery_id: u32,
    links: HashMap<u32, Link>,
    /// Delivery id -> lock token, for the client's dispositions.
    unsettled: HashMap<u32, String>,
}

pub struct Conn {
    id: u64,
    peer: String,
    client: String,
    shared: Arc<Shared>,
    out: Vec<u8>,
    max_frame: u32,
    sessions: HashMap<u16, Session>,
    next_channel: u16,
    closed: bool,
}

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

/// Answers a connection the server cannot take: after SASL (if asked) and the AMQP header,
/// an `open` and a `close` carrying `amqp:resource-limit-exceeded` with the limit named.
pub async fn refuse(stream: TcpStream, why: String) {
    let (mut reader, mut writer) = stream.into_split();
    let Ok(mut header) = frame::read_header(&mut reader).await else {
        return;
    };
    if header == frame::SASL_HEADER {
        let mechanisms = SaslMechanisms {
            sasl_server_mechanisms: Array(vec![Symbol::from("ANONYMOUS"), Symbol::from("MSSBCBS")]),
        };
        let outcome = SaslOutcome {
            code: SaslCode::Ok,
            additional_data: None,
        };
        let _ = writer.write_all(&frame::SASL_HEADER).await;
        let _ = writer
            .write_all(&frame::encode(FRAME_SASL, 0, &mechanisms, &[]))
            .await;
        if frame::read_frame(&mut reader, 4096).await.is_err() {
            return;
        }
        let _ = writer
            .write_all(&frame::encode(FRAME_SASL, 0, &outcome, &[]))
            .await;
        header = match frame::read_header(&mut reader).await {
            Ok(h) => h,
            Err(_) => return,
        };
    }
    let _ = header;
    let open = Open {
        container_id: "sbp-serve".into(),
        hostname: None,
        max_frame_size: frame::MAX_FRAME_SIZE.into(),
        channel_max: 0.into(),
        idle_time_out: None,
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    let close = Close {
        error: Some(error("amqp:resource-limit-exceeded", why)),
    };
    let mut out = frame::AMQP_HEADER.to_vec();
    out.extend(frame::encode(FRAME_AMQP, 0, &Performative::Open(open), &[]));
    out.extend(frame::encode(
        FRAME_AMQP,
        0,
        &Performative::Close(close),
        &[],
    ));
    let _ = writer.write_all(&out).await;
}

impl Conn {
    pub fn new(peer: String, shared: Arc<Shared>) -> Conn {
        let id = shared
            .next_client
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Conn {
            id,
            peer,
            client: String::new(),
            shared,
            out: Vec::new(),
            max_frame: frame::MAX_FRAME_SIZE,
            sessions: HashMap::new(),
            next_channel: 0,
            closed: false,
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
    pub async fn run(mut self, stream: TcpStream) {
        let (mut reader, mut writer) = stream.into_split();
        // SASL (offered: ANONYMOUS for Python and JS, MSSBCBS for .NET, PLAIN), then AMQP.
        let header = match frame::read_header(&mut reader).await {
            Ok(h) => h,
            Err(_) => return,
        };
        if header == frame::SASL_HEADER {
            let _ = writer.write_all(&frame::SASL_HEADER).await;
            let mechanisms = SaslMechanisms {
                sasl_server_mechanisms: Array(vec![
                    Symbol::from("ANONYMOUS"),
                    Symbol::from("MSSBCBS"),
                    Symbol::from("PLAIN"),
                ]),
            };
            let _ = writer
                .write_all(&frame::encode(FRAME_SASL, 0, &mechanisms, &[]))
                .await;
            let init = match frame::read_frame(&mut reader, frame::MIN_MAX_FRAME_SIZE * 8).await {
                Ok(f) if f.kind == FRAME_SASL => frame::decode_sasl::<SaslInit>(&f.body),
                Ok(_) => Err(FrameError::Decode("expected sasl-init".into())),
                Err(e) => Err(e),
            };
            // Any credentials are accepted: the endpoint is for local development.
            let code = if init.is_ok() {
                SaslCode::Ok
            } else {
                SaslCode::Auth
            };
            let outcome = SaslOutcome {
                code,
                additional_data: None,
            };
            let _ = writer
                .write_all(&frame::encode(FRAME_SASL, 0, &outcome, &[]))
                .await;
            if init.is_err() {
                return;
            }
            match frame::read_header(&mut reader).await {
                Ok(h) if h == frame::AMQP_HEADER => {}
                _ => return,
            }
        } else if header != frame::AMQP_HEADER {
            // The header this server speaks, then the connection ends (core spec 2.2).
            let _ = writer.write_all(&frame::AMQP_HEADER).await;
            return;
        }
        let _ = writer.write_all(&frame::AMQP_HEADER).await;

        let (tx, mut rx) = mpsc::channel::<Result<RawFrame, FrameError>>(64);
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
        let mut changed = self.shared.changed.subscribe();
        while !self.closed {
            tokio::select! {
                f = rx.recv() => match f {
                    Some(Ok(f)) => self.on_frame(f),
                    Some(Err(FrameError::Closed)) | None => break,
                    Some(Err(e)) => {
                        let err = match &e {
                            FrameError::TooLarge { .. } => error("amqp:connection:framing-error", e.to_string()),
                            _ => error("amqp:decode-error", e.to_string()),
                        };
                        self.push(0, Performative::Close(Close { error: Some(err) }), &[]);
                        self.closed = true;
                    }
                },
                r = changed.changed() => {
                    if r.is_err() { break; }
                    self.deliver_all();
                }
            }
            if !self.out.is_empty() {
                let out = std::mem::take(&mut self.out);
                if writer.write_all(&out).await.is_err() {
                    break;
                }
            }
        }
        read_task.abort();
        self.shared.set_client(self.id, None);
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
        self.client = open.container_id.clone();
        self.max_frame = open
            .max_frame_size
            .0
            .clamp(frame::MIN_MAX_FRAME_SIZE, frame::MAX_FRAME_SIZE);
        let reply = Open {
            container_id: "sbp-serve".into(),
            hostname: None,
            max_frame_size: frame::MAX_FRAME_SIZE.into(),
            channel_max: (MAX_SESSIONS as u16 - 1).into(),
            idle_time_out: None,
            outgoing_locales: None,
            incoming_locales: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        };
        self.push(0, Performative::Open(reply), &[]);
    }

    fn on_begin(&mut self, channel: u16, begin: Begin) {
        if self.sessions.len() >= MAX_SESSIONS {
            let err = error(
                "amqp:resource-limit-exceeded",
                format!("a connection has at most {MAX_SESSIONS} sessions (sbp serve's limit)"),
            );
            self.push(0, Performative::Close(Close { error: Some(err) }), &[]);
            self.closed = true;
            return;
        }
        let out_channel = self.next_channel;
        self.next_channel = self.next_channel.wrapping_add(1);
        self.sessions.insert(
            channel,
            Session {
                out_channel,
                ..Default::default()
            },
        );
        let reply = Begin {
            remote_channel: Some(channel),
            next_outgoing_id: 0,
            incoming_window: 1 << 20,
            outgoing_window: 1 << 20,
            handle_max: (MAX_LINKS_PER_SESSION as u32 - 1).into(),
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        };
        let _ = begin;
        self.push(out_channel, Performative::Begin(reply), &[]);
    }

    fn on_attach(&mut self, channel: u16, a: Attach) {
        let Some(session) = self.sessions.get(&channel) else {
            return;
        };
        let out_channel = session.out_channel;
        let too_many = session.links.len() >= MAX_LINKS_PER_SESSION;
        let client_receives = a.role == Role::Receiver;
        let address = if client_receives {
            a.source.as_ref().and_then(|s| s.address.clone())
        } else {
            match a.target.as_deref() {
                Some(TargetArchetype::Target(t)) => t.address.clone(),
                _ => None,
            }
        };
        let node = node_of(address.as_deref().unwrap_or(""));
        // An entity that does not exist: the attach is answered, then detached with not-found.
        let missing = match &node {
            Node::Entity(path) | Node::Management(path) => {
                self.shared.lock().sim.ns.resolve(path).err()
            }
            Node::Cbs => None,
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
        if let (Some(wanted), true, Node::Entity(entity), None) =
            (filter, client_receives, &node, &missing)
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
        if too_many {
            let e = error(
                "amqp:resource-limit-exceeded",
                format!("a session has at most {MAX_LINKS_PER_SESSION} links (sbp serve's limit)"),
            );
            self.push(out_channel, Performative::Detach(refuse(e)), &[]);
            return;
        }
        if let Some(e) = missing {
            self.push(
                out_channel,
                Performative::Detach(refuse(broker_error(&e))),
                &[],
            );
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
        let _ = ReceiverSettleMode::First;
    }

    fn session_flow(&self, channel: u16) -> Option<(u16, u32)> {
        self.sessions
            .get(&channel)
            .map(|s| (s.out_channel, s.next_outgoing_id))
    }

    fn grant(&mut self, channel: u16, handle: u32, delivery_count: u32, credit: u32) {
        let Some((out_channel, next_outgoing_id)) = self.session_flow(channel) else {
            return;
        };
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
        let Some(link) = self
            .sessions
            .get_mut(&channel)
            .and_then(|s| s.links.get_mut(&handle))
        else {
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
        let targets: Vec<(u16, u32)> = self
            .sessions
            .iter()
            .flat_map(|(c, s)| {
                s.links
                    .iter()
                    .filter(|(_, l)| {
                        l.client_receives && l.credit > 0 && matches!(l.node, Node::Entity(_))
                    })
                    .map(|(h, _)| (*c, *h))
            })
            .collect();
        for (c, h) in targets {
            self.deliver_if_available(c, h);
        }
    }

    /// As [`Conn::deliver`] for a receiver already waiting: only when a message is there.
    fn deliver_if_available(&mut self, channel: u16, handle: u32) {
        let (entity, session) = match self
            .sessions
            .get(&channel)
            .and_then(|s| s.links.get(&handle))
        {
            Some(Link {
                node: Node::Entity(e),
                session,
                ..
            }) => (e.clone(), session.clone()),
            _ => return,
        };
        if self
            .shared
            .lock()
            .has_available(&entity, session.as_deref())
        {
            self.deliver(channel, handle);
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
        let max_frame = self.max_frame as usize;
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
        if let Some(link) = s.links.get_mut(&handle) {
            link.delivery_count = link.delivery_count.wrapping_add(1);
            link.credit = link.credit.saturating_sub(1);
        }
        let out_channel = s.out_channel;
        // A message larger than a frame goes in several (`more`), each under the frame size.
        let room = max_frame.saturating_sub(512).max(256);
        let chunks: Vec<&[u8]> = if payload.is_empty() {
            vec![&payload[..]]
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
                settled: first.then_some(!peek_lock),
                more: i != last,
                rcv_settle_mode: None,
                state: None,
                resume: false,
                aborted: false,
                batchable: false,
            };
            if let Some(s) = self.sessions.get_mut(&channel) {
                s.next_outgoing_id = s.next_outgoing_id.wrapping_add(1);
            }
            self.push(out_channel, Performative::Transfer(t), chunk);
        }
    }

    fn on_transfer(&mut self, channel: u16, t: Transfer, payload: BytesMut) {
        let handle = t.handle.0;
        let Some(link) = self
            .sessions
            .get_mut(&channel)
            .and_then(|s| s.links.get_mut(&handle))
        else {
            return;
        };
        // Gather a multi-frame transfer; the first frame carries the delivery's fields.
        let (first, mut whole) = match link.partial.take() {
            Some((first, mut bytes)) => {
                bytes.extend_from_slice(&payload);
                (first, bytes)
            }
            None => (t.clone(), payload),
        };
        if t.more {
            if whole.len() > crate::MAX_MESSAGE_BYTES {
                let e = error(
                    "amqp:link:message-size-exceeded",
                    format!(
                        "a message has at most {} bytes here (sbp serve's limit)",
                        crate::MAX_MESSAGE_BYTES
                    ),
                );
                let out_channel = self.sessions.get(&channel).map_or(0, |s| s.out_channel);
                self.push(
                    out_channel,
                    Performative::Detach(Detach {
                        handle: handle.into(),
                        closed: true,
                        error: Some(e),
                    }),
                    &[],
                );
                if let Some(s) = self.sessions.get_mut(&channel) {
                    s.links.remove(&handle);
                }
                return;
            }
            link.partial = Some((first, whole));
            return;
        }
        link.delivery_count = link.delivery_count.wrapping_add(1);
        link.credit = link.credit.saturating_sub(1);
        let low = link.credit < SENDER_CREDIT / 2;
        let dc = link.delivery_count;
        let node = match &link.node {
            Node::Cbs => Node::Cbs,
            Node::Management(e) => Node::Management(e.clone()),
            Node::Entity(e) => Node::Entity(e.clone()),
        };
        let bytes = whole.split().freeze();
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
        let mut failures = Vec::new();
        for id in d.first..=last {
            let token = self
                .sessions
                .get_mut(&channel)
                .and_then(|s| s.unsettled.remove(&id));
            let Some(token) = token else { continue };
            let result =
                self.shared
                    .lock()
                    .settle(&who, &token, how, reason.clone(), description.clone());
            if let Err(e) = result {
                failures.push((id, e));
            }
        }
        self.shared.bump();
        if d.settled {
            return;
        }
        // The settled reply each SDK waits for: the outcome it asked for (without the
        // dead-letter error, which the SDKs would take for a failure), or the error.
        let (out_channel, _) = self.session_flow(channel).unwrap_or((0, 0));
        let echo = match state {
            DeliveryState::Rejected(_) => DeliveryState::Rejected(Rejected { error: None }),
            other => other,
        };
        for id in d.first..=last {
            let failed = failures.iter().find(|(f, _)| *f == id);
            let state = match failed {
                Some((_, e)) => DeliveryState::Rejected(Rejected {
                    error: Some(broker_error(e)),
                }),
                None => echo.clone(),
            };
            let reply = Disposition {
                role: Role::Sender,
                first: id,
                last: None,
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
        let Some(link) = s.links.remove(&handle) else {
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
            Some(entity) => match {
                let who = self.who();
                let link = associated_link(&request).unwrap_or_else(|| who.clone());
                let answer = crate::mgmt::handle(
                    &mut self.shared.lock(),
                    &who,
                    &link,
                    entity,
                    &operation,
                    &request.body,
                );
                self.shared.bump();
                answer
            } {
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
        s.next_outgoing_id = s.next_outgoing_id.wrapping_add(1);
        if let Some(l) = s.links.get_mut(&handle) {
            l.delivery_count = l.delivery_count.wrapping_add(1);
            l.credit = l.credit.saturating_sub(1);
        }
        let out_channel = s.out_channel;
        let t = Transfer {
            handle: handle.into(),
            delivery_id: Some(delivery_id),
            delivery_tag: Some(Binary::from(delivery_id.to_be_bytes().to_vec())),
            message_format: Some(0),
            settled: Some(true),
            more: false,
            rcv_settle_mode: None,
            state: None,
            resume: false,
            aborted: false,
            batchable: false,
        };
        self.push(out_channel, Performative::Transfer(t), &payload);
        let _ = (Source::default(), Target::default());
    }
}
