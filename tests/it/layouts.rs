//! The file layouts Jepsen and elle-cli write, read into the model: one op
//! map per line, a whole-file vector or list, records, comments and blank
//! lines between forms, completions only, nemesis ops, odd key orders.

use elle_si::history::model::{History, MopKind};
use elle_si::history::{LoadOptions, Status, Workload, load, load_bytes};

use crate::support;

/// Each transaction as `status process [f k v]...`, with list reads as
/// the lists they returned: what the model holds, in the input's terms.
fn txns(h: &History) -> Vec<String> {
    let list = h.workload == Some(Workload::ListAppend);
    h.txns
        .iter()
        .enumerate()
        .map(|(t, txn)| {
            let mut s = format!(
                "{} p{}",
                txn.status.keyword(),
                h.sessions[txn.session as usize].process
            );
            for (i, m) in h.txn_mops(t as u32).iter().enumerate() {
                let id = (txn.start as usize + i) as u32;
                let key = h.key_value(m.key);
                let v = match m.kind {
                    MopKind::Write => h.value(m.val).to_string(),
                    MopKind::Read if !list => h.value(m.val).to_string(),
                    MopKind::Read if txn.status != Status::Committed => "?".into(),
                    MopKind::Read => {
                        let items: Vec<String> = h
                            .read_list(id)
                            .iter()
                            .map(|&v| h.value(v).to_string())
                            .collect();
                        format!("[{}]", items.join(" "))
                    }
                };
                let f = match (m.kind, list) {
                    (MopKind::Write, true) => "append",
                    (MopKind::Write, false) => "w",
                    (MopKind::Read, _) => "r",
                };
                s.push_str(&format!(" [{f} {key} {v}]"));
            }
            s
        })
        .collect()
}

fn lines(h: &History) -> Vec<(Option<u32>, u32)> {
    h.txns
        .iter()
        .map(|t| (t.invoke.map(|p| p.line), t.complete.line))
        .collect()
}

const JEPSEN: &str = r#"{:type :invoke, :f :txn, :value [[:append 1 1] [:r 2 nil]], :time 10, :process 0, :index 0}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :time 11, :process 1, :index 1}
{:type :ok, :f :txn, :value [[:append 1 1] [:r 2 nil]], :time 20, :process 0, :index 2}
{:type :ok, :f :txn, :value [[:r 1 [1]]], :time 21, :process 1, :index 3}
{:type :invoke, :f :txn, :value [[:append 2 1] [:append 1 2]], :time 30, :process 0, :index 4}
{:type :fail, :f :txn, :value [[:append 2 1] [:append 1 2]], :time 31, :process 0, :index 5, :error [:aborted "conflict"]}
"#;

const JEPSEN_TXNS: [&str; 3] = [
    "ok p0 [append 1 1] [r 2 []]",
    "ok p1 [r 1 [1]]",
    "fail p0 [append 2 1] [append 1 2]",
];

#[test]
fn one_op_per_line() {
    let l = support::load_str("history.edn", JEPSEN);
    let h = &l.history;
    assert_eq!(h.workload, Some(Workload::ListAppend));
    assert_eq!(txns(h), JEPSEN_TXNS);
    assert_eq!(lines(h), [(Some(1), 3), (Some(2), 4), (Some(5), 6)]);
    let t = &h.txns[2];
    let (inv, done) = (t.invoke.expect("paired"), t.complete);
    assert_eq!((inv.index, inv.time, done.index, done.time), (4, 30, 5, 31));
    assert_eq!(h.stats.ops, 6);
    assert_eq!(h.stats.client_ops, 6);
    assert!(!h.stats.completions_only);
}

#[test]
fn whole_file_vector_and_list() {
    let ops: Vec<&str> = JEPSEN.lines().collect();
    let vector = format!("[{}]\n", ops.join(",\n "));
    let list = format!("({})", ops.join("\n"));
    let one_line = format!("[{}]", ops.join(" "));
    let spaced = format!("\n\n  [ \n{}\n ]  \n\n", ops.join("\n\n"));
    for (name, text) in [
        ("vector.edn", vector),
        ("list.edn", list),
        ("one-line.edn", one_line),
        ("spaced.edn", spaced),
    ] {
        let l = support::load_str(name, &text);
        assert_eq!(txns(&l.history), JEPSEN_TXNS, "{name}");
    }
    let l = support::load_str("one-line.edn", &format!("[{}]", ops.join(" ")));
    assert!(
        lines(&l.history)
            .iter()
            .all(|&(i, c)| i == Some(1) && c == 1)
    );
}

#[test]
fn comments_blank_lines_and_discards_between_forms() {
    let ops: Vec<&str> = JEPSEN.lines().collect();
    let text = format!(
        ";; Jepsen history\n\n{}\n; between\n\n{}\n#_{{:type :ok, :process 7, :value [[:append 9 9]]}}\n{} ; after\n{}\n#_ #_ {{:a 1}} {{:b 2}}\n{}\n{}\n;; end, no newline",
        ops[0], ops[1], ops[2], ops[3], ops[4], ops[5]
    );
    let l = support::load_str("commented.edn", &text);
    assert_eq!(txns(&l.history), JEPSEN_TXNS);
    assert_eq!(
        lines(&l.history),
        [(Some(3), 8), (Some(6), 9), (Some(11), 12)]
    );
    // In a vector too, with a discard last.
    let v = format!("[;; ops\n{}\n #_ {{:type :ok}}]", ops.join(",\n"));
    assert_eq!(txns(&support::load_str("v.edn", &v).history), JEPSEN_TXNS);
}

#[test]
fn crlf_line_endings() {
    let text = JEPSEN.replace('\n', "\r\n");
    let l = support::load_str("crlf.edn", &text);
    assert_eq!(txns(&l.history), JEPSEN_TXNS);
    assert_eq!(
        lines(&l.history),
        [(Some(1), 3), (Some(2), 4), (Some(5), 6)]
    );
}

#[test]
fn byte_order_mark_is_skipped() {
    let text = format!("\u{feff}{JEPSEN}");
    assert_eq!(
        txns(&support::load_str("bom.edn", &text).history),
        JEPSEN_TXNS
    );
}

#[test]
fn jepsen_history_op_records() {
    let text: String = JEPSEN
        .lines()
        .map(|l| format!("#jepsen.history.Op{l}\n"))
        .collect();
    assert_eq!(
        txns(&support::load_str("records.edn", &text).history),
        JEPSEN_TXNS
    );
    let v = format!(
        "[{}]",
        JEPSEN
            .lines()
            .map(|l| format!("#jepsen.history.Op {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(
        txns(&support::load_str("records-vector.edn", &v).history),
        JEPSEN_TXNS
    );
}

#[test]
fn completions_only() {
    // elle-cli's and C4's logs: no invocations; each op stands alone.
    let text = r#"{:index 0, :time 0, :type :ok, :process 0, :f :txn, :value [[:append :x 1] [:r :y [1]]]}
{:index 1, :time 1, :type :ok, :process 1, :f :txn, :value [[:append :y 1] [:r :x [1]]]}
{:index 2, :time 2, :type :fail, :process 1, :f :txn, :value [[:append :x 2]]}
"#;
    let l = support::load_str("c4.edn", text);
    assert!(l.history.stats.completions_only);
    assert_eq!(
        txns(&l.history),
        [
            "ok p0 [append :x 1] [r :y [1]]",
            "ok p1 [append :y 1] [r :x [1]]",
            "fail p1 [append :x 2]",
        ]
    );
    assert!(l.history.txns.iter().all(|t| t.invoke.is_none()));
}

#[test]
fn nemesis_ops_info_and_dangling_invocations() {
    let text = r#"{:type :info, :f :start-partition, :value :primaries, :process :nemesis, :time 1}
{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0, :time 2}
{:type :info, :f :start-partition, :value {"n1" #{"n2" "n3"}, "n2" #{"n1"}}, :process :nemesis, :time 3}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :time 4}
{:type :info, :f :txn, :value nil, :process 0, :time 5, :error :timeout}
{:type :invoke, :f :txn, :value [[:append 1 2] [:r 1 nil]], :process 2, :time 6}
{:type :ok, :f :txn, :value [[:r 1 [1]]], :process 1, :time 7}
"#;
    let l = support::load_str("nemesis.edn", text);
    let h = &l.history;
    assert_eq!(h.stats.ops, 7);
    assert_eq!(h.stats.skipped_ops, 2);
    assert_eq!(h.stats.dangling_invokes, 1);
    // The :info completion with :value nil takes the invocation's
    // micro-ops; process 2 never completed: indeterminate, at its line.
    assert_eq!(
        txns(h),
        [
            "info p0 [append 1 1]",
            "ok p1 [r 1 [1]]",
            "info p2 [append 1 2] [r 1 ?]"
        ]
    );
    assert_eq!(lines(h), [(Some(2), 5), (Some(4), 7), (Some(6), 6)]);
}

#[test]
fn any_key_order_extra_keys_and_string_functions() {
    let text = r#"{:process 0, :value [["append" "k" "a"] ["r" "j" nil]], :f "txn", :index 0, :type :invoke}
{:debug {:attempts [1 2 {:x #{:y}}], :node "n1"}, :value [["append" "k" "a"] ["r" "j" []]], :type :ok, :process 0, :f "txn", :index 1, :time 5}
"#;
    let l = support::load_str("odd.edn", text);
    assert_eq!(
        txns(&l.history),
        ["ok p0 [append \"k\" \"a\"] [r \"j\" []]"]
    );
}

#[test]
fn register_histories() {
    let text = r#"[{:type :invoke, :f :txn, :value [[:w :x 1] [:r :y nil]], :process 0}
 {:type :ok, :f :txn, :value [[:w :x 1] [:r :y nil]], :process 0}
 {:type :invoke, :f :txn, :value [[:r :x nil] [:w :y 2]], :process 1}
 {:type :ok, :f :txn, :value [[:r :x 1] [:w :y 2]], :process 1}]"#;
    let l = support::load_str("register.edn", text);
    assert_eq!(l.history.workload, Some(Workload::RwRegister));
    assert_eq!(
        txns(&l.history),
        ["ok p0 [w :x 1] [r :y nil]", "ok p1 [r :x 1] [w :y 2]"]
    );
}

#[test]
fn bigint_and_keyword_values() {
    let text = r#"{:type :ok, :process 0, :f :txn, :value [[:append 99999999999999999999 1N] [:append :k -3] [:r 99999999999999999999 [1N]]]}
"#;
    // 1N is the integer 1 (Clojure's `(= 1 1N)`), and shows as one.
    assert_eq!(
        txns(&support::load_str("big.edn", text).history),
        ["ok p0 [append 99999999999999999999N 1] [append :k -3] [r 99999999999999999999N [1]]"]
    );
}

#[test]
fn empty_and_comment_only_files() {
    // An empty file is refused (bad input), unless it is a Jepsen store's
    // history: a run that recorded nothing. So is one of no op at all:
    // comments alone, an empty vector or list.
    for (name, text) in [
        ("empty.edn", ""),
        ("blank.edn", "\n\n  \n"),
        ("comments.edn", ";; nothing\n; here\n"),
        ("empty-vector.edn", "[]\n"),
        ("empty-list.edn", " ( ) "),
    ] {
        let e = load_bytes(name, text.as_bytes().to_vec(), LoadOptions::default())
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some(format!("{name}: empty history: the file holds no ops").as_str())
        );
        let l = support::load_str("store/run/history.edn", text);
        assert_eq!(l.history.txns.len(), 0, "{name}");
        assert_eq!(l.history.stats.ops, 0, "{name}");
    }
}

#[test]
fn memory_mapped_files() {
    let dir = std::env::temp_dir().join(format!("elle-si-layouts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let path = dir.join("history.edn");
    std::fs::write(&path, JEPSEN).expect("writing");
    let empty = dir.join("empty.edn");
    std::fs::write(&empty, "").expect("writing");
    let l = load(&path, LoadOptions::default(), None);
    let e = load(&empty, LoadOptions::default(), None);
    let _ = std::fs::remove_dir_all(&dir);
    let l = l.expect("loading a mapped file");
    assert_eq!(txns(&l.history), JEPSEN_TXNS);
    assert_eq!(l.source.bytes(), JEPSEN.as_bytes());
    assert!(
        e.err().is_some_and(|e| e
            .to_string()
            .ends_with("empty history: the file holds no ops")),
        "an empty file is bad input"
    );
}
