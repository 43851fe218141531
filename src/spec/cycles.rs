//! The cycles of the dependency graph a set of prohibited anomaly types
//! rules out, by shape ([`Shapes`]): Elle's cycle anomalies (G0, G1c,
//! G-single, G-nonadjacent, G2 and their `-process` / `-realtime` forms)
//! as what a version order may not close. Every read elle-si takes is an
//! item read, so G-single, G-nonadjacent and G2 are their `-item` forms.
//!
//! Elle names a cycle by its steps (`elle.txn`'s cycle explainer): no
//! anti-dependency and only write-write steps, G0; with a write-read step,
//! G1c; one anti-dependency, G-single-item; several, none two adjacent,
//! G-nonadjacent-item; else G2-item; `-realtime` / `-process` when a step
//! is one of those orders. A prohibited set is closed under
//! `all-anomalies-implying` (a G-single-item is also a G2-item, a G0 a
//! G1c, a cycle of data a `-process` one), so what it rules out is, per
//! set of orders a cycle may run through, one level of each chain: G0
//! within G1c for cycles of dependencies, G-single-item within
//! G-nonadjacent-item within G2-item for cycles with anti-dependencies.
//! Asked with no model, a G2-item rules out every cycle with an
//! anti-dependency but leaves G1c cycles allowed: that is not
//! serializability (Elle's `prohibited-anomaly-types` with
//! `:consistency-models nil`).

use std::collections::BTreeSet;

use super::{AnomalyType, Checker, lattice};

/// The orders beside data a cycle may run through: none, session order,
/// or real time (with session order, as elle-si's real-time forms take
/// it).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Through {
    /// Data dependencies alone.
    Data,
    /// And session order.
    Process,
    /// And session order and real time.
    Realtime,
}

impl Through {
    /// Each, from the fewest orders.
    pub const ALL: [Through; 3] = [Through::Data, Through::Process, Through::Realtime];

    /// Elle's suffix for a cycle through this order.
    pub fn suffix(self) -> &'static str {
        match self {
            Through::Data => "",
            Through::Process => "-process",
            Through::Realtime => "-realtime",
        }
    }
}

/// Which cycles of dependencies alone (no anti-dependency) are ruled out.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum DepCycles {
    /// None of them.
    #[default]
    None,
    /// G0: write-write steps only.
    Ww,
    /// G1c (and G0): write-write and write-read steps.
    WwWr,
}

/// Which cycles with anti-dependencies are ruled out.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum RwCycles {
    /// None of them.
    #[default]
    None,
    /// G-single-item: exactly one anti-dependency.
    Single,
    /// G-nonadjacent-item (and G-single-item): one or more, no two
    /// adjacent.
    Nonadjacent,
    /// G2-item (and the two above): one or more.
    Any,
}

/// What a set of prohibited anomaly types rules out of the dependency
/// graph's cycles, per [`Through`] (indexed by it): each level covers the
/// cycles through that order and those with less (a set that prohibits a
/// G0-realtime prohibits a G0 too).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Shapes {
    /// Cycles of dependencies alone ruled out, through each order.
    pub dep: [DepCycles; 3],
    /// Cycles with anti-dependencies ruled out, through each order.
    pub rw: [RwCycles; 3],
}

/// A cycle type's shape: the level it stands for, and its order.
enum Level {
    Dep(DepCycles),
    Rw(RwCycles),
}

/// Each cycle anomaly type elle-si's polygraph can close, by shape and
/// order (the predicate forms are the item forms: reads are item reads).
fn shape_of(a: AnomalyType) -> Option<(Level, Through)> {
    use AnomalyType::*;
    use Through as T;
    let (d, r) = (Level::Dep, Level::Rw);
    Some(match a {
        G0 => (d(DepCycles::Ww), T::Data),
        G0Process => (d(DepCycles::Ww), T::Process),
        G0Realtime => (d(DepCycles::Ww), T::Realtime),
        G1c => (d(DepCycles::WwWr), T::Data),
        G1cProcess => (d(DepCycles::WwWr), T::Process),
        G1cRealtime => (d(DepCycles::WwWr), T::Realtime),
        GSingleItem | GSingle => (r(RwCycles::Single), T::Data),
        GSingleItemProcess | GSingleProcess => (r(RwCycles::Single), T::Process),
        GSingleItemRealtime | GSingleRealtime => (r(RwCycles::Single), T::Realtime),
        GNonadjacentItem | GNonadjacent => (r(RwCycles::Nonadjacent), T::Data),
        GNonadjacentItemProcess | GNonadjacentProcess => (r(RwCycles::Nonadjacent), T::Process),
        GNonadjacentItemRealtime | GNonadjacentRealtime => (r(RwCycles::Nonadjacent), T::Realtime),
        G2Item | G2 => (r(RwCycles::Any), T::Data),
        G2ItemProcess | G2Process => (r(RwCycles::Any), T::Process),
        G2ItemRealtime | G2Realtime => (r(RwCycles::Any), T::Realtime),
        _ => return None,
    })
}

/// Whether an anomaly type is a cycle of the dependency graph that some
/// [`Shapes`] level stands for.
pub fn is_cycle_type(a: AnomalyType) -> bool {
    shape_of(a).is_some()
}

/// The item cycle type of a level through an order.
fn type_of(level: Level, t: Through) -> AnomalyType {
    let base = match level {
        Level::Dep(DepCycles::Ww) => "G0",
        Level::Dep(_) => "G1c",
        Level::Rw(RwCycles::Single) => "G-single-item",
        Level::Rw(RwCycles::Nonadjacent) => "G-nonadjacent-item",
        Level::Rw(_) => "G2-item",
    };
    AnomalyType::parse(&format!("{base}{}", t.suffix()))
        .unwrap_or_else(|_| unreachable!("every level has an item type through every order"))
}

impl Shapes {
    /// What `prohibited` rules out.
    pub fn of(prohibited: &BTreeSet<AnomalyType>) -> Shapes {
        let mut s = Shapes::default();
        for &a in prohibited {
            match shape_of(a) {
                Some((Level::Dep(d), t)) => s.dep[t as usize] = s.dep[t as usize].max(d),
                Some((Level::Rw(r), t)) => s.rw[t as usize] = s.rw[t as usize].max(r),
                None => {}
            }
        }
        // A level through more orders covers the cycles through fewer.
        for i in (0..2).rev() {
            s.dep[i] = s.dep[i].max(s.dep[i + 1]);
            s.rw[i] = s.rw[i].max(s.rw[i + 1]);
        }
        s
    }

    /// Whether some cycle with an anti-dependency is ruled out.
    pub fn has_rw(&self) -> bool {
        self.rw[0] != RwCycles::None
    }

    /// The most orders a ruled-out cycle may run through.
    pub fn through(&self) -> Through {
        Through::ALL
            .into_iter()
            .rev()
            .find(|&t| {
                self.dep[t as usize] != DepCycles::None || self.rw[t as usize] != RwCycles::None
            })
            .unwrap_or(Through::Data)
    }

    /// The cycle types these shapes stand for, their weakest per level and
    /// order (a G2-item for G2-item, G-nonadjacent-item and G-single-item).
    pub fn types(&self) -> Vec<AnomalyType> {
        let mut out = Vec::new();
        for t in Through::ALL {
            let (d, r) = (self.dep[t as usize], self.rw[t as usize]);
            if d != DepCycles::None {
                out.push(type_of(Level::Dep(d), t));
            }
            if r != RwCycles::None {
                out.push(type_of(Level::Rw(r), t));
            }
        }
        out
    }

    /// What a violation proves, when every version order closes one of
    /// these cycles but no one type is closed in all: the type among
    /// [`Shapes::types`] that rules out only models that prohibit every
    /// one of them (so that it claims nothing a violation does not
    /// prove). None where there is no such type (a G1c through real time
    /// beside a G-single-item of data: each rules out models the other
    /// does not).
    pub fn claim(&self) -> Option<AnomalyType> {
        let types = self.types();
        let ruled = |a: AnomalyType| lattice::impossible_models(&BTreeSet::from([a]));
        let all: Vec<_> = types.iter().map(|&a| ruled(a)).collect();
        types
            .iter()
            .zip(&all)
            .find(|(_, mine)| all.iter().all(|other| mine.is_subset(other)))
            .map(|(&a, _)| a)
    }

    /// The complete polygraph checker that rules out exactly these
    /// cycles, when there is one: serializability (every cycle) or
    /// snapshot isolation (G1c and G-nonadjacent-item), through the same
    /// orders.
    pub fn as_checker(&self) -> Option<Checker> {
        let t = self.through();
        let upto = |i: usize| i <= t as usize;
        let dep_all = (0..3).all(|i| (self.dep[i] == DepCycles::WwWr) == upto(i));
        let rw = |level: RwCycles| (0..3).all(|i| (self.rw[i] == level) == upto(i));
        let (session, realtime) = (t >= Through::Process, t == Through::Realtime);
        if !dep_all {
            None
        } else if rw(RwCycles::Any) {
            Some(Checker::Serializable { session, realtime })
        } else if rw(RwCycles::Nonadjacent) {
            Some(Checker::SnapshotIsolation { session, realtime })
        } else {
            None
        }
    }

    /// The narrowest complete polygraph checker whose cycles include all
    /// of these (so that its accepting proves these absent).
    pub fn covered_by(&self) -> Checker {
        let t = self.through();
        let (session, realtime) = (t >= Through::Process, t == Through::Realtime);
        if self.rw[0] <= RwCycles::Nonadjacent {
            Checker::SnapshotIsolation { session, realtime }
        } else {
            Checker::Serializable { session, realtime }
        }
    }
}

/// When `prohibited` asks the polygraph for cycles of dependencies alone
/// (no anti-dependency), the orders those may run through (session
/// order, real time); None when it asks for another anomaly only the
/// polygraph finds, or for none. Such cycles are decided without the
/// polygraph (`check::committed`).
pub fn dependency_cycles_only(prohibited: &BTreeSet<AnomalyType>) -> Option<(bool, bool)> {
    let others = prohibited
        .iter()
        .any(|&a| a.polygraph_finds() && !matches!(shape_of(a), Some((Level::Dep(_), _))));
    let s = Shapes::of(prohibited);
    if others || s.dep[0] == DepCycles::None {
        return None;
    }
    let t = s.through();
    Some((t >= Through::Process, t == Through::Realtime))
}

/// The cycle types of dependencies alone (G0, G1c and their forms)
/// through no more than session order (if `process`) and real time (if
/// `realtime`).
pub fn dependency_cycles(process: bool, realtime: bool) -> impl Iterator<Item = AnomalyType> {
    let most = match (process, realtime) {
        (true, true) => Through::Realtime,
        (true, false) => Through::Process,
        _ => Through::Data,
    };
    AnomalyType::ALL.iter().copied().filter(move |&a| {
        matches!(shape_of(a), Some((Level::Dep(_), t)) if t <= most) && a.polygraph_finds()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Model;
    use AnomalyType as A;

    fn asked(xs: &[AnomalyType]) -> Shapes {
        Shapes::of(&lattice::anomalies_implying(xs))
    }

    #[test]
    fn g2_item_alone_rules_out_anti_dependency_cycles_and_no_g1c() {
        let s = asked(&[A::G2Item]);
        assert_eq!(s.rw, [RwCycles::Any, RwCycles::None, RwCycles::None]);
        assert_eq!(s.dep, [DepCycles::None; 3]);
        assert_eq!(s.claim(), Some(A::G2Item));
        assert_eq!(s.as_checker(), None);
        let g = asked(&[A::GSingle]);
        assert_eq!(g.rw[0], RwCycles::Single);
        assert_eq!(g.claim(), Some(A::GSingleItem));
        assert!(!asked(&[A::G1c]).has_rw());
    }

    #[test]
    fn models_shapes_are_their_checkers() {
        let of = |m: Model| Shapes::of(&lattice::prohibited_by(&[m]));
        assert_eq!(
            of(Model::Serializable).as_checker(),
            Some(Checker::Serializable {
                session: false,
                realtime: false
            })
        );
        assert_eq!(
            of(Model::SnapshotIsolation).as_checker(),
            Some(Checker::SnapshotIsolation {
                session: false,
                realtime: false
            })
        );
        assert_eq!(
            of(Model::StrictSerializable).as_checker(),
            Some(Checker::Serializable {
                session: true,
                realtime: true
            })
        );
        // Repeatable read's cycles are serializability's (item reads).
        assert_eq!(
            of(Model::RepeatableRead).as_checker(),
            of(Model::Serializable).as_checker()
        );
        // Consistent view: G1c and G-single-item, no checker of its own.
        let cv = of(Model::ConsistentView);
        assert_eq!(cv.dep[0], DepCycles::WwWr);
        assert_eq!(cv.rw[0], RwCycles::Single);
        assert_eq!(cv.as_checker(), None);
        assert_eq!(cv.claim(), Some(A::GSingleItem));
        assert_eq!(
            asked(&[A::G1c, A::G2Item]).as_checker(),
            of(Model::Serializable).as_checker()
        );
    }

    #[test]
    fn a_claim_rules_out_no_model_one_of_the_cycles_leaves() {
        // G-single-item's models all prohibit G1c too; a G1c through real
        // time and a G-single-item of data rule out unrelated models.
        assert_eq!(
            asked(&[A::G1c, A::GSingleItemProcess]).claim(),
            Some(A::GSingleItemProcess)
        );
        assert_eq!(asked(&[A::G1cRealtime, A::GSingleItem]).claim(), None);
        assert_eq!(asked(&[A::G0, A::G2Item]).claim(), Some(A::G2Item));
    }

    #[test]
    fn dependency_cycles_by_orders() {
        assert_eq!(
            dependency_cycles_only(&lattice::anomalies_implying(&[A::G2Item])),
            None
        );
        let d: Vec<_> = dependency_cycles(true, false).collect();
        assert_eq!(d, vec![A::G0, A::G0Process, A::G1c, A::G1cProcess]);
        assert_eq!(dependency_cycles(true, true).count(), 6);
        assert_eq!(dependency_cycles(false, true).count(), 2);
    }
}
