//! The playground's RFC 3339 code agrees with the `time` crate (which the browser build leaves
//! out to stay small).
use proptest::prelude::*;
use sbp_scenario::utc::{format_utc, parse_start};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The last millisecond of year 9999.
const MAX_MS: i64 = 253_402_300_799_999;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    #[test]
    fn formatting_any_instant_agrees_with_time(ms in 0i64..=MAX_MS) {
        let t = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap();
        prop_assert_eq!(format_utc(0, ms), t.format(&Rfc3339).unwrap());
    }

    #[test]
    fn parsing_agrees_with_time(
        y in 1970i64..=9999, mo in 0i64..=13, d in 0i64..=32, h in 0i64..=24, mi in 0i64..=60,
        s in 0i64..=59, frac in prop::option::of(0u32..1_000_000), offset in prop::option::of((any::<bool>(), 0i64..=23, 0i64..=59)),
    ) {
        let fraction = frac.map(|f| format!(".{f:06}")).unwrap_or_default();
        let zone = offset.map_or("Z".to_string(), |(neg, oh, om)| format!("{}{oh:02}:{om:02}", if neg { '-' } else { '+' }));
        let text = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{fraction}{zone}");
        let theirs = OffsetDateTime::parse(&text, &Rfc3339)
            .ok()
            .map(|t| t.unix_timestamp_nanos().div_euclid(1_000_000) as i64);
        let ours = parse_start(&text).ok();
        // `time` keeps sub-millisecond digits; ours drops them: whole milliseconds, rounded down.
        prop_assert_eq!(ours, theirs, "{}", text);
    }
}

#[test]
fn the_default_start_and_never() {
    assert_eq!(parse_start("2026-01-01T00:00:00Z"), Ok(1_767_225_600_000));
    assert_eq!(
        format_utc(1_767_225_600_000, 30_500),
        "2026-01-01T00:00:30.5Z"
    );
    assert!(format_utc(0, sbp_engine::time::NEVER).contains("never"));
    for bad in [
        "",
        "2026-01-01",
        "2026-02-30T00:00:00Z",
        "2026-01-01T00:00:00",
        "x".repeat(100).as_str(),
    ] {
        assert!(parse_start(bad).is_err(), "{bad}");
    }
}
