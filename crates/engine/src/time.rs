//! Virtual time. Instants and durations are milliseconds in an `i64`; instants count from the
//! scenario's start. All arithmetic saturates, and [`MAX_VALUE`] (TimeSpan.MaxValue) means "never".

/// A point in virtual time: milliseconds since the scenario's start.
pub type Instant = i64;
/// A length of virtual time in milliseconds.
pub type Duration = i64;

/// TimeSpan.MaxValue (10,675,199 days 02:48:05.477) in milliseconds. MSG-03: it means "never".
pub const MAX_VALUE: Duration = i64::MAX / 10_000;
/// The instant that never comes (DateTimeOffset.MaxValue for ExpiresAt).
pub const NEVER: Instant = i64::MAX;

pub const SECOND: Duration = 1_000;
pub const MINUTE: Duration = 60 * SECOND;
pub const HOUR: Duration = 60 * MINUTE;
pub const DAY: Duration = 24 * HOUR;

/// `at + d`, where a duration of MaxValue (or a sum past it) gives [`NEVER`]. MSG-03.
pub fn after(at: Instant, d: Duration) -> Instant {
    if d >= MAX_VALUE || at == NEVER {
        NEVER
    } else {
        at.saturating_add(d)
    }
}

/// Parses "10s", "1m 30s", "500ms", "14d", "2h", a bare number of milliseconds, or "MaxValue"/"never".
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("an empty duration; write e.g. \"30s\", \"5m\", \"1h\" or \"MaxValue\"".into());
    }
    if ["maxvalue", "max", "never", "infinite"].contains(&t.to_ascii_lowercase().as_str()) {
        return Ok(MAX_VALUE);
    }
    if let Ok(ms) = t.parse::<i64>() {
        return if ms < 0 {
            Err(format!("\"{t}\" is negative; durations are zero or more"))
        } else {
            Ok(ms.min(MAX_VALUE))
        };
    }
    let d = humantime::parse_duration(t).map_err(|e| {
        format!("\"{t}\" is not a duration ({e}); write e.g. \"30s\", \"5m\", \"1h 30m\", \"500ms\" or \"MaxValue\"")
    })?;
    Ok(i64::try_from(d.as_millis())
        .unwrap_or(i64::MAX)
        .min(MAX_VALUE))
}

/// A short human form: "1h 30m", "500ms", "MaxValue", "-5s". Never overflows (i64::MIN too).
pub fn format_duration(d: Duration) -> String {
    if d >= MAX_VALUE {
        return "MaxValue".into();
    }
    let sign = if d < 0 { "-" } else { "" };
    let ms = d.unsigned_abs();
    if ms == 0 {
        return "0s".into();
    }
    format!(
        "{sign}{}",
        humantime::format_duration(std::time::Duration::from_millis(ms))
    )
}

/// "t=1m 30s" for an instant relative to the scenario start, or "never".
pub fn format_instant(at: Instant) -> String {
    if at == NEVER {
        "never".into()
    } else {
        format!("t={}", format_duration(at))
    }
}

/// `v` with at most `decimals` decimals, trailing zeros dropped ("2.5", "10", "-0.1"). Integer
/// arithmetic only: float formatting would add its tables to the browser's wasm.
pub fn format_decimal(v: f64, decimals: u32) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else {
            "∞".into()
        };
    }
    let scale = 10u64.pow(decimals.min(6));
    let n = (v * scale as f64).round() as i64;
    let sign = if n < 0 { "-" } else { "" };
    let n = n.unsigned_abs();
    let (int, frac) = (n / scale, n % scale);
    if frac == 0 {
        return format!("{sign}{int}");
    }
    let digits = format!("{frac:0width$}", width = decimals.min(6) as usize);
    format!("{sign}{int}.{}", digits.trim_end_matches('0'))
}
