//! A list read that shows an element twice (Jepsen's MongoDB runs, where a
//! retried append lands twice) is one anomaly, `duplicate-elements`,
//! reported once. The version order takes each element once, at its first
//! position, as Elle does: the copies must not order the writes between
//! them both before and after the duplicated one (a G0 that no
//! transaction's writes form).

use elle_si::report::Valid;

use crate::support::*;

fn log() -> elle_si::history::Loaded {
    load(&crate::support::root().join("test-logs/la-duplicate-element.edn"))
}

/// `[1 2 1 3]`: 1's writer, 2's writer and 3's writer are ordered once,
/// 1 then 2 then 3; no cycle, at any model.
#[test]
fn a_duplicated_element_is_reported_once_and_orders_nothing_twice() {
    let l = log();
    for model in [
        "read-committed",
        "read-committed-c4",
        "strong-session-read-committed-c4",
        "read-atomic",
        "causal-cerone",
        "snapshot-isolation",
        "strong-session-snapshot-isolation",
        "serializable",
        "strict-serializable",
    ] {
        let r = check_models(&l, model);
        assert_eq!(r.valid, Valid::False, "{model}");
        assert_eq!(r.anomaly_types, vec!["duplicate-elements"], "{model}");
        let told = r.anomalies.get("duplicate-elements").map_or(0, Vec::len);
        assert_eq!(told, 1, "{model}: the duplicate told {told} times");
    }
}

/// The key's version order keeps the raw elements (reads stay prefixes of
/// it) and marks the second copy as no version of its own.
#[test]
fn the_version_order_skips_the_second_copy() {
    let l = log();
    let h = &l.history;
    let k = (0..h.keys.len() as u32)
        .find(|&k| h.orders[k as usize].elems.len() == 4)
        .expect("key 1's order");
    let o = &h.orders[k as usize];
    assert_eq!(o.repeats, vec![2]);
    let writers: Vec<u32> = o.versions().map(|w| h.txn_of(w)).collect();
    assert_eq!(writers.len(), 3);
    assert_eq!(writers[0], h.txn_of(o.writes[2]), "1's writer first");
}

/// As Elle's: `:duplicates` maps each element read twice or more to its
/// count, `{1 2}`, so that `(get (:duplicates a) 1)` is 2.
#[test]
fn duplicates_are_a_map_of_element_to_count() {
    let out = crate::support::cli()
        .args(["check", "-o", "edn"])
        .arg(crate::support::root().join("test-logs/la-duplicate-element.edn"))
        .output()
        .expect("running elle-si");
    let edn = String::from_utf8_lossy(&out.stdout);
    assert!(edn.contains(":duplicates {1 2}"), "{edn}");
}
