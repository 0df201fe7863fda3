//! Python, with azure-servicebus: synchronous calls, snake_case names, keyword arguments, and
//! `check` comparing each reply.
use super::target::{
    used, Consumers, Entity, Field, Out, Producer, Rule, SendTo, Setting, Settlement, Target,
};
use crate::code_text;
use crate::model::{ModeDef, ProcessingDef, SessionOpDef};
use crate::Text;
use sbp_engine::text;
use sbp_engine::time::{format_decimal, Duration};
use sbp_engine::PropertyValue;
use std::collections::BTreeMap;

pub(super) struct Python;

/// Milliseconds as seconds (`1.5`).
fn seconds(ms: i64) -> String {
    format_decimal(ms as f64 / 1000.0, 3)
}

impl Target for Python {
    /// Imports only what the program uses, so that pyflakes finds nothing: each name of an
    /// import line is kept where the lines that are not imports name it.
    fn finish(&self, program: String) -> String {
        let is_import = |l: &str| l.starts_with("import ") || l.starts_with("from ");
        let rest: String = program
            .lines()
            .filter(|l| !is_import(l))
            .collect::<Vec<_>>()
            .join("\n");
        let mut out = String::with_capacity(program.len());
        for line in program.split_inclusive('\n') {
            let kept = match line.trim_end().split_once(" import ") {
                Some((from, names)) if line.starts_with("from ") => {
                    let names: Vec<&str> = names
                        .split(", ")
                        .filter(|n| used(&rest, n.trim()))
                        .collect();
                    (!names.is_empty()).then(|| format!("{from} import {}\n", names.join(", ")))
                }
                _ if line.starts_with("import ") => {
                    let name = line.trim_end().trim_start_matches("import ");
                    used(&rest, name).then(|| line.to_string())
                }
                _ => Some(line.to_string()),
            };
            out.extend(kept);
        }
        out
    }

    fn comment(&self) -> &'static str {
        "#"
    }

    fn lit(&self, s: &str) -> String {
        code_text::python_literal(s)
    }

    fn base64(&self, b64: &str) -> String {
        format!("base64.b64decode({b64})")
    }

    fn repeated_body(&self, size: u64) -> String {
        format!("\"x\" * {size}")
    }

    fn member(&self, pascal: &str) -> String {
        let mut out = String::new();
        for (i, c) in pascal.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }

    fn boolean(&self, b: bool) -> String {
        if b { "True" } else { "False" }.into()
    }

    fn none(&self) -> &'static str {
        "None"
    }

    fn duration(&self, ms: Duration) -> String {
        format!("timedelta(milliseconds={ms})")
    }

    /// One integer type, which the SDK sends as an AMQP int when it fits 32 bits (pyamqp's
    /// `_encode.encode_unknown`), so a long is written as its number.
    fn value(&self, v: &PropertyValue) -> String {
        match v {
            PropertyValue::String(s) => self.lit(s),
            PropertyValue::Int(n) => n.to_string(),
            PropertyValue::Long(n) => n.to_string(),
            PropertyValue::Double(d) if d.is_nan() => "float(\"nan\")".into(),
            PropertyValue::Double(d) if d.is_infinite() && *d > 0.0 => "float(\"inf\")".into(),
            PropertyValue::Double(d) if d.is_infinite() => "float(\"-inf\")".into(),
            PropertyValue::Double(d) => super::target::decimal_point(*d),
            PropertyValue::Bool(b) => self.boolean(*b),
            PropertyValue::Null => "None".into(),
            PropertyValue::Timestamp(ms) => format!(
                "datetime.fromisoformat({})",
                self.lit(&sbp_engine::utc::format_utc(0, *ms).replace('Z', "+00:00"))
            ),
            PropertyValue::Uuid(_) => format!("uuid.UUID({})", self.lit(&v.to_string())),
        }
    }

    fn prelude(&self, out: &mut Out, title: &str, words: &[(&str, Text)]) {
        // Line 1 names the encoding, so no text on line 1 or 2 can (PEP 263: a title
        // `coding: utf-7` would have Python read `+AAo-` as a line end).
        out.line("# -*- coding: utf-8 -*-");
        out.say(text!(
            "code-header",
            title = title,
            sdk = "azure-servicebus"
        ));
        out.note("pip install azure-servicebus");
        out.lines(include_str!("templates/python-imports.py"));
        out.settings(
            [
                "CONNECTION = os.environ.get(\"SERVICEBUS_CONNECTION\", \"<connection string>\")",
                "ADMIN_CONNECTION = os.environ.get(\"SERVICEBUS_ADMIN_CONNECTION\")",
                "SPEED = float(os.environ.get(\"SBP_SPEED\", \"1\"))",
            ],
            words,
            "{name} = {lit}",
            code_text::python_literal,
        );
        out.line("ERRORS = {\"MessageLockLostError\": \"MessageLockLost\", \"SessionLockLostError\": \"SessionLockLost\", \"MessageNotFoundError\": \"MessageNotFound\", \"MessagingEntityNotFoundError\": \"MessagingEntityNotFound\", \"MessageSizeExceededError\": \"MessageSizeExceeded\", \"ServiceBusQuotaExceededError\": \"QuotaExceeded\", \"ServiceBusServerBusyError\": \"ServerBusy\", \"SessionCannotBeLockedError\": \"SessionCannotBeLocked\", \"OperationTimeoutError\": \"ServiceTimeout\", \"MessageAlreadySettled\": \"InvalidOperation\", \"ValueError\": \"InvalidOperation\", \"ServiceBusError\": \"InvalidOperation\"}");
        out.say(text!("code-retries"));
        out.lines(include_str!("templates/python-helpers.py"));
    }

    fn actors(&self) -> &'static str {
        include_str!("templates/python-actors.py")
    }

    /// In seconds, drawn from the loops' seeded `rng`.
    fn work(&self, p: Option<&ProcessingDef>) -> String {
        match p {
            None => "lambda: 0.0".into(),
            Some(ProcessingDef::Fixed(d)) => format!("lambda: {}", seconds(d.ms())),
            Some(ProcessingDef::Uniform { min, max }) => format!(
                "lambda: rng.uniform({}, {})",
                seconds(min.ms()),
                seconds(max.ms())
            ),
            Some(ProcessingDef::Exponential { mean }) => {
                format!("lambda: rng.expovariate(1 / {})", seconds(mean.ms().max(1)))
            }
        }
    }

    fn start_producer(&self, p: &Producer) -> String {
        let topic = self.boolean(p.to_kind == SendTo::Topic);
        format!("start_producer({})", p.arguments(Some(topic), ("(", ")")))
    }

    fn start_consumers(&self, c: &Consumers) -> String {
        let peek_lock = self.boolean(c.mode == ModeDef::PeekLock);
        format!(
            "start_consumers({})",
            c.arguments(peek_lock, seconds(c.restart_ms))
        )
    }

    fn stop_actors(&self, name: &str) -> String {
        format!("stop_actors({name})")
    }

    /// `main()`, with the client and the senders and receivers it opens (`links`) in a `with`.
    fn main_open(&self, out: &mut Out) {
        out.line("def main() -> None:");
        out.line("    with client, links:");
        out.indent += 2;
    }

    /// Inside main's `with`: the loops stopped and the summary (its exit closes what the
    /// program opened); then main called when the file runs as a program.
    fn end(&self, out: &mut Out, actors: bool) {
        out.line("");
        if actors {
            out.line("for stop in stops.values():");
            out.line("    stop.set()");
            out.line("for t in actors:");
            out.line("    t.join(timeout=10)");
        }
        out.lines(include_str!("templates/python-end.py"));
        out.indent = 0;
        out.line("");
        out.line("");
        out.line("if __name__ == \"__main__\":");
        out.line("    main()");
    }

    fn ensure(&self, out: &mut Out, kind: &str, entity: &Entity, var: &str, made: &str) {
        let snake = kind.to_ascii_lowercase();
        let names = entity.arguments();
        out.line(&format!("{var} = found(admin.get_{snake}, {names})"));
        out.line(&format!("if {var} is None:"));
        out.indent += 1;
        out.lines(made);
        out.line(&self.read_settings(kind, entity, var));
        out.indent -= 1;
    }

    fn setting(&self, var: &str, pascal: &str, setting: Setting) -> String {
        let member = self.member(pascal);
        match setting {
            Setting::Duration => format!("ms({var}.{member})"),
            Setting::Flag => format!("str({var}.{member}).lower()"),
            Setting::Count => format!("str({var}.{member})"),
        }
    }

    fn exists(&self, kind: &str, entity: &Entity, showed: &str, until: i64) -> String {
        let snake = kind.to_ascii_lowercase();
        format!(
            "present(lambda: found(admin.get_{snake}, {}) is not None, {showed}, {until})",
            entity.arguments()
        )
    }

    fn read_settings(&self, kind: &str, entity: &Entity, var: &str) -> String {
        let snake = kind.to_ascii_lowercase();
        format!("{var} = admin.get_{snake}({})", entity.arguments())
    }

    fn print(&self, text: &str) -> String {
        format!("print({text})")
    }

    fn admin_open(&self) -> &'static str {
        "if admin:"
    }

    fn admin_close(&self, out: &mut Out, otherwise: &str) {
        out.line("else:");
        out.line(&format!("    {otherwise}"));
    }

    fn existing(&self) -> &'static str {
        "print(EXISTING)"
    }

    fn stop_checking(&self, why: &str) -> String {
        format!("checking[0] = False; print({why})")
    }

    fn create(&self, kind: &str, target: &str, options: &[(String, String)]) -> String {
        let args: Vec<String> = std::iter::once(target.to_string())
            .chain(options.iter().map(|(k, v)| format!("{k}={v}")))
            .collect();
        let snake = kind.to_ascii_lowercase();
        format!("admin.create_{snake}({})", args.join(", "))
    }

    fn add_rule(&self, topic: &str, subscription: &str, rule: &Rule) -> String {
        let action = rule
            .action
            .as_ref()
            .map(|a| format!(", action={a}"))
            .unwrap_or_default();
        format!(
            "admin.create_rule({topic}, {subscription}, {}, filter={}{action})",
            rule.name, rule.filter
        )
    }

    fn remove_rule(&self, topic: &str, subscription: &str, name: &str) -> String {
        format!("admin.delete_rule({topic}, {subscription}, {name})")
    }

    fn sql_action(&self, action: &str) -> String {
        format!("SqlRuleAction({action})")
    }

    fn sql_filter(&self, filter: &str) -> String {
        format!("SqlRuleFilter({filter})")
    }

    fn true_filter(&self) -> String {
        "TrueRuleFilter()".into()
    }

    /// The filter names Subject `label`.
    fn correlation_field(&self, key: &str) -> String {
        match key {
            "Subject" => "label".into(),
            k => self.member(k),
        }
    }

    fn correlation_filter(
        &self,
        fields: &[(String, String)],
        properties: &BTreeMap<String, PropertyValue>,
    ) -> String {
        let mut f: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if !properties.is_empty() {
            f.push(format!("properties={}", self.dictionary(properties)));
        }
        format!("CorrelationRuleFilter({})", f.join(", "))
    }

    /// A subscription is updated with its topic's name (azure-servicebus's
    /// `update_subscription(topic_name, subscription)`).
    fn update(&self, kind: &str, entity: &Entity) -> (String, String) {
        let snake = kind.to_ascii_lowercase();
        let write = match entity {
            Entity::Subscription(t, _) => format!("admin.update_{snake}({t}, properties)"),
            Entity::Path(_) => format!("admin.update_{snake}(properties)"),
        };
        (
            format!("properties = admin.get_{snake}({})", entity.arguments()),
            write,
        )
    }

    fn end_of_statement(&self) -> &'static str {
        ""
    }

    fn braces(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    fn delete(&self, entity: &Entity) -> String {
        match entity {
            Entity::Subscription(t, n) => format!("admin.delete_subscription({t}, {n})"),
            Entity::Path(p) => format!("admin.delete_queue({p})  # or delete_topic"),
        }
    }

    fn wait(&self, until: i64, on: &str) -> String {
        format!("wait_until({until})  # {on}")
    }

    fn mode(&self, m: ModeDef) -> &'static str {
        match m {
            ModeDef::PeekLock => "ServiceBusReceiveMode.PEEK_LOCK",
            ModeDef::ReceiveAndDelete => "ServiceBusReceiveMode.RECEIVE_AND_DELETE",
        }
    }

    fn receiver(&self, name: &str, path: &str, m: ModeDef) -> String {
        format!("receiver({name}, {path}, {})", self.mode(m))
    }

    fn sender(&self, to: &str, kind: SendTo) -> String {
        format!("sender({to}, {})", self.boolean(kind == SendTo::Topic))
    }

    fn receive(&self, rx: &str, count: u32, expected: usize, until: i64) -> String {
        format!("receive({rx}, {count}, {expected}, {until})")
    }

    fn peek(&self, rx: &str, count: u32, from_seq: Option<String>) -> String {
        match from_seq {
            Some(s) => {
                format!("{rx}.peek_messages(max_message_count={count}, sequence_number={s})")
            }
            None => format!("{rx}.peek_messages(max_message_count={count})"),
        }
    }

    fn receive_deferred(&self, rx: &str, seqs: &[String]) -> String {
        format!("{rx}.receive_deferred_messages([{}])", seqs.join(", "))
    }

    fn close_receiver(&self, rx: &str) -> String {
        format!("{rx}.close()")
    }

    fn got(&self, out: &mut Out, call: Option<&str>, expr: &str) {
        out.line(&format!("got = {expr}"));
        if let Some(key) = call {
            out.line(&format!("calls[{key}] = got"));
        }
    }

    fn settlement(&self, s: Settlement) -> String {
        match s {
            Settlement::Complete => "complete_message(m)".into(),
            Settlement::Abandon => "abandon_message(m)".into(),
            Settlement::Defer => "defer_message(m)".into(),
            Settlement::RenewLock => "renew_message_lock(m)".into(),
            Settlement::DeadLetter(reason, description) => {
                format!("dead_letter_message(m, reason={reason}, error_description={description})")
            }
        }
    }

    fn settle(&self, out: &mut Out, call: &str, index: usize, rx: &str, settlement: &str) {
        out.line(&format!("m = message({call}, {index})"));
        out.line("if m:");
        out.line(&format!("    {rx}.{settlement}"));
    }

    fn cancel_scheduled(&self, sender: &str, key: &str) -> String {
        format!("{sender}.cancel_scheduled_messages(scheduled[{key}])")
    }

    fn joined(&self, text: &str, number: &str) -> String {
        format!("{text} + str({number})")
    }

    fn message(
        &self,
        body: String,
        fields: &[(String, String)],
        properties: &BTreeMap<String, PropertyValue>,
    ) -> String {
        let mut f: Vec<String> = vec![body];
        f.extend(fields.iter().map(|(k, v)| format!("{k}={v}")));
        if !properties.is_empty() {
            f.push(format!(
                "application_properties={}",
                self.dictionary(properties)
            ));
        }
        format!("ServiceBusMessage({})", f.join(", "))
    }

    fn send(&self, sender: &str, message: &str) -> String {
        format!("{sender}.send_messages({message})")
    }

    fn schedule(&self, sender: &str, message: &str, key: &str, at: i64) -> String {
        format!("scheduled[{key}] = {sender}.schedule_messages({message}, start + timedelta(milliseconds={at} / SPEED))[0]")
    }

    fn repeat(&self, out: &mut Out, n: u32, call: &str) {
        out.line(&format!("for i in range(1, {n} + 1):"));
        out.indent += 1;
        out.line(call);
        out.indent -= 1;
    }

    fn session_key(&self, name: &str, path: &str) -> String {
        format!(
            "({}, {}, ServiceBusReceiveMode.PEEK_LOCK)",
            self.lit(name),
            self.lit(path)
        )
    }

    fn accept_session(&self, key: &str, entity: &Entity, id: Option<&str>) -> String {
        let kind = match entity {
            Entity::Subscription(..) => "subscription",
            Entity::Path(_) => "queue",
        };
        format!(
            "receivers[{key}] = links.enter_context(client.get_{kind}_receiver({}, session_id={}))",
            entity.arguments(),
            id.unwrap_or("NEXT_AVAILABLE_SESSION")
        )
    }

    fn session_op(&self, op: SessionOpDef, rx: &str, key: &str, state: &str) -> String {
        match op {
            SessionOpDef::RenewLock => format!("{rx}.session.renew_lock()"),
            SessionOpDef::GetState => format!("print({rx}.session.get_state())"),
            SessionOpDef::SetState => format!("{rx}.session.set_state({state})"),
            SessionOpDef::Accept | SessionOpDef::Close => format!("receivers.pop({key}).close()"),
        }
    }

    fn session_id(&self, rx: &str) -> String {
        format!("str({rx}.session.session_id)")
    }

    fn step_open(&self, what: &str, expected: Option<&str>) -> String {
        match expected {
            Some(kind) => format!("with step({what}, {kind}):"),
            None => format!("with step({what}):"),
        }
    }

    fn step_close(&self) -> Option<&'static str> {
        None
    }

    fn step_form(&self) -> &'static str {
        "`with step(...)`"
    }

    fn check(&self, what: &str, showed: &str, returned: &str) -> String {
        format!("check({what}, {showed}, {returned})")
    }

    fn counted(&self, path: &str, shown: &str, until: i64) -> String {
        format!("counted({path}, {shown}, {until})")
    }

    fn count(&self, var: &str) -> String {
        format!("str(len({var}))")
    }

    fn each(&self, var: &str, field: Field) -> String {
        let f = self.member(field.pascal());
        format!("\",\".join(\"\" if m.{f} is None else str(m.{f}) for m in {var})")
    }

    fn peeked(&self, var: &str, path: &str, seq: &str) -> String {
        format!("{var} = peeked({path}, {seq})")
    }

    fn one(&self, var: &str, field: Field) -> String {
        let f = self.member(field.pascal());
        format!(
            "\"not there\" if {var} is None else (\"\" if {var}.{f} is None else str({var}.{f}))"
        )
    }
}
