//! Property test of the anomaly names against the lattice: on generated
//! histories (correct stores and faulty ones), what the anomalies of any
//! check claim never rules out, through the specification's lattice
//! (`spec::lattice::impossible_models`: the models that prohibit an
//! anomaly the claims imply, and everything stronger), a model the history
//! satisfies, where satisfaction is decided by the complete checkers (read
//! committed as C4's, with and without sessions, read atomic, causal,
//! prefix, parallel snapshot isolation, snapshot isolation and
//! serializability with their strong-session and strong variants).
//!
//! What is checked is what a consumer reads: the anomaly types reported
//! (`:anomaly-types`, the keys of `:anomalies`), and what each anomaly
//! claims besides (its C4 pattern; `report::names_of`, from which `:not`
//! and `:also-not` come). An anomaly whose cycle rests on write orders
//! elle-si inferred is reported under its narrowed claim (the variant's
//! `*-cycle-exists`), its steps' type kept as `:cycle-type`: that type is
//! data, not a claim. Reported names the specification lacks are a failure
//! (markers of an undecided check, which claim nothing, aside).
//!
//! The default run: 300 small histories (about 12 s in release mode).
//! The long run, larger histories and more cases:
//!
//! ```text
//! cargo test --release --test it prop_lattice:: -- --ignored
//! ```

use std::collections::BTreeSet;

use elle_si::generator::{Fault, GenOptions, generate};
use elle_si::history::Format;
use elle_si::report::{UNKNOWN_TYPES, Valid, names_of};
use elle_si::spec::lattice::impossible_models;
use elle_si::spec::{AnomalyType, Decider, Model};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

use crate::support::load_generated;
use crate::support::prop::{
    LARGE, SMALL, Size, any_db, any_workload, check_at, config, describe, fail, injectable, shape,
};

/// The models with a complete checker, by Elle's name (or ours).
fn complete_models(format: Format) -> Vec<Model> {
    Model::ALL
        .iter()
        .copied()
        .filter(|m| matches!(m.decider(), Decider::Complete(_)))
        // A text history has no real time.
        .filter(|m| {
            format != Format::Text
                || !matches!(
                    m,
                    Model::StrictSerializable | Model::StrongSnapshotIsolation
                )
        })
        .collect()
}

/// A clash: the model checked, a claim of its anomalies, and the satisfied
/// models the claim rules out.
type Clash = (Model, AnomalyType, Vec<&'static str>);

/// The clashes in one generated history, and every wrong finding as text
/// (clashes and types the spec lacks).
fn clashes(opts: &GenOptions) -> (Vec<Clash>, Vec<String>) {
    let g = generate(opts).unwrap_or_else(|e| panic!("generator refused {opts:?}: {e}"));
    let l = load_generated(g.history.clone(), opts.format);
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
    let (mut found, mut wrong) = (Vec::new(), Vec::new());
    for (m, r) in &results {
        for t in &r.anomaly_types {
            // Markers of an undecided check (`:unknown`) claim nothing.
            if AnomalyType::parse(t).is_err() && !UNKNOWN_TYPES.contains(&t.as_str()) {
                wrong.push(format!("{m}: reported {t}, which the spec lacks"));
            }
        }
        // The types reported, and what each anomaly claims besides: its
        // pattern, or its narrowed claim.
        let types: BTreeSet<AnomalyType> = r
            .anomaly_types
            .iter()
            .filter_map(|t| AnomalyType::parse(t).ok())
            .chain(r.anomalies.values().flatten().flat_map(names_of))
            .collect();
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
                found.push((*m, *a, clash));
            }
        }
    }
    (found, wrong)
}

fn names_imply_only_violated_models(opts: GenOptions) -> Result<(), TestCaseError> {
    let (_, wrong) = clashes(&opts);
    if wrong.is_empty() {
        Ok(())
    } else {
        let g = generate(&opts).unwrap_or_else(|e| panic!("generator refused {opts:?}: {e}"));
        Err(fail(
            "lattice",
            &opts,
            &g.history,
            &g.faults,
            wrong.join("\n"),
        ))
    }
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
    run(300, SMALL);
}

#[test]
#[ignore = "long run: cargo test --release --test it prop_lattice:: -- --ignored"]
fn reported_anomalies_never_rule_out_a_satisfied_model_long() {
    run(1000, LARGE);
}

/// Counts every clash over many histories, by (model checked, type, models
/// wrongly ruled out), without stopping at the first.
#[test]
#[ignore = "survey: cargo test --release --test it prop_lattice::survey -- --ignored --nocapture"]
fn survey() {
    use proptest::strategy::ValueTree;
    let mut runner = TestRunner::new(config(300));
    let strategy = histories(SMALL);
    let mut counts: std::collections::BTreeMap<String, (usize, String)> = Default::default();
    for _ in 0..300 {
        let opts = strategy
            .new_tree(&mut runner)
            .unwrap_or_else(|e| panic!("{e}"))
            .current();
        for (m, a, clash) in clashes(&opts).0 {
            let e = counts
                .entry(format!("at {m}: {a} rules out {clash:?}"))
                .or_insert((0, format!("{opts:?}")));
            e.0 += 1;
        }
    }
    for (k, (n, example)) in &counts {
        println!("{n:4}  {k}\n      e.g. {example}");
    }
}
