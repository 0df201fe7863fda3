//! A scenario: the file format's top level (version 1), its entities, timeline of steps and
//! expectations, read and validated in one call.
use crate::model::{EntityDef, Expectation, NamespaceDef};
use crate::step::Step;
use serde::{Deserialize, Serialize};

pub const FORMAT_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The format's version: 1.
    pub version: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The instant t=0 in UTC (RFC 3339). Default 2026-01-01T00:00:00Z.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Seeds the namespace's random numbers (lock tokens, tracking ids).
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub namespace: NamespaceDef,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<EntityDef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<Step>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expectation>,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            version: FORMAT_VERSION,
            name: String::new(),
            description: String::new(),
            start: None,
            seed: 0,
            namespace: NamespaceDef::default(),
            entities: Vec::new(),
            timeline: Vec::new(),
            expect: Vec::new(),
        }
    }
}

impl Scenario {
    /// Parses and validates a scenario; the error says where and what, in words.
    pub fn from_json(text: &str) -> Result<Scenario, crate::ScenarioError> {
        let scenario: Scenario = serde_json::from_str(text).map_err(|e| {
            crate::ScenarioError::Parse {
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            }
            .clipped()
        })?;
        scenario.validate().map_err(crate::ScenarioError::clipped)?;
        Ok(scenario)
    }

    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
