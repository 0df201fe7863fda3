//! Links: attach (an entity, `$cbs`, an entity's `$management`; a session receiver's filter),
//! detach, flow (credit and drain, part 2, 2.6.7), and what this server sends on a link the
//! client receives on: its messages, and the answers to its requests, each delivery split at
//! the client's max-frame-size.
use super::{Connection, Link, Node, MAX_LINKS_PER_SESSION, MAX_NAME};
use crate::error::Fault;
use crate::service::Delivery;
use fe2o3_amqp_types::definitions::{Role, SenderSettleMode};
use fe2o3_amqp_types::messaging::TargetArchetype;
use fe2o3_amqp_types::performatives::{Attach, Detach, Flow, Performative, Transfer};
use fe2o3_amqp_types::primitives::{Binary, OrderedMap, Symbol, Value};
use sbp_engine::ReceiveMode;

/// The source filter that asks for a session (azure-sdk-for-python `_common/constants.py`).
const SESSION_FILTER: &str = "com.microsoft:session-filter";
/// .NET ticks at the Unix epoch: the session's locked-until travels in ticks.
const DOTNET_EPOCH_TICKS: i64 = 621_355_968_000_000_000;
/// Credit granted to a client's sender link at a time.
pub(super) const SENDER_CREDIT: u32 = 1000;
/// The most messages one delivery round takes from the engine for a link.
const MAX_ROUND: u32 = 100;

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

/// The SessionId a session filter asks for (None: the next available).
fn wanted_session(filter: Value) -> Option<String> {
    match filter {
        Value::String(s) => Some(s),
        Value::Described(d) => match d.value {
            Value::String(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

impl Connection {
    pub(super) fn on_attach(&mut self, channel: u16, a: Attach) {
        let Some(session) = self.sessions.get(&channel) else {
            return;
        };
        if session.links.contains_key(&a.handle.0) {
            return self.end_session(channel, Fault::HandleInUse(a.handle.0));
        }
        let out_channel = session.out_channel;
        let refused = if session.links.len() >= MAX_LINKS_PER_SESSION {
            Some(Fault::ResourceLimit(format!(
                "a session has at most {MAX_LINKS_PER_SESSION} links (sbp serve's limit)"
            )))
        } else if a.name.len() > MAX_NAME {
            Some(Fault::ResourceLimit(format!(
                "a link name has at most {MAX_NAME} bytes (sbp serve's limit)"
            )))
        } else {
            None
        };
        // The client's role is the other side of ours.
        let ours = match a.role {
            Role::Receiver => Role::Sender,
            Role::Sender => Role::Receiver,
        };
        let we_send = ours == Role::Sender;
        let address = if we_send {
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
        let (mut missing, queue) = match &node {
            Node::Entity(path) | Node::Management(path) => self.shared.resolve(path),
            Node::Cbs => (None, None),
        };
        let handle = a.handle.0;
        // SES-02: a session filter (the SessionId, or null for the next available) accepts a
        // session for this receiver; the reply names it and its LockedUntil (.NET ticks).
        let mut a = a;
        let mut session = None;
        let mut properties = None;
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
            (filter, we_send, &node, &missing, &refused)
        {
            let who = self.who();
            let accepted =
                self.shared
                    .accept_session(&who, entity, &a.name, wanted_session(wanted));
            match accepted {
                Ok(Some(v)) => {
                    let ticks = v.locked_until_utc * 10_000 + DOTNET_EPOCH_TICKS;
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
                Ok(None) => {}
                Err(e) => missing = Some(e),
            }
        }
        let reply = Attach {
            name: a.name.clone(),
            handle: a.handle.clone(),
            role: ours.clone(),
            snd_settle_mode: a.snd_settle_mode.clone(),
            rcv_settle_mode: a.rcv_settle_mode.clone(),
            // A node that does not exist: the attach says so with no terminus of ours, and
            // the detach that follows carries the error (as the service does).
            source: if missing.is_some() && we_send {
                None
            } else {
                a.source.clone()
            },
            target: if missing.is_some() && !we_send {
                None
            } else {
                a.target.clone()
            },
            unsettled: None,
            incomplete_unsettled: false,
            initial_delivery_count: we_send.then_some(0),
            max_message_size: Some((self.max_delivery - super::FRAMING) as u64),
            offered_capabilities: None,
            desired_capabilities: None,
            properties,
        };
        self.push(out_channel, Performative::Attach(reply), &[]);
        if let Some(fault) = refused.or(missing.map(Fault::Broker)) {
            let detach = Detach {
                handle: a.handle.clone(),
                closed: true,
                error: Some(fault.to_amqp()),
            };
            self.push(out_channel, Performative::Detach(detach), &[]);
            if let Some(s) = self.sessions.get_mut(&channel) {
                s.detaching.insert(handle);
            }
            return;
        }
        let link = Link {
            name: a.name.clone(),
            ours,
            node,
            mode: if a.snd_settle_mode == SenderSettleMode::Settled {
                ReceiveMode::ReceiveAndDelete
            } else {
                ReceiveMode::PeekLock
            },
            session,
            credit: 0,
            delivery_count: a.initial_delivery_count.unwrap_or(0),
            drain: false,
            partial: None,
            queue,
        };
        if let Some(s) = self.sessions.get_mut(&channel) {
            s.links.insert(handle, link);
        }
        if !we_send {
            // The client sends once it has credit.
            let delivery_count = a.initial_delivery_count.unwrap_or(0);
            self.grant(channel, handle, delivery_count, SENDER_CREDIT);
        }
    }

    /// Detaches a link with `fault` (closed: the client must attach again); frames still in
    /// flight on it are passed over until the client's detach answers.
    pub(super) fn end_link(&mut self, channel: u16, handle: u32, fault: Fault) {
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        let out_channel = s.out_channel;
        s.detaching.insert(handle);
        let partial = s.links.remove(&handle).and_then(|l| l.partial);
        self.forget_partial(partial);
        let detach = Detach {
            handle: handle.into(),
            closed: true,
            error: Some(fault.to_amqp()),
        };
        self.push(out_channel, Performative::Detach(detach), &[]);
    }

    pub(super) fn on_detach(&mut self, channel: u16, d: Detach) {
        let handle = d.handle.0;
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        // A detach that answers ours (a link this server refused or ended) is not answered.
        let Some(mut link) = s.links.remove(&handle) else {
            if !s.detaching.remove(&handle) {
                self.end_session(channel, Fault::UnattachedHandle(handle));
            }
            return;
        };
        let out_channel = s.out_channel;
        self.forget_partial(link.partial.take());
        // SES-04: closing a session receiver closes its session (nothing counted).
        if let (Some(_), Node::Entity(entity)) = (&link.session, &link.node) {
            let who = self.who();
            self.shared.close_session(&who, entity, &link.name);
        }
        let detach = Detach {
            handle: handle.into(),
            closed: true,
            error: None,
        };
        self.push(out_channel, Performative::Detach(detach), &[]);
    }

    /// A link flow of ours: its delivery-count and credit, and whether it says a drain is
    /// done; with the session's windows as they are.
    fn flow(&mut self, channel: u16, handle: u32, delivery_count: u32, credit: u32, drain: bool) {
        let Some(s) = self.sessions.get(&channel) else {
            return;
        };
        let out_channel = s.out_channel;
        let flow = Flow {
            next_incoming_id: Some(s.next_incoming_id),
            incoming_window: s.incoming_left,
            next_outgoing_id: s.next_outgoing_id,
            outgoing_window: 1 << 20,
            handle: Some(handle.into()),
            delivery_count: Some(delivery_count),
            link_credit: Some(credit),
            available: None,
            drain,
            echo: false,
            properties: None,
        };
        self.push(out_channel, Performative::Flow(flow), &[]);
    }

    /// Gives a client's sending link `credit` from its `delivery_count` on, and keeps it: a
    /// transfer beyond it is refused.
    pub(super) fn grant(&mut self, channel: u16, handle: u32, delivery_count: u32, credit: u32) {
        let Some(link) = self.link_mut(channel, handle) else {
            return;
        };
        link.credit = credit;
        self.flow(channel, handle, delivery_count, credit, false);
    }

    pub(super) fn on_flow(&mut self, channel: u16, flow: Flow) {
        let Some(handle) = flow.handle.as_ref().map(|h| h.0) else {
            return; // a session-level flow: our outgoing window is large
        };
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        let Some(link) = s.links.get_mut(&handle) else {
            if !s.detaching.contains(&handle) {
                self.end_session(channel, Fault::UnattachedHandle(handle));
            }
            return;
        };
        if !link.we_send() {
            return;
        }
        // Part 2, 2.6.7: credit = the receiver's delivery-count + link-credit - ours.
        let theirs = flow.delivery_count.unwrap_or(link.delivery_count);
        let credit = flow.link_credit.unwrap_or(0);
        link.credit = theirs
            .wrapping_add(credit)
            .wrapping_sub(link.delivery_count);
        link.drain = flow.drain;
        self.deliver(channel, handle);
    }

    /// Every receiving link with credit whose queue has a message for it gets it (one look
    /// at the broker for all of them).
    pub(super) fn deliver_all(&mut self) {
        let waiting: Vec<(u16, u32, String, Option<String>)> = self
            .sessions
            .iter()
            .flat_map(|(c, s)| {
                s.links.iter().filter_map(|(h, l)| match &l.node {
                    Node::Entity(e) if l.we_send() && l.credit > 0 => {
                        Some((*c, *h, e.clone(), l.session.clone()))
                    }
                    _ => None,
                })
            })
            .collect();
        let asked: Vec<(&str, Option<&str>)> = waiting
            .iter()
            .map(|(_, _, e, s)| (e.as_str(), s.as_deref()))
            .collect();
        let ready = self.shared.ready(&asked);
        for ((c, h, _, _), ready) in waiting.iter().zip(ready) {
            if ready {
                self.deliver(*c, *h);
            }
        }
    }

    /// Sends what the engine gives for the credit a receiving link has; on drain, uses up the
    /// rest of the credit and says so.
    fn deliver(&mut self, channel: u16, handle: u32) {
        let who = self.who();
        let Some(link) = self.link(channel, handle) else {
            return;
        };
        let Node::Entity(entity) = &link.node else {
            return;
        };
        let (entity, receiver, mode, credit) =
            (entity.clone(), link.name.clone(), link.mode, link.credit);
        if credit > 0 {
            let got = self
                .shared
                .receive(&who, &entity, &receiver, mode, credit.min(MAX_ROUND));
            for d in got {
                self.send_message(channel, handle, d, mode);
            }
        }
        let Some(link) = self.link_mut(channel, handle) else {
            return;
        };
        if link.drain && link.credit > 0 {
            link.delivery_count = link.delivery_count.wrapping_add(link.credit);
            link.credit = 0;
            link.drain = false;
            let dc = link.delivery_count;
            self.flow(channel, handle, dc, 0, true);
        }
    }

    /// A message to a receiving client: under PeekLock kept unsettled by its delivery id
    /// until the client's disposition.
    fn send_message(&mut self, channel: u16, handle: u32, d: Delivery, mode: ReceiveMode) {
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        let delivery_id = s.next_delivery_id;
        s.next_delivery_id = s.next_delivery_id.wrapping_add(1);
        let peek_lock = mode == ReceiveMode::PeekLock;
        if let (true, Some(token)) = (peek_lock, d.lock_token) {
            s.unsettled.insert(delivery_id, token);
        }
        // Deliveries the client never settles (their locks lapsed, their messages gone) are
        // let go once the map has doubled since the last look: its size follows the locks
        // the broker still keeps, not the run's length.
        if s.unsettled.len() >= s.prune_unsettled_at {
            self.shared.keep_held(&mut s.unsettled);
            s.prune_unsettled_at = (2 * s.unsettled.len()).max(super::PRUNE_UNSETTLED_FROM);
        }
        if let Some(link) = s.links.get_mut(&handle) {
            link.delivery_count = link.delivery_count.wrapping_add(1);
            link.credit = link.credit.saturating_sub(1);
        }
        self.send_delivery(channel, handle, delivery_id, d.tag, !peek_lock, &d.payload);
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

    /// Sends a response on the client's receiving link for `$cbs` or `$management` (the one
    /// whose target is the request's reply-to, else the first), settled.
    pub(super) fn reply(&mut self, channel: u16, cbs: bool, response: crate::message::WireMessage) {
        let reply_to = response
            .properties
            .as_ref()
            .and_then(|p| p.to.clone())
            .unwrap_or_default();
        let Some(s) = self.sessions.get(&channel) else {
            return;
        };
        let mut candidates: Vec<(&u32, &Link)> = s
            .links
            .iter()
            .filter(|(_, l)| {
                l.we_send()
                    && matches!(l.node, Node::Cbs) == cbs
                    && !matches!(l.node, Node::Entity(_))
            })
            .collect();
        candidates.sort_by_key(|(h, _)| **h);
        let chosen = candidates
            .iter()
            .find(|(_, l)| !reply_to.is_empty() && l.name.contains(&reply_to))
            .or_else(|| candidates.first())
            .map(|(h, _)| **h);
        let Some(handle) = chosen else { return };
        let payload = crate::message::encode(response);
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
