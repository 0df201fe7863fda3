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

/// Parses "10s", "1m 30s", "500ms", "14d", "2h", "MaxValue"/"never", or a number alone, which
/// is seconds: the one rule for a duration without a unit wherever one is typed or written as
/// text (a form, a prediction's answer, a scenario file's `"ttl": "30"`, the CLI). Seconds, as
/// the SDKs' own waits are (Python's `max_wait_time`, a TimeSpan's usual unit); a file's JSON
/// number is milliseconds ([`duration_ms`]).
pub fn parse_duration(text: &str) -> Result<Duration, crate::text::Text> {
    let t = text.trim();
    if t.is_empty() {
        return Err(crate::text!("e-duration-empty"));
    }
    if ["maxvalue", "max", "never", "infinite"].contains(&t.to_ascii_lowercase().as_str()) {
        return Ok(MAX_VALUE);
    }
    if let Ok(secs) = t.parse::<i64>() {
        return duration_ms(secs.saturating_mul(SECOND), t);
    }
    parse_units(t)
        .map(|ms| ms.min(MAX_VALUE))
        .map_err(|why| crate::text!("e-duration", value = t, why = why))
}

/// A number of milliseconds as a duration (a scenario file's JSON number); `shown` is how it
/// was written, for the error. Negative is refused; past MaxValue is MaxValue.
pub fn duration_ms(ms: i64, shown: &str) -> Result<Duration, crate::text::Text> {
    if ms < 0 {
        Err(crate::text!("e-duration-negative", value = shown))
    } else {
        Ok(ms.min(MAX_VALUE))
    }
}

/// Milliseconds in each unit humantime's syntax knows, longest names first where one is a
/// prefix of another.
const UNITS: [(&str, i64); 26] = [
    ("msec", 1),
    ("ms", 1),
    ("seconds", SECOND),
    ("second", SECOND),
    ("secs", SECOND),
    ("sec", SECOND),
    ("s", SECOND),
    ("minutes", MINUTE),
    ("minute", MINUTE),
    ("mins", MINUTE),
    ("min", MINUTE),
    ("m", MINUTE),
    ("hours", HOUR),
    ("hour", HOUR),
    ("hrs", HOUR),
    ("hr", HOUR),
    ("h", HOUR),
    ("days", DAY),
    ("day", DAY),
    ("d", DAY),
    ("weeks", 7 * DAY),
    ("week", 7 * DAY),
    ("w", 7 * DAY),
    ("months", MONTH),
    ("month", MONTH),
    ("M", MONTH),
];
/// humantime's month and year (30.44 and 365.25 days).
const MONTH: i64 = 2_630_016 * SECOND;
const YEAR: i64 = 31_557_600 * SECOND;

/// "1h 30m", "2days 5s", "500ms": numbers each followed by a unit (humantime's syntax, whole
/// milliseconds), summed without overflow.
fn parse_units(text: &str) -> Result<i64, crate::text::Text> {
    let mut total: i64 = 0;
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Err(crate::text!("e-duration-number"));
        }
        let value: i64 = rest[..digits]
            .parse()
            .map_err(|_| crate::text!("e-duration-too-large"))?;
        rest = rest[digits..].trim_start();
        let unit_len = rest.len()
            - rest
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .len();
        let unit = &rest[..unit_len];
        let scale = match unit {
            "years" | "year" | "y" => YEAR,
            "" => return Err(crate::text!("e-duration-no-unit")),
            _ => UNITS
                .iter()
                .find(|(name, _)| *name == unit)
                .map(|(_, ms)| *ms)
                .ok_or_else(|| crate::text!("e-duration-unit", unit = unit))?,
        };
        total = total.saturating_add(value.saturating_mul(scale));
        rest = rest[unit_len..].trim_start();
    }
    Ok(total)
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
    // humantime's format: years, months (30.44 days) and days spelt out, then h, m, s, ms.
    let (secs, millis) = (ms / 1000, ms % 1000);
    let (years, rest) = (secs / 31_557_600, secs % 31_557_600);
    let (months, rest) = (rest / 2_630_016, rest % 2_630_016);
    let (days, rest) = (rest / 86_400, rest % 86_400);
    let parts = [
        (years, "year"),
        (months, "month"),
        (days, "day"),
        (rest / 3600, "h"),
        (rest % 3600 / 60, "m"),
        (rest % 60, "s"),
        (millis, "ms"),
    ];
    let mut out = String::from(sign);
    for (i, (value, unit)) in parts.into_iter().enumerate() {
        if value == 0 {
            continue;
        }
        if out.len() > sign.len() {
            out.push(' ');
        }
        out.push_str(&value.to_string());
        out.push_str(unit);
        if i < 3 && value > 1 {
            out.push('s');
        }
    }
    out
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
