//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use elle_si::check::{self, CheckOptions};
use elle_si::history::{self, LoadOptions, Loaded};
use elle_si::report::{CheckResult, Valid};

/// A file under the shared data folder beside the checkout.
pub fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/histories")
        .join(rel)
}

pub fn load(path: &std::path::Path) -> Loaded {
    history::load(path, LoadOptions::default(), None)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn load_str(name: &str, text: &str) -> Loaded {
    history::load_bytes(name, text.as_bytes().to_vec(), LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

pub fn check_models(l: &Loaded, models: &str) -> CheckResult {
    let models = check::resolve_models(&[models.to_string()]).unwrap_or_else(|e| panic!("{e}"));
    check::check(
        l,
        &CheckOptions {
            models,
            timeout: None,
            anomalies: Vec::new(),
        },
    )
}

/// Verdict and anomaly types at a model.
pub fn verdict(l: &Loaded, model: &str) -> (Valid, Vec<String>) {
    let r = check_models(l, model);
    (r.valid, r.anomaly_types)
}

/// The C4 patterns named in a result.
pub fn patterns(r: &CheckResult) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = r
        .anomalies
        .values()
        .flatten()
        .filter_map(|a| a.pattern)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}
