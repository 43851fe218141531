//! Snapshot isolation and serializability, sound and complete, by PolySI's
//! method: the generalized polygraph of the history, pruning to a fixpoint,
//! then a SAT solver with an acyclicity theory for what remains, and the
//! violation interpreted into named cycles.
//!
//! Theory (Cerone & Gotsman; PolySI, VLDB'23). A history is SI exactly when
//! it is internally consistent and some choice of write-write order makes
//! `(SO? ∪ WR ∪ WW) ; RW?` acyclic: every cycle of dependencies needs two
//! adjacent anti-dependencies. Serializable when `SO? ∪ WR ∪ WW ∪ RW` is
//! acyclic for some choice. Session order takes part in the strong-session
//! variants, real-time order in the strict ones.
//!
//! We work on the graph G2 with two copies of each transaction, `t0` and
//! `t1`: a dependency `a -> b` is `a0 -> b0` and `a1 -> b0`, an
//! anti-dependency `a -> b` is `a0 -> b1`. Its cycles are exactly the cycles
//! with no two adjacent anti-dependencies, so SI is acyclicity of G2, and
//! the solver's theory needs to know nothing of SI. For serializability G2
//! is the plain graph.
//!
//! Data flow: [`plan`] decides a variant by its strategies in order; each
//! that builds a polygraph runs the one [`pipeline`] (build, prune,
//! solve, tell) over a level: [`Checked`] here (a variant's whole or part,
//! its violations told as cycles), a guessed order's attempt in
//! `witness`, prefix and PSI in [`forks`], the cycles asked for by name in
//! [`shapes`].

pub mod acyclic;
mod cycles;
pub mod forks;
mod grounds;
mod lemmas;
mod narrow;
pub mod pipeline;
pub mod plan;
pub mod polygraph;
pub mod prune;
pub mod refute;
pub mod sessions;
pub mod shapes;
mod solve;
mod tell;
pub mod variants;

pub use tell::Telling;
mod witness;

use crate::check::budget::Budget;

use rustc_hash::FxHashSet;

use crate::anomaly::{Anomaly, Datum, Field};
use crate::check::graph::sccs;
use crate::history::model::*;
use cycles::{Components, Work, contradiction, known_cycles, unsat_witness};
use polygraph::{EdgeId, Polygraph, Variant};
use refute::Part;
use solve::{Solved, solve_lazily, time_keys};

/// `h` with the writers its ambiguous reads may have observed narrowed by
/// session order and the writes they certainly observed (see `narrow.rs`:
/// exact for SI and serializability with sessions), for a guess at the
/// writers elsewhere (`check::settle`). None when nothing narrows.
pub(crate) fn narrowed_by_sessions(
    h: &History,
    deadline: Option<std::time::Instant>,
) -> Option<History> {
    let v = Variant {
        serializable: false,
        session: true,
        realtime: false,
    };
    narrow::narrow(h, v, Budget::until(deadline)).map(|n| n.history)
}

/// How much of the logged order of writes a witness kept
/// ([`Decision::Witness`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// All of it: no polygraph built ([`plan::Strategy::LoggedOrder`]).
    Whole,
    /// Where it closes no cycle, the rest solved ([`witness::released`]).
    Released,
    /// For writers far apart, in rounds, the rest solved
    /// ([`witness::banded`]).
    Banded,
}

/// How a verdict was reached: the typed evidence `-v` prints and the
/// result map keeps under `:elle-si/decided-by` ([`Decision::value`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// A witness: the history satisfies the variant with its keys' writes
    /// in the order they were logged, wholly or in part.
    Witness { kept: Kept },
    /// A violation found in a part of the history by strategy `by` (the
    /// keys of a suspect, a window); the whole polygraph was not built, or
    /// its solver stalled first ([`Part::after_whole`]).
    Part { by: plan::Strategy, part: Part },
    /// The bounded-sessions search ([`sessions`]).
    SessionSearch,
    /// The whole polygraph; `bounded`: its solver within a bound of
    /// decisions ([`plan::Strategy::StalledWhole`], or a large sessionless
    /// history's [`plan::Strategy::Whole`]).
    Whole { bounded: bool },
    /// A stronger variant passed (its pass proves this one's), decided as
    /// `by` says ([`variants::Checks`]).
    Stronger { variant: Variant, by: Box<Decision> },
    /// The variant's session order or real time orders no two
    /// transactions: the variant without it decided, as `by` says.
    Without { variant: Variant, by: Box<Decision> },
}

impl Decision {
    /// What `-v` says decided.
    pub fn describe(&self) -> String {
        match self {
            Decision::Witness { kept: Kept::Whole } => {
                plan::Strategy::LoggedOrder.describe().into()
            }
            Decision::Witness {
                kept: Kept::Released,
            } => plan::Strategy::ReleasedWitness.describe().into(),
            Decision::Witness { kept: Kept::Banded } => {
                plan::Strategy::BandedWitness.describe().into()
            }
            Decision::Part { by, .. } => by.describe().into(),
            Decision::SessionSearch => "the bounded-sessions search".into(),
            Decision::Whole { bounded: true } => "the whole polygraph, its solver bounded".into(),
            Decision::Whole { bounded: false } => "the whole polygraph".into(),
            Decision::Stronger { variant, by } => format!(
                "{} passing, which implies this one ({})",
                variant.model_name(),
                by.describe()
            ),
            Decision::Without { variant, by } => format!(
                "{}'s check, as session order or real time orders no two transactions \
                 here ({})",
                variant.model_name(),
                by.describe()
            ),
        }
    }

    /// The result map's value: `{:strategy :logged-order}`, `{:strategy
    /// :witness, :kept :released}`, `{:strategy :window, :by :windows,
    /// :size 40, :from 120, :of 3000}` (`:keys 2, :of-keys 20` when the
    /// part kept some keys, `:after-whole true` when the whole stalled
    /// first), `{:strategy :session-search}`, `{:strategy :whole}`
    /// (`:bounded true`), `{:strategy :stronger, :model
    /// :strict-serializable, :by {...}}`, `{:strategy :without, :model
    /// :serializable, :by {...}}`.
    pub fn value(&self) -> crate::edn::Value {
        use crate::edn::Value;
        let kw = |s: &str| Value::Keyword(s.into());
        let int = |n: u32| Value::Int(i64::from(n));
        let strategy = |s: &str| (kw("strategy"), kw(s));
        let m = match self {
            Decision::Witness { kept: Kept::Whole } => vec![strategy("logged-order")],
            Decision::Witness { kept } => vec![
                strategy("witness"),
                (
                    kw("kept"),
                    kw(if *kept == Kept::Released {
                        "released"
                    } else {
                        "banded"
                    }),
                ),
            ],
            Decision::Part { by, part } => {
                let mut m = vec![
                    strategy("window"),
                    (kw("by"), kw(by.keyword())),
                    (kw("size"), int(part.size)),
                    (kw("from"), int(part.from)),
                    (kw("of"), int(part.of)),
                ];
                if let Some((k, all)) = part.keys {
                    m.push((kw("keys"), int(k)));
                    m.push((kw("of-keys"), int(all)));
                }
                if part.after_whole {
                    m.push((kw("after-whole"), Value::Bool(true)));
                }
                m
            }
            Decision::SessionSearch => vec![strategy("session-search")],
            Decision::Whole { bounded } => {
                let mut m = vec![strategy("whole")];
                if *bounded {
                    m.push((kw("bounded"), Value::Bool(true)));
                }
                m
            }
            Decision::Stronger { variant, by } | Decision::Without { variant, by } => vec![
                strategy(if matches!(self, Decision::Stronger { .. }) {
                    "stronger"
                } else {
                    "without"
                }),
                (kw("model"), kw(variant.model_name())),
                (kw("by"), by.value()),
            ],
        };
        Value::Map(m)
    }
}

/// Figures for benchmarks (PolySI's Table 3, and time per stage).
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub constraints_before: usize,
    pub unknown_before: usize,
    pub constraints_after: usize,
    pub unknown_after: usize,
    pub prune_rounds: usize,
    pub construct_s: f64,
    pub prune_s: f64,
    pub solve_s: f64,
    pub interpret_s: f64,
    pub solver_conflicts: u64,
    /// Work done ([`crate::check::budget`]): build, prune and solve.
    pub work: u64,
    /// The polygraph would exceed [`crate::check::tuning::MAX_PAIRS`] writer pairs.
    pub too_big: bool,
    /// The budget ran out while the violation found was being told: the
    /// verdict stands, but cycles may be left untold (or, when none was
    /// told, only the variant's `*-cycle-exists` is).
    pub explain_cut: bool,
    /// The telling's work ([`Telling::steps`]) ran out: how many
    /// violations found (contradictions, cyclic components) it told no
    /// cycle of. Deterministic, unlike [`Stats::explain_cut`].
    pub untold: usize,
    /// Reads of values written more than once: how many (read, writer)
    /// choices there were, and how many known dependencies left on the
    /// reads that still have several writers ([`narrow`]), when they left
    /// fewer.
    pub narrowed: Option<(usize, usize)>,
    /// The banded witness was tried and found none ([`witness::banded`]).
    pub banded: Option<witness::Rounds>,
    /// Where the violations found lie, when the verdict alone was asked
    /// and none was told: a transaction of each contradiction pruning
    /// met, or of each cyclic component of the known edges. A weaker
    /// variant looks there first ([`refute::around`]).
    pub found_at: Vec<TxnId>,
    /// How the verdict was reached ([`Decision`]): the strategy of the
    /// plan that decided ([`plan::PLAN`]), and what it decided on.
    pub decision: Option<Decision>,
}

impl Stats {
    /// The part of the history a violation was found in, when one was
    /// ([`Decision::Part`]).
    #[cfg(test)]
    pub fn part(&self) -> Option<Part> {
        match self.decision {
            Some(Decision::Part { part, .. }) => Some(part),
            _ => None,
        }
    }

    /// The notes a run gives of one check under `name`: its figures
    /// (`conflicts` says what the solver count counts) and, when the
    /// polygraph was too big, why there is no verdict.
    pub fn notes(&self, name: &str, conflicts: &str) -> Vec<String> {
        let mut notes = vec![format!(
            "{}: constraints {} -> {} after {} pruning rounds, unknown dependencies {} -> {}; \
             construct {:.3} s, prune {:.3} s, solve {:.3} s ({} {}), interpret {:.3} s; \
             work {}",
            name,
            self.constraints_before,
            self.constraints_after,
            self.prune_rounds,
            self.unknown_before,
            self.unknown_after,
            self.construct_s,
            self.prune_s,
            self.solve_s,
            self.solver_conflicts,
            conflicts,
            self.interpret_s,
            self.work
        )];
        if let Some(d) = &self.decision {
            notes.push(format!("{name}: decided by {}", d.describe()));
        }
        if let Some((before, after)) = self.narrowed {
            notes.push(format!(
                "{name}: reads of values written more than once: {before} possible (read, writer) \
                 choices; known dependencies left {after} on reads with several writers"
            ));
        }
        match &self.decision {
            Some(Decision::Witness { kept: Kept::Whole }) => notes.push(format!(
                "{name}: satisfied with each key's writes in the order they were logged; \
                 no polygraph built"
            )),
            Some(Decision::Witness { .. }) => notes.push(format!(
                "{name}: satisfied with part of the logged order of writes kept (the \
                 constraints above solved the rest)"
            )),
            Some(Decision::Part { part, .. }) => notes.push(part.note(name)),
            _ => {}
        }
        if let Some(r) = self.banded {
            notes.push(r.note(name));
        }
        if self.too_big {
            notes.push(format!(
                "{}: more than {} unordered writer pairs or {} edges; no verdict",
                name,
                crate::check::tuning::MAX_PAIRS,
                crate::check::tuning::MAX_EDGES
            ));
        }
        notes
    }
}

#[derive(Clone)]
pub struct Outcome {
    pub anomalies: Vec<Anomaly>,
    /// The time budget ran out before a verdict.
    pub timed_out: bool,
    pub stats: Stats,
}

/// What stands for a violation found but not told within the budget.
fn untold(g: &Polygraph) -> Anomaly {
    Anomaly::new(g.cycle_exists)
}

/// Checks one variant alone (the unit tests' entry; a run goes through
/// [`variants::Checks`], which shares what variants have in common).
#[cfg(test)]
fn check(h: &History, variant: Variant, budget: Budget) -> Outcome {
    variants::Checks::new(h, budget.deadline).check(variant)
}

#[cfg(test)]
fn check_polygraph(h: &History, variant: Variant, budget: Budget) -> Outcome {
    check_polygraph_in(h, variant, budget, polygraph::Scope::WHOLE)
}

/// [`check_polygraph_telling`] telling all it finds.
fn check_polygraph_in(
    h: &History,
    variant: Variant,
    budget: Budget,
    scope: polygraph::Scope,
) -> Outcome {
    check_polygraph_telling(h, variant, budget, scope, Telling::FULL)
}

/// [`check_polygraph`] over a [`polygraph::Scope`]: for a part, a
/// violation found is one of the whole; a pass proves nothing. Tells what
/// `telling` asks (a violation as the variant's `*-cycle-exists` alone, or
/// its cycles within [`Telling::steps`]). Its stage times go to
/// [`crate::check::stages`]. The [`pipeline`] over [`Checked`].
fn check_polygraph_telling(
    h: &History,
    variant: Variant,
    budget: Budget,
    scope: polygraph::Scope,
    telling: Telling,
) -> Outcome {
    let level = Checked {
        variant,
        scope,
        telling,
    };
    pipeline::run(h, &level, budget).outcome()
}

/// A variant's own check of a scope, telling as `telling` asks: the
/// [`pipeline::Level`] of SI and serializability.
struct Checked<'a> {
    variant: Variant,
    scope: polygraph::Scope<'a>,
    telling: Telling,
}

/// What pruning left a polygraph check ([`Checked`], and a guessed
/// order's attempt in [`witness`]): the open constraints, the graph of
/// the known edges, what telling needs.
struct PolygraphPruned {
    pruned: prune::Pruned,
    /// The history's own known edges: the first this many.
    observed: usize,
    inferred: cycles::Inferred,
    g2: G2,
    /// The telling's work ([`Telling::steps`]), shared by its stages.
    work: Work,
    /// The start times of transactions, for the solver's first order.
    invoke: Option<Vec<u64>>,
}

/// Prunes `g` for `variant` (to the fixpoint when `to_fixpoint`), its
/// figures into `stats`; `steps`: the telling's work.
fn prune_polygraph(
    h: &History,
    g: &mut Polygraph,
    (variant, budget, to_fixpoint, steps): (Variant, Budget, bool, u64),
    stats: &mut Stats,
) -> PolygraphPruned {
    // Edges pruning adds are forced only if the history satisfies the
    // variant: a cycle through one proves that it does not, and no more.
    let observed = g.known.len();
    let pruned = prune::prune(h, g, variant, budget, to_fixpoint);
    let inferred = cycles::Inferred::new(g, observed);
    pipeline::figures(stats, g, pruned.rounds, pruned.open.iter().copied());
    PolygraphPruned {
        pruned,
        observed,
        inferred,
        g2: G2::new(g, variant, h.txns.len()),
        work: Work::new(steps),
        invoke: None,
    }
}

/// Solves what pruning left of a polygraph, the solver bounded by
/// `decisions`: the lazy solver's answer kept for its core.
fn solve_polygraph(
    h: &History,
    g: &Polygraph,
    p: &mut PolygraphPruned,
    (budget, decisions): (Budget, Option<u64>),
    stats: &mut Stats,
) -> pipeline::Solution<solve::Lazily> {
    if p.pruned.open.is_empty() && g.choices.is_empty() {
        return pipeline::Solution::Found;
    }
    if budget.expired() {
        return pipeline::Solution::Unknown;
    }
    p.invoke = time_keys(h);
    let lz = solve_lazily(
        p.invoke.as_deref(),
        g,
        &p.g2,
        &p.pruned.open,
        p.pruned.graph.as_ref(),
        (budget, decisions),
    );
    stats.solver_conflicts = lz.conflicts;
    match &lz.result {
        Solved::Sat(_) => pipeline::Solution::Found,
        Solved::Unknown => pipeline::Solution::Unknown,
        Solved::Unsat(..) => pipeline::Solution::None(lz),
    }
}

impl Checked<'_> {
    /// What a cycle's steps rest on, for telling it.
    fn ground(&self, h: &History, g: &Polygraph, observed: usize) {
        g.through
            .get_or_init(|| grounds::classify(h, g, observed, self.variant));
    }
}

impl pipeline::Level for Checked<'_> {
    type Built = ();
    type Pruned = PolygraphPruned;
    type Unsat = solve::Lazily;
    type Told = Vec<Anomaly>;

    fn build(&self, h: &History, budget: Budget) -> Option<(Polygraph, ())> {
        Some((
            polygraph::build_or_cycle(h, self.variant, budget, self.scope),
            (),
        ))
    }

    fn prune(
        &self,
        h: &History,
        (g, ()): (&mut Polygraph, ()),
        budget: Budget,
        stats: &mut Stats,
    ) -> PolygraphPruned {
        let t = self.telling;
        prune_polygraph(h, g, (self.variant, budget, t.cycles, t.steps), stats)
    }

    fn pruned(
        &self,
        h: &History,
        g: &Polygraph,
        p: &mut PolygraphPruned,
        budget: Budget,
        stats: &mut Stats,
    ) -> Option<Vec<Anomaly>> {
        let (telling, pruned) = (self.telling, &p.pruned);
        // A guessed order (see `witness`): only a solution counts, so a
        // cycle is not told.
        if self.scope.fixed.is_some() && (pruned.known_cycle || !pruned.contradictions.is_empty()) {
            return Some(vec![untold(g)]);
        }
        // The verdict alone: no cycle looked for.
        if !telling.cycles && pruned.known_cycle {
            stats.found_at = p.g2.cyclic_txns(g);
            return Some(vec![untold(g)]);
        }
        if let Some(&(c, _, _)) = pruned.contradictions.first().filter(|_| !telling.cycles) {
            stats.found_at = pruned
                .contradictions
                .iter()
                .map(|&(c, _, _)| g.constraints[c].a)
                .collect();
            let con = &g.constraints[c];
            return Some(vec![untold(g).txn(con.a).txn(con.c).field(
                Field::Unordered,
                Datum::List(vec![Datum::Txn(con.a), Datum::Txn(con.c)]),
            )]);
        }
        let work = &mut p.work;
        if pruned.known_cycle {
            self.ground(h, g, p.observed);
            let (mut found, untold_here) =
                known_cycles(h, g, &p.g2, &p.inferred, (budget, &mut *work));
            stats.explain_cut = untold_here > 0 && budget.expired();
            if untold_here > 0 && !stats.explain_cut {
                // The work (all of it, or a pass's share) ran out.
                stats.untold = untold_here;
            }
            if found.is_empty() {
                found.push(untold(g));
            }
            return Some(found);
        }
        if pruned.contradictions.is_empty() {
            return None;
        }
        self.ground(h, g, p.observed);
        let mut found = Vec::new();
        let mut seen: FxHashSet<Vec<TxnId>> = FxHashSet::default();
        // One graph of the known edges for all: each contradiction's
        // cycles are looked for in it.
        let adj = p.g2.adjacency(g, &[]);
        let mut comps = Components::new();
        for (i, &(c, e1, e2)) in pruned.contradictions.iter().enumerate() {
            if budget.expired() {
                stats.explain_cut = true;
                break;
            }
            if work.spent() {
                stats.untold = pruned.contradictions.len() - i;
                break;
            }
            let Some(a) = contradiction(
                h,
                g,
                &p.g2,
                &p.inferred,
                (&adj, &mut comps),
                (c, e1, e2),
                (budget, &mut *work),
            ) else {
                if work.spent() {
                    stats.untold = pruned.contradictions.len() - i;
                    break;
                }
                continue;
            };
            let mut key = a.txns.clone();
            key.sort_unstable();
            if seen.insert(key) {
                found.push(a);
            }
        }
        if found.is_empty() && (budget.expired() || work.spent()) {
            // A contradiction proves the violation; telling it ran out.
            stats.explain_cut = budget.expired();
            let (c, _, _) = pruned.contradictions[0];
            let con = &g.constraints[c];
            found.push(untold(g).txn(con.a).txn(con.c).field(
                Field::Unordered,
                Datum::List(vec![Datum::Txn(con.a), Datum::Txn(con.c)]),
            ));
        }
        // None told: the solver decides.
        (!found.is_empty()).then_some(found)
    }

    fn solve(
        &self,
        h: &History,
        g: &Polygraph,
        p: &mut PolygraphPruned,
        budget: Budget,
        stats: &mut Stats,
    ) -> pipeline::Solution<solve::Lazily> {
        solve_polygraph(h, g, p, (budget, self.telling.decisions), stats)
    }

    fn tell(
        &self,
        h: &History,
        g: &Polygraph,
        p: &mut PolygraphPruned,
        lz: solve::Lazily,
        budget: Budget,
        stats: &mut Stats,
    ) -> Option<Vec<Anomaly>> {
        if self.scope.fixed.is_some() || !self.telling.cycles {
            return Some(vec![untold(g)]);
        }
        self.ground(h, g, p.observed);
        let limits = (budget, self.telling.decisions);
        let (core, choices) = match lz.core(p.invoke.as_deref(), g, &p.g2, limits) {
            Solved::Unsat(c, ch) if !(c.is_empty() && ch.is_empty()) => (c, ch),
            _ => (lz.open.clone(), (0..g.choices.len()).collect()),
        };
        let (a, cut) = unsat_witness(h, g, &p.g2, &core, &choices, (budget, &mut p.work));
        stats.explain_cut = cut && budget.expired();
        if cut && p.work.spent() {
            stats.untold = 1;
        }
        Some(vec![a])
    }
}

/// G2's nodes and edges for a polygraph.
struct G2 {
    nodes: usize,
    variant: Variant,
}

impl G2 {
    fn new(_g: &Polygraph, v: Variant, n: usize) -> G2 {
        G2 {
            nodes: v.g2_nodes(n),
            variant: v,
        }
    }

    fn txn(&self, node: u32) -> TxnId {
        self.variant.g2_txn(node)
    }

    /// A transaction of each cyclic component of the known edges' graph.
    fn cyclic_txns(&self, g: &Polygraph) -> Vec<TxnId> {
        let graph = g.known_g2(self.variant);
        let sccs = sccs(&graph);
        let mut seen = vec![false; sccs.count()];
        for c in sccs.cyclic(&graph) {
            seen[c as usize] = true;
        }
        let mut out = Vec::new();
        for (v, &c) in sccs.comp.iter().enumerate() {
            if std::mem::take(&mut seen[c as usize]) {
                out.push(self.txn(v as u32));
            }
        }
        out
    }

    /// The G2 edges of a transaction-level edge.
    fn map(&self, g: &Polygraph, e: EdgeId, out: &mut Vec<(u32, u32)>) {
        self.variant.g2_edges(&g.edges[e as usize], out);
    }

    /// Labelled adjacency of the known edges (plus extra ones).
    fn adjacency(&self, g: &Polygraph, extra: &[EdgeId]) -> Vec<Vec<(u32, EdgeId)>> {
        self.adjacency_over(g, g.known.iter().chain(extra).copied())
    }

    /// G2's adjacency over these polygraph edges alone.
    fn adjacency_over(
        &self,
        g: &Polygraph,
        edges: impl IntoIterator<Item = EdgeId>,
    ) -> Vec<Vec<(u32, EdgeId)>> {
        let mut adj: Vec<Vec<(u32, EdgeId)>> = vec![Vec::new(); self.nodes];
        let mut buf = Vec::new();
        for e in edges {
            buf.clear();
            self.map(g, e, &mut buf);
            for &(u, v) in &buf {
                adj[u as usize].push((v, e));
            }
        }
        adj
    }
}

#[cfg(test)]
mod tests {
    pub(super) use super::super::tests::generated;
    use super::polygraph::EdgeKind;
    use super::*;
    use crate::history::{Duplicates, Format, LoadOptions, load_bytes};

    pub(super) const SSI: Variant = Variant {
        serializable: false,
        session: true,
        realtime: false,
    };
    pub(super) const SER: Variant = Variant {
        serializable: true,
        session: true,
        realtime: false,
    };
    pub(super) const PLAIN_SI: Variant = Variant {
        serializable: false,
        session: false,
        realtime: false,
    };
    pub(super) const PLAIN_SER: Variant = Variant {
        serializable: true,
        session: false,
        realtime: false,
    };

    pub(super) fn load(text: &str) -> Option<History> {
        let opts = LoadOptions {
            format: Some(Format::DbcopHist),
            duplicates: Duplicates::Any,
            ..LoadOptions::default()
        };
        let l = load_bytes("t.hist", text.as_bytes().to_vec(), opts).ok()?;
        l.anomalies.is_empty().then_some(l.history)
    }

    pub(super) fn valid(h: &History, v: Variant) -> bool {
        let o = check(h, v, Budget::NONE);
        assert!(!o.timed_out);
        o.anomalies.is_empty()
    }

    #[test]
    fn too_many_open_pairs_build_no_constraint() {
        // Three writers of x and two of y, nothing ordering them without
        // sessions: 3 + 1 open pairs.
        let h = load("[x:=1]\n---\n[x:=2 y:=1]\n---\n[x:=3 y:=2]\n").expect("loads");
        let scope = |max_pairs| polygraph::Scope {
            max_pairs,
            ..polygraph::Scope::WHOLE
        };
        let g = polygraph::build_in(&h, PLAIN_SER, Budget::NONE, scope(3));
        assert!(g.too_big);
        assert!(g.constraints.is_empty());
        assert_eq!(g.all_pairs, 4);
        let g = polygraph::build_in(&h, PLAIN_SER, Budget::NONE, scope(4));
        assert!(!g.too_big);
        assert_eq!(
            g.constraints.len(),
            3,
            "pairs coalesce per two transactions"
        );
        // One session orders them all: nothing is open.
        let h = load("[x:=1]\n[x:=2 y:=1]\n[x:=3 y:=2]\n").expect("loads");
        let g = polygraph::build_in(&h, SER, Budget::NONE, scope(0));
        assert!(!g.too_big);
        assert!(polygraph::build_in(&h, PLAIN_SER, Budget::NONE, scope(3)).too_big);
    }

    #[test]
    fn a_telling_cut_short_still_shows_a_cycle() {
        // A write skew among known edges (each session's read of the
        // other's key is initial): with no work to search, the telling
        // still shows one cycle, found without bound, as Elle's fallback
        // cycle, and counts what it left untold.
        let h = load("[x:=1 y==?]\n---\n[y:=1 x==?]\n").expect("loads");
        let telling = Telling {
            cycles: true,
            steps: 1,
            decisions: None,
        };
        let o = check_polygraph_telling(
            &h,
            PLAIN_SER,
            Budget::NONE,
            polygraph::Scope::WHOLE,
            telling,
        );
        assert!(o.stats.untold > 0, "{:?}", o.stats.untold);
        assert_eq!(o.anomalies.len(), 1, "{:?}", o.anomalies);
        let a = &o.anomalies[0];
        assert_eq!(a.name(), "G2-item", "{a:?}");
        assert_eq!(a.txns.len(), 2, "{a:?}");
        assert!(a.cycle.is_some(), "{a:?}");
        // With the work it needs, the same cycle is told the usual way.
        let o = check_polygraph(&h, PLAIN_SER, Budget::NONE);
        assert_eq!(o.stats.untold, 0);
        assert_eq!(o.anomalies.len(), 1);
        assert_eq!(o.anomalies[0].name(), "G2-item");
    }

    #[test]
    fn a_read_of_a_duplicated_value_is_a_choice() {
        // x = 1 twice; the reader is fine only if it read the first write.
        let h = load("[x:=1]\n[y:=5]\n---\n[y==5 x:=1]\n---\n[x==1 y==?]\n").expect("loads");
        assert_eq!(h.candidates.len(), 1);
        let g = polygraph::build(&h, SSI, Budget::NONE);
        assert_eq!(g.choices.len(), 1);
        assert_eq!(g.choices[0].writers, vec![0, 2]);
        let wr = g
            .cond_known
            .iter()
            .filter(|&&(_, e)| g.edges[e as usize].kind == EdgeKind::Wr)
            .count();
        assert_eq!(wr, 2);
        for v in [SSI, SER, PLAIN_SI] {
            assert!(valid(&h, v), "{v:?}");
        }
    }

    #[test]
    fn a_cycle_whichever_writer_was_read_names_one() {
        // Each writer of x = 1 also wrote z, which the reader saw initial.
        let h = load("[x:=1 z:=1]\n---\n[x:=1 z:=2]\n---\n[x==1 z==?]\n").expect("loads");
        for v in [SSI, SER] {
            let o = check(&h, v, Budget::NONE);
            assert_eq!(o.anomalies.len(), 1, "{v:?}");
            let a = &o.anomalies[0];
            assert_eq!(a.name(), "G-single-item", "{v:?}");
            // The cycle runs through the reader and one of the writers.
            assert!(a.txns.contains(&2), "{v:?}");
            assert!(a.txns.contains(&0) || a.txns.contains(&1), "{v:?}");
        }
    }

    #[test]
    fn anti_dependencies_follow_the_chosen_writer() {
        // Both writers of x = 1 precede W3 (it read their z's), and the
        // reader saw W3's y but x = 1: whichever x = 1 it read, W3's x = 2
        // came later, so the reader anti-depends on W3, which it read from.
        let text = "[x:=1 z:=1]\n---\n[x:=1 u:=1]\n---\n[z==1 u==1 x:=2 y:=1]\n---\n[x==1 y==1]\n";
        let h = load(text).expect("loads");
        for v in [SSI, SER, PLAIN_SI] {
            assert!(!valid(&h, v), "{v:?}");
        }
        // Without y's read the reader is free to have read before W3.
        let h = load("[x:=1 z:=1]\n---\n[x:=1 u:=1]\n---\n[z==1 u==1 x:=2 y:=1]\n---\n[x==1]\n")
            .expect("loads");
        for v in [SSI, SER, PLAIN_SI] {
            assert!(valid(&h, v), "{v:?}");
        }
    }

    /// A small pseudo-random generator (xorshift), for reproducible cases.
    pub(super) struct Rng(pub(super) u64);
    impl Rng {
        pub(super) fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// A random dbcop text history over few keys and values, so that
    /// writes repeat.
    pub(super) fn random_history(r: &mut Rng) -> String {
        let sessions = 2 + r.next(2);
        let mut out = String::new();
        for s in 0..sessions {
            if s > 0 {
                out.push_str("---\n");
            }
            for _ in 0..1 + r.next(3) {
                let mut evs = Vec::new();
                let mut written = Vec::new();
                for _ in 0..1 + r.next(3) {
                    let k = ["x", "y", "z"][r.next(3) as usize];
                    let v = 1 + r.next(2);
                    if r.next(2) == 0 && !written.contains(&(k, v)) {
                        written.push((k, v));
                        evs.push(format!("{k}:={v}"));
                    } else if r.next(3) == 0 {
                        evs.push(format!("{k}==?"));
                    } else {
                        evs.push(format!("{k}=={v}"));
                    }
                }
                out.push_str(&format!("[{}]\n", evs.join(" ")));
            }
        }
        out
    }

    /// Every way of resolving the reads with several candidates, as
    /// histories with a single writer per read.
    pub(super) fn resolutions(h: &History) -> Vec<History> {
        let mut reads: Vec<(MopId, Vec<MopId>)> =
            h.candidates.iter().map(|(&r, c)| (r, c.clone())).collect();
        reads.sort_unstable();
        let mut out = vec![h.clone()];
        for (r, cands) in reads {
            let mut next = Vec::new();
            for base in &out {
                for &w in &cands {
                    let mut x = base.clone();
                    x.candidates.remove(&r);
                    x.mops[r as usize].from = w;
                    next.push(x);
                }
            }
            out = next;
        }
        out
    }

    #[test]
    fn choices_agree_with_every_resolution_tried_alone() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let mut ambiguous = 0;
        let mut verdicts = [0usize; 2];
        for _ in 0..400 {
            let text = random_history(&mut r);
            let Some(h) = load(&text) else { continue };
            if h.candidates.is_empty() {
                continue;
            }
            ambiguous += 1;
            let alone = resolutions(&h);
            for v in [SSI, SER, PLAIN_SI] {
                let any = valid(&h, v);
                let some = alone.iter().any(|x| valid(x, v));
                assert_eq!(any, some, "{v:?}\n{text}");
                verdicts[any as usize] += 1;
            }
        }
        // The generator must exercise both outcomes on ambiguous reads.
        assert!(ambiguous >= 40, "{ambiguous}");
        assert!(verdicts[0] > 10 && verdicts[1] > 10, "{verdicts:?}");
    }

    /// A text-format history (the unit tests of `si` and its files).
    pub(super) fn load_text(text: &str) -> History {
        let opts = LoadOptions {
            format: Some(Format::Text),
            ..LoadOptions::default()
        };
        load_bytes("t.txt", text.as_bytes().to_vec(), opts)
            .expect("loads")
            .history
    }

    #[test]
    fn a_verdict_alone_says_where_its_violations_lie() {
        // Each cycle's transactions make two micro-ops, the one beside
        // them one.
        let two = |h: &History, ts: &[TxnId]| {
            !ts.is_empty() && ts.iter().all(|&t| h.txns[t as usize].mops().len() == 2)
        };
        let verdict = |h: &History, v: Variant| {
            let scope = polygraph::Scope::WHOLE;
            check_polygraph_telling(h, v, Budget::NONE, scope, Telling::VERDICT)
        };
        // Two transactions that read each other's writes: a cycle of
        // known edges, in one component.
        let h = load_text("w(1,1,0,1)\nr(2,1,0,1)\nw(2,1,1,2)\nr(1,1,1,2)\nw(3,1,2,3)\n");
        for v in [PLAIN_SER, PLAIN_SI, SER] {
            let o = verdict(&h, v);
            assert!(!o.anomalies.is_empty(), "{v:?}");
            assert_eq!(o.stats.found_at.len(), 1, "{v:?}");
            assert!(two(&h, &o.stats.found_at), "{v:?}");
        }
        // A lost update: at SI a contradiction (either write order closes
        // a cycle), at serializability two known anti-dependencies.
        let h = load_text("r(1,0,0,1)\nw(1,1,0,1)\nr(1,0,1,2)\nw(1,2,1,2)\nw(3,1,2,3)\n");
        for v in [PLAIN_SI, PLAIN_SER] {
            let o = verdict(&h, v);
            assert!(!o.anomalies.is_empty(), "{v:?}");
            assert!(two(&h, &o.stats.found_at), "{v:?}");
        }
        // Told in full, the cycles say where they are: nothing more kept.
        let o = check_polygraph_telling(
            &h,
            PLAIN_SI,
            Budget::NONE,
            polygraph::Scope::WHOLE,
            Telling::FULL,
        );
        assert!(!o.anomalies.is_empty() && o.stats.found_at.is_empty());
        // A valid history has none.
        let h = load_text("w(1,1,0,1)\nr(1,1,1,2)\n");
        assert!(verdict(&h, PLAIN_SER).stats.found_at.is_empty());
    }

    #[test]
    fn a_variant_implies_exactly_the_weaker_ones() {
        // Over random histories: what a variant accepts, each variant it
        // implies accepts; for each pair it does not imply, some history
        // the one accepts the other rejects.
        let all = [SSI, SER, PLAIN_SI, PLAIN_SER];
        let mut apart = FxHashSet::default();
        let mut r = Rng(0x5eed_1234_abcd);
        for _ in 0..3000 {
            let Some(h) = load(&random_history(&mut r)) else {
                continue;
            };
            let verdicts: Vec<bool> = all.iter().map(|&v| valid(&h, v)).collect();
            for (i, &v) in all.iter().enumerate() {
                for (j, &w) in all.iter().enumerate() {
                    if verdicts[i] && !verdicts[j] {
                        assert!(!v.implies(w), "{v:?} {w:?}");
                        apart.insert((i, j));
                    }
                }
            }
        }
        for (i, &v) in all.iter().enumerate() {
            for (j, &w) in all.iter().enumerate() {
                assert_eq!(v.implies(w), !apart.contains(&(i, j)), "{v:?} {w:?}");
            }
        }
    }

    #[test]
    fn known_edges_that_close_a_cycle_need_no_constraint() {
        // A write skew on the initial state, then both keys written again
        // by a third session: at serializability the two anti-dependencies
        // close a cycle whatever the write orders, at SI they are adjacent.
        let h =
            load_text("r(1,0,0,1)\nw(2,1,0,1)\nr(2,0,1,2)\nw(1,1,1,2)\nw(1,2,2,3)\nw(2,2,2,3)\n");
        assert!(polygraph::known_cycle(&h, PLAIN_SER));
        let g = polygraph::build_or_cycle(&h, PLAIN_SER, Budget::NONE, polygraph::Scope::WHOLE);
        assert!(g.constraints.is_empty());
        // Prefix and PSI make their own graph of the polygraph: whole.
        assert!(
            !polygraph::build(&h, PLAIN_SER, Budget::NONE)
                .constraints
                .is_empty()
        );
        let o = check(&h, PLAIN_SER, Budget::NONE);
        assert!(!o.timed_out && !o.anomalies.is_empty());
        // At SI nothing is sure: the pairs are constraints, and it passes.
        assert!(!polygraph::known_cycle(&h, PLAIN_SI));
        let g = polygraph::build_or_cycle(&h, PLAIN_SI, Budget::NONE, polygraph::Scope::WHOLE);
        assert!(!g.constraints.is_empty());
        assert!(valid(&h, PLAIN_SI));
        // Session order is never skipped this way.
        assert!(!polygraph::known_cycle(&h, SER));
    }

    #[test]
    fn a_lost_update_is_sure_to_reject_unless_its_version_was_aborted() {
        // Two transactions read x = 1 and both write x.
        let lost = "w(1,1,0,1)\nr(1,1,1,2)\nw(1,2,1,2)\nr(1,1,2,3)\nw(1,3,2,3)\n";
        let h = load_text(lost);
        for v in [PLAIN_SI, PLAIN_SER] {
            assert!(variants::Checks::new(&h, None).sure_to_reject(v), "{v:?}");
            // The proof agrees with the polygraph's own verdict.
            let o = check_polygraph(&h, v, Budget::NONE);
            assert!(!o.timed_out && !o.anomalies.is_empty(), "{v:?}");
        }
        // The same, x = 1 written by a transaction that aborted: the
        // reads are aborted reads, and the polygraph leaves them out.
        let h = load_text("w(1,1,0,-1)\nr(1,1,1,2)\nw(1,2,1,2)\nr(1,1,2,3)\nw(1,3,2,3)\n");
        assert!(!variants::Checks::new(&h, None).sure_to_reject(PLAIN_SI));
        // And a serial run is not.
        let h = load_text("w(1,1,0,1)\nr(1,1,1,2)\nw(1,2,1,2)\nr(1,2,2,3)\nw(1,3,2,3)\n");
        for v in [PLAIN_SI, PLAIN_SER] {
            assert!(!variants::Checks::new(&h, None).sure_to_reject(v), "{v:?}");
            assert!(valid(&h, v), "{v:?}");
        }
    }

    #[test]
    fn file_order_guesses_time_only_where_sessions_interleave() {
        // Written session by session (as dbcop writes): no guess.
        let h =
            load_text("w(1,1,0,1)\nw(1,2,0,2)\nw(2,1,0,3)\nw(1,3,1,4)\nw(2,2,1,5)\nw(1,4,1,6)\n");
        assert_eq!(h.sessions.len(), 2);
        assert_eq!(time_keys(&h), None);
        // Written as the transactions ran, sessions taking turns: the
        // file's order.
        let h =
            load_text("w(1,1,0,1)\nw(1,2,1,2)\nw(2,1,0,3)\nw(1,3,1,4)\nw(2,2,0,5)\nw(1,4,1,6)\n");
        assert_eq!(h.sessions.len(), 2);
        assert_eq!(time_keys(&h), Some((0..6).collect()));
        // A Jepsen history pairs invocations with completions: where each
        // completed.
        let l = load_bytes(
            "t.edn",
            b"{:type :invoke, :process 0, :f :txn, :value [[:w 1 1]], :index 0}\n\
              {:type :invoke, :process 1, :f :txn, :value [[:w 1 2]], :index 1}\n\
              {:type :ok, :process 1, :f :txn, :value [[:w 1 2]], :index 2}\n\
              {:type :ok, :process 0, :f :txn, :value [[:w 1 1]], :index 3}\n"
                .to_vec(),
            LoadOptions::default(),
        )
        .expect("loads");
        let keys = time_keys(&l.history).expect("paired");
        assert_eq!(keys.len(), 2);
        assert!(keys.iter().all(|&k| k == 2 || k == 3), "{keys:?}");
    }
}
