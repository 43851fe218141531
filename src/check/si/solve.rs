//! Solving a pruned polygraph: the open constraints go to a SAT solver
//! (batsat) with the acyclicity theory of [`super::acyclic`] over G2, and
//! the answer comes back as a [`Model`], an unsat core, or unknown.
//!
//! Data flow: [`split_lazy`] sets aside the constraints between writers
//! nobody read from; [`solve`] encodes the rest (one variable per
//! constraint, one per selector), seeds the theory's order from the
//! history's time ([`time_keys`], [`seeded_order`]) and runs the solver;
//! a model then orders the set-aside constraints ([`orient_lazy`], over
//! [`model_order`]), and any that fit neither way join the solver's share
//! for another round.

use crate::check::budget::{self, Budget};
use crate::check::tuning::{DECISION_WORK, PROPAGATE_AFTER, PROPAGATION_WALK};

use batsat::interface::SolverInterface;
use batsat::{Lit, lbool};
use rustc_hash::{FxHashMap, FxHashSet};

use super::G2;
use super::acyclic::{Acyclic, KNOWN, Order, Th};
use super::polygraph::{EdgeId, EdgeKind, Polygraph, Sel};
use crate::check::graph::{Digraph, topo_order, topo_order_by};
use crate::history::model::*;

/// Splits the open constraints into those the solver takes and those left
/// to order afterwards: pairs of writers nobody read from (each side only
/// write-write edges between the two). A solution of the rest that orders
/// them all without a cycle is a solution of the whole; an unsatisfiable
/// rest makes the whole unsatisfiable. For serializability they always
/// can be ordered (along a topological order of the solution's graph); for
/// SI, whose graph holds two copies of each transaction, one may fail, and
/// then joins the solver's share.
pub(super) fn split_lazy(g: &Polygraph, open: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let ww_only = |side: &[EdgeId]| {
        side.iter()
            .all(|&e| g.edges[e as usize].kind == EdgeKind::Ww)
    };
    open.iter().copied().partition(|&c| {
        let con = &g.constraints[c];
        !(ww_only(&con.either)
            && ww_only(&con.or)
            && con.either_if.is_empty()
            && con.or_if.is_empty())
    })
}

/// What [`solve_lazily`] ended with: the solver's answer and conflicts,
/// and the constraints it was given with the phases it last started from
/// (for an unsatisfiable core, asked again with the same).
pub(super) struct Lazily {
    pub result: Solved,
    pub conflicts: u64,
    pub open: Vec<usize>,
    phase: FxHashMap<usize, bool>,
}

impl Lazily {
    /// The constraints (and choices) of an unsatisfiable core of those it
    /// ended with, asked again from the same phases: only those its
    /// theory's cycles named are solved when it ended unsat (an
    /// unsatisfiable subset, [`Core::Named`]), else all of them.
    pub(super) fn core(
        &self,
        time_key: Option<&[u64]>,
        g: &Polygraph,
        g2: &G2,
        limits: (Budget, Option<u64>),
    ) -> Solved {
        let every: Vec<usize>;
        let (open, choices) = match &self.result {
            Solved::Unsat(cs, chs) => (cs, chs),
            _ => {
                every = (0..g.choices.len()).collect();
                (&self.open, &every)
            }
        };
        solve(
            time_key,
            g,
            g2,
            open,
            &self.phase,
            limits,
            Core::Guarded(choices),
        )
        .0
    }
}

/// What an unsat answer of [`solve`] names.
#[derive(Clone, Copy)]
pub(super) enum Core<'a> {
    /// The constraints and choices the theory's cycles named
    /// ([`super::acyclic::Acyclic::named`]): an unsatisfiable subset at no
    /// cost, not a minimal one.
    Named,
    /// An unsatisfiable core: each constraint solved, and each of these
    /// choices, gets an activation literal assumed true (the other
    /// choices hold always). Each assumption is a decision level of every
    /// descent, so the fewer constraints solved, the cheaper (measured:
    /// all 46k of the 262,144-txn causal store's first banded round at SI
    /// gave no core within the round's 1M decisions; the 127 its cycles
    /// named gave one in 0.45 s).
    Guarded(&'a [usize]),
}

/// Solves pruning's open constraints, those that [`split_lazy`] sets aside
/// ordered along each solution ([`orient_lazy`]) and handed to the solver
/// only where they close a cycle either way, until a solution orders
/// them all or none is left. `limits`: the budget and the decisions.
pub(super) fn solve_lazily(
    time_key: Option<&[u64]>,
    g: &Polygraph,
    g2: &G2,
    pruned_open: &[usize],
    known_graph: Option<&(Digraph, Vec<u32>)>,
    limits: (Budget, Option<u64>),
) -> Lazily {
    let (mut open, mut lazy) = split_lazy(g, pruned_open);
    let mut phase: FxHashMap<usize, bool> = FxHashMap::default();
    let mut conflicts = 0;
    loop {
        // Nothing to choose: the known graph (acyclic, as pruning found)
        // is the solution.
        let (result, c) = if open.is_empty() && g.choices.is_empty() {
            let model = Model {
                either: Vec::new(),
                sel: Vec::new(),
            };
            (Solved::Sat(model), 0)
        } else {
            solve(time_key, g, g2, &open, &phase, limits, Core::Named)
        };
        conflicts += c;
        let failed = match &result {
            Solved::Sat(model) => orient_lazy(g, g2, model, &lazy, known_graph),
            _ => Vec::new(),
        };
        if failed.is_empty() {
            return Lazily {
                result,
                conflicts,
                open,
                phase,
            };
        }
        if let Solved::Sat(model) = &result {
            phase = model.either.iter().copied().collect();
        }
        open.extend_from_slice(&failed);
        let failed: FxHashSet<usize> = failed.into_iter().collect();
        lazy.retain(|c| !failed.contains(c));
    }
}

/// Adds the model's graph to an order and then each lazy constraint's
/// side that closes no cycle (the one its writers' places suggest first);
/// returns the constraints neither side of which fits.
pub(super) fn orient_lazy(
    g: &Polygraph,
    g2: &G2,
    model: &Model,
    lazy: &[usize],
    known_graph: Option<&(Digraph, Vec<u32>)>,
) -> Vec<usize> {
    let sel_true = |s: Sel| model.sel[s as usize];
    // The model adds nothing to the known edges: start from pruning's
    // graph of them and its order (completed with the nodes that take no
    // part, which have no edges).
    let plain = model.either.is_empty() && !g.cond_known.iter().any(|&(s, _)| sel_true(s));
    let seeded = match known_graph {
        Some((dg, topo)) if plain && dg.len() == g2.nodes => {
            let mut topo = topo.clone();
            if topo.len() < g2.nodes {
                let mut placed = vec![false; g2.nodes];
                for &v in &topo {
                    placed[v as usize] = true;
                }
                topo.extend((0..g2.nodes as u32).filter(|&v| !placed[v as usize]));
            }
            let mut rank = vec![0u32; g2.nodes];
            for (i, &v) in topo.iter().enumerate() {
                rank[v as usize] = i as u32;
            }
            Some((rank, Order::from_graph(dg, &topo)))
        }
        _ => model_order(g, g2, model),
    };
    let Some((rank, mut order)) = seeded else {
        return lazy.to_vec();
    };
    let mut failed = Vec::new();
    let mut buf = Vec::new();
    for &c in lazy {
        let con = &g.constraints[c];
        let a_first =
            rank[g2.variant.g2_node(con.a) as usize] < rank[g2.variant.g2_node(con.c) as usize];
        let sides = if a_first {
            [&con.either, &con.or]
        } else {
            [&con.or, &con.either]
        };
        let fits = sides.iter().any(|side| {
            buf.clear();
            for &e in side.iter() {
                g2.map(g, e, &mut buf);
            }
            for (i, &(u, v)) in buf.iter().enumerate() {
                if order.add(u, v, KNOWN).is_err() {
                    for &(u, v) in buf[..i].iter().rev() {
                        order.remove_last(u, v);
                    }
                    return false;
                }
            }
            true
        });
        if !fits {
            failed.push(c);
        }
    }
    failed
}

/// The model's graph (known edges, those of true selectors and of the
/// chosen sides) in an incremental order, and each node's place in a
/// topological order of it; None when it has a cycle.
pub(super) fn model_order(g: &Polygraph, g2: &G2, model: &Model) -> Option<(Vec<u32>, Order)> {
    let mut es: Vec<EdgeId> = g.known.clone();
    let sel_true = |s: Sel| model.sel[s as usize];
    es.extend(
        g.cond_known
            .iter()
            .filter(|&&(s, _)| sel_true(s))
            .map(|&(_, e)| e),
    );
    for &(c, either) in &model.either {
        let con = &g.constraints[c];
        let (side, side_if) = if either {
            (&con.either, &con.either_if)
        } else {
            (&con.or, &con.or_if)
        };
        es.extend_from_slice(side);
        es.extend(
            side_if
                .iter()
                .filter(|&&(s, _)| sel_true(s))
                .map(|&(_, e)| e),
        );
    }
    let mut edges = Vec::new();
    for &e in &es {
        g2.map(g, e, &mut edges);
    }
    let dg = Digraph::from_edges(g2.nodes, &edges);
    // Cannot fail (the solver's theory keeps the graph acyclic).
    topo_order(&dg, &vec![true; g2.nodes]).and_then(|topo| seeded_order(g2.nodes, &topo, &edges))
}

/// Each node's place in `topo`, and an incremental order starting from it
/// that holds `edges`; None when the edges close a cycle.
pub(super) fn seeded_order(
    nodes: usize,
    topo: &[u32],
    edges: &[(u32, u32)],
) -> Option<(Vec<u32>, Order)> {
    let mut rank = vec![0u32; nodes];
    for (i, &v) in topo.iter().enumerate() {
        rank[v as usize] = i as u32;
    }
    let order = Order::seeded(nodes, topo, edges)?;
    Some((rank, order))
}

/// When each transaction most likely took effect, as a sort key: its
/// completion's place in the history, when the history pairs invocations
/// with completions. Otherwise (the text format, dbcop's, Cobra's) its
/// place in the file, when the file interleaves sessions: a log written as
/// transactions ran interleaves them, one written session by session (as
/// dbcop's are) tells nothing of time. Measured: guessing from the
/// interleaved order of a 400-transaction text history took SI from 1.5M
/// solver conflicts (40 s) to none; from VeriStrong's session-by-session
/// write-heavy history it made SI 4x slower.
pub(super) fn time_keys(h: &History) -> Option<Vec<u64>> {
    if h.txns
        .iter()
        .all(|t| t.invoke.is_some() && t.complete.index >= 0)
    {
        return Some(h.txns.iter().map(|t| t.complete.index as u64).collect());
    }
    interleaved(h).then(|| (0..h.txns.len() as u64).collect())
}

/// Whether, in the order of transaction ids (the file's), sessions come
/// back after other sessions' transactions more often than there are
/// sessions: never, in a file written session by session. Sessions of
/// fewer than two transactions on average cannot come back, and then the
/// file's order is the only one there is (a format may give every
/// transaction its own session: the 32k causal-store text history so
/// rewritten went to its whole polygraph, 78 s of pruning at SI and no
/// verdict, where its logged order gave a witness).
pub(super) fn interleaved(h: &History) -> bool {
    if h.txns.len() < 2 * h.sessions.len() {
        return true;
    }
    let mut seen = vec![false; h.sessions.len()];
    let mut returns = 0;
    let mut prev = u32::MAX;
    for t in &h.txns {
        if t.session != prev {
            let s = t.session as usize;
            returns += usize::from(seen[s]);
            seen[s] = true;
            prev = t.session;
        }
    }
    returns > h.sessions.len()
}

/// A solution: each open constraint's side (true: `either`), and each
/// selector's value.
pub(super) struct Model {
    pub(super) either: Vec<(usize, bool)>,
    pub(super) sel: Vec<bool>,
}

pub(super) enum Solved {
    Sat(Model),
    /// The constraints and the choices an unsatisfiable subset needs (as
    /// [`solve`]'s `core` asks: a core, or those the cycles named).
    Unsat(Vec<usize>, Vec<usize>),
    Unknown,
}

/// The G2 edges of labelled edges, grouped by selector (ascending).
pub(super) fn by_selector(
    g: &Polygraph,
    g2: &G2,
    es: &[(Sel, EdgeId)],
) -> Vec<(Sel, Vec<(u32, u32)>)> {
    let mut sorted = es.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<(Sel, Vec<(u32, u32)>)> = Vec::new();
    let mut buf = Vec::new();
    for (s, e) in sorted {
        buf.clear();
        g2.map(g, e, &mut buf);
        match out.last_mut() {
            Some((last, edges)) if *last == s => edges.extend_from_slice(&buf),
            _ => out.push((s, buf.clone())),
        }
    }
    out
}

/// A SAT solver that gives up when the budget runs out.
pub(super) fn solver_until(budget: Budget) -> batsat::Solver<batsat::callbacks::Basic> {
    let mut cb = batsat::callbacks::Basic::default();
    cb.set_stop(move || {
        budget::spend(DECISION_WORK);
        budget.expired()
    });
    batsat::Solver::new(Default::default(), cb)
}

/// Makes the solver give up, besides when the budget runs out, after
/// `decisions` decisions (counted as its checks for a reason to stop, one
/// per decision and per restart).
pub(super) fn stop_after(
    solver: &mut batsat::Solver<batsat::callbacks::Basic>,
    budget: Budget,
    decisions: u64,
) {
    let asked = std::cell::Cell::new(0u64);
    solver.cb_mut().set_stop(move || {
        asked.set(asked.get() + 1);
        budget::spend(DECISION_WORK);
        asked.get() > decisions || budget.expired()
    });
}

/// Solves the open constraints and the choices of reads with several
/// candidate writers; an unsat answer names constraints and choices as
/// `core` asks. The solver gives up when the budget runs out or after the
/// decisions given.
pub(super) fn solve(
    time_key: Option<&[u64]>,
    g: &Polygraph,
    g2: &G2,
    open: &[usize],
    phase: &FxHashMap<usize, bool>,
    (budget, decisions): (Budget, Option<u64>),
    core: Core<'_>,
) -> (Solved, u64) {
    // Which choices get an activation literal (and whether every
    // constraint does).
    let (guard_all, guard_choice) = match core {
        Core::Named => (false, Vec::new()),
        Core::Guarded(chs) => {
            let mut ch = vec![false; g.choices.len()];
            chs.iter().for_each(|&c| ch[c] = true);
            (true, ch)
        }
    };
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut buf = Vec::new();
    for &e in &g.known {
        buf.clear();
        g2.map(g, e, &mut buf);
        edges.extend_from_slice(&buf);
    }
    let dg = Digraph::from_edges(g2.nodes, &edges);
    // The order is made over the included transactions' nodes; the rest
    // (outside a part: no edge reaches them) follow, as they are. The
    // included ones keep their order among themselves, and a part's
    // check costs what its transactions do, not the whole's (a 32k
    // history's parts at serializability: a heap of every node each).
    let inside: Vec<bool> = (0..g2.nodes as u32)
        .map(|v| g.included[g2.txn(v) as usize])
        .collect();
    let all = if edges
        .iter()
        .all(|&(a, b)| inside[a as usize] && inside[b as usize])
    {
        inside
    } else {
        vec![true; g2.nodes]
    };
    let rest = |mut t: Vec<u32>| {
        t.extend((0..g2.nodes as u32).filter(|&v| !all[v as usize]));
        t
    };
    // Start from the order in which transactions most likely took effect,
    // and let the solver guess writes in that order: most guesses then add
    // edges that point forward and cost nothing.
    let prio: Vec<u64> = match time_key {
        Some(k) => (0..g2.nodes as u32)
            .map(|v| k[g2.txn(v) as usize])
            .collect(),
        None => Vec::new(),
    };
    // Without real time or sessions, no order is a good guess (measured:
    // guessing one made plain SI on text histories 50x slower).
    let guess = time_key.is_some() || g2.variant.session;
    let topo = match time_key {
        Some(_) => topo_order_by(&dg, &all, &prio),
        None => topo_order(&dg, &all),
    }
    .map(rest);
    // For SI, keep each transaction's two copies together: order by where
    // the first copy stands (a dependency into `t` enters its first copy,
    // so `t1` can follow `t0` at once), which makes the edges a guessed
    // write order brings point forward, as the first copies' places
    // suggest.
    let topo = match topo {
        Some(t) if !g2.variant.serializable && time_key.is_none() => {
            let mut at = vec![0u64; g2.nodes];
            for (i, &v) in t.iter().enumerate() {
                at[v as usize] = i as u64;
            }
            let prio: Vec<u64> = (0..g2.nodes as u32)
                .map(|v| 2 * at[g2.variant.g2_node(g2.txn(v)) as usize] + u64::from(v % 2))
                .collect();
            topo_order_by(&dg, &all, &prio).map(rest)
        }
        t => t,
    };
    let Some((rank, order)) = topo.and_then(|topo| seeded_order(g2.nodes, &topo, &edges)) else {
        return (Solved::Unsat(Vec::new(), Vec::new()), 0);
    };
    let mut theory = Acyclic::new(order);
    theory.budget = PROPAGATION_WALK;
    theory.after = PROPAGATE_AFTER;
    let mut solver = solver_until(budget);
    if let Some(n) = decisions {
        stop_after(&mut solver, budget, n);
    }
    let mut assumptions: Vec<Lit> = Vec::new();
    let mut selector_of: Vec<(Lit, usize)> = Vec::new();
    let mut activation_of: Vec<(Lit, usize)> = Vec::new();
    // Reads with several candidate writers: exactly one selector true.
    // Guess that a read observed the candidate that comes last before it
    // in the starting order (else the first one).
    let mut likely = vec![false; g.selectors as usize];
    for ch in &g.choices {
        let at = |t: TxnId| rank[g2.variant.g2_node(t) as usize];
        let r = at(ch.reader);
        let pick = (0..ch.writers.len())
            .filter(|&j| at(ch.writers[j]) < r)
            .max_by_key(|&j| at(ch.writers[j]))
            .or_else(|| (0..ch.writers.len()).min_by_key(|&j| at(ch.writers[j])));
        if let Some(j) = pick {
            likely[ch.first as usize + j] = true;
        }
    }
    let sel: Vec<Lit> = likely
        .iter()
        .map(|&p| {
            let pol = if guess { lbool::new(p) } else { lbool::UNDEF };
            Lit::new(solver.new_var(pol, true), true)
        })
        .collect();
    for (i, ch) in g.choices.iter().enumerate() {
        let lits: Vec<Lit> = (0..ch.writers.len())
            .map(|j| sel[ch.first as usize + j])
            .collect();
        let mut clause = lits.clone();
        if guard_choice.get(i).copied().unwrap_or(false) {
            let a = Lit::new(solver.new_var_default(), true);
            assumptions.push(a);
            activation_of.push((a, i));
            clause.push(!a);
        }
        solver.add_clause_reuse(&mut clause);
        for (j, &x) in lits.iter().enumerate() {
            for &y in &lits[j + 1..] {
                solver.add_clause_reuse(&mut vec![!x, !y]);
            }
        }
    }
    for (s, edges) in by_selector(g, g2, &g.cond_known) {
        theory.add_group(vec![sel[s as usize]], edges);
    }
    let mut vars: Vec<(usize, Lit)> = Vec::with_capacity(open.len());
    for &c in open {
        let con = &g.constraints[c];
        let a_first =
            rank[g2.variant.g2_node(con.a) as usize] < rank[g2.variant.g2_node(con.c) as usize];
        let pol = match phase.get(&c) {
            Some(&p) => lbool::new(p),
            None if guess => lbool::new(a_first),
            None => lbool::UNDEF,
        };
        let v = Lit::new(solver.new_var(pol, true), true);
        vars.push((c, v));
        let side = |s: &[EdgeId]| {
            let mut out = Vec::new();
            let mut b = Vec::new();
            for &e in s {
                b.clear();
                g2.map(g, e, &mut b);
                out.extend_from_slice(&b);
            }
            out
        };
        let (either, or) = (side(&con.either), side(&con.or));
        let mut guard = Vec::new();
        if guard_all {
            let s = Lit::new(solver.new_var_default(), true);
            assumptions.push(s);
            selector_of.push((s, c));
            guard.push(s);
        }
        let with = |extra: &[Lit]| {
            let mut l = guard.clone();
            l.extend_from_slice(extra);
            l
        };
        theory.add_group(with(&[v]), either);
        theory.add_group(with(&[!v]), or);
        for (s, edges) in by_selector(g, g2, &con.either_if) {
            theory.add_group(with(&[v, sel[s as usize]]), edges);
        }
        for (s, edges) in by_selector(g, g2, &con.or_if) {
            theory.add_group(with(&[!v, sel[s as usize]]), edges);
        }
    }
    let r = solver.solve_limited_th(&mut Th(&mut theory), &assumptions);
    let conflicts = theory.conflicts;
    if r == lbool::TRUE {
        let is_true = |l: Lit| (solver.value_var(l.var()) ^ !l.sign()) == lbool::TRUE;
        let model = Model {
            either: vars.iter().map(|&(c, v)| (c, is_true(v))).collect(),
            sel: sel.iter().map(|&l| is_true(l)).collect(),
        };
        (Solved::Sat(model), conflicts)
    } else if r == lbool::FALSE && matches!(core, Core::Named) {
        let named = |l: Lit| theory.named(l);
        let cs: Vec<usize> = vars
            .iter()
            .filter(|&&(_, v)| named(v))
            .map(|&(c, _)| c)
            .collect();
        let chs: Vec<usize> = g
            .choices
            .iter()
            .enumerate()
            .filter(|(_, ch)| (0..ch.writers.len()).any(|j| named(sel[ch.first as usize + j])))
            .map(|(i, _)| i)
            .collect();
        (Solved::Unsat(cs, chs), conflicts)
    } else if r == lbool::FALSE {
        let core_lits: FxHashSet<Lit> = solver.unsat_core().iter().map(|&l| !l).collect();
        // What the core's assumptions stand for, in order.
        let in_core = |of: &[(Lit, usize)]| {
            let mut xs: Vec<usize> = of
                .iter()
                .filter(|(s, _)| core_lits.contains(s))
                .map(|&(_, c)| c)
                .collect();
            xs.sort_unstable();
            xs
        };
        (
            Solved::Unsat(in_core(&selector_of), in_core(&activation_of)),
            conflicts,
        )
    } else {
        (Solved::Unknown, conflicts)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{PLAIN_SER, generated};
    use super::super::variants::Checks;
    use crate::check::budget;
    use crate::generator::{Db, Distribution, Fault, GenOptions};
    use crate::history::Workload;

    /// Issue 52's untuned sibling: two sessions of 1,000 two-op
    /// transactions over `keys` keys in a causal store with stale session
    /// reads (`elle-si gen --workload rw-register --db causal --sessions 2
    /// --txns-per-session 1000 --ops-per-txn 2 --keys K --distribution
    /// uniform --read-ratio 0.5 --seed 252 --stale-session-read 0.02`).
    fn two_sessions(keys: u64) -> crate::history::model::History {
        let opts = GenOptions {
            sessions: 2,
            txns_per_session: 1000,
            ops_per_txn: 2,
            keys,
            distribution: Distribution::Uniform,
            read_ratio: 0.5,
            workload: Workload::RwRegister,
            db: Db::Causal,
            seed: 252,
            ..GenOptions::default()
        }
        .with_fault(Fault::StaleSessionRead, 0.02);
        generated(&opts)
    }

    /// Work a plain serializability check of [`two_sessions`] may take:
    /// about 5 s of CPU at the meter's rate (the 20-key history is refuted
    /// in 272M units, 4.4 s of CPU, by a growing window after the whole
    /// polygraph's solver stalled).
    const TWO_SESSIONS_WORK: u64 = 1_000_000_000;

    /// The verdict and the work of a plain serializability check.
    fn checked(keys: u64) -> (bool, bool, u64) {
        let h = two_sessions(keys);
        let before = budget::spent();
        let o = Checks::new(&h, None).check(PLAIN_SER);
        (
            o.timed_out,
            o.anomalies.is_empty(),
            budget::spent() - before,
        )
    }

    #[test]
    fn the_two_session_sibling_with_20_keys_is_refuted_within_its_work() {
        let (undecided, valid, work) = checked(20);
        assert!(!undecided && !valid, "INVALID at serializability");
        assert!(work <= TWO_SESSIONS_WORK, "{work} units");
    }

    /// The goal of issue 52, not met: with 30 keys the history is valid,
    /// and the whole polygraph's solver finds the witness only after
    /// about 14k conflicts and 22G units (188 s of CPU), most of them its
    /// theory's propagation walks once they start.
    #[test]
    #[ignore = "issue 52: the 30-key sibling is valid only after ~22G units of solving"]
    fn the_two_session_sibling_with_30_keys_is_decided_within_its_work() {
        let (undecided, valid, work) = checked(30);
        assert!(!undecided && valid, "VALID at serializability");
        assert!(work <= TWO_SESSIONS_WORK, "{work} units");
    }
}
