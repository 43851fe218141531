//! Elle's rw-register key options (`--linearizable-keys`,
//! `--sequential-keys`, `--wfr-keys`): small hand-written histories where
//! each option changes the verdict as Elle's does (Elle's own test cases
//! among them), and does nothing without it; list-append histories and
//! repeated values; the command line's flags.

use elle_si::anomaly::{Datum, Field};
use elle_si::history::{KeyOrders, LoadOptions, Loaded};
use elle_si::report::{CheckResult, Valid};

use crate::support;

const LIN: KeyOrders = KeyOrders {
    wfr: false,
    sequential: false,
    linearizable: true,
};
const SEQ: KeyOrders = KeyOrders {
    wfr: false,
    sequential: true,
    linearizable: false,
};
const WFR: KeyOrders = KeyOrders {
    wfr: true,
    sequential: false,
    linearizable: false,
};
const NONE: KeyOrders = KeyOrders {
    wfr: false,
    sequential: false,
    linearizable: false,
};

/// `text` read under the key options `keys`.
fn load_keyed(text: &str, keys: KeyOrders) -> Loaded {
    let opts = LoadOptions {
        keys,
        ..LoadOptions::default()
    };
    support::load_bytes("keys.edn", text.as_bytes().to_vec(), opts)
}

/// The check of `text` at `models` (with `anomalies`, comma-separated),
/// under the key options `keys`.
fn check(text: &str, keys: KeyOrders, models: &str, anomalies: &str) -> CheckResult {
    use elle_si::check::{CheckOptions, resolve_anomalies, resolve_models};
    let l = load_keyed(text, keys);
    let models = if models.is_empty() {
        Vec::new()
    } else {
        resolve_models(&[models.to_string()]).expect("models")
    };
    let anomalies = if anomalies.is_empty() {
        Vec::new()
    } else {
        resolve_anomalies(&[anomalies.to_string()]).expect("anomalies")
    };
    elle_si::check::entry::check_loaded(
        &l,
        &CheckOptions {
            models,
            timeout: None,
            anomalies,
        },
    )
    .expect("check")
}

fn verdict(text: &str, keys: KeyOrders, models: &str) -> (Valid, Vec<String>) {
    let r = check(text, keys, models, "");
    (r.valid, r.anomaly_types)
}

/// `(key, values, sources)` of each cyclic-versions found, as rendered.
fn cyclic(r: &CheckResult, l: &Loaded) -> Vec<String> {
    r.anomalies
        .get("cyclic-versions")
        .into_iter()
        .flatten()
        .map(|a| {
            let show = |f: Field| {
                a.get(f).map_or(String::new(), |d| {
                    elle_si::report::render::datum_value(&l.history, d).to_string()
                })
            };
            assert!(matches!(a.get(Field::Scc), Some(Datum::Set(_))));
            format!(
                "{} {} {}",
                show(Field::Key),
                show(Field::Scc),
                show(Field::Sources)
            )
        })
        .collect()
}

/// Each transaction invoked and completed after the previous one.
fn serial(txns: &[(u32, &str)]) -> String {
    let order: Vec<(char, usize)> = (0..txns.len()).flat_map(|t| [('i', t), ('c', t)]).collect();
    support::timed(txns, &order)
}

#[test]
fn linearizable_keys_orders_writes_by_real_time() {
    // T1 writes x = 1 and completes; T2 writes x = 2 and y = 2; T3, invoked
    // after T1 and running beside T2, reads x = 1 and y = 2. Without the
    // option x's order may be 2, 1 (serializable: T2 T1 T3); with it,
    // 1 < 2, so T3 missed T2's x while seeing its y: a G-single.
    let txns = [
        (0, "[[:w :x 1]]"),
        (1, "[[:w :x 2] [:w :y 2]]"),
        (2, "[[:r :x 1] [:r :y 2]]"),
    ];
    let h = support::timed(
        &txns,
        &[('i', 0), ('c', 0), ('i', 2), ('i', 1), ('c', 1), ('c', 2)],
    );
    for m in ["serializable", "snapshot-isolation", "repeatable-read"] {
        assert_eq!(verdict(&h, NONE, m), (Valid::True, vec![]), "{m}\n{h}");
        let (v, types) = verdict(&h, LIN, m);
        assert_eq!(v, Valid::False, "{m}\n{h}");
        assert_eq!(types, vec!["G-single-item"], "{m}");
    }
    // Neither of the other options orders x here (no process runs two of
    // them; no transaction reads and writes a key).
    for keys in [SEQ, WFR] {
        assert_eq!(verdict(&h, keys, "serializable").0, Valid::True);
    }
    // Causal consistency does not: T3 saw T2's y, so T2 was visible to it,
    // and it read x from T1, whose version real time puts first.
    assert_eq!(verdict(&h, NONE, "causal-cerone").0, Valid::True);
    assert_eq!(verdict(&h, LIN, "causal-cerone").0, Valid::False);
}

#[test]
fn linearizable_keys_finds_g1c_at_the_causal_levels() {
    // T1 writes x = 1 and reads y = 2, which T2, invoked after T1 completed,
    // writes with x = 2. In real time x's versions are 1 then 2: T1 ww T2,
    // and T2 wr T1: G1c, at every level from read committed up.
    let h = serial(&[(0, "[[:w :x 1] [:r :y 2]]"), (1, "[[:w :x 2] [:w :y 2]]")]);
    for m in [
        "read-committed",
        "read-committed-c4",
        "read-atomic",
        "causal-cerone",
        "serializable",
    ] {
        assert_eq!(verdict(&h, NONE, m).0, Valid::True, "{m}");
        assert_eq!(
            verdict(&h, LIN, m),
            (Valid::False, vec!["G1c".to_string()]),
            "{m}"
        );
    }
    // Read uncommitted allows G1c.
    assert_eq!(verdict(&h, LIN, "read-uncommitted").0, Valid::True);
}

#[test]
fn a_read_against_the_real_time_order_of_two_writes_is_cyclic_versions() {
    // x = 1, then x = 2, then a read of 1, one after another: 1 < 2 by real
    // time, and 2 no later than what the read saw, 1. Elle's test "Read
    // read returns what was just been written" has a read of 2 that
    // nobody wrote; here each value has a writer.
    let h = serial(&[(0, "[[:w :x 1]]"), (1, "[[:w :x 2]]"), (2, "[[:r :x 1]]")]);
    assert_eq!(verdict(&h, NONE, "serializable").0, Valid::True);
    let r = check(&h, LIN, "serializable", "");
    assert_eq!(r.valid, Valid::False);
    assert_eq!(r.anomaly_types, vec!["cyclic-versions"]);
    assert_eq!(
        cyclic(&r, &load_keyed(&h, LIN)),
        vec![":x #{1 2} [:initial-state :linearizable-keys]"]
    );
    assert!(r.not.contains("read-uncommitted"));
    // Invalid at every model, as Elle's read uncommitted prohibits it.
    for m in ["read-uncommitted", "read-atomic", "causal-cerone"] {
        assert_eq!(verdict(&h, LIN, m).0, Valid::False, "{m}");
    }
    // And looked for by name.
    assert_eq!(check(&h, LIN, "", "cyclic-versions").valid, Valid::False);
    assert_eq!(check(&h, NONE, "", "cyclic-versions").valid, Valid::True);
}

#[test]
fn sequential_keys_finds_elles_g0() {
    // Elle's G0 test: x written 1 (process 0) then 2 (process 1), y the
    // other way round; each process then reads the other's final value.
    // By process order x's versions are 1 < 2 and y's 1 < 2: T1 ww T2 on x,
    // T2 ww T1 on y.
    let h = serial(&[
        (0, "[[:w :x 1] [:w :y 2]]"),
        (1, "[[:w :x 2] [:w :y 1]]"),
        (0, "[[:r :x 2]]"),
        (1, "[[:r :y 2]]"),
    ]);
    let g0 = |keys| check(&h, keys, "", "G0");
    assert_eq!(g0(NONE).valid, Valid::True);
    let r = g0(SEQ);
    assert_eq!(
        (r.valid, r.anomaly_types),
        (Valid::False, vec!["G0".into()])
    );
    // Real time, with processes alternating, orders y both ways (T1's 2
    // before T2's 1, T2's 1 before T4's read of 2): as in Elle, that
    // source is left out, and its cycle is cyclic-versions, which -a G0
    // does not ask for, while every model prohibits it.
    assert_eq!(g0(LIN).valid, Valid::True);
    let r = check(&h, LIN, "serializable", "");
    assert_eq!(r.anomaly_types, vec!["cyclic-versions"]);
    assert_eq!(
        cyclic(&r, &load_keyed(&h, LIN)),
        vec![":y #{1 2} [:initial-state :linearizable-keys]"]
    );
}

#[test]
fn sequential_keys_cyclic_version_order() {
    // Elle's "cyclic version order": one process writes 1, writes 2, reads
    // 1 (no invocations: no real time).
    let h = "{:type :ok :process 0 :f :txn :value [[:w :x 1]]}\n\
             {:type :ok :process 0 :f :txn :value [[:w :x 2]]}\n\
             {:type :ok :process 0 :f :txn :value [[:r :x 1]]}\n";
    let r = check(h, SEQ, "serializable", "");
    assert_eq!(r.anomaly_types, vec!["cyclic-versions"]);
    assert_eq!(
        cyclic(&r, &load_keyed(h, SEQ)),
        vec![":x #{1 2} [:initial-state :sequential-keys]"]
    );
    // Without invocations there is no real time to order by.
    assert_eq!(verdict(h, LIN, "serializable").0, Valid::True);
}

#[test]
fn wfr_keys_orders_a_read_before_the_write() {
    // Each transaction read y from the other and wrote its own: a G1c of
    // write-read edges, which read uncommitted allows; as versions, 1 < 2
    // (T2 read 1, wrote 2) and 2 < 1.
    let h = "{:type :ok :process 0 :f :txn :value [[:r :y 2] [:w :y 1]]}\n\
             {:type :ok :process 1 :f :txn :value [[:r :y 1] [:w :y 2]]}\n";
    assert_eq!(verdict(h, NONE, "read-uncommitted").0, Valid::True);
    let r = check(h, WFR, "read-uncommitted", "");
    assert_eq!(r.valid, Valid::False);
    assert_eq!(
        cyclic(&r, &load_keyed(h, WFR)),
        vec![":y #{1 2} [:initial-state :wfr-keys]"]
    );
}

#[test]
fn elles_scc_sort_case_leaves_the_contradicting_source_out() {
    // Elle's scc-sort-bug test: in one process, reads of x = 1 then nil
    // (the real-time order says 1 before nil), then a read of 4 with a write
    // of 3 (4 < 3 by wfr), then a write of 4 (3 < 4 by real time). Both
    // cycles close once real time is added: that source is left out, and
    // each cycle names the sources that close it.
    let h = serial(&[
        (0, "[[:r :x 1]]"),
        (0, "[[:r :x nil]]"),
        (0, "[[:r :x 4] [:w :x 3]]"),
        (0, "[[:w :x 4]]"),
    ]);
    let keys = KeyOrders {
        wfr: true,
        linearizable: true,
        ..NONE
    };
    let r = check(&h, keys, "strong-serializable", "");
    assert_eq!(r.valid, Valid::False);
    assert_eq!(
        cyclic(&r, &load_keyed(&h, keys)),
        vec![
            ":x #{nil 1} [:initial-state :wfr-keys :linearizable-keys]",
            ":x #{3 4} [:initial-state :wfr-keys :linearizable-keys]",
        ]
    );
    // The wfr orders stay (4 < 3): with the process order, T3 before T4,
    // that is a G0 through session order.
    assert!(
        r.anomaly_types.contains(&"G0-process".to_string()),
        "{:?}",
        r.anomaly_types
    );
}

#[test]
fn elles_cyclic_versions_bug_case_is_valid() {
    // Elle's cyclic-versions-bug-test: concurrent reads of nil beside a
    // write of 4, read later; serializable with linearizable keys.
    let h = "{:index 1 :type :invoke :process 0 :f :txn :value []}\n\
             {:index 2 :type :ok :process 0 :f :txn :value []}\n\
             {:index 3 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n\
             {:index 4 :type :invoke :process 1 :f :txn :value [[:w 1 4]]}\n\
             {:index 5 :type :invoke :process 2 :f :txn :value []}\n\
             {:index 320 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}\n\
             {:index 322 :type :ok :process 1 :f :txn :value [[:w 1 4]]}\n\
             {:index 323 :type :ok :process 2 :f :txn :value []}\n\
             {:index 324 :type :invoke :process 0 :f :txn :value []}\n\
             {:index 325 :type :ok :process 0 :f :txn :value []}\n\
             {:index 326 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n\
             {:index 327 :type :ok :process 0 :f :txn :value [[:r 1 4]]}\n";
    assert_eq!(verdict(h, LIN, "serializable").0, Valid::True);
    // A read of nil after the write of 4 completed would not be.
    let late = h.replace(
        "{:index 327 :type :ok :process 0 :f :txn :value [[:r 1 4]]}",
        "{:index 327 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}",
    );
    assert_eq!(verdict(&late, NONE, "serializable").0, Valid::True);
    assert_eq!(verdict(&late, LIN, "serializable").0, Valid::False);
}

#[test]
fn without_the_options_generated_verdicts_are_unchanged() {
    // The options off are no options: the same result on generated
    // histories of every store, valid and not.
    use elle_si::generator::{Db, GenOptions};
    for (db, seed) in [
        ("serializable", 1),
        ("snapshot-isolation", 2),
        ("causal", 3),
    ] {
        let opts = GenOptions {
            workload: elle_si::history::Workload::RwRegister,
            sessions: 4,
            txns_per_session: 40,
            ops_per_txn: 4,
            keys: 6,
            seed,
            db: Db::parse(db).expect("db"),
            ..GenOptions::default()
        };
        let g = elle_si::generator::generate(&opts).expect("generates");
        let text = String::from_utf8(g.history).expect("utf-8");
        for m in ["serializable", "snapshot-isolation", "causal-cerone"] {
            let plain = support::verdict(&support::load_str("gen.edn", &text), m);
            assert_eq!(verdict(&text, NONE, m), plain, "{db} {m}");
        }
    }
}

#[test]
fn a_serializable_store_is_valid_with_every_option_and_a_causal_one_is_not() {
    // The generator's serializable store commits each transaction at its
    // completion: its keys are linearizable. A causal store's replicas
    // serve stale reads: not.
    use elle_si::generator::{Db, GenOptions};
    let all = KeyOrders {
        wfr: true,
        sequential: true,
        linearizable: true,
    };
    let history = |db: &str| {
        let opts = GenOptions {
            workload: elle_si::history::Workload::RwRegister,
            sessions: 6,
            txns_per_session: 80,
            ops_per_txn: 4,
            keys: 5,
            seed: 54,
            db: Db::parse(db).expect("db"),
            ..GenOptions::default()
        };
        String::from_utf8(elle_si::generator::generate(&opts).expect("gen").history).expect("utf-8")
    };
    let ser = history("serializable");
    assert_eq!(verdict(&ser, all, "serializable"), (Valid::True, vec![]));
    let l = load_keyed(&ser, all);
    assert!(!elle_si::check::keys::inferred(&l.history).ww.is_empty());
    let causal = history("causal");
    assert_eq!(verdict(&causal, NONE, "causal-cerone").0, Valid::True);
    assert_eq!(verdict(&causal, LIN, "serializable").0, Valid::False);
}

#[test]
fn a_read_of_the_initial_state_is_nil_in_every_format() {
    // The text format's initial state is 0: a process that wrote key 1 = 1
    // then read 0 read the initial state after its own write.
    let text = "w(1,1,0,0)\nr(1,0,0,1)\n";
    let (code, out) = cli(&["check", "-c", "serializable", "-o", "edn"], "t.txt", text);
    assert_eq!((code, out.trim()), (0, "{:valid? true}"));
    let (code, out) = cli(
        &[
            "check",
            "-c",
            "serializable",
            "--sequential-keys",
            "-o",
            "edn",
        ],
        "t.txt",
        text,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("{:key 1, :scc #{nil 1}, :sources [:initial-state :sequential-keys]"),
        "{out}"
    );
}

#[test]
fn list_append_takes_the_options_as_elle_does() {
    // Elle's list-append takes no key options: its lists show the version
    // orders. The verdict is the same, and a note says why.
    let h = serial(&[
        (0, "[[:append :x 1]]"),
        (1, "[[:append :x 2]]"),
        (2, "[[:r :x [1]]]"),
    ]);
    let l = load_keyed(&h, LIN);
    assert!(
        l.notes.lines.iter().any(|n| n.contains("list-append")),
        "{:?}",
        l.notes.lines
    );
    for m in ["serializable", "strict-serializable"] {
        assert_eq!(verdict(&h, LIN, m), verdict(&h, NONE, m), "{m}");
    }
}

fn cli(args: &[&str], file: &str, text: &str) -> (i32, String) {
    support::run_on(file, text, args)
}

#[test]
fn the_command_line_takes_the_three_flags() {
    // One process: its order is real time's.
    let h = serial(&[(0, "[[:w :x 1]]"), (0, "[[:w :x 2]]"), (0, "[[:r :x 1]]")]);
    let (code, out) = cli(&["check", "-c", "serializable"], "k.edn", &h);
    assert_eq!(code, 0, "{out}");
    for flag in ["--linearizable-keys", "--sequential-keys"] {
        let (code, out) = cli(
            &["check", "-c", "serializable", flag, "-o", "edn"],
            "k.edn",
            &h,
        );
        assert_eq!(code, 1, "{flag}: {out}");
        assert!(out.contains(":cyclic-versions"), "{flag}: {out}");
    }
    let (code, out) = cli(&["check", "-c", "serializable", "--wfr-keys"], "k.edn", &h);
    assert_eq!(code, 0, "{out}");
    // stats says what the options infer: here a contradiction, whose
    // source is left out; with a read of 2, the order of the two writes.
    let (code, out) = cli(&["stats", "--linearizable-keys"], "k.edn", &h);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("inferred orders  0 (linearizable-keys), cyclic-versions 1"),
        "{out}"
    );
    let ok = h.replace("[[:r :x 1]]}", "[[:r :x 2]]}");
    let (code, out) = cli(
        &["stats", "--linearizable-keys", "--wfr-keys"],
        "k.edn",
        &ok,
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("inferred orders  1 (wfr-keys, linearizable-keys), cyclic-versions 0"),
        "{out}"
    );
}

#[test]
fn repeated_values_refuse_the_options_by_name() {
    // dbcop's format may write a value twice (x = 1 here): the options
    // order versions by value, so they are refused, as Elle refuses the
    // history.
    let hist = "[x:=1]\n[y:=5]\n---\n[y==5 x:=1]\n---\n[x==1 y==?]\n";
    let (code, _) = cli(&["check", "-c", "ser"], "dup.hist", hist);
    assert_eq!(code, 0);
    let (code, out) = cli(
        &["check", "-c", "ser", "--linearizable-keys"],
        "dup.hist",
        hist,
    );
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("--linearizable-keys") && out.contains("written more than once"),
        "{out}"
    );
}
