//! The one build -> prune -> solve -> tell pipeline every polygraph check
//! runs through ([`run`]), over a [`Level`] that says what each stage
//! does: the SI and serializability variants' own checks (the whole
//! history or a part of it, `super::check_polygraph_telling`), a guessed
//! order's attempt (`super::witness`), and prefix consistency and
//! parallel snapshot isolation (`super::forks`), as dbcop's levels share
//! one solver.
//!
//! Method (PolySI, VLDB'23): the generalized polygraph of the history,
//! its constraints pruned to a fixpoint, what is left handed to a SAT
//! solver with an acyclicity theory, and a violation told as the cycles
//! that prove it.
//!
//! Data flow: [`Level::build`] (the polygraph, and what else the level
//! makes of the history; too big, or cut by the budget: undecided) -> [`Level::prune`] (forced sides into the known
//! edges; the figures of what is left) -> [`Level::pruned`] (a violation
//! pruning proved, a contradiction or a cycle of known edges, told; or
//! none, and the solver decides) -> [`Level::solve`] (a solution, none,
//! or undecided within the budget) -> [`Level::tell`] (what the solver's
//! "none" rests on, told; or undecided when telling cannot say). The
//! pipeline keeps the stage times ([`crate::check::stages`]) and the work
//! each check did ([`budget::spent`]); every limit inside is work, never
//! a clock.

use super::Stats;
use super::polygraph::Polygraph;
use crate::check::budget::{self, Budget};
use crate::check::stages::Timer;
use crate::history::model::History;

/// What a check's solver ended with.
pub(super) enum Solution<U> {
    /// A solution: the level holds (of the part checked).
    Found,
    /// None: what that rests on, for [`Level::tell`].
    None(U),
    /// The budget (work or the run's deadline) ran out first.
    Unknown,
}

/// A check's verdict: held, violated (as told), or undecided.
pub(super) enum Verdict<T> {
    Holds,
    Violated(T),
    Unknown,
}

/// What [`run`] ended with: the verdict and the check's figures, its work
/// among them.
pub(super) struct Ran<T> {
    pub verdict: Verdict<T>,
    pub stats: Stats,
}

impl Ran<Vec<crate::anomaly::Anomaly>> {
    /// As an [`super::Outcome`]: the anomalies told (none: valid),
    /// `timed_out` when undecided.
    pub fn outcome(self) -> super::Outcome {
        let (anomalies, timed_out) = match self.verdict {
            Verdict::Holds => (Vec::new(), false),
            Verdict::Violated(a) => (a, false),
            Verdict::Unknown => (Vec::new(), true),
        };
        super::Outcome {
            anomalies,
            timed_out,
            stats: self.stats,
        }
    }
}

/// One level of the pipeline: what graph it builds, what pruning rules
/// out, how it solves, and how a violation is told.
pub(super) trait Level {
    /// What the level's build makes beside the polygraph, for pruning.
    type Built;
    /// What pruning leaves for the solver and the telling (with whatever
    /// the telling carries from one stage to the next).
    type Pruned;
    /// What the solver's "no solution" rests on.
    type Unsat;
    /// A violation as told.
    type Told;

    /// The polygraph (with whatever the level adds to it); None when the
    /// level cannot be checked as it was asked (undecided: the level says
    /// why to its caller).
    fn build(&self, h: &History, budget: Budget) -> Option<(Polygraph, Self::Built)>;

    /// Prunes the polygraph (with what its build made) to the level's
    /// fixpoint, its figures into `stats` ([`figures`]).
    fn prune(
        &self,
        h: &History,
        graph: (&mut Polygraph, Self::Built),
        budget: Budget,
        stats: &mut Stats,
    ) -> Self::Pruned;

    /// A violation pruning proved, told; None when there is none, or when
    /// telling it found no cycle and the solver is to decide.
    fn pruned(
        &self,
        h: &History,
        g: &Polygraph,
        p: &mut Self::Pruned,
        budget: Budget,
        stats: &mut Stats,
    ) -> Option<Self::Told>;

    /// Solves what pruning left (its conflicts into `stats`).
    fn solve(
        &self,
        h: &History,
        g: &Polygraph,
        p: &mut Self::Pruned,
        budget: Budget,
        stats: &mut Stats,
    ) -> Solution<Self::Unsat>;

    /// Tells the violation the solver found; None: undecided.
    fn tell(
        &self,
        h: &History,
        g: &Polygraph,
        p: &mut Self::Pruned,
        unsat: Self::Unsat,
        budget: Budget,
        stats: &mut Stats,
    ) -> Option<Self::Told>;
}

/// Builds, prunes, solves and tells `level` on `h` within `budget`; the
/// figures say what each stage did and the work the whole did.
pub(super) fn run<L: Level>(h: &History, level: &L, budget: Budget) -> Ran<L::Told> {
    let before = budget::spent();
    let mut stats = Stats::default();
    let verdict = stages(h, level, budget, &mut stats);
    stats.work = budget::spent() - before;
    crate::check::stages::add(&stats);
    Ran { verdict, stats }
}

/// [`run`]'s stages.
fn stages<L: Level>(h: &History, level: &L, budget: Budget, stats: &mut Stats) -> Verdict<L::Told> {
    if budget.expired() {
        return Verdict::Unknown;
    }
    let t = Timer::start();
    let Some((mut g, built)) = level.build(h, budget) else {
        return Verdict::Unknown;
    };
    if g.too_big || g.cut {
        stats.too_big = g.too_big;
        return Verdict::Unknown;
    }
    stats.constraints_before = g.constraints.len();
    stats.unknown_before = g.unknown_edges;
    stats.construct_s = t.secs();
    let t = Timer::start();
    let mut p = level.prune(h, (&mut g, built), budget, stats);
    stats.prune_s = t.secs();
    let t = Timer::start();
    if let Some(told) = level.pruned(h, &g, &mut p, budget, stats) {
        stats.interpret_s = t.secs();
        return Verdict::Violated(told);
    }
    let t = Timer::start();
    let solution = level.solve(h, &g, &mut p, budget, stats);
    stats.solve_s = t.secs();
    match solution {
        Solution::Found => Verdict::Holds,
        Solution::Unknown => Verdict::Unknown,
        Solution::None(unsat) => {
            let t = Timer::start();
            let told = level.tell(h, &g, &mut p, unsat, budget, stats);
            stats.interpret_s = t.secs();
            told.map_or(Verdict::Unknown, Verdict::Violated)
        }
    }
}

/// Pruning's figures: its rounds, and the constraints it left open
/// (`open`) with their unknown edges.
pub(super) fn figures(
    stats: &mut Stats,
    g: &Polygraph,
    rounds: usize,
    open: impl Iterator<Item = usize>,
) {
    stats.prune_rounds = rounds;
    stats.constraints_after = 0;
    stats.unknown_after = 0;
    for c in open {
        let con = &g.constraints[c];
        stats.constraints_after += 1;
        stats.unknown_after +=
            con.either.len() + con.or.len() + con.either_if.len() + con.or_if.len();
    }
}
