//! An unknown verdict says why (issue 53): the deadline, a work bound, a
//! guessed writer that could not be settled, an empty graph; in the text
//! report's first lines, in the result map's `:elle-si/unknown-reason`
//! and in index.html. Violations that rest on an unsettled guess are
//! listed as unconfirmed (`:elle-si/unconfirmed`), not as found. And past
//! the deadline no stage runs on: a check whose deadline has passed costs
//! about what reading the history costs, at every model and with `-d`.

use std::path::{Path, PathBuf};
use std::process::Command;

use elle_si::edn::Value;

use crate::support;

/// x = 1 is written twice. Read from the last writer, the reader of x must
/// also see y = 5 and does not (a causal violation); read from the first,
/// nothing is wrong. Beside it a long fork, which causal consistency
/// allows and the stronger models that would settle the guess reject:
/// under `--duplicates last-writer` (which takes the guess, rather than
/// trying each writer as the default does) the guess stays unsettled.
const FORKED: &str = "[x:=1]\n[y:=5]\n---\n[y==5 x:=1]\n---\n[x==1 y==?]\n---\n[a:=1]\n---\n[b:=1]\n---\n[a==1 b==?]\n---\n[b==1 a==?]\n";

fn bin() -> Command {
    crate::support::cli()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("elle-si-unknown-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch directory");
    d.join(name)
}

fn write(name: &str, text: &str) -> PathBuf {
    let f = scratch(name);
    std::fs::write(&f, text).expect("write log");
    f
}

/// `elle-si check ARGS FILE`: exit code and stdout.
fn check(f: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = bin()
        .arg("check")
        .args(args)
        .arg(f)
        .output()
        .expect("running elle-si check");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    match v {
        Value::Map(m) => m
            .iter()
            .find(|(k, _)| *k == Value::Keyword(key.into()))
            .map(|(_, v)| v),
        _ => None,
    }
}

/// The `:cause`s of a result map's `:elle-si/unknown-reason`.
fn causes(edn: &str) -> Vec<String> {
    let v = elle_si::edn::read_one(edn.as_bytes()).expect("EDN parses");
    match get(&v, "elle-si/unknown-reason") {
        Some(Value::Vector(rs)) => rs
            .iter()
            .filter_map(|r| match get(r, "cause") {
                Some(Value::Keyword(c)) => Some(c.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn an_unsettled_guess_is_named_and_its_violations_are_unconfirmed() {
    let f = write("forked.hist", FORKED);
    // By default each writer is tried: valid.
    assert_eq!(check(&f, &["-c", "tcc"]).0, Some(0));
    let (code, text) = check(&f, &["-c", "tcc", "--duplicates", "last-writer"]);
    assert_eq!(code, Some(2), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].ends_with("UNKNOWN under causal-cerone"), "{text}");
    assert!(
        lines[1].starts_with("  unknown: every violation found rests on which of two equal writes")
            && lines[1].contains("no check without the guess settled it"),
        "{text}"
    );
    assert!(text.contains("unconfirmed co-conflict-ao: 1"), "{text}");
    let (_, edn) = check(
        &f,
        &["-c", "tcc", "--duplicates", "last-writer", "-o", "edn"],
    );
    assert_eq!(causes(&edn), ["unsettled-guess"], "{edn}");
    let v = elle_si::edn::read_one(edn.as_bytes()).expect("EDN parses");
    // Not found: unconfirmed, and nothing ruled out.
    assert!(get(&v, "anomalies").is_none(), "{edn}");
    assert!(get(&v, "not").is_none(), "{edn}");
    match get(&v, "elle-si/unconfirmed") {
        Some(Value::Map(m)) => {
            assert_eq!(m[0].0, Value::Keyword("co-conflict-ao".into()), "{edn}")
        }
        other => panic!("no unconfirmed violations: {other:?}"),
    }
    let (_, json) = check(
        &f,
        &["-c", "tcc", "--duplicates", "last-writer", "-o", "json"],
    );
    let j: serde_json::Value = serde_json::from_str(&json).expect("JSON parses");
    assert_eq!(
        j["elle-si/unknown-reason"][0]["cause"], "unsettled-guess",
        "{json}"
    );
    // index.html says it too.
    let dir = scratch("forked-folder");
    let _ = std::fs::remove_dir_all(&dir);
    let (code, _) = check(
        &f,
        &[
            "-c",
            "tcc",
            "--duplicates",
            "last-writer",
            "-d",
            dir.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(code, Some(2));
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    assert!(
        html.contains("unknown: every violation found rests on which of two equal writes"),
        "{html}"
    );
    assert!(html.contains("unconfirmed</dt>"), "{html}");
}

#[test]
fn a_deadline_that_struck_is_named() {
    let f = write("forked-late.hist", FORKED);
    for (model, what) in [("tcc", "causal-cerone"), ("si", "PL-SI"), ("ser", "PL-3")] {
        let (code, text) = check(&f, &["-c", model, "--timeout", "0.000001"]);
        assert_eq!(code, Some(2), "{text}");
        let second = text.lines().nth(1).unwrap_or_default();
        assert_eq!(
            second,
            format!("  unknown: the deadline came before {what} gave a verdict"),
            "{model}: {text}"
        );
        let (_, edn) = check(&f, &["-c", model, "--timeout", "0.000001", "-o", "edn"]);
        assert_eq!(causes(&edn), ["deadline"], "{model}: {edn}");
        // The check's marker is written whatever the deadline cut.
        let v = elle_si::edn::read_one(edn.as_bytes()).expect("EDN parses");
        let marker = get(&v, "anomalies").and_then(|a| get(a, "cycle-search-timeout"));
        assert!(
            matches!(marker, Some(Value::Vector(xs)) if xs.len() == 1),
            "{model}: {edn}"
        );
    }
}

#[test]
fn an_empty_graph_is_named() {
    let f = write(
        "lone-write.edn",
        "{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0, :index 0}\n\
         {:type :ok, :f :txn, :value [[:append 1 1]], :process 0, :index 1}\n",
    );
    let (code, text) = check(&f, &["-c", "serializable"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("  unknown: no committed transaction read a key")),
        "{text}"
    );
    let (_, edn) = check(&f, &["-c", "serializable", "-o", "edn"]);
    assert_eq!(causes(&edn), ["empty-transaction-graph"], "{edn}");
    // A valid verdict names no reason.
    let (code, edn) = check(&f, &["-c", "read-uncommitted", "-o", "edn"]);
    if code == Some(0) {
        assert!(causes(&edn).is_empty(), "{edn}");
    }
}

/// A write skew: each transaction reads the key the other writes, before
/// it is written. Serializability rejects it (a G2-item cycle); only the
/// SI / serializability engine decides that.
const WRITE_SKEW: &str = "\
{:type :invoke, :f :txn, :value [[:r 1 nil] [:w 2 1]], :process 0, :index 0}
{:type :invoke, :f :txn, :value [[:r 2 nil] [:w 1 1]], :process 1, :index 1}
{:type :ok, :f :txn, :value [[:r 1 nil] [:w 2 1]], :process 0, :index 2}
{:type :ok, :f :txn, :value [[:r 2 nil] [:w 1 1]], :process 1, :index 3}
";

#[test]
fn a_spent_work_budget_is_named() {
    use elle_si::check::budget;
    use elle_si::report::{Valid, render};
    let l = support::load_str("skew.edn", WRITE_SKEW);
    let edn = |r: &elle_si::report::CheckResult| render::result_value(&l.history, r).to_string();
    // Unbounded, and within ample work: rejected.
    for r in [
        support::check_models(&l, "serializable"),
        budget::runs_within(1 << 40, || support::check_models(&l, "serializable")),
    ] {
        assert_eq!(r.valid, Valid::False, "{}", edn(&r));
        assert!(causes(&edn(&r)).is_empty(), "{}", edn(&r));
    }
    // With no work to spend, the engine gives up: unknown, and it says the
    // work bound (not the deadline: there is none) came first.
    let r = budget::runs_within(0, || support::check_models(&l, "serializable"));
    let text = edn(&r);
    assert_eq!(r.valid, Valid::Unknown, "{text}");
    assert_eq!(causes(&text), ["budget"], "{text}");
    let v = elle_si::edn::read_one(text.as_bytes()).expect("EDN parses");
    let reason = match get(&v, "elle-si/unknown-reason") {
        Some(Value::Vector(rs)) => get(&rs[0], "reason").map(Value::to_string),
        _ => None,
    };
    assert!(
        reason.is_some_and(|r| r.contains("PL-3 ran out of its work bound")),
        "{text}"
    );
    // The check's marker says no verdict came; no cycle is claimed.
    assert_eq!(r.anomaly_types, ["cycle-search-timeout"], "{text}");
    let reasons: Vec<String> = r.unknown_reasons().iter().map(|u| u.to_string()).collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
}

#[cfg(unix)]
#[test]
fn past_the_deadline_a_check_costs_about_what_reading_costs() {
    // A causal store's history of 20,000 transactions: checked in full at
    // SI it takes several times its reading.
    let f = scratch("rw20k.edn");
    support::generate(
        &f,
        &[
            "--workload",
            "rw-register",
            "--db",
            "causal",
            "--sessions",
            "25",
            "--txns-per-session",
            "800",
            "--ops-per-txn",
            "8",
            "--keys",
            "2000",
            "--seed",
            "7",
        ],
    );
    // The least of three runs: the work, less the host's noise.
    let least = |args: &[&str]| {
        (0..3)
            .map(|_| {
                let (_, cpu, _) = support::cpu_of(bin().args(args).arg(&f));
                cpu
            })
            .min()
            .expect("three runs")
    };
    let read = least(&["stats"]);
    let full = least(&["check", "-c", "snapshot-isolation"]);
    let dir = scratch("rw20k-folder");
    let dir = dir.to_str().expect("utf-8");
    for model in [
        "read-committed",
        "causal-cerone",
        "snapshot-isolation",
        "serializable",
        "strict-serializable",
    ] {
        for folder in [false, true] {
            let mut args = vec!["check", "-c", model, "--timeout", "0.000001", "-o", "edn"];
            if folder {
                args.extend(["-d", dir]);
            }
            let late = least(&args);
            // Reading, and a little (a process, the result's frame).
            assert!(
                late < read * 2 + std::time::Duration::from_millis(50),
                "{model}{}: {late:?} of CPU past the deadline; reading alone {read:?}, the full SI check {full:?}",
                if folder { " with -d" } else { "" }
            );
        }
    }
    assert!(
        full > read * 3,
        "the full check {full:?}, reading {read:?}: the test measures nothing"
    );
}

/// Settling the causal levels' guessed writers is bounded by the run's
/// `--timeout` like every other check: a read-atomic store's history
/// with repeated values (1,000 transactions), whose causal check the
/// last-writer guess makes violated and settling searches (SAT over the
/// reads' writers to its bound, then many checks, none settling it),
/// costs a fraction of its CPU when the timeout is an eighth of that CPU
/// (CPU, not wall time: the run may use two threads), and says the
/// deadline stopped it.
#[cfg(unix)]
#[test]
fn settling_stops_at_the_deadline() {
    let f = scratch("read-atomic-repeated.edn");
    support::generate(
        &f,
        &[
            "--workload",
            "rw-register",
            "--db",
            "read-atomic",
            "--sessions",
            "5",
            "--txns-per-session",
            "200",
            "--ops-per-txn",
            "4",
            "--keys",
            "8",
            "--seed",
            "1",
            "--repeat-values",
            "0.3",
            "--info-rate",
            "0.02",
            "--abort-rate",
            "0.05",
        ],
    );
    // The least CPU of three runs: the work, less the host's noise.
    let least = |args: &[&str]| {
        (0..3)
            .map(|_| support::cpu_of(bin().args(args).arg(&f)).1)
            .min()
            .expect("three runs")
    };
    let untimed = ["-c", "causal-cerone", "-o", "edn"];
    let (code, edn) = check(&f, &untimed);
    assert_eq!(code, Some(2), "{edn}");
    assert_eq!(causes(&edn), ["unsettled-guess"], "{edn}");
    let mut args = vec!["check"];
    args.extend(untimed);
    let full = least(&args);
    let read = least(&["stats"]);
    assert!(
        full > read * 8,
        "settling {full:?}, reading {read:?}: the test measures nothing"
    );
    for timeout in [0.000001, full.as_secs_f64() / 8.0] {
        let t = format!("{timeout}");
        let timed = ["-c", "causal-cerone", "--timeout", &t, "-o", "edn"];
        let (code, edn) = check(&f, &timed);
        assert_eq!(code, Some(2), "{edn}");
        let c = causes(&edn);
        assert!(
            c.iter().any(|c| c == "deadline") && !c.iter().any(|c| c == "unsettled-guess"),
            "--timeout {t}: {edn}"
        );
        let mut args = vec!["check"];
        args.extend(timed);
        let late = least(&args);
        assert!(
            late < full / 2 + read * 2,
            "--timeout {t}: {late:?} of CPU; untimed {full:?}, reading {read:?}"
        );
    }
}
