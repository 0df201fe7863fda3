//! What a language must say for the walker ([`super::generate`]): a [`Target`] turns each thing
//! the walker decided to write (a send, a receive, a check, a settlement...) into its language's
//! SDK calls and syntax, and [`Out`] collects the lines. Literals and comments go only through
//! `crate::code_text` (every text from a scenario is somebody else's).
use crate::code_text;
use crate::model::{ModeDef, ProcessingDef, SessionOpDef};
use crate::Text;
use sbp_engine::text;
use sbp_engine::time::Duration;
use sbp_engine::PropertyValue;
use std::collections::BTreeMap;

/// The emulator's connection string (its documented development key).
pub const EMULATOR_CONNECTION: &str = "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";

/// A program's text, line by line, at the current indentation (four spaces a level).
pub(super) struct Out {
    pub text: String,
    pub indent: usize,
    /// What starts a line comment in the language.
    comment: &'static str,
}

impl Out {
    pub fn new(comment: &'static str) -> Out {
        Out {
            text: String::new(),
            indent: 0,
            comment,
        }
    }

    /// One line (an empty one carries no indentation).
    pub fn line(&mut self, text: &str) {
        if !text.is_empty() {
            self.text += &"    ".repeat(self.indent);
            self.text += text;
        }
        self.text.push('\n');
    }

    /// Each line of `text` (a template, or a statement written over several lines).
    pub fn lines(&mut self, text: &str) {
        for l in text.lines() {
            self.line(l);
        }
    }

    /// A line comment: every text in one goes through `code_text::comment`.
    pub fn note(&mut self, text: &str) {
        let c = self.comment;
        self.line(&format!("{c} {}", code_text::comment(text)));
    }

    /// A comment in the reader's words (the CLI's: English).
    pub fn say(&mut self, t: Text) {
        self.note(&t.to_string());
    }

    /// The connection string, the administration connection and the speed (each `lines` entry
    /// after its comment), then the words the checks print, each declared by `constant`
    /// (`{name}` and `{lit}` filled in with `lit`, the language's literal).
    pub fn settings(
        &mut self,
        lines: [&str; 3],
        words: &[(&str, Text)],
        constant: &str,
        lit: fn(&str) -> String,
    ) {
        self.say(text!("code-connection"));
        self.note(EMULATOR_CONNECTION);
        for (line, comment) in lines.into_iter().zip(["", "code-admin", "code-speed"]) {
            if !comment.is_empty() {
                self.say(text!(comment));
            }
            self.line(line);
        }
        for (name, t) in words {
            let lit = lit(&t.to_string());
            self.line(&constant.replace("{name}", name).replace("{lit}", &lit));
        }
    }
}

/// An entity as the SDKs' calls name it (each part already a literal): a queue or a topic by its
/// path, a subscription by its topic and its own name.
pub(super) enum Entity {
    Path(String),
    Subscription(String, String),
}

impl Entity {
    /// The arguments of a call that names it: a path, or a subscription's topic and name.
    pub fn arguments(&self) -> String {
        match self {
            Entity::Path(p) => p.clone(),
            Entity::Subscription(t, n) => format!("{t}, {n}"),
        }
    }
}

/// A subscription rule as code: its name (a literal), its filter and its action, if any.
pub(super) struct Rule {
    pub name: String,
    pub filter: String,
    pub action: Option<String>,
}

/// What a sender sends to (Python's client has a sender of each kind).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SendTo {
    Queue,
    Topic,
}

/// A settlement of a received message.
pub(super) enum Settlement<'a> {
    Complete,
    Abandon,
    Defer,
    RenewLock,
    /// DeadLetterReason and its description, as literals.
    DeadLetter(&'a str, &'a str),
}

/// How an entity's setting is compared: a duration in ms, a flag (`true`, `false`), a count.
#[derive(Clone, Copy)]
pub(super) enum Setting {
    Duration,
    Flag,
    Count,
}

impl Setting {
    /// A check's label for the setting named in `label`: a duration says it is in ms.
    pub fn labelled(self, label: String) -> String {
        match self {
            Setting::Duration => label + " (ms)",
            Setting::Flag | Setting::Count => label,
        }
    }
}

/// A field of a received message the checks compare.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    MessageId,
    DeliveryCount,
    DeadLetterReason,
}

impl Field {
    /// Its name as .NET writes it (each language's member name is made from it).
    pub fn pascal(self) -> &'static str {
        match self {
            Field::MessageId => "MessageId",
            Field::DeliveryCount => "DeliveryCount",
            Field::DeadLetterReason => "DeadLetterReason",
        }
    }
}

/// A producer's loop as the program starts it (names and paths as literals).
pub(super) struct Producer {
    pub name: String,
    pub to: String,
    pub to_kind: SendTo,
    pub rate: String,
    pub limit: u64,
    pub prefix: String,
    pub ttl_ms: i64,
    /// From (ms), duration (ms) and factor of a spike; (0, 0, 1) for none.
    pub spike: (i64, i64, String),
}

/// Competing consumers as the program starts them (names and paths as literals; the shares as
/// decimals).
pub(super) struct Consumers {
    pub name: String,
    pub from: String,
    pub instances: u32,
    pub mode: ModeDef,
    pub work: String,
    pub crash: String,
    pub abandon: String,
    pub dead_letter: String,
    pub restart_ms: i64,
}

impl Producer {
    /// The arguments of the call that starts it: `topic` (Python's, which picks its sender) after
    /// the target, the spike as `open`…`close` (a tuple or an array).
    pub fn arguments(&self, topic: Option<String>, (open, close): (&str, &str)) -> String {
        let (from, duration, factor) = &self.spike;
        let spike = format!("{open}{from}, {duration}, {factor}{close}");
        [self.name.clone(), self.to.clone()]
            .into_iter()
            .chain(topic)
            .chain([
                self.rate.clone(),
                self.limit.to_string(),
                self.prefix.clone(),
                self.ttl_ms.to_string(),
                spike,
            ])
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Consumers {
    /// The arguments of the call that starts them, with PeekLock (a boolean) and the restart
    /// delay as the language writes them.
    pub fn arguments(&self, peek_lock: String, restart: String) -> String {
        [
            self.name.clone(),
            self.from.clone(),
            self.instances.to_string(),
            peek_lock,
            self.work.clone(),
            self.crash.clone(),
            self.abandon.clone(),
            self.dead_letter.clone(),
            restart,
        ]
        .join(", ")
    }
}

/// One language: its literals, its SDK's calls, and the fixed text of the program around them
/// (in `templates/`). Each method returns or writes code; none decides what to write.
pub(super) trait Target {
    /// What starts a line comment.
    fn comment(&self) -> &'static str;
    /// A string literal: every text in one goes through its language's function in `code_text`.
    fn lit(&self, s: &str) -> String;
    /// Bytes decoded from their base64 (`b64`, a literal).
    fn base64(&self, b64: &str) -> String;
    /// A body's bytes as a literal: a string when they are text, else [`Target::base64`].
    fn bytes(&self, body: &sbp_engine::Body) -> String {
        match body.text() {
            Some(text) => self.lit(text),
            None => self.base64(&self.lit(&body.base64())),
        }
    }
    /// A message's body: its bytes, as a message takes them.
    fn body(&self, body: &sbp_engine::Body) -> String {
        self.bytes(body)
    }
    /// A body of `size` times `x`.
    fn repeated_body(&self, size: u64) -> String;
    /// A property's name in the language: `LockDuration`, `lock_duration`, `lockDuration`.
    fn member(&self, pascal: &str) -> String;
    fn boolean(&self, b: bool) -> String {
        b.to_string()
    }
    /// The value that clears a setting.
    fn none(&self) -> &'static str;
    /// A duration as the administration client takes it.
    fn duration(&self, ms: Duration) -> String;
    /// A message's TimeToLive as the message takes it.
    fn time_to_live(&self, ms: Duration) -> String {
        self.duration(ms)
    }
    /// An application property's value as the language writes one of its type.
    fn value(&self, v: &PropertyValue) -> String;
    /// Application properties as a map literal, each value typed.
    fn dictionary(&self, map: &BTreeMap<String, PropertyValue>) -> String {
        let pairs: Vec<String> = map
            .iter()
            .map(|(k, v)| format!("{}: {}", self.lit(k), self.value(v)))
            .collect();
        format!("{{ {} }}", pairs.join(", "))
    }

    /// The program's start: header, imports, settings, clients and the helpers the steps call.
    fn prelude(&self, out: &mut Out, title: &str, words: &[(&str, Text)]);
    /// The fixed text of the producers' and consumers' loops.
    fn actors(&self) -> &'static str;
    /// A consumer's processing time, as a function the loop calls.
    fn work(&self, p: Option<&ProcessingDef>) -> String;
    fn start_producer(&self, p: &Producer) -> String;
    fn start_consumers(&self, c: &Consumers) -> String;
    fn stop_actors(&self, name: &str) -> String;
    /// The whole program, made ready (the imports it does not use taken out, say).
    fn finish(&self, program: String) -> String {
        program
    }
    /// Opens the program's main function and its clients' block, where the language has them
    /// (the entities and the timeline go inside).
    fn main_open(&self, _out: &mut Out) {}
    /// The program's end: loops stopped, clients closed, the summary and its exit code.
    fn end(&self, out: &mut Out, actors: bool);

    /// Opens a block that runs only with an administration client.
    fn admin_open(&self) -> &'static str;
    /// Closes it, with `otherwise` run without one.
    fn admin_close(&self, out: &mut Out, otherwise: &str);
    /// Says the entities are taken as existing.
    fn existing(&self) -> &'static str;
    /// Stops the checks, printing `why` (a literal).
    fn stop_checking(&self, why: &str) -> String;

    /// Creates an entity (`kind` Queue, Topic or Subscription; `target` its literal name, a
    /// subscription's preceded by its topic's) with `options`.
    fn create(&self, kind: &str, target: &str, options: &[(String, String)]) -> String;
    /// A subscription created with its first rule in one call, where the SDK has one.
    fn create_subscription_with_rule(
        &self,
        _target: &str,
        _options: &[(String, String)],
        _rule: &Rule,
    ) -> Option<String> {
        None
    }
    fn add_rule(&self, topic: &str, subscription: &str, rule: &Rule) -> String;
    fn remove_rule(&self, topic: &str, subscription: &str, name: &str) -> String;
    fn sql_action(&self, action: &str) -> String;
    fn sql_filter(&self, filter: &str) -> String;
    /// TOP-01: a filter that takes every message.
    fn true_filter(&self) -> String;
    /// A correlation filter's field name.
    fn correlation_field(&self, key: &str) -> String {
        self.member(key)
    }
    fn correlation_filter(
        &self,
        fields: &[(String, String)],
        properties: &BTreeMap<String, PropertyValue>,
    ) -> String;
    /// The entity's settings read into `var`, after `made` (the calls that make it, one per
    /// line) where the namespace does not have it yet. The checks that follow are in its block.
    fn ensure(&self, out: &mut Out, kind: &str, entity: &Entity, var: &str, made: &str);
    /// Closes [`Target::ensure`]'s block.
    fn ensure_end(&self, _out: &mut Out) {}
    /// A setting (`pascal`) of the settings read into `var`, as text the check compares.
    fn setting(&self, var: &str, pascal: &str, setting: Setting) -> String;
    /// Whether the entity exists, as text (`true`, `false`), as the administration client reads
    /// it: asked again until it is `showed` (a literal) or instant `until`.
    fn exists(&self, kind: &str, entity: &Entity, showed: &str, until: i64) -> String;
    /// The entity's settings read into `var` (a statement; [`Target::ensure`] reads them so too).
    fn read_settings(&self, kind: &str, entity: &Entity, var: &str) -> String;
    /// A statement that prints `text` (a literal).
    fn print(&self, text: &str) -> String;
    /// An entity's properties read, and written back (with the options set between).
    fn update(&self, kind: &str, entity: &Entity) -> (String, String);
    /// The end of a statement (`;`, or nothing).
    fn end_of_statement(&self) -> &'static str {
        ";"
    }
    /// A block's braces, where the language has them.
    fn braces(&self) -> Option<(&'static str, &'static str)> {
        Some(("{", "}"))
    }
    fn delete(&self, entity: &Entity) -> String;

    /// On to the scenario's instant `until`, with the comment `on`.
    fn wait(&self, until: i64, on: &str) -> String;
    fn mode(&self, m: ModeDef) -> &'static str;
    /// The program's receiver `name` on `path` (literals) in mode `m`.
    fn receiver(&self, name: &str, path: &str, m: ModeDef) -> String;
    /// The program's sender to `to` (a literal).
    fn sender(&self, to: &str, kind: SendTo) -> String;
    /// A receive of `count` expecting `expected`, asked again until instant `until`.
    fn receive(&self, rx: &str, count: u32, expected: usize, until: i64) -> String;
    fn peek(&self, rx: &str, count: u32, from_seq: Option<String>) -> String;
    fn receive_deferred(&self, rx: &str, seqs: &[String]) -> String;
    /// The SequenceNumber of the message receive call `call` (a literal) got at `i`.
    fn received_sequence_number(&self, call: &str, i: usize) -> String {
        format!("seq({call}, {i})")
    }
    /// A SequenceNumber the program did not receive, as the SDK takes one.
    fn sequence_number(&self, seq: u64) -> String {
        seq.to_string()
    }
    fn close_receiver(&self, rx: &str) -> String;
    /// `expr` kept as `got` (and, for a receive, under `call`) in a block the checks follow.
    fn got(&self, out: &mut Out, call: Option<&str>, expr: &str);
    /// The settlement call on `m`.
    fn settlement(&self, s: Settlement) -> String;
    /// The message a receive call (`call`, a literal) got at `index`, settled through `rx`.
    fn settle(&self, out: &mut Out, call: &str, index: usize, rx: &str, settlement: &str);
    fn cancel_scheduled(&self, sender: &str, key: &str) -> String;
    /// A text literal and a number expression joined (never by interpolation).
    fn joined(&self, text: &str, number: &str) -> String;
    /// A message with `body`, its `fields` and application properties.
    fn message(
        &self,
        body: String,
        fields: &[(String, String)],
        properties: &BTreeMap<String, PropertyValue>,
    ) -> String;
    fn send(&self, sender: &str, message: &str) -> String;
    /// A scheduled send for `at` ms after the start, its SequenceNumber kept under `key`.
    fn schedule(&self, sender: &str, message: &str, key: &str, at: i64) -> String;
    /// `call` in a loop of `i` from 1 to `n`.
    fn repeat(&self, out: &mut Out, n: u32, call: &str);

    /// `receivers`' key for a session receiver (`name` and `path` as text).
    fn session_key(&self, name: &str, path: &str) -> String;
    /// A session accepted (`id` a literal, or the next available) into `key`.
    fn accept_session(&self, key: &str, entity: &Entity, id: Option<&str>) -> String;
    /// A session operation other than accepting, through `rx`.
    fn session_op(&self, op: SessionOpDef, rx: &str, key: &str, state: &str) -> String;
    /// The SessionId the program's session receiver has.
    fn session_id(&self, rx: &str) -> String;
    /// The session receiver forgotten after its close, where that is a statement of its own.
    fn forget_receiver(&self, _key: &str) -> Option<String> {
        None
    }

    /// Opens a step's block (`what` and `expected` literals): the helper that runs it checks
    /// the error raised against `expected` (the error the playground showed; None for none),
    /// and with an error expected, none raised is a difference too.
    fn step_open(&self, what: &str, expected: Option<&str>) -> String;
    /// What closes a step's block, where the language has something.
    fn step_close(&self) -> Option<&'static str> {
        Some("});")
    }
    /// How a step's block is written, as the program's header names it.
    fn step_form(&self) -> &'static str;
    /// `check(what, showed, returned)`: `returned` an expression of the program's.
    fn check(&self, what: &str, showed: &str, returned: &str) -> String;
    /// What peek shows of `path`, asked until it is `shown` (literals) or instant `until`.
    fn counted(&self, path: &str, shown: &str, until: i64) -> String;
    /// How many messages `var` holds, as text.
    fn count(&self, var: &str) -> String;
    /// A field of each message in `var`, joined by commas.
    fn each(&self, var: &str, field: Field) -> String;
    /// Message `seq` (an expression) of `path` (a literal) as peek shows it, into `var` (none
    /// where it is not there).
    fn peeked(&self, var: &str, path: &str, seq: &str) -> String;
    /// A field of the one message in `var` as text ("not there" where there is none).
    fn one(&self, var: &str, field: Field) -> String;
    /// How much less than the playground's (.NET's) the SDK counts a DeliveryCount (the AMQP
    /// count, by default: docs/RULES.md, DeliveryCount per SDK).
    fn delivery_count_below_net(&self) -> u32 {
        1
    }
}

/// Whether `name` occurs in `text` as a word of its own (not inside another name).
pub(super) fn used(text: &str, name: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(name).any(|(i, _)| {
        !word(text[..i].chars().next_back()) && !word(text[i + name.len()..].chars().next())
    })
}

/// A finite double as C# and Python write one: with a decimal point (`2.0`, not `2`).
pub(super) fn decimal_point(d: f64) -> String {
    let text = sbp_engine::time::format_decimal(d, 6);
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

/// A consumer's processing time in milliseconds, as a C# or JavaScript lambda (`draw` the
/// language's random draw in [0, 1), `log` its natural logarithm).
pub(super) fn work_in_ms(p: Option<&ProcessingDef>, draw: &str, log: &str) -> String {
    match p {
        None => "() => 0".into(),
        Some(ProcessingDef::Fixed(d)) => format!("() => {}", d.ms()),
        Some(ProcessingDef::Uniform { min, max }) => {
            format!("() => {} + {draw} * {}", min.ms(), max.ms() - min.ms())
        }
        Some(ProcessingDef::Exponential { mean }) => {
            format!("() => -{log}(1 - {draw}) * {}", mean.ms())
        }
    }
}
