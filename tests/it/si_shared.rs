//! Snapshot isolation and serializability on the shared histories.

use elle_si::report::Valid;

use crate::support::*;

#[test]
fn valid_histories_pass_si() {
    if !corpus() {
        return;
    }
    for f in [
        "valid/rw-register/pg-rr-s2-t200-o20-uniform.txt",
        "valid/rw-register/pg-rr-s10-t200-o20-uniform.txt",
        "valid/list-append/fig10-sess2.edn",
        "valid/list-append/fig10-sess20.edn",
    ] {
        let l = load(&shared(f));
        for m in ["snapshot-isolation", "strong-session-snapshot-isolation"] {
            assert_eq!(verdict(&l, m), (Valid::True, vec![]), "{f} at {m}");
        }
        // PostgreSQL's repeatable read is SI: write skew is allowed, and a
        // serializability failure must be a real G2-item cycle.
        let (v, types) = verdict(&l, "serializable");
        if v == Valid::False {
            assert_eq!(types, vec!["G2-item"], "{f}");
        }
    }
}

#[test]
fn galera_lost_update() {
    if !corpus() {
        return;
    }
    let l = load(&shared("violations/galera-lost-update.txt"));
    let r = check_models(&l, "si");
    assert_eq!(r.valid, Valid::False);
    assert!(
        r.anomaly_types.contains(&"lost-update".to_string()),
        "{:?}",
        r.anomaly_types
    );
    // The cycle is the lost update's: two transactions, one key.
    let cyc = &r.anomalies["G-single-item"][0];
    assert_eq!(cyc.txns.len(), 2);
    assert_eq!(
        cyc.get(elle_si::anomaly::Field::Shape),
        Some(&elle_si::anomaly::Datum::kw("lost-update"))
    );
    assert_eq!(verdict(&l, "tcc").0, Valid::True);
}

#[test]
fn postgres_write_skew() {
    if !corpus() {
        return;
    }
    let l = load(&shared("violations/postgres-ser-write-skew.txt"));
    assert_eq!(verdict(&l, "si").0, Valid::True);
    assert_eq!(verdict(&l, "ssi").0, Valid::True);
    let (v, types) = verdict(&l, "serializable");
    assert_eq!((v, types), (Valid::False, vec!["G2-item".to_string()]));
}

#[test]
fn every_tap_case_fails_strong_session_si() {
    if !corpus() {
        return;
    }
    for case in "abcdefghijklmn".chars() {
        for f in [
            format!("tap-cases/text/tap-{case}.txt"),
            format!("tap-cases/list-append/tap-{case}.edn"),
        ] {
            let l = load(&shared(&f));
            assert_eq!(verdict(&l, "ssi").0, Valid::False, "{f}");
        }
    }
}

#[test]
fn no_client_ops_is_unknown() {
    if !corpus() {
        return;
    }
    // Elle sees no client ops without :process, and says so.
    let l = load(&shared("elle/paper-example.edn"));
    let (v, types) = verdict(&l, "serializable");
    assert_eq!(v, Valid::Unknown);
    assert_eq!(types, vec!["empty-transaction-graph"]);
}
