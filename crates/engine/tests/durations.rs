//! The engine reads and writes durations in humantime's syntax with its own few lines of code
//! (humantime stays out of the browser's wasm): checked against humantime itself.
use proptest::prelude::*;
use sbp_engine::time::{format_duration, parse_duration, MAX_VALUE};
use std::time::Duration;

fn humantime_format(ms: i64) -> String {
    humantime::format_duration(Duration::from_millis(ms as u64)).to_string()
}

proptest! {
    #[test]
    fn formats_as_humantime_does(ms in 1i64..40_000_000_000_000) {
        prop_assert_eq!(format_duration(ms), humantime_format(ms));
    }

    #[test]
    fn reads_back_what_it_writes(ms in 0i64..40_000_000_000_000) {
        prop_assert_eq!(parse_duration(&format_duration(ms)), Ok(ms));
    }

    #[test]
    fn reads_what_humantime_reads(
        parts in proptest::collection::vec((0u64..100_000, 0usize..18), 1..5),
        spaced in any::<bool>(),
    ) {
        const UNITS: [&str; 18] = ["ms", "msec", "s", "sec", "secs", "second", "seconds", "m", "min",
            "mins", "minute", "minutes", "h", "hr", "hours", "d", "days", "w"];
        let text: Vec<String> = parts.iter().map(|(n, u)| format!("{n}{}", UNITS[*u])).collect();
        let text = text.join(if spaced { " " } else { "" });
        let theirs = humantime::parse_duration(&text).expect("humantime reads it");
        prop_assert_eq!(parse_duration(&text), Ok(theirs.as_millis() as i64));
    }
}

#[test]
fn the_special_forms_and_the_errors() {
    assert_eq!(parse_duration("MaxValue"), Ok(MAX_VALUE));
    // A number alone is seconds: "30" and "30s" are one duration wherever they are typed.
    assert_eq!(parse_duration("1500"), Ok(1_500_000));
    assert_eq!(parse_duration(" 30 "), parse_duration("30s"));
    assert!(parse_duration("-5").is_err());
    assert_eq!(parse_duration("9223372036854775807"), Ok(MAX_VALUE));
    assert_eq!(parse_duration("1year"), Ok(31_557_600_000));
    assert_eq!(parse_duration("2months"), Ok(2 * 2_630_016_000));
    assert_eq!(format_duration(0), "0s");
    assert_eq!(format_duration(-5000), "-5s");
    assert_eq!(format_duration(MAX_VALUE), "MaxValue");
    for bad in ["5 parsecs", "m5", "1.5h", "10s and", ""] {
        let e = parse_duration(bad).expect_err(bad);
        assert!(e.to_string().contains("duration"), "{bad}: {e}");
    }
    // Nothing overflows.
    assert_eq!(
        parse_duration("99999999999999999999d"),
        Err(parse_duration("99999999999999999999d").unwrap_err())
    );
    assert_eq!(parse_duration("9999999999999999d"), Ok(MAX_VALUE));
}
