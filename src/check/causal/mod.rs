//! Read committed, read atomic and transactional causal consistency, by
//! C4's anomalous patterns, decided exactly.
//!
//! Theory (Biswas & Enea, OOPSLA'19; C4, VLDB'24). Each level asks for a
//! total commit order extending session order SO and write-read WR in
//! which every read returns the latest write it may see. If transaction
//! `t3` reads key `x` from `t1`, and another writer `t2` of `x` is visible
//! to that read, then `t2` must commit before `t1`. What "visible" means is
//! the level:
//!
//! | level | `t2` is visible to `t3`'s read `r` of `x` when                      |
//! |-------|----------------------------------------------------------------------|
//! | RC    | `t3` read something from `t2` earlier than `r`                        |
//! | RA    | `t2` precedes `t3` in its session, or `t3` read anything from `t2`    |
//! | TCC   | `t2` precedes `t3` in causal order CO = (SO ∪ WR)+                    |
//!
//! A history satisfies the level exactly when SO ∪ WR ∪ these derived edges
//! (plus, for list-append, the write-write order the lists reveal) is
//! acyclic, and no read is ill-formed (thin air, aborted, intermediate,
//! future, or against the transaction's own writes: found earlier, by
//! compilation and `check::basic`). A read of the initial state with any
//! visible writer is a violation at once.
//!
//! Every violating derived edge is one instance of a C4 pattern, named by
//! how `t1` precedes `t2` (CO: by causal order; AO: only through derived
//! edges) and how `t2` is visible to `t3` (an earlier read: NonMonoRead; a
//! later read or session order: FracturedRead; causal order only:
//! Conflict). The names are level-consistent: RC's premise only yields
//! NonMonoRead shapes, RA's adds FracturedRead, TCC's adds the rest.
//!
//! Reachability in CO comes from clocks (see `clocks`) computed once in
//! topological order; acyclicity of the derived graph from its strongly
//! connected components.
//!
//! Data flow: `driver::check` builds the context (`driver::build`: clocks,
//! writers per key and session), `derive` enumerates the derived edges,
//! the driver finds the cycles of SO ∪ WR ∪ WW ∪ derived, and `findings`
//! names each as a C4 pattern instance or an Elle cycle anomaly.

mod derive;
mod driver;
mod findings;
#[cfg(test)]
mod tests;

pub use driver::{Clocks, Counted, Filing, Instance, Ledger, Level, Stats, check};
