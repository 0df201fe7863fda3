//! Expectations: counts, stored messages, existence, metrics, what a named call returned and
//! entity settings, checked at an instant or between two steps. The browser and the CLI check
//! them the same way.
use crate::model::*;
use crate::run::{NamedCall, Simulation};
use crate::Text;
use sbp_engine::text;
use sbp_engine::time::{format_instant, MAX_VALUE, NEVER};
use sbp_engine::{EntitySettings, Perspective};
use std::collections::BTreeMap;

impl Simulation {
    /// What shows now, as an expectation at this instant: each queue's and subscription's
    /// counts (active, locked, scheduled, deferred, dead-lettered), its dead-letter queue's
    /// (active, locked, deferred: what a dead-letter queue holds), and the message `selected`
    /// (entity path, SequenceNumber) if it is there: its state, DeliveryCount and
    /// DeadLetterReason, as peek shows them. The embed form's "Check that..." (a link that
    /// carries it fails `sbp check` once the scenario no longer does what the page shows) and
    /// the end of a run `sbp serve` records.
    pub fn expectation_now(&self, selected: Option<(&str, u64)>) -> Expectation {
        let now = self.ns.now();
        let mut expectation = Expectation {
            at: crate::dur::Dur(now),
            ..Expectation::default()
        };
        let count = |n: u64| Some(CountDef::exactly(n));
        for entity in self.ns.entities() {
            if entity.kind == sbp_engine::EntityKind::Topic {
                continue;
            }
            let have = entity.counts(now);
            expectation.counts.insert(
                entity.path.clone(),
                CountsDef {
                    active: count(have.active),
                    locked: count(have.locked),
                    scheduled: count(have.scheduled),
                    deferred: count(have.deferred),
                    dead_lettered: count(have.dead_lettered),
                    ..CountsDef::default()
                },
            );
            let dlq = entity.dlq_counts(now);
            expectation.counts.insert(
                format!("{}/$deadletterqueue", entity.path),
                CountsDef {
                    active: count(dlq.active),
                    locked: count(dlq.locked),
                    deferred: count(dlq.deferred),
                    ..CountsDef::default()
                },
            );
        }
        if let Some((path, seq)) = selected {
            if let Some(view) = self.ns.message(path, seq, Perspective::Peek) {
                let mut properties = BTreeMap::new();
                let shown = view_json(&view);
                for name in ["State", "DeliveryCount", "DeadLetterReason"] {
                    if let Some(value) = shown.get(name).filter(|v| !v.is_null()) {
                        properties.insert(name.to_string(), value.clone());
                    }
                }
                expectation.messages.push(MessageExpect {
                    entity: path.to_string(),
                    seq,
                    view: ViewDef::Peek,
                    absent: false,
                    properties,
                });
            }
        }
        expectation
    }
}

impl Simulation {
    /// What a recorded run reached, as an expectation at its last instant: every entity's and
    /// dead-letter queue's counts ([`Simulation::expectation_now`]) and the namespace's totals
    /// (sent, completed, expired, dead-lettered, abandoned, settlements refused for a lost
    /// lock, locks lapsed), so `sbp check` proves that the replay reaches it. What `sbp serve
    /// --record` writes and the live page saves.
    pub fn recorded_expectation(&self) -> Expectation {
        let mut expect = self.expectation_now(None);
        let t = self.ns.metrics().total();
        for (name, n) in [
            ("sent", t.sent),
            ("completed", t.completed),
            ("expired", t.expired),
            ("dead_lettered", t.dead_lettered),
            ("abandoned", t.abandoned),
            ("lock_lost", t.lock_lost),
            ("locks_lapsed", t.locks_lapsed),
        ] {
            expect.metrics.insert(
                name.to_string(),
                crate::RangeDef {
                    min: Some(n),
                    max: Some(n),
                },
            );
        }
        expect
    }
}

/// "expect at t=10s: ...", or `what` alone for a goal, which is always now.
fn at_instant(at: Option<&str>, what: Text) -> Text {
    match at {
        Some(at) => text!("c-at", at = at, what = what),
        None => what,
    }
}

/// A count `have` of `name` outside `range`, said with `key` (`c-metric`, `c-events`), if it is.
fn outside(
    at: Option<&str>,
    key: &'static str,
    name: &str,
    range: &RangeDef,
    have: u64,
) -> Option<Text> {
    let inside = range.min.is_none_or(|min| have >= min) && range.max.is_none_or(|max| have <= max);
    let show = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    (!inside).then(|| {
        at_instant(
            at,
            text!(
                key,
                name = name,
                min = show(range.min),
                max = show(range.max),
                have = have
            ),
        )
    })
}

impl Simulation {
    /// Checks one expectation now (`at` names the instant in failures). Every check the same
    /// way in the browser and the CLI.
    pub(crate) fn check(&mut self, at: &str, e: &Expectation) {
        self.checked += 1;
        let mut failures = Vec::new();
        self.failures_of(Some(at), e, &mut failures);
        self.failures.extend(failures);
    }

    /// What of `e` does not hold now, added to `out` (`at` names the instant in each; None for a goal, which is now). Only
    /// reads: checking changes nothing.
    pub(crate) fn failures_of(&self, at: Option<&str>, e: &Expectation, out: &mut Vec<Text>) {
        for (path, want) in &e.counts {
            // An entity, or its dead-letter sub-queue ("orders/$deadletterqueue").
            let now = self.ns.now();
            let have = self.ns.resolve(path).ok().and_then(|q| {
                let entity = self.ns.entity(self.ns.entity_name(q.entity))?;
                Some(if q.dlq {
                    (entity.dlq_counts(now), 0)
                } else {
                    (entity.counts(now), entity.duplicates_dropped)
                })
            });
            let Some((have, duplicates)) = have else {
                out.push(at_instant(at, text!("c-no-entity", path = path)));
                continue;
            };
            let fields = [
                ("active", want.active, have.active),
                ("locked", want.locked, have.locked),
                ("scheduled", want.scheduled, have.scheduled),
                ("deferred", want.deferred, have.deferred),
                ("dead_lettered", want.dead_lettered, have.dead_lettered),
                (
                    "expired_uncollected",
                    want.expired_uncollected,
                    have.expired_uncollected,
                ),
                ("duplicates_dropped", want.duplicates_dropped, duplicates),
            ];
            for (name, want, have) in fields {
                if let Some(want) = want.filter(|w| !w.holds(have)) {
                    out.push(at_instant(
                        at,
                        text!(
                            "c-count",
                            path = path,
                            name = name,
                            want = want.describe(),
                            have = have
                        ),
                    ));
                }
            }
        }
        for (path, want) in &e.exists {
            let have = self.ns.entity(path).is_some();
            if have != *want {
                out.push(at_instant(
                    at,
                    text!(if *want { "c-missing" } else { "c-exists" }, path = path),
                ));
            }
        }
        self.check_messages_and_metrics(at, e, out);
        self.check_events(at, e, out);
        self.check_returned(at, e, out);
        self.check_settings(at, e, out);
    }

    /// Message and metric expectations: checked the same way in the browser and the CLI.
    fn check_messages_and_metrics(&self, at: Option<&str>, e: &Expectation, out: &mut Vec<Text>) {
        for m in &e.messages {
            self.check_message(at, m, out);
        }
        if !e.metrics.is_empty() {
            let totals = serde_json::to_value(self.ns.metrics().total()).unwrap_or_default();
            for (name, range) in &e.metrics {
                let Some(have) = totals.get(name).and_then(serde_json::Value::as_u64) else {
                    out.push(at_instant(at, text!("c-no-metric", name = name)));
                    continue;
                };
                out.extend(outside(at, "c-metric", name, range, have));
            }
        }
    }

    /// `events`: how many events of a kind the log holds.
    fn check_events(&self, at: Option<&str>, e: &Expectation, out: &mut Vec<Text>) {
        for (name, range) in &e.events {
            let have = self
                .ns
                .log()
                .iter()
                .filter(|ev| ev.kind.name() == name)
                .count() as u64;
            out.extend(outside(at, "c-events", name, range, have));
        }
    }

    fn check_message(&self, at: Option<&str>, want: &MessageExpect, out: &mut Vec<Text>) {
        let perspective = match want.view {
            ViewDef::Peek => Perspective::Peek,
            ViewDef::Receive => Perspective::Receive,
        };
        let label = text!("c-message", path = &want.entity, seq = want.seq);
        let Some(view) = self.ns.message(&want.entity, want.seq, perspective) else {
            if !want.absent {
                out.push(at_instant(at, text!("c-not-there", label = label)));
            }
            return;
        };
        if want.absent {
            out.push(at_instant(at, text!("c-not-absent", label = label)));
            return;
        }
        let have = view_json(&view);
        self.check_properties(at, &at_instant(at, label), &want.properties, &have, out);
    }

    /// `returned`: what a named call got (RCV-01's received-and-deleted messages too, which are
    /// no longer stored).
    fn check_returned(&self, at: Option<&str>, e: &Expectation, out: &mut Vec<Text>) {
        for (name, want) in &e.returned {
            let label = at_instant(at, text!("c-call", name = name));
            let Some(call) = self.named.get(name).cloned() else {
                out.push(text!(
                    "c-what",
                    label = label,
                    what = text!("c-no-call", name = name)
                ));
                continue;
            };
            let seqs: Vec<u64> = call.messages.iter().map(|m| m.sequence_number).collect();
            if let Some(count) = want.count.filter(|c| !c.holds(seqs.len() as u64)) {
                out.push(text!(
                    "c-what",
                    label = label.clone(),
                    what = text!("c-call-count", want = count.describe(), have = seqs.len())
                ));
            }
            if let Some(w) = want.seqs.as_ref().filter(|w| **w != seqs) {
                let list = |s: &[u64]| {
                    s.iter()
                        .map(|n| format!("#{n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                out.push(text!(
                    "c-what",
                    label = label.clone(),
                    what = text!(
                        "c-expected",
                        want = format!("[{}]", list(w)),
                        have = format!("[{}]", list(&seqs))
                    )
                ));
            }
            for (i, props) in want.messages.iter().enumerate() {
                let Some(view) = call.messages.get(i) else {
                    out.push(text!(
                        "c-what",
                        label = label.clone(),
                        what = text!("c-no-message", number = i + 1)
                    ));
                    continue;
                };
                let have = view_json(view);
                let label = text!("c-call-message", label = label.clone(), number = i + 1);
                self.check_properties(at, &label, props, &have, out);
            }
            if !want.session.is_empty() {
                match &call.session {
                    Some(v) => {
                        let have = serde_json::json!({
                            "SessionId": v.session_id,
                            "LockedUntil": v.locked_until,
                            "State": v.state,
                        });
                        self.check_properties(at, &label, &want.session, &have, out);
                    }
                    None => out.push(text!(
                        "c-what",
                        label = label.clone(),
                        what = text!("c-no-session-call")
                    )),
                }
            }
        }
    }

    /// `settings`: an entity's settings under the management API's names.
    fn check_settings(&self, at: Option<&str>, e: &Expectation, out: &mut Vec<Text>) {
        for (path, want) in &e.settings {
            let Some(entity) = self.ns.entity(path) else {
                out.push(at_instant(at, text!("c-no-entity", path = path)));
                continue;
            };
            let have = settings_view(&entity.settings);
            self.check_properties(
                at,
                &at_instant(at, text!("c-plain", what = path)),
                want,
                &have,
                out,
            );
        }
    }

    /// Each of `want`'s properties against `have`. For a goal (`at` None) a wrong value is said
    /// as what is there, not as the value the part wants: that may be the answer to a question
    /// still to come (a TimeToLive after the entity's cap).
    fn check_properties(
        &self,
        at: Option<&str>,
        label: &Text,
        want: &BTreeMap<String, serde_json::Value>,
        have: &serde_json::Value,
        out: &mut Vec<Text>,
    ) {
        for (name, expected) in want {
            let actual = have.get(name).unwrap_or(&serde_json::Value::Null);
            if have.get(name).is_none() && !is_check(expected) {
                out.push(text!(
                    "c-what",
                    label = label.clone(),
                    what = text!("c-no-property", name = name)
                ));
                continue;
            }
            if let Err(msg) = self.property_matches(name, expected, actual) {
                let msg = match (at, msg.plain("have")) {
                    (None, Some(have)) if msg.key == "c-expected" => text!("c-unlike", have = have),
                    _ => msg,
                };
                out.push(text!(
                    "c-property",
                    label = label.clone(),
                    name = name,
                    what = msg
                ));
            }
        }
    }

    /// A literal compares for equality (times and durations written as durations); an object
    /// with `differs_from` ("first.LockToken", "first.2.LockToken"), `present` or `min`/`max`
    /// checks that.
    fn property_matches(
        &self,
        name: &str,
        expected: &serde_json::Value,
        actual: &serde_json::Value,
    ) -> Result<(), Text> {
        if !is_check(expected) {
            return literal_matches(name, expected, actual);
        }
        let present = !actual.is_null();
        if let Some(want) = expected.get("present").and_then(serde_json::Value::as_bool) {
            if want != present {
                return Err(text!(
                    if want {
                        "c-want-present"
                    } else {
                        "c-want-absent"
                    },
                    have = actual
                ));
            }
        }
        if let Some(reference) = expected
            .get("differs_from")
            .and_then(serde_json::Value::as_str)
        {
            let earlier = self.named_value(reference)?;
            if &earlier == actual {
                return Err(text!(
                    "c-differs",
                    reference = reference,
                    have = actual.to_string()
                ));
            }
        }
        let bound = |key: &str| expected.get(key).map(|v| as_number(name, v)).transpose();
        let (min, max) = (bound("min")?, bound("max")?);
        if min.is_some() || max.is_some() {
            let have = as_number(name, actual)?;
            if min.is_some_and(|m| have < m) || max.is_some_and(|m| have > m) {
                let show = |v: Option<i64>| v.map_or("-".to_string(), |v| show_value(name, v));
                return Err(text!(
                    "c-range",
                    min = show(min),
                    max = show(max),
                    have = show_value(name, have)
                ));
            }
        }
        Ok(())
    }

    /// "first.LockToken" or "first.2.LockToken": a property of what a named call returned.
    fn named_value(&self, reference: &str) -> Result<serde_json::Value, Text> {
        let (call, property) = reference
            .rsplit_once('.')
            .ok_or_else(|| text!("c-reference", reference = reference))?;
        let (_, view) = self.named_message(call)?;
        let value = serde_json::to_value(view).unwrap_or_default();
        value
            .get(property)
            .cloned()
            .ok_or_else(|| text!("c-no-property", name = property))
    }

    /// "first" (its first message) or "first.2" (its second): the call and the message. The one
    /// place a message's name is taken apart.
    pub(crate) fn named_message(
        &self,
        name: &str,
    ) -> Result<(&NamedCall, &sbp_engine::MessageView), Text> {
        let numbered = name
            .rsplit_once('.')
            .and_then(|(call, n)| Some((call, n.parse::<usize>().ok()?)));
        let (call, index) = numbered.unwrap_or((name, 1));
        let got = self
            .named
            .get(call)
            .ok_or_else(|| text!("c-no-call", name = call))?;
        let view = index
            .checked_sub(1)
            .and_then(|i| got.messages.get(i))
            .ok_or_else(|| {
                text!(
                    "c-call-short",
                    name = call,
                    count = got.messages.len(),
                    number = index
                )
            })?;
        Ok((got, view))
    }
}

/// An expected value that is a check (`present`, `differs_from`, `min`, `max`), not a literal.
fn is_check(v: &serde_json::Value) -> bool {
    v.as_object().is_some_and(|o| {
        !o.is_empty()
            && o.keys()
                .all(|k| ["present", "differs_from", "min", "max"].contains(&k.as_str()))
    })
}

/// Entity settings under the management API's names; durations as milliseconds.
/// A message as expectations read it: the SDK's property names, the system properties (To,
/// ReplyTo, SessionId, ReplyToSessionId, ContentType) at the top as the SDK has them, and also
/// under `SystemProperties`.
fn view_json(view: &sbp_engine::MessageView) -> serde_json::Value {
    let mut have = serde_json::to_value(view).unwrap_or_default();
    if let Some(map) = have.as_object_mut() {
        for (name, value) in &view.system_properties {
            map.entry(name.clone())
                .or_insert_with(|| serde_json::Value::String(value.clone()));
        }
    }
    have
}

fn settings_view(s: &EntitySettings) -> serde_json::Value {
    serde_json::json!({
        "DefaultMessageTimeToLive": s.default_message_time_to_live,
        "LockDuration": s.lock_duration,
        "MaxDeliveryCount": s.max_delivery_count,
        "DeadLetteringOnMessageExpiration": s.dead_lettering_on_message_expiration,
        "AutoDeleteOnIdle": s.auto_delete_on_idle,
        "ForwardTo": s.forward_to,
        "ForwardDeadLetteredMessagesTo": s.forward_dead_lettered_messages_to,
        "MaxSizeInBytes": s.max_size_bytes,
        "RequiresDuplicateDetection": s.requires_duplicate_detection,
        "DuplicateDetectionHistoryTimeWindow": s.duplicate_detection_history_time_window,
        "RequiresSession": s.requires_session,
    })
}

const TIME_PROPERTIES: &[&str] = &[
    "EnqueuedTime",
    "ExpiresAt",
    "LockedUntil",
    "ScheduledEnqueueTime",
    "EffectiveExpiresAt",
];
const DURATION_PROPERTIES: &[&str] = &[
    "TimeToLive",
    "DefaultMessageTimeToLive",
    "LockDuration",
    "AutoDeleteOnIdle",
    "DuplicateDetectionHistoryTimeWindow",
];

/// A value as a number to compare: times and durations may be written as durations.
fn as_number(name: &str, v: &serde_json::Value) -> Result<i64, Text> {
    let timeish = TIME_PROPERTIES.contains(&name) || DURATION_PROPERTIES.contains(&name);
    match v {
        serde_json::Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| text!("c-not-whole", value = v.to_string())),
        serde_json::Value::String(s) if timeish => {
            let d = sbp_engine::time::parse_duration(s)?;
            Ok(if TIME_PROPERTIES.contains(&name) && d >= MAX_VALUE {
                NEVER
            } else {
                d
            })
        }
        other => Err(text!("c-not-number", value = other.to_string())),
    }
}

fn show_value(name: &str, v: i64) -> String {
    if TIME_PROPERTIES.contains(&name) {
        format_instant(v)
    } else if DURATION_PROPERTIES.contains(&name) {
        sbp_engine::time::format_duration(v)
    } else {
        v.to_string()
    }
}

/// Times and durations are written as durations ("15m", "never"); the rest compares as JSON.
fn literal_matches(
    name: &str,
    expected: &serde_json::Value,
    actual: &serde_json::Value,
) -> Result<(), Text> {
    let is_time = TIME_PROPERTIES.contains(&name);
    if is_time || DURATION_PROPERTIES.contains(&name) {
        let want = match expected {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(sbp_engine::time::parse_duration(s)?),
            serde_json::Value::Number(n) => n.as_i64(),
            other => return Err(text!("c-write-duration", value = other.to_string())),
        };
        let want = want.map(|w| if is_time && w >= MAX_VALUE { NEVER } else { w });
        let have = actual.as_i64();
        if want != have {
            let show = |v: Option<i64>| match v {
                None => "-".to_string(),
                Some(v) if is_time => format_instant(v),
                Some(v) => sbp_engine::time::format_duration(v),
            };
            return Err(text!("c-expected", want = show(want), have = show(have)));
        }
        return Ok(());
    }
    if expected != actual {
        return Err(text!(
            "c-expected",
            want = expected.to_string(),
            have = actual.to_string()
        ));
    }
    Ok(())
}
