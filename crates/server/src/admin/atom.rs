//! The entity descriptions of the management API, both ways: an entity of the engine written as
//! the ATOM entry the service answers with (`QueueDescription`, `TopicDescription`,
//! `SubscriptionDescription`, `RuleDescription`, `NamespaceInfo`), and a request's description
//! read into the scenario's terms (settings, rules), so a change made here is a step of the run.
//!
//! Element names, namespaces and the duration format are the service's as the SDKs' serializers
//! write and read them: azure-sdk-for-python `azure/servicebus/management/_generated/models`
//! and `_xml_workaround_policy.py`, azure-sdk-for-js `src/serializers/*.ts` and
//! `src/util/atomXmlHelper.ts` (docs/SERVE.md cites each).
use super::xml::{escape, escape_attribute, Element};
use sbp_engine::entity::{Entity, EntityKind, SubscriptionRule};
use sbp_engine::PropertyValue;
use sbp_scenario::emulator::{format_iso, parse_iso};
use sbp_scenario::{Dur, RuleDef, SettingsDef};
use std::fmt::Write as _;

/// The namespace of the descriptions.
pub const SB: &str = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect";
/// The namespace of `i:type` and `i:nil`.
pub const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";
/// The namespace of the count details.
const COUNTS: &str = "http://schemas.microsoft.com/netservices/2011/06/servicebus";
/// The namespace of typed property values.
const XSD: &str = "http://www.w3.org/2001/XMLSchema";

/// What an entry is written with: the namespace's address (`https://localhost:7443`), and the
/// instants on the wall clock.
pub struct Writing<'a> {
    pub base: &'a str,
    pub clock: crate::broker::Clock,
    pub now: sbp_engine::time::Instant,
    pub tier: sbp_engine::Tier,
}

impl Writing<'_> {
    /// An instant of the engine on the wall clock, as the service writes a time.
    pub fn instant(&self, at: sbp_engine::time::Instant) -> String {
        sbp_engine::utc::format_utc(self.clock.utc(at), 0)
    }

    /// An ATOM entry around `content` (a description), titled `title`, at `path`.
    pub fn entry(&self, path: &str, title: &str, created: &str, content: &str) -> String {
        format!(
            "<entry xmlns=\"http://www.w3.org/2005/Atom\"><id>{base}/{path}</id><title \
             type=\"text\">{title}</title><published>{created}</published><updated>{updated}</updated><author><name>sbp</name></author><link \
             rel=\"self\" href=\"{base}/{path}\"/><content \
             type=\"application/xml\">{content}</content></entry>",
            base = escape_attribute(self.base),
            path = escape_attribute(path),
            title = escape(title),
            updated = self.instant(self.now),
        )
    }

    /// A feed of `entries` at `path` (a page of a list, with its `next` page's path when more
    /// remain; or what a GET of a name that does not exist answers).
    pub fn feed(&self, path: &str, title: &str, entries: &[String], next: Option<&str>) -> String {
        let mut out = format!(
            "<feed xmlns=\"http://www.w3.org/2005/Atom\"><title type=\"text\">{}</title><id>{}/{}</id><updated>{}</updated><link rel=\"self\" href=\"{}/{}\"/>",
            escape(title),
            escape_attribute(self.base),
            escape_attribute(path),
            self.instant(self.now),
            escape_attribute(self.base),
            escape_attribute(path),
        );
        if let Some(next) = next {
            let _ = write!(
                out,
                "<link rel=\"next\" href=\"{}/{}\"/>",
                escape_attribute(self.base),
                escape_attribute(next)
            );
        }
        for e in entries {
            out.push_str(e);
        }
        out.push_str("</feed>");
        out
    }

    /// An entity's entry: a queue's, topic's or subscription's description with its settings
    /// and its counts now, at its path as the service writes it, titled with its name (a
    /// subscription's own, as the SDKs list it).
    pub fn entity(&self, e: &Entity) -> String {
        let path = canonical(&e.path);
        let title = match e.kind {
            EntityKind::Subscription { .. } => e.path.rsplit('/').next().unwrap_or(&e.path),
            EntityKind::Queue | EntityKind::Topic => &e.path,
        };
        let created = self.instant(e.created_at);
        let s = &e.settings;
        let mut d = String::new();
        let counts = e.counts(self.now);
        let dlq = e.dlq_counts(self.now);
        let size = e.stored_bytes();
        let count = counts.active + counts.locked + counts.scheduled + counts.deferred;
        let count_details = format!(
            "<CountDetails xmlns:d2p1=\"{COUNTS}\"><d2p1:ActiveMessageCount>{}</d2p1:ActiveMessageCount><d2p1:DeadLetterMessageCount>{}</d2p1:DeadLetterMessageCount><d2p1:ScheduledMessageCount>{}</d2p1:ScheduledMessageCount><d2p1:TransferMessageCount>0</d2p1:TransferMessageCount><d2p1:TransferDeadLetterMessageCount>0</d2p1:TransferDeadLetterMessageCount></CountDetails>",
            counts.active + counts.locked + counts.deferred,
            dlq.active + dlq.locked + dlq.deferred + dlq.scheduled,
            counts.scheduled,
        );
        let times = format!(
            "<CreatedAt>{created}</CreatedAt><UpdatedAt>{created}</UpdatedAt><AccessedAt>{}</AccessedAt>",
            self.instant(e.last_activity)
        );
        let host = self.base.split_once("://").map_or(self.base, |(_, h)| h);
        let forward = |name: &str, to: &Option<String>| match to {
            Some(to) => format!("<{name}>sb://{}/{}</{name}>", escape(host), escape(to)),
            None => String::new(),
        };
        let kind = match &e.kind {
            EntityKind::Queue => "QueueDescription",
            EntityKind::Topic => "TopicDescription",
            EntityKind::Subscription { .. } => "SubscriptionDescription",
        };
        let _ = write!(d, "<{kind} xmlns=\"{SB}\" xmlns:i=\"{XSI}\">");
        let ttl = format_iso(s.default_message_time_to_live);
        let idle = format_iso(s.auto_delete_on_idle);
        let window = format_iso(s.duplicate_detection_history_time_window);
        let mb = s.max_size_bytes / (1024 * 1024);
        let kb = self.max_message_kb();
        match &e.kind {
            EntityKind::Queue => {
                let _ = write!(
                    d,
                    "<LockDuration>{}</LockDuration><MaxSizeInMegabytes>{mb}</MaxSizeInMegabytes><RequiresDuplicateDetection>{}</RequiresDuplicateDetection><RequiresSession>{}</RequiresSession><DefaultMessageTimeToLive>{ttl}</DefaultMessageTimeToLive><DeadLetteringOnMessageExpiration>{}</DeadLetteringOnMessageExpiration><DuplicateDetectionHistoryTimeWindow>{window}</DuplicateDetectionHistoryTimeWindow><MaxDeliveryCount>{}</MaxDeliveryCount><EnableBatchedOperations>true</EnableBatchedOperations><SizeInBytes>{size}</SizeInBytes><MessageCount>{count}</MessageCount><IsAnonymousAccessible>false</IsAnonymousAccessible><AuthorizationRules/><Status>Active</Status>{}{times}<SupportOrdering>true</SupportOrdering>{count_details}<AutoDeleteOnIdle>{idle}</AutoDeleteOnIdle><EnablePartitioning>false</EnablePartitioning><EntityAvailabilityStatus>Available</EntityAvailabilityStatus>{}<EnableExpress>false</EnableExpress><MaxMessageSizeInKilobytes>{kb}</MaxMessageSizeInKilobytes>",
                    format_iso(s.lock_duration),
                    s.requires_duplicate_detection,
                    s.requires_session,
                    s.dead_lettering_on_message_expiration,
                    s.max_delivery_count,
                    forward("ForwardTo", &s.forward_to),
                    forward("ForwardDeadLetteredMessagesTo", &s.forward_dead_lettered_messages_to),
                );
            }
            EntityKind::Topic => {
                let _ = write!(
                    d,
                    "<DefaultMessageTimeToLive>{ttl}</DefaultMessageTimeToLive><MaxSizeInMegabytes>{mb}</MaxSizeInMegabytes><RequiresDuplicateDetection>{}</RequiresDuplicateDetection><DuplicateDetectionHistoryTimeWindow>{window}</DuplicateDetectionHistoryTimeWindow><EnableBatchedOperations>true</EnableBatchedOperations><SizeInBytes>{size}</SizeInBytes><FilteringMessagesBeforePublishing>false</FilteringMessagesBeforePublishing><IsAnonymousAccessible>false</IsAnonymousAccessible><AuthorizationRules/><Status>Active</Status>{times}<SupportOrdering>true</SupportOrdering>{count_details}<AutoDeleteOnIdle>{idle}</AutoDeleteOnIdle><EnablePartitioning>false</EnablePartitioning><IsExpress>false</IsExpress><EntityAvailabilityStatus>Available</EntityAvailabilityStatus><EnableExpress>false</EnableExpress><SubscriptionCount>{}</SubscriptionCount><MaxMessageSizeInKilobytes>{kb}</MaxMessageSizeInKilobytes>",
                    s.requires_duplicate_detection,
                    e.subscriptions.len(),
                );
            }
            EntityKind::Subscription { .. } => {
                let _ = write!(
                    d,
                    "<LockDuration>{}</LockDuration><RequiresSession>{}</RequiresSession><DefaultMessageTimeToLive>{ttl}</DefaultMessageTimeToLive><DeadLetteringOnMessageExpiration>{}</DeadLetteringOnMessageExpiration><DeadLetteringOnFilterEvaluationExceptions>true</DeadLetteringOnFilterEvaluationExceptions><MessageCount>{count}</MessageCount><MaxDeliveryCount>{}</MaxDeliveryCount><EnableBatchedOperations>true</EnableBatchedOperations><Status>Active</Status>{}{times}{count_details}<AutoDeleteOnIdle>{idle}</AutoDeleteOnIdle>{}<EntityAvailabilityStatus>Available</EntityAvailabilityStatus>",
                    format_iso(s.lock_duration),
                    s.requires_session,
                    s.dead_lettering_on_message_expiration,
                    s.max_delivery_count,
                    forward("ForwardTo", &s.forward_to),
                    forward("ForwardDeadLetteredMessagesTo", &s.forward_dead_lettered_messages_to),
                );
            }
        }
        let _ = write!(d, "</{kind}>");
        self.entry(&path, title, &created, &d)
    }

    /// The tier's largest message in kilobytes (SEND-04).
    fn max_message_kb(&self) -> u64 {
        self.tier.max_message_size() / 1024
    }

    /// The entry of `subscription`'s rule `name` (the engine keeps no time for a rule: its
    /// subscription's creation stands for it).
    pub fn rule(&self, subscription: &Entity, name: &str, rule: &SubscriptionRule) -> String {
        let path = format!("{}/Rules/{name}", canonical(&subscription.path));
        let created = self.instant(subscription.created_at);
        let mut d = format!("<RuleDescription xmlns=\"{SB}\" xmlns:i=\"{XSI}\">");
        match rule {
            SubscriptionRule::MatchAll => d.push_str(
                "<Filter i:type=\"TrueFilter\"><SqlExpression>1=1</SqlExpression><CompatibilityLevel>20</CompatibilityLevel></Filter><Action i:type=\"EmptyRuleAction\"/>",
            ),
            SubscriptionRule::Sql(sql) => {
                let filter_type = match sql.filter.trim() {
                    "1=1" => "TrueFilter",
                    "1=0" => "FalseFilter",
                    _ => "SqlFilter",
                };
                let _ = write!(
                    d,
                    "<Filter i:type=\"{filter_type}\"><SqlExpression>{}</SqlExpression><CompatibilityLevel>20</CompatibilityLevel></Filter>",
                    escape(&sql.filter)
                );
                d.push_str(&action(sql.action.as_deref()));
            }
            SubscriptionRule::Correlation { .. } => {
                d.push_str("<Filter i:type=\"CorrelationFilter\">");
                if let Some(fields) = rule.correlation() {
                    for (sdk, name) in [
                        ("CorrelationId", "CorrelationId"),
                        ("MessageId", "MessageId"),
                        ("To", "To"),
                        ("ReplyTo", "ReplyTo"),
                        ("Subject", "Label"),
                        ("SessionId", "SessionId"),
                        ("ReplyToSessionId", "ReplyToSessionId"),
                        ("ContentType", "ContentType"),
                    ] {
                        if let Some((_, v)) = fields.system.iter().find(|(k, _)| *k == sdk) {
                            let _ = write!(d, "<{name}>{}</{name}>", escape(v));
                        }
                    }
                    d.push_str("<Properties>");
                    for (k, v) in fields.application {
                        let (ty, text) = typed(v);
                        let _ = write!(
                            d,
                            "<KeyValueOfstringanyType><Key>{}</Key><Value xmlns:d6p1=\"{XSD}\" i:type=\"d6p1:{ty}\">{}</Value></KeyValueOfstringanyType>",
                            escape(k),
                            escape(&text)
                        );
                    }
                    d.push_str("</Properties></Filter>");
                    d.push_str(&action(fields.action));
                }
            }
        }
        let _ = write!(
            d,
            "<CreatedAt>{created}</CreatedAt><Name>{}</Name></RuleDescription>",
            escape(name)
        );
        self.entry(&path, name, &created, &d)
    }

    /// The namespace's entry (`$namespaceinfo`), made when the run started.
    pub fn namespace(&self, name: &str) -> String {
        let created = self.instant(0);
        let tier = self.tier;
        let sku = match tier {
            sbp_engine::Tier::Basic => "Basic",
            sbp_engine::Tier::Premium => "Premium",
            sbp_engine::Tier::Standard | sbp_engine::Tier::Emulator => "Standard",
        };
        let units = if tier == sbp_engine::Tier::Premium {
            "<MessagingUnits>1</MessagingUnits>"
        } else {
            ""
        };
        let d = format!(
            "<NamespaceInfo xmlns=\"{SB}\" xmlns:i=\"{XSI}\"><Alias i:nil=\"true\"/><CreatedTime>{created}</CreatedTime><MessagingSKU>{sku}</MessagingSKU>{units}<ModifiedTime>{created}</ModifiedTime><Name>{}</Name><NamespaceType>Messaging</NamespaceType></NamespaceInfo>",
            escape(name)
        );
        self.entry("$namespaceinfo", name, &created, &d)
    }
}

/// An entity's path as the service writes it in an entry's id (`Subscriptions`, capital S:
/// the JavaScript client reads names from there).
pub fn canonical(path: &str) -> String {
    path.replace("/subscriptions/", "/Subscriptions/")
}

/// A rule's action element.
fn action(sql: Option<&str>) -> String {
    match sql {
        Some(sql) => format!(
            "<Action i:type=\"SqlRuleAction\"><SqlExpression>{}</SqlExpression><CompatibilityLevel>20</CompatibilityLevel></Action>",
            escape(sql)
        ),
        None => "<Action i:type=\"EmptyRuleAction\"/>".into(),
    }
}

/// A property value's XML schema type and text.
fn typed(v: &PropertyValue) -> (&'static str, String) {
    match v {
        PropertyValue::Null => ("string", String::new()),
        PropertyValue::String(s) => ("string", s.clone()),
        PropertyValue::Int(n) => ("int", n.to_string()),
        PropertyValue::Long(n) => ("long", n.to_string()),
        PropertyValue::Double(n) => ("double", n.to_string()),
        PropertyValue::Bool(b) => ("boolean", b.to_string()),
        PropertyValue::Timestamp(ms) => ("dateTime", sbp_engine::utc::format_utc(*ms, 0)),
        PropertyValue::Uuid(u) => ("string", uuid::Uuid::from_u128(*u).to_string()),
    }
}

/// Why a description is refused: the element and what is wrong with it.
pub type Refused = String;

/// A description's settings as the scenario takes them (an absent element keeps its default,
/// or on an update the entity's value). ForwardTo may be a URL (`sb://host/name`, as the
/// Python SDK writes it): its path is the entity's name.
pub fn settings(d: &Element, tier: sbp_engine::Tier) -> Result<SettingsDef, Refused> {
    not_modelled(d, tier)?;
    let dur = |name: &str| -> Result<Option<Dur>, Refused> {
        d.text_of(name)
            .map(|t| {
                parse_iso(t)
                    .map(Dur)
                    .ok_or_else(|| format!("{name} {t:?} is not an ISO 8601 duration (PT1M)"))
            })
            .transpose()
    };
    let boolean = |name: &str| -> Result<Option<bool>, Refused> {
        d.text_of(name)
            .map(|t| match t {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(format!("{name} {t:?} is not true or false")),
            })
            .transpose()
    };
    let number = |name: &str| -> Result<Option<u64>, Refused> {
        d.text_of(name)
            .map(|t| {
                t.parse::<u64>()
                    .map_err(|_| format!("{name} {t:?} is not a whole number"))
            })
            .transpose()
    };
    // The service's counts are .NET ints.
    let max_delivery_count = number("MaxDeliveryCount")?
        .map(|n| {
            u32::try_from(n)
                .ok()
                .filter(|n| *n <= i32::MAX as u32)
                .ok_or_else(|| format!("MaxDeliveryCount {n} is past {}", i32::MAX))
        })
        .transpose()?;
    let max_size_bytes = number("MaxSizeInMegabytes")?
        .map(|mb| {
            mb.checked_mul(1024 * 1024)
                .ok_or_else(|| format!("MaxSizeInMegabytes {mb} is too large"))
        })
        .transpose()?;
    Ok(SettingsDef {
        default_message_time_to_live: dur("DefaultMessageTimeToLive")?,
        lock_duration: dur("LockDuration")?,
        max_delivery_count,
        dead_lettering_on_message_expiration: boolean("DeadLetteringOnMessageExpiration")?,
        auto_delete_on_idle: dur("AutoDeleteOnIdle")?,
        forward_to: d.text_of("ForwardTo").map(entity_name).transpose()?,
        forward_dead_lettered_messages_to: d
            .text_of("ForwardDeadLetteredMessagesTo")
            .map(entity_name)
            .transpose()?,
        max_size_bytes,
        requires_duplicate_detection: boolean("RequiresDuplicateDetection")?,
        duplicate_detection_history_time_window: dur("DuplicateDetectionHistoryTimeWindow")?,
        requires_session: boolean("RequiresSession")?,
    })
}

/// What a description may carry that the playground does not model: refused when it asks for
/// something other than what the playground does (an update re-sends every element it read,
/// so the values written in [`Writing::entity`] pass).
fn not_modelled(d: &Element, tier: sbp_engine::Tier) -> Result<(), Refused> {
    let kb = (tier.max_message_size() / 1024).to_string();
    for (name, taken) in [
        ("Status", "Active"),
        ("EnablePartitioning", "false"),
        ("EnableExpress", "false"),
        ("EnableBatchedOperations", "true"),
        ("MaxMessageSizeInKilobytes", kb.as_str()),
        ("UserMetadata", ""),
    ] {
        if let Some(value) = d.text_of(name) {
            if value != taken && !(name == "EnableBatchedOperations" && value == "false") {
                return Err(format!(
                    "{name} {value:?}: the playground models only {}",
                    if taken.is_empty() {
                        "none (it keeps no UserMetadata)".to_string()
                    } else {
                        format!("{taken:?}")
                    }
                ));
            }
        }
    }
    if d.child("AuthorizationRules")
        .is_some_and(|r| !r.children.is_empty())
    {
        return Err(
            "AuthorizationRules: the playground keeps none (sbp serve takes any key)".into(),
        );
    }
    Ok(())
}

/// An entity named by a URL (`sb://localhost/orders`, `https://localhost:7443/orders`) or a
/// name: its name.
fn entity_name(text: &str) -> Result<String, Refused> {
    let name = match text.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or("", |(_, path)| path),
        None => text,
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("{text:?} names no entity to forward to"));
    }
    Ok(name.to_string())
}

/// A rule description (or a subscription's `DefaultRuleDescription`) as the scenario's rule.
pub fn rule(d: &Element, name: &str) -> Result<RuleDef, Refused> {
    let mut rule = RuleDef {
        name: Some(name.to_string()),
        ..RuleDef::default()
    };
    for part in ["Filter", "Action"] {
        if d.child(part)
            .and_then(|p| p.child("Parameters"))
            .is_some_and(|p| !p.children.is_empty())
        {
            return Err(format!(
                "{part}: SQL parameters (@name) are not modelled by the playground; write the \
                 values into the expression"
            ));
        }
    }
    if let Some(filter) = d.child("Filter") {
        match filter.attribute("type").unwrap_or("TrueFilter") {
            "TrueFilter" => rule.filter = Some("TrueFilter".into()),
            "FalseFilter" => rule.filter = Some("FalseFilter".into()),
            "SqlFilter" => {
                rule.sql = Some(
                    filter
                        .text_of("SqlExpression")
                        .ok_or("a SqlFilter without its SqlExpression")?
                        .to_string(),
                )
            }
            "CorrelationFilter" => correlation(filter, &mut rule)?,
            other => return Err(format!("the filter type {other:?} is not known")),
        }
    }
    if let Some(action) = d.child("Action") {
        match action.attribute("type").unwrap_or("EmptyRuleAction") {
            "EmptyRuleAction" => {}
            "SqlRuleAction" => {
                rule.action = Some(
                    action
                        .text_of("SqlExpression")
                        .ok_or("a SqlRuleAction without its SqlExpression")?
                        .to_string(),
                )
            }
            other => return Err(format!("the action type {other:?} is not known")),
        }
    }
    Ok(rule)
}

/// A correlation filter's fields and typed properties.
fn correlation(filter: &Element, rule: &mut RuleDef) -> Result<(), Refused> {
    rule.correlation_id = filter.text_of("CorrelationId").map(String::from);
    rule.message_id = filter.text_of("MessageId").map(String::from);
    rule.subject = filter.text_of("Label").map(String::from);
    for (element, sdk) in [
        ("To", "To"),
        ("ReplyTo", "ReplyTo"),
        ("SessionId", "SessionId"),
        ("ReplyToSessionId", "ReplyToSessionId"),
        ("ContentType", "ContentType"),
    ] {
        if let Some(v) = filter.text_of(element) {
            rule.system_properties
                .insert(sdk.to_string(), v.to_string());
        }
    }
    if let Some(properties) = filter.child("Properties") {
        for kv in &properties.children {
            let key = kv
                .text_of("Key")
                .ok_or("a correlation filter's property without its Key")?;
            let value = kv
                .child("Value")
                .ok_or_else(|| format!("the property {key:?} without its Value"))?;
            rule.properties.insert(key.to_string(), property(value)?);
        }
    }
    Ok(())
}

/// A typed value (`i:type="d6p1:int"`).
fn property(value: &Element) -> Result<PropertyValue, Refused> {
    let ty = value.attribute("type").unwrap_or("string");
    let ty = ty.rsplit_once(':').map_or(ty, |(_, t)| t);
    let text = value.text.trim();
    let bad = || format!("the property value {text:?} is not a {ty}");
    Ok(match ty {
        "string" => PropertyValue::String(value.text.clone()),
        "int" | "short" | "byte" => PropertyValue::Int(text.parse().map_err(|_| bad())?),
        "long" | "unsignedInt" => PropertyValue::Long(text.parse().map_err(|_| bad())?),
        "double" | "float" | "decimal" => PropertyValue::Double(
            text.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(bad)?,
        ),
        "boolean" => PropertyValue::Bool(match text {
            "true" => true,
            "false" => false,
            _ => return Err(bad()),
        }),
        "dateTime" => {
            PropertyValue::Timestamp(sbp_engine::utc::parse_start(text).map_err(|_| bad())?)
        }
        other => return Err(format!("the property type {other:?} is not taken")),
    })
}
