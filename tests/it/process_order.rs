//! Indeterminate ops never order a process (issue 53): an `:info`
//! transaction may take effect after whatever its process does next, so
//! nothing after it is ordered after it. It ends its process's session, as
//! Jepsen retires a process whose op timed out (its next ops come from a
//! new process number); what the process does next is a session of its
//! own. The logs are hand-written.

use elle_si::report::Valid;

use crate::support;

/// Process 0 appends 1 (`:info`, yet read: it took effect), then appends 2
/// (`:ok`); a read sees `[2 1]`. Only a process edge from the `:info` op
/// to the later one contradicts that: it was a G0-process at every session
/// level.
#[test]
fn an_info_op_orders_nothing_after_it() {
    let path = crate::support::root().join("test-logs/values/la-info-then-ok.edn");
    let l = support::load(&path);
    let h = &l.history;
    // The :info transaction ends its session; the :ok one after it begins
    // another, of the same process.
    assert_eq!(h.sessions.len(), 3, "{:?}", h.sessions);
    assert_eq!(h.sessions[0].process, h.sessions[1].process);
    for m in [
        "read-committed",
        "causal-cerone",
        "strong-session-snapshot-isolation",
        "strong-session-serializable",
        "strict-serializable",
    ] {
        let (v, types) = support::verdict(&l, m);
        assert_eq!(v, Valid::True, "{m}: {types:?}");
    }
}

/// What came before an `:info` op still orders it: process 0 appends 1
/// (`:ok`), then appends 2 (`:info`, and read: it took effect); a read of
/// `[2 1]` puts the `:info` append first, against the process's order, a
/// G0-process at strong session SI and fine at plain SI.
#[test]
fn an_info_op_follows_what_its_process_did_before() {
    let text = "\
{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append 1 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0, :index 2}
{:type :info, :f :txn, :value [[:append 1 2]], :process 0, :index 3}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :index 4}
{:type :ok, :f :txn, :value [[:r 1 [2 1]]], :process 1, :index 5}
";
    let l = support::load_str("before-info.edn", text);
    let (v, _) = support::verdict(&l, "snapshot-isolation");
    assert_eq!(v, Valid::True);
    let (v, types) = support::verdict(&l, "strong-session-snapshot-isolation");
    assert_eq!(v, Valid::False);
    assert!(types.iter().any(|t| t == "G0-process"), "{types:?}");
}
