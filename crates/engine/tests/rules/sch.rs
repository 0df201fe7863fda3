use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn r_sch_01_scheduled_until_its_time_cancel_removes() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    let a = ns.schedule("q", msg("a", None), MINUTE).unwrap();
    let b = ns.schedule("q", msg("b", None), MINUTE).unwrap();
    assert_eq!(
        ns.message("q", a, Perspective::Peek).unwrap().state,
        MessageState::Scheduled
    );
    assert!(recv(&mut ns, "q", 5).is_empty());
    ns.cancel_scheduled("q", b).unwrap();
    assert_eq!(
        ns.cancel_scheduled("q", b).unwrap_err().kind,
        ErrorKind::MessageNotFound
    );
    ns.advance_to(MINUTE);
    let m = ns.message("q", a, Perspective::Peek).unwrap();
    assert_eq!((m.state, m.enqueued_time), (MessageState::Active, MINUTE));
    assert!(ns.message("q", b, Perspective::Peek).is_none());
}
