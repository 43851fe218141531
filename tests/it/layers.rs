//! The layers point down: reads the `crate::` paths of every file under
//! `src/` (outside its `#[cfg(test)]` tail and its comments) and fails on
//! an edge from a module to one in a higher layer, as docs/architecture.md
//! lays them out:
//!
//! 0. `spec`, `source`, `error`: what is asked (models, anomaly types) and
//!    where input came from;
//! 1. `edn`: values read and written;
//! 2. `history`, `anomaly` (the findings' vocabulary, which history's
//!    builder already files), `generator`, `convert`: histories in and out;
//! 3. `check`;
//! 4. `report`, `explain`: rendering (the two use each other);
//! 5. `lib`: the crate's root.
//!
//! Above them, in crates of their own, are the edges: the command line
//! (`cli/`, `elle-si-cli`) and the JNI bridge (`jni/`, `elle-si-jni`). The
//! library names neither, nor their dependencies (clap, indicatif, jni):
//! [`the_library_has_no_edge`] reads `src/` and the library's
//! `[dependencies]` for them.
//!
//! The upward edges left are listed in [`KNOWN`], each to go: the test
//! fails on one not listed, and on one listed that is gone (so the list
//! only shrinks).

use std::collections::BTreeSet;
use std::path::Path;

/// Each top-level module's layer.
const LAYERS: &[(&str, u8)] = &[
    ("spec", 0),
    ("source", 0),
    ("error", 0),
    ("edn", 1),
    ("history", 2),
    ("anomaly", 2),
    ("generator", 2),
    ("convert", 2),
    ("check", 3),
    ("report", 4),
    ("explain", 4),
    ("lib", 5),
];

/// Upward edges not yet removed: none left (the verdict moved to
/// `check::verdict`, cycle naming to `spec::naming`); an edge listed here
/// must exist, so the list only shrinks.
const KNOWN: &[(&str, &str)] = &[];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

/// The top-level modules a line's `crate::` paths name (`crate::a::b`,
/// `crate::{a, b::c}`).
fn targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src/ reads")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
}

/// Every edge from a file to a module in a higher layer.
fn upward() -> BTreeSet<(String, String)> {
    let src = crate::support::root().join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut up = BTreeSet::new();
    for p in files {
        let rel = p
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if rel.ends_with("/tests.rs") {
            continue;
        }
        let top = rel.split('/').next().unwrap_or("").trim_end_matches(".rs");
        let from = layer(top).unwrap_or_else(|| panic!("{rel}: module {top} has no layer"));
        let text = std::fs::read_to_string(&p).expect("reads");
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with("#[cfg(test)]") {
                break;
            }
            if line.starts_with("//") {
                continue;
            }
            for t in targets(line) {
                if layer(&t).is_some_and(|to| to > from) {
                    up.insert((rel.clone(), t));
                }
            }
        }
    }
    up
}

#[test]
fn dependencies_point_down() {
    let up = upward();
    let known: BTreeSet<(String, String)> = KNOWN
        .iter()
        .map(|&(f, t)| (f.to_string(), t.to_string()))
        .collect();
    let new: Vec<_> = up.difference(&known).collect();
    assert!(new.is_empty(), "edges pointing up: {new:?}");
    let gone: Vec<_> = known.difference(&up).collect();
    assert!(
        gone.is_empty(),
        "no longer pointing up (take them off KNOWN): {gone:?}"
    );
}

#[test]
fn the_reader_sees_grouped_and_plain_paths() {
    assert_eq!(
        targets("use crate::{report, check::deps};"),
        ["report", "check"]
    );
    assert_eq!(targets("let x = crate::report::names_of(a);"), ["report"]);
    assert!(targets("use super::cycle;").is_empty());
}

/// The library is the library alone: no file under `src/` uses the
/// command line's or the bridge's crates or their dependencies, its
/// manifest's `[dependencies]` lists none of them (nor miette's graphical
/// renderer, but through the feature `fancy`), and the two edges are where
/// the manifest says.
#[test]
fn the_library_has_no_edge() {
    let root = crate::support::root();
    let src = root.join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let edge = [
        "clap::",
        "indicatif::",
        "jni::",
        "elle_si_cli",
        "elle_si_jni",
    ];
    for p in &files {
        let text = std::fs::read_to_string(p).expect("reads");
        for (n, line) in text.lines().enumerate() {
            let code = line.trim();
            if code.starts_with("//") {
                continue;
            }
            for e in edge {
                assert!(
                    !code.contains(e),
                    "{}:{}: the library names {e}: {line}",
                    p.display(),
                    n + 1
                );
            }
        }
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml reads");
    let deps = manifest
        .split("\n[dependencies]\n")
        .nth(1)
        .expect("a [dependencies] table")
        .split("\n[")
        .next()
        .unwrap_or("");
    for line in deps.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let name = line.split(['=', '.']).next().unwrap_or("").trim();
        assert!(
            !["clap", "indicatif", "jni"].contains(&name),
            "the library depends on {name}"
        );
        assert!(
            !(name == "miette" && line.contains("fancy")),
            "the library turns on miette's fancy renderer: {line}"
        );
    }
    for edge in ["cli/src/main.rs", "jni/src/lib.rs"] {
        assert!(root.join(edge).is_file(), "{edge} is missing");
    }
}
