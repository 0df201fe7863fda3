//! The wire shape of a step: format version 1 writes a step as a flat object with one optional
//! field per action (`{"at": "10s", "receive": {...}}`). [`Step`] converts from and to it, so the
//! JSON stays the same whatever the types behind it.
use crate::dur::Dur;
use crate::model::*;
use crate::step::{Action, Step};
use sbp_engine::time::format_duration;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

/// A step as format version 1 writes it: one optional field per action.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepWire {
    pub at: Dur,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_error: Option<ErrorMatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<SendDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_scheduled: Option<CancelDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peek: Option<PeekDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive: Option<ReceiveDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_deferred: Option<ReceiveDeferredDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<SettleDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandon: Option<SettleDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_letter: Option<SettleDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defer: Option<SettleDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_lock: Option<SettleDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<EntityDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close_receiver: Option<ReceiverDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_producer: Option<ProducerDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_producer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_consumers: Option<ConsumerDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_consumers: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Box<Expectation>>,
}

impl TryFrom<StepWire> for Step {
    type Error = crate::Text;

    /// Exactly one action, or none with a note (narration).
    fn try_from(w: StepWire) -> Result<Step, crate::Text> {
        let mut actions: Vec<Action> = Vec::new();
        let mut take = |a: Option<Action>| actions.extend(a);
        take(w.send.map(Action::Send));
        take(w.cancel_scheduled.map(Action::CancelScheduled));
        take(w.peek.map(Action::Peek));
        take(w.receive.map(Action::Receive));
        take(w.receive_deferred.map(Action::ReceiveDeferred));
        take(w.complete.map(Action::Complete));
        take(w.abandon.map(Action::Abandon));
        take(w.dead_letter.map(Action::DeadLetter));
        take(w.defer.map(Action::Defer));
        take(w.renew_lock.map(Action::RenewLock));
        take(w.create.map(Action::Create));
        take(w.update.map(Action::Update));
        take(w.delete.map(Action::Delete));
        take(w.close_receiver.map(Action::CloseReceiver));
        take(w.session.map(Action::Session));
        take(w.fault.map(Action::Fault));
        take(w.start_producer.map(Action::StartProducer));
        take(w.stop_producer.map(Action::StopProducer));
        take(w.start_consumers.map(Action::StartConsumers));
        take(w.stop_consumers.map(Action::StopConsumers));
        take(w.expect.map(Action::Expect));
        if actions.len() > 1 || (actions.is_empty() && w.note.is_none()) {
            let names: Vec<&str> = actions.iter().map(Action::key).collect();
            return Err(if names.is_empty() {
                sbp_engine::text!("s-step-no-action", at = format_duration(w.at.ms()))
            } else {
                sbp_engine::text!(
                    "s-step-actions",
                    at = format_duration(w.at.ms()),
                    actions = names.join(", ")
                )
            });
        }
        Ok(Step {
            at: w.at,
            note: w.note,
            expect_error: w.expect_error,
            action: actions.pop(),
        })
    }
}

/// A step written as format version 1 writes it: `at`, `note`, `expect_error`, then the
/// action under its key (the fields [`StepWire`] reads, in its order).
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
                Action::Fault(a) => m.serialize_entry(key, a),
                Action::StartProducer(a) => m.serialize_entry(key, a),
                Action::StartConsumers(a) => m.serialize_entry(key, a),
                Action::Expect(a) => m.serialize_entry(key, a),
            }?;
        }
        m.end()
    }
}
