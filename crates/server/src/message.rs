//! Service Bus messages on the wire (AMQP 1.0 sections) to and from the playground's own: what
//! the SDKs send (`properties`, `header.ttl`, application properties with their AMQP types,
//! the `x-opt-scheduled-enqueue-time` annotation) and what they read back (the broker's
//! `x-opt-*` annotations, DeliveryCount with AMQP's meaning). Sources: ../shared/AMQP-NOTES.md,
//! azure-sdk-for-python `_common/message.py` and `_common/constants.py`, azure-sdk-for-js
//! `core-amqp/src/util/constants.ts`.
use crate::broker::Clock;
use fe2o3_amqp_types::messaging::{
    message::DecodeIntoMessage, ApplicationProperties, Batch, Body, Data, Header, Message,
    MessageAnnotations, MessageId, Properties,
};
use fe2o3_amqp_types::primitives::{
    Binary, OrderedMap, SimpleValue, Symbol, Timestamp, Uuid, Value,
};
use sbp_engine::time::{Instant, MAX_VALUE, NEVER};
use sbp_engine::{MessageView, PropertyValue};
use sbp_scenario::dur::Dur;
use sbp_scenario::SendDef;
use std::collections::BTreeMap;

/// A batch: one `data` section per message, each an encoded message (the SDKs' `0x80013700`).
pub const BATCH_FORMAT: u32 = 0x8001_3700;

pub type WireMessage = Message<Body<Value>>;

/// Decodes a transfer's payload.
pub fn decode(payload: &[u8]) -> Result<WireMessage, String> {
    crate::decode::bounded(payload, |b| {
        Body::<Value>::decode_message_from_reader(serde_amqp::read::SliceReader::new(b))
    })
    .map_err(|e| format!("the message could not be decoded: {e}"))
}

/// Encodes a message for a transfer or a `$management` answer. The header is written with
/// every field, delivery-count included even when 0: the Python SDK reads a missing one as
/// None (the service sends it).
pub fn encode(mut message: WireMessage) -> Vec<u8> {
    use fe2o3_amqp_types::messaging::message::__private::Serializable;
    use serde_amqp::described::Described;
    use serde_amqp::descriptor::Descriptor;
    let mut out = Vec::new();
    if let Some(h) = message.header.take() {
        let header = Value::Described(Box::new(Described {
            descriptor: Descriptor::Code(0x70),
            value: Value::List(vec![
                Value::Bool(h.durable),
                Value::Ubyte(h.priority.0),
                h.ttl.map_or(Value::Null, Value::Uint),
                Value::Bool(h.first_acquirer),
                Value::Uint(h.delivery_count),
            ]),
        }));
        out = serde_amqp::to_vec(&header).unwrap_or_default();
    }
    out.extend(serde_amqp::to_vec(&Serializable(message)).unwrap_or_default());
    out
}

/// The messages of a transfer: itself, or each of a batch's.
pub fn unbatch(format: Option<u32>, message: WireMessage) -> Result<Vec<WireMessage>, String> {
    if format != Some(BATCH_FORMAT) {
        return Ok(vec![message]);
    }
    match message.body {
        Body::Data(sections) => sections.iter().map(|d| decode(&d.0)).collect(),
        _ => Err("a batch carries its messages as data sections".into()),
    }
}

fn message_id_text(id: &MessageId) -> String {
    match id {
        MessageId::String(s) => s.clone(),
        MessageId::Ulong(n) => n.to_string(),
        MessageId::Uuid(u) => uuid::Uuid::from_bytes(u.clone().into_inner()).to_string(),
        MessageId::Binary(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

fn to_property(v: &SimpleValue) -> Option<PropertyValue> {
    Some(match v {
        SimpleValue::Null => PropertyValue::Null,
        SimpleValue::Bool(b) => PropertyValue::Bool(*b),
        SimpleValue::Ubyte(n) => PropertyValue::Int(i32::from(*n)),
        SimpleValue::Ushort(n) => PropertyValue::Int(i32::from(*n)),
        SimpleValue::Byte(n) => PropertyValue::Int(i32::from(*n)),
        SimpleValue::Short(n) => PropertyValue::Int(i32::from(*n)),
        SimpleValue::Int(n) => PropertyValue::Int(*n),
        SimpleValue::Uint(n) => PropertyValue::Long(i64::from(*n)),
        SimpleValue::Long(n) => PropertyValue::Long(*n),
        SimpleValue::Ulong(n) => PropertyValue::Long(i64::try_from(*n).ok()?),
        SimpleValue::Float(f) => PropertyValue::Double(f64::from(f.into_inner())),
        SimpleValue::Double(f) => PropertyValue::Double(f.into_inner()),
        SimpleValue::Char(c) => PropertyValue::String(c.to_string()),
        SimpleValue::Timestamp(t) => PropertyValue::Timestamp(t.milliseconds()),
        SimpleValue::Uuid(u) => PropertyValue::Uuid(u128::from_be_bytes(u.clone().into_inner())),
        SimpleValue::String(s) => PropertyValue::String(s.clone()),
        SimpleValue::Symbol(s) => PropertyValue::String(s.0.clone()),
        _ => return None,
    })
}

fn from_property(v: &PropertyValue) -> SimpleValue {
    match v {
        PropertyValue::Null => SimpleValue::Null,
        PropertyValue::String(s) => SimpleValue::String(s.clone()),
        PropertyValue::Int(n) => SimpleValue::Int(*n),
        PropertyValue::Long(n) => SimpleValue::Long(*n),
        PropertyValue::Double(d) => SimpleValue::Double((*d).into()),
        PropertyValue::Bool(b) => SimpleValue::Bool(*b),
        PropertyValue::Timestamp(t) => SimpleValue::Timestamp(Timestamp::from_milliseconds(*t)),
        PropertyValue::Uuid(u) => SimpleValue::Uuid(Uuid::from(u.to_be_bytes())),
    }
}

/// The body as the engine keeps it: data sections joined, an `amqp-value` as its value's
/// encoding, `amqp-sequence` sections as the encoding of a list of their lists (`engine::body`).
fn to_body(body: &Body<Value>) -> sbp_engine::Body {
    use sbp_engine::body::Section;
    let (bytes, section) = match body {
        Body::Data(sections) => (
            sections.iter().flat_map(|d| d.0.iter().copied()).collect(),
            Section::Data,
        ),
        Body::Value(v) => (serde_amqp::to_vec(&v.0).unwrap_or_default(), Section::Value),
        Body::Sequence(seq) => {
            let lists = seq.iter().map(|s| Value::List(s.0.clone())).collect();
            (
                serde_amqp::to_vec(&Value::List(lists)).unwrap_or_default(),
                Section::Sequence,
            )
        }
        Body::Empty => (Vec::new(), Section::Data),
    };
    sbp_engine::Body { bytes, section }
}

/// The body section a receiver gets: the one the message came in. Bytes a scenario file gave
/// for a value or sequence that do not decode as one go out as data.
fn from_body(body: &sbp_engine::Body) -> Body<Value> {
    use fe2o3_amqp_types::messaging::{AmqpSequence, AmqpValue};
    use sbp_engine::body::Section;
    let data = || Body::Data(Batch::new(vec![Data(Binary::from(body.bytes.clone()))]));
    match body.section {
        Section::Data => data(),
        Section::Value => {
            match crate::decode::bounded(&body.bytes, serde_amqp::from_slice::<Value>) {
                Ok(v) => Body::Value(AmqpValue(v)),
                Err(_) => data(),
            }
        }
        Section::Sequence => {
            match crate::decode::bounded(&body.bytes, serde_amqp::from_slice::<Vec<Vec<Value>>>) {
                Ok(lists) if !lists.is_empty() => Body::Sequence(Batch::new(
                    lists.into_iter().map(AmqpSequence).collect::<Vec<_>>(),
                )),
                _ => data(),
            }
        }
    }
}

fn annotation<'a>(m: &'a WireMessage, key: &str) -> Option<&'a Value> {
    let annotations = m.message_annotations.as_ref()?;
    annotations
        .0
        .iter()
        .find(|(k, _)| matches!(k, fe2o3_amqp_types::messaging::annotations::OwnedKey::Symbol(s) if s.0 == key))
        .map(|(_, v)| v)
}

/// A message an SDK sent to `to`, as a scenario step sends it. `clock` puts the engine's
/// instants on the wall clock (a scheduled enqueue time comes as a UTC timestamp).
pub fn to_send(m: &WireMessage, to: &str, clock: Clock) -> Result<SendDef, String> {
    let p = m.properties.clone().unwrap_or_default();
    let mut system = BTreeMap::new();
    let mut put = |name: &str, v: Option<String>| {
        if let Some(v) = v {
            system.insert(name.to_string(), v);
        }
    };
    put("To", p.to.clone());
    put("ReplyTo", p.reply_to.clone());
    put("SessionId", p.group_id.clone());
    put("ReplyToSessionId", p.reply_to_group_id.clone());
    put("ContentType", p.content_type.as_ref().map(|s| s.0.clone()));
    let mut properties = BTreeMap::new();
    if let Some(ApplicationProperties(map)) = &m.application_properties {
        for (k, v) in map.iter() {
            let value = to_property(v).ok_or_else(|| {
                format!("application property '{k}' has a type Service Bus does not take")
            })?;
            properties.insert(k.clone(), value);
        }
    }
    let ttl = m
        .header
        .as_ref()
        .and_then(|h| h.ttl)
        .map(|ms| Dur(i64::from(ms)));
    let scheduled = match annotation(m, "x-opt-scheduled-enqueue-time") {
        Some(Value::Timestamp(t)) => Some(Dur(clock.instant(t.milliseconds()).max(0))),
        _ => None,
    };
    Ok(SendDef {
        to: to.to_string(),
        message_id: p.message_id.as_ref().map(message_id_text),
        ttl,
        scheduled_enqueue_time: scheduled,
        subject: p.subject.clone(),
        correlation_id: p.correlation_id.as_ref().map(message_id_text),
        properties,
        system_properties: system,
        body: to_body(&m.body),
        body_size: None,
        count: None,
    })
}

/// How a delivery shows a message: to a locked receive, or to peek (RCV-11, MSG-02, TTL-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    Received,
    Peeked,
}

/// A stored message as the broker delivers it. DeliveryCount travels with AMQP's meaning
/// (failed deliveries so far): the engine's receive view counts the delivery under way, as
/// .NET shows it, so one is taken off (AMQP-NOTES section 2).
pub fn from_view(v: &MessageView, clock: Clock, shown: Shown) -> WireMessage {
    let utc = |at: Instant| Timestamp::from_milliseconds(clock.utc(at));
    let delivery_count = match shown {
        Shown::Received => v.delivery_count.saturating_sub(1),
        Shown::Peeked => v.delivery_count,
    };
    let header = Header {
        durable: true,
        priority: Default::default(),
        ttl: (v.time_to_live < MAX_VALUE)
            .then(|| u32::try_from(v.time_to_live).unwrap_or(u32::MAX)),
        first_acquirer: delivery_count == 0,
        delivery_count,
    };
    let sys = |k: &str| v.system_properties.get(k).cloned();
    let properties = Properties {
        message_id: Some(MessageId::String(v.message_id.clone())),
        to: sys("To"),
        subject: v.subject.clone(),
        reply_to: sys("ReplyTo"),
        correlation_id: v.correlation_id.clone().map(MessageId::String),
        content_type: sys("ContentType").map(Symbol::from),
        group_id: sys("SessionId"),
        reply_to_group_id: sys("ReplyToSessionId"),
        ..Default::default()
    };
    let mut annotations = OrderedMap::new();
    let mut put = |k: &str, value: Value| {
        annotations.insert(Symbol::from(k).into(), value);
    };
    put(
        "x-opt-sequence-number",
        Value::Long(v.sequence_number as i64),
    );
    put(
        "x-opt-enqueue-sequence-number",
        Value::Long(v.enqueued_sequence_number as i64),
    );
    put(
        "x-opt-enqueued-time",
        Value::Timestamp(utc(v.enqueued_time)),
    );
    let state = match v.state {
        sbp_engine::MessageState::Active => 0,
        sbp_engine::MessageState::Deferred => 1,
        sbp_engine::MessageState::Scheduled => 2,
    };
    put("x-opt-message-state", Value::Int(state));
    if let Some(at) = v.scheduled_enqueue_time {
        put("x-opt-scheduled-enqueue-time", Value::Timestamp(utc(at)));
    }
    if let Some(until) = v.locked_until.filter(|_| shown == Shown::Received) {
        put("x-opt-locked-until", Value::Timestamp(utc(until)));
    }
    if let Some(source) = &v.dead_letter_source {
        put("x-opt-deadletter-source", Value::String(source.clone()));
    }
    let mut application = OrderedMap::new();
    for (k, value) in &v.application_properties {
        application.insert(k.clone(), from_property(value));
    }
    let _ = NEVER;
    Message {
        header: Some(header),
        delivery_annotations: None,
        message_annotations: Some(MessageAnnotations(annotations)),
        properties: Some(properties),
        application_properties: Some(ApplicationProperties(application)),
        body: from_body(&v.body),
        footer: None,
    }
}

/// The 16-byte delivery tag of a lock token (a GUID string): its bytes in .NET's order, as
/// Python reads it (`uuid.UUID(bytes_le=tag)`) and .NET (`new Guid(tag)`).
pub fn lock_tag(token: &str) -> Option<[u8; 16]> {
    uuid::Uuid::parse_str(token).ok().map(|u| u.to_bytes_le())
}

/// The lock token a delivery tag or a `$management` uuid names.
pub fn tag_token(tag: &[u8]) -> Option<String> {
    let bytes: [u8; 16] = tag.try_into().ok()?;
    Some(uuid::Uuid::from_bytes_le(bytes).hyphenated().to_string())
}
