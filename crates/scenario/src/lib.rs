//! # sbp-scenario
//!
//! Scenario files (a versioned JSON format: a namespace, its entities, a timeline of actions at
//! instants, and expectations), their validation with messages a person understands, the runner
//! that plays them over the engine, the share-link codec, and the preset scenarios.
/// Reads a struct key by key, each field's own reader called directly: smaller in the wasm than a
/// derived reader of a wide struct. `field as "key"` reads a field under another
/// key; the keys in `required { ... }` must be given; the rest keep the struct's `Default`. An
/// unknown key, a key given twice and a missing required one are refused as a derived reader
/// (with `deny_unknown_fields`) would.
#[macro_export]
macro_rules! read_by_key {
    (@key $field:ident) => { stringify!($field) };
    (@key $field:ident $key:literal) => { $key };
    ($ty:ident { $($field:ident $(as $key:literal)?),* $(,)? } $(required { $($req:literal),* $(,)? })?) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Visitor;
                impl<'de> serde::de::Visitor<'de> for Visitor {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str(stringify!($ty))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> Result<$ty, A::Error> {
                        let mut out = <$ty>::default();
                        let mut seen: Vec<&'static str> = Vec::new();
                        while let Some(key) = map.next_key::<String>()? {
                            let name = match key.as_str() {
                                $($crate::read_by_key!(@key $field $($key)?) => {
                                    out.$field = map.next_value()?;
                                    $crate::read_by_key!(@key $field $($key)?)
                                })*
                                other => {
                                    return Err(serde::de::Error::unknown_field(
                                        other,
                                        &[$($crate::read_by_key!(@key $field $($key)?)),*],
                                    ))
                                }
                            };
                            $crate::seen(&mut seen, name)?;
                        }
                        $($($crate::required(&seen, $req)?;)*)?
                        Ok(out)
                    }
                }
                d.deserialize_map(Visitor)
            }
        }
    };
}

/// `read_by_key!`: a key read; the second time it is an error.
#[doc(hidden)]
pub fn seen<E: serde::de::Error>(seen: &mut Vec<&'static str>, key: &'static str) -> Result<(), E> {
    if seen.contains(&key) {
        return Err(E::duplicate_field(key));
    }
    seen.push(key);
    Ok(())
}

/// `read_by_key!`: a required key that was not given is an error.
#[doc(hidden)]
pub fn required<E: serde::de::Error>(seen: &[&'static str], key: &'static str) -> Result<(), E> {
    match seen.contains(&key) {
        true => Ok(()),
        false => Err(E::missing_field(key)),
    }
}

pub mod bounds;
pub use sbp_engine::text as catalog;
mod check;
pub mod checkpoint;
pub mod code;
pub mod code_text;

pub mod dur;
pub mod emulator;
pub mod lesson;
pub mod link;
pub mod model;
pub mod presets;
pub mod rewind;
pub mod rules_data;
pub mod run;
pub mod scenario;
pub mod step;
pub use sbp_engine::utc;
pub mod vecmap;
mod wire;
pub mod words;

pub use dur::Dur;
pub use model::*;
pub use rewind::Rewind;
pub use run::{Holding, NamedCall, Next, Simulation, StepOutcome};
use sbp_engine::text;
pub use sbp_engine::text::{Arg, Text};
pub use scenario::{Scenario, FORMAT_VERSION};
pub use step::{entity_command, Action, Step};

/// "timeline[3]: ...": what is wrong, and where.
pub fn at_field(field: impl Into<String>, what: Text) -> Text {
    text!("s-at-field", field = field.into(), what = what)
}

/// Why a scenario could not be read or started. Every variant says what to fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScenarioError {
    /// The JSON reader's own words (serde's, in English) for what it could not read.
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    Invalid(Text),
    Link(Text),
}

impl std::error::Error for ScenarioError {}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.text().fmt(f)
    }
}

impl ScenarioError {
    /// The error in words: "the scenario is not valid: ...".
    pub fn text(&self) -> Text {
        match self {
            ScenarioError::Parse {
                line,
                column,
                message,
            } => text!(
                "s-parse",
                line = *line,
                column = *column,
                message = message.as_str()
            ),
            ScenarioError::Invalid(t) => text!("s-invalid", what = t.clone()),
            ScenarioError::Link(t) => text!("s-link", what = t.clone()),
        }
    }

    /// The same error with its text cut to a readable length: a message quoting a huge value
    /// shows the value's start only.
    pub fn clipped(self) -> ScenarioError {
        let clip = |m: String| sbp_engine::error::clip(m, sbp_engine::error::MAX_MESSAGE);
        match self {
            ScenarioError::Parse {
                line,
                column,
                message,
            } => ScenarioError::Parse {
                line,
                column,
                message: clip(message),
            },
            other => other,
        }
    }
}

impl Scenario {
    /// Checks what serde cannot: the version, one action per step, time order, the start time.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let invalid = |m: Text| Err(ScenarioError::Invalid(m));
        if self.version != FORMAT_VERSION {
            return invalid(text!(
                "s-version",
                version = self.version,
                supported = FORMAT_VERSION
            ));
        }
        if let Some(start) = &self.start {
            utc::parse_start(start).map_err(|m| ScenarioError::Invalid(at_field("start", m)))?;
        }
        for (i, e) in self.entities.iter().enumerate() {
            let kinds = [&e.queue, &e.topic, &e.subscription]
                .iter()
                .filter(|k| k.is_some())
                .count();
            if kinds != 1 {
                return invalid(at_field(format!("entities[{i}]"), text!("s-entity-kind")));
            }
            if e.rule.is_some() && e.subscription.is_none() {
                return invalid(at_field(
                    format!("entities[{i}]"),
                    text!("s-rule-subscription"),
                ));
            }
        }
        let mut last = 0;
        for (i, step) in self.timeline.iter().enumerate() {
            if step.at.ms() < last {
                return invalid(at_field(
                    format!("timeline[{i}]"),
                    text!(
                        "s-step-order",
                        at = sbp_engine::time::format_duration(step.at.ms())
                    ),
                ));
            }
            last = step.at.ms();
            if let Some(unknown) = step.expect_error.as_ref().and_then(ErrorMatch::unknown) {
                return invalid(at_field(
                    format!("timeline[{i}]"),
                    text!("s-expect-error", name = unknown),
                ));
            }
        }
        let mut last = 0;
        for (i, e) in self.expect.iter().enumerate() {
            if e.at.ms() < last {
                return invalid(at_field(format!("expect[{i}]"), text!("s-expect-order")));
            }
            last = e.at.ms();
            // A dead-letter queue's own messages are counted as active (locked while
            // received); the entity's dead_lettered counts them from the entity's side.
            for (path, counts) in e.counts.iter() {
                let Some(entity) = path.strip_suffix("/$deadletterqueue") else {
                    continue;
                };
                // A dead-letter queue holds none of these: asking for more than none is a
                // count of another place.
                let more_than_none = |c: &Option<model::CountDef>| {
                    c.as_ref().is_some_and(|c| c.min.is_some_and(|m| m > 0))
                };
                let refused = [
                    ("dead_lettered", more_than_none(&counts.dead_lettered)),
                    ("scheduled", more_than_none(&counts.scheduled)),
                    (
                        "duplicates_dropped",
                        more_than_none(&counts.duplicates_dropped),
                    ),
                ];
                if let Some((name, _)) = refused.iter().find(|(_, named)| *named) {
                    return invalid(at_field(
                        format!("expect[{i}]"),
                        text!("s-dlq-count", path = path, name = *name, entity = entity),
                    ));
                }
            }
        }
        self.check_bounds().map_err(ScenarioError::Invalid)
    }
}
