//! Every history in the shared corpus loads: EDN, text and dbcop's
//! bincode, each detected as `elle-si check` detects it.

use std::path::{Path, PathBuf};

use elle_si::history::Duplicates;
use elle_si::history::{LoadOptions, load};

use crate::support;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("edn") | Some("txt") | Some("bincode")
        ) && !p.to_string_lossy().ends_with(".faults.edn")
        {
            // (A generated history's record of its faults is not a history.)
            out.push(p);
        }
    }
}

#[test]
fn every_shared_history_loads() {
    if !support::corpus() {
        return;
    }
    let root = crate::support::root().join("../shared/histories");
    let mut all = Vec::new();
    files(&root, &mut all);
    all.sort();
    assert!(
        all.len() >= 40,
        "expected the shared corpus at {}, found {} files",
        root.display(),
        all.len()
    );
    let mut failures = Vec::new();
    for p in &all {
        // VeriStrong's histories write some (variable, value) twice: read
        // as the CLI reads them by default.
        let opts = LoadOptions {
            duplicates: Duplicates::Any,
            ..LoadOptions::default()
        };
        match load(p, opts, None) {
            // Elle's paper example and long-fork sample have no :process:
            // no client ops at all, as Elle sees them.
            Ok(l)
                if l.history.txns.is_empty()
                    && !p.ends_with("elle/paper-example.edn")
                    && !p.ends_with("elle/long-fork.edn") =>
            {
                failures.push(format!("{}: no transactions", p.display()))
            }
            Ok(_) => {}
            Err(e) => failures.push(e.to_string()),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
