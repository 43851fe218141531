//! Property test of the anomaly names against the lattice: on generated
//! histories (correct stores and faulty ones), the anomaly types any check
//! reports never rule out, through the specification's lattice
//! (`spec::lattice::impossible_models`: the models that prohibit an
//! anomaly the types imply, and everything stronger), a model the history
//! satisfies, where satisfaction is decided by the complete checkers
//! (read committed as C4's, with and without sessions, read atomic,
//! causal, prefix, parallel snapshot isolation, snapshot isolation and
//! serializability with their strong-session and strong variants). Every
//! reported type must also be one the specification knows (or a marker of
//! an undecided check, which claims nothing).
//!
//! The default run: 150 small histories (a few seconds in release mode).
//! The long run, larger histories and more cases:
//!
//! ```text
//! cargo test --release --test prop_lattice -- --ignored
//! ```

mod prop_support;

use std::collections::BTreeSet;

use elle_si::generator::{Db, Fault, GenOptions, generate};
use elle_si::history::{Format, Workload};
use elle_si::report::{UNKNOWN_TYPES, Valid};
use elle_si::spec::lattice::impossible_models;
use elle_si::spec::{AnomalyType, Decider, Model};
use prop_support::{LARGE, SMALL, Size, any_db, any_workload, check_at, config, describe, fail, load, shape};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

/// The models with a complete checker, by Elle's name (or ours).
fn complete_models(format: Format) -> Vec<Model> {
    Model::ALL
        .iter()
        .copied()
        .filter(|m| matches!(m.decider(), Decider::Complete(_)))
        // A text history has no real time.
        .filter(|m| {
            format != Format::Text
                || !matches!(m, Model::StrictSerializable | Model::StrongSnapshotIsolation)
        })
        .collect()
}

fn names_imply_only_violated_models(opts: GenOptions) -> Result<(), TestCaseError> {
    let g = generate(&opts).unwrap_or_else(|e| panic!("generator refused {opts:?}: {e}"));
    let l = load(g.history.clone(), opts.format);
    let models = complete_models(opts.format);
    let results: Vec<_> = models
        .iter()
        .map(|m| (*m, check_at(&l, m.name())))
        .collect();
    let satisfied: BTreeSet<Model> = results
        .iter()
        .filter(|(_, r)| r.valid == Valid::True)
        .map(|(m, _)| *m)
        .collect();
    let mut wrong = Vec::new();
    for (m, r) in &results {
        let mut types = BTreeSet::new();
        for t in &r.anomaly_types {
            match AnomalyType::parse(t) {
                Ok(a) => {
                    types.insert(a);
                }
                // Markers of an undecided check (`:unknown`) claim nothing.
                Err(_) if UNKNOWN_TYPES.contains(&t.as_str()) => {}
                Err(_) => wrong.push(format!("{m}: reported {t}, which the spec lacks")),
            }
        }
        // Each type alone, so that the report names the culprit.
        for a in &types {
            let ruled_out = impossible_models(&BTreeSet::from([*a]));
            let clash: Vec<&str> = ruled_out
                .intersection(&satisfied)
                .map(|s| s.name())
                .collect();
            if !clash.is_empty() {
                wrong.push(format!(
                    "at {m}: {a} rules out {clash:?}, whose complete checkers accept; {}",
                    describe(r)
                ));
            }
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(fail("lattice", &opts, &g.history, &g.faults, wrong.join("\n")))
    }
}

/// Every (fault, store, workload) the generator can inject.
fn injectable() -> Vec<(Fault, Db, Workload)> {
    let mut v = Vec::new();
    for f in Fault::ALL {
        for db in Db::ALL {
            for w in [Workload::ListAppend, Workload::RwRegister] {
                if f.applies_to(db, w) {
                    v.push((f, db, w));
                }
            }
        }
    }
    v
}

/// A correct store's history (one case in four), or one with one or two
/// faults of the store and workload.
fn histories(size: Size) -> impl Strategy<Value = GenOptions> {
    let faulty = (
        prop::sample::select(injectable()),
        prop::sample::select(Fault::ALL.to_vec()),
        prop_oneof![Just(1.0), 0.05f64..1.0],
    )
        .prop_flat_map(move |((f, db, w), f2, rate)| {
            shape(size, Just(db), Just(w)).prop_map(move |o| {
                let o = o.with_fault(f, rate);
                if f2 != f && f2.applies_to(db, w) {
                    o.with_fault(f2, rate)
                } else {
                    o
                }
            })
        });
    prop_oneof![
        1 => shape(size, any_db(), any_workload()),
        3 => faulty,
    ]
}

fn run(cases: u32, size: Size) {
    let mut runner = TestRunner::new(config(cases));
    if let Err(e) = runner.run(&histories(size), names_imply_only_violated_models) {
        panic!("{e}");
    }
}

#[test]
fn reported_anomalies_never_rule_out_a_satisfied_model() {
    run(150, SMALL);
}

#[test]
#[ignore = "long run: cargo test --release --test prop_lattice -- --ignored"]
fn reported_anomalies_never_rule_out_a_satisfied_model_long() {
    run(1000, LARGE);
}
