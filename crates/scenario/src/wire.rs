//! The wire shape of a step: format version 1 writes a step as a flat object with one optional
//! field per action (`{"at": "10s", "receive": {...}}`). [`Step`] converts from and to it, so the
//! JSON stays the same whatever the types behind it.
use crate::dur::Dur;
use crate::model::*;
use crate::step::{Action, Step};
use sbp_engine::time::format_duration;
use serde::{Deserialize, Serialize};

/// A step as format version 1 writes it: one optional field per action.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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

impl From<Step> for StepWire {
    fn from(s: Step) -> StepWire {
        let mut w = StepWire {
            at: s.at,
            note: s.note,
            expect_error: s.expect_error,
            ..StepWire::default()
        };
        match s.action {
            None => {}
            Some(Action::Send(a)) => w.send = Some(a),
            Some(Action::CancelScheduled(a)) => w.cancel_scheduled = Some(a),
            Some(Action::Peek(a)) => w.peek = Some(a),
            Some(Action::Receive(a)) => w.receive = Some(a),
            Some(Action::ReceiveDeferred(a)) => w.receive_deferred = Some(a),
            Some(Action::Complete(a)) => w.complete = Some(a),
            Some(Action::Abandon(a)) => w.abandon = Some(a),
            Some(Action::DeadLetter(a)) => w.dead_letter = Some(a),
            Some(Action::Defer(a)) => w.defer = Some(a),
            Some(Action::RenewLock(a)) => w.renew_lock = Some(a),
            Some(Action::Create(a)) => w.create = Some(a),
            Some(Action::Update(a)) => w.update = Some(a),
            Some(Action::Delete(a)) => w.delete = Some(a),
            Some(Action::CloseReceiver(a)) => w.close_receiver = Some(a),
            Some(Action::Fault(a)) => w.fault = Some(a),
            Some(Action::StartProducer(a)) => w.start_producer = Some(a),
            Some(Action::StopProducer(a)) => w.stop_producer = Some(a),
            Some(Action::StartConsumers(a)) => w.start_consumers = Some(a),
            Some(Action::StopConsumers(a)) => w.stop_consumers = Some(a),
            Some(Action::Expect(a)) => w.expect = Some(a),
        }
        w
    }
}
