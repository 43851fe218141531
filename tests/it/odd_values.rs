//! Values as Jepsen histories hold them, beyond small integers (issue 53):
//! a nil appended to a list is a value like any other; a register write of
//! nil is refused by name; bigints, decimals, lists, sets and maps compare
//! as Clojure's `=` compares them (`(= 5 5N)`), and kinds it keeps apart
//! (`5` and `5.0`) stay apart. The logs are hand-written, in
//! `test-logs/values/`.

use std::path::PathBuf;

use elle_si::history::{self, LoadOptions, Workload};
use elle_si::report::Valid;

use crate::support;

fn log(name: &str) -> PathBuf {
    crate::support::root().join("test-logs/values").join(name)
}

/// The verdict at each model, in order.
fn verdicts(l: &history::Loaded, models: &[&str]) -> Vec<(String, Valid, Vec<String>)> {
    models
        .iter()
        .map(|m| {
            let (v, types) = support::verdict(l, m);
            (m.to_string(), v, types)
        })
        .collect()
}

const ALL: &[&str] = &[
    "read-committed",
    "causal-cerone",
    "snapshot-isolation",
    "strong-session-snapshot-isolation",
    "serializable",
    "strong-session-serializable",
    "strict-serializable",
];

/// Append 1, then append nil, then read `[1 nil]`, one after another: a
/// serial history, valid everywhere. The nil element was once taken for
/// the initial state, so the read seemed to miss the append of 1
/// (G-single-item-process / -realtime, "T1 appended :initial-state").
#[test]
fn a_nil_element_is_the_value_appended() {
    let l = support::load(&log("la-nil-element.edn"));
    for (m, v, types) in verdicts(&l, ALL) {
        assert_eq!(v, Valid::True, "{m}: {types:?}");
    }
    // The read resolved to the append of nil, not the initial state.
    let h = &l.history;
    let read = h.mops.iter().find(|m| m.is_read()).expect("a read");
    let writer = h.txn_of(read.from);
    assert_eq!(h.txns[writer as usize].complete.line, 4);
}

/// The same, read as `[nil 1]`: the append of nil is ordered before the
/// append of 1, which completed before it began. Decided by the values:
/// serializable, not strict serializable (G0-realtime).
#[test]
fn a_nil_element_out_of_real_time_order_is_caught() {
    let l = support::load(&log("la-nil-element-reordered.edn"));
    let (v, _) = support::verdict(&l, "serializable");
    assert_eq!(v, Valid::True);
    let (v, types) = support::verdict(&l, "strict-serializable");
    assert_eq!(v, Valid::False, "{types:?}");
    assert!(types.iter().any(|t| t == "G0-realtime"), "{types:?}");
}

/// `[:w 1 nil]` then `[:r 1 nil]`: a read of nil cannot tell that write
/// from the initial state, so the history is refused, by file, line and
/// reason, with exit status 3 (it was judged G-single-item).
#[test]
fn a_register_write_of_nil_is_refused_by_name() {
    let path = log("rw-nil-write.edn");
    let e = history::load(&path, LoadOptions::default(), None)
        .map(|_| ())
        .expect_err("refused");
    let text = e.to_string();
    assert!(text.contains("rw-nil-write.edn:2:30"), "{text}");
    assert!(text.contains("a register write of nil"), "{text}");
    // The message unwrapped, as JSON gives it.
    let out = crate::support::cli()
        .args(["check", "-o", "json"])
        .arg(&path)
        .output()
        .expect("running elle-si");
    assert_eq!(out.status.code(), Some(3));
    let err: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        (&err["error"]["line"], &err["error"]["column"]),
        (&2.into(), &30.into())
    );
    let message = err["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("a register write of nil"), "{err}");
}

/// A write of 5 read as `5N`, of a bigint read without its `N`, of `1.50M`
/// read as `1.5M`, with key `1` read as `1N`: each read is of that write
/// (they were thin-air reads).
#[test]
fn bigints_and_decimals_read_as_the_values_written() {
    let l = support::load(&log("rw-bigint.edn"));
    let h = &l.history;
    assert_eq!(h.keys.len(), 3, "keys 1 and 1N are one key");
    for m in h.mops.iter().filter(|m| m.is_read()) {
        assert!(m.from < elle_si::history::model::from::THIN_AIR, "{m:?}");
    }
    for (m, v, types) in verdicts(&l, ALL) {
        assert_eq!(v, Valid::True, "{m}: {types:?}");
    }
}

/// Register values that are collections: `[1 2]` read as `(1 2N)`, a set
/// and a map read in another order. Equal by Clojure's `=`, so valid.
#[test]
fn collections_read_in_another_form_are_the_values_written() {
    let l = history::load(
        &log("rw-collections.edn"),
        LoadOptions {
            workload: Some(Workload::RwRegister),
            ..LoadOptions::default()
        },
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for (m, v, types) in verdicts(&l, ALL) {
        assert_eq!(v, Valid::True, "{m}: {types:?}");
    }
}

/// `(= 5 5.0)` is false in Clojure: a read of 5.0 after a write of 5 reads
/// a value nobody wrote.
#[test]
fn kinds_clojure_keeps_apart_stay_apart() {
    let l = support::load(&log("rw-unequal-kinds.edn"));
    let (v, types) = support::verdict(&l, "read-committed");
    assert_eq!(v, Valid::False);
    assert!(types.iter().any(|t| t == "thin-air-read"), "{types:?}");
}

/// List elements of every kind: an integer read back as `5N`, a string, a
/// keyword, a double, a bigint read back without its `N`. One version
/// order, valid everywhere (a `5N` was taken for another element, and the
/// reads' orders for incompatible ones).
#[test]
fn list_elements_of_every_kind_compare_by_value() {
    let l = support::load(&log("la-odd-elements.edn"));
    for (m, v, types) in verdicts(&l, ALL) {
        assert_eq!(v, Valid::True, "{m}: {types:?}");
    }
}
