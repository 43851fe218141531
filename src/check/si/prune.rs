//! Pruning (PolySI, Algorithm 1): a side of a constraint whose edge would
//! close a cycle in the known induced graph cannot hold, so the other side
//! becomes known; when both sides would, the history is a violation. This
//! runs to a fixpoint and usually leaves few constraints, or none; for a
//! verdict alone over many constraints, until a round settles little
//! ([`MIN_ROUND_SHARE`]), the solver taking the rest.
//!
//! For snapshot isolation a cycle must have two adjacent anti-dependencies
//! to be allowed, so the graph that matters is H: dependencies, and
//! anti-dependencies followed by a dependency. A new dependency `a -> b`
//! closes a cycle when `b` reaches `a` in H, or reaches some `k` with a
//! known anti-dependency `k -> a`; a new anti-dependency `a -> b` when a
//! dependency successor of `b` reaches `a` (or is `a`). For serializability
//! every edge counts alike.
//!
//! Data flow, each round: the known edges as G2 (for SI, each transaction
//! two nodes, the second entered by an anti-dependency and left by a
//! dependency, so that G2's paths between first copies are H's), its
//! topological order (none: the known edges close a cycle), reachability
//! in H from that, then each open constraint's sides. Reachability comes
//! from vector clocks over sessions when session order is part of the
//! graph (sessions are then chains), from bitsets for histories up to
//! [`BITSET_LIMIT`] transactions, and otherwise pruning is skipped and the
//! solver decides alone.
//!
//! Edges that hold only under a selector (reads with several candidate
//! writers) are not known, so they never force anything here; a forced
//! side's selector edges join [`Polygraph::cond_known`].

use crate::check::budget::{self, Budget};
use crate::check::clocks::{Vectors, chains};
use crate::check::graph::{Digraph, topo_order};
use crate::check::si::polygraph::{EdgeId, Polygraph, Variant};
use crate::check::tuning::{BITSET_LIMIT, LONG_PRUNING, MIN_ROUND_SHARE};
use crate::history::model::*;

/// Known adjacency, by kind: what a side's check walks (reachability
/// comes from G2, [`oracle`]).
pub struct Known {
    pub dep_out: Vec<Vec<u32>>,
    pub rw_in: Vec<Vec<u32>>,
}

impl Known {
    pub fn new(g: &Polygraph, n: usize) -> Known {
        // Each list sized once: growing 2n lists push by push costs more
        // than counting first.
        let (mut dep_out, mut rw_in) = (vec![0u32; n], vec![0u32; n]);
        for &e in &g.known {
            let e = g.edges[e as usize];
            if e.kind.is_dep() {
                dep_out[e.a as usize] += 1;
            } else {
                rw_in[e.b as usize] += 1;
            }
        }
        let lists = |c: Vec<u32>| -> Vec<Vec<u32>> {
            c.into_iter()
                .map(|k| Vec::with_capacity(k as usize))
                .collect()
        };
        let mut k = Known {
            dep_out: lists(dep_out),
            rw_in: lists(rw_in),
        };
        for &e in &g.known {
            k.add(g, e);
        }
        k
    }

    pub fn add(&mut self, g: &Polygraph, e: EdgeId) {
        let e = g.edges[e as usize];
        if e.kind.is_dep() {
            self.dep_out[e.a as usize].push(e.b);
        } else {
            self.rw_in[e.b as usize].push(e.a);
        }
    }
}

/// Reachability in H.
pub enum Oracle {
    /// Over G2 nodes (first copies at `2t` for SI).
    Vectors {
        v: Vectors,
        sess: Vec<u32>,
        pos: Vec<u32>,
        serializable: bool,
    },
    Bits {
        words: usize,
        dense: Vec<u32>,
        bits: Vec<u64>,
    },
    None,
}

impl Oracle {
    /// `x ->* y` (reflexive), or None when unknown.
    pub fn reaches(&self, x: TxnId, y: TxnId) -> Option<bool> {
        if x == y {
            return Some(true);
        }
        match self {
            Oracle::Vectors {
                v,
                sess,
                pos,
                serializable,
            } => {
                let node = if *serializable { y } else { 2 * y };
                Some(v.get(node, sess[x as usize]) >= pos[x as usize])
            }
            Oracle::Bits { words, dense, bits } => {
                let (dx, dy) = (dense[x as usize], dense[y as usize]);
                if dx == u32::MAX || dy == u32::MAX {
                    return Some(false);
                }
                let w = bits[dx as usize * words + (dy as usize >> 6)];
                Some(w >> (dy & 63) & 1 == 1)
            }
            Oracle::None => None,
        }
    }
}

/// Vector clocks over G2 for a variant with session order, one entry per
/// chain of first copies ([`chains`]: sessions lie within chains): a
/// transaction's first copy raises its chain's entry; reachability between
/// first copies is then exact.
pub fn session_oracle(h: &History, g2: &Digraph, topo: &[u32], variant: Variant) -> Oracle {
    let txn = |a: u32| variant.g2_txn(a);
    // One entry per chain of first copies (sessions among them).
    let first = |a: u32| (variant.g2_node(txn(a)) == a).then(|| h.txns[txn(a) as usize].session);
    let cover = chains(g2, topo, first, h.sessions.len());
    if cover.count.saturating_mul(g2.len()) > crate::check::tuning::MAX_CLOCK_ENTRIES {
        return Oracle::None;
    }
    let at = |t: usize| variant.g2_node(t as TxnId) as usize;
    let sess: Vec<u32> = (0..h.txns.len()).map(|t| cover.chain[at(t)]).collect();
    let pos: Vec<u32> = (0..h.txns.len()).map(|t| cover.pos[at(t)]).collect();
    let mut v = Vectors::new(g2.len(), cover.count);
    for &a in topo {
        if first(a).is_some() {
            v.raise(a, cover.chain[a as usize], cover.pos[a as usize]);
        }
        for &b in g2.out(a) {
            v.join(b, a);
        }
    }
    Oracle::Vectors {
        v,
        sess,
        pos,
        serializable: variant.serializable,
    }
}

/// Bitset reachability in H over the transactions `inc`, from the
/// variant's G2 of known edges (`g2`) in its topological order `topo`, when it fits and is built before
/// `budget` (else [`Oracle::None`]: at SI and 40,000 transactions a
/// build takes seconds). For serializability G2 is H. For SI a
/// transaction's H successors are its first copy's G2 successors, a
/// second copy (entered by an anti-dependency) taken on by its
/// dependencies: H is never built, where an anti-dependency joined to
/// each dependency after it made it ten times G2's size (17M edges at
/// 40,000 transactions, a second a round to build and sort).
pub fn oracle(
    g2: &Digraph,
    variant: Variant,
    topo: &[u32],
    inc: &[bool],
    budget: Budget,
) -> Oracle {
    let n = inc.len();
    let count = inc.iter().filter(|&&b| b).count();
    if count > BITSET_LIMIT {
        return Oracle::None;
    }
    let mut dense = vec![u32::MAX; n];
    for (i, t) in (0..n).filter(|&t| inc[t]).enumerate() {
        dense[t] = i as u32;
    }
    let words = count.div_ceil(64).max(1);
    let mut bits = vec![0u64; count * words];
    // The transaction of a G2 node that is a first copy.
    let txn = |v: u32| Some(variant.g2_txn(v)).filter(|&t| variant.g2_node(t) == v);
    let order: Vec<u32> = topo.iter().filter_map(|&v| txn(v)).collect();
    let mut at = vec![0u32; n];
    for (i, &t) in order.iter().enumerate() {
        at[t as usize] = i as u32;
    }
    let mut succ: Vec<u32> = Vec::new();
    for (i, &a) in order.iter().rev().enumerate() {
        if i % 1024 == 0 && budget.expired() {
            return Oracle::None;
        }
        // A row cleared and each successor's folded in: `words` each.
        budget::spend(words as u64);
        let da = dense[a as usize] as usize;
        succ.clear();
        for &v in g2.out(variant.g2_node(a)) {
            match txn(v) {
                Some(b) => succ.push(b),
                None => succ.extend(g2.out(v).iter().map(|&z| variant.g2_txn(z))),
            }
        }
        // The successors nearest in the order first: a later one that an
        // earlier one reaches adds nothing (its row is in that one's), and
        // is skipped, as is a repeat. SI's H holds many such (an
        // anti-dependency joined to each dependency after it).
        succ.sort_unstable_by_key(|&b| at[b as usize]);
        for &b in &succ {
            let db = dense[b as usize] as usize;
            let (word, bit) = (da * words + (db >> 6), 1u64 << (db & 63));
            if bits[word] & bit != 0 {
                continue;
            }
            bits[word] |= bit;
            budget::spend(words as u64);
            if da != db {
                let (src, dst) = if db < da {
                    let (lo, hi) = bits.split_at_mut(da * words);
                    (&lo[db * words..db * words + words], &mut hi[..words])
                } else {
                    let (lo, hi) = bits.split_at_mut(db * words);
                    (&hi[..words], &mut lo[da * words..da * words + words])
                };
                for (d, s) in dst.iter_mut().zip(src) {
                    *d |= *s;
                }
            }
        }
    }
    Oracle::Bits { words, dense, bits }
}

/// What a round asks of each transaction's known neighbours, folded into
/// session vectors once (for SI with session order): without it a side's
/// check walks every dependency successor and anti-dependency predecessor,
/// which on hot transactions costs far more than the vectors do.
pub struct Folded {
    width: usize,
    /// Per transaction `a`, per session: the latest position of that
    /// session reaching some known anti-dependency source into `a`.
    rw_in_reach: Vec<u32>,
    /// Per transaction `b`: its dependency successors as (session,
    /// earliest position) pairs, in `dep_min[dep_at[b]..dep_at[b + 1]]`.
    dep_at: Vec<u32>,
    dep_min: Vec<(u32, u32)>,
}

impl Folded {
    pub fn new(k: &Known, o: &Oracle) -> Option<Folded> {
        let Oracle::Vectors {
            v,
            sess,
            pos,
            serializable: false,
        } = o
        else {
            return None;
        };
        let n = k.dep_out.len();
        let width = v.width();
        let mut rw_in_reach = vec![0u32; n * width];
        for a in 0..n {
            let row = &mut rw_in_reach[a * width..(a + 1) * width];
            for &x in &k.rw_in[a] {
                for (slot, &y) in row.iter_mut().zip(v.row(2 * x)) {
                    *slot = (*slot).max(y);
                }
            }
        }
        let mut dep_at = Vec::with_capacity(n + 1);
        let mut dep_min: Vec<(u32, u32)> = Vec::new();
        let mut first = vec![u32::MAX; width];
        let mut touched: Vec<u32> = Vec::new();
        for b in 0..n {
            dep_at.push(dep_min.len() as u32);
            for &z in &k.dep_out[b] {
                let s = sess[z as usize];
                if first[s as usize] == u32::MAX {
                    touched.push(s);
                }
                first[s as usize] = first[s as usize].min(pos[z as usize]);
            }
            for s in touched.drain(..) {
                dep_min.push((s, first[s as usize]));
                first[s as usize] = u32::MAX;
            }
        }
        dep_at.push(dep_min.len() as u32);
        Some(Folded {
            width,
            rw_in_reach,
            dep_at,
            dep_min,
        })
    }
}

/// Why a side cannot hold: its edge and the known edge it would close a
/// cycle with.
pub type Conflict = EdgeId;

/// Does this side close a cycle with known edges?
pub fn side_conflict(
    g: &Polygraph,
    k: &Known,
    o: &Oracle,
    folded: Option<&Folded>,
    side: &[EdgeId],
    serializable: bool,
) -> Option<Conflict> {
    for &e in side {
        let ed = g.edges[e as usize];
        let (a, b) = (ed.a, ed.b);
        let hit = if let (Some(f), Oracle::Vectors { v, sess, pos, .. }) = (folded, o) {
            if ed.kind.is_dep() {
                o.reaches(b, a) == Some(true)
                    || f.rw_in_reach[a as usize * f.width + sess[b as usize] as usize]
                        >= pos[b as usize]
            } else {
                let (lo, hi) = (f.dep_at[b as usize], f.dep_at[b as usize + 1]);
                f.dep_min[lo as usize..hi as usize]
                    .iter()
                    .any(|&(s, p)| v.get(2 * a, s) >= p)
            }
        } else if serializable {
            o.reaches(b, a) == Some(true)
        } else if ed.kind.is_dep() {
            o.reaches(b, a) == Some(true)
                || k.rw_in[a as usize]
                    .iter()
                    .any(|&x| o.reaches(b, x) == Some(true))
        } else {
            // A new anti-dependency a -> b needs a dependency out of b.
            k.dep_out[b as usize]
                .iter()
                .any(|&z| o.reaches(z, a) == Some(true))
        };
        if hit {
            return Some(e);
        }
    }
    None
}

/// What pruning concluded.
pub struct Pruned {
    /// Constraints still open.
    pub open: Vec<usize>,
    /// Constraints neither side of which can hold, with the edge of each
    /// side that closes a cycle.
    pub contradictions: Vec<(usize, EdgeId, EdgeId)>,
    /// The known graph itself has a cycle.
    pub known_cycle: bool,
    pub rounds: usize,
    /// With session order: G2 of the known edges (in their order) and a
    /// topological order of its nodes that take part, when pruning ended
    /// with both at hand.
    pub graph: Option<(Digraph, Vec<u32>)>,
}

/// Prunes to a fixpoint, moving forced sides into `g.known`; for a
/// verdict alone (`to_fixpoint` false), only while its rounds settle
/// enough ([`MIN_ROUND_SHARE`]). The known edges are checked for a cycle
/// after the last round's.
pub fn prune(
    h: &History,
    g: &mut Polygraph,
    variant: Variant,
    budget: Budget,
    to_fixpoint: bool,
) -> Pruned {
    let n = h.txns.len();
    let mut open: Vec<usize> = (0..g.constraints.len()).collect();
    let mut known = Known::new(g, n);
    let mut rounds = 0;
    // G2 nodes that take part.
    let g2_mask = variant.g2_mask(&g.included);
    let done = |open, contradictions, known_cycle, rounds, graph| Pruned {
        open,
        contradictions,
        known_cycle,
        rounds,
        graph,
    };
    // G2 edges of `g.known[..mapped]`, kept across rounds.
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut mapped = 0;
    let mut graph = None;
    // The last round settled too little to go on: the edges it forced
    // are checked for a cycle, and nothing more is pruned. So it is when
    // the budget has passed, before a round builds its reachability
    // (at 40,000 transactions and SI, seconds of work the budget would
    // otherwise not cut).
    let mut last = false;
    loop {
        rounds += 1;
        edges.reserve((g.known.len() - mapped) * 2);
        for &e in &g.known[mapped..] {
            variant.g2_edges(&g.edges[e as usize], &mut edges);
        }
        mapped = g.known.len();
        let g2 = Digraph::from_edges(variant.g2_nodes(n), &edges);
        budget::spend((edges.len() + g2_mask.len()) as u64);
        let Some(topo) = topo_order(&g2, &g2_mask) else {
            return done(open, Vec::new(), true, rounds, None);
        };
        let stop = open.is_empty() || last || budget.expired();
        let o = if stop {
            Oracle::None
        } else if variant.session {
            // Session chains make vector clocks exact: work on G2 itself.
            session_oracle(h, &g2, &topo, variant)
        } else {
            oracle(&g2, variant, &topo, &g.included, budget)
        };
        if variant.session {
            graph = Some((g2, topo));
        }
        if matches!(o, Oracle::None) {
            break;
        }
        let folded = Folded::new(&known, &o);
        let mut still = Vec::with_capacity(open.len());
        let mut forced: Vec<EdgeId> = Vec::new();
        let mut forced_if: Vec<(crate::check::si::polygraph::Sel, EdgeId)> = Vec::new();
        let mut contradictions = Vec::new();
        for (i, &c) in open.iter().enumerate() {
            if i % 4096 == 0 && budget.expired() {
                still.extend_from_slice(&open[i..]);
                break;
            }
            let con = &g.constraints[c];
            budget::spend((con.either.len() + con.or.len()) as u64 + 1);
            let f = folded.as_ref();
            let ec = side_conflict(g, &known, &o, f, &con.either, variant.serializable);
            let oc = side_conflict(g, &known, &o, f, &con.or, variant.serializable);
            match (ec, oc) {
                (Some(x), Some(y)) => contradictions.push((c, x, y)),
                (Some(_), None) => {
                    forced.extend_from_slice(&con.or);
                    forced_if.extend_from_slice(&con.or_if);
                }
                (None, Some(_)) => {
                    forced.extend_from_slice(&con.either);
                    forced_if.extend_from_slice(&con.either_if);
                }
                (None, None) => still.push(c),
            }
        }
        let changed = !forced.is_empty();
        g.cond_known.extend(forced_if);
        for e in forced {
            g.known.push(e);
            known.add(g, e);
        }
        last = !to_fixpoint
            && open.len() >= LONG_PRUNING
            && (open.len() - still.len()) * MIN_ROUND_SHARE < open.len();
        open = still;
        if !contradictions.is_empty() {
            return done(open, contradictions, false, rounds, None);
        }
        if !changed {
            break;
        }
        // The known edges grew: the next round builds G2 anew.
        graph = None;
    }
    done(open, Vec::new(), false, rounds, graph)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::si::polygraph::{Edge, EdgeKind};
    use crate::check::si::tests::PLAIN_SER;

    #[test]
    fn bitset_reachability_is_that_of_a_search() {
        // Random DAGs over a shuffled topological order, dense enough that
        // most edges are implied by others (what the build skips), some
        // nodes left out; each edge a dependency or an anti-dependency.
        // Serializability: H is every edge. SI: H's steps are a dependency,
        // or an anti-dependency then a dependency, searched here as such
        // (the oracle reads them off G2's two copies).
        let mut rng = super::super::tests::Rng(0x2545_f491_4f6c_dd1d);
        let mut next = |m: u64| rng.next(m);
        for round in 0..80 {
            let serializable = round % 2 == 0;
            let variant = Variant {
                serializable,
                session: false,
                realtime: false,
            };
            let n = 2 + next(150) as usize;
            let mut topo: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                topo.swap(i, next(i as u64 + 1) as usize);
            }
            let inc: Vec<bool> = (0..n).map(|_| next(8) != 0).collect();
            let placed: Vec<u32> = topo.iter().copied().filter(|&v| inc[v as usize]).collect();
            // (a, b, is a dependency)
            let mut edges = Vec::new();
            for i in 0..placed.len() {
                for j in i + 1..placed.len() {
                    if next(100) < 8 {
                        edges.push((placed[i], placed[j], next(3) != 0));
                    }
                }
            }
            let mut g2_edges = Vec::new();
            for &(a, b, dep) in &edges {
                let kind = if dep { EdgeKind::Ww } else { EdgeKind::Rw };
                let e = Edge {
                    a,
                    b,
                    kind,
                    key: 0,
                    va: Val::NIL,
                    vb: Val::NIL,
                };
                variant.g2_edges(&e, &mut g2_edges);
            }
            let g2 = Digraph::from_edges(variant.g2_nodes(n), &g2_edges);
            let order = topo_order(&g2, &variant.g2_mask(&inc)).expect("edges go forward");
            let o = oracle(&g2, variant, &order, &inc, Budget::NONE);
            // H's steps out of each transaction.
            let mut h = vec![Vec::new(); n];
            for &(a, b, dep) in &edges {
                if dep || serializable {
                    h[a as usize].push(b);
                } else {
                    for &(y, z, dep2) in &edges {
                        if y == b && dep2 {
                            h[a as usize].push(z);
                        }
                    }
                }
            }
            for &x in &placed {
                let mut seen = vec![false; n];
                let mut stack = vec![x];
                seen[x as usize] = true;
                while let Some(v) = stack.pop() {
                    for &w in &h[v as usize] {
                        if !seen[w as usize] {
                            seen[w as usize] = true;
                            stack.push(w);
                        }
                    }
                }
                for &y in &placed {
                    assert_eq!(o.reaches(x, y), Some(seen[y as usize]), "{x} -> {y}");
                }
            }
        }
    }

    #[test]
    fn reachability_is_not_built_past_its_budget() {
        // 0 -> 1 -> 2.
        let g = Digraph::from_edges(3, &[(0, 1), (1, 2)]);
        let (topo, inc) = ([0, 1, 2], [true; 3]);
        let o = oracle(&g, PLAIN_SER, &topo, &inc, Budget::NONE);
        assert_eq!(
            (o.reaches(0, 2), o.reaches(2, 0)),
            (Some(true), Some(false))
        );
        // Its work spent (or the run's deadline passed: the same test).
        let spent = Budget::NONE.within(0);
        crate::check::budget::spend(1);
        let cut = oracle(&g, PLAIN_SER, &topo, &inc, spent);
        assert!(matches!(cut, Oracle::None));
        assert_eq!(cut.reaches(0, 2), None);
        // The work a build counts is the same on every run.
        let counted = || {
            let before = crate::check::budget::spent();
            oracle(&g, PLAIN_SER, &topo, &inc, Budget::NONE);
            crate::check::budget::spent() - before
        };
        let first = counted();
        assert!(first > 0);
        assert_eq!(counted(), first);
    }
}
