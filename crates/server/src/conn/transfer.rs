//! What the client sends on its links: transfers (a message or a batch to an entity, a
//! `$cbs` token, a `$management` request), held to the session's incoming window, the link's
//! credit, the tier's largest message and the bytes the connection and the process may hold;
//! and its dispositions of what this server delivered (RCV-05), over a range of delivery ids
//! read as serial numbers.
use super::link::SENDER_CREDIT;
use super::{Connection, Node, CONN_INFLIGHT, FRAMING, INCOMING_WINDOW};
use crate::broker::Settle;
use crate::error::Fault;
use bytes::BytesMut;
use fe2o3_amqp_types::definitions::Role;
use fe2o3_amqp_types::messaging::{Accepted, DeliveryState, Modified, Rejected};
use fe2o3_amqp_types::performatives::{Disposition, Flow, Performative, Transfer};
use fe2o3_amqp_types::primitives::Value;
use sbp_engine::BrokerError;
use std::collections::BTreeMap;

/// The delivery ids of `unsettled` from `first` to `last`, as serial numbers (RFC 1982, as
/// part 2, 2.8.10 has them): a range whose end is below its start wraps past 2^32.
pub fn unsettled_in(unsettled: &BTreeMap<u32, String>, first: u32, last: u32) -> Vec<u32> {
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
pub fn runs(results: &[(u32, Option<BrokerError>)]) -> Vec<(u32, u32, Option<&BrokerError>)> {
    let mut out: Vec<(u32, u32, Option<&BrokerError>)> = Vec::new();
    for (id, failure) in results {
        match (out.last_mut(), failure) {
            (Some((_, last, None)), None) if last.wrapping_add(1) == *id => *last = *id,
            _ => out.push((*id, *id, failure.as_ref())),
        }
    }
    out
}

/// How a disposition's outcome settles (with a dead-letter's reason and description), or
/// None for one that settles nothing (RCV-05; released: AMQP 1.0 part 3, 3.4.4, the SDK
/// gives back what arrived outside a receive call and the delivery does not count).
fn settlement(state: &DeliveryState) -> Option<(Settle, Option<String>, Option<String>)> {
    Some(match state {
        DeliveryState::Accepted(_) => (Settle::Complete, None, None),
        DeliveryState::Modified(Modified {
            undeliverable_here: Some(true),
            ..
        }) => (Settle::Defer, None, None),
        DeliveryState::Modified(_) => (Settle::Abandon, None, None),
        DeliveryState::Released(_) => (Settle::Release, None, None),
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
                Settle::DeadLetter,
                field("DeadLetterReason"),
                field("DeadLetterErrorDescription"),
            )
        }
        _ => return None,
    })
}

impl Connection {
    /// A transfer from the client (part 2, 2.6.12 and 2.7.5), held to the session's incoming
    /// window, the link's credit, the largest message of the tier and the bytes this
    /// connection and the process may hold for unfinished transfers; an aborted one is
    /// dropped. A frame breaking one of them ends its link or session with the condition the
    /// spec names.
    pub(super) fn on_transfer(&mut self, channel: u16, t: Transfer, payload: BytesMut) {
        let handle = t.handle.0;
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        if s.incoming_left == 0 {
            return self.end_session(
                channel,
                Fault::WindowViolation(format!(
                    "more than the {INCOMING_WINDOW} transfers the incoming window allowed"
                )),
            );
        }
        s.incoming_left -= 1;
        s.next_incoming_id = s.next_incoming_id.wrapping_add(1);
        let widen = s.incoming_left < INCOMING_WINDOW / 2;
        let Some(link) = s.links.get_mut(&handle) else {
            if s.detaching.contains(&handle) {
                return; // sent before our detach reached the client
            }
            return self.end_session(channel, Fault::UnattachedHandle(handle));
        };
        if link.we_send() {
            return self.end_link(
                channel,
                handle,
                Fault::NotAllowed("a transfer on a link whose sender is this server".into()),
            );
        }
        // A new delivery takes a credit; one beyond the credit is refused.
        let partial = link.partial.take();
        if partial.is_none() {
            if link.credit == 0 {
                return self.end_link(
                    channel,
                    handle,
                    Fault::TransferLimit(
                        "a transfer beyond the link credit this server granted".into(),
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
                Some(Fault::MessageSize(format!(
                    "a message has at most {} bytes on this tier, with {FRAMING} of framing",
                    self.max_delivery - FRAMING,
                )))
            } else if self.inflight + grown > CONN_INFLIGHT {
                Some(Fault::ResourceLimit(format!(
                    "a connection holds at most {} MiB of unfinished transfers (sbp serve's limit)",
                    CONN_INFLIGHT >> 20
                )))
            } else if !self.shared.take_inflight(grown) {
                Some(Fault::ResourceLimit(format!(
                    "sbp serve holds at most {} MiB of unfinished transfers for all clients",
                    self.limits.inflight >> 20
                )))
            } else {
                None
            };
            if let Some(fault) = refusal {
                self.give_back(held);
                return self.end_link(channel, handle, fault);
            }
            self.inflight += grown;
            if let Some(link) = self.link_mut(channel, handle) {
                link.partial = Some((first, whole));
            }
            return;
        }
        self.give_back(held);
        let bytes = whole.freeze();
        let outcome = match node {
            Node::Entity(entity) => {
                let who = self.who();
                match self
                    .shared
                    .send(&who, &entity, first.message_format, &bytes)
                {
                    Ok(()) => DeliveryState::Accepted(Accepted {}),
                    Err(fault) => DeliveryState::Rejected(Rejected {
                        error: Some(fault.to_amqp()),
                    }),
                }
            }
            Node::Cbs => self.on_request(channel, None, &bytes),
            Node::Management(entity) => self.on_request(channel, Some(entity), &bytes),
        };
        if first.settled != Some(true) {
            if let (Some(id), Some(s)) = (first.delivery_id, self.sessions.get(&channel)) {
                let d = Disposition {
                    role: Role::Receiver,
                    first: id,
                    last: None,
                    settled: true,
                    state: Some(outcome),
                    batchable: false,
                };
                let out_channel = s.out_channel;
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
            next_incoming_id: Some(s.next_incoming_id),
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

    /// A `$cbs` (entity None) or `$management` request; the answer goes on the session's
    /// receiving link of that node.
    fn on_request(&mut self, channel: u16, entity: Option<String>, bytes: &[u8]) -> DeliveryState {
        let request = match crate::message::decode(bytes) {
            Ok(r) => r,
            Err(e) => {
                return DeliveryState::Rejected(Rejected {
                    error: Some(Fault::Decode(e).to_amqp()),
                })
            }
        };
        let answer = entity.as_deref().map(|entity| {
            let who = self.who();
            // The receiver a request speaks for (`associated-link-name`), else the client.
            let link = request
                .application_properties
                .as_ref()
                .and_then(|p| {
                    p.0.iter()
                        .find(|(k, _)| k.as_str() == "associated-link-name")
                })
                .and_then(|(_, v)| match v {
                    fe2o3_amqp_types::primitives::SimpleValue::String(s) => Some(s.clone()),
                    fe2o3_amqp_types::primitives::SimpleValue::Symbol(s) => Some(s.0.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| who.clone());
            self.shared.management(&who, &link, entity, &request)
        });
        let response = crate::mgmt::response(&request, answer);
        self.reply(channel, entity.is_none(), response);
        DeliveryState::Accepted(Accepted {})
    }

    pub(super) fn on_disposition(&mut self, channel: u16, d: Disposition) {
        if d.role != Role::Receiver {
            return;
        }
        let last = d.last.unwrap_or(d.first);
        let Some(state) = d.state.clone() else {
            return;
        };
        let Some((how, reason, description)) = settlement(&state) else {
            return;
        };
        let Some(s) = self.sessions.get_mut(&channel) else {
            return;
        };
        // Only what this session holds unsettled in the range is settled: ids never sent are
        // passed over, at the cost of what is there, not of the range's width (2^32 at most).
        let deliveries: Vec<(u32, String)> = unsettled_in(&s.unsettled, d.first, last)
            .into_iter()
            .filter_map(|id| s.unsettled.remove(&id).map(|token| (id, token)))
            .collect();
        let out_channel = s.out_channel;
        let who = self.who();
        let results = self
            .shared
            .settle(&who, deliveries, how, reason, description);
        if d.settled {
            return;
        }
        // The settled reply each SDK waits for: the outcome it asked for (without the
        // dead-letter error, which the SDKs would take for a failure), or the error; ids in a
        // row with the same answer go as one range.
        let echo = match state {
            DeliveryState::Rejected(_) => DeliveryState::Rejected(Rejected { error: None }),
            other => other,
        };
        for (first, last, failure) in runs(&results) {
            let state = match failure {
                Some(e) => DeliveryState::Rejected(Rejected {
                    error: Some(Fault::Broker(e.clone()).to_amqp()),
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_read_as_serial_numbers_and_answers_go_in_runs() {
        let unsettled: BTreeMap<u32, String> = [0, 1, 5, u32::MAX - 1]
            .into_iter()
            .map(|id| (id, format!("t{id}")))
            .collect();
        assert_eq!(unsettled_in(&unsettled, 1, 5), vec![1, 5]);
        assert_eq!(
            unsettled_in(&unsettled, u32::MAX - 3, 0),
            vec![u32::MAX - 1, 0]
        );
        assert_eq!(unsettled_in(&unsettled, 6, 7), Vec::<u32>::new());
        let lost = BrokerError::new(
            sbp_engine::ErrorKind::MessageLockLost,
            sbp_engine::text!("e-serve-unknown-lock", token = "t"),
        );
        let results = vec![
            (u32::MAX, None),
            (0, None),
            (1, Some(lost)),
            (2, None),
            (4, None),
        ];
        let r: Vec<(u32, u32, bool)> = runs(&results)
            .into_iter()
            .map(|(a, b, f)| (a, b, f.is_some()))
            .collect();
        assert_eq!(
            r,
            vec![
                (u32::MAX, 0, false),
                (1, 1, true),
                (2, 2, false),
                (4, 4, false)
            ]
        );
    }
}
