//! `<entity>/$management` requests: request and response maps as the SDKs write and read them
//! (.NET `Amqp/ManagementConstants.cs`, Python `_common/constants.py` and
//! `_common/mgmt_handlers.py`, JS `service-bus/src/core/managementClient.ts`).
use crate::broker::{Broker, Settle};
use crate::message::{self, Shown, WireMessage};
use fe2o3_amqp_types::messaging::Body;
use fe2o3_amqp_types::primitives::{
    Array, Binary, OrderedMap, SimpleValue, Symbol, Timestamp, Uuid, Value,
};
use sbp_engine::{BrokerError, ErrorKind};

fn bad(what: impl Into<String>) -> BrokerError {
    BrokerError::new(
        ErrorKind::InvalidOperation,
        sbp_engine::text!("e-serve-request", what = what.into()),
    )
}

fn get<'a>(map: &'a OrderedMap<Value, Value>, key: &str) -> Option<&'a Value> {
    map.iter()
        .find(|(k, _)| {
            matches!(k, Value::String(s) if s == key) || matches!(k, Value::Symbol(s) if s.0 == key)
        })
        .map(|(_, v)| v)
}

fn items(v: Option<&Value>) -> Vec<Value> {
    match v {
        Some(Value::Array(a)) => a.0.clone(),
        Some(Value::List(l)) => l.clone(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other.clone()],
    }
}

fn number(v: &Value) -> Option<i64> {
    match v {
        Value::Long(n) => Some(*n),
        Value::Int(n) => Some(i64::from(*n)),
        Value::Uint(n) => Some(i64::from(*n)),
        Value::Ulong(n) => i64::try_from(*n).ok(),
        _ => None,
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Symbol(s)) => Some(s.0.clone()),
        _ => None,
    }
}

/// A `$management` lock token: an AMQP uuid (standard byte order) or its text.
fn token(v: &Value) -> Option<String> {
    match v {
        Value::Uuid(u) => Some(
            uuid::Uuid::from_bytes(u.clone().into_inner())
                .hyphenated()
                .to_string(),
        ),
        Value::String(s) => Some(s.to_ascii_lowercase()),
        _ => None,
    }
}

fn uuid_value(token: &str) -> Value {
    let u = uuid::Uuid::parse_str(token).unwrap_or_default();
    Value::Uuid(Uuid::from(*u.as_bytes()))
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    let mut m = OrderedMap::new();
    for (k, v) in entries {
        m.insert(Value::String(k.to_string()), v);
    }
    Value::Map(m)
}

/// The `$management` operations this server answers, by the names the SDKs send in the
/// request's `operation` application property; parsed once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    RenewLock,
    Peek,
    ReceiveBySequenceNumber,
    Schedule,
    CancelScheduled,
    UpdateDisposition,
    RenewSessionLock,
    GetSessionState,
    SetSessionState,
}

impl Operation {
    /// The operation a request names; one this server does not answer is NotSupported,
    /// naming it.
    pub fn parse(name: &str) -> Result<Operation, BrokerError> {
        Ok(match name {
            "com.microsoft:renew-lock" => Operation::RenewLock,
            "com.microsoft:peek-message" => Operation::Peek,
            "com.microsoft:receive-by-sequence-number" => Operation::ReceiveBySequenceNumber,
            "com.microsoft:schedule-message" => Operation::Schedule,
            "com.microsoft:cancel-scheduled-message" => Operation::CancelScheduled,
            "com.microsoft:update-disposition" => Operation::UpdateDisposition,
            "com.microsoft:renew-session-lock" => Operation::RenewSessionLock,
            "com.microsoft:get-session-state" => Operation::GetSessionState,
            "com.microsoft:set-session-state" => Operation::SetSessionState,
            other => {
                return Err(BrokerError::new(
                    ErrorKind::NotSupported,
                    sbp_engine::text!(
                        "e-serve-operation",
                        operation = other.chars().take(100).collect::<String>()
                    ),
                ))
            }
        })
    }
}

/// The `operation` a request names (a string or a symbol).
pub fn operation_of(request: &WireMessage) -> String {
    let value = request
        .application_properties
        .as_ref()
        .and_then(|p| p.0.iter().find(|(k, _)| k.as_str() == "operation"))
        .map(|(_, v)| v);
    match value {
        Some(SimpleValue::String(s)) => s.clone(),
        Some(SimpleValue::Symbol(s)) => s.0.clone(),
        _ => String::new(),
    }
}

/// Answers one request: (status code, body). The caller holds the broker, and wakes the
/// waiting receivers after.
pub fn handle(
    broker: &mut Broker,
    who: &str,
    link: &str,
    entity: &str,
    request: &WireMessage,
) -> Result<(i32, Value), BrokerError> {
    let operation = Operation::parse(&operation_of(request))?;
    let empty = OrderedMap::new();
    let request = match &request.body {
        Body::Value(v) => match &v.0 {
            Value::Map(m) => m,
            _ => &empty,
        },
        _ => &empty,
    };
    let start = broker.clock();
    let utc = |at: i64| Value::Timestamp(Timestamp::from_milliseconds(start.utc(at)));
    let answer = match operation {
        Operation::RenewLock => {
            let mut expirations = Vec::new();
            for t in items(get(request, "lock-tokens")) {
                let t = token(&t).ok_or_else(|| bad("lock-tokens"))?;
                expirations.push(utc(broker.renew(who, &t)?));
            }
            (
                200,
                map(vec![("expirations", Value::Array(Array(expirations)))]),
            )
        }
        Operation::Peek => {
            let from = get(request, "from-sequence-number")
                .and_then(number)
                .and_then(|n| u64::try_from(n).ok());
            let count = get(request, "message-count").and_then(number).unwrap_or(1);
            let count = u32::try_from(count.clamp(1, 10_000)).unwrap_or(1);
            let got = broker.peek(who, entity, from, count)?;
            if got.is_empty() {
                (204, Value::Null)
            } else {
                let messages = got
                    .iter()
                    .map(|m| {
                        let bytes = message::encode(message::from_view(m, start, Shown::Peeked));
                        map(vec![("message", Value::Binary(Binary::from(bytes)))])
                    })
                    .collect();
                (200, map(vec![("messages", Value::List(messages))]))
            }
        }
        Operation::ReceiveBySequenceNumber => {
            let seqs: Vec<u64> = items(get(request, "sequence-numbers"))
                .iter()
                .filter_map(number)
                .filter_map(|n| u64::try_from(n).ok())
                .collect();
            let got = broker.receive_deferred(who, entity, who, seqs)?;
            let messages = got
                .iter()
                .map(|m| {
                    let bytes = message::encode(message::from_view(m, start, Shown::Received));
                    let mut entries = vec![("message", Value::Binary(Binary::from(bytes)))];
                    if let Some(t) = &m.lock_token {
                        entries.push(("lock-token", uuid_value(t)));
                    }
                    map(entries)
                })
                .collect();
            (200, map(vec![("messages", Value::List(messages))]))
        }
        Operation::Schedule => {
            let mut seqs = Vec::new();
            for item in items(get(request, "messages")) {
                let Value::Map(m) = item else {
                    return Err(bad("messages"));
                };
                let Some(Value::Binary(bytes)) = get(&m, "message") else {
                    return Err(bad("messages[].message"));
                };
                let wire = message::decode(bytes).map_err(bad)?;
                let def = message::to_send(&wire, entity, start).map_err(bad)?;
                let sent = broker.send(who, def)?;
                seqs.extend(sent.into_iter().map(|s| Value::Long(s as i64)));
            }
            (
                200,
                map(vec![("sequence-numbers", Value::Array(Array(seqs)))]),
            )
        }
        Operation::CancelScheduled => {
            for seq in items(get(request, "sequence-numbers")) {
                let seq = number(&seq)
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| bad("sequence-numbers"))?;
                broker.cancel_scheduled(who, entity, seq)?;
            }
            (200, map(vec![]))
        }
        Operation::UpdateDisposition => {
            let how = match text(get(request, "disposition-status")).as_deref() {
                Some("completed") => Settle::Complete,
                Some("abandoned") => Settle::Abandon,
                Some("defered") | Some("deferred") => Settle::Defer,
                Some("suspended") => Settle::DeadLetter,
                _ => return Err(bad("disposition-status")),
            };
            let reason = text(get(request, "deadletter-reason"));
            let description = text(get(request, "deadletter-description"));
            for t in items(get(request, "lock-tokens")) {
                let t = token(&t).ok_or_else(|| bad("lock-tokens"))?;
                broker.settle(who, &t, how, reason.clone(), description.clone())?;
            }
            (200, map(vec![]))
        }
        // SES-02, SES-05: the session a receiver link holds, by its SessionId.
        Operation::RenewSessionLock | Operation::GetSessionState | Operation::SetSessionState => {
            use sbp_scenario::SessionOpDef;
            let session_id = text(get(request, "session-id"));
            let (op, state) = match operation {
                Operation::RenewSessionLock => (SessionOpDef::RenewLock, None),
                Operation::GetSessionState => (SessionOpDef::GetState, None),
                _ => {
                    let state = match get(request, "session-state") {
                        Some(Value::Binary(b)) => Some(sbp_engine::Body::data(b.to_vec())),
                        Some(Value::String(s)) => Some(sbp_engine::Body::from(s.as_str())),
                        _ => None,
                    };
                    (SessionOpDef::SetState, state)
                }
            };
            let view = broker.session(who, entity, link, op, session_id, state)?;
            match (operation, view) {
                (Operation::RenewSessionLock, Some(v)) => {
                    (200, map(vec![("expiration", utc(v.locked_until))]))
                }
                (Operation::GetSessionState, Some(v)) => (
                    200,
                    map(vec![(
                        "session-state",
                        v.state
                            .map_or(Value::Null, |s| Value::Binary(Binary::from(s.bytes))),
                    )]),
                ),
                _ => (200, map(vec![])),
            }
        }
    };
    Ok(answer)
}

/// The answer to a `$cbs` (`entity` None: any token is taken, 202 as the service answers) or
/// `$management` request: the status in both spellings the SDKs read, the error's condition
/// as the SDKs map it (azure-servicebus `_ERROR_CODE_TO_ERROR_MAPPING`: message-not-found is
/// MessageNotFoundError), correlated with the request's MessageId and addressed to its
/// reply-to.
pub fn response(
    request: &WireMessage,
    answer: Option<Result<(i32, Value), BrokerError>>,
) -> WireMessage {
    use fe2o3_amqp_types::messaging::{
        AmqpValue, ApplicationProperties, Message, MessageId, Properties,
    };
    let (status, description, body, kind) = match answer {
        None => (202, "Accepted".to_string(), Value::Null, None),
        Some(Ok((status, body))) => (status, "OK".to_string(), body, None),
        Some(Err(e)) => (
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
    };
    let error_condition = (status >= 400)
        .then(|| crate::error::condition(kind.unwrap_or(ErrorKind::InvalidOperation)));
    let properties = request.properties.as_ref();
    let request_id = properties.and_then(|p| p.message_id.clone());
    let reply_to = properties.and_then(|p| p.reply_to.clone());
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
    Message {
        header: None,
        delivery_annotations: None,
        message_annotations: None,
        properties: Some(Properties {
            correlation_id: request_id.or(Some(MessageId::String(String::new()))),
            to: reply_to,
            ..Default::default()
        }),
        application_properties: Some(ApplicationProperties(application)),
        body: Body::Value(AmqpValue(body)),
        footer: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_is_parsed_once_and_an_unknown_one_is_not_supported_by_name() {
        assert_eq!(
            Operation::parse("com.microsoft:peek-message"),
            Ok(Operation::Peek)
        );
        let e = Operation::parse("com.microsoft:frobnicate").unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotSupported);
        assert!(e.message.to_string().contains("frobnicate"), "{e:?}");
    }
}
