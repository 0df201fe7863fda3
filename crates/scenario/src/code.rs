//! A scenario as SDK code: C# (Azure.Messaging.ServiceBus), Python (azure-servicebus) and
//! JavaScript (@azure/service-bus). The administration calls that create the entities with their
//! settings, then the timeline: sends, receives in their mode, each settlement, lock renewal,
//! deferral and receive by sequence number, the waits between steps, and comments saying what
//! the playground showed at each point ("#1 expires: TTL-11"). The playground plays the scenario
//! step by step while writing, so a settlement of a named call names the message it settles.
use crate::code_text;
use crate::model::*;
use crate::step::{Action, Step};
use crate::{Scenario, Simulation, Text};
use sbp_engine::text;
use sbp_engine::time::{format_duration, format_instant, Duration, Instant, MAX_VALUE};
use sbp_engine::{
    EntityKind, EntitySettings, MessageState, MessageView, Namespace, PropertyValue, Reply,
    SubscriptionRule,
};

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

    fn comment(self) -> &'static str {
        match self {
            Lang::Python => "#",
            Lang::CSharp | Lang::JavaScript => "//",
        }
    }
}

/// The emulator's connection string (its documented development key).
pub const EMULATOR_CONNECTION: &str = "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";

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
    let mut w = Code {
        lang,
        out: String::new(),
        indent: 0,
        held: Default::default(),
        calls: 0,
        unchecked: false,
        actors: timeline.iter().any(|s| {
            matches!(
                s.action,
                Some(Action::StartProducer(_)) | Some(Action::StartConsumers(_))
            )
        }),
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
    w.entities(&sim.ns, scenario);
    w.line("");
    w.say(text!("code-timeline"));
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
    w.end();
    Ok(w.out)
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
            let (base, dlq) = sbp_engine::namespace::split_queue_path(&path);
            let entity = ns.entity(base)?;
            let s = &entity.settings;
            let why = if entity.kind == EntityKind::Topic {
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
            };
            Some((path, why))
        })
        .collect()
}

/// How many events the simulation has logged so far (those its log dropped included).
fn logged(sim: &Simulation) -> usize {
    sim.ns.events_logged() as usize
}

/// A program being written.
struct Code {
    lang: Lang,
    out: String,
    indent: usize,
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
}

impl Code {
    fn line(&mut self, text: &str) {
        if !text.is_empty() {
            self.out += &"    ".repeat(self.indent);
            self.out += text;
        }
        self.out.push('\n');
    }

    /// The program and the playground move on to `at` (if it is later than `now`): a wait, and
    /// what the playground logged on the way as comments (`seen` events said so far).
    fn move_to(&mut self, sim: &mut Simulation, now: &mut Instant, seen: &mut usize, at: Instant) {
        if at > *now {
            sim.advance_to(at);
            self.wait(at);
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
        if wait_anyway || checked(sim) {
            self.move_to(sim, now, seen, e.at.ms());
        }
        self.counts(sim, &count_paths(&sim.ns, e));
    }

    /// A comment in the reader's words (the CLI's: English).
    fn say(&mut self, t: Text) {
        self.note(&t.to_string());
    }

    /// A line comment: every text in one goes through `code_text::comment`.
    fn note(&mut self, text: &str) {
        let c = self.lang.comment();
        self.line(&format!("{c} {}", code_text::comment(text)));
    }

    /// Bytes as a literal: a string when they are text, else decoded from their base64 (in C#
    /// a `byte[]`).
    fn bytes(&self, body: &sbp_engine::Body) -> String {
        match (body.text(), self.lang) {
            (Some(text), _) => self.lit(text),
            (None, Lang::CSharp) => {
                format!("Convert.FromBase64String({})", self.lit(&body.base64()))
            }
            (None, Lang::Python) => format!("base64.b64decode({})", self.lit(&body.base64())),
            (None, Lang::JavaScript) => {
                format!("Buffer.from({}, \"base64\")", self.lit(&body.base64()))
            }
        }
    }

    /// A string literal: every text in one goes through its language's function.
    fn lit(&self, s: &str) -> String {
        match self.lang {
            Lang::CSharp => code_text::csharp_literal(s),
            Lang::Python => code_text::python_literal(s),
            Lang::JavaScript => code_text::javascript_literal(s),
        }
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
        ];
        match self.lang {
            Lang::CSharp => {
                self.say(text!(
                    "code-header",
                    title = title,
                    sdk = "Azure.Messaging.ServiceBus"
                ));
                self.note("dotnet add package Azure.Messaging.ServiceBus");
                self.line("using Azure.Messaging.ServiceBus;");
                self.line("using Azure.Messaging.ServiceBus.Administration;");
                self.line("");
                self.settings(
                    [
                        "var connection = Environment.GetEnvironmentVariable(\"SERVICEBUS_CONNECTION\") ?? \"<connection string>\";",
                        "var adminConnection = Environment.GetEnvironmentVariable(\"SERVICEBUS_ADMIN_CONNECTION\");",
                        "var SPEED = double.Parse(Environment.GetEnvironmentVariable(\"SBP_SPEED\") ?? \"1\", System.Globalization.CultureInfo.InvariantCulture);",
                    ],
                    &words,
                    "const string {name} = {lit};",
                );
                self.say(text!("code-retries"));
                self.line("await using var client = new ServiceBusClient(connection, new ServiceBusClientOptions { RetryOptions = new ServiceBusRetryOptions { MaxRetries = 0 } });");
                self.line("var admin = adminConnection is null ? null : new ServiceBusAdministrationClient(adminConnection);");
                self.line("var start = DateTimeOffset.UtcNow;");
                self.line("var receivers = new Dictionary<string, ServiceBusReceiver>();");
                self.line("var senders = new Dictionary<string, ServiceBusSender>();");
                self.line("var calls = new Dictionary<string, IReadOnlyList<ServiceBusReceivedMessage>>();");
                self.line("var scheduled = new Dictionary<string, long>();");
                self.line("var differences = new List<string>();");
                self.line("var checking = true;");
                for l in [
                    "ServiceBusReceiver Receiver(string name, string path, ServiceBusReceiveMode mode)",
                    "{",
                    "    var key = $\"{name}|{path}|{mode}\";",
                    "    if (!receivers.TryGetValue(key, out var r))",
                    "    {",
                    "        var options = new ServiceBusReceiverOptions { ReceiveMode = mode };",
                    "        var parts = path.Split(\"/subscriptions/\");",
                    "        r = parts.Length == 2 ? client.CreateReceiver(parts[0], parts[1], options) : client.CreateReceiver(path, options);",
                    "        receivers[key] = r;",
                    "    }",
                    "    return r;",
                    "}",
                    "ServiceBusSender Sender(string path)",
                    "{",
                    "    if (!senders.TryGetValue(path, out var s)) senders[path] = s = client.CreateSender(path);",
                    "    return s;",
                    "}",
                    "async Task WaitUntil(long ms)",
                    "{",
                    "    var delay = start.AddMilliseconds(ms / SPEED) - DateTimeOffset.UtcNow;",
                    "    if (delay > TimeSpan.Zero) await Task.Delay(delay);",
                    "}",
                    "// Fewer messages than asked may come at a time: ask again until the expected ones are there, or 5 s passed.",
                    "async Task<IReadOnlyList<ServiceBusReceivedMessage>> ReceiveAsync(ServiceBusReceiver r, int count, int expected)",
                    "{",
                    "    var got = new List<ServiceBusReceivedMessage>();",
                    "    var deadline = DateTimeOffset.UtcNow.AddSeconds(5);",
                    "    while (true)",
                    "    {",
                    "        var wait = got.Count < expected ? deadline - DateTimeOffset.UtcNow : TimeSpan.FromMilliseconds(100);",
                    "        if (wait < TimeSpan.FromMilliseconds(100)) wait = TimeSpan.FromMilliseconds(100);",
                    "        got.AddRange(await r.ReceiveMessagesAsync(count - got.Count, wait));",
                    "        if (got.Count >= expected || got.Count >= count || DateTimeOffset.UtcNow >= deadline) return got;",
                    "    }",
                    "}",
                    "// What peek shows of an entity (RCV-11), by State: it locks nothing and changes no DeliveryCount.",
                    "// Asked again until it is what the playground showed, or 5 s passed (the broker's instants lag the program's by its calls).",
                    "async Task<string> Counted(string path, string showed)",
                    "{",
                    "    var r = Receiver(\"sbp-counts\", path, ServiceBusReceiveMode.PeekLock);",
                    "    var deadline = DateTimeOffset.UtcNow.AddSeconds(5);",
                    "    while (true)",
                    "    {",
                    "        var states = new Dictionary<string, int> { [\"active\"] = 0, [\"deferred\"] = 0, [\"scheduled\"] = 0 };",
                    "        long next = 1;",
                    "        try",
                    "        {",
                    "            for (var i = 0; i < 100; i++)",
                    "            {",
                    "                var got = await r.PeekMessagesAsync(100, next);",
                    "                if (got.Count == 0) break;",
                    "                foreach (var m in got) { var s = m.State.ToString().ToLowerInvariant(); states[s] = states.GetValueOrDefault(s) + 1; }",
                    "                next = got[^1].SequenceNumber + 1;",
                    "            }",
                    "        }",
                    "        catch (Exception e) { return Failure(e); }",
                    "        var shown = string.Join(\", \", states.Select(kv => $\"{kv.Key} {kv.Value}\"));",
                    "        if (shown == showed || DateTimeOffset.UtcNow >= deadline) return shown;",
                    "        await Task.Delay(100);",
                    "    }",
                    "}",
                    "void Check(string what, string showed, string returned)",
                    "{",
                    "    if (!checking) Console.WriteLine($\"{NOT_CHECKED}: {what}: {returned}\");",
                    "    else if (showed == returned) Console.WriteLine($\"{SAME}: {what}: {returned}\");",
                    "    else { differences.Add(what); Console.WriteLine($\"{DIFFERS}: {what}: {SHOWED} {showed}, {RETURNED} {returned}\"); }",
                    "}",
                    "ServiceBusReceivedMessage? Message(string call, int i)",
                    "{",
                    "    if (calls.TryGetValue(call, out var got) && i < got.Count) return got[i];",
                    "    Check($\"{call}: message {i + 1}\", \"received\", \"not received\");",
                    "    return null;",
                    "}",
                    "long Seq(string call, int i) => Message(call, i)?.SequenceNumber ?? -1;",
                    "string Failure(Exception e) => e is ServiceBusException s ? s.Reason.ToString() switch",
                    "{",
                    "    \"MessagingEntityNotFound\" => \"MessagingEntityNotFound\",",
                    "    \"ServiceBusy\" => \"ServerBusy\",",
                    "    \"ServiceTimeout\" => \"ServiceTimeout\",",
                    "    var reason => reason,",
                    "} : e is InvalidOperationException ? \"InvalidOperation\" : e.GetType().Name;",
                ] {
                    self.line(l);
                }
            }
            Lang::Python => {
                // Line 1 names the encoding, so no text on line 1 or 2 can (PEP 263: a title
                // `coding: utf-7` would have Python read `+AAo-` as a line end).
                self.line("# -*- coding: utf-8 -*-");
                self.say(text!(
                    "code-header",
                    title = title,
                    sdk = "azure-servicebus"
                ));
                self.note("pip install azure-servicebus");
                self.line("import base64");
                self.line("import os");
                self.line("import sys");
                self.line("import time");
                self.line("import uuid");
                self.line("from datetime import datetime, timedelta, timezone");
                self.line("from typing import Dict, List, Optional, Tuple");
                self.line("");
                self.line("from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusClient, ServiceBusMessage, ServiceBusReceivedMessage, ServiceBusReceiveMode, ServiceBusReceiver, ServiceBusSender");
                self.line("from azure.servicebus.management import ServiceBusAdministrationClient, CorrelationRuleFilter, SqlRuleFilter, SqlRuleAction, TrueRuleFilter");
                self.line("");
                self.settings(
                    [
                        "CONNECTION = os.environ.get(\"SERVICEBUS_CONNECTION\", \"<connection string>\")",
                        "ADMIN_CONNECTION = os.environ.get(\"SERVICEBUS_ADMIN_CONNECTION\")",
                        "SPEED = float(os.environ.get(\"SBP_SPEED\", \"1\"))",
                    ],
                    &words,
                    "{name} = {lit}",
                );
                self.line("ERRORS = {\"MessageLockLostError\": \"MessageLockLost\", \"SessionLockLostError\": \"SessionLockLost\", \"MessageNotFoundError\": \"MessageNotFound\", \"MessagingEntityNotFoundError\": \"MessagingEntityNotFound\", \"MessageSizeExceededError\": \"MessageSizeExceeded\", \"ServiceBusQuotaExceededError\": \"QuotaExceeded\", \"ServiceBusServerBusyError\": \"ServerBusy\", \"SessionCannotBeLockedError\": \"SessionCannotBeLocked\", \"OperationTimeoutError\": \"ServiceTimeout\", \"MessageAlreadySettled\": \"InvalidOperation\", \"ValueError\": \"InvalidOperation\", \"ServiceBusError\": \"InvalidOperation\"}");
                self.say(text!("code-retries"));
                self.line(
                    "client = ServiceBusClient.from_connection_string(CONNECTION, retry_total=0)",
                );
                self.line("admin = ServiceBusAdministrationClient.from_connection_string(ADMIN_CONNECTION) if ADMIN_CONNECTION else None");
                self.line("start = datetime.now(timezone.utc)");
                self.line("began = time.monotonic()");
                self.line("receivers: Dict[Tuple[str, str, ServiceBusReceiveMode], ServiceBusReceiver] = {}");
                self.line("senders: Dict[str, ServiceBusSender] = {}");
                self.line("calls: Dict[str, List[ServiceBusReceivedMessage]] = {}");
                self.line("scheduled: Dict[str, int] = {}");
                self.line("differences: List[str] = []");
                self.line("checking = [True]");
                for l in [
                    "",
                    "",
                    "def receiver(name: str, path: str, mode: ServiceBusReceiveMode) -> ServiceBusReceiver:",
                    "    key = (name, path, mode)",
                    "    if key not in receivers:",
                    "        if \"/subscriptions/\" in path:",
                    "            topic, subscription = path.split(\"/subscriptions/\")",
                    "            receivers[key] = client.get_subscription_receiver(topic, subscription, receive_mode=mode)",
                    "        else:",
                    "            receivers[key] = client.get_queue_receiver(path, receive_mode=mode)",
                    "    return receivers[key]",
                    "",
                    "",
                    "def sender(path: str, topic: bool) -> ServiceBusSender:",
                    "    if path not in senders:",
                    "        senders[path] = client.get_topic_sender(path) if topic else client.get_queue_sender(path)",
                    "    return senders[path]",
                    "",
                    "",
                    "def wait_until(ms: int) -> None:",
                    "    delay = began + ms / 1000 / SPEED - time.monotonic()",
                    "    if delay > 0:",
                    "        time.sleep(delay)",
                    "",
                    "",
                    "def receive(r: ServiceBusReceiver, count: int, expected: int) -> List[ServiceBusReceivedMessage]:",
                    "    # Fewer messages than asked may come at a time: ask again until the expected ones are there, or 5 s passed.",
                    "    got: List[ServiceBusReceivedMessage] = []",
                    "    deadline = time.monotonic() + 5",
                    "    while True:",
                    "        wait = max(deadline - time.monotonic(), 0.1) if len(got) < expected else 0.1",
                    "        got += r.receive_messages(max_message_count=count - len(got), max_wait_time=wait)",
                    "        if len(got) >= expected or len(got) >= count or time.monotonic() >= deadline:",
                    "            return got",
                    "",
                    "",
                    "def counted(path: str, showed: str) -> str:",
                    "    # What peek shows of an entity (RCV-11), by State: it locks nothing and changes no DeliveryCount.",
                    "    # Asked again until it is what the playground showed, or 5 s passed (the broker's instants lag the program's by its calls).",
                    "    r = receiver(\"sbp-counts\", path, ServiceBusReceiveMode.PEEK_LOCK)",
                    "    deadline = time.monotonic() + 5",
                    "    while True:",
                    "        states: Dict[str, int] = {\"active\": 0, \"deferred\": 0, \"scheduled\": 0}",
                    "        next_seq = 1",
                    "        try:",
                    "            for _ in range(100):",
                    "                got = r.peek_messages(max_message_count=100, sequence_number=next_seq)",
                    "                if not got:",
                    "                    break",
                    "                for m in got:",
                    "                    state = str(m.state.name).lower()",
                    "                    states[state] = states.get(state, 0) + 1",
                    "                next_seq = (got[-1].sequence_number or 0) + 1",
                    "        except Exception as e:  # noqa: BLE001 - the error is what the broker returned",
                    "            return failure(e)",
                    "        shown = \", \".join(f\"{k} {v}\" for k, v in states.items())",
                    "        if shown == showed or time.monotonic() >= deadline:",
                    "            return shown",
                    "        time.sleep(0.1)",
                    "",
                    "",
                    "def check(what: str, showed: str, returned: str) -> None:",
                    "    if not checking[0]:",
                    "        print(f\"{NOT_CHECKED}: {what}: {returned}\")",
                    "    elif showed == returned:",
                    "        print(f\"{SAME}: {what}: {returned}\")",
                    "    else:",
                    "        differences.append(what)",
                    "        print(f\"{DIFFERS}: {what}: {SHOWED} {showed}, {RETURNED} {returned}\")",
                    "",
                    "",
                    "def message(call: str, i: int) -> Optional[ServiceBusReceivedMessage]:",
                    "    got = calls.get(call, [])",
                    "    if i < len(got):",
                    "        return got[i]",
                    "    check(f\"{call}: message {i + 1}\", \"received\", \"not received\")",
                    "    return None",
                    "",
                    "",
                    "def seq(call: str, i: int) -> int:",
                    "    m = message(call, i)",
                    "    return m.sequence_number or -1 if m else -1",
                    "",
                    "",
                    "def failure(e: Exception) -> str:",
                    "    return ERRORS.get(type(e).__name__, type(e).__name__)",
                    "",
                    "",
                ] {
                    self.line(l);
                }
            }
            Lang::JavaScript => {
                self.say(text!(
                    "code-header",
                    title = title,
                    sdk = "@azure/service-bus"
                ));
                self.note("npm install @azure/service-bus long");
                self.line("const { ServiceBusClient, ServiceBusAdministrationClient } = require(\"@azure/service-bus\");");
                self.line("const Long = require(\"long\");");
                self.line("");
                self.settings(
                    [
                        "const connection = process.env.SERVICEBUS_CONNECTION || \"<connection string>\";",
                        "const adminConnection = process.env.SERVICEBUS_ADMIN_CONNECTION;",
                        "const SPEED = Number(process.env.SBP_SPEED || \"1\");",
                    ],
                    &words,
                    "const {name} = {lit};",
                );
                self.line(
                    "const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));",
                );
                self.say(text!("code-retries"));
                self.line("");
                self.line("async function main() {");
                self.indent = 1;
                for l in [
                    "const client = new ServiceBusClient(connection, { retryOptions: { maxRetries: 0 } }); // (no retries: see above)",
                    "const admin = adminConnection ? new ServiceBusAdministrationClient(adminConnection) : undefined;",
                    "const start = Date.now();",
                    "const receivers = new Map();",
                    "const senders = new Map();",
                    "const calls = new Map();",
                    "const scheduled = new Map();",
                    "const differences = [];",
                    "let checking = true;",
                    "const receiver = (name, path, mode) => {",
                    "    const key = `${name}|${path}|${mode}`;",
                    "    if (!receivers.has(key)) {",
                    "        const [topic, subscription] = path.split(\"/subscriptions/\");",
                    "        // No automatic lock renewal (this SDK's default): the playground renews a lock only when a step says so.",
                    "        const options = { receiveMode: mode, maxAutoLockRenewalDurationInMs: 0 };",
                    "        receivers.set(key, subscription",
                    "            ? client.createReceiver(topic, subscription, options)",
                    "            : client.createReceiver(path, options));",
                    "    }",
                    "    return receivers.get(key);",
                    "};",
                    "const sender = (path) => {",
                    "    if (!senders.has(path)) senders.set(path, client.createSender(path));",
                    "    return senders.get(path);",
                    "};",
                    "const waitUntil = async (ms) => {",
                    "    const delay = start + ms / SPEED - Date.now();",
                    "    if (delay > 0) await sleep(delay);",
                    "};",
                    "// Fewer messages than asked may come at a time: ask again until the expected ones are there, or 5 s passed.",
                    "const receive = async (r, count, expected) => {",
                    "    const got = [];",
                    "    const deadline = Date.now() + 5000;",
                    "    for (;;) {",
                    "        const wait = got.length < expected ? Math.max(deadline - Date.now(), 100) : 100;",
                    "        got.push(...(await r.receiveMessages(count - got.length, { maxWaitTimeInMs: wait })));",
                    "        if (got.length >= expected || got.length >= count || Date.now() >= deadline) return got;",
                    "    }",
                    "};",
                    "// What peek shows of an entity (RCV-11), by State: it locks nothing and changes no DeliveryCount.",
                    "// Asked again until it is what the playground showed, or 5 s passed (the broker's instants lag the program's by its calls).",
                    "// Through a client of its own: this SDK continues a peek without a SequenceNumber where the last one on the entity ended.",
                    "// (A client connects at its first call, so one that is never used costs nothing.)",
                    "const countsClient = new ServiceBusClient(connection, { retryOptions: { maxRetries: 0 } });",
                    "const counted = async (path, showed) => {",
                    "    const [topic, subscription] = path.split(\"/subscriptions/\");",
                    "    const r = subscription ? countsClient.createReceiver(topic, subscription) : countsClient.createReceiver(path);",
                    "    const deadline = Date.now() + 5000;",
                    "    try {",
                    "        for (;;) {",
                    "            const states = { active: 0, deferred: 0, scheduled: 0 };",
                    "            let next = Long.fromNumber(1);",
                    "            for (let i = 0; i < 100; i++) {",
                    "                const got = await r.peekMessages(100, { fromSequenceNumber: next });",
                    "                if (got.length === 0) break;",
                    "                for (const m of got) states[m.state] = (states[m.state] || 0) + 1;",
                    "                next = (got[got.length - 1].sequenceNumber || next).add(1);",
                    "            }",
                    "            const shown = Object.entries(states).map(([k, v]) => `${k} ${v}`).join(\", \");",
                    "            if (shown === showed || Date.now() >= deadline) return shown;",
                    "            await sleep(100);",
                    "        }",
                    "    } catch (e) {",
                    "        return failure(e);",
                    "    } finally {",
                    "        await r.close();",
                    "    }",
                    "};",
                    "const check = (what, showed, returned) => {",
                    "    if (!checking) console.log(`${NOT_CHECKED}: ${what}: ${returned}`);",
                    "    else if (showed === returned) console.log(`${SAME}: ${what}: ${returned}`);",
                    "    else {",
                    "        differences.push(what);",
                    "        console.log(`${DIFFERS}: ${what}: ${SHOWED} ${showed}, ${RETURNED} ${returned}`);",
                    "    }",
                    "};",
                    "const message = (call, i) => {",
                    "    const got = calls.get(call) || [];",
                    "    if (i < got.length) return got[i];",
                    "    check(`${call}: message ${i + 1}`, \"received\", \"not received\");",
                    "    return undefined;",
                    "};",
                    "const seq = (call, i) => {",
                    "    const m = message(call, i);",
                    "    return m && m.sequenceNumber ? m.sequenceNumber : Long.fromNumber(-1);",
                    "};",
                    "// The playground's names for this SDK's error codes (it names the service's amqp:not-allowed GeneralError).",
                    "const failure = (e) => ({ ServiceBusy: \"ServerBusy\", GeneralError: \"InvalidOperation\" })[e.code] || e.code || (e instanceof TypeError ? \"InvalidOperation\" : e.name);",
                ] {
                    self.line(l);
                }
            }
        }
        if self.actors {
            self.actor_helpers();
        }
        if !scenario.description.is_empty() {
            self.line("");
            self.note(&scenario.description);
        }
        if scenario.namespace.tier == sbp_engine::Tier::Emulator {
            self.line("");
            self.say(text!("code-emulator"));
        }
        self.say(text!("code-checks"));
        self.line("");
    }

    /// The administration calls that create the scenario's entities with their settings.
    fn entities(&mut self, ns: &Namespace, scenario: &Scenario) {
        self.say(text!("code-entities"));
        if scenario.entities.is_empty() {
            return;
        }
        self.admin_open();
        for def in &scenario.entities {
            let path = def
                .queue
                .clone()
                .or_else(|| def.topic.clone())
                .or_else(|| def.subscription.clone())
                .unwrap_or_default();
            let Some(e) = ns.entity(&path) else { continue };
            let settings = e.settings.clone();
            match e.kind {
                EntityKind::Queue => self.create("Queue", &path, None, &settings, None),
                EntityKind::Topic => self.create("Topic", &path, None, &settings, None),
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
        }
        self.admin_close(None);
    }

    /// The connection string, the administration connection and the speed (each `lines` entry
    /// after its comment), then the words the checks print, each declared by `constant`
    /// (`{name}` and `{lit}` filled in).
    fn settings(&mut self, lines: [&str; 3], words: &[(&str, Text)], constant: &str) {
        self.say(text!("code-connection"));
        self.note(EMULATOR_CONNECTION);
        for (line, comment) in lines.into_iter().zip(["", "code-admin", "code-speed"]) {
            if !comment.is_empty() {
                self.say(text!(comment));
            }
            self.line(line);
        }
        for (name, t) in words {
            let lit = self.lit(&t.to_string());
            self.line(&constant.replace("{name}", name).replace("{lit}", &lit));
        }
    }

    /// The playground's producers and consumers as loops (Python threads, JavaScript async
    /// loops, C# tasks), bounded: a producer stops at its step, its max_messages or 10,000
    /// messages, the consumers at their step or the program's end.
    fn actor_helpers(&mut self) {
        self.say(text!("code-actors"));
        let lines: &[&str] = match self.lang {
            Lang::CSharp => &[
                "var stops = new Dictionary<string, CancellationTokenSource>();",
                "var actors = new List<Task>();",
                "var failures = new Dictionary<string, int>();",
                "var rng = new Random(1);",
                "// A loop's operation fails as it may in the playground too (a lapsed lock, a deleted entity): counted, said once, and the loop goes on.",
                "void Failed(string name, Exception e)",
                "{",
                "    lock (failures)",
                "    {",
                "        failures[name] = failures.GetValueOrDefault(name) + 1;",
                "        if (failures[name] == 1) Console.WriteLine($\"{LOOP_FAILED} {name}: {Failure(e)}\");",
                "    }",
                "}",
                "double Draw() { lock (rng) return rng.NextDouble(); }",
                "CancellationTokenSource Stop(string name)",
                "{",
                "    lock (stops)",
                "    {",
                "        if (!stops.TryGetValue(name, out var s)) stops[name] = s = new CancellationTokenSource();",
                "        return s;",
                "    }",
                "}",
                "async Task Pause(double ms, CancellationToken stop)",
                "{",
                "    try { await Task.Delay(TimeSpan.FromMilliseconds(Math.Max(ms, 0)), stop); } catch (OperationCanceledException) { }",
                "}",
                "void StartProducer(string name, string to, double rate, int limit, string prefix, long ttlMs, (long From, long Duration, double Factor) spike)",
                "{",
                "    var stop = Stop(name).Token;",
                "    actors.Add(Task.Run(async () =>",
                "    {",
                "        await using var s = client.CreateSender(to);",
                "        var due = DateTimeOffset.UtcNow;",
                "        for (var n = 1; n <= limit && !stop.IsCancellationRequested; n++)",
                "        {",
                "            var message = new ServiceBusMessage(\"\") { MessageId = $\"{prefix}{n}\" };",
                "            if (ttlMs > 0) message.TimeToLive = TimeSpan.FromMilliseconds(ttlMs);",
                "            try { await s.SendMessageAsync(message); } catch (Exception e) { Failed(name, e); }",
                "            var at = (DateTimeOffset.UtcNow - start).TotalMilliseconds * SPEED;",
                "            var factor = spike.From <= at && at < spike.From + spike.Duration ? spike.Factor : 1;",
                "            due = due.AddMilliseconds(1000 / (rate * factor * SPEED));",
                "            await Pause((due - DateTimeOffset.UtcNow).TotalMilliseconds, stop);",
                "        }",
                "    }));",
                "}",
                "void StartConsumers(string name, string path, int instances, bool peekLock, Func<double> work, double crash, double abandon, double deadLetter, double restartMs)",
                "{",
                "    var stop = Stop(name).Token;",
                "    var options = new ServiceBusReceiverOptions { ReceiveMode = peekLock ? ServiceBusReceiveMode.PeekLock : ServiceBusReceiveMode.ReceiveAndDelete };",
                "    var parts = path.Split(\"/subscriptions/\");",
                "    for (var i = 0; i < instances; i++)",
                "    {",
                "        actors.Add(Task.Run(async () =>",
                "        {",
                "            await using var r = parts.Length == 2 ? client.CreateReceiver(parts[0], parts[1], options) : client.CreateReceiver(path, options);",
                "            while (!stop.IsCancellationRequested)",
                "            {",
                "                IReadOnlyList<ServiceBusReceivedMessage> got;",
                "                try { got = await r.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(500)); }",
                "                catch (Exception e)",
                "                {",
                "                    Failed(name, e);",
                "                    if (Failure(e) == \"MessagingEntityNotFound\") break; // its entity is gone: this consumer stops",
                "                    await Pause(1000, stop);",
                "                    continue;",
                "                }",
                "                foreach (var m in got)",
                "                {",
                "                    await Pause(work() / SPEED, stop);",
                "                    if (!peekLock || stop.IsCancellationRequested) continue;",
                "                    var draw = Draw();",
                "                    try",
                "                    {",
                "                        if (draw < crash) await Pause(restartMs / SPEED, stop); // crashed: its lock lapses",
                "                        else if (draw < crash + abandon) await r.AbandonMessageAsync(m);",
                "                        else if (draw < crash + abandon + deadLetter) await r.DeadLetterMessageAsync(m, \"ProcessingFailed\", \"\");",
                "                        else await r.CompleteMessageAsync(m);",
                "                    }",
                "                    catch (Exception e) { Failed(name, e); }",
                "                }",
                "            }",
                "        }));",
                "    }",
                "}",
                "void StopActors(string name) => Stop(name).Cancel();",
            ],
            Lang::Python => &[
                "import random",
                "import threading",
                "from typing import Callable",
                "stops: Dict[str, threading.Event] = {}",
                "actors: List[threading.Thread] = []",
                "failures: Dict[str, int] = {}",
                "rng = random.Random(1)",
                "",
                "",
                "def failed(name: str, e: Exception) -> None:",
                "    # A loop's operation fails as it may in the playground too (a lapsed lock, a deleted entity): counted, said once, and the loop goes on.",
                "    failures[name] = failures.get(name, 0) + 1",
                "    if failures[name] == 1:",
                "        print(f\"{LOOP_FAILED} {name}: {failure(e)}\")",
                "",
                "",
                "def start_producer(name: str, to: str, topic: bool, rate: float, limit: int, prefix: str, ttl_ms: int, spike: Tuple[int, int, float]) -> None:",
                "    stop = stops.setdefault(name, threading.Event())",
                "",
                "    def run() -> None:",
                "        s = client.get_topic_sender(to) if topic else client.get_queue_sender(to)",
                "        try:",
                "            s.__enter__()",
                "        except Exception as e:",
                "            failed(name, e)",
                "            return  # its entity is not there: this producer stops",
                "        with s:",
                "            due = time.monotonic()",
                "            for n in range(1, limit + 1):",
                "                if stop.is_set():",
                "                    break",
                "                ttl = timedelta(milliseconds=ttl_ms) if ttl_ms else None",
                "                try:",
                "                    s.send_messages(ServiceBusMessage(\"\", message_id=f\"{prefix}{n}\", time_to_live=ttl))",
                "                except Exception as e:",
                "                    failed(name, e)",
                "                at = (time.monotonic() - began) * 1000 * SPEED",
                "                factor = spike[2] if spike[0] <= at < spike[0] + spike[1] else 1.0",
                "                due += 1 / (rate * factor * SPEED)",
                "                stop.wait(max(due - time.monotonic(), 0))",
                "",
                "    actors.append(threading.Thread(target=run, daemon=True))",
                "    actors[-1].start()",
                "",
                "",
                "def start_consumers(name: str, path: str, instances: int, peek_lock: bool, work: Callable[[], float], crash: float, abandon: float, dead_letter: float, restart_s: float) -> None:",
                "    stop = stops.setdefault(name, threading.Event())",
                "    mode = ServiceBusReceiveMode.PEEK_LOCK if peek_lock else ServiceBusReceiveMode.RECEIVE_AND_DELETE",
                "",
                "    def run() -> None:",
                "        topic, _, subscription = path.partition(\"/subscriptions/\")",
                "        r = client.get_subscription_receiver(topic, subscription, receive_mode=mode) if subscription else client.get_queue_receiver(path, receive_mode=mode)",
                "        try:",
                "            r.__enter__()",
                "        except Exception as e:",
                "            failed(name, e)",
                "            return  # its entity is not there: this consumer stops",
                "        with r:",
                "            while not stop.is_set():",
                "                try:",
                "                    got = r.receive_messages(max_message_count=1, max_wait_time=0.5)",
                "                except Exception as e:",
                "                    failed(name, e)",
                "                    if failure(e) == \"MessagingEntityNotFound\":",
                "                        return  # its entity is gone: this consumer stops",
                "                    stop.wait(1)",
                "                    continue",
                "                for m in got:",
                "                    stop.wait(work() / SPEED)",
                "                    if not peek_lock or stop.is_set():",
                "                        continue",
                "                    draw = rng.random()",
                "                    try:",
                "                        if draw < crash:",
                "                            stop.wait(restart_s / SPEED)  # crashed: its lock lapses",
                "                        elif draw < crash + abandon:",
                "                            r.abandon_message(m)",
                "                        elif draw < crash + abandon + dead_letter:",
                "                            r.dead_letter_message(m, reason=\"ProcessingFailed\", error_description=\"\")",
                "                        else:",
                "                            r.complete_message(m)",
                "                    except Exception as e:",
                "                        failed(name, e)",
                "",
                "    for _ in range(instances):",
                "        actors.append(threading.Thread(target=run, daemon=True))",
                "        actors[-1].start()",
                "",
                "",
                "def stop_actors(name: str) -> None:",
                "    stops.setdefault(name, threading.Event()).set()",
                "",
                "",
            ],
            Lang::JavaScript => &[
                "const stops = new Map();",
                "const actors = [];",
                "const failures = new Map();",
                "// A loop's operation fails as it may in the playground too (a lapsed lock, a deleted entity): counted, said once, and the loop goes on.",
                "const failed = (name, e) => {",
                "    failures.set(name, (failures.get(name) || 0) + 1);",
                "    if (failures.get(name) === 1) console.log(`${LOOP_FAILED} ${name}: ${failure(e)}`);",
                "};",
                "let seed = 1;",
                "const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;",
                "const startProducer = (name, to, rate, limit, prefix, ttlMs, spike) => {",
                "    const stop = stops.get(name) || { stopped: false };",
                "    stops.set(name, stop);",
                "    actors.push((async () => {",
                "        const s = client.createSender(to);",
                "        let due = Date.now();",
                "        for (let n = 1; n <= limit && !stop.stopped; n++) {",
                "            await s.sendMessages({ body: \"\", messageId: `${prefix}${n}`, ...(ttlMs ? { timeToLive: ttlMs } : {}) }).catch((e) => failed(name, e));",
                "            const at = (Date.now() - start) * SPEED;",
                "            const factor = spike[0] <= at && at < spike[0] + spike[1] ? spike[2] : 1;",
                "            due += 1000 / (rate * factor * SPEED);",
                "            await sleep(Math.max(due - Date.now(), 0));",
                "        }",
                "        await s.close();",
                "    })());",
                "};",
                "const startConsumers = (name, path, instances, peekLock, work, crash, abandon, deadLetter, restartMs) => {",
                "    const stop = stops.get(name) || { stopped: false };",
                "    stops.set(name, stop);",
                "    const [topic, subscription] = path.split(\"/subscriptions/\");",
                "    const mode = peekLock ? \"peekLock\" : \"receiveAndDelete\";",
                "    for (let i = 0; i < instances; i++) {",
                "        actors.push((async () => {",
                "            const r = subscription",
                "                ? client.createReceiver(topic, subscription, { receiveMode: mode, maxAutoLockRenewalDurationInMs: 0 })",
                "                : client.createReceiver(path, { receiveMode: mode, maxAutoLockRenewalDurationInMs: 0 });",
                "            while (!stop.stopped) {",
                "                let got = [];",
                "                try {",
                "                    got = await r.receiveMessages(1, { maxWaitTimeInMs: 500 });",
                "                } catch (e) {",
                "                    failed(name, e);",
                "                    if (failure(e) === \"MessagingEntityNotFound\") break; // its entity is gone: this consumer stops",
                "                    await sleep(1000);",
                "                }",
                "                for (const m of got) {",
                "                    await sleep(work() / SPEED);",
                "                    if (!peekLock || stop.stopped) continue;",
                "                    const draw = random();",
                "                    try {",
                "                        if (draw < crash) await sleep(restartMs / SPEED); // crashed: its lock lapses",
                "                        else if (draw < crash + abandon) await r.abandonMessage(m);",
                "                        else if (draw < crash + abandon + deadLetter) await r.deadLetterMessage(m, { deadLetterReason: \"ProcessingFailed\", deadLetterErrorDescription: \"\" });",
                "                        else await r.completeMessage(m);",
                "                    } catch (e) {",
                "                        failed(name, e);",
                "                    }",
                "                }",
                "            }",
                "            await r.close();",
                "        })());",
                "    }",
                "};",
                "const stopActors = (name) => {",
                "    const stop = stops.get(name) || { stopped: false };",
                "    stop.stopped = true;",
                "    stops.set(name, stop);",
                "};",
            ],
        };
        for l in lines {
            self.line(l);
        }
    }

    /// A consumer's processing time, as a function the loop calls (seconds in Python,
    /// milliseconds in JavaScript).
    fn work(&self, p: Option<&ProcessingDef>) -> String {
        let py = self.lang == Lang::Python;
        let unit = |ms: i64| {
            if py {
                sbp_engine::time::format_decimal(ms as f64 / 1000.0, 3)
            } else {
                ms.to_string()
            }
        };
        // C#'s and JavaScript's share their form but for the random draw and the logarithm.
        let (draw, log) = match self.lang {
            Lang::CSharp => ("Draw()", "Math.Log"),
            _ => ("random()", "Math.log"),
        };
        match (p, py) {
            (None, true) => "lambda: 0.0".into(),
            (None, false) => "() => 0".into(),
            (Some(ProcessingDef::Fixed(d)), true) => format!("lambda: {}", unit(d.ms())),
            (Some(ProcessingDef::Fixed(d)), false) => format!("() => {}", unit(d.ms())),
            (Some(ProcessingDef::Uniform { min, max }), true) => {
                format!(
                    "lambda: rng.uniform({}, {})",
                    unit(min.ms()),
                    unit(max.ms())
                )
            }
            (Some(ProcessingDef::Uniform { min, max }), false) => format!(
                "() => {} + {draw} * {}",
                unit(min.ms()),
                unit(max.ms() - min.ms())
            ),
            (Some(ProcessingDef::Exponential { mean }), true) => {
                format!("lambda: rng.expovariate(1 / {})", unit(mean.ms().max(1)))
            }
            (Some(ProcessingDef::Exponential { mean }), false) => {
                format!("() => -{log}(1 - {draw}) * {}", unit(mean.ms()))
            }
        }
    }

    /// Opens a block that runs only with an administration client (`SERVICEBUS_ADMIN_CONNECTION`).
    fn admin_open(&mut self) {
        let open = match self.lang {
            Lang::CSharp => "if (admin is not null)\n{",
            Lang::Python => "if admin:",
            Lang::JavaScript => "if (admin) {",
        };
        for l in open.lines() {
            self.line(l);
        }
        self.indent += 1;
    }

    /// Closes [`Code::admin_open`]'s block. Without an administration client: the entities are
    /// taken as existing (`why` None), or the checks stop (a step the program cannot take).
    fn admin_close(&mut self, why: Option<Text>) {
        self.indent -= 1;
        let otherwise = match (&why, self.lang) {
            (None, Lang::CSharp) => "Console.WriteLine(EXISTING);".to_string(),
            (None, Lang::Python) => "print(EXISTING)".to_string(),
            (None, Lang::JavaScript) => "console.log(EXISTING);".to_string(),
            (Some(why), _) => self.stop_checking_line(why),
        };
        match self.lang {
            Lang::CSharp => {
                self.line("}");
                self.line(&format!("else {otherwise}"));
            }
            Lang::Python => {
                self.line("else:");
                self.line(&format!("    {otherwise}"));
            }
            Lang::JavaScript => self.line(&format!("}} else {otherwise}")),
        }
    }

    /// The statement that stops the checks (the run goes where the playground's did not), saying why.
    fn stop_checking_line(&self, why: &Text) -> String {
        let why = self.lit(&text!("code-check-stop", why = why.clone()).to_string());
        match self.lang {
            Lang::CSharp => format!("{{ checking = false; Console.WriteLine({why}); }}"),
            Lang::Python => format!("checking[0] = False; print({why})"),
            Lang::JavaScript => format!("{{ checking = false; console.log({why}); }}"),
        }
    }

    /// The checks stop here, for a step the program does not take at all.
    fn stop_checking(&mut self, why: Text) {
        let line = self.stop_checking_line(&why);
        self.line(&line);
        self.unchecked = true;
    }

    /// One entity's settings as the language names them (durations written by `duration`).
    /// At `creation`: what differs from the service's defaults, RequiresSession and
    /// RequiresDuplicateDetection included. For an update: every setting an update may change,
    /// with its value (off and MaxValue too), so that it writes only what it changes; the two
    /// fixed at creation are never written.
    fn options(&self, kind: &str, s: &EntitySettings, creation: bool) -> Vec<(String, String)> {
        let mut o: Vec<(&str, String)> = Vec::new();
        let d = |ms: Duration| self.duration(ms);
        let none = match self.lang {
            Lang::Python => "None",
            Lang::CSharp => "null",
            Lang::JavaScript => "undefined",
        };
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
                    self.boolean(s.dead_lettering_on_message_expiration),
                ));
            }
            if creation && s.requires_session {
                o.push(("RequiresSession", self.boolean(true)));
            }
            for (key, target) in [
                ("ForwardTo", &s.forward_to),
                (
                    "ForwardDeadLetteredMessagesTo",
                    &s.forward_dead_lettered_messages_to,
                ),
            ] {
                match target {
                    Some(f) => o.push((key, self.lit(f))),
                    None if !creation => o.push((key, none.to_string())),
                    None => {}
                }
            }
        }
        if !creation || s.auto_delete_on_idle < MAX_VALUE {
            o.push(("AutoDeleteOnIdle", d(s.auto_delete_on_idle)));
        }
        if kind != "Subscription" && s.requires_duplicate_detection {
            if creation {
                o.push(("RequiresDuplicateDetection", self.boolean(true)));
            }
            o.push((
                "DuplicateDetectionHistoryTimeWindow",
                d(s.duplicate_detection_history_time_window),
            ));
        }
        o.into_iter().map(|(k, v)| (self.member(k), v)).collect()
    }

    /// A property's name in the language: `LockDuration`, `lock_duration`, `lockDuration`.
    fn member(&self, pascal: &str) -> String {
        match self.lang {
            Lang::CSharp => pascal.to_string(),
            Lang::Python | Lang::JavaScript => {
                let mut out = String::new();
                for (i, c) in pascal.chars().enumerate() {
                    if c.is_ascii_uppercase() && i > 0 && self.lang == Lang::Python {
                        out.push('_');
                    }
                    if i == 0 || self.lang == Lang::Python {
                        out.push(c.to_ascii_lowercase());
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }

    fn boolean(&self, b: bool) -> String {
        match (self.lang, b) {
            (Lang::Python, true) => "True".into(),
            (Lang::Python, false) => "False".into(),
            (_, b) => b.to_string(),
        }
    }

    /// A duration as the language's administration client takes it.
    fn duration(&self, ms: Duration) -> String {
        match self.lang {
            Lang::CSharp => format!("TimeSpan.FromMilliseconds({ms})"),
            Lang::Python => format!("timedelta(milliseconds={ms})"),
            Lang::JavaScript => self.lit(&crate::emulator::format_iso(ms)),
        }
    }

    fn create(
        &mut self,
        kind: &str,
        name: &str,
        topic: Option<&str>,
        s: &EntitySettings,
        rule: Option<(&str, &SubscriptionRule)>,
    ) {
        let options = self.options(kind, s, true);
        let target = match topic {
            Some(t) => format!("{}, {}", self.lit(t), self.lit(name)),
            None => self.lit(name),
        };
        match self.lang {
            Lang::CSharp => {
                let fields: Vec<String> =
                    options.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                let opts = format!(
                    "new Create{kind}Options({target}) {{ {} }}",
                    fields.join(", ")
                );
                match rule {
                    Some((rule_name, r)) => {
                        let action = self
                            .rule_action(r)
                            .map(|a| format!(" {{ Action = {a} }}"))
                            .unwrap_or_default();
                        self.line(&format!(
                            "await admin.CreateSubscriptionAsync({opts}, new CreateRuleOptions({}, {}){action});",
                            self.lit(rule_name),
                            self.filter(r)
                        ))
                    }
                    None => self.line(&format!("await admin.Create{kind}Async({opts});")),
                }
            }
            Lang::Python => {
                let args: Vec<String> = std::iter::once(target)
                    .chain(options.iter().map(|(k, v)| format!("{k}={v}")))
                    .collect();
                let snake = kind.to_ascii_lowercase();
                self.line(&format!("admin.create_{snake}({})", args.join(", ")));
                if let (Some((rule_name, r)), Some(t)) = (rule, topic) {
                    self.remove_rule(t, name, sbp_engine::entity::DEFAULT_RULE);
                    self.add_rule(t, name, rule_name, Some(r));
                }
            }
            Lang::JavaScript => {
                let fields: Vec<String> =
                    options.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                self.line(&format!(
                    "await admin.create{kind}({target}, {{ {} }});",
                    fields.join(", ")
                ));
                if let (Some((rule_name, r)), Some(t)) = (rule, topic) {
                    self.remove_rule(t, name, sbp_engine::entity::DEFAULT_RULE);
                    self.add_rule(t, name, rule_name, Some(r));
                }
            }
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
            return self.say(text!("code-rule-unread", name = rule_name));
        };
        let (t, s, n, f) = (
            self.lit(topic),
            self.lit(name),
            self.lit(rule_name),
            self.filter(r),
        );
        let action = self.rule_action(r);
        let line = match self.lang {
            Lang::CSharp => format!(
                "await admin.CreateRuleAsync({t}, {s}, new CreateRuleOptions({n}, {f}){});",
                action
                    .map(|a| format!(" {{ Action = {a} }}"))
                    .unwrap_or_default()
            ),
            Lang::Python => format!(
                "admin.create_rule({t}, {s}, {n}, filter={f}{})",
                action.map(|a| format!(", action={a}")).unwrap_or_default()
            ),
            Lang::JavaScript => format!(
                "await admin.createRule({t}, {s}, {n}, {f}{});",
                action.map(|a| format!(", {a}")).unwrap_or_default()
            ),
        };
        self.line(&line);
    }

    /// FLT-01: a subscription's rule removed by its name.
    fn remove_rule(&mut self, topic: &str, name: &str, rule_name: &str) {
        let (t, s, n) = (self.lit(topic), self.lit(name), self.lit(rule_name));
        let line = match self.lang {
            Lang::CSharp => format!("await admin.DeleteRuleAsync({t}, {s}, {n});"),
            Lang::Python => format!("admin.delete_rule({t}, {s}, {n})"),
            Lang::JavaScript => format!("await admin.deleteRule({t}, {s}, {n});"),
        };
        self.line(&line);
    }

    /// A SQL rule's action, if it has one.
    fn rule_action(&self, rule: &SubscriptionRule) -> Option<String> {
        let text = match rule {
            SubscriptionRule::Sql(sql) => sql.action.as_deref()?,
            other => other.correlation()?.action?,
        };
        let a = self.lit(text);
        Some(match self.lang {
            Lang::CSharp => format!("new SqlRuleAction({a})"),
            Lang::Python => format!("SqlRuleAction({a})"),
            Lang::JavaScript => format!("{{ sqlExpression: {a} }}"),
        })
    }

    /// A subscription's filter.
    fn filter(&self, rule: &SubscriptionRule) -> String {
        if let SubscriptionRule::Sql(sql) = rule {
            let f = self.lit(&sql.filter);
            return match self.lang {
                Lang::CSharp => format!("new SqlRuleFilter({f})"),
                Lang::Python => format!("SqlRuleFilter({f})"),
                Lang::JavaScript => format!("{{ sqlExpression: {f} }}"),
            };
        }
        let Some(c) = rule.correlation() else {
            // TOP-01: a rule that takes every message.
            return match self.lang {
                Lang::CSharp => "new TrueRuleFilter()".into(),
                Lang::Python => "TrueRuleFilter()".into(),
                Lang::JavaScript => "{ sqlExpression: \"1=1\" }".into(),
            };
        };
        let application_properties = c.application;
        // Python's filter names Subject `label`.
        let known = |k: &str| {
            ["Subject", "CorrelationId", "MessageId"].contains(&k)
                || sbp_engine::message::SYSTEM_PROPERTIES.contains(&k)
        };
        let fields: Vec<(String, String)> = c
            .system
            .iter()
            .filter(|(k, _)| known(k))
            .map(|(k, v)| match (self.lang, *k) {
                (Lang::Python, "Subject") => ("label".to_string(), self.lit(v)),
                _ => (self.member(k), self.lit(v)),
            })
            .collect();
        let props = self.dictionary(application_properties);
        match self.lang {
            Lang::CSharp => {
                let mut f: Vec<String> = fields.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                f.extend(self.csharp_properties(application_properties));
                format!("new CorrelationRuleFilter {{ {} }}", f.join(", "))
            }
            Lang::Python => {
                let mut f: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
                if !application_properties.is_empty() {
                    f.push(format!("properties={props}"));
                }
                format!("CorrelationRuleFilter({})", f.join(", "))
            }
            Lang::JavaScript => {
                let mut f: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                if !application_properties.is_empty() {
                    f.push(format!("applicationProperties: {props}"));
                }
                format!("{{ {} }}", f.join(", "))
            }
        }
    }

    /// Application properties as a Python dict or a JavaScript object, each value typed.
    fn dictionary(&self, map: &std::collections::BTreeMap<String, PropertyValue>) -> String {
        let pairs: Vec<String> = map
            .iter()
            .map(|(k, v)| format!("{}: {}", self.lit(k), self.value(v)))
            .collect();
        format!("{{ {} }}", pairs.join(", "))
    }

    /// C#'s one `ApplicationProperties = { [k] = v, ... }` initializer (a second one would not
    /// compile: CS1912), or none.
    fn csharp_properties(
        &self,
        map: &std::collections::BTreeMap<String, PropertyValue>,
    ) -> Option<String> {
        let pairs: Vec<String> = map
            .iter()
            .map(|(k, v)| format!("[{}] = {}", self.lit(k), self.value(v)))
            .collect();
        (!pairs.is_empty()).then(|| format!("ApplicationProperties = {{ {} }}", pairs.join(", ")))
    }

    /// An application property's value as the language writes one of its type: C# says each
    /// type (`10`, `10L`, `1.5`, `DateTimeOffset.Parse(...)`, `Guid.Parse(...)`); Python and
    /// JavaScript have one integer type, which their SDKs send as an AMQP int when it fits 32
    /// bits (Python's pyamqp `_encode.encode_unknown`; JavaScript's rhea), so a long is written
    /// as its number there, and a uuid as its text in JavaScript.
    fn value(&self, v: &PropertyValue) -> String {
        let utc = |ms: i64| sbp_engine::utc::format_utc(0, ms);
        match (self.lang, v) {
            (_, PropertyValue::String(s)) => self.lit(s),
            (_, PropertyValue::Int(n)) => n.to_string(),
            (Lang::CSharp, PropertyValue::Long(n)) => format!("{n}L"),
            (_, PropertyValue::Long(n)) => n.to_string(),
            (lang, PropertyValue::Double(d)) if !d.is_finite() => match (lang, d.is_nan()) {
                (Lang::CSharp, true) => "double.NaN".into(),
                (Lang::CSharp, false) if *d > 0.0 => "double.PositiveInfinity".into(),
                (Lang::CSharp, false) => "double.NegativeInfinity".into(),
                (Lang::Python, true) => "float(\"nan\")".into(),
                (Lang::Python, false) if *d > 0.0 => "float(\"inf\")".into(),
                (Lang::Python, false) => "float(\"-inf\")".into(),
                (Lang::JavaScript, true) => "NaN".into(),
                (Lang::JavaScript, false) if *d > 0.0 => "Infinity".into(),
                (Lang::JavaScript, false) => "-Infinity".into(),
            },
            (_, PropertyValue::Double(d)) => {
                let text = sbp_engine::time::format_decimal(*d, 6);
                match (self.lang, text.contains('.')) {
                    (Lang::JavaScript, _) | (_, true) => text,
                    _ => format!("{text}.0"),
                }
            }
            (Lang::Python, PropertyValue::Bool(b)) => self.boolean(*b),
            (_, PropertyValue::Bool(b)) => b.to_string(),
            (Lang::Python, PropertyValue::Null) => "None".into(),
            (_, PropertyValue::Null) => "null".into(),
            (Lang::CSharp, PropertyValue::Timestamp(ms)) => {
                format!("DateTimeOffset.Parse({})", self.lit(&utc(*ms)))
            }
            (Lang::Python, PropertyValue::Timestamp(ms)) => format!(
                "datetime.fromisoformat({})",
                self.lit(&utc(*ms).replace('Z', "+00:00"))
            ),
            (Lang::JavaScript, PropertyValue::Timestamp(ms)) => {
                format!("new Date({})", self.lit(&utc(*ms)))
            }
            (Lang::CSharp, PropertyValue::Uuid(_)) => {
                format!("Guid.Parse({})", self.lit(&v.to_string()))
            }
            (Lang::Python, PropertyValue::Uuid(_)) => {
                format!("uuid.UUID({})", self.lit(&v.to_string()))
            }
            (Lang::JavaScript, PropertyValue::Uuid(_)) => self.lit(&v.to_string()),
        }
    }

    /// On to the scenario's instant `until` (measured from the program's start, so the time
    /// the calls take does not add up).
    fn wait(&mut self, until: i64) {
        self.line("");
        let on = code_text::comment(&text!("code-wait", at = format_instant(until)).to_string());
        match self.lang {
            Lang::CSharp => self.line(&format!("await WaitUntil({until}); // {on}")),
            Lang::Python => self.line(&format!("wait_until({until})  # {on}")),
            Lang::JavaScript => self.line(&format!("await waitUntil({until}); // {on}")),
        }
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
            self.say(text!("code-showed", what = line.as_str()));
        }
        if new.len() > MAX_NOTES {
            self.say(text!("code-more", count = new.len() - MAX_NOTES));
        }
        total
    }

    fn mode(&self, m: ModeDef) -> &'static str {
        match (self.lang, m) {
            (Lang::CSharp, ModeDef::PeekLock) => "ServiceBusReceiveMode.PeekLock",
            (Lang::CSharp, ModeDef::ReceiveAndDelete) => "ServiceBusReceiveMode.ReceiveAndDelete",
            (Lang::Python, ModeDef::PeekLock) => "ServiceBusReceiveMode.PEEK_LOCK",
            (Lang::Python, ModeDef::ReceiveAndDelete) => "ServiceBusReceiveMode.RECEIVE_AND_DELETE",
            (Lang::JavaScript, ModeDef::PeekLock) => "\"peekLock\"",
            (Lang::JavaScript, ModeDef::ReceiveAndDelete) => "\"receiveAndDelete\"",
        }
    }

    /// `Receiver("r1", "orders", mode)` in the language.
    fn receiver(&self, name: &str, path: &str, mode: ModeDef) -> String {
        let call = if self.lang == Lang::CSharp {
            "Receiver"
        } else {
            "receiver"
        };
        format!(
            "{call}({}, {}, {})",
            self.lit(name),
            self.lit(path),
            self.mode(mode)
        )
    }

    fn step(
        &mut self,
        sim: &Simulation,
        step: &Step,
        replies: &Result<Vec<Reply>, sbp_engine::BrokerError>,
    ) {
        self.line("");
        if let Some(note) = &step.note {
            self.note(note);
        }
        let Some(action) = &step.action else {
            return;
        };
        let what = format!("{}: {}", format_instant(step.at.ms()), action.text());
        self.note(&what);
        // A step that failed in the playground (on purpose, expect_error, or not) is caught, and
        // the error the SDK raised is checked against the playground's.
        let failed = replies.as_ref().err().map(|e| e.kind.name());
        if failed.is_some() {
            self.line(if self.lang == Lang::Python {
                "try:"
            } else {
                "try {"
            });
            self.indent += 1;
        }
        self.action(sim, action, replies.as_deref().ok());
        if let Some(kind) = failed {
            let (what, kind) = (self.lit(&what), self.lit(kind));
            let none = self.lit(&text!("code-no-error").to_string());
            match self.lang {
                Lang::CSharp => {
                    self.line(&format!("Check({what}, {kind}, {none});"));
                    self.indent -= 1;
                    self.line("} catch (Exception e) {");
                    self.line(&format!("    Check({what}, {kind}, Failure(e));"));
                    self.line("}");
                }
                Lang::Python => {
                    self.line(&format!("check({what}, {kind}, {none})"));
                    self.indent -= 1;
                    self.line("except Exception as e:");
                    self.line(&format!("    check({what}, {kind}, failure(e))"));
                }
                Lang::JavaScript => {
                    self.line(&format!("check({what}, {kind}, {none});"));
                    self.indent -= 1;
                    self.line("} catch (e) {");
                    self.line(&format!("    check({what}, {kind}, failure(e));"));
                    self.line("}");
                }
            }
        }
    }

    /// `check(what, showed, returned)` in the language: `showed` is what the playground
    /// showed, as text; `returned` an expression of the program's, as text.
    fn check(&mut self, what: &str, showed: &str, returned: &str) {
        let (what, showed) = (self.lit(what), self.lit(showed));
        match self.lang {
            Lang::CSharp => self.line(&format!("Check({what}, {showed}, {returned});")),
            Lang::Python => self.line(&format!("check({what}, {showed}, {returned})")),
            Lang::JavaScript => self.line(&format!("check({what}, {showed}, {returned});")),
        }
    }

    /// At an expectation: what peek shows of each entity in `paths` (from [`count_paths`]), by
    /// State, against the playground's store; the paths peek cannot read are said.
    fn counts(&mut self, sim: &Simulation, paths: &[(String, Option<&'static str>)]) {
        let now = sim.now();
        for (path, why) in paths {
            if let Some(why) = why {
                self.say(Text::of(why, &[("path", path as &dyn std::fmt::Display)]));
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
            let (p, shown) = (self.lit(path), self.lit(&showed));
            let returned = match self.lang {
                Lang::CSharp => format!("await Counted({p}, {shown})"),
                Lang::Python => format!("counted({p}, {shown})"),
                Lang::JavaScript => format!("await counted({p}, {shown})"),
            };
            self.check(&what, &showed, &returned);
        }
    }

    /// A list of received messages (`var`) as text, field by field: `field` names it in each
    /// language (C#, Python, JavaScript).
    fn joined(&self, var: &str, field: [&str; 3]) -> String {
        match self.lang {
            Lang::CSharp => format!("string.Join(\",\", {var}.Select(m => m.{}))", field[0]),
            Lang::Python => format!(
                "\",\".join(\"\" if m.{f} is None else str(m.{f}) for m in {var})",
                f = field[1]
            ),
            Lang::JavaScript => {
                format!(
                    "{var}.map((m) => String(m.{} ?? \"\")).join(\",\")",
                    field[2]
                )
            }
        }
    }

    /// The checks of what a receive or a peek returned (in `var`): how many, their MessageIds
    /// where the scenario gave them, DeliveryCount as the SDK counts it, and a dead-letter
    /// queue's DeadLetterReason.
    fn check_messages(&mut self, what: &str, var: &str, got: &[MessageView], peeked: bool) {
        let count = match self.lang {
            Lang::CSharp => format!("{var}.Count.ToString()"),
            Lang::Python => format!("str(len({var}))"),
            Lang::JavaScript => format!("String({var}.length)"),
        };
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
            let e = self.joined(var, ["MessageId", "message_id", "messageId"]);
            self.check(
                &text!("code-check-ids", what = what).to_string(),
                &ids.join(","),
                &e,
            );
        }
        if !peeked {
            // .NET's DeliveryCount is the playground's; Python's and JavaScript's the AMQP
            // count, one less (docs/RULES.md, DeliveryCount per SDK).
            let less = u32::from(self.lang != Lang::CSharp);
            let counts: Vec<String> = got
                .iter()
                .map(|m| m.delivery_count.saturating_sub(less).to_string())
                .collect();
            let e = self.joined(var, ["DeliveryCount", "delivery_count", "deliveryCount"]);
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
            let e = self.joined(
                var,
                ["DeadLetterReason", "dead_letter_reason", "deadLetterReason"],
            );
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
        let aw = match self.lang {
            Lang::Python => "",
            _ => "await ",
        };
        let end = match self.lang {
            Lang::Python => "",
            _ => ";",
        };
        let what = action.text().to_string();
        let got: Vec<MessageView> = replies
            .unwrap_or_default()
            .iter()
            .flat_map(|r| match r {
                Reply::Messages(ms) => ms.clone(),
                _ => Vec::new(),
            })
            .collect();
        match action {
            Action::Send(s) => {
                let entity = sim.ns.entity(&s.to);
                let topic = entity.is_some_and(|e| e.kind == EntityKind::Topic);
                let first = entity.map_or(1, |e| e.next_seq);
                self.send(s, topic, first)
            }
            Action::Receive(r) => {
                let n = r.count.unwrap_or(1);
                let rx = self.receiver(&r.receiver, &r.from, r.mode);
                let expected = got.len();
                let call = self.receive_call(&r.from, &got);
                let receive = match self.lang {
                    Lang::CSharp => format!("await ReceiveAsync({rx}, {n}, {expected})"),
                    Lang::Python | Lang::JavaScript => {
                        format!("{aw}receive({rx}, {n}, {expected})")
                    }
                };
                self.got(&call, &receive, &what, &got, replies.is_some(), false);
                if let Some(d) = r.max_auto_lock_renewal {
                    self.say(text!("code-auto-renew", duration = format_duration(d.ms())));
                }
            }
            Action::Peek(p) => {
                let n = p.count.unwrap_or(1);
                let rx = self.receiver(&p.receiver, &p.from, ModeDef::PeekLock);
                // A SequenceNumber the program received has its own number there.
                let from = p.from_seq.map(|s| self.seq_expr(&p.from, s));
                let peek = match (self.lang, from) {
                    (Lang::CSharp, Some(s)) => format!("await {rx}.PeekMessagesAsync({n}, {s})"),
                    (Lang::CSharp, None) => format!("await {rx}.PeekMessagesAsync({n})"),
                    (Lang::Python, Some(s)) => {
                        format!("{rx}.peek_messages(max_message_count={n}, sequence_number={s})")
                    }
                    (Lang::Python, None) => format!("{rx}.peek_messages(max_message_count={n})"),
                    (Lang::JavaScript, Some(s)) => {
                        format!("await {rx}.peekMessages({n}, {{ fromSequenceNumber: {s} }})")
                    }
                    (Lang::JavaScript, None) => format!("await {rx}.peekMessages({n})"),
                };
                self.got("peeked", &peek, &what, &got, replies.is_some(), true);
            }
            Action::ReceiveDeferred(r) => {
                let rx = self.receiver(&r.receiver, &r.from, ModeDef::PeekLock);
                let seqs: Vec<String> = r.seqs.iter().map(|s| self.seq_expr(&r.from, *s)).collect();
                let call = self.receive_call(&r.from, &got);
                let receive = match self.lang {
                    Lang::CSharp => format!(
                        "await {rx}.ReceiveDeferredMessagesAsync(new long[] {{ {} }})",
                        seqs.join(", ")
                    ),
                    Lang::Python => {
                        format!("{rx}.receive_deferred_messages([{}])", seqs.join(", "))
                    }
                    Lang::JavaScript => {
                        format!("await {rx}.receiveDeferredMessages([{}])", seqs.join(", "))
                    }
                };
                self.got(&call, &receive, &what, &got, replies.is_some(), false);
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
                let m = "m";
                let call = match (self.lang, action) {
                    (Lang::CSharp, Action::Complete(_)) => format!("CompleteMessageAsync({m})"),
                    (Lang::CSharp, Action::Abandon(_)) => format!("AbandonMessageAsync({m})"),
                    (Lang::CSharp, Action::Defer(_)) => format!("DeferMessageAsync({m})"),
                    (Lang::CSharp, Action::RenewLock(_)) => format!("RenewMessageLockAsync({m})"),
                    (Lang::CSharp, _) => format!(
                        "DeadLetterMessageAsync({m}, {}, {})",
                        self.lit(s.reason.as_deref().unwrap_or("")),
                        self.lit(s.description.as_deref().unwrap_or(""))
                    ),
                    (Lang::Python, Action::Complete(_)) => format!("complete_message({m})"),
                    (Lang::Python, Action::Abandon(_)) => format!("abandon_message({m})"),
                    (Lang::Python, Action::Defer(_)) => format!("defer_message({m})"),
                    (Lang::Python, Action::RenewLock(_)) => format!("renew_message_lock({m})"),
                    (Lang::Python, _) => format!(
                        "dead_letter_message({m}, reason={}, error_description={})",
                        self.lit(s.reason.as_deref().unwrap_or("")),
                        self.lit(s.description.as_deref().unwrap_or(""))
                    ),
                    (Lang::JavaScript, Action::Complete(_)) => format!("completeMessage({m})"),
                    (Lang::JavaScript, Action::Abandon(_)) => format!("abandonMessage({m})"),
                    (Lang::JavaScript, Action::Defer(_)) => format!("deferMessage({m})"),
                    (Lang::JavaScript, Action::RenewLock(_)) => format!("renewMessageLock({m})"),
                    (Lang::JavaScript, _) => format!(
                        "deadLetterMessage({m}, {{ deadLetterReason: {}, deadLetterErrorDescription: {} }})",
                        self.lit(s.reason.as_deref().unwrap_or("")),
                        self.lit(s.description.as_deref().unwrap_or(""))
                    ),
                };
                let name = self.lit(&call_name);
                match self.lang {
                    Lang::CSharp => {
                        self.line("{");
                        self.line(&format!("    var m = Message({name}, {index});"));
                        self.line(&format!("    if (m is not null) await {rx}.{call};"));
                        self.line("}");
                    }
                    Lang::Python => {
                        self.line(&format!("m = message({name}, {index})"));
                        self.line("if m:");
                        self.line(&format!("    {rx}.{call}"));
                    }
                    Lang::JavaScript => {
                        self.line("{");
                        self.line(&format!("    const m = message({name}, {index});"));
                        self.line(&format!("    if (m) await {rx}.{call};"));
                        self.line("}");
                    }
                }
            }
            Action::CancelScheduled(c) => {
                let key = self.lit(&format!("{}#{}", c.to, c.seq));
                let topic = sim
                    .ns
                    .entity(&c.to)
                    .is_some_and(|e| e.kind == EntityKind::Topic);
                let sender = self.sender(&c.to, topic);
                let line = match self.lang {
                    Lang::CSharp => {
                        format!("await {sender}.CancelScheduledMessageAsync(scheduled[{key}]);")
                    }
                    Lang::Python => format!("{sender}.cancel_scheduled_messages(scheduled[{key}])"),
                    Lang::JavaScript => {
                        format!("await {sender}.cancelScheduledMessages(scheduled.get({key}));")
                    }
                };
                self.line(&line);
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
                    let kind = match e.kind {
                        EntityKind::Queue => "Queue",
                        EntityKind::Topic => "Topic",
                        EntityKind::Subscription { .. } => "Subscription",
                    };
                    // Only what the step changes, switched off too; never a setting fixed at
                    // creation (RequiresSession, RequiresDuplicateDetection).
                    let after = u.settings.apply_to(&e.settings);
                    let before = self.options(kind, &e.settings, false);
                    let options: Vec<(String, String)> = self
                        .options(kind, &after, false)
                        .into_iter()
                        .filter(|o| !before.contains(o))
                        .collect();
                    self.admin_open();
                    self.update(kind, &u.entity, &options);
                    self.admin_close(Some(text!("code-why-admin")));
                }
            }
            Action::Delete(path) => {
                let line = match (
                    self.lang,
                    sbp_engine::namespace::split_subscription_path(path),
                ) {
                    (Lang::CSharp, Some((t, n))) => format!(
                        "await admin.DeleteSubscriptionAsync({}, {});",
                        self.lit(t),
                        self.lit(n)
                    ),
                    (Lang::CSharp, None) => format!(
                        "await admin.DeleteQueueAsync({}); // or DeleteTopicAsync",
                        self.lit(path)
                    ),
                    (Lang::Python, Some((t, n))) => {
                        format!(
                            "admin.delete_subscription({}, {})",
                            self.lit(t),
                            self.lit(n)
                        )
                    }
                    (Lang::Python, None) => {
                        format!("admin.delete_queue({})  # or delete_topic", self.lit(path))
                    }
                    (Lang::JavaScript, Some((t, n))) => format!(
                        "await admin.deleteSubscription({}, {});",
                        self.lit(t),
                        self.lit(n)
                    ),
                    (Lang::JavaScript, None) => format!(
                        "await admin.deleteQueue({}); // or deleteTopic",
                        self.lit(path)
                    ),
                };
                self.admin_open();
                self.line(&line);
                self.admin_close(Some(text!("code-why-admin")));
            }
            Action::CloseReceiver(r) => match &r.from {
                Some(from) => {
                    let rx = self.receiver(&r.receiver, from, ModeDef::PeekLock);
                    self.line(&format!(
                        "{aw}{rx}.{}(){end}",
                        match self.lang {
                            Lang::CSharp => "CloseAsync",
                            Lang::Python | Lang::JavaScript => "close",
                        }
                    ));
                }
                None => {
                    self.say(text!("code-disconnect"));
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
                self.say(text!("code-fault"));
                self.stop_checking(text!("code-why-fault"));
            }
            Action::Release(s) => {
                self.say(text!("code-release", seq = s.seq, from = &s.from));
                self.stop_checking(text!("code-why-release"));
            }
            Action::StartProducer(p) => {
                self.say(text!(
                    "code-producer",
                    name = p.name,
                    rate = sbp_engine::time::format_decimal(p.rate, 3),
                    to = p.to
                ));
                let topic = sim
                    .ns
                    .entity(&p.to)
                    .is_some_and(|e| e.kind == EntityKind::Topic);
                let limit = p.max_messages.unwrap_or(MAX_PRODUCED).min(MAX_PRODUCED);
                let prefix = self.lit(
                    p.message_id_prefix
                        .as_deref()
                        .unwrap_or(&format!("{}-", p.name)),
                );
                let ttl = p.ttl.map_or(0, |t| t.ms());
                let spike = p
                    .spike
                    .as_ref()
                    .map_or((0, 0, 1.0), |s| (s.from.ms(), s.duration.ms(), s.factor));
                let factor = sbp_engine::time::format_decimal(spike.2, 3);
                let rate = sbp_engine::time::format_decimal(p.rate, 3);
                let (name, to) = (self.lit(&p.name), self.lit(&p.to));
                match self.lang {
                    Lang::CSharp => self.line(&format!(
                        "StartProducer({name}, {to}, {rate}, {limit}, {prefix}, {ttl}, ({}, {}, {factor}));",
                        spike.0, spike.1
                    )),
                    Lang::Python => self.line(&format!(
                        "start_producer({name}, {to}, {}, {rate}, {limit}, {prefix}, {ttl}, ({}, {}, {factor}))",
                        self.boolean(topic),
                        spike.0,
                        spike.1
                    )),
                    Lang::JavaScript => self.line(&format!(
                        "startProducer({name}, {to}, {rate}, {limit}, {prefix}, {ttl}, [{}, {}, {factor}]);",
                        spike.0, spike.1
                    )),
                }
                self.stop_checking(text!("code-why-traffic"));
            }
            Action::StartConsumers(c) => {
                self.say(text!(
                    "code-consumers",
                    name = c.name,
                    count = c.instances.unwrap_or(1),
                    from = c.from
                ));
                let peek_lock = c.mode == ModeDef::PeekLock;
                let work = self.work(c.processing.as_ref());
                let p = |x: f64| sbp_engine::time::format_decimal(x, 3);
                let restart = c.restart_delay.map_or(0, |d| d.ms());
                let (name, from, n) = (
                    self.lit(&c.name),
                    self.lit(&c.from),
                    c.instances.unwrap_or(1),
                );
                match self.lang {
                    Lang::CSharp => self.line(&format!(
                        "StartConsumers({name}, {from}, {n}, {}, {work}, {}, {}, {}, {restart});",
                        self.boolean(peek_lock),
                        p(c.crash),
                        p(c.abandon),
                        p(c.dead_letter)
                    )),
                    Lang::Python => self.line(&format!(
                        "start_consumers({name}, {from}, {n}, {}, {work}, {}, {}, {}, {})",
                        self.boolean(peek_lock),
                        p(c.crash),
                        p(c.abandon),
                        p(c.dead_letter),
                        p(restart as f64 / 1000.0)
                    )),
                    Lang::JavaScript => self.line(&format!(
                        "startConsumers({name}, {from}, {n}, {peek_lock}, {work}, {}, {}, {}, {restart});",
                        p(c.crash),
                        p(c.abandon),
                        p(c.dead_letter)
                    )),
                }
                self.stop_checking(text!("code-why-traffic"));
            }
            Action::StopProducer(name) | Action::StopConsumers(name) => {
                self.say(text!("code-stop"));
                let name = self.lit(name);
                match self.lang {
                    Lang::CSharp => self.line(&format!("StopActors({name});")),
                    Lang::Python => self.line(&format!("stop_actors({name})")),
                    Lang::JavaScript => self.line(&format!("stopActors({name});")),
                }
            }
            Action::Expect(e) => {
                self.say(text!("code-expect"));
                self.counts(sim, &count_paths(&sim.ns, e));
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
            Some((call, i)) => format!("seq({}, {i})", self.lit(call)),
            None => match self.lang {
                Lang::JavaScript => format!("Long.fromNumber({seq})"),
                _ => seq.to_string(),
            },
        }
    }

    /// `expr` (a receive or a peek) kept under `call` and checked against `got` (when the
    /// playground's call succeeded).
    fn got(
        &mut self,
        call: &str,
        expr: &str,
        what: &str,
        got: &[MessageView],
        ok: bool,
        peeked: bool,
    ) {
        let key = self.lit(call);
        match self.lang {
            Lang::CSharp => {
                self.line("{");
                self.indent += 1;
                self.line(&format!("var got = {expr};"));
                if !peeked {
                    self.line(&format!("calls[{key}] = got;"));
                }
            }
            Lang::Python => {
                self.line(&format!("got = {expr}"));
                if !peeked {
                    self.line(&format!("calls[{key}] = got"));
                }
            }
            Lang::JavaScript => {
                self.line("{");
                self.indent += 1;
                self.line(&format!("const got = {expr};"));
                if !peeked {
                    self.line(&format!("calls.set({key}, got);"));
                }
            }
        }
        if ok {
            self.check_messages(what, "got", got, peeked);
        }
        if self.lang != Lang::Python {
            self.indent -= 1;
            self.line("}");
        }
    }

    /// SES-02..05: a session receiver takes the place of the receiver's PeekLock receiver, so
    /// the receives and settlements that follow go through it.
    fn session(&mut self, d: &SessionDef, replies: Option<&[Reply]>) {
        let (lang, name, path) = (self.lang, d.receiver.as_str(), d.from.as_str());
        let key = match lang {
            Lang::CSharp => self.lit(&format!("{name}|{path}|PeekLock")),
            Lang::Python => format!(
                "({}, {}, ServiceBusReceiveMode.PEEK_LOCK)",
                self.lit(name),
                self.lit(path)
            ),
            Lang::JavaScript => self.lit(&format!("{name}|{path}|peekLock")),
        };
        let rx = self.receiver(name, path, ModeDef::PeekLock);
        let (entity, sub) = match sbp_engine::namespace::split_subscription_path(path) {
            Some((t, s)) => (format!("{}, {}", self.lit(t), self.lit(s)), true),
            None => (self.lit(path), false),
        };
        let id = d.session_id.as_deref().map(|v| self.lit(v));
        let state = match &d.state {
            Some(state) => self.bytes(state),
            None => self.lit(""),
        };
        let line = match (lang, d.op) {
            (Lang::CSharp, SessionOpDef::Accept) => format!(
                "receivers[{key}] = await client.{};",
                match &id {
                    Some(id) => format!("AcceptSessionAsync({entity}, {id})"),
                    None => format!("AcceptNextSessionAsync({entity})"),
                }
            ),
            (Lang::Python, SessionOpDef::Accept) => format!(
                "receivers[{key}] = client.get_{}_receiver({entity}, session_id={}).__enter__()",
                if sub { "subscription" } else { "queue" },
                id.as_deref().unwrap_or("NEXT_AVAILABLE_SESSION")
            ),
            (Lang::JavaScript, SessionOpDef::Accept) => format!(
                "receivers.set({key}, await client.{});",
                match &id {
                    Some(id) => format!(
                        "acceptSession({entity}, {id}, {{ maxAutoLockRenewalDurationInMs: 0 }})"
                    ),
                    None => format!(
                        "acceptNextSession({entity}, {{ maxAutoLockRenewalDurationInMs: 0 }})"
                    ),
                }
            ),
            (Lang::CSharp, op) => format!(
                "await ((ServiceBusSessionReceiver){rx}).{};",
                match op {
                    SessionOpDef::RenewLock => "RenewSessionLockAsync()".to_string(),
                    SessionOpDef::GetState => "GetSessionStateAsync()".to_string(),
                    SessionOpDef::SetState =>
                        format!("SetSessionStateAsync(new BinaryData({state}))"),
                    _ => "CloseAsync()".to_string(),
                }
            ),
            (Lang::Python, op) => match op {
                SessionOpDef::RenewLock => format!("{rx}.session.renew_lock()"),
                SessionOpDef::GetState => format!("print({rx}.session.get_state())"),
                SessionOpDef::SetState => format!("{rx}.session.set_state({state})"),
                _ => format!("receivers.pop({key}).close()"),
            },
            (Lang::JavaScript, op) => match op {
                SessionOpDef::RenewLock => format!("await {rx}.renewSessionLock();"),
                SessionOpDef::GetState => format!("console.log(await {rx}.getSessionState());"),
                SessionOpDef::SetState => format!("await {rx}.setSessionState({state});"),
                _ => format!("await {rx}.close();"),
            },
        };
        self.line(&line);
        // The session the broker gave, checked against the playground's.
        let accepted = replies.unwrap_or_default().iter().find_map(|r| match r {
            Reply::Session(v) if d.op == SessionOpDef::Accept => Some(v.session_id.clone()),
            _ => None,
        });
        if let Some(id) = accepted {
            let returned = match lang {
                Lang::CSharp => format!("((ServiceBusSessionReceiver){rx}).SessionId"),
                Lang::Python => format!("str({rx}.session.session_id)"),
                Lang::JavaScript => format!("String({rx}.sessionId)"),
            };
            let what = text!("code-check-session", receiver = name).to_string();
            self.check(&what, &id, &returned);
        }
        if d.op == SessionOpDef::Close {
            match lang {
                Lang::CSharp => self.line(&format!("receivers.Remove({key});")),
                Lang::JavaScript => self.line(&format!("receivers.delete({key});")),
                Lang::Python => {}
            }
        }
    }

    /// The program's one sender to `to` (made on first use, closed at the end).
    fn sender(&self, to: &str, topic: bool) -> String {
        match self.lang {
            Lang::CSharp => format!("Sender({})", self.lit(to)),
            Lang::Python => format!("sender({}, {})", self.lit(to), self.boolean(topic)),
            Lang::JavaScript => format!("sender({})", self.lit(to)),
        }
    }

    /// A send step: `count` messages; a scheduled one is kept under the playground's
    /// SequenceNumber (from `first`), which cancelling it names.
    fn send(&mut self, s: &SendDef, topic: bool, first: u64) {
        let n = s.count.unwrap_or(1).max(1);
        let section = match s.body.section {
            sbp_engine::body::Section::Data => None,
            sbp_engine::body::Section::Value => Some("value"),
            sbp_engine::body::Section::Sequence => Some("sequence"),
        };
        if let Some(section) = section {
            self.say(text!("code-body-section", section = section));
        }
        // A text and a number joined by `+`, never by interpolation (user text stays a literal).
        let joined = |text: &str, number: &str| match self.lang {
            Lang::Python => format!("{} + str({number})", self.lit(text)),
            Lang::CSharp | Lang::JavaScript => format!("{} + ({number})", self.lit(text)),
        };
        let id = match &s.message_id {
            Some(id) if n > 1 => Some(joined(&format!("{id}-"), "i")),
            Some(id) => Some(self.lit(id)),
            None => None,
        };
        let body = match s.body_size {
            Some(size) => match self.lang {
                Lang::CSharp => format!("new string('x', {size})"),
                Lang::Python => format!("\"x\" * {size}"),
                Lang::JavaScript => format!("\"x\".repeat({size})"),
            },
            None => match (s.body.text(), self.lang) {
                (None, Lang::CSharp) => format!("new BinaryData({})", self.bytes(&s.body)),
                _ => self.bytes(&s.body),
            },
        };
        let mut fields: Vec<(String, String)> = Vec::new();
        if let Some(id) = id {
            fields.push((self.member("MessageId"), id));
        }
        if let Some(ttl) = s.ttl {
            let v = match self.lang {
                Lang::CSharp => format!("TimeSpan.FromMilliseconds({})", ttl.ms()),
                Lang::Python => format!("timedelta(milliseconds={})", ttl.ms()),
                Lang::JavaScript => ttl.ms().to_string(),
            };
            fields.push((self.member("TimeToLive"), v));
        }
        if let Some(v) = &s.subject {
            fields.push((self.member("Subject"), self.lit(v)));
        }
        if let Some(v) = &s.correlation_id {
            fields.push((self.member("CorrelationId"), self.lit(v)));
        }
        // Only the SDK's names become members (a step with another is refused when read).
        for (k, v) in &s.system_properties {
            if sbp_engine::message::SYSTEM_PROPERTIES.contains(&k.as_str()) {
                fields.push((self.member(k), self.lit(v)));
            }
        }
        let message = match self.lang {
            Lang::CSharp => {
                let mut f: Vec<String> = fields.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                f.extend(self.csharp_properties(&s.properties));
                format!("new ServiceBusMessage({body}) {{ {} }}", f.join(", "))
            }
            Lang::Python => {
                let mut f: Vec<String> = vec![body];
                f.extend(fields.iter().map(|(k, v)| format!("{k}={v}")));
                if !s.properties.is_empty() {
                    f.push(format!(
                        "application_properties={}",
                        self.dictionary(&s.properties)
                    ));
                }
                format!("ServiceBusMessage({})", f.join(", "))
            }
            Lang::JavaScript => {
                let mut f: Vec<String> = vec![format!("body: {body}")];
                f.extend(fields.iter().map(|(k, v)| format!("{k}: {v}")));
                if !s.properties.is_empty() {
                    f.push(format!(
                        "applicationProperties: {}",
                        self.dictionary(&s.properties)
                    ));
                }
                format!("{{ {} }}", f.join(", "))
            }
        };
        let sender = self.sender(&s.to, topic);
        // The playground's SequenceNumber of a scheduled message keys what cancelling it needs.
        let key = if n == 1 {
            self.lit(&format!("{}#{first}", s.to))
        } else {
            joined(&format!("{}#", s.to), &format!("i + {}", first - 1))
        };
        let call = match (self.lang, s.scheduled_enqueue_time) {
            (Lang::CSharp, Some(at)) => format!(
                "scheduled[{key}] = await {sender}.ScheduleMessageAsync({message}, start.AddMilliseconds({} / SPEED));",
                at.ms()
            ),
            (Lang::CSharp, None) => format!("await {sender}.SendMessageAsync({message});"),
            (Lang::Python, Some(at)) => format!(
                "scheduled[{key}] = {sender}.schedule_messages({message}, start + timedelta(milliseconds={} / SPEED))[0]",
                at.ms()
            ),
            (Lang::Python, None) => format!("{sender}.send_messages({message})"),
            (Lang::JavaScript, Some(at)) => format!(
                "scheduled.set({key}, (await {sender}.scheduleMessages({message}, new Date(start + {} / SPEED)))[0]);",
                at.ms()
            ),
            (Lang::JavaScript, None) => format!("await {sender}.sendMessages({message});"),
        };
        if n == 1 {
            self.line(&call);
            return;
        }
        match self.lang {
            Lang::CSharp => {
                self.line(&format!("for (var i = 1; i <= {n}; i++)"));
                self.line("{");
                self.indent += 1;
                self.line(&call);
                self.indent -= 1;
                self.line("}");
            }
            Lang::Python => {
                self.line(&format!("for i in range(1, {} + 1):", n));
                self.indent += 1;
                self.line(&call);
                self.indent -= 1;
            }
            Lang::JavaScript => {
                self.line(&format!("for (let i = 1; i <= {n}; i++) {{"));
                self.indent += 1;
                self.line(&call);
                self.indent -= 1;
                self.line("}");
            }
        }
    }

    /// An update: the entity's properties read, changed and written back (`kind` is Queue,
    /// Topic or Subscription; a subscription is named by its topic and its name).
    fn update(&mut self, kind: &str, path: &str, options: &[(String, String)]) {
        let name = match sbp_engine::namespace::split_subscription_path(path) {
            Some((t, n)) => format!("{}, {}", self.lit(t), self.lit(n)),
            None => self.lit(path),
        };
        let snake = kind.to_ascii_lowercase();
        let (read, write) = match self.lang {
            Lang::CSharp => (
                format!("var properties = (await admin.Get{kind}Async({name})).Value;"),
                format!("await admin.Update{kind}Async(properties);"),
            ),
            // A subscription is updated with its topic's name (azure-servicebus's
            // `update_subscription(topic_name, subscription)`).
            Lang::Python => (
                format!("properties = admin.get_{snake}({name})"),
                match sbp_engine::namespace::split_subscription_path(path) {
                    Some((t, _)) => format!("admin.update_{snake}({}, properties)", self.lit(t)),
                    None => format!("admin.update_{snake}(properties)"),
                },
            ),
            Lang::JavaScript => (
                format!("const properties = await admin.get{kind}({name});"),
                format!("await admin.update{kind}(properties);"),
            ),
        };
        let end = if self.lang == Lang::Python { "" } else { ";" };
        let block = self.lang != Lang::Python;
        if block {
            self.line("{");
            self.indent += 1;
        }
        self.line(&read);
        for (k, v) in options {
            self.line(&format!("properties.{k} = {v}{end}"));
        }
        self.line(&write);
        if block {
            self.indent -= 1;
            self.line("}");
        }
    }

    fn end(&mut self) {
        self.line("");
        match self.lang {
            Lang::CSharp => {
                if self.actors {
                    self.line("foreach (var stop in stops.Values) stop.Cancel();");
                    self.line("await Task.WhenAll(actors);");
                }
                self.line("foreach (var s in senders.Values) await s.CloseAsync();");
                self.line("foreach (var r in receivers.Values) await r.CloseAsync();");
                self.line("if (differences.Count > 0)");
                self.line("{");
                self.line(
                    "    Console.WriteLine($\"{SOME_DIFFER} {string.Join(\"; \", differences)}\");",
                );
                self.line("    return 1;");
                self.line("}");
                self.line("Console.WriteLine(ALL_SAME);");
                self.line("return 0;");
            }
            Lang::Python => {
                if self.actors {
                    self.line("for stop in stops.values():");
                    self.line("    stop.set()");
                    self.line("for t in actors:");
                    self.line("    t.join(timeout=10)");
                }
                self.line("for s in senders.values():");
                self.line("    s.close()");
                self.line("for r in receivers.values():");
                self.line("    r.close()");
                self.line("client.close()");
                self.line("if differences:");
                self.line("    print(SOME_DIFFER, \"; \".join(differences))");
                self.line("    sys.exit(1)");
                self.line("print(ALL_SAME)");
            }
            Lang::JavaScript => {
                if self.actors {
                    self.line("for (const stop of stops.values()) stop.stopped = true;");
                    self.line("await Promise.all(actors);");
                }
                self.line("for (const s of senders.values()) await s.close();");
                self.line("for (const r of receivers.values()) await r.close();");
                self.line("await client.close();");
                self.line("await countsClient.close();");
                self.line("if (differences.length > 0) {");
                self.line("    console.log(SOME_DIFFER, differences.join(\"; \"));");
                self.line("    process.exitCode = 1;");
                self.line("} else {");
                self.line("    console.log(ALL_SAME);");
                self.line("}");
                self.indent = 0;
                self.line("}");
                self.line("");
                self.line("main().catch((e) => { console.error(e); process.exit(1); });");
            }
        }
    }
}
