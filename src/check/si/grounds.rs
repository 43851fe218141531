//! What the anti-dependencies a dependency path ordered rest on, under the
//! strong-session and strict variants. There a dependency path orders a
//! key's writers ([`DepClock`]), session order and real time included, and
//! each reader of a version anti-depends on the next writer that path
//! orders ([`Polygraph::derived`]). Such a step looks like data (rw) but
//! may hold only because of the process or real-time order its path went
//! through: named by its steps alone, a cycle through it would claim the
//! models without that order (a G-nonadjacent-item rules out snapshot
//! isolation), and they may accept the history. So the telling keeps such
//! edges out of the passes without that order ([`super::cycles`]), and a
//! cycle through one is named as Elle names one through such an order
//! (`-process`, `-realtime`), its step marked as inferred through it
//! ([`super::tell`]).
//!
//! Data flow: for each range of derived edges, its writer `w` and the
//! overwriter `b`; whether write-read and write-write edges alone (what
//! every variant knows) order `w` before `b`, by a breadth-first search
//! within the transactions that reach `b` through data and session order
//! (vector clocks over those edges prune it), cut after [`GROUNDS_SEARCH_BUDGET`]
//! transactions looked at (then taken as not: the cycle claims less; a
//! wider search costs more than it names); else whether
//! data and session order do (the clocks say); else real time does.
//!
//! Pruning's inferences ([`DataOrders`]), under every variant: a pair of
//! writers pruning ordered (the other order closes a cycle of the
//! variant's graph) whose first writer reaches the second by reads and
//! writes alone is ordered by data: the other order would close a G0 or
//! G1c cycle, which every model that prohibits a G1c prohibits too. A
//! cycle through such steps claims what its name claims, where that is no
//! more than a G1c claims; found by a breadth-first search over the
//! observed write-read and write-write edges, cut after [`GROUNDS_DATA_BUDGET`]
//! transactions, asked only of the steps of cycles told. (The telling
//! also asks, for other inferred steps, what the other order's own cycle
//! claims: `cycles::Inferred`, from each step's [`DataOrders::other_side`].)

use crate::check::tuning::{GROUNDS_DATA_BUDGET, GROUNDS_SEARCH_BUDGET};
use std::cell::{Cell, RefCell};

use rustc_hash::FxHashMap;

use super::polygraph::{DepClock, EdgeId, EdgeKind, Polygraph, Through, Variant};
use crate::check::graph::{Digraph, shortest_path};
use crate::history::model::*;

/// What each of `g`'s derived anti-dependencies rests on beside reads and
/// writes (`g` built for `variant` on `h`, the edges the history shows
/// being its first `observed` known ones).
pub(super) fn classify(h: &History, g: &Polygraph, observed: usize, variant: Variant) -> Through {
    let mut through = Through::default();
    if !variant.session || g.derived.is_empty() {
        return through;
    }
    let known = |keep: fn(EdgeKind) -> bool| {
        g.known[..observed.min(g.known.len())]
            .iter()
            .map(|&e| g.edges[e as usize])
            .filter(move |e| keep(e.kind))
            .map(|e| (e.a, e.b))
    };
    let data: Vec<(u32, u32)> = known(|k| matches!(k, EdgeKind::Wr | EdgeKind::Ww)).collect();
    let with_sessions: Vec<(u32, u32)> = data
        .iter()
        .copied()
        .chain(known(|k| k == EdgeKind::Process))
        .collect();
    let Some(clock) = DepClock::from_edges(h, &g.included, &with_sessions) else {
        // Data and session order close a cycle: nothing derived is told
        // apart (the variant rejects through them anyway).
        return through;
    };
    let adj = Digraph::from_edges(h.txns.len(), &data);
    let mut memo: FxHashMap<(TxnId, TxnId), EdgeKind> = FxHashMap::default();
    for &(lo, hi, w) in &g.derived {
        let (b, key) = (g.edges[lo as usize].b, g.edges[lo as usize].key);
        if read_from(h, b, key, w) {
            // The overwriter read the version it overwrites: the history
            // shows the order.
            continue;
        }
        let rests = *memo.entry((w, b)).or_insert_with(|| {
            if !clock.reaches(w, b) {
                EdgeKind::Realtime
            } else if data_path(&adj, &clock, w, b) {
                EdgeKind::Wr
            } else {
                EdgeKind::Process
            }
        });
        through.ranges.push((lo, hi, rests));
    }
    through
}

/// Whether transaction `b` read `key` from a write of transaction `w`.
fn read_from(h: &History, b: TxnId, key: KeyId, w: TxnId) -> bool {
    h.mops[h.txns[b as usize].mops()]
        .iter()
        .any(|m| m.key == key && m.observed().is_some_and(|o| h.txn_of(o) == w))
}

/// Whether write-read and write-write edges lead from `w` to `b`, found
/// within [`GROUNDS_SEARCH_BUDGET`] transactions that reach `b` by `clock`.
fn data_path(adj: &Digraph, clock: &DepClock, w: TxnId, b: TxnId) -> bool {
    let entered = Cell::new(0usize);
    let within = |t: u32| {
        entered.set(entered.get() + 1);
        entered.get() <= GROUNDS_SEARCH_BUDGET && clock.reaches(t, b)
    };
    adj.out(w).contains(&b) || shortest_path(adj, w, b, within).is_some()
}

/// A side of a constraint pruning chose.
#[derive(Clone, Copy)]
struct Forced {
    /// Its pair of writers, in the order chosen.
    pair: (TxnId, TxnId),
    /// The constraint.
    constraint: usize,
    /// Whether its `either` side was chosen.
    either: bool,
}

/// Which of the edges pruning inferred rest on data alone: their side's
/// first writer reaches its second by the history's write-read and
/// write-write edges (see the module's doc).
pub(super) struct DataOrders {
    /// The observed write-read and write-write edges.
    adj: Digraph,
    /// Each inferred edge's side of its constraint.
    pairs: FxHashMap<EdgeId, Forced>,
    memo: RefCell<FxHashMap<(TxnId, TxnId), bool>>,
}

impl DataOrders {
    /// For `g` pruned, its first `observed` known edges the history's
    /// own, `inferred` telling the edges pruning added.
    pub(super) fn new(g: &Polygraph, observed: usize, inferred: impl Fn(EdgeId) -> bool) -> Self {
        let data: Vec<(u32, u32)> = g.known[..observed.min(g.known.len())]
            .iter()
            .map(|&e| g.edges[e as usize])
            .filter(|e| matches!(e.kind, EdgeKind::Wr | EdgeKind::Ww))
            .map(|e| (e.a, e.b))
            .collect();
        let n = g.included.len();
        let mut pairs = FxHashMap::default();
        for (c, con) in g.constraints.iter().enumerate() {
            for (side, pair, either) in [
                (&con.either, (con.a, con.c), true),
                (&con.or, (con.c, con.a), false),
            ] {
                // Pruning moves a whole side into the known edges.
                if side.first().is_some_and(|&e| inferred(e)) {
                    let f = Forced {
                        pair,
                        constraint: c,
                        either,
                    };
                    pairs.extend(side.iter().map(|&e| (e, f)));
                }
            }
        }
        DataOrders {
            adj: Digraph::from_edges(n, &data),
            pairs,
            memo: RefCell::default(),
        }
    }

    /// Whether inferred edge `e`'s order rests on data alone.
    pub(super) fn on_data(&self, e: EdgeId) -> bool {
        let Some(&Forced { pair: (w, b), .. }) = self.pairs.get(&e) else {
            return false;
        };
        *self.memo.borrow_mut().entry((w, b)).or_insert_with(|| {
            let entered = Cell::new(0usize);
            let within = |_| {
                entered.set(entered.get() + 1);
                entered.get() <= GROUNDS_DATA_BUDGET
            };
            self.adj.out(w).contains(&b) || shortest_path(&self.adj, w, b, within).is_some()
        })
    }

    /// The edges of the side pruning did not choose, for inferred edge
    /// `e`, and its constraint.
    pub(super) fn other_side<'g>(
        &self,
        g: &'g Polygraph,
        e: EdgeId,
    ) -> Option<(usize, &'g [EdgeId])> {
        let f = self.pairs.get(&e)?;
        let con = &g.constraints[f.constraint];
        let other = if f.either { &con.or } else { &con.either };
        Some((f.constraint, other))
    }
}
