//! List appends no read observed, at the causal levels. A list read shows
//! every append ordered before its last element, so an append that no read
//! shows follows the last element any read shows: the writer of that
//! element precedes the unread append's writer. Among unread appends the
//! order is unknown, and none may be claimed.

use elle_si::report::Valid;

use crate::support::*;

const ALL: &[&str] = &[
    "rc-c4", "ssrc-c4", "ra", "tcc", "si", "ssi", "ser", "strict",
];

fn expect(text: &str, verdicts: &[(&str, Valid)]) {
    let l = load_str("unread.edn", text);
    for &(m, v) in verdicts {
        let r = check_models(&l, m);
        assert_eq!(r.valid, v, "{m}: {:?} {:?}", r.anomaly_types, patterns(&r));
    }
}

/// T1 appends 1 to key 1; T2 appends 2 to key 1 and 1 to key 2; T3 reads
/// key 1 as [1], then key 2 as [1] (T2's). Nobody reads T2's append to
/// key 1, so it follows T1's: T1 ww T2. T3 read from T2, so at read atomic
/// T2 is visible to T3's whole snapshot, and T3's read of key 1 had to see
/// T2's append: a fractured read, through reads alone (no session order),
/// so snapshot isolation rejects it too. Read committed sees only what T3
/// read before: its read of key 1 came first, so it allows it.
const STALE_UNREAD: &str = "\
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append 1 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:append 1 2] [:append 2 1]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:append 1 2] [:append 2 1]]}
{:index 4, :type :invoke, :process 2, :f :txn, :value [[:r 1 nil] [:r 2 nil]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r 1 [1]] [:r 2 [1]]]}
";

#[test]
fn stale_read_of_an_unread_append_is_rejected_at_read_atomic_and_causal() {
    expect(
        STALE_UNREAD,
        &[
            ("rc-c4", Valid::True),
            ("ssrc-c4", Valid::True),
            ("ra", Valid::False),
            ("tcc", Valid::False),
            ("si", Valid::False),
        ],
    );
    // Found through reads alone: it rules out Elle's sessionless snapshot
    // isolation as well.
    let l = load_str("unread.edn", STALE_UNREAD);
    let r = check_models(&l, "ra");
    assert!(
        r.not.contains("read-atomic") && r.also_not.contains("snapshot-isolation"),
        "{:?} {:?}",
        r.not,
        r.also_not
    );
}

/// As above, but T3 reads key 2 first: T2 is then visible to the later
/// read of key 1 by an earlier read, which read committed forbids too.
#[test]
fn stale_read_after_reading_the_unread_appender_is_rejected_at_read_committed() {
    let text = STALE_UNREAD.replace("[[:r 1 [1]] [:r 2 [1]]]", "[[:r 2 [1]] [:r 1 [1]]]");
    let text = text.replace("[[:r 1 nil] [:r 2 nil]]", "[[:r 2 nil] [:r 1 nil]]");
    expect(
        &text,
        &[
            ("rc-c4", Valid::False),
            ("ssrc-c4", Valid::False),
            ("ra", Valid::False),
            ("tcc", Valid::False),
        ],
    );
}

/// Four appends to key 1 that no read shows (C, D, E, F, in the file's
/// order), after A's 0, which B read. D read C's key 2 and E read F's key
/// 3, so C precedes D and F precedes E. Chaining the unread appends in
/// the file's order would put E before F; in the reverse order, D before
/// C: either way a cycle with a read. They only follow A's 0, in an order
/// nobody saw, and A B C D F E is a serial order every level accepts
/// (all run concurrently, so real time orders none of them).
const UNREAD_UNORDERED: &str = "\
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 1 0]]}
{:index 1, :type :invoke, :process 1, :f :txn, :value [[:r 1 nil]]}
{:index 2, :type :invoke, :process 2, :f :txn, :value [[:append 1 1] [:append 2 1]]}
{:index 3, :type :invoke, :process 3, :f :txn, :value [[:r 2 nil] [:append 1 2]]}
{:index 4, :type :invoke, :process 4, :f :txn, :value [[:r 3 nil] [:append 1 3]]}
{:index 5, :type :invoke, :process 5, :f :txn, :value [[:append 3 1] [:append 1 4]]}
{:index 6, :type :ok, :process 0, :f :txn, :value [[:append 1 0]]}
{:index 7, :type :ok, :process 1, :f :txn, :value [[:r 1 [0]]]}
{:index 8, :type :ok, :process 2, :f :txn, :value [[:append 1 1] [:append 2 1]]}
{:index 9, :type :ok, :process 3, :f :txn, :value [[:r 2 [1]] [:append 1 2]]}
{:index 10, :type :ok, :process 4, :f :txn, :value [[:r 3 [1]] [:append 1 3]]}
{:index 11, :type :ok, :process 5, :f :txn, :value [[:append 3 1] [:append 1 4]]}
";

#[test]
fn no_order_is_invented_among_unread_appends() {
    let v: Vec<(&str, Valid)> = ALL.iter().map(|&m| (m, Valid::True)).collect();
    expect(UNREAD_UNORDERED, &v);
}

/// A session reads key 1 as [1], then appends 2 that nobody reads: the
/// unread append follows the read version, as session order has it.
/// Accepted everywhere. Swapping the two transactions makes the read a
/// stale one of the session's own earlier append (rejected at read atomic
/// and up, but not at Elle's sessionless levels).
const UNREAD_AFTER_READ: &str = "\
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append 1 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r 1 nil]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:r 1 [1]]]}
{:index 4, :type :invoke, :process 1, :f :txn, :value [[:append 1 2]]}
{:index 5, :type :ok, :process 1, :f :txn, :value [[:append 1 2]]}
";

#[test]
fn unread_append_after_a_read_in_its_session_is_accepted_everywhere() {
    let v: Vec<(&str, Valid)> = ALL.iter().map(|&m| (m, Valid::True)).collect();
    expect(UNREAD_AFTER_READ, &v);
}

#[test]
fn unread_append_before_a_stale_read_in_its_session_is_rejected_with_sessions() {
    let lines: Vec<&str> = UNREAD_AFTER_READ.lines().collect();
    let swapped = [lines[0], lines[1], lines[4], lines[5], lines[2], lines[3]]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let rest = &l[l.find(',').unwrap_or(0)..];
            format!("{{:index {i}{rest}\n")
        })
        .collect::<String>();
    expect(
        &swapped,
        &[
            ("rc-c4", Valid::True),
            ("ra", Valid::False),
            ("tcc", Valid::False),
            ("ssi", Valid::False),
            ("si", Valid::True),
            ("ser", Valid::True),
        ],
    );
    // The violation needs session order: it claims nothing of the
    // sessionless models.
    let l = load_str("unread.edn", &swapped);
    let r = check_models(&l, "tcc");
    for m in ["snapshot-isolation", "serializable", "read-committed-c4"] {
        assert!(
            !r.not.contains(m) && !r.also_not.contains(m),
            "{m}: {:?} {:?}",
            r.not,
            r.also_not
        );
    }
}
