//! Running totals of where the SI and serializability checker spends its
//! time, for benchmarks: every polygraph it checks (the whole history's,
//! a window's, a guessed order's, a weaker variant's consulted to name a
//! cycle) adds its build, prune, solve and explain times here when its
//! check ends. Read with [`totals`]; a process that checks one history
//! reads what that check cost by stage.
//!
//! Explain is the checker's `interpret` stage: finding and telling the
//! cycles of a violation (known cycles, contradictions, the unsatisfiable
//! core and its witness). Time outside a polygraph (the logged-order
//! witness, the bounded-sessions search, the causal checkers, reading the
//! history) is in none of them.

use std::sync::atomic::{AtomicU64, Ordering};

use super::si::Stats;

/// Seconds spent in each stage, summed over the polygraphs checked.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Building the polygraph (constraints from the reads and writes).
    pub build: f64,
    /// Pruning its constraints to a fixpoint.
    pub prune: f64,
    /// The SAT solver with the acyclicity theory.
    pub solve: f64,
    /// Finding and telling the cycles of a violation.
    pub explain: f64,
    /// Polygraphs checked.
    pub graphs: u64,
}

/// Nanoseconds per stage (build, prune, solve, explain), then the count.
static TOTALS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

/// Adds one polygraph check's stage times.
pub(crate) fn add(s: &Stats) {
    let stages = [s.construct_s, s.prune_s, s.solve_s, s.interpret_s];
    for (total, secs) in TOTALS.iter().zip(stages) {
        total.fetch_add((secs * 1e9) as u64, Ordering::Relaxed);
    }
    TOTALS[4].fetch_add(1, Ordering::Relaxed);
}

/// The stage times of every polygraph checked in this process so far.
pub fn totals() -> StageTimes {
    let secs = |i: usize| TOTALS[i].load(Ordering::Relaxed) as f64 / 1e9;
    StageTimes {
        build: secs(0),
        prune: secs(1),
        solve: secs(2),
        explain: secs(3),
        graphs: TOTALS[4].load(Ordering::Relaxed),
    }
}

/// A stage's stopwatch, for the figures above and `-v`: read only to
/// report, never to decide anything.
pub(crate) struct Timer(std::time::Instant);

impl Timer {
    pub(crate) fn start() -> Timer {
        Timer(std::time::Instant::now())
    }

    /// Seconds since it started.
    pub(crate) fn secs(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}
