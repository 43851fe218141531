//! `elle-si gen` on the command line: flags reach the generator, the history
//! goes to the file, and the faults that fired go beside it.

use std::process::Command;

use elle_si::edn::{Value, read_one};
use elle_si::generator::{Fault, GenOptions, faults_edn, generate};

use crate::support;

fn bin() -> Command {
    crate::support::cli()
}

/// The command's output, its exit a success (else its stderr is the
/// failure).
fn succeeded(cmd: &mut Command) -> std::process::Output {
    let run = cmd.output().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    run
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("elle-si-gen-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
    d
}

#[test]
fn writes_the_history_and_the_fault_record() {
    let dir = temp_dir("cli");
    let out = dir.join("h.edn");
    succeeded(
        bin()
            .args([
                "gen",
                "--sessions",
                "5",
                "--txns-per-session",
                "30",
                "--ops-per-txn",
                "5",
                "--keys",
                "6",
                "--db",
                "snapshot-isolation",
                "--aborted-read",
                "1",
                "--abort-rate",
                "0.2",
                "--seed",
                "3",
                "-o",
            ])
            .arg(&out),
    );
    let l = support::load(&out);
    assert_eq!(l.history.txns.len(), 150);

    // The record matches what the library reports for the same options.
    let mut o = GenOptions {
        sessions: 5,
        txns_per_session: 30,
        ops_per_txn: 5,
        keys: 6,
        db: elle_si::generator::Db::SnapshotIsolation,
        abort_rate: 0.2,
        seed: 3,
        ..GenOptions::default()
    };
    o.faults.set(Fault::AbortedRead, 1.0);
    let g = generate(&o).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(std::fs::read(&out).ok(), Some(g.history));
    assert!(!g.faults.is_empty());
    let side = std::fs::read(dir.join("h.edn.faults.edn")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(side, faults_edn(&g.faults).into_bytes());
    let Ok(Value::Vector(items)) = read_one(&side) else {
        panic!("the fault record is not an EDN vector");
    };
    assert_eq!(items.len(), g.faults.len());
    let first = &items[0];
    assert_eq!(
        first.get(&Value::keyword("fault")),
        Some(&Value::keyword("aborted-read"))
    );
    assert_eq!(
        first.get(&Value::keyword("txns")),
        Some(&Value::Vector(
            g.faults[0]
                .txns
                .iter()
                .map(|&t| Value::Int(t as i64))
                .collect()
        ))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn presets_and_stdout() {
    let run = succeeded(bin().args([
        "gen",
        "--preset",
        "general-rh",
        "--txns-per-session",
        "4",
        "--format",
        "text",
    ]));
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.lines().count() >= 100 * 7, "{}", text.lines().count());
    assert!(
        text.lines()
            .all(|l| l.starts_with("r(") || l.starts_with("w("))
    );
}

#[test]
fn refuses_what_it_cannot_do() {
    let run = bin()
        .args(["gen", "--format", "text", "--workload", "list-append"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("text format"));
    let run = bin()
        .args(["gen", "--read-ratio", "2", "--txns-per-session", "1"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!run.status.success());
    // No transaction: an empty file, which check would refuse.
    let run = bin()
        .args(["gen", "--txns-per-session", "0"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("transactions per session"));
    // A fault the store's level allows is noted, not injected.
    let run = bin()
        .args([
            "gen",
            "--db",
            "causal",
            "--lost-update",
            "1",
            "--txns-per-session",
            "2",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("cannot fire"));
}

#[test]
fn an_aborted_read_with_nothing_aborted_says_so() {
    // The causal store's registers abort nothing of their own: the fault
    // has no aborted write to show until some are rolled back.
    let run_with = |abort: &str| {
        let run = succeeded(bin().args([
            "gen",
            "--workload",
            "rw-register",
            "--db",
            "causal",
            "--sessions",
            "5",
            "--txns-per-session",
            "100",
            "--aborted-read",
            "0.5",
            "--abort-rate",
            abort,
        ]));
        String::from_utf8_lossy(&run.stderr).into_owned()
    };
    let none = run_with("0");
    assert!(none.contains("faults fired: none"), "{none}");
    assert!(none.contains("--aborted-read fired nothing"), "{none}");
    assert!(none.contains("give --abort-rate"), "{none}");
    let some = run_with("0.2");
    assert!(some.contains("aborted-read"), "{some}");
    assert!(!some.contains("fired nothing"), "{some}");
    assert!(!some.contains("faults fired: none"), "{some}");
}

#[test]
fn a_fault_that_fired_nothing_says_what_it_needs() {
    // Few sessions over 10,000 uniform keys: no two writers of a key meet.
    let gen_with = |extra: &[&str]| {
        let run = succeeded(
            bin()
                .args(["gen", "--db", "snapshot-isolation", "--lost-update", "0.1"])
                .args(extra),
        );
        String::from_utf8_lossy(&run.stderr).into_owned()
    };
    let quiet = gen_with(&["--sessions", "10", "--txns-per-session", "100"]);
    assert!(quiet.contains("faults fired: none"), "{quiet}");
    assert!(quiet.contains("--lost-update fired nothing"), "{quiet}");
    assert!(quiet.contains("more contention"), "{quiet}");
    let contended = gen_with(&[
        "--sessions",
        "25",
        "--txns-per-session",
        "400",
        "--ops-per-txn",
        "8",
        "--keys",
        "1000",
        "--distribution",
        "zipf",
    ]);
    assert!(contended.contains("lost-update"), "{contended}");
    assert!(!contended.contains("fired nothing"), "{contended}");
}
