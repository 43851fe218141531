//! Adya's G0 and G1c (and their `-process` and `-realtime` forms) decided
//! without the polygraph, for the parts of a request that ask it for no
//! other cycle (read committed, read uncommitted and their session and
//! real-time forms; G1c asked for by name).
//!
//! These cycles run through dependencies alone (write-write, write-read,
//! and session order or real time where the form says so), never an
//! anti-dependency. So a version order free of them exists exactly when
//! the dependencies every version order has are acyclic: the write-read
//! edges, the write orders list reads reveal ([`deps::ww_edges`]), and
//! session order and real time as asked. Given a topological order of
//! those, ordering each key's other writers by it adds only edges that go
//! forward (Adya, PL-2; PolySI's polygraph, which decides them through
//! SI's constraints, needs an order SI accepts and may end `:unknown`).
//! When they are cyclic, the cycle is a violation of every version order,
//! told as before (C4's read committed finds it, the polygraph too).

use std::collections::BTreeSet;

use super::deps;
use super::graph::{Digraph, topo_order};
use crate::history::model::History;
use crate::spec::AnomalyType;
use crate::spec::cycles::{dependency_cycles, dependency_cycles_only};

/// The cycles of dependencies that no version order of `h` needs, among
/// those the parts of a request (each one's prohibited anomalies) ask the
/// polygraph for when they ask it for nothing else: each set of orders
/// such a part's cycles may run through is tried once.
pub(super) fn ruled_out<'a>(
    h: &History,
    parts: impl Iterator<Item = &'a BTreeSet<AnomalyType>>,
) -> BTreeSet<AnomalyType> {
    let mut through: Vec<(bool, bool)> = parts.filter_map(dependency_cycles_only).collect();
    through.sort_unstable();
    through.dedup();
    let mut out = BTreeSet::new();
    for (process, realtime) in through {
        if order_without_dependency_cycle(h, process, realtime) {
            out.extend(dependency_cycles(process, realtime));
        }
    }
    out
}

/// Whether some version order of `h` has no cycle of dependencies (data,
/// and session order and real time as asked). Reads that may have
/// observed any of several writes leave it undecided (false).
fn order_without_dependency_cycle(h: &History, process: bool, realtime: bool) -> bool {
    if !h.candidates.is_empty() {
        return false;
    }
    let inc = deps::included(h);
    let mut edges = deps::wr_edges(h, &inc);
    edges.extend(deps::ww_edges(h, &inc));
    if process {
        edges.extend(deps::so_edges(h, &inc));
    }
    if realtime {
        edges.extend(deps::realtime_edges(h, &inc));
    }
    topo_order(&Digraph::from_edges(h.txns.len(), &edges), &inc).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{LoadOptions, load_bytes};

    fn history(text: &str) -> History {
        load_bytes("t.edn", text.as_bytes().to_vec(), LoadOptions::default())
            .expect("loads")
            .history
    }

    #[test]
    fn read_committed_asks_the_polygraph_only_for_dependency_cycles() {
        use crate::spec::{Model, lattice};
        let rc = lattice::prohibited_by(&[Model::ReadCommitted]);
        assert_eq!(dependency_cycles_only(&rc), Some((false, false)));
        let ssrc = lattice::prohibited_by(&[Model::StrongSessionReadCommitted]);
        assert_eq!(dependency_cycles_only(&ssrc), Some((true, false)));
        let si = lattice::prohibited_by(&[Model::SnapshotIsolation]);
        assert_eq!(dependency_cycles_only(&si), None);
        let g1a = BTreeSet::from([AnomalyType::G1a]);
        assert_eq!(dependency_cycles_only(&g1a), None);
    }

    #[test]
    fn reads_in_a_circle_leave_no_order_and_writes_no_one_read_do() {
        // T0 and T1 each read the other's write: G1c whatever the order.
        let circle = history(
            "{:type :invoke, :process 0, :f :txn, :value [[:w :x 1] [:r :y nil]]}
{:type :invoke, :process 1, :f :txn, :value [[:w :y 1] [:r :x nil]]}
{:type :ok, :process 0, :f :txn, :value [[:w :x 1] [:r :y 1]]}
{:type :ok, :process 1, :f :txn, :value [[:w :y 1] [:r :x 1]]}
",
        );
        assert!(!order_without_dependency_cycle(&circle, false, false));
        // Two writers of x each read the other's key in its initial state:
        // a G2-item under every order, but no dependency cycle.
        let skew = history(
            "{:type :invoke, :process 0, :f :txn, :value [[:r :y nil] [:w :x 1]]}
{:type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:w :y 1]]}
{:type :ok, :process 0, :f :txn, :value [[:r :y nil] [:w :x 1]]}
{:type :ok, :process 1, :f :txn, :value [[:r :x nil] [:w :y 1]]}
",
        );
        assert!(order_without_dependency_cycle(&skew, true, true));
    }

    #[test]
    fn session_order_closes_a_cycle_reads_alone_do_not() {
        // Process 0 reads y's 1, then writes x; process 1 reads x's 1, then
        // writes y: each read what the other session wrote later, a
        // circle only session order closes.
        let h = history(
            "{:type :invoke, :process 0, :f :txn, :value [[:r :y nil]]}
{:type :ok, :process 0, :f :txn, :value [[:r :y 1]]}
{:type :invoke, :process 0, :f :txn, :value [[:w :x 1]]}
{:type :ok, :process 0, :f :txn, :value [[:w :x 1]]}
{:type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}
{:type :ok, :process 1, :f :txn, :value [[:r :x 1]]}
{:type :invoke, :process 1, :f :txn, :value [[:w :y 1]]}
{:type :ok, :process 1, :f :txn, :value [[:w :y 1]]}
",
        );
        assert!(order_without_dependency_cycle(&h, false, false));
        assert!(!order_without_dependency_cycle(&h, true, false));
    }
}
