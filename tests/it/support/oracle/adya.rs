//! Adya's phenomena (Adya's thesis, 1999; with Cerone & Gotsman's
//! characterization of snapshot isolation, "Analysing snapshot isolation",
//! 2018), decided by enumerating every version order: a history satisfies a
//! level iff some version order of each key (the committed writers after
//! the initial state; for lists, the writers in the order the reads show
//! them, then those no read shows in any order) gives a direct
//! serialization graph with none of the level's proscribed phenomena.
//! Aborted and intermediate reads (G1a, G1b) are already `Broken` in the
//! facts; the graph's edges are ww (a writer to the next one), wr (the
//! writer read from to the reader) and rw (a reader to the writer of the
//! next version after the one it read).
//!
//! - PL-1: no G0 (a cycle of ww); stricter than Adya's here, as the facts
//!   already reject G1a and G1b (elle-si has no PL-1 checker to compare);
//! - PL-2: no G1 (G1a, G1b, and G1c: a cycle of ww and wr);
//! - PL-2.99 (repeatable read): no G1, no G2-item; with no predicates this
//!   is PL-3;
//! - PL-2+ (consistent view): no G1, and no G-single (a cycle with exactly
//!   one rw edge: an rw edge from a to b where b reaches a by ww and wr);
//! - PL-SI: no G1, and every cycle has two adjacent rw edges (Cerone &
//!   Gotsman: (ww ∪ wr) ; rw? acyclic);
//! - PL-3: no G1, no G2 (a cycle of ww, wr and rw).

use super::facts::{Facts, Set, bit};

pub const LEVELS: [&str; 6] = ["PL-1", "PL-2", "PL-2.99", "PL-SI", "PL-3", "PL-2+"];

/// Bit i: the history satisfies `LEVELS[i]`.
pub type Verdicts = u8;
pub const ALL: Verdicts = (1 << LEVELS.len()) - 1;

pub fn decide(f: &Facts) -> Verdicts {
    let mut found = 0;
    any_order(f, |g| {
        found |= check(g);
        found == ALL
    });
    found
}

/// The direct serialization graph of one version order, as predecessor
/// sets (`ww[b]` has `a` when `a -> b`).
pub struct Graph {
    pub ww: Vec<Set>,
    pub wr: Vec<Set>,
    pub rw: Vec<Set>,
}

/// Calls `visit` with the graph of each version order of each key (the
/// committed writers after the initial state; for lists, the writers in
/// the order the reads show them, then those no read shows in any order)
/// until it returns true; whether one did. A read of an intermediate write
/// (kept only where the facts keep them) anti-depends on its writer, whose
/// later write is the next version (Elle's list-append graph).
pub fn any_order(f: &Facts, mut visit: impl FnMut(&Graph) -> bool) -> bool {
    // Key options that contradict each other allow no order at all.
    if f.impossible {
        return false;
    }
    // Per key, the candidate version orders (writers after node 0).
    let mut choices: Vec<(u8, Vec<Vec<usize>>)> = Vec::new();
    for k in f.keys() {
        let writers: Vec<usize> = (1..f.n).filter(|&v| f.writes_key(v, k)).collect();
        let orders = match f.observed.iter().find(|o| o.0 == k) {
            Some((_, seq, unobserved)) => permutations(unobserved)
                .into_iter()
                .map(|p| seq.iter().copied().chain(p).collect())
                .collect(),
            None => permutations(&writers),
        };
        // Under Elle's key options, only the orders they allow.
        let orders: Vec<Vec<usize>> = orders
            .into_iter()
            .filter(|o| {
                let at = |v: usize| o.iter().position(|&x| x == v).map_or(0, |p| p + 1);
                f.assumed
                    .iter()
                    .filter(|p| p.0 == k)
                    .all(|&(_, a, b)| at(a) < at(b))
            })
            .collect();
        if orders.is_empty() {
            return false;
        }
        choices.push((k, orders));
    }
    let mut pick = vec![0usize; choices.len()];
    loop {
        if visit(&graph(f, &choices, &pick)) {
            return true;
        }
        // Next combination.
        let mut i = 0;
        loop {
            if i == pick.len() {
                return false;
            }
            pick[i] += 1;
            if pick[i] < choices[i].1.len() {
                break;
            }
            pick[i] = 0;
            i += 1;
        }
    }
}

fn permutations(xs: &[usize]) -> Vec<Vec<usize>> {
    if xs.is_empty() {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for i in 0..xs.len() {
        let mut rest = xs.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

fn graph(f: &Facts, choices: &[(u8, Vec<Vec<usize>>)], pick: &[usize]) -> Graph {
    let n = f.n;
    let mut ww: Vec<Set> = vec![0; n];
    let mut wr: Vec<Set> = vec![0; n];
    let mut rw: Vec<Set> = vec![0; n];
    for (i, (k, orders)) in choices.iter().enumerate() {
        let order: Vec<usize> = std::iter::once(0)
            .chain(orders[pick[i]].iter().copied())
            .collect();
        for p in order.windows(2) {
            ww[p[1]] |= bit(p[0]);
        }
        for r in f.reads.iter().filter(|r| r.key == *k) {
            if r.src != r.reader {
                wr[r.reader] |= bit(r.src);
            }
            if r.intermediate {
                rw[r.src] |= bit(r.reader);
                continue;
            }
            let at = order.iter().position(|&v| v == r.src).unwrap_or(0);
            if let Some(&next) = order.get(at + 1).filter(|&&x| x != r.reader) {
                rw[next] |= bit(r.reader);
            }
        }
    }
    Graph { ww, wr, rw }
}

fn check(g: &Graph) -> Verdicts {
    let Graph { ww, wr, rw } = g;
    let union =
        |a: &[Set], b: &[Set]| -> Vec<Set> { a.iter().zip(b).map(|(x, y)| x | y).collect() };
    let dep = union(ww, wr);
    // (ww ∪ wr) ; rw?
    let mut si: Vec<Set> = dep.clone();
    for (c, s) in si.iter_mut().enumerate() {
        for (b, d) in dep.iter().enumerate() {
            if rw[c] & bit(b) != 0 {
                *s |= d;
            }
        }
    }
    let all = union(&dep, rw);
    let mut v = 0;
    if acyclic(ww) {
        v |= 1;
    }
    if acyclic(&dep) {
        v |= 2;
        if acyclic(&all) {
            v |= 4 | 16;
        }
        if acyclic(&si) {
            v |= 8;
        }
        if no_single(&dep, rw) {
            v |= 32;
        }
    }
    v
}

/// Whether no rw edge `a -> b` closes a cycle with a path of `dep` (ww
/// and wr, acyclic) from `b` back to `a`: no G-single.
fn no_single(dep: &[Set], rw: &[Set]) -> bool {
    let n = dep.len();
    // reach[v]: the nodes with a dep path to v (its ancestors), to a
    // fixpoint.
    let mut reach: Vec<Set> = dep.to_vec();
    loop {
        let mut changed = false;
        for v in 0..n {
            let mut r = reach[v];
            for u in 0..n {
                if reach[v] & bit(u) != 0 {
                    r |= reach[u];
                }
            }
            changed |= r != reach[v];
            reach[v] = r;
        }
        if !changed {
            break;
        }
    }
    // rw[b] has a when a -> b; a G-single when b reaches a.
    (0..n).all(|b| (0..n).all(|a| rw[b] & bit(a) == 0 || reach[a] & bit(b) == 0))
}

/// Whether the relation (predecessor sets) has no cycle.
fn acyclic(pred: &[Set]) -> bool {
    let n = pred.len();
    let mut left: Set = (0..n).fold(0, |s, v| s | bit(v));
    loop {
        let Some(v) = (0..n).find(|&v| left & bit(v) != 0 && pred[v] & left == 0) else {
            return left == 0;
        };
        left &= !bit(v);
    }
}
