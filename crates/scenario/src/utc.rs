//! The scenario's start in UTC, and instants shown as UTC times (expires-at-utc is a UTC time).
use sbp_engine::time::{Instant, NEVER};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub const DEFAULT_START: &str = "2026-01-01T00:00:00Z";

/// Parses an RFC 3339 UTC time into Unix milliseconds.
pub fn parse_start(text: &str) -> Result<i64, String> {
    let t = OffsetDateTime::parse(text.trim(), &Rfc3339).map_err(|e| {
        format!("\"{text}\" is not an RFC 3339 time such as \"2026-01-01T09:00:00Z\" ({e})")
    })?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000)
        .map_err(|_| format!("\"{text}\" is out of range"))
}

/// `start + at` as "2026-01-01T09:00:30.000Z", or "9999-12-31T23:59:59.9999999Z (never)".
pub fn format_utc(start_unix_ms: i64, at: Instant) -> String {
    if at == NEVER {
        return "9999-12-31T23:59:59.9999999Z (never)".into();
    }
    let ms = start_unix_ms.saturating_add(at);
    let Ok(t) = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000) else {
        return "9999-12-31T23:59:59.9999999Z (never)".into();
    };
    let t = t
        .replace_nanosecond((ms.rem_euclid(1000) as u32) * 1_000_000)
        .unwrap_or(t);
    t.format(&Rfc3339)
        .unwrap_or_else(|_| format!("{ms} ms since 1970"))
}
