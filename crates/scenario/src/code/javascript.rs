//! JavaScript (Node.js, CommonJS), with @azure/service-bus: an `async function main()`,
//! camelCase names, options objects, Long SequenceNumbers, and `check` comparing each reply.
use super::target::{
    used, Consumers, Entity, Field, Out, Producer, Rule, SendTo, Setting, Settlement, Target,
};
use crate::code_text;
use crate::model::{ModeDef, ProcessingDef, SessionOpDef};
use crate::Text;
use sbp_engine::text;
use sbp_engine::time::Duration;
use sbp_engine::PropertyValue;
use std::collections::BTreeMap;

pub(super) struct JavaScript;

/// A line without its string literals and its comment: where a name that occurs is used.
fn code_of(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push_str("\"\"");
            }
            '/' if chars.peek() == Some(&'/') => break,
            c => out.push(c),
        }
    }
    out
}

/// The `const` declarations at the top and in main (indentation up to a level: the words and
/// the helpers) that nothing else names, each with the comment lines above it, as line ranges.
fn unused_declarations(lines: &[&str]) -> Vec<std::ops::Range<usize>> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    // Each line's code read once, not once per declaration looked at.
    let code: Vec<String> = lines.iter().map(|l| code_of(l)).collect();
    let mut unused = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((name, _)) = line
            .strip_prefix("const ")
            .or_else(|| line.strip_prefix("    const "))
            .and_then(|rest| rest.split_once(" = "))
        else {
            continue;
        };
        if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let at = indent(line);
        // A declaration ends on its line, or at the brace that closes it at its indentation.
        let end = if line.ends_with(';') {
            i + 1
        } else {
            match lines[i + 1..]
                .iter()
                .position(|l| indent(l) == at && l.trim_start().starts_with('}'))
            {
                Some(n) => i + n + 2,
                None => continue,
            }
        };
        let comments = lines[..i]
            .iter()
            .rev()
            .take_while(|l| indent(l) == at && l.trim_start().starts_with("//"))
            .count();
        let names = |l: &String| used(l, name);
        if !code[..i].iter().chain(&code[end..]).any(names) {
            unused.push(i - comments..end);
        }
    }
    unused
}

impl Target for JavaScript {
    /// Declares only what the program uses, so that eslint's no-unused-vars finds nothing: a
    /// helper the steps do not call or a word the program does not print is taken out, until
    /// none is left (a helper may be the only one to call another).
    fn finish(&self, program: String) -> String {
        let mut lines: Vec<&str> = program.lines().collect();
        loop {
            let unused = unused_declarations(&lines);
            if unused.is_empty() {
                break;
            }
            for range in unused.into_iter().rev() {
                lines.drain(range);
            }
        }
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }

    fn comment(&self) -> &'static str {
        "//"
    }

    fn lit(&self, s: &str) -> String {
        code_text::javascript_literal(s)
    }

    fn base64(&self, b64: &str) -> String {
        format!("Buffer.from({b64}, \"base64\")")
    }

    fn repeated_body(&self, size: u64) -> String {
        format!("\"x\".repeat({size})")
    }

    fn member(&self, pascal: &str) -> String {
        let mut chars = pascal.chars();
        chars
            .next()
            .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
            .unwrap_or_default()
    }

    fn none(&self) -> &'static str {
        "undefined"
    }

    /// ISO 8601, as the administration client takes a duration.
    fn duration(&self, ms: Duration) -> String {
        self.lit(&crate::emulator::format_iso(ms))
    }

    fn time_to_live(&self, ms: Duration) -> String {
        ms.to_string()
    }

    /// One number type, which rhea sends as an AMQP int when it fits 32 bits, so a long is
    /// written as its number; a uuid as its text.
    fn value(&self, v: &PropertyValue) -> String {
        match v {
            PropertyValue::String(s) => self.lit(s),
            PropertyValue::Int(n) => n.to_string(),
            PropertyValue::Long(n) => n.to_string(),
            PropertyValue::Double(d) if d.is_nan() => "NaN".into(),
            PropertyValue::Double(d) if d.is_infinite() && *d > 0.0 => "Infinity".into(),
            PropertyValue::Double(d) if d.is_infinite() => "-Infinity".into(),
            PropertyValue::Double(d) => sbp_engine::time::format_decimal(*d, 6),
            PropertyValue::Bool(b) => b.to_string(),
            PropertyValue::Null => "null".into(),
            PropertyValue::Timestamp(ms) => format!(
                "new Date({})",
                self.lit(&sbp_engine::utc::format_utc(0, *ms))
            ),
            PropertyValue::Uuid(_) => self.lit(&v.to_string()),
        }
    }

    fn prelude(&self, out: &mut Out, title: &str, words: &[(&str, Text)]) {
        out.say(text!(
            "code-header",
            title = title,
            sdk = "@azure/service-bus"
        ));
        out.note("npm install @azure/service-bus long");
        out.line("const { ServiceBusClient, ServiceBusAdministrationClient } = require(\"@azure/service-bus\");");
        out.line("const Long = require(\"long\");");
        out.line("");
        out.settings(
            [
                "const connection = process.env.SERVICEBUS_CONNECTION || \"<connection string>\";",
                "const adminConnection = process.env.SERVICEBUS_ADMIN_CONNECTION;",
                "const SPEED = Number(process.env.SBP_SPEED || \"1\");",
            ],
            words,
            "const {name} = {lit};",
            code_text::javascript_literal,
        );
        out.line("const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));");
        out.say(text!("code-retries"));
        out.line("");
        out.line("async function main() {");
        out.indent = 1;
        out.lines(include_str!("templates/javascript-helpers.js"));
    }

    fn actors(&self) -> &'static str {
        include_str!("templates/javascript-actors.js")
    }

    fn work(&self, p: Option<&ProcessingDef>) -> String {
        super::target::work_in_ms(p, "random()", "Math.log")
    }

    fn start_producer(&self, p: &Producer) -> String {
        format!("startProducer({});", p.arguments(None, ("[", "]")))
    }

    fn start_consumers(&self, c: &Consumers) -> String {
        let peek_lock = self.boolean(c.mode == ModeDef::PeekLock);
        format!(
            "startConsumers({});",
            c.arguments(peek_lock, c.restart_ms.to_string())
        )
    }

    fn stop_actors(&self, name: &str) -> String {
        format!("stopActors({name});")
    }

    fn end(&self, out: &mut Out, actors: bool) {
        out.line("");
        if actors {
            out.line("for (const stop of stops.values()) stop.stopped = true;");
            out.line("await Promise.all(actors);");
        }
        out.lines(include_str!("templates/javascript-end.js"));
        out.indent = 0;
        out.line("}");
        out.line("");
        out.line("main().catch((e) => { console.error(e); process.exit(1); });");
    }

    fn ensure(&self, out: &mut Out, kind: &str, entity: &Entity, var: &str, made: &str) {
        let names = entity.arguments();
        let lower = kind.to_ascii_lowercase();
        out.line(&format!("if (!(await admin.{lower}Exists({names}))) {{"));
        out.indent += 1;
        out.lines(made);
        out.indent -= 1;
        out.line("}");
        out.line("{");
        out.indent += 1;
        out.line(&self.read_settings(kind, entity, var));
    }

    fn ensure_end(&self, out: &mut Out) {
        out.indent -= 1;
        out.line("}");
    }

    fn setting(&self, var: &str, pascal: &str, setting: Setting) -> String {
        let member = self.member(pascal);
        match setting {
            Setting::Duration => format!("isoMs({var}.{member})"),
            Setting::Flag | Setting::Count => format!("String({var}.{member})"),
        }
    }

    fn exists(&self, kind: &str, entity: &Entity, showed: &str, until: i64) -> String {
        let lower = kind.to_ascii_lowercase();
        format!(
            "await present(() => admin.{lower}Exists({}), {showed}, {until})",
            entity.arguments()
        )
    }

    fn read_settings(&self, kind: &str, entity: &Entity, var: &str) -> String {
        format!(
            "const {var} = await admin.get{kind}({});",
            entity.arguments()
        )
    }

    fn print(&self, text: &str) -> String {
        format!("console.log({text});")
    }

    fn admin_open(&self) -> &'static str {
        "if (admin) {"
    }

    fn admin_close(&self, out: &mut Out, otherwise: &str) {
        out.line(&format!("}} else {otherwise}"));
    }

    fn existing(&self) -> &'static str {
        "console.log(EXISTING);"
    }

    fn stop_checking(&self, why: &str) -> String {
        format!("{{ checking = false; console.log({why}); }}")
    }

    fn create(&self, kind: &str, target: &str, options: &[(String, String)]) -> String {
        let fields: Vec<String> = options.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        format!(
            "await admin.create{kind}({target}, {{ {} }});",
            fields.join(", ")
        )
    }

    fn add_rule(&self, topic: &str, subscription: &str, rule: &Rule) -> String {
        let action = rule
            .action
            .as_ref()
            .map(|a| format!(", {a}"))
            .unwrap_or_default();
        format!(
            "await admin.createRule({topic}, {subscription}, {}, {}{action});",
            rule.name, rule.filter
        )
    }

    fn remove_rule(&self, topic: &str, subscription: &str, name: &str) -> String {
        format!("await admin.deleteRule({topic}, {subscription}, {name});")
    }

    fn sql_action(&self, action: &str) -> String {
        format!("{{ sqlExpression: {action} }}")
    }

    fn sql_filter(&self, filter: &str) -> String {
        format!("{{ sqlExpression: {filter} }}")
    }

    fn true_filter(&self) -> String {
        "{ sqlExpression: \"1=1\" }".into()
    }

    fn correlation_filter(
        &self,
        fields: &[(String, String)],
        properties: &BTreeMap<String, PropertyValue>,
    ) -> String {
        let mut f: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        if !properties.is_empty() {
            f.push(format!(
                "applicationProperties: {}",
                self.dictionary(properties)
            ));
        }
        format!("{{ {} }}", f.join(", "))
    }

    fn update(&self, kind: &str, entity: &Entity) -> (String, String) {
        (
            format!(
                "const properties = await admin.get{kind}({});",
                entity.arguments()
            ),
            format!("await admin.update{kind}(properties);"),
        )
    }

    fn delete(&self, entity: &Entity) -> String {
        match entity {
            Entity::Subscription(t, n) => format!("await admin.deleteSubscription({t}, {n});"),
            Entity::Path(p) => format!("await admin.deleteQueue({p}); // or deleteTopic"),
        }
    }

    fn wait(&self, until: i64, on: &str) -> String {
        format!("await waitUntil({until}); // {on}")
    }

    fn mode(&self, m: ModeDef) -> &'static str {
        match m {
            ModeDef::PeekLock => "\"peekLock\"",
            ModeDef::ReceiveAndDelete => "\"receiveAndDelete\"",
        }
    }

    fn receiver(&self, name: &str, path: &str, m: ModeDef) -> String {
        format!("receiver({name}, {path}, {})", self.mode(m))
    }

    fn sender(&self, to: &str, _kind: SendTo) -> String {
        format!("sender({to})")
    }

    fn receive(&self, rx: &str, count: u32, expected: usize, until: i64) -> String {
        format!("await receive({rx}, {count}, {expected}, {until})")
    }

    fn peek(&self, rx: &str, count: u32, from_seq: Option<String>) -> String {
        match from_seq {
            Some(s) => format!("await {rx}.peekMessages({count}, {{ fromSequenceNumber: {s} }})"),
            None => format!("await {rx}.peekMessages({count})"),
        }
    }

    fn receive_deferred(&self, rx: &str, seqs: &[String]) -> String {
        format!("await {rx}.receiveDeferredMessages([{}])", seqs.join(", "))
    }

    fn sequence_number(&self, seq: u64) -> String {
        format!("Long.fromNumber({seq})")
    }

    fn close_receiver(&self, rx: &str) -> String {
        format!("await {rx}.close();")
    }

    fn got(&self, out: &mut Out, call: Option<&str>, expr: &str) {
        out.line("{");
        out.indent += 1;
        out.line(&format!("const got = {expr};"));
        if let Some(key) = call {
            out.line(&format!("calls.set({key}, got);"));
        }
    }

    fn settlement(&self, s: Settlement) -> String {
        match s {
            Settlement::Complete => "completeMessage(m)".into(),
            Settlement::Abandon => "abandonMessage(m)".into(),
            Settlement::Defer => "deferMessage(m)".into(),
            Settlement::RenewLock => "renewMessageLock(m)".into(),
            Settlement::DeadLetter(reason, description) => format!(
                "deadLetterMessage(m, {{ deadLetterReason: {reason}, deadLetterErrorDescription: {description} }})"
            ),
        }
    }

    fn settle(&self, out: &mut Out, call: &str, index: usize, rx: &str, settlement: &str) {
        out.line("{");
        out.line(&format!("    const m = message({call}, {index});"));
        out.line(&format!("    if (m) await {rx}.{settlement};"));
        out.line("}");
    }

    fn cancel_scheduled(&self, sender: &str, key: &str) -> String {
        format!("await {sender}.cancelScheduledMessages(scheduledNumbers.get({key}));")
    }

    fn joined(&self, text: &str, number: &str) -> String {
        format!("{text} + ({number})")
    }

    fn message(
        &self,
        body: String,
        fields: &[(String, String)],
        properties: &BTreeMap<String, PropertyValue>,
    ) -> String {
        let mut f: Vec<String> = vec![format!("body: {body}")];
        f.extend(fields.iter().map(|(k, v)| format!("{k}: {v}")));
        if !properties.is_empty() {
            f.push(format!(
                "applicationProperties: {}",
                self.dictionary(properties)
            ));
        }
        format!("{{ {} }}", f.join(", "))
    }

    fn send(&self, sender: &str, message: &str) -> String {
        format!("await {sender}.sendMessages({message});")
    }

    fn schedule(&self, sender: &str, message: &str, key: &str, at: i64) -> String {
        format!("scheduledNumbers.set({key}, (await {sender}.scheduleMessages({message}, new Date(start + {at} / SPEED)))[0]);")
    }

    fn repeat(&self, out: &mut Out, n: u32, call: &str) {
        out.line(&format!("for (let i = 1; i <= {n}; i++) {{"));
        out.indent += 1;
        out.line(call);
        out.indent -= 1;
        out.line("}");
    }

    fn session_key(&self, name: &str, path: &str) -> String {
        self.lit(&format!("{name}|{path}|peekLock"))
    }

    fn accept_session(&self, key: &str, entity: &Entity, id: Option<&str>) -> String {
        let entity = entity.arguments();
        let accept = match id {
            Some(id) => {
                format!("acceptSession({entity}, {id}, {{ maxAutoLockRenewalDurationInMs: 0 }})")
            }
            None => format!("acceptNextSession({entity}, {{ maxAutoLockRenewalDurationInMs: 0 }})"),
        };
        format!("receivers.set({key}, await client.{accept});")
    }

    fn session_op(&self, op: SessionOpDef, rx: &str, _key: &str, state: &str) -> String {
        match op {
            SessionOpDef::RenewLock => format!("await {rx}.renewSessionLock();"),
            SessionOpDef::GetState => format!("console.log(await {rx}.getSessionState());"),
            SessionOpDef::SetState => format!("await {rx}.setSessionState({state});"),
            SessionOpDef::Accept | SessionOpDef::Close => format!("await {rx}.close();"),
        }
    }

    fn session_id(&self, rx: &str) -> String {
        format!("String({rx}.sessionId)")
    }

    fn forget_receiver(&self, key: &str) -> Option<String> {
        Some(format!("receivers.delete({key});"))
    }

    fn step_open(&self, what: &str, expected: Option<&str>) -> String {
        format!(
            "await step({what}, {}, async () => {{",
            expected.unwrap_or("undefined")
        )
    }

    fn step_form(&self) -> &'static str {
        "`await step(..., async () => { ... })`"
    }

    fn check(&self, what: &str, showed: &str, returned: &str) -> String {
        format!("check({what}, {showed}, {returned});")
    }

    fn counted(&self, path: &str, shown: &str, until: i64) -> String {
        format!("await counted({path}, {shown}, {until})")
    }

    fn count(&self, var: &str) -> String {
        format!("String({var}.length)")
    }

    fn each(&self, var: &str, field: Field) -> String {
        let f = self.member(field.pascal());
        format!("{var}.map((m) => String(m.{f} ?? \"\")).join(\",\")")
    }

    fn peeked(&self, var: &str, path: &str, seq: &str) -> String {
        format!("const {var} = await peeked({path}, {seq});")
    }

    fn one(&self, var: &str, field: Field) -> String {
        let f = self.member(field.pascal());
        format!("{var} === undefined ? \"not there\" : String({var}.{f} ?? \"\")")
    }
}
