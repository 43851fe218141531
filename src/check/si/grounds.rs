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
//! (vector clocks over those edges prune it), cut after [`SEARCH_BUDGET`]
//! transactions looked at (then taken as not: the cycle claims less; on
//! the 262k causal store at strict serializability 256 cost a tenth of
//! the check, and 32 names the differential histories alike); else whether
//! data and session order do (the clocks say); else real time does.

use std::cell::Cell;

use rustc_hash::FxHashMap;

use super::polygraph::{DepClock, EdgeKind, Polygraph, Through, Variant};
use crate::check::graph::{Digraph, shortest_path};
use crate::history::model::*;

/// Most transactions one search for a data path looks at.
pub(super) const SEARCH_BUDGET: usize = 32;

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
    let mut memo: FxHashMap<(TxnId, TxnId), Option<EdgeKind>> = FxHashMap::default();
    for &(lo, hi, w) in &g.derived {
        let b = g.edges[lo as usize].b;
        let rests = *memo.entry((w, b)).or_insert_with(|| {
            if !clock.reaches(w, b) {
                Some(EdgeKind::Realtime)
            } else if data_path(&adj, &clock, w, b) {
                None
            } else {
                Some(EdgeKind::Process)
            }
        });
        if let Some(k) = rests {
            through.ranges.push((lo, hi, k));
        }
    }
    through
}

/// Whether write-read and write-write edges lead from `w` to `b`, found
/// within [`SEARCH_BUDGET`] transactions that reach `b` by `clock`.
fn data_path(adj: &Digraph, clock: &DepClock, w: TxnId, b: TxnId) -> bool {
    let entered = Cell::new(0usize);
    let within = |t: u32| {
        entered.set(entered.get() + 1);
        entered.get() <= SEARCH_BUDGET && clock.reaches(t, b)
    };
    adj.out(w).contains(&b) || shortest_path(adj, w, b, within).is_some()
}
