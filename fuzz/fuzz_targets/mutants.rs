//! Semantic mutants of generated histories: the input's bytes choose the
//! generator's workload, store, size and seed, then the mutations (a value
//! written twice, moved or read from thin air; completions dropped,
//! duplicated, reordered or turned :info / :fail; odd reads and keys; empty
//! transactions; shuffled lines; values respelled as bigints, doubles,
//! strings, keywords or nil; long lists; repeated elements; processes
//! reused after an :info). Each mutant goes through the EDN reader,
//! every model the CLI accepts under a timeout, every rendering, and the JNI
//! bridge's decoder: no panic, no hang, refusals are located input errors.
//! The mutator and the run are the property test's (`tests/it/prop_mutants.rs`),
//! shared by path.
#![no_main]

#[path = "../../tests/it/support/mutant.rs"]
mod mutant_support;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let m = mutant_support::mutant(data);
    mutant_support::exercise(&m);
});
