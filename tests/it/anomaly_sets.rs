//! Elle's anomaly-set models (consistent view, forward consistent view,
//! update serializability: those that prohibit a cycle with an
//! anti-dependency and have no checker of their own) decided as the
//! anomalies they prohibit would be if asked by name: valid iff some
//! version order closes none of their cycles. SI's checker, which stops at
//! its first violation, is no judge of them: the cycle it tells may be one
//! they allow while every order closes one they prohibit. The brute-force
//! oracle compares consistent view as Adya's PL-2+ (`oracle.rs`); these
//! are the two histories that showed it, each with the reason by hand.

use elle_si::report::Valid;

use crate::support::*;

/// Three of the 34 transactions, every order of whose writes closes a
/// cycle consistent view prohibits: A (line 32) writes key 7 = 1373 and
/// key 1 = 1375; B (line 33) writes key 1 = 1380 and reads A's key 7; C
/// (line 34) reads key 1 as 1375, then as 1380. A's write of key 1 before
/// B's: C missed the version after 1375, which leads to B's, which C read
/// (one anti-dependency: G-single-item). B's before A's: B's write leads
/// to A's, which B read (G1c). SI's checker tells a G-nonadjacent-item of
/// other transactions and stops; before, consistent view was called valid
/// for it. (A generated read-committed history with its repeated values
/// resolved, then made minimal by removing transactions.)
const SI_TELLS_ANOTHER: &str = include_str!("anomaly_sets/si-tells-another.edn");

/// Eight transactions on three keys where the brute-force oracle finds
/// no version order without a G1 or a G-single (its first find, at
/// `oracle::long_random`); the cycle told runs through key 2's writes of 5
/// and 6, which no read orders. Before, `:unknown` (a G-single-item
/// resting on an order "only the model's rules infer").
const EITHER_ORDER: &str = include_str!("anomaly_sets/either-order.edn");

#[test]
fn si_telling_an_allowed_cycle_is_not_a_verdict_on_consistent_view() {
    let l = load_str("si-tells-another.edn", SI_TELLS_ANOTHER);
    let (si, types) = verdict(&l, "snapshot-isolation");
    assert_eq!(si, Valid::False);
    assert!(
        !types.iter().any(|t| t.starts_with("G-single")),
        "{types:?}"
    );
    for m in [
        "consistent-view",
        "forward-consistent-view",
        "update-serializable",
    ] {
        let (v, types) = verdict(&l, m);
        assert_eq!(v, Valid::False, "{m}: {types:?}");
        assert!(types.iter().any(|t| t == "G-single-item"), "{m}: {types:?}");
    }
    // Read committed allows the G-single-item (and nothing it prohibits
    // is there).
    assert_eq!(verdict(&l, "read-committed").0, Valid::True);
}

#[test]
fn a_cycle_in_every_order_decides_consistent_view() {
    let l = load_str("either-order.edn", EITHER_ORDER);
    let (v, types) = verdict(&l, "consistent-view");
    assert_eq!(v, Valid::False, "{types:?}");
    assert!(types.iter().any(|t| t == "G-single-item"), "{types:?}");
    assert_eq!(verdict(&l, "read-committed").0, Valid::True);
}
