//! The scenario's start in UTC, and instants shown as UTC times. RFC 3339 with the civil-date
//! arithmetic of Howard Hinnant's `days_from_civil`; small enough to keep the `time` crate (and
//! its tables) out of the browser's wasm. `tests/utc.rs` checks it against `time` itself.
use crate::time::{Instant, NEVER};

pub const DEFAULT_START: &str = "2026-01-01T00:00:00Z";
const NEVER_TEXT: &str = "9999-12-31T23:59:59.9999999Z (never)";
const DAY_MS: i64 = 86_400_000;

/// Days from 1970-01-01 to year-month-day (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Year, month, day of a day count from 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses an RFC 3339 time ("2026-01-01T09:00:00Z", "...:00.5+02:00") into Unix milliseconds.
pub fn parse_start(text: &str) -> Result<i64, crate::text::Text> {
    let bad = || crate::text!("s-start", value = text);
    let t = text.trim().as_bytes();
    let num = |from: usize, len: usize| -> Result<i64, crate::text::Text> {
        let part = t.get(from..from + len).ok_or_else(bad)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        Ok(part.iter().fold(0, |n, c| n * 10 + i64::from(c - b'0')))
    };
    let sep = |at: usize, ok: &[u8]| t.get(at).is_some_and(|c| ok.contains(c));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt") && sep(13, b":") && sep(16, b":")) {
        return Err(bad());
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&mo)
        || !(1..=days_in_month(y, mo)).contains(&d)
        || h > 23
        || mi > 59
        || s > 59
    {
        return Err(bad());
    }
    // Fraction of a second: milliseconds kept, finer digits dropped.
    let mut i = 19;
    let mut ms = 0;
    if sep(i, b".") {
        let start = i + 1;
        i = start;
        while t.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return Err(bad());
        }
        let digits = (i - start).min(3);
        ms = num(start, digits)? * [100, 10, 1][digits - 1];
    }
    let offset_min = match t.get(i..) {
        Some(b"Z") | Some(b"z") => 0,
        Some([sign @ (b'+' | b'-'), _, _, b':', _, _]) => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return Err(bad());
            }
            let m = oh * 60 + om;
            if *sign == b'-' {
                -m
            } else {
                m
            }
        }
        _ => return Err(bad()),
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset_min * 60;
    Ok(secs * 1000 + ms)
}

/// `start + at` as "2026-01-01T09:00:30Z" ("...:30.25Z" with a fraction), or "9999-12-31T23:59:59.9999999Z (never)".
pub fn format_utc(start_unix_ms: i64, at: Instant) -> String {
    if at == NEVER {
        return NEVER_TEXT.into();
    }
    let ms = start_unix_ms.saturating_add(at);
    let (days, rest) = (ms.div_euclid(DAY_MS), ms.rem_euclid(DAY_MS));
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return format!("{ms} ms since 1970");
    }
    let (h, rest) = (rest / 3_600_000, rest % 3_600_000);
    let (mi, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    let fraction = if milli == 0 {
        String::new()
    } else {
        format!(".{milli:03}").trim_end_matches('0').to_string()
    };
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}{fraction}Z")
}
