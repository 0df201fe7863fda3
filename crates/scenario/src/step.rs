//! A timeline step: an instant, an optional note and expected error, and at most one
//! [`Action`]. The action is an enum with one exhaustive place each for its JSON key
//! ([`Action::key`]), its words ([`Action::text`]), its limits ([`Action::validate`]) and its
//! engine commands ([`Action::commands`]). On the wire a step stays the flat object of format
//! version 1 (`{"at": "10s", "receive": {"from": "orders"}}`): `wire.rs` is that shape.
use crate::dur::Dur;
use crate::model::*;
use sbp_engine::limits::{LATEST_INSTANT, MAX_SEND_COUNT};
use sbp_engine::text;
use sbp_engine::text::{optional, Text};
use sbp_engine::time::{format_duration, format_instant, Instant};
use sbp_engine::{
    Burst, Command, ConsumerSpec, EntitySettings, Fault, Namespace, NewMessage, Processing,
    ProducerSpec, ReceiveMode, ReceiveOptions, SessionOp, Settlement, Spike, SubscriptionRule,
};

/// One step of a timeline. Without an action it is narration only (and must have a note).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    pub at: Dur,
    /// A sentence shown while the step plays (narration).
    pub note: Option<String>,
    /// The step must fail with this error (e.g. "MessageLockLost", "client", or a list); without
    /// it, failing is a failure.
    pub expect_error: Option<ErrorMatch>,
    pub action: Option<Action>,
}

/// What a step does.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Send(SendDef),
    CancelScheduled(CancelDef),
    Peek(PeekDef),
    Receive(ReceiveDef),
    ReceiveDeferred(ReceiveDeferredDef),
    Complete(SettleDef),
    Abandon(SettleDef),
    /// AMQP's `released`, as an SDK gives back a message it got outside a receive call
    /// (recorded by `sbp serve`; RCV-05).
    Release(SettleDef),
    DeadLetter(SettleDef),
    Defer(SettleDef),
    RenewLock(SettleDef),
    Create(Box<EntityDef>),
    Update(UpdateDef),
    /// The entity's path.
    Delete(String),
    CloseReceiver(ReceiverDef),
    Session(SessionDef),
    AddRule(RuleStepDef),
    RemoveRule(RuleStepDef),
    Fault(FaultDef),
    StartProducer(ProducerDef),
    /// The producer's name.
    StopProducer(String),
    StartConsumers(ConsumerDef),
    /// The consumer group's name.
    StopConsumers(String),
    /// Checks at this point of the timeline (between two steps of one instant, too).
    Expect(Box<Expectation>),
}

impl Step {
    /// A step doing `action` (its instant is set when it is recorded or scheduled).
    pub fn new(action: Action) -> Step {
        Step {
            action: Some(action),
            ..Step::default()
        }
    }

    /// "receive 3 from orders as r1", or "narration".
    pub fn action_text(&self) -> Text {
        self.action
            .as_ref()
            .map_or_else(|| text!("act-narration"), Action::text)
    }
}

impl Action {
    /// The action's key in a step's JSON.
    pub fn key(&self) -> &'static str {
        match self {
            Action::Send(_) => "send",
            Action::CancelScheduled(_) => "cancel_scheduled",
            Action::Peek(_) => "peek",
            Action::Receive(_) => "receive",
            Action::ReceiveDeferred(_) => "receive_deferred",
            Action::Complete(_) => "complete",
            Action::Abandon(_) => "abandon",
            Action::Release(_) => "release",
            Action::DeadLetter(_) => "dead_letter",
            Action::Defer(_) => "defer",
            Action::RenewLock(_) => "renew_lock",
            Action::Create(_) => "create",
            Action::Update(_) => "update",
            Action::Delete(_) => "delete",
            Action::CloseReceiver(_) => "close_receiver",
            Action::Session(_) => "session",
            Action::AddRule(_) => "add_rule",
            Action::RemoveRule(_) => "remove_rule",
            Action::Fault(_) => "fault",
            Action::StartProducer(_) => "start_producer",
            Action::StopProducer(_) => "stop_producer",
            Action::StartConsumers(_) => "start_consumers",
            Action::StopConsumers(_) => "stop_consumers",
            Action::Expect(_) => "expect",
        }
    }

    /// The entity path the action is about, if any.
    pub fn entity(&self) -> Option<&str> {
        match self {
            Action::Send(s) => Some(&s.to),
            Action::CancelScheduled(c) => Some(&c.to),
            Action::Peek(p) => Some(&p.from),
            Action::Receive(r) => Some(&r.from),
            Action::ReceiveDeferred(r) => Some(&r.from),
            Action::Complete(s)
            | Action::Abandon(s)
            | Action::Release(s)
            | Action::DeadLetter(s)
            | Action::Defer(s)
            | Action::RenewLock(s) => Some(&s.from),
            Action::Create(d) => d
                .queue
                .as_deref()
                .or(d.topic.as_deref())
                .or(d.subscription.as_deref()),
            Action::Update(u) => Some(&u.entity),
            Action::Delete(p) => Some(p),
            Action::CloseReceiver(r) => r.from.as_deref(),
            Action::Session(s) => Some(&s.from),
            Action::AddRule(r) | Action::RemoveRule(r) => Some(&r.subscription),
            Action::StartProducer(p) => Some(&p.to),
            Action::StartConsumers(c) => Some(&c.from),
            Action::Fault(_)
            | Action::StopProducer(_)
            | Action::StopConsumers(_)
            | Action::Expect(_) => None,
        }
    }

    /// The action in words: "receive 3 from orders as r1".
    pub fn text(&self) -> Text {
        let settle = |key: &'static str, s: &SettleDef| {
            text!(key, seq = s.seq, from = s.from, receiver = s.receiver)
        };
        match self {
            Action::Send(s) => {
                let n = s.count.unwrap_or(1);
                let what = if n > 1 {
                    text!("act-messages", count = n)
                } else {
                    text!("act-a-message")
                };
                let ttl = optional(
                    s.ttl
                        .map(|t| text!("act-with-ttl", ttl = format_duration(t.ms()))),
                );
                match s.scheduled_enqueue_time {
                    Some(at) => text!(
                        "act-schedule",
                        what = what,
                        to = &s.to,
                        at = format_instant(at.ms()),
                        ttl = ttl
                    ),
                    None => text!("act-send", what = what, to = &s.to, ttl = ttl),
                }
            }
            Action::Receive(r) => text!(
                match r.mode {
                    ModeDef::PeekLock => "act-receive",
                    ModeDef::ReceiveAndDelete => "act-receive-delete",
                },
                count = r.count.unwrap_or(1),
                from = r.from,
                receiver = r.receiver
            ),
            Action::Peek(p) => text!("act-peek", count = p.count.unwrap_or(1), from = &p.from),
            Action::ReceiveDeferred(r) => {
                let seqs: Vec<String> = r.seqs.iter().map(|s| format!("#{s}")).collect();
                text!(
                    "act-receive-deferred",
                    seqs = seqs.join(", "),
                    from = &r.from
                )
            }
            Action::Complete(s) => settle("act-complete", s),
            Action::Abandon(s) => settle("act-abandon", s),
            Action::Release(s) => settle("act-release", s),
            Action::DeadLetter(s) => settle("act-dead-letter", s),
            Action::Defer(s) => settle("act-defer", s),
            Action::RenewLock(s) => settle("act-renew-lock", s),
            Action::CancelScheduled(c) => text!("act-cancel", seq = c.seq, to = &c.to),
            Action::Create(d) => text!("act-create", path = entity_label(d)),
            Action::Update(u) => text!("act-update", path = &u.entity),
            Action::Delete(d) => text!("act-delete", path = d),
            Action::CloseReceiver(r) => text!("act-close", receiver = &r.receiver),
            Action::AddRule(r) | Action::RemoveRule(r) => text!(
                if matches!(self, Action::AddRule(_)) {
                    "act-add-rule"
                } else {
                    "act-remove-rule"
                },
                name = r.rule.name.as_deref().unwrap_or("-"),
                path = &r.subscription
            ),
            Action::Session(s) => text!(
                match (s.op, &s.session_id) {
                    (SessionOpDef::Accept, None) => "act-session-accept-next",
                    (op, _) => session_key(op),
                },
                receiver = &s.receiver,
                from = &s.from,
                session = s.session_id.as_deref().unwrap_or("")
            ),
            Action::StartProducer(p) => text!(
                "act-start-producer",
                name = &p.name,
                rate = sbp_engine::time::format_decimal(p.rate, 3),
                to = &p.to
            ),
            Action::StopProducer(p) => text!("act-stop-producer", name = p),
            Action::StartConsumers(c) => text!(
                "act-start-consumers",
                count = c.instances.unwrap_or(1),
                name = &c.name,
                from = &c.from
            ),
            Action::StopConsumers(c) => text!("act-stop-consumers", name = c),
            Action::Expect(_) => text!("act-expect"),
            Action::Fault(f) => match f {
                FaultDef::ServiceUpdate => text!("act-fault-service"),
                FaultDef::OsUpdate => text!("act-fault-os"),
                FaultDef::Disconnect(r) => text!("act-fault-disconnect", receiver = r),
                FaultDef::ServerBusy(d) => {
                    text!("act-fault-busy", duration = format_duration(d.ms()))
                }
            },
        }
    }

    /// What the action did, said when the broker answered only "done": "#1 completed in
    /// orders" for a settlement, "done: delete audit" for the others.
    pub fn done_text(&self) -> Text {
        let settled = |key: &'static str, s: &SettleDef| text!(key, seq = s.seq, from = &s.from);
        match self {
            Action::Complete(s) => settled("out-completed", s),
            Action::Abandon(s) => settled("out-abandoned", s),
            Action::Release(s) => settled("out-released", s),
            Action::DeadLetter(s) => settled("out-dead-lettered", s),
            Action::Defer(s) => settled("out-deferred", s),
            Action::RenewLock(s) => settled("out-lock-renewed", s),
            other => text!("out-done", action = other.text()),
        }
    }

    /// The playground's limits on what the action asks for (the broker's own rules are checked
    /// when it runs). The error names the field and the limit.
    pub fn validate(&self, tier: sbp_engine::Tier) -> Result<(), Text> {
        if let Some(path) = self.entity() {
            check_text("path", path, MAX_PATH)?;
        }
        let receiver = match self {
            Action::Peek(p) => Some(&p.receiver),
            Action::Receive(r) => Some(&r.receiver),
            Action::ReceiveDeferred(r) => Some(&r.receiver),
            Action::CloseReceiver(r) => Some(&r.receiver),
            Action::Session(s) => Some(&s.receiver),
            Action::Complete(s)
            | Action::Abandon(s)
            | Action::Release(s)
            | Action::DeadLetter(s)
            | Action::Defer(s)
            | Action::RenewLock(s) => Some(&s.receiver),
            Action::Fault(FaultDef::Disconnect(r))
            | Action::StopProducer(r)
            | Action::StopConsumers(r) => Some(r),
            Action::StartProducer(p) => Some(&p.name),
            Action::StartConsumers(c) => Some(&c.name),
            _ => None,
        };
        if let Some(name) = receiver {
            check_text("name", name, MAX_FIELD)?;
        }
        match self {
            Action::Send(s) => {
                if s.count.unwrap_or(1) > MAX_SEND_COUNT {
                    return Err(text!("s-send-count", max = MAX_SEND_COUNT));
                }
                if let Some(at) = s.scheduled_enqueue_time {
                    check_instant("scheduled_enqueue_time", at.ms())?;
                }
                let max = max_body(tier);
                if s.body.len() > max {
                    return Err(text!(
                        "s-too-long",
                        field = "body",
                        size = s.body.len(),
                        max = max
                    ));
                }
                for (name, value) in [
                    ("message_id", &s.message_id),
                    ("subject", &s.subject),
                    ("correlation_id", &s.correlation_id),
                ] {
                    check_text(name, value.as_deref().unwrap_or(""), MAX_FIELD)?;
                }
                check_properties(&s.properties)?;
                check_system_properties(&s.system_properties)
            }
            Action::StartProducer(p) => {
                producer_spec(p).validate().map_err(|e| e.message)?;
                if let Some(s) = &p.spike {
                    check_instant("spike.from", s.from.ms())?;
                }
                check_text(
                    "message_id_prefix",
                    p.message_id_prefix.as_deref().unwrap_or(""),
                    MAX_FIELD,
                )
            }
            Action::StartConsumers(c) => consumer_spec(c).validate().map_err(|e| e.message),
            Action::Create(d) => d
                .rule
                .iter()
                .chain(&d.rules)
                .try_for_each(|r| check_properties(&r.properties)),
            Action::AddRule(r) | Action::RemoveRule(r) => {
                check_text("name", r.rule.name.as_deref().unwrap_or(""), MAX_FIELD)?;
                check_properties(&r.rule.properties)
            }
            Action::Session(s) => {
                check_text(
                    "session_id",
                    s.session_id.as_deref().unwrap_or(""),
                    MAX_FIELD,
                )?;
                check_len(
                    "state",
                    s.state.as_ref().map_or(0, sbp_engine::Body::len),
                    sbp_engine::limits::MAX_SESSION_STATE,
                )
            }
            Action::DeadLetter(s) => {
                check_text("reason", s.reason.as_deref().unwrap_or(""), MAX_FIELD)?;
                check_text(
                    "description",
                    s.description.as_deref().unwrap_or(""),
                    MAX_PROPERTY,
                )
            }
            Action::CancelScheduled(_)
            | Action::Peek(_)
            | Action::Receive(_)
            | Action::ReceiveDeferred(_)
            | Action::Complete(_)
            | Action::Abandon(_)
            | Action::Release(_)
            | Action::Defer(_)
            | Action::RenewLock(_)
            | Action::Update(_)
            | Action::Delete(_)
            | Action::CloseReceiver(_)
            | Action::Fault(_)
            | Action::StopProducer(_)
            | Action::StopConsumers(_)
            | Action::Expect(_) => Ok(()),
        }
    }

    /// The engine commands the action gives (a send of `count` messages gives `count`).
    /// A send's are made one by one as they are applied (10,000 at most, never all at once).
    pub fn commands<'a>(
        &'a self,
        ns: &Namespace,
    ) -> Result<Box<dyn Iterator<Item = Command> + 'a>, Text> {
        if let Action::Send(send) = self {
            let count = send.count.unwrap_or(1).max(1);
            return Ok(Box::new((0..count).map(move |i| {
                let message = new_message(send, i, count);
                match send.scheduled_enqueue_time {
                    Some(when) => Command::Schedule {
                        to: send.to.clone(),
                        message,
                        at: when.ms(),
                    },
                    None => Command::Send {
                        to: send.to.clone(),
                        message,
                    },
                }
            })));
        }
        self.other_commands(ns)
            .map(|c| Box::new(std::iter::once(c)) as Box<dyn Iterator<Item = Command>>)
    }

    /// What a settle action does, and to which message: the one place that maps the five
    /// settle actions to the engine's settlements.
    pub fn settlement(&self) -> Option<(&SettleDef, Settlement)> {
        Some(match self {
            Action::Complete(d) => (d, Settlement::Complete),
            Action::Abandon(d) => (d, Settlement::Abandon),
            Action::Release(d) => (d, Settlement::Release),
            Action::Defer(d) => (d, Settlement::Defer),
            Action::RenewLock(d) => (d, Settlement::RenewLock),
            Action::DeadLetter(d) => (
                d,
                Settlement::DeadLetter {
                    reason: d.reason.clone(),
                    description: d.description.clone(),
                },
            ),
            _ => return None,
        })
    }

    /// The one command of every action but a send.
    fn other_commands(&self, ns: &Namespace) -> Result<Command, Text> {
        let one = |c: Command| Ok(c);
        let settle = |def: &SettleDef, settlement: Settlement| {
            one(Command::Settle {
                receiver: def.receiver.clone(),
                from: def.from.clone(),
                seq: def.seq,
                settlement,
                lock_token: None,
            })
        };
        match self {
            Action::Send(_) => Err(text!("s-internal")),
            Action::CancelScheduled(c) => one(Command::CancelScheduled {
                to: c.to.clone(),
                seq: c.seq,
            }),
            Action::Peek(p) => one(Command::Peek {
                receiver: p.receiver.clone(),
                from: p.from.clone(),
                from_seq: p.from_seq,
                count: p.count.unwrap_or(1),
            }),
            Action::Receive(r) => one(Command::Receive {
                receiver: r.receiver.clone(),
                from: r.from.clone(),
                mode: r.mode.into(),
                count: r.count.unwrap_or(1),
                options: ReceiveOptions {
                    max_auto_lock_renewal: r.max_auto_lock_renewal.map(Dur::ms),
                    transfer_fails: r.transfer_fails,
                },
            }),
            Action::ReceiveDeferred(r) => one(Command::ReceiveDeferred {
                receiver: r.receiver.clone(),
                from: r.from.clone(),
                seqs: r.seqs.clone(),
            }),
            Action::Complete(_)
            | Action::Abandon(_)
            | Action::Release(_)
            | Action::DeadLetter(_)
            | Action::Defer(_)
            | Action::RenewLock(_) => match self.settlement() {
                Some((def, settlement)) => settle(def, settlement),
                None => Err(text!("s-internal")),
            },
            Action::Create(def) => entity_command(ns, def),
            Action::Update(u) => {
                let current = ns
                    .entity(&u.entity)
                    .map(|e| e.settings.clone())
                    .ok_or_else(|| text!("e-no-entity", path = &u.entity))?;
                one(Command::UpdateEntity {
                    path: u.entity.clone(),
                    settings: u.settings.apply_to(&current),
                })
            }
            Action::Delete(path) => one(Command::DeleteEntity { path: path.clone() }),
            Action::CloseReceiver(r) => one(match &r.from {
                Some(from) => Command::CloseReceiver {
                    receiver: r.receiver.clone(),
                    from: from.clone(),
                },
                None => Command::Fault(Fault::Disconnect {
                    receiver: r.receiver.clone(),
                }),
            }),
            Action::Session(s) => one(Command::Session {
                receiver: s.receiver.clone(),
                from: s.from.clone(),
                op: match s.op {
                    SessionOpDef::Accept => SessionOp::Accept {
                        session_id: s.session_id.clone(),
                    },
                    SessionOpDef::RenewLock => SessionOp::RenewLock,
                    SessionOpDef::GetState => SessionOp::GetState,
                    SessionOpDef::SetState => SessionOp::SetState {
                        state: s.state.clone(),
                    },
                    SessionOpDef::Close => SessionOp::Close,
                },
            }),
            Action::AddRule(r) => one(Command::CreateRule {
                subscription: r.subscription.clone(),
                name: rule_name(&r.rule)?,
                rule: subscription_rule(Some(&r.rule))?,
            }),
            Action::RemoveRule(r) => one(Command::DeleteRule {
                subscription: r.subscription.clone(),
                name: rule_name(&r.rule)?,
            }),
            Action::StartProducer(p) => one(Command::StartProducer(producer_spec(p))),
            Action::StopProducer(name) => one(Command::StopProducer { name: name.clone() }),
            Action::StartConsumers(c) => one(Command::StartConsumers(consumer_spec(c))),
            Action::StopConsumers(name) => one(Command::StopConsumers { name: name.clone() }),
            Action::Expect(_) => Err(text!("s-internal")),
            Action::Fault(f) => one(Command::Fault(match f {
                FaultDef::ServiceUpdate => Fault::ServiceUpdate,
                FaultDef::OsUpdate => Fault::OsUpdate,
                FaultDef::Disconnect(r) => Fault::Disconnect {
                    receiver: r.clone(),
                },
                FaultDef::ServerBusy(d) => Fault::ServerBusy { duration: d.ms() },
            })),
        }
    }
}

/// A session step's words: its catalog key.
fn session_key(op: SessionOpDef) -> &'static str {
    match op {
        SessionOpDef::Accept => "act-session-accept",
        SessionOpDef::RenewLock => "act-session-renew",
        SessionOpDef::GetState => "act-session-get-state",
        SessionOpDef::SetState => "act-session-set-state",
        SessionOpDef::Close => "act-session-close",
    }
}

/// The longest body a scenario of the Basic or Standard tier carries: their largest message
/// (SEND-04), so a run of `sbp serve` records what the SDKs send there; `body_size` simulates
/// larger ones.
pub const MAX_BODY: usize = 256 * 1024;

/// The longest body a scenario of `tier` carries: its largest message (SEND-04; 100 MB on
/// Premium). A link is bounded whole (4 MB unpacked), and a namespace stores at most 32 MB of
/// bodies at once (`sbp_engine::limits::MAX_STORED_BODY_BYTES`): the playground's bounds.
pub fn max_body(tier: sbp_engine::Tier) -> usize {
    MAX_BODY.max(usize::try_from(tier.max_message_size()).unwrap_or(MAX_BODY))
}
/// The longest name or id.
pub const MAX_FIELD: usize = 1024;
/// The largest application property, name and value (the service's limit: 32 KB each).
pub const MAX_PROPERTY: usize = 32 * 1024;
/// The most bytes of a message's application properties together (the service's limit on its
/// header: 64 KB).
pub const MAX_PROPERTIES_BYTES: usize = 64 * 1024;
/// The longest entity path (a 260-character name, its topic's and `/$deadletterqueue`).
pub const MAX_PATH: usize = 600;
/// The most application properties on a message or a filter.
pub const MAX_PROPERTIES: usize = 64;

fn check_text(name: &str, value: &str, max: usize) -> Result<(), Text> {
    check_len(name, value.len(), max)
}

fn check_len(name: &str, size: usize, max: usize) -> Result<(), Text> {
    if size > max {
        return Err(text!("s-too-long", field = name, size = size, max = max));
    }
    Ok(())
}

fn check_properties(
    p: &std::collections::BTreeMap<String, sbp_engine::PropertyValue>,
) -> Result<(), Text> {
    if p.len() > MAX_PROPERTIES {
        return Err(text!("s-properties", count = p.len(), max = MAX_PROPERTIES));
    }
    let mut all = 0;
    for (k, v) in p {
        let size = k.len() + v.as_str().map_or(0, str::len);
        check_len(k, size, MAX_PROPERTY)?;
        all += size;
    }
    check_len("properties", all, MAX_PROPERTIES_BYTES)
}

/// System properties by their SDK names (`sbp_engine::message::SYSTEM_PROPERTIES`), each value
/// within a field's length: no other name reaches the engine, the map or generated code.
fn check_system_properties(p: &std::collections::BTreeMap<String, String>) -> Result<(), Text> {
    for (k, v) in p {
        if !sbp_engine::message::SYSTEM_PROPERTIES.contains(&k.as_str()) {
            return Err(text!(
                "s-system-property",
                name = k,
                names = sbp_engine::message::SYSTEM_PROPERTIES.join(", ")
            ));
        }
        check_text(k, v, MAX_FIELD)?;
    }
    Ok(())
}

/// An instant a file names: from t=0 to the playground's last instant.
pub(crate) fn check_instant(name: &str, at: Instant) -> Result<(), Text> {
    if !(0..=LATEST_INSTANT).contains(&at) {
        return Err(text!(
            "s-instant",
            field = name,
            at = format_instant(at),
            last = format_duration(LATEST_INSTANT)
        ));
    }
    Ok(())
}

impl From<ModeDef> for ReceiveMode {
    fn from(m: ModeDef) -> ReceiveMode {
        match m {
            ModeDef::PeekLock => ReceiveMode::PeekLock,
            ModeDef::ReceiveAndDelete => ReceiveMode::ReceiveAndDelete,
        }
    }
}

fn new_message(send: &SendDef, i: u32, count: u32) -> NewMessage {
    let message_id = send.message_id.as_ref().map(|id| {
        if count > 1 {
            format!("{id}-{}", i + 1)
        } else {
            id.clone()
        }
    });
    NewMessage {
        message_id,
        time_to_live: send.ttl.map(Dur::ms),
        subject: send.subject.clone(),
        correlation_id: send.correlation_id.clone(),
        application_properties: send.properties.clone(),
        system_properties: send.system_properties.clone(),
        body: send.body.clone(),
        body_size: send.body_size,
    }
}

pub(crate) fn entity_label(def: &EntityDef) -> String {
    def.queue
        .clone()
        .or_else(|| def.topic.clone())
        .or_else(|| def.subscription.clone())
        .unwrap_or_default()
}

/// The command that creates an entity definition.
pub fn entity_command(ns: &Namespace, def: &EntityDef) -> Result<Command, Text> {
    let base = EntitySettings::defaults(ns.tier());
    let settings = def.settings.apply_to(&base);
    match (&def.queue, &def.topic, &def.subscription) {
        (Some(name), None, None) => Ok(Command::CreateQueue {
            name: name.clone(),
            settings,
        }),
        (None, Some(name), None) => Ok(Command::CreateTopic {
            name: name.clone(),
            settings,
        }),
        (None, None, Some(path)) => {
            let Some((topic, name)) = sbp_engine::namespace::split_subscription_path(path) else {
                return Err(text!("s-subscription-path", path = path));
            };
            // FLT-01: the first rule (`$Default` unless named), then the named ones.
            let first = (
                def.rule
                    .as_ref()
                    .and_then(|r| r.name.clone())
                    .unwrap_or_else(|| sbp_engine::entity::DEFAULT_RULE.to_string()),
                subscription_rule(def.rule.as_ref())?,
            );
            let mut rules = vec![first];
            for r in &def.rules {
                rules.push((rule_name(r)?, subscription_rule(Some(r))?));
            }
            Ok(Command::CreateSubscription {
                topic: topic.to_string(),
                name: name.to_string(),
                settings,
                rules,
            })
        }
        _ => Err(text!("s-entity-kind")),
    }
}

pub(crate) fn producer_spec(p: &ProducerDef) -> ProducerSpec {
    ProducerSpec {
        name: p.name.clone(),
        to: p.to.clone(),
        rate: p.rate,
        burst: p.burst.as_ref().map(|b| Burst {
            every: b.every.ms(),
            size: b.size,
        }),
        spike: p.spike.as_ref().map(|s| Spike {
            from: s.from.ms(),
            duration: s.duration.ms(),
            factor: s.factor,
        }),
        ttl: p.ttl.map(Dur::ms),
        message_id_prefix: p.message_id_prefix.clone(),
        schedule_offset: p.schedule_offset.map(Dur::ms),
        body_size: p.body_size,
        max_messages: p.max_messages,
        sessions: p.sessions,
    }
}

pub(crate) fn consumer_spec(c: &ConsumerDef) -> ConsumerSpec {
    let defaults = ConsumerSpec::new(&c.name, &c.from);
    ConsumerSpec {
        instances: c.instances.unwrap_or(1),
        mode: c.mode.into(),
        processing: match &c.processing {
            None => defaults.processing.clone(),
            Some(ProcessingDef::Fixed(d)) => Processing::Fixed(d.ms()),
            Some(ProcessingDef::Uniform { min, max }) => Processing::Uniform {
                min: min.ms(),
                max: max.ms(),
            },
            Some(ProcessingDef::Exponential { mean }) => {
                Processing::Exponential { mean: mean.ms() }
            }
        },
        abandon: c.abandon,
        dead_letter: c.dead_letter,
        defer: c.defer,
        crash: c.crash,
        max_auto_lock_renewal: c.max_auto_lock_renewal.map(Dur::ms),
        idempotent: c.idempotent,
        poll_interval: c.poll_interval.map_or(defaults.poll_interval, Dur::ms),
        restart_delay: c.restart_delay.map_or(defaults.restart_delay, Dur::ms),
        ..defaults
    }
}

/// A rule as a file writes it, as the engine takes it: FLT-03 SQL (and FLT-04 action), else
/// FLT-02 correlation; none: every message (TOP-01).
pub fn subscription_rule(def: Option<&RuleDef>) -> Result<SubscriptionRule, Text> {
    // FLT-01: TrueFilter and FalseFilter by name, alone (with an action at most).
    if let Some(r) = def {
        if let Some(filter) = &r.filter {
            let alone = r.sql.is_none()
                && r.subject.is_none()
                && r.correlation_id.is_none()
                && r.message_id.is_none()
                && r.properties.is_empty()
                && r.system_properties.is_empty();
            if !alone {
                return Err(text!("s-rule-filter-alone", filter = filter));
            }
            let sql = match filter.as_str() {
                "TrueFilter" if r.action.is_none() => return Ok(SubscriptionRule::MatchAll),
                "TrueFilter" => "1=1",
                "FalseFilter" => "1=0",
                other => return Err(text!("s-rule-filter", filter = other)),
            };
            return Ok(SubscriptionRule::Sql(Box::new(
                sbp_engine::entity::SqlRule::new(sql, r.action.as_deref())
                    .map_err(|e| e.message)?,
            )));
        }
    }
    Ok(match def {
        None => SubscriptionRule::MatchAll,
        Some(RuleDef {
            sql: Some(sql),
            action,
            ..
        }) => SubscriptionRule::Sql(Box::new(
            sbp_engine::entity::SqlRule::new(sql, action.as_deref()).map_err(|e| e.message)?,
        )),
        Some(r)
            if r.subject.is_none()
                && r.correlation_id.is_none()
                && r.message_id.is_none()
                && r.properties.is_empty()
                && r.system_properties.is_empty() =>
        {
            match r.action.as_deref() {
                None => SubscriptionRule::MatchAll,
                // Every message, acted on: the TrueFilter's SQL form with the action.
                Some(action) => SubscriptionRule::Sql(Box::new(
                    sbp_engine::entity::SqlRule::new("1=1", Some(action)).map_err(|e| e.message)?,
                )),
            }
        }
        Some(r) => {
            check_system_properties(&r.system_properties)?;
            SubscriptionRule::Correlation {
                subject: r.subject.clone(),
                correlation_id: r.correlation_id.clone(),
                message_id: r.message_id.clone(),
                application_properties: r.properties.clone(),
                system_properties: r.system_properties.clone(),
                // FLT-04: a correlation filter's rule acts with its action too.
                action: r
                    .action
                    .as_deref()
                    .map(sbp_engine::entity::SqlAction::new)
                    .transpose()
                    .map_err(|e| e.message)?,
            }
        }
    })
}

/// FLT-01: a rule added or removed by a step names itself.
fn rule_name(def: &RuleDef) -> Result<String, Text> {
    def.name.clone().ok_or_else(|| text!("s-rule-name"))
}
