//! `<entity>/$management` requests: request and response maps as the SDKs write and read them
//! (.NET `Amqp/ManagementConstants.cs`, Python `_common/constants.py` and
//! `_common/mgmt_handlers.py`, JS `service-bus/src/core/managementClient.ts`).
use crate::broker::{Broker, Settle};
use crate::message::{self, Shown};
use fe2o3_amqp_types::messaging::Body;
use fe2o3_amqp_types::primitives::{Array, Binary, OrderedMap, Timestamp, Uuid, Value};
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

/// Answers one request: (status code, body). The caller holds the broker, and wakes the
/// waiting receivers after.
pub fn handle(
    broker: &mut Broker,
    who: &str,
    link: &str,
    entity: &str,
    operation: &str,
    body: &Body<Value>,
) -> Result<(i32, Value), BrokerError> {
    let empty = OrderedMap::new();
    let request = match body {
        Body::Value(v) => match &v.0 {
            Value::Map(m) => m,
            _ => &empty,
        },
        _ => &empty,
    };
    let start = broker.clock();
    let utc = |at: i64| Value::Timestamp(Timestamp::from_milliseconds(start.utc(at)));
    let answer = match operation {
        "com.microsoft:renew-lock" => {
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
        "com.microsoft:peek-message" => {
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
        "com.microsoft:receive-by-sequence-number" => {
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
        "com.microsoft:schedule-message" => {
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
        "com.microsoft:cancel-scheduled-message" => {
            for seq in items(get(request, "sequence-numbers")) {
                let seq = number(&seq)
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| bad("sequence-numbers"))?;
                broker.cancel_scheduled(who, entity, seq)?;
            }
            (200, map(vec![]))
        }
        "com.microsoft:update-disposition" => {
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
        "com.microsoft:renew-session-lock"
        | "com.microsoft:get-session-state"
        | "com.microsoft:set-session-state" => {
            use sbp_scenario::SessionOpDef;
            let session_id = text(get(request, "session-id"));
            let (op, state) = match operation {
                "com.microsoft:renew-session-lock" => (SessionOpDef::RenewLock, None),
                "com.microsoft:get-session-state" => (SessionOpDef::GetState, None),
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
                ("com.microsoft:renew-session-lock", Some(v)) => {
                    (200, map(vec![("expiration", utc(v.locked_until))]))
                }
                ("com.microsoft:get-session-state", Some(v)) => (
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
        other => {
            return Err(BrokerError::new(
                ErrorKind::NotSupported,
                sbp_engine::text!("e-serve-operation", operation = other.to_string()),
            ))
        }
    };
    Ok(answer)
}
