//! Elle's contract through the typed specification: every model name is
//! accepted and decided through the library entry point, read committed
//! means Adya's, anomalies asked for alone are looked for (or refused by
//! name), and a history with no dependency is `:unknown`.

use elle_si::check::{self, CheckOptions, entry};
use elle_si::history::Loaded;
use elle_si::report::{CheckResult, Valid};
use elle_si::spec::{AnomalyType, Model, lattice};

use crate::support;
use crate::support::*;

/// T1 appends to x and y; T2 sees its x and misses its y: read skew
/// inside one transaction (a G-single, not a G1).
const READ_SKEW: &str = "\
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1] [:append :y 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append :x 1] [:append :y 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:r :y nil]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:r :x [1]] [:r :y []]]}
";

/// A read of an element nobody appended: a thin-air read, which every
/// transactional model prohibits.
const THIN_AIR: &str = "\
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:r :x [1 9]]]}
";

/// A read of an aborted append (G1a).
const ABORTED_READ: &str = "\
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 1, :type :fail, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:r :x [1]]]}
";

/// Write skew: each reads both keys empty and appends to one; a later
/// read sees both.
const WRITE_SKEW: &str = "\
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:r :y nil] [:append :x 1]]}
{:index 1, :type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:r :y nil] [:append :y 1]]}
{:index 2, :type :ok, :process 0, :f :txn, :value [[:r :x []] [:r :y []] [:append :x 1]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:r :x []] [:r :y []] [:append :y 1]]}
{:index 4, :type :invoke, :process 2, :f :txn, :value [[:r :x nil] [:r :y nil]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r :x [1]] [:r :y [1]]]}
";

fn run(l: &Loaded, models: &[Model], anomalies: &[AnomalyType]) -> CheckResult {
    entry::check_loaded(
        l,
        &CheckOptions {
            models: models.to_vec(),
            timeout: None,
            anomalies: anomalies.to_vec(),
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn read_skew_is_read_committed_but_not_read_atomic() {
    let l = load_str("read-skew.edn", READ_SKEW);
    let at = |m: &str| run(&l, &[Model::parse(m).unwrap()], &[]).valid;
    assert_eq!(at("read-committed"), Valid::True);
    assert_eq!(at("PL-2"), Valid::True);
    assert_eq!(at("read-uncommitted"), Valid::True);
    assert_eq!(at("read-atomic"), Valid::False);
    assert_eq!(at("read-committed-c4"), Valid::False);
    assert_eq!(at("snapshot-isolation"), Valid::False);
    assert_eq!(at("consistent-view"), Valid::False);
    assert_eq!(at("repeatable-read"), Valid::False);
    let r = run(&l, &[Model::SnapshotIsolation], &[]);
    assert!(!r.not.contains("read-committed"), "{:?}", r.not);
}

#[test]
fn every_accepted_name_is_checked_through_the_entry_point() {
    let l = load_str("thin-air.edn", THIN_AIR);
    for name in Model::accepted_names() {
        let m = Model::parse(name).unwrap();
        let r = run(&l, &[m], &[]);
        match m.decider() {
            // Decided only through a stronger model, which rejects.
            elle_si::spec::Decider::ImpliedBy(_) => {
                assert_eq!(r.valid, Valid::Unknown, "{name}")
            }
            _ => assert_eq!(r.valid, Valid::False, "{name}: {:?}", r.anomaly_types),
        }
    }
    // And a history they all accept passes each, or is undecided where
    // the model has no checker of its own.
    let ok = load(&crate::support::root().join("test-logs/la-ser-valid.edn"));
    for m in Model::ALL {
        assert_eq!(run(&ok, &[*m], &[]).valid, Valid::True, "{m}");
    }
}

#[test]
fn unknown_names_are_refused_with_the_accepted_ones() {
    let e = check::resolve_models(&["serialisable".into()])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("serialisable") && e.contains("serializable") && e.contains("ssi"),
        "{e}"
    );
    let e = check::resolve_anomalies(&["G3".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("G3") && e.contains("G2-item"), "{e}");
}

#[test]
fn anomalies_alone_are_looked_for() {
    let skew = load_str("read-skew.edn", READ_SKEW);
    for a in [
        AnomalyType::GSingle,
        AnomalyType::GSingleItem,
        AnomalyType::G2,
    ] {
        assert_eq!(run(&skew, &[], &[a]).valid, Valid::False, "{a}");
    }
    assert_eq!(run(&skew, &[], &[AnomalyType::G1]).valid, Valid::True);
    let g1a = load_str("g1a.edn", ABORTED_READ);
    for a in [AnomalyType::G1a, AnomalyType::G1] {
        assert_eq!(run(&g1a, &[], &[a]).valid, Valid::False, "{a}");
    }
    let lost = load(&crate::support::root().join("test-logs/la-lost-update.edn"));
    assert_eq!(
        run(&lost, &[], &[AnomalyType::LostUpdate]).valid,
        Valid::False
    );
    // A write skew is a G2-item that only serializability's checker finds;
    // next to snapshot isolation, which allows it, it is never passed.
    let ws = load_str("write-skew.edn", WRITE_SKEW);
    for a in [AnomalyType::G2Item, AnomalyType::G2] {
        let r = run(&ws, &[Model::SnapshotIsolation], &[a]);
        assert_ne!(r.valid, Valid::True, "{a}");
        assert_ne!(run(&ws, &[], &[a]).valid, Valid::True, "{a}");
    }
    assert_eq!(
        run(&ws, &[Model::SnapshotIsolation], &[]).valid,
        Valid::True
    );
}

#[test]
fn anomalies_no_checker_finds_are_refused_by_name() {
    for a in [
        AnomalyType::GCursor,
        AnomalyType::PredicateReadMiss,
        AnomalyType::GUpdate,
    ] {
        let o = CheckOptions {
            models: vec![],
            timeout: None,
            anomalies: vec![a],
        };
        let e = check::plan(&o).unwrap_err().to_string();
        assert!(e.contains(a.name()), "{e}");
    }
    // Every other type of Elle's graph can be asked for.
    for a in AnomalyType::ALL {
        let findable = lattice::anomalies_implying(&[*a])
            .iter()
            .any(|b| !b.finders().is_empty());
        let o = CheckOptions {
            models: vec![],
            timeout: None,
            anomalies: vec![*a],
        };
        assert_eq!(check::plan(&o).is_ok(), findable, "{a}");
    }
}

#[test]
fn no_dependency_is_unknown_with_empty_transaction_graph() {
    let one = load_str(
        "one.edn",
        "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:index 1, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n",
    );
    let r = run(&one, &[Model::StrictSerializable], &[]);
    assert_eq!(r.valid, Valid::Unknown);
    assert_eq!(r.anomaly_types, vec!["empty-transaction-graph".to_string()]);
    let info = load_str(
        "info.edn",
        "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:index 1, :type :info, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:index 2, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}\n\
         {:index 3, :type :info, :process 1, :f :txn, :value [[:r :x nil]]}\n",
    );
    assert_eq!(
        run(&info, &[Model::Serializable], &[]).valid,
        Valid::Unknown
    );
    // One read of another's write is an edge.
    let skew = load_str("read-skew.edn", READ_SKEW);
    assert!(
        !run(&skew, &[Model::ReadCommitted], &[])
            .anomalies
            .contains_key("empty-transaction-graph")
    );
}

#[test]
fn reported_types_never_rule_out_what_the_history_satisfies() {
    // On the hand-made logs: the models the result rules out are exactly
    // ones a checker of elle-si rejects the history at.
    let dir = crate::support::root().join("test-logs");
    for f in [
        "la-lost-update.edn",
        "la-long-fork.edn",
        "la-si-valid.edn",
        "la-ser-valid.edn",
    ] {
        let l = load(&dir.join(f));
        let r = run(&l, &[Model::StrictSerializable], &[]);
        for n in r.not.iter().chain(&r.also_not) {
            let m = Model::parse(n).unwrap();
            if let elle_si::spec::Decider::Complete(_) = m.decider() {
                assert_eq!(
                    run(&l, &[m], &[]).valid,
                    Valid::False,
                    "{f}: claims not {n}"
                );
            }
        }
    }
}

/// Runs the CLI; exit status and stderr.
fn cli(args: &[&str], history: &str) -> (i32, String) {
    support::run_on("h.edn", history, &[&["check"], args].concat())
}

#[test]
fn the_cli_accepts_and_refuses_as_the_library() {
    assert_eq!(cli(&["-c", "read-committed"], READ_SKEW).0, 0);
    assert_eq!(cli(&["-c", "read-atomic"], READ_SKEW).0, 1);
    // Default: strict-serializable.
    assert_eq!(cli(&[], READ_SKEW).0, 1);
    // Anomalies alone, and beside a model that allows them.
    assert_eq!(cli(&["-a", "G-single"], READ_SKEW).0, 1);
    assert_eq!(cli(&["-a", "G1"], READ_SKEW).0, 0);
    assert_ne!(
        cli(&["-c", "snapshot-isolation", "-a", "G2-item"], WRITE_SKEW).0,
        0
    );
    assert_eq!(cli(&["-c", "snapshot-isolation"], WRITE_SKEW).0, 0);
    let (code, err) = cli(&["-a", "G-cursor"], READ_SKEW);
    assert_eq!(code, 3);
    assert!(err.contains("G-cursor"), "{err}");
    let (code, err) = cli(&["-c", "serialisable"], READ_SKEW);
    assert_eq!(code, 3);
    assert!(
        err.contains("serialisable") && err.contains("accepted names"),
        "{err}"
    );
    for name in Model::accepted_names() {
        let (code, err) = cli(&["-c", name], THIN_AIR);
        assert!(code == 1 || code == 2, "{name}: {code} {err}");
    }
}

#[test]
fn each_model_asked_for_gets_its_own_verdict() {
    use Valid::{False, True, Unknown};
    let l = load_str("write-skew.edn", WRITE_SKEW);
    let asked = [
        Model::ReadCommitted,
        Model::SnapshotIsolation,
        Model::Serializable,
    ];
    let r = run(&l, &asked, &[]);
    assert_eq!(r.valid, False);
    let verdicts = elle_si::report::model_verdicts(&r, &asked);
    let expected = [(asked[0], True), (asked[1], True), (asked[2], False)];
    assert_eq!(verdicts, expected);
    // A model decided only through a stronger one that the history
    // violates: unknown, with that one's anomalies as the reason.
    let causal = Model::parse("causal").unwrap();
    let r = run(&l, &[causal], &[]);
    assert_eq!(r.valid, Unknown, "{:?}", r.anomaly_types);
    assert_eq!(r.undecided, vec![(causal, Model::StrictSerializable)]);
    assert!(
        r.anomaly_types.iter().any(|t| t == "G2-item"),
        "{:?}",
        r.anomaly_types
    );
    // Beside serializable, which the write skew violates: the whole is
    // invalid, causal's part unknown.
    let both = [causal, Model::Serializable];
    let r = run(&l, &both, &[]);
    assert_eq!(r.valid, False);
    let verdicts = elle_si::report::model_verdicts(&r, &both);
    assert_eq!(verdicts, [(causal, Unknown), (Model::Serializable, False)]);
    // A history they all accept: valid, and nothing undecided.
    let r = run(&l, &[causal, Model::ReadCommitted], &[]);
    assert!(r.valid != False, "{:?}", r.anomaly_types);
    let ok = load(&crate::support::root().join("test-logs/la-ser-valid.edn"));
    let r = run(&ok, &both, &[]);
    assert_eq!((r.valid, r.undecided.len()), (True, 0));
}

#[test]
fn the_text_headline_says_which_model_fails_and_why_one_is_unknown() {
    let first = |out: &str| out.lines().next().unwrap_or_default().to_string();
    let (code, out) = cli(
        &["-c", "read-committed,snapshot-isolation,serializable"],
        WRITE_SKEW,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        first(&out).ends_with(
            ": INVALID under serializable; valid under read-committed, snapshot-isolation"
        ),
        "{out}"
    );
    // One verdict for all: said once.
    let (code, out) = cli(&["-c", "serializable,strict"], WRITE_SKEW);
    assert_eq!(code, 1, "{out}");
    assert!(
        first(&out).ends_with(": INVALID under serializable, strong-serializable"),
        "{out}"
    );
    // Undecided, with its reason and the anomalies behind it, without -v.
    let (code, out) = cli(&["-c", "causal"], WRITE_SKEW);
    assert_eq!(code, 2, "{out}");
    assert!(first(&out).ends_with(": UNKNOWN under causal"), "{out}");
    assert!(
        out.contains("causal: elle-si decides it only through strong-serializable"),
        "{out}"
    );
    assert!(out.contains("G2-item"), "{out}");
}

#[test]
fn a_realtime_step_gives_the_later_transaction_by_its_invocation() {
    // T1 appends 1 to x and completes; T2 is invoked afterwards and reads
    // x empty: a G-single-item-realtime. As Elle's realtime explainer, the
    // step's :b is T2's invocation (index 2), the op that shows T1 had
    // completed before T2 began, with its read not yet answered.
    let h = "{:type :invoke, :f :txn, :value [[:append :x 1]], :process 0, :index 0, :time 10}
{:type :ok, :f :txn, :value [[:append :x 1]], :process 0, :index 1, :time 20}
{:type :invoke, :f :txn, :value [[:r :x nil]], :process 1, :index 2, :time 30}
{:type :ok, :f :txn, :value [[:r :x []]], :process 1, :index 3, :time 40}
";
    let (code, out) = cli(&["-c", "strict-serializable", "-o", "edn"], h);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(":G-single-item-realtime"), "{out}");
    assert!(
        out.contains(
            ":b {:index 2, :time 30, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]"
        ),
        "{out}"
    );
    assert!(
        out.contains(":a' {:index 1, :time 20, :type :ok, :process 0"),
        "{out}"
    );
}

#[test]
fn an_rw_step_only_real_time_orders_names_its_cycle_realtime() {
    // Ta wrote x=1 and completed before Tb (x=2, y=1) was invoked; Tr read
    // x=1 and y=1. Only real time puts 1 before 2, so Tr's anti-dependency
    // on Tb, which closes the cycle with Tr's read of y, is strict
    // serializability's alone: serializability and SI accept (Tb, Ta,
    // Tr). Beside it, a write skew on a and b makes serializability
    // reject on its own, so the naming cannot lean on it accepting: the
    // cycle was a G-single-item, and made SI, and even consistent view,
    // invalid in the same request.
    let h = "{:type :invoke, :f :txn, :value [[:w :x 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:w :x 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:w :x 2] [:w :y 1]], :process 1, :index 2}
{:type :ok, :f :txn, :value [[:w :x 2] [:w :y 1]], :process 1, :index 3}
{:type :invoke, :f :txn, :value [[:r :x nil] [:r :y nil]], :process 2, :index 4}
{:type :ok, :f :txn, :value [[:r :x 1] [:r :y 1]], :process 2, :index 5}
{:type :invoke, :f :txn, :value [[:r :a nil] [:w :b 1]], :process 3, :index 6}
{:type :invoke, :f :txn, :value [[:r :b nil] [:w :a 1]], :process 4, :index 7}
{:type :ok, :f :txn, :value [[:r :a nil] [:w :b 1]], :process 3, :index 8}
{:type :ok, :f :txn, :value [[:r :b nil] [:w :a 1]], :process 4, :index 9}
";
    let (code, out) = cli(&["-c", "snapshot-isolation,strict-serializable"], h);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("INVALID under strong-serializable; valid under snapshot-isolation"),
        "{out}"
    );
    // The writer of the version read, Ta, completed on line 2.
    assert!(
        out.contains("[inferred through real time: 1 was written by line 2]"),
        "{out}"
    );
    let (code, out) = cli(&["-c", "strict-serializable", "-o", "edn"], h);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(":anomaly-types [:G-single-item-realtime :G2-item]"),
        "{out}"
    );
    assert!(
        out.contains(
            ":type :rw, :key :x, :value 1, :value' 2, :inferred? true, :through :realtime"
        ),
        "{out}"
    );
    assert!(
        out.contains(":not #{:repeatable-read :strong-snapshot-isolation}"),
        "{out}"
    );
}

#[test]
fn a_model_its_own_checkers_accept_is_valid_beside_one_that_fails() {
    // A G1c-process (Ta before Tb in process 0; Tc read Tb's y and Ta
    // read Tc's x): read atomic keeps sessions and rejects it; plain
    // serializability ignores process order and accepts it (Tb, Tc, Ta),
    // as Elle does. The session finding must not count against it.
    let h = "{:type :ok, :f :txn, :value [[:r :x [1]]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append :y 1]], :process 0, :index 1}
{:type :ok, :f :txn, :value [[:r :y [1]] [:append :x 1]], :process 1, :index 2}
";
    let (code, out) = cli(&["-c", "serializable,read-atomic"], h);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("INVALID under read-atomic; valid under serializable"),
        "{out}"
    );
    let (code, out) = cli(&["-c", "serializable", "-o", "edn"], h);
    assert_eq!(code, 0, "{out}");
    // A model elle-si decides only through strict serializability, which
    // the generator's causality violations break, leaves read committed,
    // which its own checkers accept, valid.
    let dir = std::env::temp_dir().join(format!("elle-si-spec-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("cv.edn");
    let made = crate::support::cli()
        .args([
            "gen",
            "--db",
            "serializable",
            "--causality-violation",
            "1",
            "--seed",
            "3",
        ])
        .args([
            "--sessions",
            "5",
            "--txns-per-session",
            "40",
            "--ops-per-txn",
            "4",
            "--keys",
            "8",
        ])
        .arg("-o")
        .arg(&f)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let out = crate::support::cli()
        .args(["check", "-c", "read-committed,causal"])
        .arg(&f)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("UNKNOWN under causal; valid under read-committed"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_incompatible_order_names_a_read_of_every_list() {
    // x read as [1 3] by line 4 and [1 2 3] by line 5: the key's order
    // comes from line 5's read, the irregular one is line 4's; both are
    // named, so each list shown can be found in the history.
    let h = "{:type :ok, :f :txn, :value [[:append :x 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append :x 2]], :process 1, :index 1}
{:type :ok, :f :txn, :value [[:append :x 3]], :process 2, :index 2}
{:type :ok, :f :txn, :value [[:r :x [1 3]]], :process 3, :index 3}
{:type :ok, :f :txn, :value [[:r :x [1 2 3]]], :process 4, :index 4}
";
    let (code, out) = cli(&["-c", "read-committed"], h);
    assert_eq!(code, 1, "{out}");
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("incompatible-order at"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("line 4") && line.contains("line 5"), "{out}");
}

#[test]
fn a_list_read_of_nil_is_shown_as_nil_and_an_empty_one_as_empty() {
    // A write skew whose reads of the initial state are one `nil`, one
    // `[]`: each op is shown as the history has it, as Elle's result maps
    // hold the history's own ops.
    let h = "{:type :ok, :f :txn, :value [[:r :x nil] [:append :y 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:r :y []] [:append :x 1]], :process 1, :index 1}
{:type :ok, :f :txn, :value [[:r :x [1]] [:r :y [1]]], :process 2, :index 2}
";
    let (code, out) = cli(&["-c", "serializable", "-o", "edn"], h);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(":value [[:r :x nil] [:append :y 1]]"), "{out}");
    assert!(out.contains(":value [[:r :y []] [:append :x 1]]"), "{out}");
    let (_, text) = cli(&["-c", "serializable"], h);
    assert!(text.contains("[[:r :x nil] [:append :y 1]]"), "{text}");
}

#[test]
fn a_cycle_another_checker_told_under_another_claim_still_decides_its_model() {
    // A fractured read: T2 missed T1's append to y, then saw its append to
    // x (in that order, which read committed allows). SI's checker (run
    // for read committed's G1c) tells it as a
    // G-single-item, which read committed and PSI allow; PSI's own checker
    // tells the same two transactions filed under PSI's claim. Told once
    // by name and transactions, PSI's was dropped: VALID under PSI, though
    // PSI alone says INVALID.
    let h = "{:type :ok, :f :txn, :value [[:append :x 1] [:append :y 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:r :y []] [:r :x [1]]], :process 1, :index 1}
";
    for model in ["parallel-snapshot-isolation", "prefix"] {
        let (code, out) = cli(&["-c", model], h);
        assert_eq!(code, 1, "{out}");
        let (code, out) = cli(&["-c", &format!("read-committed,{model}")], h);
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains(&format!(
                "INVALID under {model}; valid under read-committed"
            )),
            "{out}"
        );
    }
}

/// Transactions (process, value) as a history in which every one is
/// invoked before any completes: no real-time order between them.
fn concurrent(txns: &[(u32, &str)]) -> String {
    let order: Vec<(char, usize)> = (0..txns.len())
        .map(|t| ('i', t))
        .chain((0..txns.len()).map(|t| ('c', t)))
        .collect();
    support::timed(txns, &order)
}

#[test]
fn an_order_the_other_way_round_would_make_a_g1c_decides_repeatable_read() {
    // A wrote x=1, y=1; B read x=1 and wrote y=2; C read y=1 and x=1 and
    // wrote x=2. No read orders A's and B's writes of y. A before B: C
    // missed B's y and B missed C's x, a G2-item. B before A: B read A's
    // x, a G1c. Repeatable read prohibits both: invalid either way (it was
    // unknown: the cycle was filed as serializability's alone). SI allows
    // the G2-item (two adjacent anti-dependencies).
    let h = concurrent(&[
        (0, "[[:w :x 1] [:w :y 1]]"),
        (1, "[[:r :x 1] [:w :y 2]]"),
        (2, "[[:r :y 1] [:r :x 1] [:w :x 2]]"),
    ]);
    let (code, out) = cli(&["-c", "repeatable-read", "-o", "edn"], &h);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(":anomaly-types [:G2-item]"), "{out}");
    assert!(out.contains(":otherwise {:type :G1c"), "{out}");
    let (code, out) = cli(&["-c", "serializable,snapshot-isolation"], &h);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("INVALID under serializable; valid under snapshot-isolation"),
        "{out}"
    );
    assert!(out.contains("not: repeatable-read"), "{out}");
    // The text gives the other order's cycle in one line (A completed on
    // line 4, B on line 5).
    let (_, out) = cli(&["-c", "repeatable-read"], &h);
    assert!(
        out.contains("the other order closes a G1c cycle instead (line 4 -> line 5 -> line 4)"),
        "{out}"
    );
}

#[test]
fn a_write_order_reads_imply_is_marked_and_claims_what_the_cycle_names() {
    // W1 wrote x=1 (and p, which T2 read before writing x=2); W2 wrote
    // y=1 (and q, which T4 read before writing y=2). T1 read x=1 and T4's
    // y=2; T3 read T2's z and y=1. No read orders x's or y's writes, but
    // W1 precedes T2 and W2 precedes T4 by reads: the other orders close
    // G1c cycles. With them, a long fork: T1 -rw-> T2 -wr-> T3 -rw-> T4
    // -wr-> T1, a G-nonadjacent-item that rules out repeatable read and
    // SI (it was filed as the checked model's *-cycle-exists, and
    // repeatable read was unknown).
    let h = concurrent(&[
        (0, "[[:w :x 1] [:w :p 1]]"),
        (1, "[[:w :y 1] [:w :q 1]]"),
        (4, "[[:r :p 1] [:w :x 2] [:w :z 1]]"),
        (5, "[[:r :q 1] [:w :y 2]]"),
        (2, "[[:r :x 1] [:r :y 2]]"),
        (3, "[[:r :z 1] [:r :y 1]]"),
    ]);
    for model in ["snapshot-isolation", "repeatable-read", "serializable"] {
        let (code, out) = cli(&["-c", model, "-o", "edn"], &h);
        assert_eq!(code, 1, "{model}: {out}");
        assert!(
            out.contains(":anomaly-types [:G-nonadjacent-item]"),
            "{model}: {out}"
        );
        assert!(
            out.contains(":not #{:repeatable-read :snapshot-isolation}"),
            "{model}: {out}"
        );
        assert!(
            out.contains(":type :rw, :key :x, :value 1, :value' 2, :inferred? true, :through :wr"),
            "{model}: {out}"
        );
    }
    // The text names the writer of each version read (W1, W2 complete
    // on lines 7 and 8).
    let (_, out) = cli(&["-c", "snapshot-isolation"], &h);
    for (v, t, line) in [("x", "T2", 7), ("y", "T4", 8)] {
        let step = format!(
            "read key :{v} as 1, so it did not see {t}'s write of 2 (rw) [inferred through reads: 1 was written by line {line}]"
        );
        assert!(out.contains(&step), "{out}");
    }
    // Read committed allows it (no G1c either way).
    let (code, out) = cli(&["-c", "read-committed"], &h);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn an_order_whose_other_way_closes_a_cycle_as_strong_keeps_the_name() {
    // W wrote x=1, y=2; T1 read W's y=2, wrote y=3 and x=4 (so x=1 < 4,
    // by reads); T2 read x=1 and wrote x=5; R read x=5 and T1's y=3. No
    // read orders 4 and 5. 4 before 5: T2 missed T1's 4 and T1's write
    // precedes T2's, a G-single-item. 5 before 4: R missed T1's 4 yet read
    // T1's y, a G-single-item too. Consistent view prohibits it either
    // way (it was unknown: the cycle was filed as SI's alone).
    let h = concurrent(&[
        (0, "[[:w :x 1] [:w :y 2]]"),
        (1, "[[:r :y 2] [:w :y 3] [:w :x 4]]"),
        (2, "[[:r :x 1] [:w :x 5]]"),
        (3, "[[:r :x 5] [:r :y 3]]"),
    ]);
    for model in ["consistent-view", "snapshot-isolation", "repeatable-read"] {
        let (code, out) = cli(&["-c", model, "-o", "edn"], &h);
        assert_eq!(code, 1, "{model}: {out}");
        assert!(
            out.contains(":anomaly-types [:G-single-item]"),
            "{model}: {out}"
        );
        assert!(
            out.contains(":not #{:consistent-view :repeatable-read}"),
            "{model}: {out}"
        );
    }
    let (code, out) = cli(&["-c", "read-committed"], &h);
    assert_eq!(code, 0, "{out}");
}

/// Twelve transactions of the generator's causal store (`elle-si gen
/// --workload rw-register --db causal --sessions 3 --txns-per-session 4
/// --ops-per-txn 4 --keys 3 --seed 21`): no read sees a write it should
/// not, but several transactions write key 0 unseen by each other.
const CAUSAL_12: &str = "\
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:w 2 1] [:w 1 1] [:w 0 1] [:w 1 2]]}
{:index 1, :type :invoke, :process 1, :f :txn, :value [[:w 0 2] [:r 2 nil] [:w 0 3] [:r 1 nil]]}
{:index 2, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:w 0 4] [:r 1 nil] [:r 0 nil]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:w 0 2] [:r 2 nil] [:w 0 3] [:r 1 nil]]}
{:index 4, :type :invoke, :process 1, :f :txn, :value [[:w 0 5] [:w 0 6] [:r 2 nil] [:r 1 nil]]}
{:index 5, :type :ok, :process 0, :f :txn, :value [[:w 2 1] [:w 1 1] [:w 0 1] [:w 1 2]]}
{:index 6, :type :ok, :process 2, :f :txn, :value [[:r 0 nil] [:w 0 4] [:r 1 nil] [:r 0 4]]}
{:index 7, :type :invoke, :process 2, :f :txn, :value [[:r 1 nil] [:w 2 2] [:r 0 nil] [:r 2 nil]]}
{:index 8, :type :invoke, :process 0, :f :txn, :value [[:r 0 nil] [:w 0 7] [:r 2 nil] [:r 1 nil]]}
{:index 9, :type :ok, :process 1, :f :txn, :value [[:w 0 5] [:w 0 6] [:r 2 nil] [:r 1 nil]]}
{:index 10, :type :ok, :process 2, :f :txn, :value [[:r 1 2] [:w 2 2] [:r 0 4] [:r 2 2]]}
{:index 11, :type :invoke, :process 2, :f :txn, :value [[:r 1 nil] [:r 2 nil] [:w 1 3] [:r 1 nil]]}
{:index 12, :type :invoke, :process 1, :f :txn, :value [[:w 2 3] [:w 2 4] [:w 1 4] [:r 2 nil]]}
{:index 13, :type :ok, :process 0, :f :txn, :value [[:r 0 4] [:w 0 7] [:r 2 1] [:r 1 2]]}
{:index 14, :type :invoke, :process 0, :f :txn, :value [[:w 2 5] [:r 2 nil] [:r 0 nil] [:w 1 5]]}
{:index 15, :type :ok, :process 1, :f :txn, :value [[:w 2 3] [:w 2 4] [:w 1 4] [:r 2 4]]}
{:index 16, :type :ok, :process 2, :f :txn, :value [[:r 1 2] [:r 2 2] [:w 1 3] [:r 1 3]]}
{:index 17, :type :invoke, :process 1, :f :txn, :value [[:w 0 8] [:r 0 nil] [:w 1 6] [:w 2 6]]}
{:index 18, :type :ok, :process 0, :f :txn, :value [[:w 2 5] [:r 2 5] [:r 0 7] [:w 1 5]]}
{:index 19, :type :invoke, :process 0, :f :txn, :value [[:w 1 7] [:r 1 nil] [:w 0 9] [:r 2 nil]]}
{:index 20, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:w 1 8] [:r 1 nil] [:w 0 10]]}
{:index 21, :type :ok, :process 1, :f :txn, :value [[:w 0 8] [:r 0 8] [:w 1 6] [:w 2 6]]}
{:index 22, :type :ok, :process 0, :f :txn, :value [[:w 1 7] [:r 1 7] [:w 0 9] [:r 2 5]]}
{:index 23, :type :ok, :process 2, :f :txn, :value [[:r 0 7] [:w 1 8] [:r 1 8] [:w 0 10]]}
";

#[test]
fn read_committed_is_decided_where_snapshot_isolation_s_cycle_rests_on_its_own_orders() {
    // SI's checker rejects the history by a cycle of write orders that
    // only SI forces (its steps would read as a G0). Read committed
    // prohibits only cycles of dependencies, and ordering every key's
    // writes by a topological order of the reads' dependencies (and
    // session order, real time) closes none: valid, where read committed
    // decided through SI's checker was `:unknown`.
    let l = load_str("causal-12.edn", CAUSAL_12);
    let si = run(&l, &[Model::SnapshotIsolation], &[]);
    assert_eq!(si.valid, Valid::False, "{:?}", si.anomaly_types);
    for m in [
        Model::ReadUncommitted,
        Model::ReadCommitted,
        Model::StrongSessionReadCommitted,
        Model::StrongReadCommitted,
    ] {
        let r = run(&l, &[m], &[]);
        assert_eq!(r.valid, Valid::True, "{m}: {:?}", r.anomaly_types);
    }
    let r = run(&l, &[], &[AnomalyType::G1c]);
    assert_eq!(r.valid, Valid::True, "G1c: {:?}", r.anomaly_types);
    // Beside a model that needs SI's checker, the verdict of each.
    let (code, out) = cli(&["-c", "read-committed,snapshot-isolation"], CAUSAL_12);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("INVALID under snapshot-isolation; valid under read-committed"),
        "{out}"
    );
}

#[test]
fn a_cycle_two_checkers_tell_from_different_transactions_is_told_once() {
    // Each reads the other's write: C4's read committed and SI's checker
    // both tell the G1c, each starting from another of the two.
    let h = concurrent(&[(0, "[[:w :x 1] [:r :y 1]]"), (1, "[[:w :y 1] [:r :x 1]]")]);
    let l = load_str("g1c.edn", &h);
    for models in [
        vec![Model::ReadCommitted],
        vec![Model::ReadCommitted, Model::SnapshotIsolation],
    ] {
        let r = run(&l, &models, &[]);
        assert_eq!(r.valid, Valid::False, "{models:?}");
        let told = r.anomalies.get("G1c").map_or(0, Vec::len);
        assert_eq!(told, 1, "{models:?}: {:?}", r.anomalies.get("G1c"));
    }
}

/// Runs the CLI exactly as given (no `check` put in front); exit status,
/// stdout and stderr.
fn raw_cli(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = crate::support::cli().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn elle_cli_habits_are_understood() {
    let dir = std::env::temp_dir().join(format!("elle-si-habits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let skew = dir.join("read-skew.edn");
    let ser = dir.join("write-skew.edn");
    std::fs::write(&skew, READ_SKEW).unwrap();
    std::fs::write(&ser, WRITE_SKEW).unwrap();
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    // `elle-si FILE` is `elle-si check FILE`, options first too.
    let bare = raw_cli(&[skew.as_os_str()]);
    let checked = raw_cli(&[os("check"), skew.as_os_str()]);
    assert_eq!(bare, checked);
    assert_eq!(bare.0, 1, "{bare:?}");
    let (code, out, _) = raw_cli(&[os("-c"), os("read-committed"), skew.as_os_str()]);
    assert_eq!(code, 0, "{out}");
    // A misspelled subcommand is still clap's error, not a file.
    let (code, _, err) = raw_cli(&[os("chekc"), skew.as_os_str()]);
    assert_eq!(code, 3);
    assert!(err.contains("check"), "{err}");
    // elle-cli's line per file.
    let (code, out, _) = raw_cli(&[
        os("-o"),
        os("elle-cli"),
        os("-c"),
        os("snapshot-isolation"),
        skew.as_os_str(),
        ser.as_os_str(),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!("{} \t false\n{} \t true\n", skew.display(), ser.display())
    );
    // "Did you mean", for models and anomalies; none when nothing is near.
    let (code, out, err) = raw_cli(&[os("-c"), os("serialisable"), skew.as_os_str()]);
    assert_eq!(code, 3, "{out}");
    assert!(err.contains("did you mean `serializable`?"), "{err}");
    let (_, _, err) = raw_cli(&[os("-a"), os("G2-itme"), skew.as_os_str()]);
    assert!(err.contains("did you mean `G2-item`?"), "{err}");
    let (_, _, err) = raw_cli(&[os("-c"), os("zzzzqqq"), skew.as_os_str()]);
    assert!(!err.contains("did you mean"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn psi_and_causal_point_where_they_should() {
    assert_eq!(Model::parse("psi"), Ok(Model::ParallelSnapshotIsolation));
    // Bailis's causal is decided only through strict serializability: a
    // history violating that is unknown, with a pointer to tcc.
    let (code, out) = cli(&["-c", "causal"], READ_SKEW);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("`causal-cerone` or `tcc`"), "{out}");
    let (code, out) = cli(&["-c", "tcc"], READ_SKEW);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn skipped_ops_are_said_second_and_long_reports_end_with_their_headline() {
    // Ops with no :process (Elle's paper example is written so): all
    // skipped, so unknown, and the report says why on its second line.
    let none = "{:type :invoke, :f :txn, :value [[:append 1 1]]}\n\
                {:type :ok, :f :txn, :value [[:append 1 1]]}\n";
    let (code, out) = cli(&[], none);
    assert_eq!(code, 2, "{out}");
    let second = out.lines().nth(1).unwrap_or_default();
    assert!(
        second.contains("2 ops skipped") && second.contains(":process"),
        "{out}"
    );
    // A nemesis op beside client ops: said too; nothing when none.
    let nemesis = format!("{READ_SKEW}{{:index 99, :type :info, :process :nemesis, :f :kill}}\n");
    let (_, out) = cli(&["-c", "read-committed"], &nemesis);
    assert!(
        out.lines()
            .nth(1)
            .unwrap_or_default()
            .contains("1 op skipped"),
        "{out}"
    );
    let (_, out) = cli(&["-c", "read-committed"], READ_SKEW);
    assert!(!out.contains("skipped"), "{out}");
    // Short reports do not repeat their headline; a long one does.
    let (_, out) = cli(&["-c", "read-atomic"], READ_SKEW);
    let head = out.lines().next().unwrap_or_default().to_string();
    assert_eq!(out.lines().filter(|l| *l == head).count(), 1, "{out}");
    let dir = std::env::temp_dir().join(format!("elle-si-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("long.edn");
    support::generate(
        &f,
        &[
            "--db",
            "snapshot-isolation",
            "--causality-violation",
            "0.3",
            "--sessions",
            "6",
            "--txns-per-session",
            "80",
            "--seed",
            "1",
        ],
    );
    let text = std::fs::read_to_string(&f).unwrap();
    let (code, out) = cli(&["-c", "serializable,causal-cerone"], &text);
    assert_eq!(code, 1, "{out}");
    assert!(out.lines().count() > 40, "{out}");
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.contains("INVALID under") && last.contains("G-single-item"),
        "{last}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn steps_carry_elle_s_mop_indices() {
    // T1 = [[:r 1 nil] [:append 1 2] [:r 4 nil] [:append 0 2]] and T2 =
    // [[:append 5 1] [:append 0 1] [:r 1 nil] [:append 1 1]]: T1 -ww-> T2
    // on key 0 (T1's mop 3, T2's mop 1); T2 -rw-> T1 on key 1 (T2's read,
    // mop 2; T1's append, mop 1).
    let out = crate::support::cli()
        .args([
            "check",
            "-c",
            "snapshot-isolation",
            "-o",
            "edn",
            "test-logs/la-lost-update.edn",
        ])
        .output()
        .unwrap();
    let edn = String::from_utf8_lossy(&out.stdout);
    assert!(
        edn.contains("{:type :ww, :key 0, :value 2, :value' 1, :a-mop-index 3, :b-mop-index 1}"),
        "{edn}"
    );
    assert!(
        edn.contains(
            "{:type :rw, :key 1, :value :initial-state, :value' 2, :a-mop-index 2, :b-mop-index 1}"
        ),
        "{edn}"
    );
}

#[test]
fn pretty_edn_is_the_same_map_laid_out() {
    let run = |args: &[&str]| {
        crate::support::cli()
            .args(["check", "-c", "serializable,read-committed"])
            .args(args)
            .arg("test-logs/la-lost-update.edn")
            .output()
            .unwrap()
    };
    let flat = run(&["-o", "edn"]);
    let pretty = run(&["-o", "edn", "--pretty"]);
    assert_eq!(flat.status.code(), pretty.status.code());
    let (flat, pretty) = (
        String::from_utf8_lossy(&flat.stdout).to_string(),
        String::from_utf8_lossy(&pretty.stdout).to_string(),
    );
    let read = |t: &str| elle_si::edn::read_one(t.as_bytes()).expect("EDN reads back");
    assert_eq!(read(&pretty), read(&flat), "{pretty}");
    assert_eq!(flat.lines().count(), 1, "{flat}");
    assert!(pretty.lines().count() > 20, "{pretty}");
    // Each anomaly starts a line of its own, under its type.
    assert!(
        pretty.contains("\n :anomalies\n {:G-single-item\n  [{:cycle"),
        "{pretty}"
    );
    assert!(pretty.lines().all(|l| l.len() <= 100), "{pretty}");
    // Only EDN is laid out: --pretty elsewhere is refused by name.
    let json = run(&["-o", "json", "--pretty"]);
    assert_eq!(json.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&json.stdout).contains("--pretty lays out EDN"));
}

/// On a terminal, what is under way is drawn on stderr while checking;
/// anywhere else nothing is (the other tests compare stderr whole). The
/// terminal is `script`'s (util-linux); without it the test says so and
/// passes.
#[test]
fn progress_is_drawn_on_a_terminal_only() {
    let dir = std::env::temp_dir().join(format!("elle-si-tty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("h.edn");
    support::generate(
        &f,
        &[
            "--workload",
            "rw-register",
            "--db",
            "causal",
            "--sessions",
            "10",
            // Large enough that the check outlasts the spinner's first
            // tenths of a second on any host.
            "--txns-per-session",
            "1000",
        ],
    );
    let cmd = format!(
        "{} check {} -c serializable,causal-cerone",
        env!("CARGO_BIN_EXE_elle-si"),
        f.display()
    );
    let log = dir.join("tty.log");
    let Ok(out) = std::process::Command::new("script")
        .args(["-qfec", &cmd])
        .arg(&log)
        .output()
    else {
        eprintln!("skipped: no `script` to give the check a terminal");
        return;
    };
    if !out.status.success() && !log.exists() {
        eprintln!("skipped: `script` could not run here");
        return;
    }
    let tty = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(tty.contains("h.edn: "), "{tty}");
    assert!(tty.contains("h.edn › "), "the stages under way: {tty}");
    let plain = crate::support::cli()
        .args(["check", "-c", "serializable,causal-cerone"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&plain.stderr).contains('›'));
    let _ = std::fs::remove_dir_all(&dir);
}
