//! The wire shape of a step: format version 1 writes a step as a flat object with its action
//! under the action's key (`{"at": "10s", "receive": {...}}`). [`Step`] is read from and written
//! to it here, so the JSON stays the same whatever the types behind it.
use crate::dur::Dur;
use crate::model::*;
use crate::step::{Action, Step};
use sbp_engine::time::format_duration;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

/// The keys a step may have: `at`, `note`, `expect_error`, then one per action.
const KEYS: &[&str] = &[
    "at",
    "note",
    "expect_error",
    "send",
    "cancel_scheduled",
    "peek",
    "receive",
    "receive_deferred",
    "complete",
    "abandon",
    "dead_letter",
    "defer",
    "renew_lock",
    "create",
    "update",
    "delete",
    "close_receiver",
    "session",
    "add_rule",
    "remove_rule",
    "fault",
    "start_producer",
    "stop_producer",
    "start_consumers",
    "stop_consumers",
    "expect",
];

/// A step read key by key: each action's reader is called directly (smaller in the wasm than a
/// derived reader of a flat struct with an optional field per action). Exactly one
/// action, or none with a note (narration).
impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Step, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Step;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a step")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Step, A::Error> {
                use serde::de::Error;
                let (mut at, mut note, mut expect_error) = (None, None, None);
                let mut actions: Vec<Action> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let action = match key.as_str() {
                        "at" if at.is_some() => return Err(A::Error::duplicate_field("at")),
                        "at" => {
                            at = Some(map.next_value::<Dur>()?);
                            continue;
                        }
                        "note" if note.is_some() => return Err(A::Error::duplicate_field("note")),
                        "note" => {
                            note = Some(map.next_value::<String>()?);
                            continue;
                        }
                        "expect_error" if expect_error.is_some() => {
                            return Err(A::Error::duplicate_field("expect_error"))
                        }
                        "expect_error" => {
                            expect_error = Some(map.next_value::<ErrorMatch>()?);
                            continue;
                        }
                        "send" => Action::Send(map.next_value()?),
                        "cancel_scheduled" => Action::CancelScheduled(map.next_value()?),
                        "peek" => Action::Peek(map.next_value()?),
                        "receive" => Action::Receive(map.next_value()?),
                        "receive_deferred" => Action::ReceiveDeferred(map.next_value()?),
                        "complete" => Action::Complete(map.next_value()?),
                        "abandon" => Action::Abandon(map.next_value()?),
                        "release" => Action::Release(map.next_value()?),
                        "dead_letter" => Action::DeadLetter(map.next_value()?),
                        "defer" => Action::Defer(map.next_value()?),
                        "renew_lock" => Action::RenewLock(map.next_value()?),
                        "create" => Action::Create(map.next_value()?),
                        "update" => Action::Update(map.next_value()?),
                        "delete" => Action::Delete(map.next_value()?),
                        "close_receiver" => Action::CloseReceiver(map.next_value()?),
                        "session" => Action::Session(map.next_value()?),
                        "add_rule" => Action::AddRule(map.next_value()?),
                        "remove_rule" => Action::RemoveRule(map.next_value()?),
                        "fault" => Action::Fault(map.next_value()?),
                        "start_producer" => Action::StartProducer(map.next_value()?),
                        "stop_producer" => Action::StopProducer(map.next_value()?),
                        "start_consumers" => Action::StartConsumers(map.next_value()?),
                        "stop_consumers" => Action::StopConsumers(map.next_value()?),
                        "expect" => Action::Expect(map.next_value()?),
                        other => return Err(A::Error::unknown_field(other, KEYS)),
                    };
                    actions.push(action);
                }
                let at: Dur = at.ok_or_else(|| A::Error::missing_field("at"))?;
                if actions.len() > 1 || (actions.is_empty() && note.is_none()) {
                    let names: Vec<&str> = actions.iter().map(Action::key).collect();
                    return Err(A::Error::custom(if names.is_empty() {
                        sbp_engine::text!("s-step-no-action", at = format_duration(at.ms()))
                    } else {
                        sbp_engine::text!(
                            "s-step-actions",
                            at = format_duration(at.ms()),
                            actions = names.join(", ")
                        )
                    }));
                }
                Ok(Step {
                    at,
                    note,
                    expect_error,
                    action: actions.pop(),
                })
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// A step written as format version 1 writes it: `at`, `note`, `expect_error`, then the
/// action under its key (the keys the reader above takes, in its order).
impl Serialize for Step {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("at", &self.at)?;
        if let Some(note) = &self.note {
            m.serialize_entry("note", note)?;
        }
        if let Some(e) = &self.expect_error {
            m.serialize_entry("expect_error", e)?;
        }
        if let Some(action) = &self.action {
            let key = action.key();
            match action {
                Action::Send(a) => m.serialize_entry(key, a),
                Action::CancelScheduled(a) => m.serialize_entry(key, a),
                Action::Peek(a) => m.serialize_entry(key, a),
                Action::Receive(a) => m.serialize_entry(key, a),
                Action::ReceiveDeferred(a) => m.serialize_entry(key, a),
                Action::Complete(a)
                | Action::Abandon(a)
                | Action::Release(a)
                | Action::DeadLetter(a)
                | Action::Defer(a)
                | Action::RenewLock(a) => m.serialize_entry(key, a),
                Action::Create(a) => m.serialize_entry(key, a),
                Action::Update(a) => m.serialize_entry(key, a),
                Action::Delete(a) | Action::StopProducer(a) | Action::StopConsumers(a) => {
                    m.serialize_entry(key, a)
                }
                Action::CloseReceiver(a) => m.serialize_entry(key, a),
                Action::Session(a) => m.serialize_entry(key, a),
                Action::AddRule(a) | Action::RemoveRule(a) => m.serialize_entry(key, a),
                Action::Fault(a) => m.serialize_entry(key, a),
                Action::StartProducer(a) => m.serialize_entry(key, a),
                Action::StartConsumers(a) => m.serialize_entry(key, a),
                Action::Expect(a) => m.serialize_entry(key, a),
            }?;
        }
        m.end()
    }
}
