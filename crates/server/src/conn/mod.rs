//! One client connection as a protocol core, without I/O (as quinn-proto and fe2o3-amqp keep
//! theirs): frames in, frames out, and what it asks of the broker through
//! [`crate::service`]. The AMQP connection, its sessions and links, as the Service Bus SDKs use
//! them (../shared/AMQP-NOTES.md, each fact with the SDK file it was read from), on
//! fe2o3-amqp-types and serde_amqp: the delivery tags (16-byte lock tokens) and the
//! dispositions echoed are this server's to decide. Time comes in as a value; the driver
//! ([`crate::driver`]) owns the socket and the timers.
//!
//! - `mod.rs`: the connection: its state, open, begin, end, close, the idle time-out and
//!   heartbeats, what goes out.
//! - `link.rs`: attach, detach, flow, and deliveries to a receiving client.
//! - `transfer.rs`: a client's transfers (sends, `$cbs` and `$management` requests) and its
//!   dispositions.
mod link;
mod transfer;

use crate::broker::QueueKey;
use crate::error::Fault;
use crate::frame::{self, FrameError, RawFrame, FRAME_AMQP};
use crate::shared::{Limits, Shared};
use bytes::BytesMut;
use fe2o3_amqp_types::definitions::Role;
use fe2o3_amqp_types::performatives::{Begin, Close, End, Open, Performative, Transfer};
use sbp_engine::ReceiveMode;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bounds one connection keeps (said in the error when one is passed).
pub const MAX_SESSIONS: usize = 16;
pub const MAX_LINKS_PER_SESSION: usize = 64;
/// The longest container id, link name or address taken (an entity path is at most 260
/// characters; the SDKs' link names add a GUID).
pub const MAX_NAME: usize = 1024;
/// What a message's sections may add to its body, header and properties included, over the
/// tier's largest message.
pub const FRAMING: usize = 64 * 1024;
/// Bytes of unfinished transfers one connection may hold, all its links together.
pub const CONN_INFLIGHT: usize = 64 * 1024 * 1024;
/// The incoming window this server grants a session, in transfer frames; widened again when
/// half of it is used.
pub const INCOMING_WINDOW: u32 = 8192;
/// Unsettled deliveries a session keeps before the first look for those the broker let go.
const PRUNE_UNSETTLED_FROM: usize = 1_024;

/// What a link's node is: `$cbs`, an entity's `$management`, or the entity.
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
    /// This server's role on the link: Sender when the client receives.
    ours: Role,
    node: Node,
    mode: ReceiveMode,
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

impl Link {
    /// A link on which this server sends: the client receives.
    fn we_send(&self) -> bool {
        self.ours == Role::Sender
    }
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
    detaching: BTreeSet<u32>,
    /// How many unsettled deliveries make the next look for those the broker let go.
    prune_unsettled_at: usize,
    /// The transfer id this server expects next from the client: its `begin`'s
    /// next-outgoing-id, one more with each transfer (part 2, 2.5.6). Every flow of ours says
    /// it (2.7.4: set once the peer's begin is received), so the client reckons our window
    /// from where it is, not from the session's start.
    next_incoming_id: u32,
    /// Transfers the client may still send before this server widens its incoming window
    /// again (part 2, 2.5.6); one beyond it ends the session with window-violation.
    incoming_left: u32,
}

/// Where the connection is (part 2, 2.4.6, as this server sees it after the headers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The headers are exchanged; the client's `open` comes first.
    AwaitingOpen,
    Opened,
    /// A `close` went out: nothing more is read.
    Closed,
}

pub struct Connection {
    id: u64,
    peer: String,
    client: String,
    shared: Arc<Shared>,
    limits: Limits,
    state: State,
    out: Vec<u8>,
    /// The client's max-frame-size: what our frames keep within.
    max_frame: u32,
    sessions: HashMap<u16, Session>,
    /// The idle time-out the client's `open` asked for: empty frames go out at half of it.
    peer_idle: Option<Duration>,
    /// When the connection began (the handshake's time counts from there), when a frame
    /// last came in and when one last went out.
    began: Instant,
    heard: Instant,
    said: Instant,
    /// The largest message (the tier's, SEND-04) plus [`FRAMING`]: what one unfinished
    /// transfer may gather.
    max_delivery: usize,
    /// Bytes of unfinished transfers this connection holds (at most [`CONN_INFLIGHT`]).
    inflight: usize,
    /// The queues this connection's receiving links with credit wait on, as registered.
    waiting_on: BTreeSet<QueueKey>,
    /// Woken when a queue this connection waits on is touched ([`Shared::bump`]).
    wake: Arc<tokio::sync::Notify>,
    /// Why this server closed the connection, when it did.
    closed_because: Option<String>,
    /// Channels whose session this server ended, until the client's end answers.
    ending: BTreeSet<u16>,
    /// What this server ended and why, for the driver to say in the terminal.
    notes: Vec<String>,
}

/// `SBP_SERVE_TRACE=1`: every frame in and out on stderr.
fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("SBP_SERVE_TRACE").is_some_and(|v| v == "1"))
}

/// This server's `open`: its name, the largest frame, the channels it takes and the idle
/// time-out it keeps.
pub fn our_open(channel_max: u16, idle: Option<Duration>) -> Open {
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
pub const HEARTBEAT: [u8; 8] = [0, 0, 0, 8, 2, 0, 0, 0];

impl Connection {
    /// A connection from `peer` whose headers are exchanged, at `now`.
    pub fn new(peer: String, shared: Arc<Shared>, now: Instant) -> Connection {
        let id = shared
            .next_client
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let max_delivery = usize::try_from(shared.largest_message())
            .unwrap_or(usize::MAX)
            .saturating_add(FRAMING);
        Connection {
            id,
            peer,
            client: String::new(),
            limits: shared.limits,
            shared,
            state: State::AwaitingOpen,
            out: Vec::new(),
            max_frame: frame::MAX_FRAME_SIZE,
            sessions: HashMap::new(),
            peer_idle: None,
            began: now,
            heard: now,
            said: now,
            max_delivery,
            inflight: 0,
            waiting_on: BTreeSet::new(),
            wake: Arc::default(),
            closed_because: None,
            ending: BTreeSet::new(),
            notes: Vec::new(),
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// What wakes this connection when a queue it waits on is touched.
    pub fn wake(&self) -> Arc<tokio::sync::Notify> {
        self.wake.clone()
    }

    /// The bytes to write now; the driver writes them (and syncs the journal first).
    pub fn take_output(&mut self, now: Instant) -> Vec<u8> {
        if !self.out.is_empty() {
            self.said = now;
        }
        std::mem::take(&mut self.out)
    }

    /// When [`Connection::on_timeout`] is due: the handshake's end before the client's open,
    /// the idle time-out after it, or the next heartbeat.
    pub fn next_timeout(&self) -> Option<Instant> {
        match self.state {
            State::Closed => None,
            State::AwaitingOpen => Some(self.began + self.limits.handshake),
            State::Opened => {
                let silent = self.heard + self.limits.idle;
                let heartbeat = self.peer_idle.map(|t| self.said + t / 2);
                Some(heartbeat.map_or(silent, |h| h.min(silent)))
            }
        }
    }

    /// Time passed: a connection silent past its time-out is closed, saying why; one that
    /// asked for heartbeats gets an empty frame when nothing else went out for half of its
    /// idle time-out.
    pub fn on_timeout(&mut self, now: Instant) {
        match self.state {
            State::Closed => {}
            State::AwaitingOpen if now >= self.began + self.limits.handshake => {
                self.close(Fault::ResourceLimit(format!(
                    "no open within {} s of connecting (sbp serve's handshake time-out)",
                    self.limits.handshake.as_secs()
                )))
            }
            State::AwaitingOpen => {}
            State::Opened if now >= self.heard + self.limits.idle => {
                self.close(Fault::ResourceLimit(format!(
                    "no frame for {} s: the idle time-out this server's open offered",
                    self.limits.idle.as_secs()
                )))
            }
            State::Opened => {
                if let Some(t) = self.peer_idle {
                    if now >= self.said + t / 2 && self.out.is_empty() {
                        self.out.extend_from_slice(&HEARTBEAT);
                    }
                }
            }
        }
    }

    /// The socket's bytes could not be framed: the connection ends, saying why.
    pub fn on_frame_error(&mut self, e: &FrameError) {
        let fault = match e {
            FrameError::TooLarge { .. } | FrameError::TooSmall(_) | FrameError::BadOffset(_) => {
                Fault::Framing(e.to_string())
            }
            _ => Fault::Decode(e.to_string()),
        };
        self.close(fault);
    }

    /// The connection is over (its socket closed or it closed): unfinished transfers give
    /// their bytes back, it waits on nothing, and the live page no longer lists it.
    pub fn end(&mut self) {
        // What its unfinished transfers hold, all of them.
        self.give_back(self.inflight);
        self.shared
            .wait_on(self.id, &self.waiting_on, &BTreeSet::new(), &self.wake);
        self.waiting_on.clear();
        self.shared.set_client(self.id, None);
    }

    fn link(&self, channel: u16, handle: u32) -> Option<&Link> {
        self.sessions.get(&channel)?.links.get(&handle)
    }

    fn link_mut(&mut self, channel: u16, handle: u32) -> Option<&mut Link> {
        self.sessions.get_mut(&channel)?.links.get_mut(&handle)
    }

    fn who(&self) -> String {
        if self.client.is_empty() {
            self.peer.clone()
        } else {
            self.client.chars().take(24).collect()
        }
    }

    fn push(&mut self, channel: u16, p: Performative, payload: &[u8]) {
        if trace() {
            eprintln!("-> {} [{channel}] {p:?}", self.who());
        }
        self.out
            .extend_from_slice(&frame::encode(FRAME_AMQP, channel, &p, payload));
    }

    /// What this server ended (sessions, with why) since the last call: the driver says it in
    /// the terminal.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Why this server closed the connection, if it did (the driver says it in the
    /// terminal).
    pub fn closed_because(&self) -> Option<&str> {
        self.closed_because.as_deref()
    }

    /// Ends the connection with `fault` said in a `close`.
    fn close(&mut self, fault: Fault) {
        self.closed_because = Some(format!("{}: closing: {fault}", self.who()));
        let close = Close {
            error: Some(fault.to_amqp()),
        };
        self.push(0, Performative::Close(close), &[]);
        self.state = State::Closed;
    }

    /// One frame from the client, at `now`.
    pub fn on_frame(&mut self, now: Instant, f: RawFrame) {
        self.heard = now;
        if self.state == State::Closed || f.body.is_empty() {
            return; // after our close; a heartbeat
        }
        if f.kind != FRAME_AMQP {
            return self.close(Fault::Framing(format!(
                "a frame of type {} after the AMQP header (only AMQP frames, type 0, come here)",
                f.kind
            )));
        }
        let (p, payload) = match frame::decode_performative(f.body) {
            Ok(x) => x,
            Err(e) => return self.close(Fault::Decode(e.to_string())),
        };
        if trace() {
            eprintln!("<- {} [{}] {p:?}", self.who(), f.channel);
        }
        // Part 2, 2.4.1: open comes first; a session's frames need its begin.
        if self.state == State::AwaitingOpen && !matches!(p, Performative::Open(_)) {
            return self.close(Fault::NotAllowed(
                "the first frame of a connection is its open".into(),
            ));
        }
        // A session this server ended: what the client sent before it heard so is passed
        // over, and its end answers ours (part 2, 2.7.7).
        if self.ending.contains(&f.channel) {
            if matches!(p, Performative::End(_)) {
                self.ending.remove(&f.channel);
            }
            return;
        }
        let in_session = matches!(
            p,
            Performative::Attach(_)
                | Performative::Flow(_)
                | Performative::Transfer(_)
                | Performative::Disposition(_)
                | Performative::Detach(_)
        );
        if in_session && !self.sessions.contains_key(&f.channel) {
            return self.close(Fault::NotAllowed(format!(
                "a frame on channel {}, which has no session",
                f.channel
            )));
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
            Performative::End(_) => self.on_end(f.channel),
            Performative::Close(_) => {
                self.push(0, Performative::Close(Close { error: None }), &[]);
                self.state = State::Closed;
            }
        }
        if relist {
            self.publish();
        }
        self.wait_on_queues();
    }

    /// A queue this connection waits on was touched: each waiting receiver that would get a
    /// message now gets it.
    pub fn on_wake(&mut self) {
        self.deliver_all();
        self.wait_on_queues();
    }

    fn on_open(&mut self, open: Open) {
        if self.state != State::AwaitingOpen {
            return self.close(Fault::NotAllowed("a second open on one connection".into()));
        }
        if open.container_id.len() > MAX_NAME {
            return self.close(Fault::InvalidField(format!(
                "a container id has at most {MAX_NAME} bytes (sbp serve's limit)"
            )));
        }
        self.state = State::Opened;
        self.client = open.container_id.clone();
        self.max_frame = open
            .max_frame_size
            .0
            .clamp(frame::MIN_MAX_FRAME_SIZE, frame::MAX_FRAME_SIZE);
        // 0 asks for none; under a second would have this server do little but heartbeats.
        self.peer_idle = open
            .idle_time_out
            .filter(|ms| *ms > 0)
            .map(|ms| Duration::from_millis(u64::from(ms.max(1000))));
        let reply = our_open(MAX_SESSIONS as u16 - 1, Some(self.limits.idle));
        self.push(0, Performative::Open(reply), &[]);
    }

    fn on_begin(&mut self, channel: u16, begin: Begin) {
        if self.sessions.len() >= MAX_SESSIONS {
            return self.close(Fault::ResourceLimit(format!(
                "a connection has at most {MAX_SESSIONS} sessions (sbp serve's limit)"
            )));
        }
        if self.sessions.contains_key(&channel) || begin.remote_channel.is_some() {
            return self.close(Fault::NotAllowed(format!(
                "a begin on channel {channel}, which has a session already"
            )));
        }
        // The lowest channel of ours no session uses.
        let out_channel = (0..=MAX_SESSIONS as u16)
            .find(|c| self.sessions.values().all(|s| s.out_channel != *c))
            .unwrap_or(0);
        self.sessions.insert(
            channel,
            Session {
                out_channel,
                next_incoming_id: begin.next_outgoing_id,
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

    fn on_end(&mut self, channel: u16) {
        if let Some(out_channel) = self.remove_session(channel) {
            self.push(out_channel, Performative::End(End { error: None }), &[]);
        }
    }

    /// Removes the session on `channel`, its links' unfinished transfers giving their bytes
    /// back; the channel it had of ours.
    fn remove_session(&mut self, channel: u16) -> Option<u16> {
        let s = self.sessions.remove(&channel)?;
        for link in s.links.into_values() {
            self.forget_partial(link.partial);
        }
        Some(s.out_channel)
    }

    /// Ends the session on `channel` with `fault` (a frame its state does not allow): its
    /// links and their unfinished transfers go with it.
    fn end_session(&mut self, channel: u16, fault: Fault) {
        let Some(out_channel) = self.remove_session(channel) else {
            return self.close(fault);
        };
        self.notes
            .push(format!("{}: ending session {channel}: {fault}", self.who()));
        self.ending.insert(channel);
        let end = End {
            error: Some(fault.to_amqp()),
        };
        self.push(out_channel, Performative::End(end), &[]);
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

    /// Says who this client is and which entities its links reach, for the live page.
    fn publish(&self) {
        let mut links: Vec<serde_json::Value> = self
            .sessions
            .values()
            .flat_map(|s| s.links.values())
            .filter_map(|l| match &l.node {
                Node::Entity(path) => Some(serde_json::json!({
                    "role": if l.we_send() { "receiver" } else { "sender" },
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

    /// Tells the server which queues this connection waits on now (its receiving links with
    /// credit), so that it is woken when one of them is touched, and only then.
    fn wait_on_queues(&mut self) {
        let now: BTreeSet<QueueKey> = self
            .sessions
            .values()
            .flat_map(|s| s.links.values())
            .filter(|l| l.we_send() && l.credit > 0)
            .filter_map(|l| l.queue.clone())
            .collect();
        if now != self.waiting_on {
            self.shared
                .wait_on(self.id, &self.waiting_on, &now, &self.wake);
            self.waiting_on = now;
        }
    }
}

/// The core fed frames, its frames read back: no socket, no runtime, the broker's wall clock
/// held still.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker::Broker;
    use fe2o3_amqp_types::definitions::{ReceiverSettleMode, SenderSettleMode};
    use fe2o3_amqp_types::messaging::{
        Accepted, AmqpValue, Body, DeliveryState, Message, Source, Target, TargetArchetype,
    };
    use fe2o3_amqp_types::performatives::{Attach, Disposition, Flow};
    use fe2o3_amqp_types::primitives::{Binary, Value};

    const T0: i64 = 1_764_000_000_000;

    fn core() -> (Connection, Arc<Shared>, Instant) {
        let scenario = sbp_scenario::Scenario::from_json(
            r#"{"version": 1, "entities": [{"queue": "orders"}]}"#,
        )
        .expect("a scenario");
        let broker = Broker::new(scenario, T0)
            .expect("a broker")
            .with_wall_clock(Arc::new(|| T0));
        let mut shared = Shared::new(broker);
        shared.limits.idle = Duration::from_secs(5);
        let shared = Arc::new(shared);
        let now = Instant::now();
        let c = Connection::new("test".into(), shared.clone(), now);
        (c, shared, now)
    }

    fn frame(channel: u16, p: Performative, payload: &[u8]) -> RawFrame {
        let mut bytes = BytesMut::from(&frame::encode(FRAME_AMQP, channel, &p, payload)[..]);
        frame::parse(&mut bytes, frame::MAX_FRAME_SIZE)
            .expect("a frame")
            .expect("whole")
    }

    /// What the core said, as performatives (heartbeats as None) with their payloads.
    fn said(c: &mut Connection, now: Instant) -> Vec<(Option<Performative>, Vec<u8>)> {
        let mut out = BytesMut::from(&c.take_output(now)[..]);
        let mut all = Vec::new();
        while let Ok(Some(f)) = frame::parse(&mut out, u32::MAX) {
            if f.body.is_empty() {
                all.push((None, Vec::new()));
                continue;
            }
            let (p, payload) = frame::decode_performative(f.body).expect("ours decode");
            all.push((Some(p), payload.to_vec()));
        }
        all
    }

    fn open(idle_ms: Option<u32>) -> Performative {
        let mut o = our_open(10, None);
        o.container_id = "client".into();
        o.idle_time_out = idle_ms;
        Performative::Open(o)
    }

    fn begin() -> Performative {
        Performative::Begin(Begin {
            remote_channel: None,
            next_outgoing_id: 0,
            incoming_window: 1000,
            outgoing_window: 1000,
            handle_max: 10.into(),
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        })
    }

    /// An attach of `handle` to orders, in the client's role (a receiver's link, or a sender's).
    fn attach(handle: u32, client_role: Role) -> Performative {
        Performative::Attach(Attach {
            name: format!("l{handle}"),
            handle: handle.into(),
            role: client_role.clone(),
            snd_settle_mode: SenderSettleMode::Unsettled,
            rcv_settle_mode: ReceiverSettleMode::First,
            source: Some(Box::new(Source {
                address: Some("orders".into()),
                ..Default::default()
            })),
            target: Some(Box::new(TargetArchetype::Target(Target {
                address: Some("orders".into()),
                ..Default::default()
            }))),
            unsettled: None,
            incomplete_unsettled: false,
            initial_delivery_count: (client_role == Role::Sender).then_some(0),
            max_message_size: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        })
    }

    /// A client's flow giving `credit` on `handle` (its delivery-count 0).
    fn credit(handle: u32, credit: u32) -> Performative {
        Performative::Flow(Flow {
            next_incoming_id: Some(0),
            incoming_window: 1000,
            next_outgoing_id: 0,
            outgoing_window: 1000,
            handle: Some(handle.into()),
            delivery_count: Some(0),
            link_credit: Some(credit),
            available: None,
            drain: false,
            echo: false,
            properties: None,
        })
    }

    /// The counts of queue orders now.
    fn orders_counts(shared: &Shared) -> sbp_engine::Counts {
        shared
            .lock()
            .sim
            .ns()
            .entity("orders")
            .expect("orders")
            .counts(0)
    }

    fn opened() -> (Connection, Arc<Shared>, Instant) {
        let (mut c, shared, now) = core();
        c.on_frame(now, frame(0, open(None), &[]));
        c.on_frame(now, frame(0, begin(), &[]));
        let out = said(&mut c, now);
        assert!(matches!(out[0].0, Some(Performative::Open(_))));
        assert!(matches!(out[1].0, Some(Performative::Begin(_))));
        (c, shared, now)
    }

    #[test]
    fn a_send_is_attached_credited_taken_and_acknowledged() {
        let (mut c, shared, now) = opened();
        c.on_frame(now, frame(0, attach(0, Role::Sender), &[]));
        let out = said(&mut c, now);
        let Some(Performative::Attach(a)) = &out[0].0 else {
            panic!("{out:?}")
        };
        assert_eq!(a.role, Role::Receiver);
        assert_eq!(
            a.max_message_size,
            Some(256 * 1024),
            "the tier's largest message"
        );
        let Some(Performative::Flow(f)) = &out[1].0 else {
            panic!("{out:?}")
        };
        assert_eq!(f.link_credit, Some(1000));
        let message: crate::message::WireMessage = Message::builder()
            .body(Body::Value(AmqpValue(Value::String("hello".into()))))
            .build();
        let transfer = Transfer {
            handle: 0.into(),
            delivery_id: Some(7),
            delivery_tag: Some(Binary::from(vec![7])),
            message_format: Some(0),
            settled: Some(false),
            more: false,
            rcv_settle_mode: None,
            state: None,
            resume: false,
            aborted: false,
            batchable: false,
        };
        c.on_frame(
            now,
            frame(
                0,
                Performative::Transfer(transfer),
                &crate::message::encode(message),
            ),
        );
        let out = said(&mut c, now);
        let Some(Performative::Disposition(d)) = &out[0].0 else {
            panic!("{out:?}")
        };
        assert_eq!(d.first, 7);
        assert!(matches!(d.state, Some(DeliveryState::Accepted(_))));
        let counts = orders_counts(&shared);
        assert_eq!(counts.active, 1);
    }

    #[test]
    fn a_receiver_gets_a_message_for_its_credit_and_settles_it_by_delivery_id() {
        let (mut c, shared, now) = opened();
        let def = sbp_scenario::SendDef {
            to: "orders".into(),
            message_id: Some("m".into()),
            ..Default::default()
        };
        shared.lock().send("test", def).expect("sent");
        c.on_frame(now, frame(0, attach(1, Role::Receiver), &[]));
        said(&mut c, now);
        c.on_frame(now, frame(0, credit(1, 5), &[]));
        let out = said(&mut c, now);
        let Some(Performative::Transfer(t)) = &out[0].0 else {
            panic!("{out:?}")
        };
        assert_eq!(
            t.delivery_tag.as_ref().map(|b| b.len()),
            Some(16),
            "the lock token"
        );
        assert_eq!(t.settled, Some(false));
        let id = t.delivery_id.expect("an id");
        let accept = Disposition {
            role: Role::Receiver,
            first: id,
            last: None,
            settled: false,
            state: Some(DeliveryState::Accepted(Accepted {})),
            batchable: false,
        };
        c.on_frame(now, frame(0, Performative::Disposition(accept), &[]));
        let out = said(&mut c, now);
        let Some(Performative::Disposition(d)) = &out[0].0 else {
            panic!("{out:?}")
        };
        assert_eq!((d.first, d.settled), (id, true));
        let counts = orders_counts(&shared);
        assert_eq!((counts.active, counts.locked), (0, 0), "completed");
    }

    #[test]
    fn frames_out_of_order_end_what_they_break() {
        // Before open: the connection.
        let (mut c, _, now) = core();
        c.on_frame(now, frame(0, begin(), &[]));
        let out = said(&mut c, now);
        assert!(matches!(&out[0].0, Some(Performative::Close(c)) if c.error.is_some()));
        assert_eq!(c.state(), State::Closed);
        // A flow on a handle never attached: the session, with unattached-handle.
        let (mut c, _, now) = opened();
        c.on_frame(now, frame(0, credit(9, 1), &[]));
        let out = said(&mut c, now);
        let Some(Performative::End(e)) = &out[0].0 else {
            panic!("{out:?}")
        };
        let condition = format!("{:?}", e.error.as_ref().map(|e| &e.condition));
        assert!(condition.contains("UnattachedHandle"), "{condition}");
        assert_eq!(c.state(), State::Opened, "the connection goes on");
        // What the client sent before it heard the end is passed over; its end answers ours
        // (nothing said back); then the channel takes a new session.
        c.on_frame(now, frame(0, attach(0, Role::Sender), &[]));
        c.on_frame(now, frame(0, Performative::End(End { error: None }), &[]));
        assert!(said(&mut c, now).is_empty());
        assert_eq!(c.state(), State::Opened);
        c.on_frame(now, frame(0, begin(), &[]));
        assert!(matches!(
            said(&mut c, now)[0].0,
            Some(Performative::Begin(_))
        ));
    }

    #[test]
    fn time_closes_a_silent_connection_and_sends_the_heartbeats_asked_for() {
        let (mut c, _, now) = core();
        assert_eq!(c.next_timeout(), Some(now + Duration::from_secs(10)));
        c.on_frame(now, frame(0, open(Some(2_000)), &[]));
        said(&mut c, now);
        // The client asked for 2 s: an empty frame after 1 s of nothing going out.
        assert_eq!(c.next_timeout(), Some(now + Duration::from_secs(1)));
        c.on_timeout(now + Duration::from_secs(1));
        let later = now + Duration::from_secs(1);
        assert!(
            matches!(said(&mut c, later)[..], [(None, _)]),
            "a heartbeat"
        );
        // Silent past our idle time-out (5 s here): closed, saying so.
        c.on_timeout(now + Duration::from_secs(5));
        let out = said(&mut c, now + Duration::from_secs(5));
        let Some(Performative::Close(close)) = &out[0].0 else {
            panic!("{out:?}")
        };
        let why = close
            .error
            .as_ref()
            .and_then(|e| e.description.clone())
            .unwrap_or_default();
        assert!(why.contains("idle time-out"), "{why}");
        assert_eq!(c.next_timeout(), None);
    }
}
