//! Indeterminate ops never order a process (issue 53): Elle orders a
//! process by its `:ok` ops alone (`elle.graph/process-graph`), so an op
//! after an `:info` on the same process follows the process's earlier
//! `:ok` ops, never the `:info`. The log is hand-written, in
//! `test-logs/values/`.

mod common;

use std::path::PathBuf;

use elle_si::history::Status;
use elle_si::report::Valid;

/// Process 0 appends 1 (`:info`, yet read: it took effect), then appends 2
/// (`:ok`); a read sees `[2 1]`. The `:info` append came after the `:ok`
/// one, which only a process edge from the `:info` op contradicts: that
/// was a G0-process at every session level.
#[test]
fn an_info_op_orders_nothing_in_its_process() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("test-logs/values/la-info-then-ok.edn");
    let l = common::load(&path);
    let h = &l.history;
    // The :info transaction is in no session with another.
    for s in &h.sessions {
        if s.txns
            .iter()
            .any(|&t| h.txns[t as usize].status == Status::Indeterminate)
        {
            assert_eq!(s.txns.len(), 1, "{s:?}");
        }
    }
    for m in [
        "read-committed",
        "causal-cerone",
        "strong-session-snapshot-isolation",
        "strong-session-serializable",
        "strict-serializable",
    ] {
        let (v, types) = common::verdict(&l, m);
        assert_eq!(v, Valid::True, "{m}: {types:?}");
    }
}

/// An `:ok` op after an `:info` still follows the process's earlier `:ok`
/// ops: process 0 appends 1 (`:ok`), times out (`:info`, unread), appends
/// 2 (`:ok`); a read of `[2 1]` contradicts the process's order, a
/// G0-process at strong session SI, and fine at plain SI.
#[test]
fn ok_ops_around_an_info_stay_in_order() {
    let text = "\
{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append 1 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:append 2 1]], :process 0, :index 2}
{:type :info, :f :txn, :value [[:append 2 1]], :process 0, :index 3}
{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0, :index 4}
{:type :ok, :f :txn, :value [[:append 1 2]], :process 0, :index 5}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :index 6}
{:type :ok, :f :txn, :value [[:r 1 [2 1]]], :process 1, :index 7}
";
    let l = common::load_str("around-info.edn", text);
    let (v, _) = common::verdict(&l, "snapshot-isolation");
    assert_eq!(v, Valid::True);
    let (v, types) = common::verdict(&l, "strong-session-snapshot-isolation");
    assert_eq!(v, Valid::False);
    assert!(types.iter().any(|t| t == "G0-process"), "{types:?}");
}
