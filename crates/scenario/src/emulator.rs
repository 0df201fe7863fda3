//! The Service Bus emulator's `Config.json`, in and out (PRO-01). Importing gives a scenario
//! that runs as the emulator (`"tier": "Emulator"`), every property mapped onto an entity
//! setting; exporting gives a config of any scenario's entities. What one side has and the other
//! does not model is said in a warning, never dropped silently; a value outside the emulator's
//! schema is written at its nearest limit, and the warning says so.
use crate::dur::Dur;
use crate::model::{EntityDef, RuleDef, SettingsDef};
use crate::scenario::Scenario;
use crate::{Simulation, Text};
use sbp_engine::settings::{
    EMULATOR_DUPLICATE_WINDOW, EMULATOR_MAX_DELIVERY_COUNT, EMULATOR_MAX_QUEUES_AND_TOPICS,
    EMULATOR_SUBSCRIPTION_MIN_LOCK, EMULATOR_TTL, MAX_LOCK_DURATION, MIN_LOCK_DURATION,
};
use sbp_engine::text;
use sbp_engine::time::{Duration, DAY, HOUR, MAX_VALUE, MINUTE, SECOND};
use sbp_engine::{EntityKind, EntitySettings, SubscriptionRule, Tier};
use serde_json::{json, Map, Value};

/// The namespace name the emulator's schema allows.
pub const NAMESPACE: &str = "sbemulatorns";

/// A scenario read from a config, and what the playground does not model of it.
#[derive(Debug)]
pub struct Imported {
    pub scenario: Scenario,
    pub warnings: Vec<Text>,
}

/// A config written from a scenario, and where it differs from the scenario.
#[derive(Debug)]
pub struct Exported {
    pub config: Value,
    pub warnings: Vec<Text>,
}

/// `PT1H`, `PT1M30S`, `P7D`, `PT0.5S`: an ISO 8601 duration (years and months as 365 and 30
/// days).
pub fn parse_iso(text: &str) -> Option<Duration> {
    let rest = text.trim().strip_prefix('P')?;
    let (date, time) = rest.split_once('T').unwrap_or((rest, ""));
    if date.is_empty() && time.is_empty() {
        return None;
    }
    let part = |s: &str, units: &[(char, i64)]| -> Option<i64> {
        let mut total: i64 = 0;
        let mut number = String::new();
        let mut next = 0;
        for c in s.chars() {
            if c.is_ascii_digit() || c == '.' {
                number.push(c);
                continue;
            }
            let at = units[next..].iter().position(|(u, _)| *u == c)? + next;
            next = at + 1;
            let value: f64 = number.parse().ok()?;
            number.clear();
            total = total.saturating_add((value * units[at].1 as f64) as i64);
        }
        number.is_empty().then_some(total)
    };
    let date = part(
        date,
        &[
            ('Y', 365 * DAY),
            ('M', 30 * DAY),
            ('W', 7 * DAY),
            ('D', DAY),
        ],
    )?;
    let time = part(time, &[('H', HOUR), ('M', MINUTE), ('S', SECOND)])?;
    Some(date.saturating_add(time).min(MAX_VALUE))
}

/// An ISO 8601 duration: `PT1H`, `PT1M30S`, `P7D`.
pub fn format_iso(d: Duration) -> String {
    if d >= MAX_VALUE {
        return "P10675199DT2H48M5.4775807S".into();
    }
    let (days, rest) = (d / DAY, d % DAY);
    let (h, m) = (rest / HOUR, rest % HOUR / MINUTE);
    let ms = rest % MINUTE;
    let mut out = format!(
        "P{}",
        if days > 0 {
            format!("{days}D")
        } else {
            String::new()
        }
    );
    if rest > 0 || days == 0 {
        out.push('T');
        for (n, unit) in [(h, 'H'), (m, 'M')] {
            if n > 0 {
                out += &format!("{n}{unit}");
            }
        }
        if ms > 0 || (h == 0 && m == 0) {
            out += &if ms % SECOND == 0 {
                format!("{}S", ms / SECOND)
            } else {
                format!("{}.{:03}S", ms / SECOND, ms % SECOND)
            };
        }
    }
    out
}

/// A `Config.json` as the emulator's schema writes it, read by serde's derives. Each object
/// keeps what the playground does not know (`other`), so it is said, never dropped silently.
mod config {
    use super::parse_iso;
    use sbp_engine::time::Duration;
    use serde::{Deserialize, Deserializer};
    use serde_json::{Map, Value};

    #[derive(Deserialize)]
    pub struct File {
        #[serde(rename = "UserConfig")]
        pub user_config: Option<UserConfig>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct UserConfig {
        #[serde(default)]
        pub namespaces: Vec<Namespace>,
        pub logging: Option<Value>,
        #[serde(flatten)]
        pub other: Map<String, Value>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Namespace {
        #[serde(default)]
        pub name: String,
        #[serde(default)]
        pub queues: Vec<Entity>,
        #[serde(default)]
        pub topics: Vec<Entity>,
        #[serde(flatten)]
        pub other: Map<String, Value>,
    }

    /// A queue, a topic (with its subscriptions) or a subscription (with its rules).
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Entity {
        #[serde(default)]
        pub name: String,
        #[serde(default)]
        pub properties: Properties,
        pub subscriptions: Option<Vec<Entity>>,
        pub rules: Option<Vec<Rule>>,
        #[serde(flatten)]
        pub other: Map<String, Value>,
    }

    #[derive(Default, Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Properties {
        pub dead_lettering_on_message_expiration: Option<bool>,
        #[serde(default, deserialize_with = "iso")]
        pub default_message_time_to_live: Option<Duration>,
        #[serde(default, deserialize_with = "iso")]
        pub duplicate_detection_history_time_window: Option<Duration>,
        pub forward_dead_lettered_messages_to: Option<String>,
        pub forward_to: Option<String>,
        #[serde(default, deserialize_with = "iso")]
        pub lock_duration: Option<Duration>,
        pub max_delivery_count: Option<u32>,
        pub requires_duplicate_detection: Option<bool>,
        pub requires_session: Option<bool>,
        #[serde(flatten)]
        pub other: Map<String, Value>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Rule {
        pub name: Option<String>,
        pub properties: Option<RuleProperties>,
        #[serde(flatten)]
        pub other: Map<String, Value>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct RuleProperties {
        pub filter_type: Option<String>,
        pub correlation_filter: Option<Map<String, Value>>,
        pub sql_filter: Option<Sql>,
        pub action: Option<Sql>,
        #[serde(flatten)]
        pub other: Map<String, Value>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Sql {
        pub sql_expression: Option<String>,
    }

    /// An ISO 8601 duration (`PT1M`), the value quoted in the error when it is not one.
    fn iso<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text = String::deserialize(d)?;
        parse_iso(&text).map(Some).ok_or_else(|| {
            serde::de::Error::custom(format!("\"{text}\" is not an ISO 8601 duration"))
        })
    }
}

/// Reads a `Config.json`.
pub fn import(json: &str) -> Result<Imported, Text> {
    if json.len() > crate::link::MAX_JSON {
        return Err(text!(
            "x-too-large",
            max = crate::link::MAX_JSON / (1024 * 1024)
        ));
    }
    let mut reader = serde_json::Deserializer::from_str(json);
    let file: config::File = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        // "?": the reader failed before it knew a key (`{ not json`): the JSON itself.
        if path == "." || path == "?" || path.is_empty() {
            text!("x-json", message = message)
        } else {
            text!("x-field", field = path, error = message)
        }
    })?;
    let mut w = Warnings::default();
    let user = file.user_config.ok_or_else(|| text!("x-no-user-config"))?;
    w.unknown("UserConfig", &user.other);
    if user.logging.is_some() {
        w.0.push(text!("x-logging"));
    }
    let count = user.namespaces.len();
    let ns = user
        .namespaces
        .into_iter()
        .next()
        .ok_or_else(|| text!("x-no-namespace"))?;
    if count > 1 {
        w.0.push(text!("x-namespaces", count = count));
    }
    w.unknown("Namespaces[0]", &ns.other);
    let name = ns.name;
    if name != NAMESPACE {
        w.0.push(text!(
            "x-namespace-name",
            name = name.as_str(),
            expected = NAMESPACE
        ));
    }
    let mut entities: Vec<EntityDef> = Vec::new();
    for (i, q) in ns.queues.into_iter().enumerate() {
        let at = format!("Queues[{i}]");
        let (name, settings) = entity(&q, &at, Kind::Queue, &mut w)?;
        entities.push(EntityDef {
            queue: Some(name),
            settings,
            ..EntityDef::default()
        });
    }
    for (i, t) in ns.topics.into_iter().enumerate() {
        let at = format!("Topics[{i}]");
        let (name, settings) = entity(&t, &at, Kind::Topic, &mut w)?;
        entities.push(EntityDef {
            topic: Some(name.clone()),
            settings,
            ..EntityDef::default()
        });
        for (j, s) in t.subscriptions.unwrap_or_default().into_iter().enumerate() {
            let at = format!("{at}.Subscriptions[{j}]");
            let (sub_name, settings) = entity(&s, &at, Kind::Subscription, &mut w)?;
            // FLT-01: every rule, by its name; the first is the subscription's first.
            let mut rules = rules(s.rules.unwrap_or_default(), &at, &mut w)?;
            let rule = (!rules.is_empty()).then(|| rules.remove(0));
            entities.push(EntityDef {
                subscription: Some(format!("{name}/subscriptions/{sub_name}")),
                rule,
                rules,
                settings,
                ..EntityDef::default()
            });
        }
    }
    let mut scenario = Scenario {
        name: format!("Emulator config: {name}"),
        entities: forward_targets_first(entities),
        ..Scenario::default()
    };
    scenario.namespace.tier = Tier::Emulator;
    scenario
        .validate()
        .map_err(|e| text!("x-invalid", what = e.text()))?;
    // The engine's own checks (FWD-01, the emulator's limits) with the error named.
    Simulation::new(&scenario).map_err(|e| e.text())?;
    Ok(Imported {
        scenario,
        warnings: w.0,
    })
}

#[derive(Default)]
struct Warnings(Vec<Text>);

impl Warnings {
    /// Every field the playground does not know is said.
    fn unknown(&mut self, at: &str, other: &Map<String, Value>) {
        for key in other.keys() {
            self.0
                .push(text!("x-unknown", field = format!("{at}.{key}")));
        }
    }
}

/// The properties each kind has in the emulator's schema.
const QUEUE_PROPERTIES: &[&str] = &[
    "DeadLetteringOnMessageExpiration",
    "DefaultMessageTimeToLive",
    "DuplicateDetectionHistoryTimeWindow",
    "ForwardDeadLetteredMessagesTo",
    "ForwardTo",
    "LockDuration",
    "MaxDeliveryCount",
    "RequiresDuplicateDetection",
    "RequiresSession",
];
const TOPIC_PROPERTIES: &[&str] = &[
    "DefaultMessageTimeToLive",
    "DuplicateDetectionHistoryTimeWindow",
    "RequiresDuplicateDetection",
];
const SUBSCRIPTION_PROPERTIES: &[&str] = &[
    "DeadLetteringOnMessageExpiration",
    "DefaultMessageTimeToLive",
    "LockDuration",
    "MaxDeliveryCount",
    "ForwardDeadLetteredMessagesTo",
    "ForwardTo",
    "RequiresSession",
];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Queue,
    Topic,
    Subscription,
}

/// An entity's name and settings (its subscriptions and rules are the caller's). The emulator's
/// schema names which properties, subscriptions and rules each kind has; one of another kind's
/// is said and left out.
fn entity(
    e: &config::Entity,
    at: &str,
    kind: Kind,
    w: &mut Warnings,
) -> Result<(String, SettingsDef), Text> {
    if e.name.is_empty() {
        return Err(text!("x-no-name", field = at));
    }
    w.unknown(at, &e.other);
    if kind != Kind::Topic && e.subscriptions.is_some() {
        w.0.push(text!("x-unknown", field = format!("{at}.Subscriptions")));
    }
    if kind != Kind::Subscription && e.rules.is_some() {
        w.0.push(text!("x-unknown", field = format!("{at}.Rules")));
    }
    let p = &e.properties;
    let props = format!("{at}.Properties");
    w.unknown(&props, &p.other);
    let known = match kind {
        Kind::Queue => QUEUE_PROPERTIES,
        Kind::Topic => TOPIC_PROPERTIES,
        Kind::Subscription => SUBSCRIPTION_PROPERTIES,
    };
    let set = [
        (
            "DeadLetteringOnMessageExpiration",
            p.dead_lettering_on_message_expiration.is_some(),
        ),
        (
            "DefaultMessageTimeToLive",
            p.default_message_time_to_live.is_some(),
        ),
        (
            "DuplicateDetectionHistoryTimeWindow",
            p.duplicate_detection_history_time_window.is_some(),
        ),
        (
            "ForwardDeadLetteredMessagesTo",
            p.forward_dead_lettered_messages_to.is_some(),
        ),
        ("ForwardTo", p.forward_to.is_some()),
        ("LockDuration", p.lock_duration.is_some()),
        ("MaxDeliveryCount", p.max_delivery_count.is_some()),
        (
            "RequiresDuplicateDetection",
            p.requires_duplicate_detection.is_some(),
        ),
        ("RequiresSession", p.requires_session.is_some()),
    ];
    for (key, _) in set.iter().filter(|(k, on)| *on && !known.contains(k)) {
        w.0.push(text!("x-unknown", field = format!("{props}.{key}")));
    }
    let here = |key: &str| known.contains(&key);
    let target = |key: &str, t: &Option<String>| t.clone().filter(|t| !t.is_empty() && here(key));
    let s = SettingsDef {
        dead_lettering_on_message_expiration: p
            .dead_lettering_on_message_expiration
            .filter(|_| here("DeadLetteringOnMessageExpiration")),
        default_message_time_to_live: p.default_message_time_to_live.map(Dur),
        duplicate_detection_history_time_window: p
            .duplicate_detection_history_time_window
            .filter(|_| here("DuplicateDetectionHistoryTimeWindow"))
            .map(Dur),
        forward_dead_lettered_messages_to: target(
            "ForwardDeadLetteredMessagesTo",
            &p.forward_dead_lettered_messages_to,
        ),
        forward_to: target("ForwardTo", &p.forward_to),
        lock_duration: p.lock_duration.filter(|_| here("LockDuration")).map(Dur),
        max_delivery_count: p.max_delivery_count.filter(|_| here("MaxDeliveryCount")),
        requires_duplicate_detection: p
            .requires_duplicate_detection
            .filter(|_| here("RequiresDuplicateDetection")),
        requires_session: p.requires_session.filter(|_| here("RequiresSession")),
        ..SettingsDef::default()
    };
    Ok((e.name.clone(), s))
}

/// A subscription's rules, each with its name (FLT-01): correlation filters (CorrelationId,
/// Label, MessageId, the other system properties and application properties) and SQL filters
/// with their actions. What cannot be modelled is said and left out.
fn rules(rules: Vec<config::Rule>, at: &str, w: &mut Warnings) -> Result<Vec<RuleDef>, Text> {
    let mut modelled = Vec::new();
    for (k, r) in rules.into_iter().enumerate() {
        let at = format!("{at}.Rules[{k}]");
        w.unknown(&at, &r.other);
        let props = r
            .properties
            .ok_or_else(|| text!("x-no-properties", field = at.as_str()))?;
        w.unknown(&format!("{at}.Properties"), &props.other);
        let action = props.action.and_then(|a| a.sql_expression);
        let name = Some(r.name.unwrap_or_else(|| format!("rule{k}")));
        let def = match props.filter_type.as_deref() {
            Some("Sql") => {
                let sql = props
                    .sql_filter
                    .and_then(|f| f.sql_expression)
                    .ok_or_else(|| text!("x-no-properties", field = at.as_str()))?;
                // An expression outside the supported subset is said and left out: the rest of
                // the config still opens.
                if let Err(e) = sbp_engine::entity::SqlRule::new(&sql, action.as_deref()) {
                    w.0.push(text!(
                        "x-sql-unsupported",
                        field = at.as_str(),
                        why = e.message
                    ));
                    continue;
                }
                RuleDef {
                    name,
                    sql: Some(sql),
                    action,
                    ..RuleDef::default()
                }
            }
            Some("Correlation") => {
                let filter = props
                    .correlation_filter
                    .ok_or_else(|| text!("x-no-properties", field = at.as_str()))?;
                // PRO-01: the schema's CorrelationFilter (and its Properties) has at least one
                // property.
                let empty_properties = filter
                    .get("Properties")
                    .is_some_and(|p| p.as_object().is_some_and(|o| o.is_empty()));
                if filter.is_empty() || empty_properties {
                    return Err(text!("x-empty-correlation", field = at.as_str()));
                }
                // FLT-04: a correlation filter's action is kept with it.
                let mut def = RuleDef {
                    name,
                    action,
                    ..RuleDef::default()
                };
                for (key, value) in filter {
                    let text = || value.as_str().map(String::from);
                    match key.as_str() {
                        "CorrelationId" => def.correlation_id = text(),
                        "Label" => def.subject = text(),
                        "MessageId" => def.message_id = text(),
                        "Properties" => {
                            // Each value with its JSON type (a number is an int, a long or
                            // a double; FLT-02 matches by value and type).
                            for (name, v) in value.as_object().into_iter().flatten() {
                                match serde_json::from_value(v.clone()) {
                                    Ok(v) => {
                                        def.properties.insert(name.clone(), v);
                                    }
                                    Err(_) => w.0.push(text!(
                                        "x-filter-field",
                                        field = format!(
                                            "{at}.Properties.CorrelationFilter.Properties.{name}"
                                        )
                                    )),
                                }
                            }
                        }
                        // FLT-02: the other system properties a correlation filter matches.
                        k if sbp_engine::message::SYSTEM_PROPERTIES.contains(&k) => {
                            if let Some(v) = text() {
                                def.system_properties.insert(k.to_string(), v);
                            }
                        }
                        _ => w.0.push(text!(
                            "x-filter-field",
                            field = format!("{at}.Properties.CorrelationFilter.{key}")
                        )),
                    }
                }
                def
            }
            other => {
                return Err(text!(
                    "x-bad-value",
                    field = format!("{at}.Properties.FilterType"),
                    value = other.unwrap_or("-")
                ))
            }
        };
        modelled.push(def);
    }
    Ok(modelled)
}

/// Entities in an order in which every forward target exists when its source is created
/// (FWD-01); a subscription after its topic.
fn forward_targets_first(mut rest: Vec<EntityDef>) -> Vec<EntityDef> {
    let name = |e: &EntityDef| {
        e.queue
            .clone()
            .or_else(|| e.topic.clone())
            .or_else(|| e.subscription.clone())
            .unwrap_or_default()
    };
    let mut placed: Vec<EntityDef> = Vec::new();
    while !rest.is_empty() {
        let ready = |e: &EntityDef, placed: &[EntityDef]| {
            let topic = e
                .subscription
                .as_deref()
                .and_then(sbp_engine::namespace::split_subscription_path)
                .map(|(t, _)| t.to_string());
            [
                e.settings.forward_to.clone(),
                e.settings.forward_dead_lettered_messages_to.clone(),
                topic,
            ]
            .into_iter()
            .flatten()
            .all(|t| placed.iter().any(|p| name(p).eq_ignore_ascii_case(&t)))
        };
        // If nothing is ready (a cycle, a missing target), the next one goes anyway: the
        // engine then names what is wrong.
        let i = rest.iter().position(|e| ready(e, &placed)).unwrap_or(0);
        placed.push(rest.remove(i));
    }
    placed
}

/// Writes `scenario`'s entities as an emulator config, as the scenario creates them (its
/// profile's defaults filled in).
pub fn export(scenario: &Scenario) -> Result<Exported, Text> {
    let sim = Simulation::new(scenario).map_err(|e| e.text())?;
    let mut w = Warnings::default();
    if !scenario.timeline.is_empty() {
        w.0.push(text!("x-timeline"));
    }
    if scenario.namespace.tier != Tier::Emulator {
        w.0.push(text!(
            "x-profile",
            tier = scenario.namespace.tier.to_string()
        ));
    }
    let mut queues = Vec::new();
    let mut topics: Vec<(String, Map<String, Value>, Vec<Value>)> = Vec::new();
    for e in sim.ns.entities_by_id() {
        let s = &e.settings;
        let mut p = Map::new();
        let mut put = |key: &str, v: Value| {
            p.insert(key.to_string(), v);
        };
        let mut limited = |key: &str, value: Duration, (min, max): (Duration, Duration)| {
            let written = value.clamp(min, max);
            if written != value {
                w.0.push(text!(
                    "x-clamped",
                    path = e.path.as_str(),
                    field = key,
                    value = sbp_engine::time::format_duration(value),
                    written = format_iso(written)
                ));
            }
            put(key, json!(format_iso(written)));
        };
        limited(
            "DefaultMessageTimeToLive",
            s.default_message_time_to_live,
            EMULATOR_TTL,
        );
        let is_subscription = matches!(e.kind, EntityKind::Subscription { .. });
        if e.kind != EntityKind::Topic {
            let min_lock = if is_subscription {
                EMULATOR_SUBSCRIPTION_MIN_LOCK
            } else {
                MIN_LOCK_DURATION
            };
            limited(
                "LockDuration",
                s.lock_duration,
                (min_lock, MAX_LOCK_DURATION),
            );
        }
        if !is_subscription {
            limited(
                "DuplicateDetectionHistoryTimeWindow",
                s.duplicate_detection_history_time_window,
                EMULATOR_DUPLICATE_WINDOW,
            );
        }
        if e.kind != EntityKind::Topic {
            let max = s.max_delivery_count.min(EMULATOR_MAX_DELIVERY_COUNT);
            if max != s.max_delivery_count {
                w.0.push(text!(
                    "x-clamped",
                    path = e.path.as_str(),
                    field = "MaxDeliveryCount",
                    value = s.max_delivery_count,
                    written = max
                ));
            }
            put("MaxDeliveryCount", json!(max));
            put(
                "DeadLetteringOnMessageExpiration",
                json!(s.dead_lettering_on_message_expiration),
            );
            put("ForwardTo", json!(s.forward_to.clone().unwrap_or_default()));
            put(
                "ForwardDeadLetteredMessagesTo",
                json!(s
                    .forward_dead_lettered_messages_to
                    .clone()
                    .unwrap_or_default()),
            );
            put("RequiresSession", json!(s.requires_session));
        }
        if !is_subscription {
            put(
                "RequiresDuplicateDetection",
                json!(s.requires_duplicate_detection),
            );
        }
        let defaults = EntitySettings::defaults(scenario.namespace.tier);
        if s.auto_delete_on_idle != defaults.auto_delete_on_idle {
            w.0.push(text!(
                "x-not-in-schema",
                path = e.path.as_str(),
                field = "AutoDeleteOnIdle"
            ));
        }
        if s.max_size_bytes != defaults.max_size_bytes {
            w.0.push(text!(
                "x-not-in-schema",
                path = e.path.as_str(),
                field = "MaxSizeInBytes"
            ));
        }
        match e.kind {
            EntityKind::Queue => queues.push(json!({ "Name": e.path, "Properties": p })),
            EntityKind::Topic => topics.push((e.path.clone(), p, Vec::new())),
            EntityKind::Subscription { topic } => {
                let topic_path = sim.ns.entity_name(topic);
                let name = e.path.rsplit('/').next().unwrap_or(&e.path);
                let mut sub = json!({ "Name": name, "Properties": p });
                // FLT-01: every rule but the service's own `$Default` alone.
                let default_only = matches!(e.rules.as_slice(),
                    [(n, SubscriptionRule::MatchAll)] if n == sbp_engine::entity::DEFAULT_RULE);
                if !default_only {
                    let rules: Vec<Value> = e
                        .rules
                        .iter()
                        .map(|(n, r)| config_rule(n, r, &e.path, &mut w))
                        .collect();
                    sub["Rules"] = json!(rules);
                }
                if let Some((_, _, subs)) = topics.iter_mut().find(|(n, _, _)| n == topic_path) {
                    subs.push(sub);
                }
            }
        }
    }
    for (name, _, subs) in &topics {
        if subs.is_empty() {
            w.0.push(text!("x-no-subscription", path = name.as_str()));
        }
    }
    let mut all = queues.len() + topics.len();
    if all > EMULATOR_MAX_QUEUES_AND_TOPICS {
        w.0.push(text!(
            "x-too-many",
            count = all,
            max = EMULATOR_MAX_QUEUES_AND_TOPICS
        ));
        queues.truncate(EMULATOR_MAX_QUEUES_AND_TOPICS.min(queues.len()));
        all = queues.len();
        topics.truncate(EMULATOR_MAX_QUEUES_AND_TOPICS - all);
    }
    let topics: Vec<Value> = topics
        .into_iter()
        .map(|(name, p, subs)| json!({ "Name": name, "Properties": p, "Subscriptions": subs }))
        .collect();
    let config = json!({
        "UserConfig": {
            "Namespaces": [{ "Name": NAMESPACE, "Queues": queues, "Topics": topics }],
            "Logging": { "Type": "File" }
        }
    });
    Ok(Exported {
        config,
        warnings: w.0,
    })
}

/// A subscription's rule as a config writes it, under its name (every message: `1=1`).
fn config_rule(name: &str, rule: &SubscriptionRule, path: &str, w: &mut Warnings) -> Value {
    let sql = |filter: &str, action: Option<&String>| {
        let mut p = json!({
            "FilterType": "Sql",
            "SqlFilter": { "SqlExpression": filter }
        });
        if let Some(a) = action {
            p["Action"] = json!({ "SqlExpression": a });
        }
        json!({ "Name": name, "Properties": p })
    };
    if let SubscriptionRule::Sql(r) = rule {
        return sql(&r.filter, r.action.as_ref());
    }
    let Some(c) = rule.correlation() else {
        return sql("1=1", None);
    };
    let mut filter = Map::new();
    for (k, v) in &c.system {
        // The config names Subject `Label`.
        let key = if *k == "Subject" { "Label" } else { k };
        filter.insert(key.to_string(), json!(v));
    }
    if !c.application.is_empty() {
        // JSON's own types: a number, a boolean, a string (a timestamp or uuid as its text).
        let plain: Map<String, Value> = c
            .application
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    sbp_engine::PropertyValue::Null => Value::Null,
                    sbp_engine::PropertyValue::Bool(b) => json!(b),
                    sbp_engine::PropertyValue::Int(n) => json!(n),
                    sbp_engine::PropertyValue::Long(n) => json!(n),
                    sbp_engine::PropertyValue::Double(d) => json!(d),
                    sbp_engine::PropertyValue::String(s) => json!(s),
                    other => {
                        w.0.push(text!(
                            "x-type",
                            path = path,
                            field = k.as_str(),
                            kind = other.type_name()
                        ));
                        json!(other.to_string())
                    }
                };
                (k.clone(), v)
            })
            .collect();
        filter.insert("Properties".into(), Value::Object(plain));
    }
    let mut p = json!({ "FilterType": "Correlation", "CorrelationFilter": filter });
    if let Some(a) = c.action {
        p["Action"] = json!({ "SqlExpression": a });
    }
    json!({ "Name": name, "Properties": p })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_durations_read_and_write() {
        for (text, ms) in [
            ("PT1H", HOUR),
            ("PT20S", 20 * SECOND),
            ("PT1M30S", 90 * SECOND),
            ("P7D", 7 * DAY),
            ("P1DT2H", DAY + 2 * HOUR),
            ("PT0.5S", 500),
        ] {
            assert_eq!(parse_iso(text), Some(ms), "{text}");
            assert_eq!(parse_iso(&format_iso(ms)), Some(ms), "{text}");
        }
        assert_eq!(format_iso(HOUR), "PT1H");
        assert_eq!(format_iso(90 * SECOND), "PT1M30S");
        assert_eq!(format_iso(7 * DAY), "P7D");
        for bad in ["", "P", "1H", "PT", "PTH", "PT1X", "PT1S1M"] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }
}
