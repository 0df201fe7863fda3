//! The rule list as data (`sbp rules`): each rule's id and summary, and the playground's own
//! choices. The browser shows them from its catalogs (`rule-<id>`, `choice-<n>`); a test keeps
//! the English catalog in step with these.
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct RulesData {
    /// (id, summary) of every rule, in the engine's order.
    pub rules: Vec<(String, String)>,
    /// What the playground chose where no source decides, one paragraph each.
    pub choices: Vec<String>,
}

/// The playground's choices, as the rules panel explains them.
pub const CHOICES: &[&str] = &[
    "TTL expiry and MaxDeliveryCount on the same lock release: MaxDeliveryCount wins. The release is a failed delivery, counted and checked first (MaxDeliveryCountExceeded).",
    "Renewing the lock of a nominally expired message: allowed. Expiry does not touch a locked message (TTL-09), so the holder may keep it.",
    "LockDuration defaults to 30 s as in the source article (the current Azure API creates 60 s). Every lock that ends without settlement counts as a failed delivery; defer counts one too.",
    "A forwarded message starts afresh in its target (DeliveryCount 0, FWD-01); forwarding out of a dead-letter queue counts as a hop, so every loop ends at the hop limit (FWD-02).",
    "Rewinding replays from the nearest checkpoint before the instant; the engine is deterministic, so the state is exactly the one a replay from the start reaches (the event log keeps the last 1,000 events of the checkpoint and what came after).",
];

/// The data file's text.
pub fn rules_json() -> String {
    let data = RulesData {
        rules: sbp_engine::Rule::ALL
            .iter()
            .map(|r| (r.id().to_string(), r.summary().to_string()))
            .collect(),
        choices: CHOICES.iter().map(|c| c.to_string()).collect(),
    };
    let mut text = serde_json::to_string_pretty(&data).unwrap_or_default();
    text.push('\n');
    text
}
