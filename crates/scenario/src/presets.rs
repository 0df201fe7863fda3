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
