//! Prefix consistency and parallel snapshot isolation, sound and complete,
//! over snapshot isolation's polygraph: the two models between SI and
//! causal consistency, one allowing lost updates and no long fork, the
//! other long forks and no lost update.
//!
//! Theory. Both keep session order (Cerone's models). Write `Dep = SO ∪ WR
//! ∪ WW` for a choice `WW` of each key's version order and `RW` for the
//! anti-dependencies it brings.
//!
//! - Prefix consistency (Biswas & Enea, OOPSLA'19, §2): some total commit
//!   order `co ⊇ SO ∪ WR` such that when `t3` reads `x` from `t1` and
//!   `t2 != t1` writes `x` with `t2 co* t4 (WR ∪ SO) t3`, then `t2 co t1`.
//!   With `WW = co` restricted to each key, `t1 WW t2` is `t3 RW t2`, so the
//!   axiom says: for `t4 (SO ∪ WR) t3 RW t2`, `t4 co t2` (strictly).
//!   Hence a history is prefix consistent iff for some `WW`, `P = Dep ∪
//!   (SO ∪ WR) ; RW` is acyclic (a topological order of P is the commit
//!   order; conversely any valid `co` contains P). Unlike SI, an
//!   anti-dependency after a write-write step (`t2 WW t1 RW t2`: a lost
//!   update) closes no cycle, and unlike SI there is no write-conflict
//!   rule. P is plain acyclicity, so SI's machinery carries over with a
//!   different two-copy graph: node `t0` is "at t", `t1` is "at t, entered
//!   by a session or read step"; SO/WR `a -> b` is `a0 -> b0` and
//!   `a0 -> b1`, WW is `a0 -> b0`, RW is `a1 -> b0`. Its cycles are exactly
//!   P's.
//! - Parallel snapshot isolation (Sovran et al.; Cerone & Gotsman's
//!   characterization, JACM'18): some `WW` with `Dep+ ; RW?` irreflexive:
//!   `Dep` acyclic, and no anti-dependency `u RW v` with `v Dep+ u`: every
//!   cycle has at least two anti-dependencies. This is not acyclicity of
//!   one graph (a cycle of two anti-dependencies is allowed whether or not
//!   they are adjacent), so the solver keeps `Dep` acyclic with the same
//!   acyclicity theory, and each model it finds is checked for an
//!   anti-dependency that `Dep` leads back from; each one found becomes a
//!   clause (not all of the path's and the anti-dependency's conditions)
//!   and the solver goes on (lazy clause generation). It ends with a model
//!   that has none (valid) or with no model (a violation).
//!
//! The polygraph is SI's with session order: its write orders forced by a
//! dependency path, its anti-dependencies to the nearest later writer per
//! session only, its constraints coalesced per pair of writers and its
//! reads with several candidate writers all hold here, as each rests on
//! `Dep` being acyclic and on paths of `Dep` after an anti-dependency
//! (both models forbid a `Dep` cycle; `r RW c` left out for `r RW b Dep+ c`
//! leaves every forbidden cycle one). SI's pruning is not used: its graph
//! is SI's. Each level prunes on its own two-copy graph
//! (`Level::prune_map`; for PSI, copy 1 is "one anti-dependency taken",
//! so a side is ruled out when it closes a cycle of dependencies or one
//! with a single known anti-dependency anywhere on it).
//!
//! Data flow (the [`super::pipeline`], each [`Level`] one of its
//! levels): polygraph -> pruning to a fixpoint (a constraint neither
//! side of which can hold: violation) -> graph of the known edges (a
//! cycle: violation) ->
//! SAT with the acyclicity theory over the constraint sides (PSI: plus the
//! anti-dependency check per model) -> on no model, a cycle of one full
//! choice of the constraints (every choice has one) told as Elle names it,
//! its claim narrowed to the model checked.

use crate::check::budget::Budget;
use crate::check::tuning::{MAX_LEMMAS_PER_MODEL, MAX_WITNESS_SEARCHES};

use batsat::{Lit, lbool};

use super::acyclic::Order;
use super::cycles::cycle_through;
use super::lemmas::{
    self, Conds, Pruned, Solved, encode, first_writers, force_round, holding, solve,
};
use super::polygraph::{self, Edge, EdgeId, EdgeKind, Polygraph, Variant};
use super::solve::time_keys;
use super::tell::cycle_anomaly;
use super::{Outcome, Stats};
use crate::anomaly::{Anomaly, Datum, Field};
use crate::check::clocks::Vectors;
use crate::check::deps::{external_source, outside_from};
use crate::check::graph::{Digraph, sccs};
use crate::check::graph::{topo_order, topo_order_by};
use crate::history::model::*;
use crate::spec::{AnomalyType, Checker};

/// The model checked.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Prefix,
    ParallelSnapshotIsolation,
}

impl Level {
    /// The lattice anomaly a violation found here rules out models by
    /// (ours: a session finding, as both models keep session order).
    pub fn marker(self) -> AnomalyType {
        match self {
            Level::Prefix => AnomalyType::PrefixCycleExists,
            Level::ParallelSnapshotIsolation => AnomalyType::PsiCycleExists,
        }
    }

    /// Elle's name of the model.
    pub fn name(self) -> &'static str {
        match self {
            Level::Prefix => "prefix",
            Level::ParallelSnapshotIsolation => "parallel-snapshot-isolation",
        }
    }

    fn nodes(self, n: usize) -> usize {
        match self {
            Level::Prefix => 2 * n,
            Level::ParallelSnapshotIsolation => n,
        }
    }

    /// The edges of the level's graph for a polygraph edge (see the module
    /// doc); PSI's anti-dependencies are checked apart.
    fn map(self, e: &Edge, out: &mut Vec<(u32, u32)>) {
        let (a, b) = (e.a, e.b);
        match (self, e.kind) {
            (Level::Prefix, EdgeKind::Ww) => out.push((2 * a, 2 * b)),
            (Level::Prefix, EdgeKind::Rw) => out.push((2 * a + 1, 2 * b)),
            (Level::Prefix, _) => {
                out.push((2 * a, 2 * b));
                out.push((2 * a, 2 * b + 1));
            }
            (Level::ParallelSnapshotIsolation, EdgeKind::Rw) => {}
            (Level::ParallelSnapshotIsolation, _) => out.push((a, b)),
        }
    }

    /// The edges of the level's pruning graph for a polygraph edge, two
    /// nodes per transaction: prefix's graph; for PSI, node `2t` is "at t,
    /// no anti-dependency taken" and `2t + 1` "at t, one taken": a
    /// dependency `a -> b` is `2a -> 2b` and `2a+1 -> 2b+1`, an
    /// anti-dependency `2a -> 2b+1`. A path from `2c` to `2a` or `2a+1` is
    /// a path of `Dep` with at most one anti-dependency, so a cycle through
    /// `a -> c` has at most one; the graph's own cycles are `Dep`'s.
    fn prune_map(self, e: &Edge, out: &mut Vec<(u32, u32)>) {
        let (a, b) = (e.a, e.b);
        match (self, e.kind) {
            (Level::Prefix, _) => self.map(e, out),
            (Level::ParallelSnapshotIsolation, EdgeKind::Rw) => out.push((2 * a, 2 * b + 1)),
            (Level::ParallelSnapshotIsolation, _) => {
                out.push((2 * a, 2 * b));
                out.push((2 * a + 1, 2 * b + 1));
            }
        }
    }

    /// The transaction of a node.
    fn txn(self, v: u32) -> TxnId {
        match self {
            Level::Prefix => v / 2,
            Level::ParallelSnapshotIsolation => v,
        }
    }
}

/// Vector clocks over a graph of `copies` nodes per transaction (node
/// `copies * t + i` is copy `i` of `t`), sessions chains among the first
/// copies: a transaction's first copy raises its session's entry, so
/// `reaches(t, x)`, "t's first copy reaches node x", is exact.
struct Reach {
    clocks: Vectors,
    sess: Vec<u32>,
    pos: Vec<u32>,
}

impl Reach {
    fn new(h: &History, copies: u32, dg: &Digraph, topo: &[u32]) -> Reach {
        let sess: Vec<u32> = h.txns.iter().map(|t| t.session).collect();
        let pos: Vec<u32> = h.txns.iter().map(|t| t.seq + 1).collect();
        let mut clocks = Vectors::new(dg.len(), h.sessions.len());
        for &a in topo {
            let t = a / copies;
            if a % copies == 0 {
                clocks.raise(a, sess[t as usize], pos[t as usize]);
            }
            for &b in dg.out(a) {
                clocks.join(b, a);
            }
        }
        Reach { clocks, sess, pos }
    }

    fn reaches(&self, t: TxnId, x: u32) -> bool {
        self.clocks.get(x, self.sess[t as usize]) >= self.pos[t as usize]
    }
}

/// Prunes to a fixpoint (PolySI's Algorithm 1 on the level's pruning
/// graph, [`Level::prune_map`]): a side one of whose edges closes a
/// forbidden cycle with the known edges (PSI: a cycle of dependencies, or
/// one with a single anti-dependency) cannot hold, whatever the other
/// constraints choose, so the other side joins the known edges. Edges
/// under a selector never force anything.
fn prune(h: &History, g: &Polygraph, level: Level, budget: Budget) -> Pruned {
    let nodes = 2 * h.txns.len();
    let mut forced: Vec<Option<bool>> = vec![None; g.constraints.len()];
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for &e in &g.known {
        level.prune_map(&g.edges[e as usize], &mut edges);
    }
    let all = vec![true; nodes];
    let mut rounds = 0;
    loop {
        rounds += 1;
        let dg = Digraph::from_edges(nodes, &edges);
        let Some(topo) = topo_order(&dg, &all) else {
            return Pruned {
                forced,
                contradiction: true,
                rounds,
            };
        };
        if budget.expired() {
            break;
        }
        let r = Reach::new(h, 2, &dg, &topo);
        let bad = |side: &[EdgeId]| {
            side.iter().any(|&e| {
                let ed = g.edges[e as usize];
                let (a, c) = (ed.a, ed.b);
                match (level, ed.kind) {
                    (Level::Prefix, EdgeKind::Ww) => r.reaches(c, 2 * a),
                    (Level::Prefix, EdgeKind::Rw) => r.reaches(c, 2 * a + 1),
                    // `a RW c` with `c Dep+ a`.
                    (Level::ParallelSnapshotIsolation, EdgeKind::Rw) => r.reaches(c, 2 * a),
                    // A dependency `a -> c` closes a cycle of dependencies,
                    // or one with a single known anti-dependency.
                    (Level::ParallelSnapshotIsolation, EdgeKind::Ww) => {
                        r.reaches(c, 2 * a) || r.reaches(c, 2 * a + 1)
                    }
                    _ => false,
                }
            })
        };
        let take = |side: &[EdgeId]| {
            for &e in side {
                level.prune_map(&g.edges[e as usize], &mut edges);
            }
        };
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

/// Checks the levels among `checkers`, in order ([`tell`] adds what they
/// found to a run's findings).
pub fn run(
    h: &History,
    checkers: &std::collections::BTreeSet<Checker>,
    deadline: Option<std::time::Instant>,
) -> Vec<(Level, Outcome)> {
    let budget = Budget::until(deadline);
    checkers
        .iter()
        .filter_map(|&c| match c {
            Checker::Prefix => Some(Level::Prefix),
            Checker::ParallelSnapshotIsolation => Some(Level::ParallelSnapshotIsolation),
            _ => None,
        })
        .map(|level| {
            let _stage = crate::check::progress::Stage::enter(|| level.name().to_string());
            let mut o = check(h, level, budget);
            if !o.timed_out {
                // A level is decided by its whole polygraph alone.
                o.stats.decision = Some(super::Decision::Whole { bounded: false });
            }
            (level, o)
        })
        .collect()
}

/// Adds what [`run`] found to `found` and its notes to `notes`: a level
/// cut short leaves its marker; a cycle is told once, unless another
/// checker told the same cycle under another claim (SI's G-single-item
/// over a fractured read: its claim is not this level's).
pub fn tell(outcomes: Vec<(Level, Outcome)>, found: &mut Vec<Anomaly>, notes: &mut Vec<String>) {
    for (level, o) in outcomes {
        notes.extend(o.stats.notes(level.name(), "conflicts and lemmas"));
        if o.timed_out {
            found.push(Anomaly::search_timeout(level.marker().name()));
        }
        let mut told: rustc_hash::FxHashSet<_> = found.iter().map(Anomaly::identity).collect();
        for a in o.anomalies {
            if told.insert(a.identity()) {
                found.push(a);
            }
        }
    }
}

/// Checks one level: the [`super::pipeline`] over it.
pub fn check(h: &History, level: Level, budget: Budget) -> Outcome {
    super::pipeline::run(h, &level, budget).outcome()
}

/// SI's polygraph with session order, which both levels build on.
const SESSION_SI: Variant = Variant {
    serializable: false,
    session: true,
    realtime: false,
};

impl super::pipeline::Level for Level {
    type Built = ();
    type Pruned = Pruned;
    /// The choice of the constraints whose forbidden cycle is told, and
    /// whether, when it has none, the level's marker stands for it.
    type Unsat = (lemmas::Choice, bool);
    type Told = Vec<Anomaly>;

    fn build(&self, h: &History, budget: Budget) -> Option<(Polygraph, ())> {
        let mut g = polygraph::build(h, SESSION_SI, budget);
        if !(g.too_big || g.cut) {
            reads_after_own_appends(h, &mut g);
        }
        Some((g, ()))
    }

    fn prune(
        &self,
        h: &History,
        (g, ()): (&mut Polygraph, ()),
        budget: Budget,
        stats: &mut Stats,
    ) -> Pruned {
        let pruned = prune(h, g, *self, budget);
        let open = (0..g.constraints.len()).filter(|&c| pruned.forced[c].is_none());
        super::pipeline::figures(stats, g, pruned.rounds, open);
        pruned
    }

    fn pruned(
        &self,
        h: &History,
        g: &Polygraph,
        pruned: &mut Pruned,
        _: Budget,
        _: &mut Stats,
    ) -> Option<Vec<Anomaly>> {
        if !pruned.contradiction {
            return None;
        }
        // Some constraint closes a forbidden cycle either way: every
        // choice has one.
        let pick: Vec<bool> = pruned.forced.iter().map(|f| f.unwrap_or(true)).collect();
        let a = witness(h, g, *self, &pick, &first_writers(g));
        Some(vec![a.unwrap_or_else(|| Anomaly::new(self.marker()))])
    }

    fn solve(
        &self,
        h: &History,
        g: &Polygraph,
        pruned: &mut Pruned,
        budget: Budget,
        stats: &mut Stats,
    ) -> super::pipeline::Solution<(lemmas::Choice, bool)> {
        use super::pipeline::Solution;
        let level = *self;
        let nodes = level.nodes(h.txns.len());
        let mut known: Vec<(u32, u32)> = Vec::new();
        for &e in &g.known {
            level.map(&g.edges[e as usize], &mut known);
        }
        for (con, f) in g.constraints.iter().zip(&pruned.forced) {
            match f {
                Some(true) => con.either.iter(),
                Some(false) => con.or.iter(),
                None => continue,
            }
            .for_each(|&e| level.map(&g.edges[e as usize], &mut known));
        }
        let dg = Digraph::from_edges(nodes, &known);
        let all = vec![true; nodes];
        let keys = time_keys(h);
        let topo = match &keys {
            Some(k) => {
                let prio: Vec<u64> = (0..nodes as u32)
                    .map(|v| 2 * k[level.txn(v) as usize] + u64::from(v % 2))
                    .collect();
                topo_order_by(&dg, &all, &prio)
            }
            None => topo_order(&dg, &all),
        };
        let order = topo
            .as_ref()
            .and_then(|t| Order::seeded(nodes, t, &known).map(|o| (t, o)));
        let Some((topo, order)) = order else {
            // The known edges alone close a cycle: told in the forced
            // choice (no marker when it shows none).
            let pick: Vec<bool> = pruned.forced.iter().map(|f| f.unwrap_or(true)).collect();
            return Solution::None(((pick, first_writers(g)), false));
        };
        let mut rank = vec![0u32; nodes];
        for (i, &v) in topo.iter().enumerate() {
            rank[v as usize] = i as u32;
        }
        let first = |t: TxnId| -> u32 {
            match level {
                Level::Prefix => rank[2 * t as usize],
                Level::ParallelSnapshotIsolation => rank[t as usize],
            }
        };
        let a_first = |con: &polygraph::Constraint| first(con.a) < first(con.c);
        let mut enc = encode(g, &pruned.forced, order, budget, a_first, |e, out| {
            level.map(e, out)
        });
        let Solved {
            verdict,
            last,
            lemmas,
        } = solve(&mut enc, &pruned.forced, |conds, value| match level {
            Level::Prefix => Vec::new(),
            Level::ParallelSnapshotIsolation => psi_violations(h, g, conds, value),
        });
        stats.solver_conflicts = enc.theory.conflicts + lemmas as u64;
        if verdict == lbool::TRUE {
            return Solution::Found;
        }
        if verdict != lbool::FALSE {
            return Solution::Unknown;
        }
        // Every choice of the constraints has a forbidden cycle: tell the
        // one of PSI's latest model, else of the choice the starting order
        // suggests.
        let choice = last.unwrap_or_else(|| {
            let pick = g
                .constraints
                .iter()
                .zip(&pruned.forced)
                .map(|(con, f)| f.unwrap_or(first(con.a) < first(con.c)))
                .collect();
            (pick, first_writers(g))
        });
        Solution::None((choice, true))
    }

    fn tell(
        &self,
        h: &History,
        g: &Polygraph,
        _: &mut Pruned,
        ((pick, sel), marker): (lemmas::Choice, bool),
        _: Budget,
        _: &mut Stats,
    ) -> Option<Vec<Anomaly>> {
        let mut found: Vec<Anomaly> = witness(h, g, *self, &pick, &sel).into_iter().collect();
        if found.is_empty() && marker {
            found.push(Anomaly::new(self.marker()));
        }
        Some(found)
    }
}

/// Write-read edges of list reads after the reader's own appends, from
/// the writer of the element before them (see `deps::outside_from`). SI's
/// polygraph leaves them out, as the list order already gives that writer
/// a write-write edge to the reader, which SI's graph composes with an
/// anti-dependency as a read would; prefix does not (a lost update is
/// `WW ; RW`), so the read must count as one.
fn reads_after_own_appends(h: &History, g: &mut Polygraph) {
    let mut seen: Vec<(TxnId, TxnId, KeyId)> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        let t = t as TxnId;
        if !g.included[t as usize] || txn.status != Status::Committed {
            continue;
        }
        for i in txn.mops() {
            let m = &h.mops[i];
            if !m.is_read() || m.has(flag::EXTERNAL) {
                continue;
            }
            let (Some(w), Some(src)) = (outside_from(h, i), external_source(h, i, t)) else {
                continue;
            };
            if !g.included[src as usize] || seen.contains(&(src, t, m.key)) {
                continue;
            }
            seen.push((src, t, m.key));
            g.known.push(g.edges.len() as EdgeId);
            g.edges.push(Edge {
                a: src,
                b: t,
                kind: EdgeKind::Wr,
                key: m.key,
                va: h.mops[w as usize].val,
                vb: Val::NIL,
            });
        }
        seen.clear();
    }
}

/// PSI's check of a model whose `Dep` is acyclic: each anti-dependency
/// `u RW v` with `v Dep+ u`, as the clause that rules out its conditions
/// and those of the path's edges together. Reachability in `Dep` comes
/// from vector clocks over sessions (session order is part of `Dep`, so
/// sessions are chains and the clocks are exact).
fn psi_violations(
    h: &History,
    g: &Polygraph,
    conds: &Conds,
    value: &dyn Fn(Lit) -> bool,
) -> Vec<Vec<Lit>> {
    let n = h.txns.len();
    let es = holding(g, conds, value);
    let mut adj: Vec<Vec<(u32, EdgeId)>> = vec![Vec::new(); n];
    let mut dep = Vec::new();
    for &e in &es {
        let ed = g.edges[e as usize];
        if ed.kind.is_dep() {
            adj[ed.a as usize].push((ed.b, e));
            dep.push((ed.a, ed.b));
        }
    }
    let dg = Digraph::from_edges(n, &dep);
    let Some(topo) = topo_order(&dg, &vec![true; n]) else {
        return Vec::new();
    };
    let r = Reach::new(h, 1, &dg, &topo);
    let reaches = |x: TxnId, y: TxnId| r.reaches(x, y);
    let mut clauses = Vec::new();
    for &e in &es {
        let ed = g.edges[e as usize];
        if ed.kind.is_dep() || !reaches(ed.b, ed.a) {
            continue;
        }
        // Only transactions that reach `u` lie on a path to it: the search
        // keeps to them (the same shortest path, at a fraction of the cost).
        let to_u = |y: u32| reaches(y, ed.a);
        let Some(path) = cycle_through(&adj, ed.a, ed.b, e, to_u, |_| true) else {
            continue;
        };
        clauses.push(conds.against(&path));
        if clauses.len() >= MAX_LEMMAS_PER_MODEL {
            break;
        }
    }
    clauses
}

/// A forbidden cycle of one full choice (`pick[c]`: constraint `c` takes
/// its `either` side; `sel`: the selectors that hold), as Elle names its
/// steps, its claim narrowed to the level; None when that choice has none.
fn witness(
    h: &History,
    g: &Polygraph,
    level: Level,
    pick: &[bool],
    sel: &[bool],
) -> Option<Anomaly> {
    let (on, chosen) = lemmas::chosen(g, (pick, sel));
    let nodes = level.nodes(h.txns.len());
    let mut adj: Vec<Vec<(u32, EdgeId)>> = vec![Vec::new(); nodes];
    let mut plain = Vec::new();
    let mut buf = Vec::new();
    for e in (0..g.edges.len() as EdgeId).filter(|&e| on[e as usize]) {
        buf.clear();
        level.map(&g.edges[e as usize], &mut buf);
        for &(u, v) in &buf {
            adj[u as usize].push((v, e));
            plain.push((u, v));
        }
    }
    // Shortest cycle through an edge: a cycle of the level's graph, else
    // (PSI) an anti-dependency that dependencies lead back from.
    let mut best: Option<Vec<EdgeId>> = None;
    let mut searches = 0;
    // Cycles of data dependencies alone first (as SI's are told): a
    // session step rarely explains anything. Then the shortest.
    let data = |e: EdgeId| g.edges[e as usize].kind != EdgeKind::Process;
    let key = |c: &[EdgeId]| (!c.iter().all(|&e| data(e)), c.len());
    let mut consider = |c: Option<Vec<EdgeId>>| {
        searches += 1;
        if let Some(c) = c
            && best.as_ref().is_none_or(|b| key(&c) < key(b))
        {
            best = Some(c);
        }
        searches < MAX_WITNESS_SEARCHES
    };
    let dg = Digraph::from_edges(nodes, &plain);
    let comps = sccs(&dg);
    let mut cyclic = vec![false; comps.count()];
    for c in comps.cyclic(&dg) {
        cyclic[c as usize] = true;
    }
    if cyclic.contains(&true) {
        'all: for u in 0..nodes as u32 {
            let cu = comps.comp[u as usize];
            if !cyclic[cu as usize] {
                continue;
            }
            for &(v, e) in &adj[u as usize] {
                if comps.comp[v as usize] == cu {
                    let within = |x: u32| comps.comp[x as usize] == cu;
                    if data(e) && !consider(cycle_through(&adj, u, v, e, within, data)) {
                        break 'all;
                    }
                    if !consider(cycle_through(&adj, u, v, e, within, |_| true)) {
                        break 'all;
                    }
                }
            }
        }
    } else if level == Level::ParallelSnapshotIsolation {
        // `Dep` is acyclic: an anti-dependency that it leads back from,
        // tried where a topological order of `Dep` puts its head first.
        let topo = topo_order(&dg, &vec![true; nodes])?;
        let mut rank = vec![0u32; nodes];
        for (i, &v) in topo.iter().enumerate() {
            rank[v as usize] = i as u32;
        }
        for e in (0..g.edges.len() as EdgeId).filter(|&e| on[e as usize]) {
            let ed = g.edges[e as usize];
            if ed.kind == EdgeKind::Rw && rank[ed.b as usize] < rank[ed.a as usize] {
                if !consider(cycle_through(&adj, ed.a, ed.b, e, |_| true, data)) {
                    break;
                }
                if !consider(cycle_through(&adj, ed.a, ed.b, e, |_| true, |_| true)) {
                    break;
                }
            }
        }
    }
    let cyc = best?;
    let mut a = cycle_anomaly(h, g, &cyc);
    a.rules_out = Some(level.marker());
    let mut unordered: Vec<Datum> = Vec::new();
    for &e in &cyc {
        if let Some(c) = chosen[e as usize] {
            let con = &g.constraints[c];
            for t in [con.a, con.c] {
                if !unordered.contains(&Datum::Txn(t)) {
                    unordered.push(Datum::Txn(t));
                }
            }
        }
    }
    if !unordered.is_empty() {
        // No read fixes these writers' order: this cycle is the one of the
        // order tried; every other order closes one too.
        a = a.field(Field::Unordered, Datum::List(unordered));
    }
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> History {
        let l = crate::history::load_bytes(
            "t.edn",
            text.as_bytes().to_vec(),
            crate::history::LoadOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        l.history
    }

    fn valid(h: &History, level: Level) -> bool {
        let o = check(h, level, Budget::NONE);
        assert!(!o.timed_out);
        o.anomalies.is_empty()
    }

    const LOST_UPDATE: &str = r#"
{:type :invoke, :f :txn, :value [[:r :x nil] [:w :x 1]], :process 0, :index 0}
{:type :invoke, :f :txn, :value [[:r :x nil] [:w :x 2]], :process 1, :index 1}
{:type :ok, :f :txn, :value [[:r :x nil] [:w :x 1]], :process 0, :index 2}
{:type :ok, :f :txn, :value [[:r :x nil] [:w :x 2]], :process 1, :index 3}
"#;

    const LONG_FORK: &str = r#"
{:type :invoke, :f :txn, :value [[:w :x 1]], :process 0, :index 0}
{:type :invoke, :f :txn, :value [[:w :y 1]], :process 1, :index 1}
{:type :invoke, :f :txn, :value [[:r :x nil] [:r :y nil]], :process 2, :index 2}
{:type :invoke, :f :txn, :value [[:r :x nil] [:r :y nil]], :process 3, :index 3}
{:type :ok, :f :txn, :value [[:w :x 1]], :process 0, :index 4}
{:type :ok, :f :txn, :value [[:w :y 1]], :process 1, :index 5}
{:type :ok, :f :txn, :value [[:r :x 1] [:r :y nil]], :process 2, :index 6}
{:type :ok, :f :txn, :value [[:r :x nil] [:r :y 1]], :process 3, :index 7}
"#;

    #[test]
    fn lost_update_is_prefix_not_psi() {
        let h = load(LOST_UPDATE);
        assert!(valid(&h, Level::Prefix));
        let o = check(&h, Level::ParallelSnapshotIsolation, Budget::NONE);
        assert_eq!(o.anomalies.len(), 1);
        let a = &o.anomalies[0];
        assert_eq!(a.name(), "G-single-item");
        assert_eq!(a.rules_out, Some(Level::ParallelSnapshotIsolation.marker()));
    }

    #[test]
    fn a_level_counts_its_work() {
        // The pipeline's figures: what the level built and the work it did.
        let h = load(LOST_UPDATE);
        for level in [Level::Prefix, Level::ParallelSnapshotIsolation] {
            let o = check(&h, level, Budget::NONE);
            assert!(o.stats.work > 0, "{level:?}");
            assert!(o.stats.constraints_before > 0, "{level:?}");
        }
    }

    #[test]
    fn long_fork_is_psi_not_prefix() {
        let h = load(LONG_FORK);
        assert!(valid(&h, Level::ParallelSnapshotIsolation));
        let o = check(&h, Level::Prefix, Budget::NONE);
        assert_eq!(o.anomalies.len(), 1);
        let a = &o.anomalies[0];
        assert_eq!(a.name(), "G-nonadjacent-item");
        assert_eq!(a.rules_out, Some(Level::Prefix.marker()));
    }
}
