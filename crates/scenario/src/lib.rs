//! # sbp-scenario
//!
//! Scenario files (a versioned JSON format: a namespace, its entities, a timeline of actions at
//! instants, and expectations), their validation with messages a person understands, the runner
//! that plays them over the engine, the share-link codec, and the preset scenarios.
pub mod bounds;
pub use sbp_engine::text as catalog;
mod check;
pub mod dur;
pub mod lesson;
pub mod link;
pub mod model;
pub mod presets;
pub mod rewind;
pub mod rules_data;
pub mod run;
pub mod step;
pub mod utc;
mod wire;
pub mod words;

pub use dur::Dur;
pub use model::*;
pub use rewind::Rewind;
pub use run::{Holding, NamedCall, Next, Simulation, StepOutcome};
pub use step::{entity_command, Action, Step};

/// Why a scenario could not be read or started. Every variant says what to fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    #[error(
        "the scenario is not valid JSON for this format (line {line}, column {column}): {message}"
    )]
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("the scenario is not valid: {0}")]
    Invalid(String),
    #[error("the link is broken: {0}")]
    Link(String),
}

impl ScenarioError {
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
            ScenarioError::Invalid(m) => ScenarioError::Invalid(clip(m)),
            ScenarioError::Link(m) => ScenarioError::Link(clip(m)),
        }
    }
}

impl Scenario {
    /// Checks what serde cannot: the version, one action per step, time order, the start time.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let invalid = |m: String| Err(ScenarioError::Invalid(m));
        if self.version != FORMAT_VERSION {
            return invalid(format!(
                "version {} is not supported; this playground reads version {FORMAT_VERSION}",
                self.version
            ));
        }
        if let Some(start) = &self.start {
            utc::parse_start(start).map_err(|m| ScenarioError::Invalid(format!("start: {m}")))?;
        }
        for (i, e) in self.entities.iter().enumerate() {
            let kinds = [&e.queue, &e.topic, &e.subscription]
                .iter()
                .filter(|k| k.is_some())
                .count();
            if kinds != 1 {
                return invalid(format!(
                    "entities[{i}]: give exactly one of \"queue\", \"topic\" or \"subscription\""
                ));
            }
            if e.rule.is_some() && e.subscription.is_none() {
                return invalid(format!("entities[{i}]: only a subscription has a \"rule\""));
            }
        }
        let mut last = 0;
        for (i, step) in self.timeline.iter().enumerate() {
            if step.at.ms() < last {
                return invalid(format!(
                    "timeline[{i}]: at {} comes before the step above it; steps are in time order",
                    sbp_engine::time::format_duration(step.at.ms())
                ));
            }
            last = step.at.ms();
            if let Some(unknown) = step.expect_error.as_ref().and_then(ErrorMatch::unknown) {
                return invalid(format!("timeline[{i}]: expect_error \"{unknown}\" is not an error name such as MessageLockLost, nor \"any\" or \"client\""));
            }
        }
        let mut last = 0;
        for (i, e) in self.expect.iter().enumerate() {
            if e.at.ms() < last {
                return invalid(format!("expect[{i}]: expectations are in time order"));
            }
            last = e.at.ms();
        }
        self.check_bounds().map_err(ScenarioError::Invalid)
    }
}
