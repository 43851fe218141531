//! Valid first: a guessed version order as a witness. Each key's writers
//! are put in the order they most likely committed (completion, or the
//! file's order where sessions interleave); the dependency graph that
//! order implies (write-read, the guessed write-write steps, each read's
//! anti-dependency on the next writer, and session order and real time
//! where the variant has them) is then checked for a cycle, in G2 for SI.
//! None: the history satisfies the variant, whatever the polygraph would
//! say of other orders (the order is one of its solutions). A cycle proves
//! nothing (another order may avoid it), and the check goes on.
//!
//! Why. Without session order the whole polygraph of a large history holds
//! a constraint for nearly every pair of writers of a hot key (262,144
//! causal-store transactions: tens of millions of pairs), while the order
//! the writes were logged in is, for most histories, one that works. The
//! check is linear in micro-ops: a few arrays per transaction and one edge
//! per read and per write.
//!
//! Where. rw-register histories whose reads each name one writer (no
//! dbcop duplicates: those are the polygraph's choices) and whose order
//! can be guessed ([`super::solve::time_keys`]); list-append histories
//! reveal their version orders and need no guess.

use super::polygraph::{Edge, EdgeKind, Variant};
use super::solve::time_keys;
use crate::check::deps::{included, realtime_edges, so_edges};
use crate::check::graph::{Digraph, sccs, shortest_path, topo_order};
use crate::history::model::*;

/// What the guessed order showed.
pub(super) enum Guess {
    /// No guess applies (list-append, dbcop duplicates, no time order).
    None,
    /// The history satisfies the variant with every key in the guessed
    /// order.
    Holds,
    /// The guessed order closes cycles; the keys whose guessed steps lie
    /// on one are released (`true`), and the guess is kept for the rest,
    /// each key's writers in the order of `when`.
    Release { keys: Vec<bool>, when: Vec<u64> },
}

/// The history's guessed order, checked for the variant.
pub(super) fn guess(h: &History, variant: Variant) -> Guess {
    let Some(gg) = Guessed::new(h, variant) else {
        return Guess::None;
    };
    let dg = Digraph::from_edges(gg.nodes, &gg.g2);
    if topo_order(&dg, &gg.mask).is_some() {
        return Guess::Holds;
    }
    let comps = sccs(&dg);
    let mut released = vec![false; h.keys.len()];
    for ((&(u, v), &x), &guessed) in gg.g2.iter().zip(&gg.keys).zip(&gg.guessed) {
        if guessed
            && comps.comp[u as usize] == comps.comp[v as usize]
            && let Some(r) = released.get_mut(x as usize)
        {
            *r = true;
        }
    }
    Guess::Release {
        keys: released,
        when: gg.when,
    }
}

/// Short cycles the guessed order closes, at most `most` of them, fewest
/// keys first: each as its keys (ascending) and one of its transactions.
/// They are where a violation most likely lies (a guessed step on the
/// cycle may be wrong, so each is a place to look, no more). Each is the
/// shortest cycle through one guessed step among transactions within
/// `span` places of the step's in time order (violations are local in
/// time, and this bounds each search), the steps taken evenly over the
/// history.
pub(super) fn suspects(
    h: &History,
    variant: Variant,
    most: usize,
    span: usize,
) -> Vec<(Vec<KeyId>, TxnId)> {
    let Some(gg) = Guessed::new(h, variant) else {
        return Vec::new();
    };
    let dg = Digraph::from_edges(gg.nodes, &gg.g2);
    let comps = sccs(&dg);
    // Each transaction's place in time order.
    let mut by_time: Vec<TxnId> = (0..h.txns.len() as TxnId).collect();
    by_time.sort_by_key(|&t| (gg.when[t as usize], t));
    let mut place = vec![0usize; h.txns.len()];
    for (i, &t) in by_time.iter().enumerate() {
        place[t as usize] = i;
    }
    let txn = |node: u32| if variant.serializable { node } else { node / 2 } as usize;
    let on_cycle: Vec<usize> = (0..gg.g2.len())
        .filter(|&i| {
            let (u, v) = gg.g2[i];
            gg.guessed[i] && u != v && comps.comp[u as usize] == comps.comp[v as usize]
        })
        .collect();
    // Every data edge's key, by its ends.
    let mut keyed: Vec<(u32, u32, KeyId)> = gg
        .g2
        .iter()
        .zip(&gg.keys)
        .filter(|&(_, &x)| x != KeyId::MAX)
        .map(|(&(u, v), &x)| (u, v, x))
        .collect();
    keyed.sort_unstable();
    let mut out: Vec<(Vec<KeyId>, TxnId)> = Vec::new();
    let mut seen: rustc_hash::FxHashSet<Vec<KeyId>> = rustc_hash::FxHashSet::default();
    let stride = (on_cycle.len() / most.max(1)).max(1);
    for &i in on_cycle.iter().step_by(stride).take(most) {
        let (u, v) = gg.g2[i];
        let c = comps.comp[u as usize];
        let at = place[txn(u)];
        let near = |w: u32| comps.comp[w as usize] == c && place[txn(w)].abs_diff(at) <= span;
        let Some(path) = shortest_path(&dg, v, u, near) else {
            continue;
        };
        let mut ks: Vec<KeyId> = vec![gg.keys[i]];
        for w in path.windows(2) {
            let lo = keyed.partition_point(|e| (e.0, e.1) < (w[0], w[1]));
            ks.extend(
                keyed[lo..]
                    .iter()
                    .take_while(|e| (e.0, e.1) == (w[0], w[1]))
                    .map(|e| e.2),
            );
        }
        ks.sort_unstable();
        ks.dedup();
        if seen.insert(ks.clone()) {
            out.push((ks, txn(u) as TxnId));
        }
    }
    out.sort_by_key(|(ks, _)| ks.len());
    out
}

/// The dependency graph a guessed version order implies, in G2.
struct Guessed {
    nodes: usize,
    /// The G2 nodes of included transactions.
    mask: Vec<bool>,
    g2: Vec<(u32, u32)>,
    /// Each edge's key (`KeyId::MAX` for session order and real time).
    keys: Vec<KeyId>,
    /// Whether the edge rests on the guess (a write-write step or an
    /// anti-dependency on the guessed next writer).
    guessed: Vec<bool>,
    /// The guessed time of each transaction.
    when: Vec<u64>,
}

impl Guessed {
    fn new(h: &History, variant: Variant) -> Option<Guessed> {
        if h.workload == Some(Workload::ListAppend)
            || !h.orders.is_empty()
            || !h.candidates.is_empty()
        {
            return None;
        }
        let when = time_keys(h)?;
        let inc = included(h);
        let n = h.txns.len();
        let edge = |a: TxnId, b: TxnId, kind: EdgeKind, key: KeyId| Edge {
            a,
            b,
            kind,
            key,
            va: Val::NIL,
            vb: Val::NIL,
        };
        let mut g2: Vec<(u32, u32)> = Vec::with_capacity(2 * h.mops.len());
        let mut keys: Vec<KeyId> = Vec::with_capacity(2 * h.mops.len());
        let mut guessed: Vec<bool> = Vec::with_capacity(2 * h.mops.len());
        let mut add = |e: Edge, data: bool, guess: bool| {
            variant.g2_edges(&e, &mut g2);
            keys.resize(g2.len(), if data { e.key } else { KeyId::MAX });
            guessed.resize(g2.len(), guess);
        };
        if variant.session {
            for (a, b) in so_edges(h, &inc) {
                add(edge(a, b, EdgeKind::Process, 0), false, false);
            }
        }
        if variant.realtime {
            for (a, b) in realtime_edges(h, &inc) {
                add(edge(a, b, EdgeKind::Realtime, 0), false, false);
            }
        }
        // Final writes (key, when, writer) and external reads (key, writer
        // or `TxnId::MAX` for the initial state, reader).
        let mut writes: Vec<(KeyId, u64, TxnId)> = Vec::new();
        let mut reads: Vec<(KeyId, TxnId, TxnId)> = Vec::new();
        for (t, txn) in h.txns.iter().enumerate() {
            if !inc[t] {
                continue;
            }
            let t = t as TxnId;
            let committed = txn.status == Status::Committed;
            for m in &h.mops[txn.mops()] {
                if m.is_write() && m.has(flag::FINAL) {
                    writes.push((m.key, when[t as usize], t));
                } else if committed && m.is_read() && m.has(flag::EXTERNAL) {
                    if m.from == from::INITIAL {
                        reads.push((m.key, TxnId::MAX, t));
                    } else if let Some(w) = m.observed() {
                        let src = h.txn_of(w);
                        if src != t
                            && h.txns[src as usize].status != Status::Aborted
                            && inc[src as usize]
                        {
                            add(edge(src, t, EdgeKind::Wr, m.key), true, false);
                            reads.push((m.key, src, t));
                        }
                    }
                }
            }
        }
        writes.sort_unstable();
        reads.sort_unstable();
        // Each writer's successor on each key, found by (key, writer).
        let mut next: Vec<(KeyId, TxnId, TxnId)> = Vec::with_capacity(writes.len());
        for (i, &(x, _, a)) in writes.iter().enumerate() {
            if i == 0 || writes[i - 1].0 != x {
                // The initial state's successor.
                next.push((x, TxnId::MAX, a));
            }
            if let Some(&(y, _, b)) = writes.get(i + 1)
                && y == x
            {
                add(edge(a, b, EdgeKind::Ww, x), true, true);
                next.push((x, a, b));
            }
        }
        next.sort_unstable();
        for &(x, w, r) in &reads {
            if let Ok(i) = next.binary_search_by(|p| (p.0, p.1).cmp(&(x, w)))
                && next[i].2 != r
            {
                add(edge(r, next[i].2, EdgeKind::Rw, x), true, true);
            }
        }
        let nodes = variant.g2_nodes(n);
        let mask: Vec<bool> = (0..nodes)
            .map(|v| inc[if variant.serializable { v } else { v / 2 }])
            .collect();
        Some(Guessed {
            nodes,
            mask,
            g2,
            keys,
            guessed,
            when,
        })
    }
}

/// Most unordered writer pairs of the released keys.
pub(super) const MAX_RELEASED_PAIRS: usize = 2_000_000;

/// Most time the released keys' solving may take.
pub(super) const TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// The guess is kept only where at most one key in this many is released:
/// beyond that the released keys hold most of the pairs the whole
/// polygraph would, and solving them is no cheaper (measured: 16,384
/// causal-store transactions release 98% of their keys).
pub(super) const RELEASED_SHARE: usize = 10;

#[cfg(test)]
mod tests {
    use super::super::tests::{PLAIN_SER as SER, PLAIN_SI as SI, load_text};
    use super::*;

    #[test]
    fn the_logged_order_witnesses_a_serial_run() {
        // Sessions take turns; each reads what the one before wrote.
        let h = load_text(
            "w(1,1,0,1)\nr(1,1,1,2)\nw(2,1,1,2)\nr(2,1,0,3)\nw(1,2,0,3)\nr(1,2,1,4)\n\
             w(2,2,1,4)\nr(2,2,0,5)\nw(1,3,0,5)\nr(1,3,1,6)\nw(2,3,1,6)\n",
        );
        assert!(matches!(guess(&h, SER), Guess::Holds));
        assert!(matches!(guess(&h, SI), Guess::Holds));
    }

    #[test]
    fn a_write_skew_releases_its_keys_at_serializable_only() {
        // Each reads the other's key initial, then writes its own.
        // (Blind writes after it, sessions taking turns, date the file.)
        let h = load_text(
            "r(1,0,0,1)\nw(2,1,0,1)\nr(2,0,1,2)\nw(1,1,1,2)\nw(3,1,0,3)\nw(4,1,1,4)\n\
             w(3,2,0,5)\nw(4,2,1,6)\n",
        );
        match guess(&h, SER) {
            Guess::Release { keys, .. } => assert!(keys.iter().any(|&k| k)),
            _ => panic!("a write skew is no serial run"),
        }
        assert!(matches!(guess(&h, SI), Guess::Holds));
    }
}
