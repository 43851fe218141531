//! Semantic mutants of generated histories (see `support::mutant`): none
//! panics, hangs, or breaks the input-error contract, through the reader,
//! every model the CLI accepts, every rendering and (with `-p elle-si-cli --features jni`)
//! the JNI bridge's decoder.
//!
//! The default run draws a fixed set of cases (about a minute in release);
//! the long run draws many more, from a fresh seed when
//! `PROPTEST_RNG_SEED` is set:
//!
//! ```sh
//! cargo test --release -p elle-si-cli --features jni --test it prop_mutants:: -- --ignored
//! ```
//!
//! A failing case's history is saved under /tmp/mutant-failures.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc::channel;
use std::time::Duration;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use crate::support;
use crate::support::mutant::{Mutant, exercise, mutant};

/// A case that takes longer than this is a hang (each check has its own
/// timeout, far below it).
const CASE_LIMIT: Duration = Duration::from_secs(120);

fn save(m: &Mutant, why: &str) -> String {
    let dir = std::env::temp_dir().join("mutant-failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{}.edn", std::process::id()));
    let _ = std::fs::write(&path, m.edn());
    format!(
        "{why}: {:?} after {:?}; history saved to {}",
        m.mutations,
        m.options,
        path.display()
    )
}

/// Runs one case in a thread of its own, so a hang is reported rather than
/// waited for.
fn run_case(bytes: Vec<u8>) {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let m = mutant(&bytes);
        let r = catch_unwind(AssertUnwindSafe(|| exercise(&m)));
        let _ = tx.send((m, r.map(|_| ())));
    });
    match rx.recv_timeout(CASE_LIMIT) {
        Ok((_, Ok(()))) => {}
        Ok((m, Err(p))) => {
            eprintln!("{}", save(&m, "panicked"));
            resume_unwind(p)
        }
        Err(_) => panic!("a case ran past {CASE_LIMIT:?}: a hang"),
    }
}

fn run(cases: u32) {
    let mut runner = TestRunner::new(support::prop::config(cases));
    let strategy = proptest::collection::vec(any::<u8>(), 0..48);
    if let Err(e) = runner.run(&strategy, |bytes| {
        run_case(bytes);
        Ok(())
    }) {
        panic!("{e}");
    }
}

#[test]
fn mutants_never_panic_or_hang() {
    run(2000);
}

#[test]
#[ignore = "long run: cargo test --release -p elle-si-cli --features jni --test it prop_mutants:: -- --ignored"]
fn mutants_never_panic_or_hang_long() {
    run(50_000);
}

/// Every kind of mutation shows up in the default run's cases, and the
/// mutants reach the checkers (not only the reader's refusals).
#[test]
fn mutants_cover_every_mutation_and_reach_the_checkers() {
    use crate::support::mutant::Mutation;
    let mut runner = TestRunner::new(support::prop::config(1));
    let strategy = proptest::collection::vec(any::<u8>(), 0..48);
    let mut kinds = Vec::new();
    let (mut checked, mut refused, mut verdicts) = (0, 0, [0; 3]);
    for _ in 0..150 {
        let bytes = strategy
            .new_tree(&mut runner)
            .expect("drawing bytes")
            .current();
        let m = mutant(&bytes);
        for &k in &m.mutations {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        let seen = exercise(&m);
        checked += seen.checks;
        refused += seen.refused;
        for (v, n) in verdicts.iter_mut().zip(seen.verdicts) {
            *v += n;
        }
    }
    eprintln!(
        "150 mutants: {refused} loads refused, {checked} checks (true, false, unknown: {verdicts:?})"
    );
    let missing: Vec<Mutation> = Mutation::ALL
        .into_iter()
        .filter(|k| !kinds.contains(k))
        .collect();
    assert!(missing.is_empty(), "never drawn: {missing:?}");
    assert!(
        checked > 0 && refused > 0,
        "{checked} checks, {refused} refusals"
    );
}
