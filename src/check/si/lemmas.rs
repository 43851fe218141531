//! A polygraph as a SAT problem whose solutions are then checked for
//! cycles no acyclicity theory can state, each one found becoming a clause
//! (lazy clause generation): parallel snapshot isolation's anti-dependency
//! that dependencies lead back from ([`super::forks`]), and the cycles
//! anomalies asked for by name rule out ([`super::shapes`]).
//!
//! Data flow: pruning's forced sides and the open constraints ->
//! [`encode`]: one variable per open constraint (its first guess from a
//! starting order), one selector per candidate writer of a read with
//! several (exactly one true), the condition each edge holds under
//! ([`Conds`]), and the theory's groups for the edges its graph keeps ->
//! [`solve`]: solve, ask the caller's check for clauses, add them, again,
//! until a solution has none (valid), there is none (a violation: the
//! latest solution's choice is kept to tell it), or the budget ends.

use batsat::interface::SolverInterface;
use batsat::{Lit, lbool};

use super::acyclic::{Acyclic, Order, Th};
use super::polygraph::{Constraint, Edge, EdgeId, Polygraph};
use super::solve::solver_until;
use crate::check::budget::Budget;

/// The conditions under which each edge of the polygraph holds: a
/// constraint's side (its variable, or its negation) and a read's chosen
/// writer (a selector); none for known edges.
pub(super) struct Conds {
    pub lits: Vec<[Option<Lit>; 2]>,
    /// Edges of the side pruning ruled out: they never hold.
    pub off: Vec<bool>,
}

impl Conds {
    pub fn holds(&self, e: EdgeId, value: &dyn Fn(Lit) -> bool) -> bool {
        !self.off[e as usize] && self.lits[e as usize].iter().flatten().all(|&l| value(l))
    }

    /// The clause that rules out every edge of `edges` holding together.
    pub fn against(&self, edges: &[EdgeId]) -> Vec<Lit> {
        let mut clause: Vec<Lit> = edges
            .iter()
            .flat_map(|&x| self.lits[x as usize].iter().flatten().map(|&l| !l))
            .collect();
        clause.sort_unstable();
        clause.dedup();
        clause
    }
}

/// The problem: the solver, the theory, each edge's condition, each open
/// constraint's variable (in the order of the constraints) and each
/// selector.
pub(super) struct Encoding {
    pub solver: batsat::Solver<batsat::callbacks::Basic>,
    pub theory: Acyclic,
    pub conds: Conds,
    pub vars: Vec<Lit>,
    pub sel: Vec<Lit>,
}

/// Encodes `g`, the sides pruning forced being `forced`: the theory keeps
/// the graph `map` makes of each edge acyclic, starting from `order`;
/// each open constraint's variable first guesses its `either` side where
/// `a_first` says so.
pub(super) fn encode(
    g: &Polygraph,
    forced: &[Option<bool>],
    order: Order,
    budget: Budget,
    a_first: impl Fn(&Constraint) -> bool,
    map: impl Fn(&Edge, &mut Vec<(u32, u32)>),
) -> Encoding {
    let mut theory = Acyclic::new(order);
    let mut solver = solver_until(budget);
    let mut conds = Conds {
        lits: vec![[None, None]; g.edges.len()],
        off: vec![false; g.edges.len()],
    };
    // Selectors: exactly one candidate writer per read.
    let sel: Vec<Lit> = (0..g.selectors)
        .map(|_| Lit::new(solver.new_var_default(), true))
        .collect();
    for ch in &g.choices {
        let lits: Vec<Lit> = (0..ch.writers.len())
            .map(|j| sel[ch.first as usize + j])
            .collect();
        solver.add_clause_reuse(&mut lits.clone());
        for (j, &x) in lits.iter().enumerate() {
            for &y in &lits[j + 1..] {
                solver.add_clause_reuse(&mut vec![!x, !y]);
            }
        }
    }
    let mut buf = Vec::new();
    let mut group = |theory: &mut Acyclic, lits: Vec<Lit>, es: &[EdgeId]| {
        let mut edges = Vec::new();
        for &e in es {
            buf.clear();
            map(&g.edges[e as usize], &mut buf);
            edges.extend_from_slice(&buf);
        }
        if !edges.is_empty() {
            theory.add_group(lits, edges);
        }
    };
    for &(s, e) in &g.cond_known {
        conds.lits[e as usize] = [Some(sel[s as usize]), None];
        group(&mut theory, vec![sel[s as usize]], &[e]);
    }
    for (con, f) in g.constraints.iter().zip(forced) {
        let Some(side) = *f else { continue };
        let (off, off_if, on_if) = if side {
            (&con.or, &con.or_if, &con.either_if)
        } else {
            (&con.either, &con.either_if, &con.or_if)
        };
        for &e in off.iter().chain(off_if.iter().map(|(_, e)| e)) {
            conds.off[e as usize] = true;
        }
        for &(s, e) in on_if {
            conds.lits[e as usize] = [Some(sel[s as usize]), None];
            group(&mut theory, vec![sel[s as usize]], &[e]);
        }
    }
    let mut vars: Vec<Lit> = Vec::new();
    for (con, _) in g
        .constraints
        .iter()
        .zip(forced)
        .filter(|(_, f)| f.is_none())
    {
        let v = Lit::new(solver.new_var(lbool::new(a_first(con)), true), true);
        vars.push(v);
        for &e in &con.either {
            conds.lits[e as usize] = [Some(v), None];
        }
        for &e in &con.or {
            conds.lits[e as usize] = [Some(!v), None];
        }
        group(&mut theory, vec![v], &con.either);
        group(&mut theory, vec![!v], &con.or);
        for &(s, e) in &con.either_if {
            conds.lits[e as usize] = [Some(v), Some(sel[s as usize])];
            group(&mut theory, vec![v, sel[s as usize]], &[e]);
        }
        for &(s, e) in &con.or_if {
            conds.lits[e as usize] = [Some(!v), Some(sel[s as usize])];
            group(&mut theory, vec![!v, sel[s as usize]], &[e]);
        }
    }
    Encoding {
        solver,
        theory,
        conds,
        vars,
        sel,
    }
}

/// A full choice: the side each constraint takes (`true`: `either`) and
/// which selectors hold.
pub(super) type Choice = (Vec<bool>, Vec<bool>);

/// What [`solve`] ended with.
pub(super) struct Solved {
    /// True: a solution the check found nothing in; false: none; else
    /// undecided (the budget ran out).
    pub verdict: lbool,
    /// The latest solution the check found something in.
    pub last: Option<Choice>,
    /// Clauses the check gave.
    pub lemmas: usize,
}

/// Solves, asking `check` of each solution for the clauses that rule out
/// what it finds there (none: the solution stands).
pub(super) fn solve(
    enc: &mut Encoding,
    forced: &[Option<bool>],
    mut check: impl FnMut(&Conds, &dyn Fn(Lit) -> bool) -> Vec<Vec<Lit>>,
) -> Solved {
    let mut lemmas = 0;
    let mut last = None;
    let verdict = loop {
        let r = enc.solver.solve_limited_th(&mut Th(&mut enc.theory), &[]);
        if r != lbool::TRUE {
            break r;
        }
        let solver = &enc.solver;
        let value = |l: Lit| (solver.value_var(l.var()) ^ !l.sign()) == lbool::TRUE;
        let clauses = check(&enc.conds, &value);
        if clauses.is_empty() {
            break r;
        }
        let mut open_vars = enc.vars.iter();
        let pick: Vec<bool> = forced
            .iter()
            .map(|f| match f {
                Some(side) => *side,
                None => open_vars.next().is_some_and(|&v| value(v)),
            })
            .collect();
        last = Some((pick, enc.sel.iter().map(|&l| value(l)).collect()));
        lemmas += clauses.len();
        let mut unsat = false;
        for mut c in clauses {
            unsat |= !enc.solver.add_clause_reuse(&mut c);
        }
        if unsat {
            break lbool::FALSE;
        }
    };
    Solved {
        verdict,
        last,
        lemmas,
    }
}

/// What a level's pruning concluded (the prefix / PSI levels' and the
/// anomalies check's): the side each constraint must take (true:
/// `either`), where the other closes a forbidden cycle with the known
/// edges; or that some constraint can take neither; and in how many
/// rounds.
pub(super) struct Pruned {
    pub(super) forced: Vec<Option<bool>>,
    pub(super) contradiction: bool,
    pub(super) rounds: usize,
}

/// One round of pruning's pass over the open constraints: a side one of
/// whose edges `bad` says closes a forbidden cycle cannot hold, so the
/// other is forced (its edges handed to `take`). Whether any was forced;
/// Err when some constraint can take neither side (every choice closes
/// one: a violation).
pub(super) fn force_round(
    g: &Polygraph,
    forced: &mut [Option<bool>],
    bad: impl Fn(&[EdgeId]) -> bool,
    mut take: impl FnMut(&[EdgeId]),
) -> Result<bool, ()> {
    let mut changed = false;
    for (c, con) in g.constraints.iter().enumerate() {
        if forced[c].is_some() {
            continue;
        }
        let side = match (bad(&con.either), bad(&con.or)) {
            (true, true) => return Err(()),
            (true, false) => false,
            (false, true) => true,
            (false, false) => continue,
        };
        forced[c] = Some(side);
        changed = true;
        take(if side { &con.either } else { &con.or });
    }
    Ok(changed)
}

/// Each read with several candidate writers read its first one.
pub(super) fn first_writers(g: &Polygraph) -> Vec<bool> {
    let mut sel = vec![false; g.selectors as usize];
    for ch in &g.choices {
        sel[ch.first as usize] = true;
    }
    sel
}

/// The edges that hold in a solution.
pub(super) fn holding(g: &Polygraph, conds: &Conds, value: &dyn Fn(Lit) -> bool) -> Vec<EdgeId> {
    (0..g.edges.len() as EdgeId)
        .filter(|&e| conds.holds(e, value))
        .collect()
}

/// Which edges hold under a full choice, and for each the constraint
/// whose side brought it (None: known, or a selector's).
pub(super) fn chosen(
    g: &Polygraph,
    (pick, sel): (&[bool], &[bool]),
) -> (Vec<bool>, Vec<Option<usize>>) {
    let mut on: Vec<bool> = vec![false; g.edges.len()];
    let mut by: Vec<Option<usize>> = vec![None; g.edges.len()];
    for &e in &g.known {
        on[e as usize] = true;
    }
    for &(s, e) in &g.cond_known {
        on[e as usize] = sel[s as usize];
    }
    for (c, con) in g.constraints.iter().enumerate() {
        let (side, side_if) = if pick[c] {
            (&con.either, &con.either_if)
        } else {
            (&con.or, &con.or_if)
        };
        for &e in side {
            on[e as usize] = true;
            by[e as usize] = Some(c);
        }
        for &(s, e) in side_if {
            on[e as usize] = sel[s as usize];
            by[e as usize] = Some(c);
        }
    }
    (on, by)
}
