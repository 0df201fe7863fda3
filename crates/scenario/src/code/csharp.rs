//! C#, with Azure.Messaging.ServiceBus: top-level statements, `await` on every call, the
//! administration client's `Create…Options`, and `Check` comparing each reply.
use super::target::{
    Consumers, Entity, Field, Out, Producer, Rule, SendTo, Setting, Settlement, Target,
};
use crate::code_text;
use crate::model::{ModeDef, ProcessingDef, SessionOpDef};
use crate::Text;
use sbp_engine::text;
use sbp_engine::time::Duration;
use sbp_engine::PropertyValue;
use std::collections::BTreeMap;

pub(super) struct CSharp;

/// C#'s one `ApplicationProperties = { [k] = v, ... }` initializer (a second one would not
/// compile: CS1912), or none.
fn properties(t: &CSharp, map: &BTreeMap<String, PropertyValue>) -> Option<String> {
    let pairs: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("[{}] = {}", t.lit(k), t.value(v)))
        .collect();
    (!pairs.is_empty()).then(|| format!("ApplicationProperties = {{ {} }}", pairs.join(", ")))
}

/// `fields` and application properties as an object initializer's members.
fn initializer(
    t: &CSharp,
    fields: &[(String, String)],
    map: &BTreeMap<String, PropertyValue>,
) -> String {
    let mut f: Vec<String> = fields.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    f.extend(properties(t, map));
    f.join(", ")
}

fn rule_options(rule: &Rule) -> String {
    let action = rule
        .action
        .as_ref()
        .map(|a| format!(" {{ Action = {a} }}"))
        .unwrap_or_default();
    format!(
        "new CreateRuleOptions({}, {}){action}",
        rule.name, rule.filter
    )
}

fn options(kind: &str, target: &str, options: &[(String, String)]) -> String {
    let fields: Vec<String> = options.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!(
        "new Create{kind}Options({target}) {{ {} }}",
        fields.join(", ")
    )
}

impl Target for CSharp {
    fn comment(&self) -> &'static str {
        "//"
    }

    fn lit(&self, s: &str) -> String {
        code_text::csharp_literal(s)
    }

    fn base64(&self, b64: &str) -> String {
        format!("Convert.FromBase64String({b64})")
    }

    fn body(&self, body: &sbp_engine::Body) -> String {
        match body.text() {
            Some(_) => self.bytes(body),
            None => format!("new BinaryData({})", self.bytes(body)),
        }
    }

    fn repeated_body(&self, size: u64) -> String {
        format!("new string('x', {size})")
    }

    fn member(&self, pascal: &str) -> String {
        pascal.to_string()
    }

    fn none(&self) -> &'static str {
        "null"
    }

    fn duration(&self, ms: Duration) -> String {
        format!("TimeSpan.FromMilliseconds({ms})")
    }

    /// Each type said: `10`, `10L`, `1.5`, `DateTimeOffset.Parse(...)`, `Guid.Parse(...)`.
    fn value(&self, v: &PropertyValue) -> String {
        match v {
            PropertyValue::String(s) => self.lit(s),
            PropertyValue::Int(n) => n.to_string(),
            PropertyValue::Long(n) => format!("{n}L"),
            PropertyValue::Double(d) if d.is_nan() => "double.NaN".into(),
            PropertyValue::Double(d) if d.is_infinite() && *d > 0.0 => {
                "double.PositiveInfinity".into()
            }
            PropertyValue::Double(d) if d.is_infinite() => "double.NegativeInfinity".into(),
            PropertyValue::Double(d) => super::target::decimal_point(*d),
            PropertyValue::Bool(b) => b.to_string(),
            PropertyValue::Null => "null".into(),
            PropertyValue::Timestamp(ms) => format!(
                "DateTimeOffset.Parse({})",
                self.lit(&sbp_engine::utc::format_utc(0, *ms))
            ),
            PropertyValue::Uuid(_) => format!("Guid.Parse({})", self.lit(&v.to_string())),
        }
    }

    fn prelude(&self, out: &mut Out, title: &str, words: &[(&str, Text)]) {
        out.say(text!(
            "code-header",
            title = title,
            sdk = "Azure.Messaging.ServiceBus"
        ));
        out.note("dotnet add package Azure.Messaging.ServiceBus");
        out.line("using Azure.Messaging.ServiceBus;");
        out.line("using Azure.Messaging.ServiceBus.Administration;");
        out.line("");
        out.settings(
            [
                "var connection = Environment.GetEnvironmentVariable(\"SERVICEBUS_CONNECTION\") ?? \"<connection string>\";",
                "var adminConnection = Environment.GetEnvironmentVariable(\"SERVICEBUS_ADMIN_CONNECTION\");",
                "var SPEED = double.Parse(Environment.GetEnvironmentVariable(\"SBP_SPEED\") ?? \"1\", System.Globalization.CultureInfo.InvariantCulture);",
            ],
            words,
            "const string {name} = {lit};",
            code_text::csharp_literal,
        );
        out.say(text!("code-retries"));
        out.lines(include_str!("templates/csharp-helpers.cs"));
    }

    fn actors(&self) -> &'static str {
        include_str!("templates/csharp-actors.cs")
    }

    fn work(&self, p: Option<&ProcessingDef>) -> String {
        super::target::work_in_ms(p, "Draw()", "Math.Log")
    }

    fn start_producer(&self, p: &Producer) -> String {
        format!("StartProducer({});", p.arguments(None, ("(", ")")))
    }

    fn start_consumers(&self, c: &Consumers) -> String {
        let peek_lock = self.boolean(c.mode == ModeDef::PeekLock);
        format!(
            "StartConsumers({});",
            c.arguments(peek_lock, c.restart_ms.to_string())
        )
    }

    fn stop_actors(&self, name: &str) -> String {
        format!("StopActors({name});")
    }

    fn end(&self, out: &mut Out, actors: bool) {
        out.line("");
        if actors {
            out.line("foreach (var stop in stops.Values) stop.Cancel();");
            out.line("await Task.WhenAll(actors);");
        }
        out.lines(include_str!("templates/csharp-end.cs"));
    }

    fn ensure(&self, out: &mut Out, kind: &str, entity: &Entity, var: &str, made: &str) {
        let names = entity.arguments();
        out.line(&format!(
            "if (!(await admin.{kind}ExistsAsync({names})).Value)"
        ));
        out.line("{");
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
        match setting {
            Setting::Duration => format!("((long){var}.{pascal}.TotalMilliseconds).ToString()"),
            Setting::Flag => format!("{var}.{pascal}.ToString().ToLowerInvariant()"),
            Setting::Count => format!("{var}.{pascal}.ToString()"),
        }
    }

    fn exists(&self, kind: &str, entity: &Entity, showed: &str, until: i64) -> String {
        format!(
            "await Present(async () => (await admin.{kind}ExistsAsync({})).Value, {showed}, {until})",
            entity.arguments()
        )
    }

    fn read_settings(&self, kind: &str, entity: &Entity, var: &str) -> String {
        format!(
            "var {var} = (await admin.Get{kind}Async({})).Value;",
            entity.arguments()
        )
    }

    fn print(&self, text: &str) -> String {
        format!("Console.WriteLine({text});")
    }

    fn admin_open(&self) -> &'static str {
        "if (admin is not null)\n{"
    }

    fn admin_close(&self, out: &mut Out, otherwise: &str) {
        out.line("}");
        out.line(&format!("else {otherwise}"));
    }

    fn existing(&self) -> &'static str {
        "Console.WriteLine(EXISTING);"
    }

    fn stop_checking(&self, why: &str) -> String {
        format!("{{ checking = false; Console.WriteLine({why}); }}")
    }

    fn create(&self, kind: &str, target: &str, o: &[(String, String)]) -> String {
        format!(
            "await admin.Create{kind}Async({});",
            options(kind, target, o)
        )
    }

    fn create_subscription_with_rule(
        &self,
        target: &str,
        o: &[(String, String)],
        rule: &Rule,
    ) -> Option<String> {
        Some(format!(
            "await admin.CreateSubscriptionAsync({}, {});",
            options("Subscription", target, o),
            rule_options(rule)
        ))
    }

    fn add_rule(&self, topic: &str, subscription: &str, rule: &Rule) -> String {
        format!(
            "await admin.CreateRuleAsync({topic}, {subscription}, {});",
            rule_options(rule)
        )
    }

    fn remove_rule(&self, topic: &str, subscription: &str, name: &str) -> String {
        format!("await admin.DeleteRuleAsync({topic}, {subscription}, {name});")
    }

    fn sql_action(&self, action: &str) -> String {
        format!("new SqlRuleAction({action})")
    }

    fn sql_filter(&self, filter: &str) -> String {
        format!("new SqlRuleFilter({filter})")
    }

    fn true_filter(&self) -> String {
        "new TrueRuleFilter()".into()
    }

    fn correlation_filter(
        &self,
        fields: &[(String, String)],
        properties: &BTreeMap<String, PropertyValue>,
    ) -> String {
        format!(
            "new CorrelationRuleFilter {{ {} }}",
            initializer(self, fields, properties)
        )
    }

    fn update(&self, kind: &str, entity: &Entity) -> (String, String) {
        let name = entity.arguments();
        (
            format!("var properties = (await admin.Get{kind}Async({name})).Value;"),
            format!("await admin.Update{kind}Async(properties);"),
        )
    }

    fn delete(&self, entity: &Entity) -> String {
        match entity {
            Entity::Subscription(t, n) => format!("await admin.DeleteSubscriptionAsync({t}, {n});"),
            Entity::Path(p) => format!("await admin.DeleteQueueAsync({p}); // or DeleteTopicAsync"),
        }
    }

    fn wait(&self, until: i64, on: &str) -> String {
        format!("await WaitUntil({until}); // {on}")
    }

    fn mode(&self, m: ModeDef) -> &'static str {
        match m {
            ModeDef::PeekLock => "ServiceBusReceiveMode.PeekLock",
            ModeDef::ReceiveAndDelete => "ServiceBusReceiveMode.ReceiveAndDelete",
        }
    }

    fn receiver(&self, name: &str, path: &str, m: ModeDef) -> String {
        format!("Receiver({name}, {path}, {})", self.mode(m))
    }

    fn sender(&self, to: &str, _kind: SendTo) -> String {
        format!("Sender({to})")
    }

    fn receive(&self, rx: &str, count: u32, expected: usize, until: i64) -> String {
        format!("await ReceiveAsync({rx}, {count}, {expected}, {until})")
    }

    fn peek(&self, rx: &str, count: u32, from_seq: Option<String>) -> String {
        match from_seq {
            Some(s) => format!("await {rx}.PeekMessagesAsync({count}, {s})"),
            None => format!("await {rx}.PeekMessagesAsync({count})"),
        }
    }

    fn receive_deferred(&self, rx: &str, seqs: &[String]) -> String {
        format!(
            "await {rx}.ReceiveDeferredMessagesAsync(new long[] {{ {} }})",
            seqs.join(", ")
        )
    }

    fn received_sequence_number(&self, call: &str, i: usize) -> String {
        format!("Seq({call}, {i})")
    }

    fn close_receiver(&self, rx: &str) -> String {
        format!("await {rx}.CloseAsync();")
    }

    fn got(&self, out: &mut Out, call: Option<&str>, expr: &str) {
        out.line("{");
        out.indent += 1;
        out.line(&format!("var got = {expr};"));
        if let Some(key) = call {
            out.line(&format!("calls[{key}] = got;"));
        }
    }

    fn settlement(&self, s: Settlement) -> String {
        match s {
            Settlement::Complete => "CompleteMessageAsync(m)".into(),
            Settlement::Abandon => "AbandonMessageAsync(m)".into(),
            Settlement::Defer => "DeferMessageAsync(m)".into(),
            Settlement::RenewLock => "RenewMessageLockAsync(m)".into(),
            Settlement::DeadLetter(reason, description) => {
                format!("DeadLetterMessageAsync(m, {reason}, {description})")
            }
        }
    }

    fn settle(&self, out: &mut Out, call: &str, index: usize, rx: &str, settlement: &str) {
        out.line("{");
        out.line(&format!("    var m = Message({call}, {index});"));
        out.line(&format!("    if (m is not null) await {rx}.{settlement};"));
        out.line("}");
    }

    fn cancel_scheduled(&self, sender: &str, key: &str) -> String {
        format!("await {sender}.CancelScheduledMessageAsync(scheduled[{key}]);")
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
        format!(
            "new ServiceBusMessage({body}) {{ {} }}",
            initializer(self, fields, properties)
        )
    }

    fn send(&self, sender: &str, message: &str) -> String {
        format!("await {sender}.SendMessageAsync({message});")
    }

    fn schedule(&self, sender: &str, message: &str, key: &str, at: i64) -> String {
        format!("scheduled[{key}] = await {sender}.ScheduleMessageAsync({message}, start.AddMilliseconds({at} / SPEED));")
    }

    fn repeat(&self, out: &mut Out, n: u32, call: &str) {
        out.line(&format!("for (var i = 1; i <= {n}; i++)"));
        out.line("{");
        out.indent += 1;
        out.line(call);
        out.indent -= 1;
        out.line("}");
    }

    fn session_key(&self, name: &str, path: &str) -> String {
        self.lit(&format!("{name}|{path}|PeekLock"))
    }

    fn accept_session(&self, key: &str, entity: &Entity, id: Option<&str>) -> String {
        let entity = entity.arguments();
        let accept = match id {
            Some(id) => format!("AcceptSessionAsync({entity}, {id})"),
            None => format!("AcceptNextSessionAsync({entity})"),
        };
        format!("receivers[{key}] = await client.{accept};")
    }

    fn session_op(&self, op: SessionOpDef, rx: &str, _key: &str, state: &str) -> String {
        let call = match op {
            SessionOpDef::RenewLock => "RenewSessionLockAsync()".to_string(),
            SessionOpDef::GetState => "GetSessionStateAsync()".to_string(),
            SessionOpDef::SetState => format!("SetSessionStateAsync(new BinaryData({state}))"),
            SessionOpDef::Accept | SessionOpDef::Close => "CloseAsync()".to_string(),
        };
        format!("await ((ServiceBusSessionReceiver){rx}).{call};")
    }

    fn session_id(&self, rx: &str) -> String {
        format!("((ServiceBusSessionReceiver){rx}).SessionId")
    }

    fn forget_receiver(&self, key: &str) -> Option<String> {
        Some(format!("receivers.Remove({key});"))
    }

    fn step_open(&self, what: &str, expected: Option<&str>) -> String {
        format!(
            "await Step({what}, {}, async () =>\n{{",
            expected.unwrap_or("null")
        )
    }

    fn step_form(&self) -> &'static str {
        "`await Step(..., async () => { ... })`"
    }

    fn check(&self, what: &str, showed: &str, returned: &str) -> String {
        format!("Check({what}, {showed}, {returned});")
    }

    fn counted(&self, path: &str, shown: &str, until: i64) -> String {
        format!("await Counted({path}, {shown}, {until})")
    }

    fn count(&self, var: &str) -> String {
        format!("{var}.Count.ToString()")
    }

    fn each(&self, var: &str, field: Field) -> String {
        let f = self.member(field.pascal());
        format!("string.Join(\",\", {var}.Select(m => m.{f}))")
    }

    fn delivery_count_below_net(&self) -> u32 {
        0
    }

    fn peeked(&self, var: &str, path: &str, seq: &str) -> String {
        format!("var {var} = await Peeked({path}, {seq});")
    }

    fn one(&self, var: &str, field: Field) -> String {
        let f = self.member(field.pascal());
        format!("{var} is null ? \"not there\" : $\"{{{var}.{f}}}\"")
    }
}
