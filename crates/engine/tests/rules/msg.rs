use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn r_msg_01_sequence_numbers_start_at_1_gap_free_and_survive_abandon_and_defer() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    let seqs: Vec<u64> = (0..3)
        .map(|i| ns.send("q", msg(&format!("m{i}"), None)).unwrap())
        .collect();
    assert_eq!(seqs, vec![1, 2, 3]);
    let got = recv(&mut ns, "q", 2);
    settle(&mut ns, "q", got[0].sequence_number, Settlement::Abandon).unwrap();
    settle(&mut ns, "q", got[1].sequence_number, Settlement::Defer).unwrap();
    assert!(ns.entity("q").unwrap().main.messages.contains_key(&1));
    assert!(ns.entity("q").unwrap().main.messages.contains_key(&2));
    assert_eq!(ns.send("q", msg("m3", None)).unwrap(), 4);
}

#[test]
fn r_msg_02_delivery_count_is_1_on_first_lock_and_peek_shows_raw() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    assert_eq!(ns.peek(R, "q", Some(1), 1).unwrap()[0].delivery_count, 0);
    let first = recv(&mut ns, "q", 1);
    assert_eq!(first[0].delivery_count, 1);
    settle(&mut ns, "q", 1, Settlement::Abandon).unwrap();
    assert_eq!(ns.peek("p", "q", Some(1), 1).unwrap()[0].delivery_count, 1);
    assert_eq!(recv(&mut ns, "q", 1)[0].delivery_count, 2);
}

#[test]
fn r_msg_03_max_value_means_never_and_nothing_overflows() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", Some(MAX_VALUE))).unwrap();
    ns.schedule("q", msg("b", Some(MAX_VALUE)), 10 * DAY)
        .unwrap();
    ns.advance_to(i64::MAX - 1);
    let a = ns.message("q", 1, Perspective::Receive).unwrap();
    assert_eq!(a.expires_at, NEVER);
    assert_eq!(after(i64::MAX - 5, MAX_VALUE), NEVER);
    assert_eq!(parse_duration("MaxValue").unwrap(), MAX_VALUE);
    assert_eq!(counts(&ns, "q").active, 2);
}

#[test]
fn r_msg_02_a_card_shows_the_delivery_count_its_viewer_sees() {
    let mut ns = ns();
    queue(&mut ns, "q", settings());
    ns.send("q", msg("a", None)).unwrap();
    let q = ns.resolve("q").unwrap();
    let card = |ns: &Namespace| ns.card(q, ns.entity("q").unwrap().main.messages.get(&1).unwrap());
    assert_eq!(card(&ns).delivery_count, 0, "as peek shows it");
    assert!(card(&ns).settlements.is_empty(), "nobody holds it");
    recv(&mut ns, "q", 1);
    assert_eq!(card(&ns).delivery_count, 1, "as the holder sees it");
    assert_eq!(card(&ns).settlements.len(), 5);
    assert!(matches!(card(&ns).status, CardStatus::Locked { .. }));
    settle(&mut ns, "q", 1, Settlement::Abandon).unwrap();
    assert_eq!(
        card(&ns).delivery_count,
        1,
        "one failed delivery, as peek shows it"
    );
}
