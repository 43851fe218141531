//! `--timeout` bounds a whole run, reading and telling the violation
//! included: what was found in time is reported, and a model left
//! undecided is unknown. The histories take seconds to check in full. The
//! tests bound the CPU time a run uses, which a loaded host does not
//! stretch, never its wall time, which it does.
//!
//! They run one at a time (beside the other modules' tests, which a CPU
//! bound does not see).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support;

/// One test at a time: each is a run of seconds on a two-core host.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn bin() -> Command {
    crate::support::cli()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("elle-si-deadline-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch directory");
    d
}

/// Checks with a timeout; the exit code, stderr and stdout, and the CPU
/// time it used (not wall time, which a loaded host stretches).
fn timed_check(file: &Path, model: &str, timeout: f64) -> (Option<i32>, String, Duration) {
    let (code, cpu, out) = support::cpu_of(
        bin()
            .args([
                "check",
                "-v",
                "-c",
                model,
                "--timeout",
                &timeout.to_string(),
            ])
            .arg(file),
    );
    (code, out, cpu)
}

/// Within 10% and 0.2 s of the timeout, and a little for starting the
/// process.
fn bound(timeout: f64) -> Duration {
    Duration::from_secs_f64(timeout * 1.1 + 0.2 + 0.3)
}

#[test]
fn serializability_stops_telling_at_the_deadline() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    // PolySI's general-rw workload from an SI store: invalid at
    // serializability, with dozens of contradictions whose cycles take
    // seconds to tell.
    let dir = scratch("ser");
    let h = dir.join("general-rw.txt");
    support::generate(
        &h,
        &[
            "--preset",
            "general-rw",
            "--db",
            "snapshot-isolation",
            "--format",
            "text",
        ],
    );
    // The whole check takes about 0.6 s CPU: 0.3 s cuts it.
    let (code, out, cpu) = timed_check(&h, "serializable", 0.3);
    assert!(
        cpu <= bound(0.3),
        "--timeout 0.3 took {cpu:?} of CPU\n{out}"
    );
    // Found in time and reported (invalid), or undecided (unknown): never
    // valid; a run that went on past the deadline says the deadline cut it
    // (the scratch directory's name holds "deadline": the note's words are
    // looked for).
    assert!(matches!(code, Some(1) | Some(2)), "exit {code:?}\n{out}");
    let cut = out.contains("the deadline came") || out.contains("UNKNOWN under");
    assert!(cut || cpu < Duration::from_secs_f64(0.3), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn causal_patterns_stop_at_the_deadline() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    // Wide read-mostly transactions (150 micro-ops, as FaunaDB's in
    // VeriStrong's table 2): read atomic's patterns take seconds to derive.
    let dir = scratch("causal");
    let h = dir.join("wide.edn");
    support::generate(
        &h,
        &[
            "--workload",
            "rw-register",
            "--db",
            "causal",
            "--sessions",
            "20",
            "--txns-per-session",
            "100",
            "--ops-per-txn",
            "150",
            "--read-ratio",
            "0.95",
            "--keys",
            "2000",
            "--seed",
            "5",
        ],
    );
    let (code, out, cpu) = timed_check(&h, "read-atomic", 0.5);
    assert!(
        cpu <= bound(0.5),
        "--timeout 0.5 took {cpu:?} of CPU\n{out}"
    );
    // The store is causal: nothing the level forbids. Decided in time
    // (valid: the derivation is linear in a reader's micro-ops now), or
    // undecided at the deadline, never rejected.
    match code {
        Some(0) => assert!(out.contains("VALID"), "{out}"),
        _ => {
            assert_eq!(code, Some(2), "{out}");
            assert!(out.contains("cycle-search-timeout"), "{out}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_timeout_that_is_no_time_is_refused_as_usage() {
    for bad in ["-1", "inf", "NaN", "1e30", "soon"] {
        let out = bin()
            .args(["check", "test-logs/la-lost-update.edn"])
            .arg(format!("--timeout={bad}"))
            .output()
            .expect("running elle-si check");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{bad}: {err}");
        assert!(err.contains("--timeout"), "{bad}: {err}");
        assert!(!err.contains("panicked"), "{bad}: {err}");
    }
}

/// A check the deadline stops before any verdict says which check, once
/// per check: no two identical lines, and `:anomaly-spec-type` names it.
#[test]
fn each_check_the_deadline_stops_is_named() {
    let (code, out, _) = timed_check(
        &crate::support::root().join("test-logs/la-ser-valid.edn"),
        "snapshot-isolation,serializable",
        0.0,
    );
    assert_eq!(code, Some(2), "{out}");
    for check in ["PL-SI", "PL-3"] {
        assert!(
            out.contains(&format!(
                "cycle-search-timeout: no verdict on {check} within the time"
            )),
            "{out}"
        );
    }
    let edn = bin()
        .args(["check", "-o", "edn", "-c", "serializable", "--timeout", "0"])
        .arg("test-logs/la-ser-valid.edn")
        .output()
        .expect("running elle-si check");
    let edn = String::from_utf8_lossy(&edn.stdout);
    assert!(
        edn.contains(":anomaly-spec-type :PL-3-cycle-exists"),
        "{edn}"
    );
}
