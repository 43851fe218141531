//! Prefix consistency and parallel snapshot isolation on the histories
//! that tell them apart: a lost update (prefix allows it, PSI does not), a
//! long fork (PSI allows it, prefix does not), and PostgreSQL's repeatable
//! read (SI, so both).

use elle_si::report::Valid;

use crate::support::*;

const PREFIX: &str = "prefix";
const PSI: &str = "parallel-snapshot-isolation";

#[test]
fn long_fork_is_psi_not_prefix() {
    let l = load(&crate::support::root().join("test-logs/la-long-fork.edn"));
    let r = check_models(&l, PREFIX);
    assert_eq!(r.valid, Valid::False, "{:?}", r.anomaly_types);
    let forks: Vec<_> = r.anomalies.values().flatten().collect();
    assert!(
        forks.iter().any(|a| a.get(elle_si::anomaly::Field::Shape)
            == Some(&elle_si::anomaly::Datum::kw("long-fork"))),
        "{:?}",
        r.anomaly_types
    );
    assert!(r.not.contains(PREFIX), "{:?}", r.not);
    assert!(!r.not.contains(PSI) && !r.also_not.contains(PSI));
    assert_eq!(verdict(&l, PSI), (Valid::True, vec![]));
}

#[test]
fn galera_lost_update_is_prefix_not_psi() {
    if !corpus() {
        return;
    }
    let l = load(&shared("violations/galera-lost-update.txt"));
    assert_eq!(verdict(&l, PREFIX), (Valid::True, vec![]));
    let r = check_models(&l, PSI);
    assert_eq!(r.valid, Valid::False);
    assert!(
        r.anomaly_types.contains(&"lost-update".to_string()),
        "{:?}",
        r.anomaly_types
    );
    // Ruled out through update-atomic (PSI implies it), not prefix.
    assert!(r.not.contains("update-atomic"), "{:?}", r.not);
    assert!(r.also_not.contains(PSI), "{:?}", r.also_not);
    assert!(!r.not.contains(PREFIX) && !r.also_not.contains(PREFIX));
}

#[test]
fn postgres_repeatable_read_is_both() {
    if !corpus() {
        return;
    }
    for f in [
        "pg-rr-s2-t200-o20-uniform.txt",
        "pg-rr-s10-t200-o20-uniform.txt",
        "pg-rr-s25-t200-o20-uniform.txt",
        "pg-rr-s25-t200-o20-zipf.txt",
        "pg-rr-s50-t200-o20-uniform.txt",
    ] {
        let l = load(&shared(&format!("valid/rw-register/{f}")));
        for m in [PREFIX, PSI, "update-atomic"] {
            assert_eq!(verdict(&l, m), (Valid::True, vec![]), "{f} at {m}");
        }
    }
}

/// `update-atomic` is exactly read atomic without lost updates: a lost
/// update alone (read atomic holds) is rejected under that name; a
/// fractured read alone (no lost update) is rejected as read atomic
/// rejects it; a long fork (neither) is accepted; and on each, the
/// verdict is read atomic's and-ed with "no lost update was found".
#[test]
fn update_atomic_is_read_atomic_without_lost_updates() {
    let lost = load(&crate::support::root().join("test-logs/la-lost-update.edn"));
    let fractured = load(&crate::support::root().join("test-logs/rw-fractured-read.edn"));
    let fork = load(&crate::support::root().join("test-logs/la-long-fork.edn"));
    for (name, l, ra, ua) in [
        ("lost update", &lost, Valid::True, Valid::False),
        ("fractured read", &fractured, Valid::False, Valid::False),
        ("long fork", &fork, Valid::True, Valid::True),
    ] {
        let r_ra = check_models(l, "read-atomic");
        let r_ua = check_models(l, "update-atomic");
        assert_eq!(
            r_ra.valid, ra,
            "{name} at read-atomic: {:?}",
            r_ra.anomaly_types
        );
        assert_eq!(
            r_ua.valid, ua,
            "{name} at update-atomic: {:?}",
            r_ua.anomaly_types
        );
        let lost_update = r_ua.anomaly_types.iter().any(|t| t == "lost-update");
        let exact = if r_ra.valid == Valid::True && !lost_update {
            Valid::True
        } else {
            Valid::False
        };
        assert_eq!(r_ua.valid, exact, "{name}: {:?}", r_ua.anomaly_types);
        if ua == Valid::False && ra == Valid::True {
            assert!(lost_update, "{name}: {:?}", r_ua.anomaly_types);
        }
    }
}
