//! The committed logs in test-logs/ say what test-logs/README.md says: the
//! recorded faults are there, and for list-append an independent
//! dependency-graph oracle gives the documented verdicts.

use elle_si::check::basic;
use elle_si::edn::{Value, read_one};

use crate::support;
use crate::support::generated::{Weak, serializable, snapshot_isolation, weak};

fn path(name: &str) -> String {
    format!("{}/test-logs/{name}", crate::support::root().display())
}

/// (log, faults recorded, valid at [RC, RA, TCC, SI, SSI, SER]; None for
/// rw-register, whose version order the oracle cannot see).
type Verdicts = Option<[bool; 6]>;
const LOGS: &[(&str, &[&str], Verdicts)] = &[
    ("la-ser-valid.edn", &[], Some([true; 6])),
    (
        "la-si-valid.edn",
        &[],
        Some([true, true, true, true, true, false]),
    ),
    (
        "la-lost-update.edn",
        &["lost-update"],
        Some([true, true, true, false, false, false]),
    ),
    (
        "la-long-fork.edn",
        &["long-fork"],
        Some([true, true, true, false, false, false]),
    ),
    (
        "la-causality-violation.edn",
        &["causality-violation"],
        Some([true, true, false, false, false, false]),
    ),
    (
        "la-stale-session-read.edn",
        &["stale-session-read"],
        Some([true, false, false, true, false, false]),
    ),
    ("rw-causal-valid.edn", &[], None),
    ("rw-fractured-read.edn", &["fractured-read"], None),
];

#[test]
fn logs_match_their_documented_verdicts() {
    for &(name, faults, valid) in LOGS {
        let l = support::load(path(name).as_ref());
        let side = std::fs::read(path(&format!("{name}.faults.edn")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let Ok(Value::Vector(recs)) = read_one(&side) else {
            panic!("{name}: bad fault record");
        };
        let kinds: Vec<Value> = recs
            .iter()
            .filter_map(|r| r.get(&Value::keyword("fault")).cloned())
            .collect();
        let want: Vec<Value> = faults.iter().map(|f| Value::keyword(f)).collect();
        assert_eq!(kinds, want, "{name}");
        let h = &l.history;
        if let Some(valid) = valid {
            let got = [
                weak(h, Weak::ReadCommitted),
                weak(h, Weak::ReadAtomic),
                weak(h, Weak::Causal),
                snapshot_isolation(h, false),
                snapshot_isolation(h, true),
                serializable(h, false),
            ];
            let lost = basic::anomalies(h)
                .iter()
                .any(|a| a.name() == "lost-update");
            // The oracle cannot order appends nobody read; Elle's
            // lost-update check needs no order.
            let got_si = [got[3] && !lost, got[4] && !lost];
            assert_eq!(
                [got[0], got[1], got[2]],
                [valid[0], valid[1], valid[2]],
                "{name}"
            );
            assert_eq!(got_si, [valid[3], valid[4]], "{name}");
            assert_eq!(got[5] && !lost, valid[5], "{name}");
        } else {
            // The causal store's lost update is what makes it not SI.
            let lost = basic::anomalies(h)
                .iter()
                .any(|a| a.name() == "lost-update");
            assert_eq!(lost, name == "rw-causal-valid.edn", "{name}");
            assert!(l.anomalies.is_empty(), "{name}");
        }
    }
}
