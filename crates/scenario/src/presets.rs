//! The preset scenarios, one for every example and rule family of the seeds. Each is a scenario
//! file in `presets/` with expectations; the test command runs every one through the CLI.

/// (file stem, JSON text)
pub const PRESETS: &[(&str, &str)] = &[
    (
        "ttl-expiry-to-dlq",
        include_str!("../presets/ttl-expiry-to-dlq.json"),
    ),
    (
        "ttl-expiry-dropped",
        include_str!("../presets/ttl-expiry-dropped.json"),
    ),
    (
        "ttl-capped-by-entity-default",
        include_str!("../presets/ttl-capped-by-entity-default.json"),
    ),
    (
        "scheduled-ttl",
        include_str!("../presets/scheduled-ttl.json"),
    ),
    (
        "complete-after-expiry",
        include_str!("../presets/complete-after-expiry.json"),
    ),
    (
        "abandon-after-expiry",
        include_str!("../presets/abandon-after-expiry.json"),
    ),
    (
        "lapsed-locks-to-dlq",
        include_str!("../presets/lapsed-locks-to-dlq.json"),
    ),
    (
        "defer-and-receive-by-seq",
        include_str!("../presets/defer-and-receive-by-seq.json"),
    ),
    (
        "topic-ttl-smaller",
        include_str!("../presets/topic-ttl-smaller.json"),
    ),
    (
        "peek-shows-maxvalue",
        include_str!("../presets/peek-shows-maxvalue.json"),
    ),
    (
        "realistic-lazy-expiry",
        include_str!("../presets/realistic-lazy-expiry.json"),
    ),
    (
        "lock-lost-on-entity-update",
        include_str!("../presets/lock-lost-on-entity-update.json"),
    ),
    (
        "auto-delete-on-idle",
        include_str!("../presets/auto-delete-on-idle.json"),
    ),
    (
        "peek-keeps-queue-alive",
        include_str!("../presets/peek-keeps-queue-alive.json"),
    ),
    (
        "story-traffic-spike",
        include_str!("../presets/story-traffic-spike.json"),
    ),
    (
        "story-crashing-consumer",
        include_str!("../presets/story-crashing-consumer.json"),
    ),
    (
        "story-duplicate-processing",
        include_str!("../presets/story-duplicate-processing.json"),
    ),
    (
        "story-duplicate-idempotent",
        include_str!("../presets/story-duplicate-idempotent.json"),
    ),
    (
        "story-temporary-reply-queue",
        include_str!("../presets/story-temporary-reply-queue.json"),
    ),
    (
        "duplicate-detection",
        include_str!("../presets/duplicate-detection.json"),
    ),
    (
        "topic-filters",
        include_str!("../presets/topic-filters.json"),
    ),
    ("sessions", include_str!("../presets/sessions.json")),
];

/// A preset's scenario by file stem.
pub fn preset(name: &str) -> Option<Result<crate::Scenario, crate::ScenarioError>> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, json)| crate::Scenario::from_json(json))
}

/// A preset's words in one language (`presets/i18n/<lang>.json`, fetched data): its name,
/// description and step notes (by the step's index in the timeline). English is the preset
/// file's own.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetWords {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub notes: std::collections::BTreeMap<usize, String>,
}

/// Every preset's words in one language, by preset name.
pub type PresetTexts = std::collections::BTreeMap<String, PresetWords>;

/// Reads a language's preset words (`presets/i18n/<lang>.json`).
pub fn preset_texts(json: &str) -> Result<PresetTexts, String> {
    serde_json::from_str(json).map_err(|e| e.to_string())
}

/// Puts `words` into `scenario`: its name, description, and each note a step has (a note for a
/// step without one, or beyond the timeline, is left out; what the words lack stays English).
pub fn translate(scenario: &mut crate::Scenario, words: &PresetWords) {
    if !words.name.is_empty() {
        scenario.name = words.name.clone();
    }
    if !words.description.is_empty() {
        scenario.description = words.description.clone();
    }
    for (index, note) in &words.notes {
        if let Some(step) = scenario
            .timeline
            .get_mut(*index)
            .filter(|s| s.note.is_some())
        {
            step.note = Some(note.clone());
        }
    }
}
