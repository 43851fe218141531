//! Anomalies asked for by name with no model (Elle's `:anomalies` with
//! `:consistency-models nil`), decided over the polygraph: the history is
//! valid when some version order's dependency graph closes none of the
//! cycles they rule out ([`Shapes`]). Those need not be a model's: a
//! G2-item asked alone rules out every cycle with an anti-dependency and
//! no G1c, so an order whose only cycle is a G1c is a witness, where
//! serializability would reject it.
//!
//! Theory. A cycle type is a shape of the graph's cycles (Elle's
//! explainer: how many anti-dependencies, whether two are adjacent, which
//! orders beside data), so each level of [`Shapes`] is an automaton over
//! the steps of a cycle ([`Level`]): the cycle through an edge `u -> v` is
//! the edge and a path back from `v` to `u` in the product of the graph
//! and the automaton's states. A closed walk with exactly one
//! anti-dependency, or with one or more, holds a simple cycle with as many
//! (split it where a transaction repeats: the part with the
//! anti-dependency keeps it, the rest are cycles of dependencies), and one
//! with none two adjacent, where G1c cycles are ruled out too, a simple
//! cycle with none adjacent or none at all (SI's G2, see `super`); so
//! walks decide those levels. A G-nonadjacent-item with G1c allowed needs
//! a simple cycle, searched for depth first within a bound.
//!
//! The polygraph is built under [`Rules`] that take as known only what
//! the ruled-out cycles force: constraints are merged per writer pair
//! only where G0 is ruled out, and a writer that read the other's version
//! is ordered after it only where G1c is; no dependency path orders
//! writers (`polygraph::DepClock`), and session order and real time are
//! plain edges of their kinds.
//!
//! Data flow: a complete checker whose cycles hold all of these
//! accepting (SI's or serializability's, through the same orders:
//! [`Shapes::covered_by`]) is a witness, and nothing is built; else (the
//! [`super::pipeline`] over [`Decided`]) the polygraph -> pruning to a fixpoint (a side one of whose edges closes a
//! ruled-out cycle with the known edges cannot hold: bitset reachability
//! in each level's product graph) -> SAT, the acyclicity theory keeping
//! dependencies acyclic where G1c is ruled out, each solution searched
//! for the cycles ruled out, each found a clause ([`super::lemmas`]) ->
//! valid, or a cycle of the latest solution told as Elle names its steps,
//! its steps through write orders no read fixes marked assumed and its
//! claim [`Shapes::claim`] (every order closes one of the cycles, not
//! necessarily this one's type).

use crate::check::tuning::{MAX_TELL, PRUNE_LIMIT, SHAPES_PAIRS, SHAPES_WORK, SIMPLE_SEARCH_STEPS};
use batsat::{Lit, lbool};

use super::acyclic::Order;
use super::cycles::mark_steps;
use super::lemmas::{self, Pruned, Solved, encode, first_writers, force_round, solve};
use super::polygraph::{self, Edge, EdgeId, EdgeKind, Polygraph, Rules, Variant};
use super::solve::time_keys;
use super::tell::cycle_anomaly;
use super::variants::Checks;
use super::{Outcome, Stats};
use crate::anomaly::{Anomaly, Datum, Field, Grounds};
use crate::check::budget::{self, Budget};
use crate::check::deps::{realtime_edges, so_edges};
use crate::check::graph::{Closure, Digraph, sccs, topo_order, topo_order_by};
use crate::check::tuning::MAX_LEMMAS_PER_MODEL;
use crate::history::model::*;
use crate::spec::cycles::{DepCycles, RwCycles, Shapes, Through};
use crate::spec::{AnomalyType, Checker};

/// What a level's cycles are made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// G0: write-write steps (and orders) only.
    Ww,
    /// G1c: no anti-dependency.
    Dep,
    /// G-single-item: exactly one anti-dependency.
    Single,
    /// G-nonadjacent-item where G1c is ruled out through the same orders:
    /// none two adjacent, or none at all.
    Spaced,
    /// G-nonadjacent-item alone: one or more, none two adjacent, in a
    /// simple cycle.
    Nonadjacent,
    /// G2-item: one or more anti-dependencies.
    Any,
}

/// One kind of cycle ruled out, through these orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Level {
    kind: Kind,
    through: Through,
}

/// The levels of `s`, each once (one through more orders covers the same
/// through fewer).
fn levels(s: &Shapes) -> Vec<Level> {
    let mut out = Vec::new();
    for t in Through::ALL {
        let i = t as usize;
        let (d, r) = (s.dep[i], s.rw[i]);
        if d != DepCycles::None && s.dep.get(i + 1) != Some(&d) {
            let kind = if d == DepCycles::Ww {
                Kind::Ww
            } else {
                Kind::Dep
            };
            out.push(Level { kind, through: t });
        }
        if r != RwCycles::None && s.rw.get(i + 1) != Some(&r) {
            let kind = match r {
                RwCycles::Single => Kind::Single,
                RwCycles::Nonadjacent if d == DepCycles::WwWr => Kind::Spaced,
                RwCycles::Nonadjacent => Kind::Nonadjacent,
                _ => Kind::Any,
            };
            out.push(Level { kind, through: t });
        }
    }
    out
}

impl Level {
    /// Whether edges of kind `k` are steps of this level's cycles.
    fn allows(self, k: EdgeKind) -> bool {
        match k {
            EdgeKind::Ww => true,
            EdgeKind::Wr => self.kind != Kind::Ww,
            EdgeKind::Rw => !matches!(self.kind, Kind::Ww | Kind::Dep),
            EdgeKind::Process => self.through >= Through::Process,
            EdgeKind::Realtime => self.through == Through::Realtime,
        }
    }

    /// States of the automaton.
    fn states(self) -> u8 {
        match self.kind {
            Kind::Ww | Kind::Dep => 1,
            Kind::Nonadjacent => 4,
            _ => 2,
        }
    }

    /// The state after a step (rw or not) from state `s`; None where the
    /// step may not be taken. Single and Any count anti-dependencies (1:
    /// one taken); Spaced remembers whether the last step was one;
    /// Nonadjacent that (bit 1) and whether one was taken (bit 2).
    fn step(self, s: u8, rw: bool) -> Option<u8> {
        match (self.kind, rw) {
            (Kind::Ww | Kind::Dep, true) => None,
            (Kind::Ww | Kind::Dep, false) => Some(0),
            (Kind::Single, true) => (s == 0).then_some(1),
            (Kind::Single | Kind::Any, false) => Some(s),
            (Kind::Any, true) => Some(1),
            (Kind::Spaced, true) => (s == 0).then_some(1),
            (Kind::Spaced, false) => Some(0),
            (Kind::Nonadjacent, true) => (s & 1 == 0).then_some(3),
            (Kind::Nonadjacent, false) => Some(s & 2),
        }
    }

    /// Whether a walk back to the first edge's tail in state `s` closes a
    /// ruled-out cycle, the first edge being an anti-dependency or not.
    fn accepts(self, first_rw: bool, s: u8) -> bool {
        match self.kind {
            Kind::Ww | Kind::Dep => true,
            Kind::Single | Kind::Any => s == 1,
            Kind::Spaced => !(first_rw && s == 1),
            Kind::Nonadjacent => s & 2 != 0 && !(first_rw && s & 1 != 0),
        }
    }

    /// Whether every cycle of the level has an anti-dependency (so that
    /// the searches start from those).
    fn starts_at_rw(self) -> bool {
        !matches!(self.kind, Kind::Ww | Kind::Dep)
    }

    /// Whether a closed walk of the level holds one of its simple cycles.
    fn walks_do(self) -> bool {
        self.kind != Kind::Nonadjacent
    }

    /// Whether the simple cycle of these edges is one the level rules out.
    fn rules_out(self, g: &Polygraph, cyc: &[EdgeId]) -> bool {
        let kind = |e: EdgeId| g.edges[e as usize].kind;
        if !cyc.iter().all(|&e| self.allows(kind(e))) {
            return false;
        }
        let n = cyc.len();
        let rw = cyc.iter().filter(|&&e| kind(e) == EdgeKind::Rw).count();
        let adjacent =
            (0..n).any(|i| kind(cyc[i]) == EdgeKind::Rw && kind(cyc[(i + 1) % n]) == EdgeKind::Rw);
        match self.kind {
            Kind::Ww | Kind::Dep => rw == 0,
            Kind::Single => rw == 1,
            Kind::Any => rw >= 1,
            Kind::Spaced => !adjacent,
            Kind::Nonadjacent => rw >= 1 && !adjacent,
        }
    }

    /// The level's product graph of `edges` (each of its steps from each
    /// state), node `states * t + s`.
    fn product(self, g: &Polygraph, n: usize, edges: impl Iterator<Item = EdgeId>) -> Digraph {
        let k = self.states();
        let mut out = Vec::new();
        for e in edges {
            let ed = g.edges[e as usize];
            if !self.allows(ed.kind) {
                continue;
            }
            for s in 0..k {
                if let Some(t) = self.step(s, ed.kind == EdgeKind::Rw) {
                    let (a, b) = (ed.a * u32::from(k), ed.b * u32::from(k));
                    out.push((a + u32::from(s), b + u32::from(t)));
                }
            }
        }
        Digraph::from_edges(n * k as usize, &out)
    }

    /// Whether edge `e` closes a ruled-out cycle with the edges whose
    /// product graph's closure is `c`.
    fn closes(self, c: &Closure, ed: &Edge) -> bool {
        let k = u32::from(self.states());
        let rw = ed.kind == EdgeKind::Rw;
        let Some(s1) = self.allows(ed.kind).then(|| self.step(0, rw)).flatten() else {
            return false;
        };
        (0..k as u8).any(|s| {
            self.accepts(rw, s) && c.reaches(ed.b * k + u32::from(s1), ed.a * k + u32::from(s))
        })
    }
}

/// Breadth-first searches over a level's product graph, their marks
/// reused from one search to the next.
struct Search {
    stamp: Vec<u32>,
    back: Vec<(u32, EdgeId)>,
    now: u32,
    queue: Vec<u32>,
}

impl Search {
    fn new(nodes: usize) -> Search {
        Search {
            stamp: vec![0; nodes],
            back: vec![(0, 0); nodes],
            now: 0,
            queue: Vec::new(),
        }
    }

    /// A shortest walk of the level's steps from `(from, s)` to `(to,
    /// t)` through transactions `within` allows, as its edges.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &mut self,
        g: &Polygraph,
        adj: &[Vec<(u32, EdgeId)>],
        level: Level,
        (from, s): (u32, u8),
        (to, t): (u32, u8),
        within: impl Fn(u32) -> bool,
    ) -> Option<Vec<EdgeId>> {
        let k = u32::from(level.states());
        let (start, goal) = (from * k + u32::from(s), to * k + u32::from(t));
        self.now += 1;
        let now = self.now;
        self.queue.clear();
        self.queue.push(start);
        self.stamp[start as usize] = now;
        let mut head = 0;
        while head < self.queue.len() {
            let x = self.queue[head];
            head += 1;
            if x == goal {
                let mut path = Vec::new();
                let mut y = goal;
                while y != start {
                    let (p, e) = self.back[y as usize];
                    path.push(e);
                    y = p;
                }
                path.reverse();
                return Some(path);
            }
            let outs = &adj[(x / k) as usize];
            budget::spend(outs.len() as u64 + 1);
            for &(b, e) in outs {
                let rw = g.edges[e as usize].kind == EdgeKind::Rw;
                let Some(next) = level.step((x % k) as u8, rw) else {
                    continue;
                };
                let y = b * k + u32::from(next);
                if self.stamp[y as usize] != now && within(b) {
                    self.stamp[y as usize] = now;
                    self.back[y as usize] = (x, e);
                    self.queue.push(y);
                }
            }
        }
        None
    }
}

/// A simple cycle the level rules out among the pieces of the closed walk
/// `cyc` (split where a transaction repeats), if one is.
fn simple_piece(g: &Polygraph, level: Level, cyc: &[EdgeId]) -> Option<Vec<EdgeId>> {
    let tail = |e: EdgeId| g.edges[e as usize].a;
    for i in 0..cyc.len() {
        if let Some(j) = (i + 1..cyc.len()).find(|&j| tail(cyc[j]) == tail(cyc[i])) {
            let inner = &cyc[i..j];
            let outer: Vec<EdgeId> = cyc[j..].iter().chain(&cyc[..i]).copied().collect();
            return simple_piece(g, level, inner).or_else(|| simple_piece(g, level, &outer));
        }
    }
    level.rules_out(g, cyc).then(|| cyc.to_vec())
}

/// A simple path from `v` back to `u` that closes a G-nonadjacent-item
/// with the anti-dependency `e = u -> v`: it starts and ends with a
/// dependency and takes no two anti-dependencies in a row; depth first,
/// through transactions `within` allows. Err when cut after
/// [`SIMPLE_SEARCH_STEPS`].
fn simple_nonadjacent(
    g: &Polygraph,
    adj: &[Vec<(u32, EdgeId)>],
    (u, v, e): (u32, u32, EdgeId),
    within: impl Fn(u32) -> bool,
) -> Result<Option<Vec<EdgeId>>, ()> {
    let rw = |x: EdgeId| g.edges[x as usize].kind == EdgeKind::Rw;
    let mut on_path = vec![false; adj.len()];
    on_path[v as usize] = true;
    on_path[u as usize] = true;
    // (node, next out-edge, whether the step into it was rw), and the path.
    let mut stack: Vec<(u32, usize, bool)> = vec![(v, 0, true)];
    let mut path: Vec<EdgeId> = Vec::new();
    let mut steps = 0u64;
    while let Some(&mut (x, ref mut i, last_rw)) = stack.last_mut() {
        let Some(&(y, f)) = adj[x as usize].get(*i) else {
            // Done with x: off the path, with the edge into it.
            stack.pop();
            on_path[x as usize] = false;
            path.pop();
            continue;
        };
        *i += 1;
        steps += 1;
        if steps > SIMPLE_SEARCH_STEPS {
            budget::spend(steps);
            return Err(());
        }
        if rw(f) && last_rw {
            continue;
        }
        if y == u {
            if !rw(f) {
                path.push(f);
                let mut cyc = vec![e];
                cyc.extend(path);
                budget::spend(steps);
                return Ok(Some(cyc));
            }
            continue;
        }
        if on_path[y as usize] || !within(y) {
            continue;
        }
        on_path[y as usize] = true;
        path.push(f);
        stack.push((y, 0, rw(f)));
    }
    budget::spend(steps);
    Ok(None)
}

/// The cycles `levels` rule out that the edges `on` picks close, at most
/// `most` (each a closed walk, its first edge where the search began,
/// and whether it is a simple cycle of Adya's anti-dependencies alone:
/// see [`Adya`]), and whether a search was cut (then finding none proves
/// nothing). A level whose walks do not decide ([`Level::walks_do`])
/// takes only the anti-dependencies `adya` keeps.
fn violations(
    g: &Polygraph,
    n: usize,
    levels: &[Level],
    (on, adya): (&dyn Fn(EdgeId) -> bool, Option<&Adya>),
    most: usize,
    search: &mut Search,
) -> (Vec<(Vec<EdgeId>, bool)>, bool) {
    let mut found = Vec::new();
    let mut cut = false;
    for &level in levels {
        let simple = !level.walks_do();
        let mut adj: Vec<Vec<(u32, EdgeId)>> = vec![Vec::new(); n];
        let mut pairs = Vec::new();
        for e in 0..g.edges.len() as EdgeId {
            let ed = g.edges[e as usize];
            let later = simple && adya.is_some_and(|a| a.later(e));
            if on(e) && level.allows(ed.kind) && !later {
                adj[ed.a as usize].push((ed.b, e));
                pairs.push((ed.a, ed.b));
            }
        }
        let dg = Digraph::from_edges(n, &pairs);
        let comps = sccs(&dg);
        let comp = &comps.comp;
        let mut cyclic = vec![false; comps.count()];
        for c in comps.cyclic(&dg) {
            cyclic[c as usize] = true;
        }
        let mut done_comp = vec![false; comps.count()];
        for (a, outs) in adj.iter().enumerate() {
            let a = a as u32;
            let ca = comp[a as usize];
            if !cyclic[ca as usize] {
                continue;
            }
            for &(b, e) in outs {
                if found.len() >= most {
                    return (found, cut);
                }
                if comp[b as usize] != ca {
                    continue;
                }
                let rw = g.edges[e as usize].kind == EdgeKind::Rw;
                if level.starts_at_rw() != rw || (!rw && done_comp[ca as usize]) {
                    continue;
                }
                let within = |y: u32| comp[y as usize] == ca;
                let Some(s1) = level.step(0, rw) else {
                    continue;
                };
                let target = (0..level.states())
                    .find(|&s| level.accepts(rw, s))
                    .unwrap_or(0);
                let Some(path) = search.walk(g, &adj, level, (b, s1), (a, target), within) else {
                    continue;
                };
                let mut walk = vec![e];
                walk.extend(path);
                done_comp[ca as usize] = true;
                if level.walks_do() {
                    found.push((walk, false));
                } else if let Some(piece) = simple_piece(g, level, &walk) {
                    found.push((piece, true));
                } else {
                    match simple_nonadjacent(g, &adj, (a, b, e), within) {
                        Ok(Some(c)) => found.push((c, true)),
                        Ok(None) => {}
                        Err(()) => cut = true,
                    }
                }
            }
        }
    }
    (found, cut)
}

/// Prunes to a fixpoint: a side one of whose edges closes a cycle a level
/// rules out with the known edges (and the sides forced so far) cannot
/// hold, so the other side joins them. Levels whose walks do not decide
/// ([`Level::walks_do`]) take no part; histories past [`PRUNE_LIMIT`] are
/// not pruned.
fn prune(g: &Polygraph, n: usize, levels: &[Level], budget: Budget) -> Pruned {
    let mut forced: Vec<Option<bool>> = vec![None; g.constraints.len()];
    let levels: Vec<Level> = levels.iter().copied().filter(|l| l.walks_do()).collect();
    let mut rounds = 0;
    if levels.iter().any(|l| n * l.states() as usize > PRUNE_LIMIT) {
        return Pruned {
            forced,
            contradiction: false,
            rounds,
        };
    }
    let mut known: Vec<EdgeId> = g.known.clone();
    loop {
        if budget.expired() {
            break;
        }
        rounds += 1;
        let closures: Vec<Closure> = levels
            .iter()
            .map(|l| {
                let p = l.product(g, n, known.iter().copied());
                budget::spend((p.len() * p.len().div_ceil(64)) as u64 + p.edge_count() as u64);
                Closure::of(&p)
            })
            .collect();
        let bad = |side: &[EdgeId]| {
            side.iter().any(|&e| {
                let ed = &g.edges[e as usize];
                levels.iter().zip(&closures).any(|(l, c)| l.closes(c, ed))
            })
        };
        let take = |side: &[EdgeId]| known.extend_from_slice(side);
        let Ok(changed) = force_round(g, &mut forced, bad, take) else {
            return Pruned {
                forced,
                contradiction: true,
                rounds,
            };
        };
        if !changed {
            break;
        }
    }
    Pruned {
        forced,
        contradiction: false,
        rounds,
    }
}

/// The anomalies part: valid at once when the complete checker that
/// [`Shapes::covered_by`] names accepts (its verdict alone, as `checks`
/// decides it), else [`check`]. `deadline` bounds the whole.
pub fn run(
    h: &History,
    shapes: Shapes,
    checks: &mut Checks,
    deadline: Option<std::time::Instant>,
) -> Outcome {
    let cover = match shapes.covered_by() {
        Checker::Serializable { session, realtime } => Variant {
            serializable: true,
            session,
            realtime,
        },
        Checker::SnapshotIsolation { session, realtime } => Variant {
            serializable: false,
            session,
            realtime,
        },
        _ => unreachable!("covered_by names a polygraph variant"),
    };
    if checks.accepts(cover) {
        return Outcome {
            anomalies: Vec::new(),
            timed_out: false,
            stats: Stats::default(),
        };
    }
    check(h, shapes, Budget::until(deadline))
}

/// Decides whether some version order of `h` closes none of the cycles
/// `shapes` rules out, within [`SHAPES_WORK`]; a violation comes with one cycle
/// of the latest order tried (every order closes one).
///
/// One kind of edge the polygraph holds may not be Adya's: the
/// anti-dependency of a reader of version `a` on a later writer `c`, where
/// the reader writes the key too. When its own version comes right after
/// `a`, it anti-depends on nothing, and writes before `c` instead (a
/// write-write step, where the polygraph has an anti-dependency). A cycle
/// through it is then one with one anti-dependency fewer: ruled out too
/// wherever cycles of dependencies are, through the same orders; else it
/// may be a cycle the request allows. There the check is made with those
/// edges ([`Doubtful::Kept`]: a superset of the history's edges, so valid
/// proves valid) and, when it finds a violation, without them
/// ([`Doubtful::Dropped`]: a subset, so a violation proves one); where
/// the two disagree the answer is undecided.
///
/// Where each such edge's version orders are the polygraph's choices
/// ([`fakes`]), the check is exact instead ([`Doubtful::Exact`]): the
/// edge is left out of pruning, and holds in a choice unless that choice
/// puts the reader's own version right after the one it read (the read
/// version's writer, then the reader, then the edge's writer, on that
/// key), where the reader's path to that writer is its write-write step.
pub fn check(h: &History, shapes: Shapes, budget: Budget) -> Outcome {
    let budget = budget.within(SHAPES_WORK);
    // The whole polygraph holds a constraint per pair of a key's writers,
    // and takes memory by them: past SHAPES_PAIRS, undecided before it is
    // built.
    if writer_pairs(h) > SHAPES_PAIRS {
        return Outcome {
            anomalies: Vec::new(),
            timed_out: true,
            stats: Stats::default(),
        };
    }
    let safe = levels(&shapes)
        .iter()
        .filter(|l| l.starts_at_rw())
        .all(|l| shapes.dep[l.through as usize] == DepCycles::WwWr);
    if safe {
        decide(h, shapes, budget, Doubtful::Kept)
    } else {
        decide(h, shapes, budget, Doubtful::Exact)
    }
}

/// The pairs of transactions that did not abort and write one key, over
/// the keys: as many as the whole polygraph's constraints, at most.
fn writer_pairs(h: &History) -> u64 {
    let mut writers: rustc_hash::FxHashMap<KeyId, u64> = Default::default();
    let mut seen: rustc_hash::FxHashSet<(KeyId, TxnId)> = Default::default();
    for m in h.mops.iter().filter(|m| m.is_write()) {
        if h.txns[m.txn as usize].status != Status::Aborted && seen.insert((m.key, m.txn)) {
            *writers.entry(m.key).or_default() += 1;
        }
    }
    writers.values().map(|&w| w * w.saturating_sub(1) / 2).sum()
}

/// [`check`] with the doubtful edges kept, then dropped: where [`fakes`]
/// finds no exact form.
fn kept_then_dropped(h: &History, shapes: Shapes, budget: Budget) -> Outcome {
    let kept = decide(h, shapes, budget, Doubtful::Kept);
    if kept.timed_out || kept.anomalies.is_empty() {
        return kept;
    }
    let dropped = decide(h, shapes, budget, Doubtful::Dropped);
    if dropped.timed_out || !dropped.anomalies.is_empty() {
        return dropped;
    }
    Outcome {
        anomalies: Vec::new(),
        timed_out: true,
        stats: dropped.stats,
    }
}

/// What [`decide`] does with the anti-dependencies of readers that write
/// the key they read (see [`check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Doubtful {
    Kept,
    Dropped,
    Exact,
}

/// A doubtful anti-dependency ([`check`]) and the write-write steps on
/// its key that, holding together, make it the reader's own write-write
/// step instead: the read version's writer before the reader (none: the
/// initial state, always before) and the reader before the edge's writer.
#[derive(Clone, Copy, Debug)]
struct Fake {
    edge: EdgeId,
    needs: [Option<EdgeId>; 2],
}

/// The doubtful anti-dependencies of `g`, each with the write-write steps
/// that make it no anti-dependency ([`Fake`]), as a per-edge index into
/// the list; None where one's orders are not steps of `g` (an order a
/// dependency path implies, a read of a version no step names).
fn fakes(h: &History, g: &Polygraph) -> Option<(Vec<Fake>, Vec<u32>)> {
    let doubtful = doubtful_edges(h, g);
    let mut ww: rustc_hash::FxHashMap<(KeyId, TxnId, TxnId), EdgeId> =
        rustc_hash::FxHashMap::default();
    let mut writer: rustc_hash::FxHashMap<(KeyId, Val), TxnId> = rustc_hash::FxHashMap::default();
    for (e, ed) in g.edges.iter().enumerate() {
        if ed.kind == EdgeKind::Ww {
            ww.entry((ed.key, ed.a, ed.b)).or_insert(e as EdgeId);
            writer.entry((ed.key, ed.va)).or_insert(ed.a);
        }
    }
    let known: rustc_hash::FxHashSet<EdgeId> = g.known.iter().copied().collect();
    // The step x before y on key k: Some(Some(e)) its edge, Some(None)
    // never (the other order is known), None not a step of `g`.
    let before = |k: KeyId, x: TxnId, y: TxnId| match ww.get(&(k, x, y)) {
        Some(&e) => Some(Some(e)),
        None => ww
            .get(&(k, y, x))
            .filter(|e| known.contains(e))
            .map(|_| None),
    };
    let mut list = Vec::new();
    let mut index = vec![u32::MAX; g.edges.len()];
    for (e, ed) in g.edges.iter().enumerate() {
        if !doubtful[e] {
            continue;
        }
        let first = match writer.get(&(ed.key, ed.va)) {
            Some(&a) => match before(ed.key, a, ed.a)? {
                Some(step) => Some(step),
                None => continue,
            },
            None if ed.va == Val::NIL => None,
            None => return None,
        };
        let Some(then) = before(ed.key, ed.a, ed.b)? else {
            continue;
        };
        index[e] = list.len() as u32;
        list.push(Fake {
            edge: e as EdgeId,
            needs: [first, Some(then)],
        });
    }
    Some((list, index))
}

/// [`check`] with the doubtful edges as asked: the
/// [`super::pipeline`] over [`Decided`].
fn decide(h: &History, shapes: Shapes, budget: Budget, doubtful: Doubtful) -> Outcome {
    let levels = levels(&shapes);
    let Some(claim) = shapes.claim() else {
        return Outcome {
            anomalies: Vec::new(),
            timed_out: true,
            stats: Stats::default(),
        };
    };
    if levels.is_empty() || budget.expired() {
        return Outcome {
            anomalies: Vec::new(),
            timed_out: budget.expired(),
            stats: Stats::default(),
        };
    }
    let level = Decided {
        shapes,
        doubtful,
        levels,
        claim,
        no_exact: std::cell::Cell::new(false),
    };
    let ran = super::pipeline::run(h, &level, budget);
    if level.no_exact.get() {
        return kept_then_dropped(h, shapes, budget);
    }
    ran.outcome()
}

/// The cycles `shapes` rules out, over the polygraph with the doubtful
/// edges as `doubtful` says ([`check`]): a [`super::pipeline::Level`].
struct Decided {
    shapes: Shapes,
    doubtful: Doubtful,
    levels: Vec<Level>,
    claim: AnomalyType,
    /// Set by the build when the doubtful edges have no exact form
    /// ([`fakes`]): the check is then [`kept_then_dropped`].
    no_exact: std::cell::Cell<bool>,
}

/// What [`Decided`]'s build makes beside the polygraph: the doubtful
/// edges' conditions ([`fakes`]) and, for the exact check, the graph
/// pruning sees, without them; the edges taken out (they hold in no
/// choice).
struct Doubts {
    fake: Vec<Fake>,
    fake_of: Vec<u32>,
    pruning: Option<Polygraph>,
    out: Vec<bool>,
}

/// What pruning left [`Decided`].
struct ShapesPruned {
    pruned: Pruned,
    doubts: Doubts,
    keys: Option<Vec<u64>>,
    search: Search,
}

impl Decided {
    /// The start times' order of a constraint's writers: its `either`
    /// side first when `a` comes first.
    fn a_first(keys: &Option<Vec<u64>>) -> impl Fn(&polygraph::Constraint) -> bool + '_ {
        let when = move |t: TxnId| keys.as_ref().map_or(u64::from(t), |k| k[t as usize]);
        move |con: &polygraph::Constraint| (when(con.a), con.a) < (when(con.c), con.c)
    }

    /// The choice the starting order suggests, where pruning left it open.
    fn guess(g: &Polygraph, p: &ShapesPruned) -> lemmas::Choice {
        let a_first = Self::a_first(&p.keys);
        let pick = g
            .constraints
            .iter()
            .zip(&p.pruned.forced)
            .map(|(con, f)| f.unwrap_or_else(|| a_first(con)))
            .collect();
        (pick, first_writers(g))
    }
}

impl super::pipeline::Level for Decided {
    type Built = Doubts;
    type Pruned = ShapesPruned;
    type Unsat = lemmas::Choice;
    type Told = Vec<Anomaly>;

    fn build(&self, h: &History, budget: Budget) -> Option<(Polygraph, Doubts)> {
        let (shapes, doubtful) = (self.shapes, self.doubtful);
        let rules = Rules {
            merge: shapes.dep[0] != DepCycles::None,
            read_orders: shapes.dep[0] == DepCycles::WwWr,
        };
        let bare = Variant {
            serializable: true,
            session: false,
            realtime: false,
        };
        let mut g = polygraph::build_under(h, bare, budget, rules);
        if g.too_big || g.cut {
            return Some((
                g,
                Doubts {
                    fake: Vec::new(),
                    fake_of: Vec::new(),
                    pruning: None,
                    out: Vec::new(),
                },
            ));
        }
        // Exact: the doubtful edges' conditions ([`fakes`]), and the graph
        // pruning sees, without them.
        let (fake, mut fake_of, mut pruning) = if doubtful == Doubtful::Exact {
            let Some((fake, fake_of)) = fakes(h, &g) else {
                self.no_exact.set(true);
                return None;
            };
            let mut p = g.clone();
            drop_doubtful(h, &mut p);
            (fake, fake_of, Some(p))
        } else {
            (Vec::new(), Vec::new(), None)
        };
        // Edges taken out (none with the doubtful kept): they hold in no
        // choice.
        let mut out = match doubtful {
            Doubtful::Dropped => drop_doubtful(h, &mut g),
            Doubtful::Kept | Doubtful::Exact => vec![false; g.edges.len()],
        };
        let through = shapes.through();
        let plain = |(a, b): (u32, u32), kind| Edge {
            a,
            b,
            kind,
            key: 0,
            va: Val::NIL,
            vb: Val::NIL,
        };
        let mut orders: Vec<Edge> = Vec::new();
        if through >= Through::Process {
            orders.extend(
                so_edges(h, &g.included)
                    .into_iter()
                    .map(|p| plain(p, EdgeKind::Process)),
            );
        }
        if through == Through::Realtime {
            orders.extend(
                realtime_edges(h, &g.included)
                    .into_iter()
                    .map(|p| plain(p, EdgeKind::Realtime)),
            );
        }
        for e in orders {
            for g in std::iter::once(&mut g).chain(pruning.as_mut()) {
                g.known.push(g.edges.len() as EdgeId);
                g.edges.push(e);
            }
        }
        if doubtful == Doubtful::Exact {
            fake_of.resize(g.edges.len(), u32::MAX);
        }
        out.resize(g.edges.len(), false);
        let doubts = Doubts {
            fake,
            fake_of,
            pruning,
            out,
        };
        Some((g, doubts))
    }

    fn prune(
        &self,
        h: &History,
        (g, doubts): (&mut Polygraph, Doubts),
        budget: Budget,
        stats: &mut Stats,
    ) -> ShapesPruned {
        let n = h.txns.len();
        let pruned = prune(
            doubts.pruning.as_ref().unwrap_or(g),
            n,
            &self.levels,
            budget,
        );
        // Only the constraints left are counted, not their unknown edges
        // (kept so that `-v` says what it said).
        stats.prune_rounds = pruned.rounds;
        stats.constraints_after = pruned.forced.iter().filter(|f| f.is_none()).count();
        ShapesPruned {
            pruned,
            doubts,
            keys: time_keys(h),
            search: Search::new(n * 4),
        }
    }

    fn pruned(
        &self,
        h: &History,
        g: &Polygraph,
        p: &mut ShapesPruned,
        budget: Budget,
        stats: &mut Stats,
    ) -> Option<Vec<Anomaly>> {
        // A violation every choice has, told in the choice the start
        // suggests.
        p.pruned
            .contradiction
            .then(|| Self::guess(g, p))
            .and_then(|choice| self.tell(h, g, p, choice, budget, stats))
    }

    fn solve(
        &self,
        h: &History,
        g: &Polygraph,
        p: &mut ShapesPruned,
        budget: Budget,
        stats: &mut Stats,
    ) -> super::pipeline::Solution<lemmas::Choice> {
        use super::pipeline::Solution;
        let (n, levels) = (h.txns.len(), &self.levels);
        // The acyclicity theory keeps the dependencies of the most orders
        // G1c is ruled out through acyclic; without one it keeps nothing.
        let dep = levels.iter().rev().find(|l| l.kind == Kind::Dep).copied();
        let map = |ed: &Edge, to: &mut Vec<(u32, u32)>| {
            if dep.is_some_and(|l| l.allows(ed.kind)) {
                to.push((ed.a, ed.b));
            }
        };
        let mut known: Vec<(u32, u32)> = Vec::new();
        let side_edges = g
            .constraints
            .iter()
            .zip(&p.pruned.forced)
            .flat_map(|(con, f)| match f {
                Some(true) => con.either.as_slice(),
                Some(false) => con.or.as_slice(),
                None => &[],
            });
        for &e in g.known.iter().chain(side_edges) {
            map(&g.edges[e as usize], &mut known);
        }
        let dg = Digraph::from_edges(n, &known);
        let all = vec![true; n];
        let topo = match &p.keys {
            Some(k) => topo_order_by(&dg, &all, k),
            None => topo_order(&dg, &all),
        };
        let Some(order) = topo.and_then(|t| Order::seeded(n, &t, &known)) else {
            // The known dependencies alone close a G1c.
            return Solution::None(Self::guess(g, p));
        };
        let a_first = Self::a_first(&p.keys);
        let mut enc = encode(g, &p.pruned.forced, order, budget, a_first, map);
        let mut inexact = false;
        let ww_by_key = ww_by_key(g);
        let simple_only = levels.iter().any(|l| !l.walks_do());
        let Doubts {
            fake, fake_of, out, ..
        } = &p.doubts;
        let search = &mut p.search;
        let Solved {
            verdict,
            last,
            lemmas,
        } = solve(&mut enc, &p.pruned.forced, |conds, value| {
            // A choice whose write orders of one key are no order at all
            // first learns that they are not.
            let unordered = one_key_cycles(g, &ww_by_key, n, &|e| conds.holds(e, value));
            if !unordered.is_empty() {
                return unordered.iter().map(|c| conds.against(c)).collect();
            }
            let real = |e: EdgeId| {
                !out[e as usize]
                    && conds.holds(e, value)
                    && fake_of.get(e as usize).is_none_or(|&f| {
                        f == u32::MAX
                            || !fake[f as usize]
                                .needs
                                .iter()
                                .flatten()
                                .all(|&x| conds.holds(x, value))
                    })
            };
            let adya = simple_only.then(|| Adya::of(g, &ww_by_key, &real));
            let (cycles, cut) = violations(
                g,
                n,
                levels,
                (&real, adya.as_ref()),
                MAX_LEMMAS_PER_MODEL,
                search,
            );
            inexact |= cut && cycles.is_empty();
            let mut clauses: Vec<Vec<Lit>> = Vec::new();
            for (c, simple) in &cycles {
                let c = match (&adya, simple) {
                    (Some(a), true) => a.with_grounds(c),
                    _ => c.clone(),
                };
                let Some(more) = against_real(conds, &c, fake, fake_of) else {
                    // Too many ways out to write down: no verdict.
                    inexact = true;
                    return Vec::new();
                };
                clauses.extend(more);
            }
            clauses
        });
        stats.solver_conflicts = enc.theory.conflicts + lemmas as u64;
        if verdict == lbool::FALSE {
            return Solution::None(last.unwrap_or_else(|| Self::guess(g, p)));
        }
        if verdict != lbool::TRUE || inexact {
            return Solution::Unknown;
        }
        Solution::Found
    }

    fn tell(
        &self,
        h: &History,
        g: &Polygraph,
        p: &mut ShapesPruned,
        choice: lemmas::Choice,
        _: Budget,
        _: &mut Stats,
    ) -> Option<Vec<Anomaly>> {
        let d = &p.doubts;
        let a = tell(
            h,
            g,
            &self.levels,
            self.claim,
            (&choice, &d.out, &d.fake),
            &mut p.search,
        );
        Some(vec![a.unwrap_or_else(|| Anomaly::new(self.claim))])
    }
}

/// Takes out of `g` the anti-dependencies of readers on a key they write
/// (see [`check`]): off its lists, and marked in what it returns (the
/// edges stay, unconditioned, in `g.edges`).
fn drop_doubtful(h: &History, g: &mut Polygraph) -> Vec<bool> {
    let out = doubtful_edges(h, g);
    let keep = |e: &EdgeId| !out[*e as usize];
    g.known.retain(keep);
    g.cond_known.retain(|(_, e)| keep(e));
    for con in &mut g.constraints {
        con.either.retain(keep);
        con.or.retain(keep);
        con.either_if.retain(|(_, e)| keep(e));
        con.or_if.retain(|(_, e)| keep(e));
    }
    out
}

/// Per edge of `g`, whether it is a doubtful anti-dependency (see
/// [`check`]): a reader's on a key it writes, but a known one onto a
/// list's version the reads show.
fn doubtful_edges(h: &History, g: &Polygraph) -> Vec<bool> {
    let mut writes: rustc_hash::FxHashSet<(TxnId, KeyId)> = rustc_hash::FxHashSet::default();
    for (t, txn) in h.txns.iter().enumerate() {
        for m in &h.mops[txn.mops()] {
            if m.is_write() {
                writes.insert((t as TxnId, m.key));
            }
        }
    }
    // A list's versions the reads show: a known anti-dependency on one of
    // them is on the version right after the one read (the reader's own
    // comes later, or is not shown), so it is Adya's.
    let mut shown: rustc_hash::FxHashSet<(TxnId, KeyId)> = rustc_hash::FxHashSet::default();
    if h.workload == Some(Workload::ListAppend) {
        for (k, o) in h.orders.iter().enumerate() {
            for &w in &o.writes {
                if (w as usize) < h.mops.len() {
                    shown.insert((h.txn_of(w), k as KeyId));
                }
            }
        }
    }
    let edges = &g.edges;
    let keep = |e: &EdgeId| {
        let ed = edges[*e as usize];
        ed.kind != EdgeKind::Rw || !writes.contains(&(ed.a, ed.key))
    };
    let out: Vec<bool> = (0..edges.len() as EdgeId).map(|e| !keep(&e)).collect();
    let mut out = out;
    for &e in &g.known {
        let ed = edges[e as usize];
        if shown.contains(&(ed.b, ed.key)) {
            out[e as usize] = false;
        }
    }
    out
}

/// Which anti-dependencies of a choice are Adya's. The polygraph gives a
/// reader of a version an anti-dependency on every later writer of its
/// key (`r -> w2` beside `r -> w1 -> w2`), which changes no closed walk's
/// count of anti-dependencies, so the levels walks decide may take them;
/// but a simple cycle through `r -> w2` may be none through `r -> w1`, so
/// a level that needs simple cycles ([`Kind::Nonadjacent`]) takes only
/// the anti-dependency on the version right after the one read. A cycle
/// found so rests also on the write orders that leave no writer between
/// the two ([`Adya::with_grounds`]), so the clause against it rules out
/// only the choices it is a cycle of.
struct Adya {
    /// Per edge: an anti-dependency on a writer past the next.
    later: Vec<bool>,
    /// The write-write edges that make a kept anti-dependency's writer
    /// the next one: each other writer of the key before the version
    /// read, or after the writer.
    grounds: rustc_hash::FxHashMap<EdgeId, Vec<EdgeId>>,
}

impl Adya {
    /// The anti-dependencies of the choice whose edges `on` holds.
    fn of(g: &Polygraph, ww_by_key: &[Vec<EdgeId>], on: &dyn Fn(EdgeId) -> bool) -> Adya {
        use rustc_hash::FxHashMap;
        let mut ww: FxHashMap<(KeyId, TxnId, TxnId), EdgeId> = FxHashMap::default();
        let mut writers: Vec<Vec<TxnId>> = vec![Vec::new(); ww_by_key.len()];
        for (k, es) in ww_by_key.iter().enumerate() {
            for &e in es {
                let ed = g.edges[e as usize];
                writers[k].extend([ed.a, ed.b]);
                if on(e) {
                    ww.insert((ed.key, ed.a, ed.b), e);
                }
            }
            writers[k].sort_unstable();
            writers[k].dedup();
        }
        // The writer each read observed, where the choice says.
        let mut read_from: FxHashMap<(KeyId, TxnId, Val), TxnId> = FxHashMap::default();
        for (e, ed) in g.edges.iter().enumerate() {
            if ed.kind == EdgeKind::Wr && on(e as EdgeId) {
                read_from.insert((ed.key, ed.b, ed.va), ed.a);
            }
        }
        let mut later = vec![false; g.edges.len()];
        let mut grounds = FxHashMap::default();
        for (e, ed) in g.edges.iter().enumerate() {
            let e = e as EdgeId;
            if ed.kind != EdgeKind::Rw || !on(e) {
                continue;
            }
            let from = read_from.get(&(ed.key, ed.a, ed.va)).copied();
            let all = writers.get(ed.key as usize).map_or(&[][..], Vec::as_slice);
            budget::spend(all.len() as u64 + 1);
            let held = |a: TxnId, b: TxnId| ww.get(&(ed.key, a, b)).copied();
            let mut why = Vec::new();
            for &x in all {
                if x == ed.b || Some(x) == from {
                    continue;
                }
                let before = from.and_then(|p| held(x, p));
                if let Some(w) = before.or_else(|| held(ed.b, x)) {
                    why.push(w);
                } else if from.is_none_or(|p| held(p, x).is_some()) && held(x, ed.b).is_some() {
                    // x is a version between the one read and b's.
                    later[e as usize] = true;
                    break;
                }
            }
            if !later[e as usize] {
                grounds.insert(e, why);
            }
        }
        Adya { later, grounds }
    }

    /// Whether `e` is an anti-dependency on a writer past the next.
    fn later(&self, e: EdgeId) -> bool {
        self.later[e as usize]
    }

    /// The cycle `c` with the write orders its anti-dependencies rest on.
    fn with_grounds(&self, c: &[EdgeId]) -> Vec<EdgeId> {
        let mut out = c.to_vec();
        for e in c {
            out.extend(self.grounds.get(e).into_iter().flatten());
        }
        out
    }
}

/// The write-write edges of `g`, per key.
fn ww_by_key(g: &Polygraph) -> Vec<Vec<EdgeId>> {
    let mut by: Vec<Vec<EdgeId>> = Vec::new();
    for (e, ed) in g.edges.iter().enumerate() {
        if ed.kind == EdgeKind::Ww {
            let k = ed.key as usize;
            if by.len() <= k {
                by.resize(k + 1, Vec::new());
            }
            by[k].push(e as EdgeId);
        }
    }
    by
}

/// Per key whose holding write-write edges (`on`) close a cycle, one such
/// cycle's edges: the choice orders that key's versions in no order (the
/// solver chooses each pair of writers apart, and nothing else makes the
/// pairs agree where no cycle of dependencies is ruled out).
fn one_key_cycles(
    g: &Polygraph,
    by_key: &[Vec<EdgeId>],
    n: usize,
    on: &dyn Fn(EdgeId) -> bool,
) -> Vec<Vec<EdgeId>> {
    let mut out = Vec::new();
    for es in by_key.iter().filter(|es| es.len() > 2) {
        let held: Vec<EdgeId> = es.iter().copied().filter(|&e| on(e)).collect();
        let pairs: Vec<(u32, u32)> = held
            .iter()
            .map(|&e| (g.edges[e as usize].a, g.edges[e as usize].b))
            .collect();
        let dg = Digraph::from_edges(n, &pairs);
        let c = sccs(&dg);
        let Some(&comp) = c.cyclic(&dg).first() else {
            continue;
        };
        let inside = |v: u32| c.comp[v as usize] == comp;
        let Some(&(a, b)) = pairs.iter().find(|&&(a, b)| inside(a) && inside(b)) else {
            continue;
        };
        let Some(path) = crate::check::graph::shortest_path(&dg, b, a, inside) else {
            continue;
        };
        let edge = |x: u32, y: u32| {
            held.iter()
                .copied()
                .find(|&e| g.edges[e as usize].a == x && g.edges[e as usize].b == y)
        };
        let cycle: Option<Vec<EdgeId>> = std::iter::once((a, b))
            .chain(path.windows(2).map(|w| (w[0], w[1])))
            .map(|(x, y)| edge(x, y))
            .collect();
        out.extend(cycle);
    }
    out
}

/// The clauses that rule out the cycle `c` of a choice, its doubtful
/// edges held as in [`check`]'s exact form: some edge of it does not hold,
/// or one of its doubtful edges' [`Fake::needs`] all hold (one clause per
/// pick of one need's literal from each); None past 64 clauses.
fn against_real(
    conds: &lemmas::Conds,
    c: &[EdgeId],
    fake: &[Fake],
    fake_of: &[u32],
) -> Option<Vec<Vec<Lit>>> {
    let base = conds.against(c);
    let mut out: Vec<Vec<Lit>> = vec![base];
    for &e in c {
        let Some(&f) = fake_of.get(e as usize).filter(|&&f| f != u32::MAX) else {
            continue;
        };
        let needs = fake[f as usize].needs;
        // A need pruning ruled out never holds: the edge is real in every
        // choice, and the cycle's own clause is the whole of it.
        if needs.iter().flatten().any(|&x| conds.off[x as usize]) {
            continue;
        }
        let lits: Vec<Lit> = needs
            .iter()
            .flatten()
            .flat_map(|&x| conds.lits[x as usize].iter().flatten().copied())
            .collect();
        if lits.is_empty() {
            continue;
        }
        if out.len() * lits.len() > 64 {
            return None;
        }
        out = out
            .iter()
            .flat_map(|cl| {
                lits.iter().map(move |&l| {
                    let mut cl = cl.clone();
                    cl.push(l);
                    cl.sort_unstable();
                    cl.dedup();
                    cl
                })
            })
            .collect();
    }
    Some(out)
}

/// One ruled-out cycle of a full choice, as Elle names its steps: the
/// simple one with the fewest steps through session order or real time,
/// then the shortest. Its steps through write orders a constraint chose
/// are marked assumed, and then it claims `claim` (every order closes
/// some ruled-out cycle; this one's type is this order's), the writers
/// of those orders listed as `:unordered`.
fn tell(
    h: &History,
    g: &Polygraph,
    levels: &[Level],
    claim: AnomalyType,
    (choice, out, fake): (&lemmas::Choice, &[bool], &[Fake]),
    search: &mut Search,
) -> Option<Anomaly> {
    let (mut on, by) = lemmas::chosen(g, (&choice.0, &choice.1));
    for f in fake {
        if f.needs.iter().flatten().all(|&x| on[x as usize]) {
            on[f.edge as usize] = false;
        }
    }
    for (o, &x) in on.iter_mut().zip(out) {
        *o &= !x;
    }
    let held = |e: EdgeId| on[e as usize];
    let adya = levels
        .iter()
        .any(|l| !l.walks_do())
        .then(|| Adya::of(g, &ww_by_key(g), &held));
    let (walks, _) = violations(
        g,
        h.txns.len(),
        levels,
        (&held, adya.as_ref()),
        MAX_TELL,
        search,
    );
    let ordered = |e: &EdgeId| {
        !matches!(
            g.edges[*e as usize].kind,
            EdgeKind::Process | EdgeKind::Realtime
        )
    };
    let cyc = walks
        .iter()
        .filter_map(|(w, _)| levels.iter().find_map(|&l| simple_piece(g, l, w)))
        .min_by_key(|c| (c.iter().filter(|e| !ordered(e)).count(), c.len()))?;
    let mut a = cycle_anomaly(h, g, &cyc);
    let assumed = |e: &EdgeId| by[*e as usize].is_some();
    if cyc.iter().any(assumed) {
        mark_steps(&mut a, &cyc, assumed, Grounds::Assumed);
        a.rules_out = Some(claim);
        let mut unordered: Vec<Datum> = Vec::new();
        for c in cyc.iter().filter_map(|e| by[*e as usize]) {
            let con = &g.constraints[c];
            for t in [con.a, con.c] {
                if !unordered.contains(&Datum::Txn(t)) {
                    unordered.push(Datum::Txn(t));
                }
            }
        }
        a = a.field(Field::Unordered, Datum::List(unordered));
    }
    Some(a)
}
