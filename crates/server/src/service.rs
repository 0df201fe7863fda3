//! What a connection asks of the broker, and nothing else: each call takes the broker's lock
//! once, turns AMQP into the engine's terms (through [`crate::message`]) and back, and wakes
//! the receivers waiting on what changed. The protocol core ([`crate::conn`]) calls only
//! these; it never holds the broker.
use crate::broker::{QueueKey, Settle};
use crate::error::Fault;
use crate::message::{self, Shown};
use crate::shared::Shared;
use sbp_engine::{BrokerError, ReceiveMode};

/// A message for a receiver: its encoded sections, the delivery tag (the 16-byte lock token
/// under PeekLock) and the lock token that settles it.
#[derive(Debug)]
pub struct Delivery {
    pub payload: Vec<u8>,
    pub tag: Vec<u8>,
    pub lock_token: Option<String>,
}

/// A session a receiver's attach accepted (SES-02): its SessionId and LockedUntil in Unix ms.
#[derive(Debug)]
pub struct Accepted {
    pub session_id: String,
    pub locked_until_utc: i64,
}

impl Shared {
    /// What an attach's address names: the error when nothing, and the queue a receiver
    /// there waits on.
    pub fn resolve(&self, path: &str) -> (Option<BrokerError>, Option<QueueKey>) {
        match self.lock().queue_key(path) {
            Ok(key) => (None, Some(key)),
            Err(e) => (Some(e), None),
        }
    }

    /// SES-02: accepts a session for receiver `link` (a SessionId, or the next available).
    pub fn accept_session(
        &self,
        who: &str,
        entity: &str,
        link: &str,
        wanted: Option<String>,
    ) -> Result<Option<Accepted>, BrokerError> {
        let mut broker = self.lock();
        let clock = broker.clock();
        let view = broker.session(
            who,
            entity,
            link,
            sbp_scenario::SessionOpDef::Accept,
            wanted,
            None,
        )?;
        Ok(view.map(|v| Accepted {
            locked_until_utc: clock.utc(v.locked_until),
            session_id: v.session_id,
        }))
    }

    /// SES-04: a session receiver's link closed: its session closes (nothing counted).
    pub fn close_session(&self, who: &str, entity: &str, link: &str) {
        let _ = self.lock().session(
            who,
            entity,
            link,
            sbp_scenario::SessionOpDef::Close,
            None,
            None,
        );
        self.bump();
    }

    /// SEND-01: a message (or a batch, `format`) sent to `entity`; every message of a batch
    /// is sent up to the first refused.
    pub fn send(
        &self,
        who: &str,
        entity: &str,
        format: Option<u32>,
        bytes: &[u8],
    ) -> Result<(), Fault> {
        let messages = message::decode(bytes)
            .and_then(|m| message::unbatch(format, m))
            .map_err(Fault::Decode)?;
        let mut broker = self.lock();
        let clock = broker.clock();
        let tier = broker.sim.ns().tier();
        let largest = tier.max_message_size();
        // SEND-04: a batch is one message to the service: all of it within the tier's largest
        // (the SDKs size their batches by the link's max-message-size, which says it).
        if format == Some(message::BATCH_FORMAT) && bytes.len() as u64 > largest {
            return Err(Fault::Broker(BrokerError::new(
                sbp_engine::ErrorKind::MessageSizeExceeded,
                sbp_engine::text!(
                    "e-too-large",
                    size = bytes.len(),
                    tier = tier.to_string(),
                    max = largest
                ),
            )));
        }
        let mut result = Ok(());
        for m in &messages {
            let mut def = match message::to_send(m, entity, clock) {
                Ok(def) => def,
                Err(e) => {
                    result = Err(Fault::InvalidField(e));
                    break;
                }
            };
            // SEND-04: a body past the tier's largest message is refused by the engine as the
            // service refuses it; the step records its size, not its bytes (nothing is kept).
            let size = def.body.len() as u64;
            if size > largest {
                def.body_size = Some(size);
                def.body = sbp_engine::Body::default();
            }
            if let Err(e) = broker.send(who, def) {
                result = Err(Fault::Broker(e));
                break;
            }
        }
        drop(broker);
        self.bump();
        result
    }

    /// RCV-01, RCV-02: up to `count` messages for receiver `link` of `entity`, encoded.
    pub fn receive(
        &self,
        who: &str,
        entity: &str,
        link: &str,
        mode: ReceiveMode,
        count: u32,
    ) -> Vec<Delivery> {
        let mut broker = self.lock();
        let clock = broker.clock();
        let Ok(got) = broker.receive(who, entity, link, mode, count) else {
            return Vec::new();
        };
        drop(broker);
        if mode == ReceiveMode::ReceiveAndDelete && !got.is_empty() {
            self.bump();
        }
        got.iter()
            .map(|m| Delivery {
                payload: message::encode(message::from_view(m, clock, Shown::Received)),
                tag: match m.lock_token.as_deref().and_then(message::lock_tag) {
                    Some(tag) => tag.to_vec(),
                    None => m.sequence_number.to_be_bytes().to_vec(),
                },
                lock_token: m.lock_token.clone(),
            })
            .collect()
    }

    /// RCV-05: settles each delivery (id, lock token) one way; each one's error, if any.
    pub fn settle(
        &self,
        who: &str,
        deliveries: Vec<(u32, String)>,
        how: Settle,
        reason: Option<String>,
        description: Option<String>,
    ) -> Vec<(u32, Option<BrokerError>)> {
        let mut broker = self.lock();
        let results = deliveries
            .into_iter()
            .map(|(id, token)| {
                let r = broker.settle(who, &token, how, reason.clone(), description.clone());
                (id, r.err())
            })
            .collect();
        drop(broker);
        self.bump();
        results
    }

    /// Which of the waiting receivers (entity, held session) would get a message now: one
    /// look at the broker for all of them.
    pub fn ready(&self, waiting: &[(&str, Option<&str>)]) -> Vec<bool> {
        let broker = self.lock();
        waiting
            .iter()
            .map(|(entity, session)| broker.has_available(entity, *session))
            .collect()
    }

    /// Keeps, of `unsettled` deliveries, those whose lock the broker still keeps.
    pub fn keep_held(&self, unsettled: &mut std::collections::BTreeMap<u32, String>) {
        let broker = self.lock();
        unsettled.retain(|_, token| broker.held(token).is_some());
    }

    /// A `$management` request on `entity` for receiver `link`: (status code, body).
    pub fn management(
        &self,
        who: &str,
        link: &str,
        entity: &str,
        request: &message::WireMessage,
    ) -> Result<(i32, fe2o3_amqp_types::primitives::Value), BrokerError> {
        let answer = crate::mgmt::handle(&mut self.lock(), who, link, entity, request);
        self.bump();
        answer
    }

    /// The largest message a delivery may gather: the tier's (SEND-04).
    pub fn largest_message(&self) -> u64 {
        self.lock().sim.ns().tier().max_message_size()
    }
}
