//! The integration tests: one binary (one link, not one a file), a module
//! each, run as `cargo test --release --test it` (all of them) or
//! `cargo test --release --test it MODULE::` (one module's; a test's full
//! name is `MODULE::NAME`). [`support`] holds what several modules share:
//! loading, the shared corpus, running the CLI, and the oracle, mutant,
//! generated-history and property helpers.
//!
//! Tests that read the shared corpus (`../shared/histories`, beside the
//! checkout) skip, saying so, without it; `ELLE_SI_REQUIRE_CORPUS=1` (as
//! CI sets) makes its absence a failure.

mod support;

mod anomalies_only;
mod anomaly_sets;
mod bad_input;
mod causal_tap;
mod causal_unread;
mod convert_cli;
mod convert_roundtrip;
mod dbcop_duplicates;
mod deadline;
mod decided_by;
mod duplicate_elements;
mod edn_forms;
mod edn_pieces;
mod edn_shared;
mod elle_differential;
mod elle_verdicts;
mod error_output;
mod forks_shared;
mod formats_errors;
mod formats_read;
mod fuzz_cli;
mod gen_cli;
mod gen_faults;
mod gen_history;
mod gen_logs;
mod key_options;
mod layers;
mod layouts;
mod odd_values;
mod oracle;
mod output_bound;
mod parallel;
mod process_order;
mod prop_forks;
mod prop_lattice;
mod prop_levels;
mod prop_mutants;
mod prop_regressions;
mod prop_roundtrip;
mod prop_values;
mod repeated_values;
mod report_folder;
mod si_shared;
mod spec_contract;
mod unknown_reason;
