//! Narrowing the writers a read may have observed (reads of a value
//! written more than once, [`History::candidates`]) to those some valid
//! order allows, before the hyper-polygraph is built.
//!
//! Two rules, each on dependencies known before any write order (session
//! order, real time where the variant keeps them, and the write-read
//! edges of reads with one possible writer), so each holds under SI and
//! serializability alike:
//! - a read of `r` cannot have observed `w` when `r` reaches `w`: the
//!   write-read step `w -> r` would close a cycle of dependencies;
//! - nor when another writer `x` of the key lies on a path `w ->* x ->* r`:
//!   `x`'s version follows `w`'s (the other order closes a cycle), so `r`
//!   reading `w` has an anti-dependency on `x`, which closes a cycle with
//!   one anti-dependency, forbidden by both.
//!
//! A read left with one writer is a plain read of it, whose write-read
//! edge may narrow others: the rules run again to a fixpoint. Sound and
//! complete: every choice dropped is one no valid order makes, so the
//! narrowed history satisfies the variant exactly when the history does.
//! A read that would be left with none keeps its writers (the solver then
//! finds the violation). VeriStrong (VLDB 2026) prunes its
//! hyper-polygraph's choices likewise before solving.
//!
//! Data flow: session-order, real-time and certain write-read edges ->
//! vector clocks ([`DepClock`], exact since session order makes each
//! session a chain; so only the variants that keep sessions narrow) ->
//! per read, per candidate, the two rules (each key's writers by session,
//! the last one reaching the reader per session) -> the narrowed
//! candidates, again until nothing changes.

use crate::check::tuning::NARROW_ROUNDS;
use rustc_hash::FxHashMap;

use super::polygraph::{DepClock, SplitScratch, Variant, final_writes};
use crate::check::budget::Budget;
use crate::check::deps::{included, realtime_edges, so_edges, wr_edges_of};
use crate::history::model::*;

/// A history whose reads have fewer possible writers, and how many
/// (read, writer) choices there were before and are left on the reads
/// that still have several writers (every read in [`History::candidates`]
/// counted).
pub(super) struct Narrowed {
    pub history: History,
    pub before: usize,
    pub after: usize,
}

/// `h` narrowed for `variant` (see the module doc); None when it has no
/// reads with several writers, the variant keeps no session order, nothing
/// narrows, or the known dependencies close a cycle (at the start, or
/// once the reads left with one writer add theirs: then the history
/// violates the variant, and its own check says how), or past `budget`
/// (narrowing only saves the check work; the check then stops at once).
pub(super) fn narrow(h: &History, variant: Variant, budget: Budget) -> Option<Narrowed> {
    if h.candidates.is_empty() || !variant.session {
        return None;
    }
    let inc = included(h);
    let mut fixed = so_edges(h, &inc);
    if variant.realtime {
        fixed.extend(realtime_edges(h, &inc));
    }
    let writes = final_writes(h, &inc, None);
    let count = |c: &FxHashMap<MopId, Vec<MopId>>| c.values().map(Vec::len).sum::<usize>();
    let before = count(&h.candidates);
    let mut n = h.clone();
    // The reads with several writers, by key, in a fixed order.
    let mut reads: Vec<MopId> = n.candidates.keys().copied().collect();
    reads.sort_unstable_by_key(|&r| (n.mops[r as usize].key, r));
    let mut scratch = SplitScratch::default();
    let mut changed = false;
    for _ in 0..NARROW_ROUNDS {
        if budget.expired() {
            return None;
        }
        let mut edges = fixed.clone();
        // Write-read edges of the reads with one possible writer.
        edges.extend(wr_edges_of(&n, &inc, |i| {
            !n.candidates.contains_key(&(i as MopId))
        }));
        let clock = DepClock::from_edges(&n, &inc, &edges)?;
        let mut narrowed = false;
        let mut key = None;
        for (at, &i) in reads.iter().enumerate() {
            if at % 1024 == 0 && budget.expired() {
                return None;
            }
            let m = n.mops[i as usize];
            let Some(cands) = n.candidates.get(&i) else {
                continue;
            };
            let ws = writes.get(m.key);
            if key != Some(m.key) {
                clock.by_session(ws, &mut scratch);
                key = Some(m.key);
            }
            let r = m.txn;
            let keep: Vec<MopId> = cands
                .iter()
                .copied()
                .filter(|&c| {
                    let w = n.txn_of(c);
                    !clock.reaches(r, w) && !clock.writer_between(ws, &scratch, w, r)
                })
                .collect();
            if keep.is_empty() || keep.len() == cands.len() {
                continue;
            }
            narrowed = true;
            if let [only] = keep[..] {
                n.mops[i as usize].from = only;
                n.candidates.remove(&i);
            } else {
                n.candidates.insert(i, keep);
            }
        }
        if !narrowed {
            break;
        }
        changed = true;
        reads.retain(|r| n.candidates.contains_key(r));
    }
    let after = count(&n.candidates);
    changed.then_some(Narrowed {
        history: n,
        before,
        after,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Rng, SER, SSI, load, random_history, resolutions, valid};
    use super::*;

    #[test]
    fn a_writer_the_reader_reaches_or_one_overwritten_on_the_way_is_dropped() {
        // Transactions 0, 1 (session 1), 2, 3, 4 (session 2), 5 (session
        // 3). Session 1 reads x == 1 before writing it: its own later
        // write is no choice. Session 2 writes x = 1, then x = 2, then
        // y = 1, which session 3 reads before x == 1: x = 2 lies between
        // session 2's x = 1 and session 3's read.
        let h =
            load("[x==1]\n[x:=1]\n---\n[x:=1]\n[x:=2]\n[y:=1]\n---\n[y==1 x==1]\n").expect("loads");
        let x = h.mops[0].key;
        assert_eq!(h.candidates.len(), 2);
        for v in [SER, SSI] {
            let n = narrow(&h, v, Budget::NONE).expect("narrows");
            // Reader 0 keeps session 2's write; reader 5 session 1's.
            let mut left: Vec<Vec<TxnId>> = n
                .history
                .mops
                .iter()
                .enumerate()
                .filter(|(_, m)| m.is_read() && m.key == x)
                .map(|(i, m)| match n.history.candidates.get(&(i as MopId)) {
                    Some(c) => c.iter().map(|&w| n.history.txn_of(w)).collect(),
                    None => vec![n.history.txn_of(m.from)],
                })
                .collect();
            left.sort();
            assert_eq!(left, vec![vec![1], vec![2]], "{v:?}");
            assert_eq!((n.before, n.after), (4, 0), "{v:?}");
            assert!(n.history.candidates.is_empty());
            // Without session order nothing is known: not narrowed.
            assert!(narrow(&h, super::super::tests::PLAIN_SI, Budget::NONE).is_none());
        }
    }

    #[test]
    fn a_read_no_writer_is_left_to_keeps_them_all() {
        // Session 1 reads x == 1 and then writes it; session 2 writes x = 1
        // after reading y == 1, which session 1 wrote after its read: the
        // reader reaches both writers, so both are kept, and the solver
        // finds the violation.
        let h = load("[x==1]\n[x:=1 y:=1]\n---\n[y==1]\n[x:=1]\n").expect("loads");
        assert_eq!(h.candidates.len(), 1);
        assert!(narrow(&h, SER, Budget::NONE).is_none());
        assert!(!valid(&h, SER));
    }

    #[test]
    fn narrowing_keeps_every_verdict_of_every_resolution() {
        // Random small histories with repeated writes: the narrowed
        // history is valid exactly when some way of resolving the
        // original's reads is (checked alone, each read with one writer).
        let mut r = Rng(0x51_7cc1_b727_220a);
        let (mut narrowed, mut verdicts) = (0, [0usize; 2]);
        for _ in 0..600 {
            let text = random_history(&mut r);
            let Some(h) = load(&text) else { continue };
            for v in [SER, SSI] {
                let Some(n) = narrow(&h, v, Budget::NONE) else {
                    continue;
                };
                narrowed += 1;
                assert!(n.after < n.before);
                let alone = resolutions(&h);
                let some = alone.iter().any(|x| valid(x, v));
                let o = super::super::plan::given(
                    &n.history,
                    v,
                    Budget::NONE,
                    super::super::Telling::FULL,
                    &[],
                );
                assert!(!o.timed_out);
                assert_eq!(o.anomalies.is_empty(), some, "{v:?}\n{text}");
                verdicts[usize::from(some)] += 1;
            }
        }
        assert!(narrowed >= 40, "{narrowed}");
        assert!(verdicts[0] > 5 && verdicts[1] > 5, "{verdicts:?}");
    }
}
