//! Helpers the engine's test files share (`mod common;`, or `#[path]` from `tests/rules`).
#![allow(dead_code)]
use sbp_engine::{MessageView, Namespace, Perspective};

/// Message `seq` of `entity`'s dead-letter queue as peek shows it, asserting its
/// DeadLetterReason.
pub fn assert_dead_lettered(ns: &Namespace, entity: &str, seq: u64, reason: &str) -> MessageView {
    let dlq = format!("{entity}/$deadletterqueue");
    let m = ns
        .message(&dlq, seq, Perspective::Peek)
        .unwrap_or_else(|| panic!("#{seq} is not in {dlq}"));
    assert_eq!(
        m.dead_letter_reason.as_deref(),
        Some(reason),
        "#{seq} in {dlq}"
    );
    m
}
