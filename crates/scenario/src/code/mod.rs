//! A scenario as SDK code: C# (Azure.Messaging.ServiceBus), Python (azure-servicebus) and
//! JavaScript (@azure/service-bus). The administration calls that create the entities with their
//! settings, then the timeline: sends, receives in their mode, each settlement, lock renewal,
//! deferral and receive by sequence number, the waits between steps, and comments saying what
//! the playground showed at each point ("#1 expires: TTL-11"). The playground plays the scenario
//! step by step while writing, so a settlement of a named call names the message it settles.
//!
//! One walker (here) plays the scenario and decides what the program does at each step; each
//! language is a [`target::Target`] that says how (`csharp.rs`, `python.rs`, `javascript.rs`),
//! with its fixed text (the helpers the steps call, the producers' and consumers' loops) in
//! `templates/`. A new action is written once here and once per target; a new language is one
//! target.
mod csharp;
mod javascript;
mod python;
mod target;

use crate::model::*;
use crate::step::{Action, Step};
use crate::{Scenario, Simulation, Text};
use sbp_engine::text;
use sbp_engine::time::{format_duration, format_instant, Duration, Instant, MAX_VALUE};
use sbp_engine::{
    EntityKind, EntitySettings, MessageState, MessageView, Namespace, Reply, SubscriptionRule,
};
pub use target::EMULATOR_CONNECTION;
use target::{Consumers, Entity, Field, Out, Producer, Rule, SendTo, Setting, Settlement, Target};

/// The languages code is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    CSharp,
    Python,
    JavaScript,
}

impl Lang {
    /// `cs`, `py` or `js` (also the file extension).
    pub fn from_name(name: &str) -> Option<Lang> {
        match name {
            "cs" | "csharp" | "c#" => Some(Lang::CSharp),
            "py" | "python" => Some(Lang::Python),
            "js" | "javascript" => Some(Lang::JavaScript),
            _ => None,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Lang::CSharp => "cs",
            Lang::Python => "py",
            Lang::JavaScript => "js",
        }
    }

    fn target(self) -> &'static dyn Target {
        match self {
            Lang::CSharp => &csharp::CSharp,
            Lang::Python => &python::Python,
            Lang::JavaScript => &javascript::JavaScript,
        }
    }
}

/// The most messages a producer's loop sends.
const MAX_PRODUCED: u64 = 10_000;

/// The most comments on what happened between two steps.
const MAX_NOTES: usize = 8;

/// `scenario` as a program in `lang`.
pub fn generate(scenario: &Scenario, lang: Lang) -> Result<String, Text> {
    // Writing plays the scenario: bounded as a run is, and with a bounded log (the comments
    // follow the events by their count, whatever the log dropped).
    scenario
        .check_run_to(scenario.end())
        .map_err(|e| e.text())?;
    let mut quiet = scenario.clone();
    quiet.namespace.log_limit = Some(quiet.namespace.log_limit.unwrap_or(10_000));
    let timeline = std::mem::take(&mut quiet.timeline);
    quiet.expect.clear();
    // What each step returns, from a run of its own: what the program checks at each point.
    let replies: Vec<Result<Vec<Reply>, sbp_engine::BrokerError>> = {
        let mut probe = Simulation::new(&quiet).map_err(|e| e.text())?;
        timeline
            .iter()
            .map(|step| {
                probe.advance_to(step.at.ms());
                let mut recorded = step.clone();
                recorded.at = crate::dur::Dur(step.at.ms());
                probe.push_step_replies(recorded)
            })
            .collect()
    };
    let mut sim = Simulation::new(&quiet).map_err(|e| e.text())?;
    let t = lang.target();
    let mut w = Code {
        t,
        out: Out::new(t.comment()),
        held: Default::default(),
        calls: 0,
        unchecked: false,
        actors: timeline.iter().any(|s| {
            matches!(
                s.action,
                Some(Action::StartProducer(_)) | Some(Action::StartConsumers(_))
            )
        }),
        instants: timeline
            .iter()
            .map(|s| s.at.ms())
            .chain(scenario.expect.iter().map(|e| e.at.ms()))
            .collect(),
        topics: scenario
            .entities
            .iter()
            .filter_map(|d| d.topic.clone())
            .chain(timeline.iter().filter_map(|s| match &s.action {
                Some(Action::Create(d)) => d.topic.clone(),
                _ => None,
            }))
            .collect(),
        ids: timeline
            .iter()
            .filter_map(|s| match &s.action {
                Some(Action::Send(d)) => d.message_id.as_ref().map(|id| (id, d.count)),
                _ => None,
            })
            .flat_map(|(id, count)| match count {
                Some(n) if n > 1 => (1..=n).map(|i| format!("{id}-{i}")).collect::<Vec<_>>(),
                _ => vec![id.clone()],
            })
            .collect(),
    };
    w.prelude(scenario);
    w.t.main_open(&mut w.out);
    w.entities(&sim.ns, scenario);
    w.out.line("");
    w.out.say(text!("code-timeline"));
    let mut seen = logged(&sim);
    let mut now = 0;
    // The expectations' instants, in order: each is checked after the steps at its instant.
    let mut expects: Vec<&crate::model::Expectation> = scenario.expect.iter().collect();
    expects.sort_by_key(|e| e.at.ms());
    let mut expects = expects.into_iter().peekable();
    for (step, replies) in timeline.iter().zip(&replies) {
        let at = step.at.ms();
        while let Some(e) = expects.next_if(|e| e.at.ms() < at) {
            w.expectation(&mut sim, &mut now, &mut seen, e, false);
        }
        w.move_to(&mut sim, &mut now, &mut seen, at);
        w.step(&sim, step, replies);
        let mut recorded = step.clone();
        recorded.at = crate::dur::Dur(at);
        let _ = sim.push_step(recorded);
        seen = w.happened(&sim, seen);
    }
    // After the last step: every expectation's instant is waited for (the playground's log
    // up to the last one is said), the counts checked where peek reads them.
    for e in expects {
        w.expectation(&mut sim, &mut now, &mut seen, e, true);
    }
    w.t.end(&mut w.out, w.actors);
    Ok(w.t.finish(w.out.text))
}

/// The entities whose counts an expectation names (an entity's dead-lettered count read from its
/// dead-letter queue), each with the reason peek cannot read it, if so: a topic, a session
/// entity, a forwarding source, or one that AutoDeleteOnIdle watches (a peek would keep it
/// alive: IDLE-02).
fn count_paths(ns: &Namespace, e: &Expectation) -> Vec<(String, Option<&'static str>)> {
    let mut paths: Vec<String> = Vec::new();
    for (path, c) in e.counts.iter() {
        let dlq = (c.dead_lettered.is_some() && !sbp_engine::namespace::split_queue_path(path).1)
            .then(|| sbp_engine::namespace::queue_path(path, true));
        for p in std::iter::once(path.clone()).chain(dlq) {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    paths
        .into_iter()
        .filter_map(|path| {
            let (base, _) = sbp_engine::namespace::split_queue_path(&path);
            ns.entity(base)?;
            let why = unreadable(ns, &path);
            Some((path, why))
        })
        .collect()
}

/// Why peek cannot read `path` (an entity, or its dead-letter queue), if so: a topic, a session
/// entity, a forwarding source, or one that AutoDeleteOnIdle watches (a peek would keep it
/// alive: IDLE-02). The reason is said with the path (`code-counts-*`).
fn unreadable(ns: &Namespace, path: &str) -> Option<&'static str> {
    let (base, dlq) = sbp_engine::namespace::split_queue_path(path);
    let entity = ns.entity(base)?;
    let s = &entity.settings;
    if entity.kind == EntityKind::Topic {
        Some("code-counts-topic")
    } else if s.requires_session && !dlq {
        Some("code-counts-session")
    } else if (s.forward_to.is_some() && !dlq)
        || (s.forward_dead_lettered_messages_to.is_some() && dlq)
    {
        Some("code-counts-forward")
    } else if s.auto_delete_on_idle < MAX_VALUE {
        Some("code-counts-idle")
    } else {
        None
    }
}

/// How the management API names an entity's kind.
fn kind_name(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Queue => "Queue",
        EntityKind::Topic => "Topic",
        EntityKind::Subscription { .. } => "Subscription",
    }
}

/// An expectation's names of one sort (metrics, event kinds, calls), joined for a comment.
fn keys<V>(map: &crate::vecmap::VecMap<V>) -> String {
    map.iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many events the simulation has logged so far (those its log dropped included).
fn logged(sim: &Simulation) -> usize {
    sim.ns.events_logged() as usize
}

/// The settings of an entity of `kind` that the program compares with the broker's, each with
/// the playground's value as text (durations in ms, MaxValue as its ms). ForwardTo is left out:
/// the service may give it back as an address rather than the name it was set to.
fn compared_settings(kind: &str, s: &EntitySettings) -> Vec<(&'static str, String, Setting)> {
    let ms = |d: Duration| d.min(MAX_VALUE).to_string();
    let mut out = vec![(
        "DefaultMessageTimeToLive",
        ms(s.default_message_time_to_live),
        Setting::Duration,
    )];
    if kind != "Topic" {
        out.push(("LockDuration", ms(s.lock_duration), Setting::Duration));
        out.push((
            "MaxDeliveryCount",
            s.max_delivery_count.to_string(),
            Setting::Count,
        ));
        out.push((
            "DeadLetteringOnMessageExpiration",
            s.dead_lettering_on_message_expiration.to_string(),
            Setting::Flag,
        ));
        out.push((
            "RequiresSession",
            s.requires_session.to_string(),
            Setting::Flag,
        ));
    }
    out.push((
        "AutoDeleteOnIdle",
        ms(s.auto_delete_on_idle),
        Setting::Duration,
    ));
    if kind != "Subscription" {
        out.push((
            "RequiresDuplicateDetection",
            s.requires_duplicate_detection.to_string(),
            Setting::Flag,
        ));
        if s.requires_duplicate_detection {
            out.push((
                "DuplicateDetectionHistoryTimeWindow",
                ms(s.duplicate_detection_history_time_window),
                Setting::Duration,
            ));
        }
    }
    out
}

/// Whether `action` is a call the broker answers (so one that can fail): not a fault or a
/// release (said as comments), the producers' and consumers' loops (they count their own
/// failures), an expectation (peek's errors are its answer) or a disconnection.
fn calls_the_broker(sim: &Simulation, action: &Action) -> bool {
    match action {
        Action::Fault(_)
        | Action::Release(_)
        | Action::StartProducer(_)
        | Action::StartConsumers(_)
        | Action::StopProducer(_)
        | Action::StopConsumers(_)
        | Action::Expect(_) => false,
        Action::CloseReceiver(r) => r.from.is_some(),
        Action::Update(u) => sim.ns.entity(&u.entity).is_some(),
        _ => true,
    }
}

/// A subscription path's topic and name as literals, or a path's literal.
fn entity(t: &dyn Target, path: &str) -> Entity {
    match sbp_engine::namespace::split_subscription_path(path) {
        Some((topic, name)) => Entity::Subscription(t.lit(topic), t.lit(name)),
        None => Entity::Path(t.lit(path)),
    }
}

/// What an entity's settings are written for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Written {
    /// Its creation: what differs from the service's defaults.
    Created,
    /// An update: every setting an update may change.
    Updated,
}

/// How messages were fetched: received (kept under the receive call's name, for the
/// settlements after it) or peeked.
#[derive(Clone, Copy)]
enum Fetched<'a> {
    Received(&'a str),
    Peeked,
}

/// A program being written.
struct Code {
    t: &'static dyn Target,
    out: Out,
    /// (entity path, the playground's SequenceNumber) -> the receive call that got it, and
    /// where in its list: a settlement names the message the program actually received.
    held: std::collections::HashMap<(String, u64), (String, usize)>,
    /// Receive calls written so far (`c1`, `c2`...).
    calls: usize,
    /// The program has stopped checking (a step it does not take).
    unchecked: bool,
    /// MessageIds the scenario gives (the others are the playground's own: not compared).
    ids: std::collections::BTreeSet<String>,
    /// The scenario starts producers or consumers: the program has their loops.
    actors: bool,
    /// Every instant a step or an expectation is at: a call asked again (a receive that got
    /// fewer messages, a count that differs) stops at the next one, so that it runs on time.
    instants: std::collections::BTreeSet<Instant>,
    /// The topics the scenario makes (a path the playground no longer has is a queue otherwise).
    topics: std::collections::BTreeSet<String>,
}

impl Code {
    /// The program and the playground move on to `at` (if it is later than `now`): a wait, and
    /// what the playground logged on the way as comments (`seen` events said so far).
    fn move_to(&mut self, sim: &mut Simulation, now: &mut Instant, seen: &mut usize, at: Instant) {
        if at > *now {
            sim.advance_to(at);
            // Measured from the program's start, so the time the calls take does not add up.
            self.out.line("");
            let on =
                crate::code_text::comment(&text!("code-wait", at = format_instant(at)).to_string());
            self.out.line(&self.t.wait(at, &on));
            *now = at;
        }
        *seen = self.happened(sim, *seen);
    }

    /// At expectation `e`: the program waits for its instant when it has counts to check there
    /// (or always, with `wait_anyway`), then checks them.
    fn expectation(
        &mut self,
        sim: &mut Simulation,
        now: &mut Instant,
        seen: &mut usize,
        e: &Expectation,
        wait_anyway: bool,
    ) {
        let checked =
            |sim: &Simulation| count_paths(&sim.ns, e).iter().any(|(_, why)| why.is_none());
        let read_at_its_instant =
            !e.messages.is_empty() || !e.exists.is_empty() || !e.settings.is_empty();
        if wait_anyway || checked(sim) || read_at_its_instant {
            self.move_to(sim, now, seen, e.at.ms());
        }
        self.checks_of(sim, e);
    }

    /// Every check of expectation `e` at the program's instant: the counts and the messages
    /// (peek), whether entities exist and their settings (the management API), and what the
    /// program cannot read from a broker, said.
    fn checks_of(&mut self, sim: &Simulation, e: &Expectation) {
        self.counts(sim, &count_paths(&sim.ns, e));
        self.messages(sim, e);
        self.admin_reads(sim, e);
        let at = format_instant(sim.now());
        if !e.metrics.is_empty() {
            let names = keys(&e.metrics);
            self.out
                .say(text!("code-metrics-unread", at = at.clone(), names = names));
        }
        if !e.events.is_empty() {
            let names = keys(&e.events);
            self.out
                .say(text!("code-events-unread", at = at.clone(), names = names));
        }
        if !e.returned.is_empty() {
            self.out
                .say(text!("code-returned", names = keys(&e.returned)));
        }
    }

    /// At expectation `e`: whether each entity it names exists, and the settings it names, as
    /// the management API reads them now, against the playground's (SERVICEBUS_ADMIN_CONNECTION;
    /// without it, said as not checked). A read counts as no activity (IDLE-02 names sends,
    /// receives and updates), so it keeps nothing alive.
    fn admin_reads(&mut self, sim: &Simulation, e: &Expectation) {
        let at = format_instant(sim.now());
        let t = self.t;
        for (path, _) in e.exists.iter() {
            let what = text!("code-check-exists", path = path, at = at.clone()).to_string();
            let showed = sim.ns.entity(path).is_some().to_string();
            self.admin_read_open(&what);
            let until = self.until(sim.now());
            let kind = self.kind_of(sim, path);
            let returned = t.exists(kind, &entity(t, path), &self.lit(&showed), until);
            self.check(&what, &showed, &returned);
            self.admin_read_close(path, &at);
        }
        for (path, wanted) in e.settings.iter() {
            let Some(found) = sim.ns.entity(path) else {
                continue;
            };
            let kind = self.kind_of(sim, path);
            let what = text!("code-check-settings", path = path, at = at.clone()).to_string();
            self.admin_read_open(&what);
            self.line(&t.read_settings(kind, &entity(t, path), "now"));
            let compared = compared_settings(kind, &found.settings);
            for name in wanted.keys() {
                match compared.iter().find(|(n, ..)| n == name) {
                    Some((name, value, setting)) => {
                        let label = setting.labelled(format!("{what}: {name}"));
                        let returned = t.setting("now", name, *setting);
                        self.check(&label, value, &returned);
                    }
                    None => self
                        .out
                        .say(text!("code-setting-unread", path = path, name = name)),
                }
            }
            self.admin_read_close(path, &at);
        }
    }

    /// Opens a read through the management API: one checked attempt named `what`, in a block
    /// that runs only with an administration client.
    fn admin_read_open(&mut self, what: &str) {
        self.attempt_open(what, None);
        self.admin_open();
    }

    /// Closes [`Code::admin_read_open`]'s blocks: without an administration client, the read
    /// of `path` is said as not checked.
    fn admin_read_close(&mut self, path: &str, at: &str) {
        self.out.indent -= 1;
        let unread = text!("code-admin-unread", path = path, at = at).to_string();
        let otherwise = self.t.print(&self.lit(&unread));
        self.t.admin_close(&mut self.out, &otherwise);
        self.attempt_close();
    }

    /// How the management API names the kind of entity `path` is (Queue, Topic or
    /// Subscription), whether or not the playground has it now.
    fn kind_of(&self, sim: &Simulation, path: &str) -> &'static str {
        match sim.ns.entity(path).map(|e| e.kind) {
            Some(kind) => kind_name(kind),
            None if sbp_engine::namespace::split_subscription_path(path).is_some() => {
                "Subscription"
            }
            None if self.topics.contains(path) => "Topic",
            None => "Queue",
        }
    }

    /// At expectation `e`: each message it names, as peek shows it now in the playground and
    /// in the broker (DeliveryCount as peek shows it: the deliveries that failed so far, in
    /// every SDK, MSG-02; DeadLetterReason), or that it is not there. LockedUntil is said, not
    /// compared: the program's instants are the wall clock's.
    fn messages(&mut self, sim: &Simulation, e: &Expectation) {
        let at = format_instant(sim.now());
        for want in &e.messages {
            let (path, seq) = (want.entity.as_str(), want.seq);
            if unreadable(&sim.ns, path).is_some() {
                self.out.say(text!(
                    "code-message-unread",
                    path = path,
                    seq = seq,
                    at = at
                ));
                continue;
            }
            let label = |field: &str| {
                text!(
                    "code-check-message",
                    path = path,
                    seq = seq,
                    at = at,
                    field = field
                )
                .to_string()
            };
            let shown = sim.ns.message(path, seq, sbp_engine::Perspective::Peek);
            let showed = |field: Field| match (&shown, field) {
                (None, _) => "not there".to_string(),
                (Some(m), Field::DeliveryCount) => m.delivery_count.to_string(),
                (Some(m), Field::DeadLetterReason) => {
                    m.dead_letter_reason.clone().unwrap_or_default()
                }
                (Some(m), Field::MessageId) => m.message_id.clone(),
            };
            // The number the program has for the playground's (a dead-lettered message keeps
            // the SequenceNumber it was received with).
            let (base, _) = sbp_engine::namespace::split_queue_path(path);
            let seq_expr = self.seq_expr(base, seq);
            self.attempt_open(&label("peek"), None);
            let peek = self.t.peeked("m", &self.lit(path), &seq_expr);
            self.line(&peek);
            let fields = [
                Field::MessageId,
                Field::DeliveryCount,
                Field::DeadLetterReason,
            ];
            let named = |field: Field| want.properties.contains_key(field.pascal());
            let none_named = !fields.into_iter().any(named);
            for field in fields {
                // What the expectation names; DeliveryCount where it names none of them (the
                // message is there, and as often delivered), or where it is not there.
                if named(field)
                    || (field == Field::DeliveryCount && (none_named || shown.is_none()))
                {
                    let returned = self.t.one("m", field);
                    self.check(&label(field.pascal()), &showed(field), &returned);
                }
            }
            self.attempt_close();
            if want.properties.contains_key("LockedUntil") {
                self.out
                    .say(text!("code-message-lock", path = path, seq = seq, at = at));
            }
        }
    }

    fn line(&mut self, text: &str) {
        self.out.line(text);
    }

    fn lit(&self, s: &str) -> String {
        self.t.lit(s)
    }

    /// Until when a call made at `at` may be asked again: the next instant of a step or an
    /// expectation, or 5 s after the last.
    fn until(&self, at: Instant) -> Instant {
        let next = self.instants.range(at.saturating_add(1)..).next();
        next.copied().unwrap_or(at.saturating_add(5_000))
    }

    fn prelude(&mut self, scenario: &Scenario) {
        let title = if scenario.name.is_empty() {
            "A Service Bus Playground scenario".to_string()
        } else {
            scenario.name.clone()
        };
        // The words the program prints at its checks, in the reader's language.
        let words = [
            ("SAME", text!("code-check-same")),
            ("DIFFERS", text!("code-check-differs")),
            ("SHOWED", text!("code-check-showed")),
            ("RETURNED", text!("code-check-returned")),
            ("NOT_CHECKED", text!("code-check-skipped")),
            ("ALL_SAME", text!("code-check-all")),
            ("SOME_DIFFER", text!("code-check-some")),
            ("EXISTING", text!("code-entities-existing")),
            ("LOOP_FAILED", text!("code-loop-failed")),
            ("NO_ERROR", text!("code-no-error")),
        ];
        self.t.prelude(&mut self.out, &title, &words);
        if self.actors {
            // The producers' and consumers' loops, bounded: a producer stops at its step, its
            // max_messages or 10,000 messages, the consumers at their step or the program's end.
            self.out.say(text!("code-actors"));
            self.out.lines(self.t.actors());
        }
        if !scenario.description.is_empty() {
            self.line("");
            self.out.note(&scenario.description);
        }
        if scenario.namespace.tier == sbp_engine::Tier::Emulator {
            self.line("");
            self.out.say(text!("code-emulator"));
        }
        self.out.say(text!("code-checks"));
        self.out.say(text!("code-apart", step = self.t.step_form()));
        self.line("");
    }

    /// The administration calls that make the scenario's entities with their settings, each
    /// only where the namespace does not have it yet (one made before is taken as it is); then
    /// each entity's settings as the broker has them, compared with the playground's, so that a
    /// difference names its setting ("orders MaxDeliveryCount") before any step runs.
    fn entities(&mut self, ns: &Namespace, scenario: &Scenario) {
        self.out.say(text!("code-entities"));
        if scenario.entities.is_empty() {
            return;
        }
        self.admin_open();
        for (i, def) in scenario.entities.iter().enumerate() {
            let path = def
                .queue
                .clone()
                .or_else(|| def.topic.clone())
                .or_else(|| def.subscription.clone())
                .unwrap_or_default();
            let Some(e) = ns.entity(&path) else { continue };
            let settings = e.settings.clone();
            // The calls that make it, written apart: they go inside the language's "where it
            // is not there".
            let outer = std::mem::replace(&mut self.out, Out::new(self.t.comment()));
            let kind = kind_name(e.kind);
            match e.kind {
                EntityKind::Queue | EntityKind::Topic => {
                    self.create(kind, &path, None, &settings, None)
                }
                EntityKind::Subscription { .. } => {
                    let (topic, name) = sbp_engine::namespace::split_subscription_path(&path)
                        .unwrap_or((&path, ""));
                    // FLT-01: the first rule with the subscription (none to write for the
                    // service's own `$Default`), the others added after it.
                    let first = match e.rules.first() {
                        Some((n, SubscriptionRule::MatchAll))
                            if n == sbp_engine::entity::DEFAULT_RULE =>
                        {
                            None
                        }
                        other => other.map(|(n, r)| (n.as_str(), r)),
                    };
                    self.create("Subscription", name, Some(topic), &settings, first);
                    for (rule_name, rule) in e.rules.iter().skip(1) {
                        self.add_rule(topic, name, rule_name, Some(rule));
                    }
                }
            }
            let made = std::mem::replace(&mut self.out, outer).text;
            let var = format!("settings{}", i + 1);
            self.t
                .ensure(&mut self.out, kind, &entity(self.t, &path), &var, &made);
            for (name, value, setting) in compared_settings(kind, &settings) {
                let what = setting.labelled(format!("{path} {name}"));
                let returned = self.t.setting(&var, name, setting);
                self.check(&what, &value, &returned);
            }
            self.t.ensure_end(&mut self.out);
        }
        self.admin_close(None);
    }

    /// Opens a block that runs only with an administration client (`SERVICEBUS_ADMIN_CONNECTION`).
    fn admin_open(&mut self) {
        self.out.lines(self.t.admin_open());
        self.out.indent += 1;
    }

    /// Closes [`Code::admin_open`]'s block. Without an administration client: the entities are
    /// taken as existing (`why` None), or the checks stop (a step the program cannot take).
    fn admin_close(&mut self, why: Option<Text>) {
        self.out.indent -= 1;
        let otherwise = match &why {
            None => self.t.existing().to_string(),
            Some(why) => self.stop_checking_line(why),
        };
        self.t.admin_close(&mut self.out, &otherwise);
    }

    /// The statement that stops the checks (the run goes where the playground's did not), saying why.
    fn stop_checking_line(&self, why: &Text) -> String {
        let why = self.lit(&text!("code-check-stop", why = why.clone()).to_string());
        self.t.stop_checking(&why)
    }

    /// The checks stop here, for a step the program does not take at all.
    fn stop_checking(&mut self, why: Text) {
        let line = self.stop_checking_line(&why);
        self.line(&line);
        self.unchecked = true;
    }

    /// One entity's settings as the language names them (durations written by `duration`).
    /// At its creation: what differs from the service's defaults, RequiresSession and
    /// RequiresDuplicateDetection included. For an update: every setting an update may change,
    /// with its value (off and MaxValue too), so that it writes only what it changes; the two
    /// fixed at creation are never written.
    fn options(&self, kind: &str, s: &EntitySettings, written: Written) -> Vec<(String, String)> {
        let creation = written == Written::Created;
        let t = self.t;
        let mut o: Vec<(&str, String)> = Vec::new();
        let d = |ms: Duration| t.duration(ms);
        if !creation || s.default_message_time_to_live < MAX_VALUE {
            o.push((
                "DefaultMessageTimeToLive",
                d(s.default_message_time_to_live),
            ));
        }
        if kind != "Topic" {
            o.push(("LockDuration", d(s.lock_duration)));
            o.push(("MaxDeliveryCount", s.max_delivery_count.to_string()));
            if !creation || s.dead_lettering_on_message_expiration {
                o.push((
                    "DeadLetteringOnMessageExpiration",
                    t.boolean(s.dead_lettering_on_message_expiration),
                ));
            }
            if creation && s.requires_session {
                o.push(("RequiresSession", t.boolean(true)));
            }
            for (key, target) in [
                ("ForwardTo", &s.forward_to),
                (
                    "ForwardDeadLetteredMessagesTo",
                    &s.forward_dead_lettered_messages_to,
                ),
            ] {
                match target {
                    Some(f) => o.push((key, t.lit(f))),
                    None if !creation => o.push((key, t.none().to_string())),
                    None => {}
                }
            }
        }
        if !creation || s.auto_delete_on_idle < MAX_VALUE {
            o.push(("AutoDeleteOnIdle", d(s.auto_delete_on_idle)));
        }
        if kind != "Subscription" && s.requires_duplicate_detection {
            if creation {
                o.push(("RequiresDuplicateDetection", t.boolean(true)));
            }
            o.push((
                "DuplicateDetectionHistoryTimeWindow",
                d(s.duplicate_detection_history_time_window),
            ));
        }
        o.into_iter().map(|(k, v)| (t.member(k), v)).collect()
    }

    fn create(
        &mut self,
        kind: &str,
        name: &str,
        topic: Option<&str>,
        s: &EntitySettings,
        rule: Option<(&str, &SubscriptionRule)>,
    ) {
        let options = self.options(kind, s, Written::Created);
        let target = match topic {
            Some(t) => format!("{}, {}", self.lit(t), self.lit(name)),
            None => self.lit(name),
        };
        let Some((rule_name, r)) = rule else {
            return self.line(&self.t.create(kind, &target, &options));
        };
        let rule = self.rule(rule_name, r);
        if let Some(line) = self
            .t
            .create_subscription_with_rule(&target, &options, &rule)
        {
            return self.line(&line);
        }
        self.line(&self.t.create(kind, &target, &options));
        if let Some(t) = topic {
            self.remove_rule(t, name, sbp_engine::entity::DEFAULT_RULE);
            self.add_rule(t, name, rule_name, Some(r));
        }
    }

    fn rule(&self, name: &str, r: &SubscriptionRule) -> Rule {
        Rule {
            name: self.lit(name),
            filter: self.filter(r),
            action: self.rule_action(r),
        }
    }

    /// FLT-01: a rule added to subscription `name` of `topic` (None: a rule that could not be
    /// read, said as a comment).
    fn add_rule(
        &mut self,
        topic: &str,
        name: &str,
        rule_name: &str,
        rule: Option<&SubscriptionRule>,
    ) {
        let Some(r) = rule else {
            return self.out.say(text!("code-rule-unread", name = rule_name));
        };
        let rule = self.rule(rule_name, r);
        let line = self.t.add_rule(&self.lit(topic), &self.lit(name), &rule);
        self.line(&line);
    }

    /// FLT-01: a subscription's rule removed by its name.
    fn remove_rule(&mut self, topic: &str, name: &str, rule_name: &str) {
        let line = self
            .t
            .remove_rule(&self.lit(topic), &self.lit(name), &self.lit(rule_name));
        self.line(&line);
    }

    /// A SQL rule's action, if it has one.
    fn rule_action(&self, rule: &SubscriptionRule) -> Option<String> {
        let text = match rule {
            SubscriptionRule::Sql(sql) => sql.action.as_deref()?,
            other => other.correlation()?.action?,
        };
        Some(self.t.sql_action(&self.lit(text)))
    }

    /// A subscription's filter.
    fn filter(&self, rule: &SubscriptionRule) -> String {
        if let SubscriptionRule::Sql(sql) = rule {
            return self.t.sql_filter(&self.lit(&sql.filter));
        }
        let Some(c) = rule.correlation() else {
            return self.t.true_filter();
        };
        let known = |k: &str| {
            ["Subject", "CorrelationId", "MessageId"].contains(&k)
                || sbp_engine::message::SYSTEM_PROPERTIES.contains(&k)
        };
        let fields: Vec<(String, String)> = c
            .system
            .iter()
            .filter(|(k, _)| known(k))
            .map(|(k, v)| (self.t.correlation_field(k), self.lit(v)))
            .collect();
        self.t.correlation_filter(&fields, c.application)
    }

    /// Comments on what the playground logged since `seen` (a count of events ever logged).
    fn happened(&mut self, sim: &Simulation, seen: usize) -> usize {
        let total = logged(sim);
        // In the reader's words (the CLI's: English).
        let new: Vec<String> = sbp_engine::text::with_current(|words| {
            sim.ns
                .events_since(seen as u64)
                .0
                .iter()
                .map(|e| {
                    let said = crate::words::event_text(words, &sim.ns, e);
                    let rule = e.rule.map(|r| format!(" ({})", r.id())).unwrap_or_default();
                    format!(
                        "{} {}: {said}{rule}",
                        format_instant(e.at),
                        sim.ns.event_path(e)
                    )
                })
                .collect()
        });
        for line in new.iter().take(MAX_NOTES) {
            self.out.say(text!("code-showed", what = line.as_str()));
        }
        if new.len() > MAX_NOTES {
            self.out
                .say(text!("code-more", count = new.len() - MAX_NOTES));
        }
        total
    }

    /// `Receiver("r1", "orders", mode)` in the language.
    fn receiver(&self, name: &str, path: &str, mode: ModeDef) -> String {
        self.t.receiver(&self.lit(name), &self.lit(path), mode)
    }

    fn step(
        &mut self,
        sim: &Simulation,
        step: &Step,
        replies: &Result<Vec<Reply>, sbp_engine::BrokerError>,
    ) {
        self.line("");
        if let Some(note) = &step.note {
            self.out.note(note);
        }
        let Some(action) = &step.action else {
            return;
        };
        let what = format!("{}: {}", format_instant(step.at.ms()), action.text());
        self.out.note(&what);
        // Every call to the broker is one attempt that is checked: an error where the playground
        // showed none is a difference, as is no error where it showed one (on purpose,
        // expect_error, or not), and the program goes on to its summary either way.
        let failed = replies.as_ref().err().map(|e| e.kind.name());
        let attempt = failed.is_some() || calls_the_broker(sim, action);
        if attempt {
            self.attempt_open(&what, failed);
        }
        self.action(sim, action, replies.as_deref().ok());
        if attempt {
            self.attempt_close();
        }
    }

    /// Opens one checked attempt named `what`: the calls written until
    /// [`Code::attempt_close`] run in the language's step block, which turns an error into a
    /// check against `expected` (the error the playground showed, or none) and goes on.
    fn attempt_open(&mut self, what: &str, expected: Option<&str>) {
        let what = self.lit(what);
        let expected = expected.map(|kind| self.lit(kind));
        self.out
            .lines(&self.t.step_open(&what, expected.as_deref()));
        self.out.indent += 1;
    }

    fn attempt_close(&mut self) {
        self.out.indent -= 1;
        if let Some(close) = self.t.step_close() {
            self.line(close);
        }
    }

    /// `check(what, showed, returned)` in the language: `showed` is what the playground
    /// showed, as text; `returned` an expression of the program's, as text.
    fn check(&mut self, what: &str, showed: &str, returned: &str) {
        let line = self.t.check(&self.lit(what), &self.lit(showed), returned);
        self.line(&line);
    }

    /// At an expectation: what peek shows of each entity in `paths` (from [`count_paths`]), by
    /// State, against the playground's store; the paths peek cannot read are said.
    fn counts(&mut self, sim: &Simulation, paths: &[(String, Option<&'static str>)]) {
        let now = sim.now();
        for (path, why) in paths {
            if let Some(why) = why {
                self.out
                    .say(Text::of(why, &[("path", path as &dyn std::fmt::Display)]));
                continue;
            }
            let (base, dlq) = sbp_engine::namespace::split_queue_path(path);
            let Some(entity) = sim.ns.entity(base) else {
                continue;
            };
            let store = if dlq { &entity.dlq } else { &entity.main };
            let (mut active, mut deferred, mut scheduled) = (0, 0, 0);
            for m in store.messages.values() {
                match m.state {
                    MessageState::Active => active += 1,
                    MessageState::Deferred => deferred += 1,
                    MessageState::Scheduled => scheduled += 1,
                }
            }
            let showed = format!("active {active}, deferred {deferred}, scheduled {scheduled}");
            let what = text!("code-check-peek", path = path, at = format_instant(now)).to_string();
            let until = self.until(now);
            let returned = self.t.counted(&self.lit(path), &self.lit(&showed), until);
            self.check(&what, &showed, &returned);
        }
    }

    /// The checks of what a receive or a peek returned (in `var`): how many, their MessageIds
    /// where the scenario gave them, DeliveryCount as the SDK counts it, and a dead-letter
    /// queue's DeadLetterReason.
    fn check_messages(&mut self, what: &str, var: &str, got: &[MessageView], fetched: Fetched) {
        let count = self.t.count(var);
        let n = got.len().to_string();
        self.check(
            &text!("code-check-count", what = what).to_string(),
            &n,
            &count,
        );
        if got.is_empty() {
            return;
        }
        if got.iter().all(|m| self.ids.contains(&m.message_id)) {
            let ids: Vec<&str> = got.iter().map(|m| m.message_id.as_str()).collect();
            let e = self.t.each(var, Field::MessageId);
            self.check(
                &text!("code-check-ids", what = what).to_string(),
                &ids.join(","),
                &e,
            );
        }
        if let Fetched::Received(_) = fetched {
            // .NET's DeliveryCount is the playground's; Python's and JavaScript's the AMQP
            // count, one less (docs/RULES.md, DeliveryCount per SDK).
            let less = self.t.delivery_count_below_net();
            let counts: Vec<String> = got
                .iter()
                .map(|m| m.delivery_count.saturating_sub(less).to_string())
                .collect();
            let e = self.t.each(var, Field::DeliveryCount);
            self.check(
                &text!("code-check-delivery-count", what = what).to_string(),
                &counts.join(","),
                &e,
            );
        }
        if got.iter().any(|m| m.dead_letter_reason.is_some()) {
            let reasons: Vec<&str> = got
                .iter()
                .map(|m| m.dead_letter_reason.as_deref().unwrap_or(""))
                .collect();
            let e = self.t.each(var, Field::DeadLetterReason);
            self.check(
                &text!("code-check-reason", what = what).to_string(),
                &reasons.join(","),
                &e,
            );
        }
    }

    /// The message a settlement names: the receive call that got it and its place there.
    fn settled(&self, path: &str, seq: u64) -> (String, usize) {
        self.held
            .get(&(path.to_string(), seq))
            .cloned()
            .unwrap_or_else(|| (format!("{path}#{seq}"), 0))
    }

    fn action(&mut self, sim: &Simulation, action: &Action, replies: Option<&[Reply]>) {
        let t = self.t;
        let what = action.text().to_string();
        let got: Vec<MessageView> = replies
            .unwrap_or_default()
            .iter()
            .flat_map(|r| match r {
                Reply::Messages(ms) => ms.clone(),
                _ => Vec::new(),
            })
            .collect();
        let send_to = |path: &str| match sim.ns.entity(path).map(|e| e.kind) {
            Some(EntityKind::Topic) => SendTo::Topic,
            _ => SendTo::Queue,
        };
        match action {
            Action::Send(s) => {
                let first = sim.ns.entity(&s.to).map_or(1, |e| e.next_seq);
                self.send(s, send_to(&s.to), first)
            }
            Action::Receive(r) => {
                let rx = self.receiver(&r.receiver, &r.from, r.mode);
                let until = self.until(sim.now());
                let receive = t.receive(&rx, r.count.unwrap_or(1), got.len(), until);
                let call = self.receive_call(&r.from, &got);
                self.got(
                    Fetched::Received(&call),
                    &receive,
                    &what,
                    replies.map(|_| &got[..]),
                );
                if let Some(d) = r.max_auto_lock_renewal {
                    self.out
                        .say(text!("code-auto-renew", duration = format_duration(d.ms())));
                }
            }
            Action::Peek(p) => {
                let rx = self.receiver(&p.receiver, &p.from, ModeDef::PeekLock);
                // A SequenceNumber the program received has its own number there.
                let from = p.from_seq.map(|s| self.seq_expr(&p.from, s));
                let peek = t.peek(&rx, p.count.unwrap_or(1), from);
                self.got(Fetched::Peeked, &peek, &what, replies.map(|_| &got[..]));
            }
            Action::ReceiveDeferred(r) => {
                let rx = self.receiver(&r.receiver, &r.from, ModeDef::PeekLock);
                let seqs: Vec<String> = r.seqs.iter().map(|s| self.seq_expr(&r.from, *s)).collect();
                let call = self.receive_call(&r.from, &got);
                let receive = t.receive_deferred(&rx, &seqs);
                self.got(
                    Fetched::Received(&call),
                    &receive,
                    &what,
                    replies.map(|_| &got[..]),
                );
            }
            Action::Complete(s)
            | Action::Abandon(s)
            | Action::DeadLetter(s)
            | Action::Defer(s)
            | Action::RenewLock(s) => {
                let (from, receiver, seq) = match &s.message {
                    Some(name) => match sim.named_message(name) {
                        Ok((call, view)) => (
                            call.from.clone(),
                            call.receiver.clone(),
                            view.sequence_number,
                        ),
                        Err(_) => (s.from.clone(), s.receiver.clone(), s.seq),
                    },
                    None => (s.from.clone(), s.receiver.clone(), s.seq),
                };
                let rx = self.receiver(&receiver, &from, ModeDef::PeekLock);
                let (call_name, index) = self.settled(&from, seq);
                let (reason, description) = (
                    self.lit(s.reason.as_deref().unwrap_or("")),
                    self.lit(s.description.as_deref().unwrap_or("")),
                );
                let settlement = t.settlement(match action {
                    Action::Complete(_) => Settlement::Complete,
                    Action::Abandon(_) => Settlement::Abandon,
                    Action::Defer(_) => Settlement::Defer,
                    Action::RenewLock(_) => Settlement::RenewLock,
                    _ => Settlement::DeadLetter(&reason, &description),
                });
                let call = self.lit(&call_name);
                t.settle(&mut self.out, &call, index, &rx, &settlement);
            }
            Action::CancelScheduled(c) => {
                let key = self.lit(&format!("{}#{}", c.to, c.seq));
                let sender = t.sender(&self.lit(&c.to), send_to(&c.to));
                self.line(&t.cancel_scheduled(&sender, &key));
            }
            Action::Create(d) => {
                let settings = d
                    .settings
                    .apply_to(&EntitySettings::defaults(sim.ns.tier()));
                self.admin_open();
                match (&d.queue, &d.topic, &d.subscription) {
                    (Some(q), _, _) => self.create("Queue", q, None, &settings, None),
                    (_, Some(t), _) => self.create("Topic", t, None, &settings, None),
                    (_, _, Some(path)) => {
                        let (topic, name) = sbp_engine::namespace::split_subscription_path(path)
                            .unwrap_or((path, ""));
                        self.create("Subscription", name, Some(topic), &settings, None)
                    }
                    _ => {}
                }
                self.admin_close(Some(text!("code-why-admin")));
            }
            Action::Update(u) => {
                if let Some(e) = sim.ns.entity(&u.entity) {
                    let kind = kind_name(e.kind);
                    // Only what the step changes, switched off too; never a setting fixed at
                    // creation (RequiresSession, RequiresDuplicateDetection).
                    let after = u.settings.apply_to(&e.settings);
                    let before = self.options(kind, &e.settings, Written::Updated);
                    let options: Vec<(String, String)> = self
                        .options(kind, &after, Written::Updated)
                        .into_iter()
                        .filter(|o| !before.contains(o))
                        .collect();
                    self.admin_open();
                    self.update(kind, &u.entity, &options);
                    self.admin_close(Some(text!("code-why-admin")));
                }
            }
            Action::Delete(path) => {
                let line = t.delete(&entity(t, path));
                self.admin_open();
                self.line(&line);
                self.admin_close(Some(text!("code-why-admin")));
            }
            Action::CloseReceiver(r) => match &r.from {
                Some(from) => {
                    let rx = self.receiver(&r.receiver, from, ModeDef::PeekLock);
                    self.line(&t.close_receiver(&rx));
                }
                None => {
                    self.out.say(text!("code-disconnect"));
                    self.stop_checking(text!("code-why-fault"));
                }
            },
            Action::Session(d) => self.session(d, replies),
            Action::AddRule(r) | Action::RemoveRule(r) => {
                let (topic, name) = sbp_engine::namespace::split_subscription_path(&r.subscription)
                    .unwrap_or((&r.subscription, ""));
                let rule_name = r.rule.name.as_deref().unwrap_or("");
                self.admin_open();
                if matches!(action, Action::RemoveRule(_)) {
                    self.remove_rule(topic, name, rule_name);
                } else {
                    let rule = crate::step::subscription_rule(Some(&r.rule)).ok();
                    self.add_rule(topic, name, rule_name, rule.as_ref());
                }
                self.admin_close(Some(text!("code-why-admin")));
            }
            Action::Fault(_) => {
                self.out.say(text!("code-fault"));
                self.stop_checking(text!("code-why-fault"));
            }
            Action::Release(s) => {
                self.out
                    .say(text!("code-release", seq = s.seq, from = &s.from));
                self.stop_checking(text!("code-why-release"));
            }
            Action::StartProducer(p) => {
                let decimal = |x: f64| sbp_engine::time::format_decimal(x, 3);
                self.out.say(text!(
                    "code-producer",
                    name = p.name,
                    rate = decimal(p.rate),
                    to = p.to
                ));
                let spike = p.spike.as_ref().map_or((0, 0, decimal(1.0)), |s| {
                    (s.from.ms(), s.duration.ms(), decimal(s.factor))
                });
                let producer = Producer {
                    name: self.lit(&p.name),
                    to: self.lit(&p.to),
                    to_kind: send_to(&p.to),
                    rate: decimal(p.rate),
                    limit: p.max_messages.unwrap_or(MAX_PRODUCED).min(MAX_PRODUCED),
                    prefix: self.lit(
                        p.message_id_prefix
                            .as_deref()
                            .unwrap_or(&format!("{}-", p.name)),
                    ),
                    ttl_ms: p.ttl.map_or(0, |t| t.ms()),
                    spike,
                };
                self.line(&t.start_producer(&producer));
                self.stop_checking(text!("code-why-traffic"));
            }
            Action::StartConsumers(c) => {
                let instances = c.instances.unwrap_or(1);
                self.out.say(text!(
                    "code-consumers",
                    name = c.name,
                    count = instances,
                    from = c.from
                ));
                let p = |x: f64| sbp_engine::time::format_decimal(x, 3);
                let consumers = Consumers {
                    name: self.lit(&c.name),
                    from: self.lit(&c.from),
                    instances,
                    mode: c.mode,
                    work: t.work(c.processing.as_ref()),
                    crash: p(c.crash),
                    abandon: p(c.abandon),
                    dead_letter: p(c.dead_letter),
                    restart_ms: c.restart_delay.map_or(0, |d| d.ms()),
                };
                self.line(&t.start_consumers(&consumers));
                self.stop_checking(text!("code-why-traffic"));
            }
            Action::StopProducer(name) | Action::StopConsumers(name) => {
                self.out.say(text!("code-stop"));
                self.line(&t.stop_actors(&self.lit(name)));
            }
            Action::Expect(e) => {
                self.out.say(text!("code-expect"));
                self.checks_of(sim, e);
            }
        }
    }

    /// A receive call's name (`c3`), and its messages remembered for the settlements after it.
    fn receive_call(&mut self, from: &str, got: &[MessageView]) -> String {
        self.calls += 1;
        let call = format!("c{}", self.calls);
        for (i, m) in got.iter().enumerate() {
            self.held
                .insert((from.to_string(), m.sequence_number), (call.clone(), i));
        }
        call
    }

    /// The SequenceNumber the program has for the playground's `seq` in `path`: that of the
    /// message it received in its place (else the playground's number).
    fn seq_expr(&self, path: &str, seq: u64) -> String {
        match self.held.get(&(path.to_string(), seq)) {
            Some((call, i)) => self.t.received_sequence_number(&self.lit(call), *i),
            None => self.t.sequence_number(seq),
        }
    }

    /// `expr` (a receive or a peek) kept as the program's `got`, and checked against what the
    /// playground's call returned (`got`; None when it failed: its error is checked instead).
    fn got(&mut self, fetched: Fetched, expr: &str, what: &str, got: Option<&[MessageView]>) {
        let key = match fetched {
            Fetched::Received(call) => Some(self.lit(call)),
            Fetched::Peeked => None,
        };
        self.t.got(&mut self.out, key.as_deref(), expr);
        if let Some(got) = got {
            self.check_messages(what, "got", got, fetched);
        }
        if let Some((_, close)) = self.t.braces() {
            self.out.indent -= 1;
            self.line(close);
        }
    }

    /// SES-02..05: a session receiver takes the place of the receiver's PeekLock receiver, so
    /// the receives and settlements that follow go through it.
    fn session(&mut self, d: &SessionDef, replies: Option<&[Reply]>) {
        let t = self.t;
        let (name, path) = (d.receiver.as_str(), d.from.as_str());
        let key = t.session_key(name, path);
        let rx = self.receiver(name, path, ModeDef::PeekLock);
        let line = match d.op {
            SessionOpDef::Accept => {
                let id = d.session_id.as_deref().map(|v| self.lit(v));
                t.accept_session(&key, &entity(t, path), id.as_deref())
            }
            op => {
                let state = match &d.state {
                    Some(state) => t.bytes(state),
                    None => self.lit(""),
                };
                t.session_op(op, &rx, &key, &state)
            }
        };
        self.line(&line);
        // The session the broker gave, checked against the playground's.
        let accepted = replies.unwrap_or_default().iter().find_map(|r| match r {
            Reply::Session(v) if d.op == SessionOpDef::Accept => Some(v.session_id.clone()),
            _ => None,
        });
        if let Some(id) = accepted {
            let what = text!("code-check-session", receiver = name).to_string();
            self.check(&what, &id, &t.session_id(&rx));
        }
        if d.op == SessionOpDef::Close {
            if let Some(line) = t.forget_receiver(&key) {
                self.line(&line);
            }
        }
    }

    /// A send step: `count` messages; a scheduled one is kept under the playground's
    /// SequenceNumber (from `first`), which cancelling it names.
    fn send(&mut self, s: &SendDef, to: SendTo, first: u64) {
        let t = self.t;
        let n = s.count.unwrap_or(1).max(1);
        let section = match s.body.section {
            sbp_engine::body::Section::Data => None,
            sbp_engine::body::Section::Value => Some("value"),
            sbp_engine::body::Section::Sequence => Some("sequence"),
        };
        if let Some(section) = section {
            self.out.say(text!("code-body-section", section = section));
        }
        // A text and a number joined by `+`, never by interpolation (user text stays a literal).
        let id = match &s.message_id {
            Some(id) if n > 1 => Some(t.joined(&self.lit(&format!("{id}-")), "i")),
            Some(id) => Some(self.lit(id)),
            None => None,
        };
        let body = match s.body_size {
            Some(size) => t.repeated_body(size),
            None => t.body(&s.body),
        };
        let mut fields: Vec<(String, String)> = Vec::new();
        if let Some(id) = id {
            fields.push((t.member("MessageId"), id));
        }
        if let Some(ttl) = s.ttl {
            fields.push((t.member("TimeToLive"), t.time_to_live(ttl.ms())));
        }
        if let Some(v) = &s.subject {
            fields.push((t.member("Subject"), self.lit(v)));
        }
        if let Some(v) = &s.correlation_id {
            fields.push((t.member("CorrelationId"), self.lit(v)));
        }
        // Only the SDK's names become members (a step with another is refused when read).
        for (k, v) in &s.system_properties {
            if sbp_engine::message::SYSTEM_PROPERTIES.contains(&k.as_str()) {
                fields.push((t.member(k), self.lit(v)));
            }
        }
        let message = t.message(body, &fields, &s.properties);
        let sender = t.sender(&self.lit(&s.to), to);
        // The playground's SequenceNumber of a scheduled message keys what cancelling it needs.
        let key = if n == 1 {
            self.lit(&format!("{}#{first}", s.to))
        } else {
            t.joined(
                &self.lit(&format!("{}#", s.to)),
                &format!("i + {}", first - 1),
            )
        };
        let call = match s.scheduled_enqueue_time {
            Some(at) => t.schedule(&sender, &message, &key, at.ms()),
            None => t.send(&sender, &message),
        };
        if n == 1 {
            self.line(&call);
        } else {
            t.repeat(&mut self.out, n, &call);
        }
    }

    /// An update: the entity's properties read, changed and written back (`kind` is Queue,
    /// Topic or Subscription; a subscription is named by its topic and its name).
    fn update(&mut self, kind: &str, path: &str, options: &[(String, String)]) {
        let t = self.t;
        let (read, write) = t.update(kind, &entity(t, path));
        let braces = t.braces();
        if let Some((open, _)) = braces {
            self.line(open);
            self.out.indent += 1;
        }
        self.line(&read);
        for (k, v) in options {
            self.line(&format!("properties.{k} = {v}{}", t.end_of_statement()));
        }
        self.line(&write);
        if let Some((_, close)) = braces {
            self.out.indent -= 1;
            self.line(close);
        }
    }
}
