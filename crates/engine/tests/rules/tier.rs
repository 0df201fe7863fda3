use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn r_tier_01_basic_has_no_topics_and_ttl_at_most_14_days() {
    let mut basic = Namespace::builder().tier(Tier::Basic).build();
    assert_eq!(
        basic
            .create_topic("t", EntitySettings::defaults(Tier::Basic))
            .unwrap_err()
            .kind,
        ErrorKind::NotSupported
    );
    basic
        .create_queue("q", EntitySettings::defaults(Tier::Basic))
        .unwrap();
    basic.send("q", msg("a", Some(MAX_VALUE))).unwrap();
    assert_eq!(
        basic.message("q", 1, Perspective::Peek).unwrap().expires_at,
        14 * DAY
    );
    let mut standard = ns();
    standard.create_topic("t", settings()).unwrap();
}

#[test]
fn r_tier_01_basic_has_no_sessions_and_no_duplicate_detection() {
    let mut basic = Namespace::builder().tier(Tier::Basic).build();
    for (field, settings) in [
        (
            "RequiresSession",
            EntitySettings {
                requires_session: true,
                ..EntitySettings::defaults(Tier::Basic)
            },
        ),
        (
            "RequiresDuplicateDetection",
            EntitySettings {
                requires_duplicate_detection: true,
                ..EntitySettings::defaults(Tier::Basic)
            },
        ),
    ] {
        let before = basic.snapshot(usize::MAX);
        let err = basic.create_queue("q", settings.clone()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotSupported, "{field}");
        assert_eq!(err.field.as_deref(), Some(field));
        assert!(err.to_string().contains("TIER-01"), "{err}");
        assert!(basic.same_state_except_log(&before));
        let mut standard = ns();
        standard.create_queue("q", settings).unwrap();
    }
}
