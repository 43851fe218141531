//! Anomalies asked for by name with no model (Elle's `:anomalies` with
//! `:consistency-models nil`), decided by enumeration: a history is valid
//! iff some version order's direct serialization graph ([`adya::any_order`])
//! has no simple cycle of a prohibited shape, and, where the request
//! prohibits Elle's lost update, no two committed transactions read one
//! version of a key and then wrote it. Each request's shapes are written
//! here by hand from Elle's `implied-anomalies` (what implies what the
//! request names), sharing nothing with elle-si's own derivation.
//!
//! A cycle's shape, as Elle's explainer names it: no anti-dependency and
//! write-write steps only, G0; no anti-dependency, G1c; exactly one,
//! G-single-item; several, none two adjacent, G-nonadjacent-item; else
//! G2-item; each through data alone, or with session order (`-process`),
//! or session order and real time (`-realtime`).

use super::adya::{Graph, any_order};
use super::facts::{Facts, Set, bit};

/// A prohibited shape of cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// G0: write-write steps (and orders) only.
    Ww,
    /// G1c and G0: no anti-dependency.
    Dep,
    /// G-single-item: exactly one.
    Single,
    /// G-nonadjacent-item and G-single-item: one or more, none adjacent.
    Nonadjacent,
    /// G2-item and those: one or more.
    Any,
}

/// The orders a cycle may run through beside data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Orders {
    Data,
    Session,
    Realtime,
}

/// A request: the names elle-si is asked for (`-a`), what it prohibits.
pub struct Request {
    pub names: &'static str,
    pub shapes: &'static [(Shape, Orders)],
    pub lost_update: bool,
}

use Orders::*;
use Shape::*;

/// The requests compared. G2-item's implying anomalies include Elle's
/// lost update (`:lost-update` implies `:G2-item`); G-single's and
/// G-nonadjacent's do not. A `-process` or `-realtime` form is implied by
/// the plain one, so it prohibits the plain cycles too (one search in the
/// graph with the orders finds both).
pub const REQUESTS: &[Request] = &[
    Request {
        names: "G2-item",
        shapes: &[(Any, Data)],
        lost_update: true,
    },
    Request {
        names: "G-single",
        shapes: &[(Single, Data)],
        lost_update: false,
    },
    Request {
        names: "G-nonadjacent",
        shapes: &[(Nonadjacent, Data)],
        lost_update: false,
    },
    Request {
        names: "G1c",
        shapes: &[(Dep, Data)],
        lost_update: false,
    },
    Request {
        names: "G0",
        shapes: &[(Ww, Data)],
        lost_update: false,
    },
    Request {
        names: "G1c,G-single",
        shapes: &[(Dep, Data), (Single, Data)],
        lost_update: false,
    },
    Request {
        names: "G1c,G2-item",
        shapes: &[(Dep, Data), (Any, Data)],
        lost_update: true,
    },
    Request {
        names: "G-single-item-process",
        shapes: &[(Single, Session)],
        lost_update: false,
    },
    Request {
        names: "G2-item-realtime",
        shapes: &[(Any, Realtime)],
        lost_update: true,
    },
];

/// Whether the facts satisfy the request.
pub fn holds(f: &Facts, r: &Request) -> bool {
    if r.lost_update && lost_update(f) {
        return false;
    }
    any_order(f, |g| {
        !r.shapes
            .iter()
            .any(|&(shape, orders)| has_cycle(f, g, shape, orders))
    })
}

/// Two committed transactions read one version of a key, each then
/// writing it. Each transaction's first read of the key counts, as in
/// Elle's `lost-update-cases` (its "first (i.e. external) read"): a
/// second read of another version (a non-repeatable read) does not.
fn lost_update(f: &Facts) -> bool {
    let mut first = std::collections::BTreeSet::new();
    let rmw: Vec<_> = f
        .reads
        .iter()
        .filter(|r| first.insert((r.reader, r.key)) && r.then_writes)
        .collect();
    rmw.iter().enumerate().any(|(i, a)| {
        rmw[i + 1..]
            .iter()
            .any(|b| a.reader != b.reader && a.key == b.key && a.src == b.src)
    })
}

/// Whether the graph has a simple cycle of this shape through these
/// orders.
fn has_cycle(f: &Facts, g: &Graph, shape: Shape, orders: Orders) -> bool {
    let n = f.n;
    // Per edge a -> b: whether it may be an anti-dependency step, and
    // whether another step the shape allows.
    let mut rw = vec![vec![false; n]; n];
    let mut dep = vec![vec![false; n]; n];
    let has = |pred: &[Set], a: usize, b: usize| pred[b] & bit(a) != 0;
    for a in 0..n {
        for b in 0..n {
            rw[a][b] = shape != Ww && shape != Dep && has(&g.rw, a, b);
            dep[a][b] = has(&g.ww, a, b) || (shape != Ww && has(&g.wr, a, b));
        }
    }
    if orders >= Session {
        for &(a, b) in &f.so {
            dep[a][b] = true;
        }
    }
    if orders == Realtime {
        for &(a, b) in &f.rt {
            dep[a][b] = true;
        }
    }
    // Every simple cycle, from its least node.
    let mut path = Vec::new();
    (0..n).any(|s| from(s, s, &mut path, &rw, &dep, shape))
}

fn from(
    s: usize,
    x: usize,
    path: &mut Vec<usize>,
    rw: &[Vec<bool>],
    dep: &[Vec<bool>],
    shape: Shape,
) -> bool {
    path.push(x);
    let n = rw.len();
    let mut found = false;
    for y in s..n {
        if !(rw[x][y] || dep[x][y]) {
            continue;
        }
        if y == s {
            let mut cyc = path.clone();
            cyc.push(s);
            if fits(&cyc, rw, dep, shape) {
                found = true;
                break;
            }
        } else if !path.contains(&y) && from(s, y, path, rw, dep, shape) {
            found = true;
            break;
        }
    }
    path.pop();
    found
}

/// Whether some choice of each step's relation (anti-dependency or not,
/// as each edge allows) gives the cycle `cyc` (its first node repeated at
/// its end) the shape.
fn fits(cyc: &[usize], rw: &[Vec<bool>], dep: &[Vec<bool>], shape: Shape) -> bool {
    let k = cyc.len() - 1;
    (0..1u32 << k).any(|mask| {
        let is_rw = |i: usize| mask & (1 << i) != 0;
        let ok = (0..k).all(|i| {
            let (a, b) = (cyc[i], cyc[i + 1]);
            if is_rw(i) { rw[a][b] } else { dep[a][b] }
        });
        let count = (0..k).filter(|&i| is_rw(i)).count();
        let adjacent = (0..k).any(|i| is_rw(i) && is_rw((i + 1) % k));
        ok && match shape {
            Ww | Dep => count == 0,
            Single => count == 1,
            Nonadjacent => count >= 1 && !adjacent,
            Any => count >= 1,
        }
    })
}
