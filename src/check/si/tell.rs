//! Telling a cycle: transaction-level edges of the polygraph into Elle's
//! anomaly (its kind from the cycle's steps, each step's relation and the
//! datum that justifies it), and the predicates on edge kinds that the
//! cycle passes of [`super::cycles`] keep; and how much a check tells
//! ([`Telling`]).

use super::polygraph::{EdgeId, EdgeKind, Polygraph};
use crate::anomaly::{Anomaly, Datum, Field, Grounds, On, Path, Step};
use crate::history::model::*;
use crate::spec::AnomalyType;
use crate::spec::naming::{self as cycle, Rel};

/// How much a check tells of a violation it finds, and what deciding may
/// cost when the verdict only serves to name another's cycles. Every bound
/// is work, counted in steps, never in seconds: the same history gets the
/// same report however loaded the host (the user's `--timeout` is the only
/// clock, and what it cuts is said to be cut).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Telling {
    /// Cycles are looked for and told, within `steps`; else a violation is
    /// told as its variant's `*-cycle-exists` alone.
    pub cycles: bool,
    /// Most edges the cycle searches may look at ([`super::cycles::Work`]);
    /// past them the violations not told are counted (`:also`).
    pub steps: u64,
    /// Most decisions the solver may make (`None`: no bound); past them the
    /// variant is undecided.
    pub decisions: Option<u64>,
}

impl Telling {
    /// A verdict asked for: its cycles told, the solver unbounded.
    pub const FULL: Telling = Telling {
        cycles: true,
        steps: Self::TELL_STEPS,
        decisions: None,
    };

    /// [`crate::check::tuning::TELL_STEPS`].
    pub const TELL_STEPS: u64 = crate::check::tuning::TELL_STEPS;

    /// [`crate::check::tuning::NAMING_DECISIONS`].
    pub const NAMING_DECISIONS: u64 = crate::check::tuning::NAMING_DECISIONS;

    /// Whether the variant is rejected, no cycle told, the solver bounded
    /// by [`Telling::NAMING_DECISIONS`].
    pub const VERDICT: Telling = Telling {
        cycles: false,
        steps: 0,
        decisions: Some(Self::NAMING_DECISIONS),
    };

    /// The same, with the solver bounded as naming is.
    pub fn naming(self) -> Telling {
        self.within(Self::NAMING_DECISIONS)
    }

    /// The same, the solver taking at most `bound` decisions.
    pub fn within(self, bound: u64) -> Telling {
        Telling {
            decisions: Some(self.decisions.map_or(bound, |d| d.min(bound))),
            ..self
        }
    }

    /// Whether `self` bounds the solver no tighter than `other`.
    pub fn no_tighter(self, other: Telling) -> bool {
        match (self.decisions, other.decisions) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => a >= b,
        }
    }
}

pub(super) fn rel(k: EdgeKind) -> Rel {
    match k {
        EdgeKind::Ww => Rel::Ww,
        EdgeKind::Wr => Rel::Wr,
        EdgeKind::Rw => Rel::Rw,
        EdgeKind::Process => Rel::Process,
        EdgeKind::Realtime => Rel::Realtime,
    }
}

/// What edge `e` rests on beside reads and writes: session order or real
/// time, for an anti-dependency a dependency path ordered and no data
/// path does (see [`super::grounds`]).
pub(super) fn through(g: &Polygraph, e: EdgeId) -> Option<EdgeKind> {
    g.through.get().and_then(|t| t.of(e))
}

/// The name of a cycle of these edges: by its steps, and the orders its
/// steps rest on beside them (an anti-dependency that holds through real
/// time makes the cycle `-realtime`, as a real-time step would).
pub(super) fn cycle_name(g: &Polygraph, edges: &[EdgeId]) -> AnomalyType {
    name_of(g, edges, &rels(g, edges))
}

/// The relations of a cycle's edges, in order.
fn rels(g: &Polygraph, edges: &[EdgeId]) -> Vec<Rel> {
    edges
        .iter()
        .map(|&e| rel(g.edges[e as usize].kind))
        .collect()
}

/// [`cycle_name`], given the edges' relations `steps`.
fn name_of(g: &Polygraph, edges: &[EdgeId], steps: &[Rel]) -> AnomalyType {
    let rests: Vec<Rel> = edges
        .iter()
        .filter_map(|&e| through(g, e))
        .map(rel)
        .collect();
    cycle::name_resting(steps, &rests)
}

/// The step of a transaction-level edge.
pub(super) fn step(h: &History, g: &Polygraph, e: EdgeId) -> Step {
    let ed = g.edges[e as usize];
    let on = match ed.kind {
        EdgeKind::Process => {
            On::Process(h.sessions[h.txns[ed.a as usize].session as usize].process)
        }
        EdgeKind::Realtime => On::Realtime(ed.a, ed.b),
        EdgeKind::Wr => On::Read(ed.key, ed.va),
        EdgeKind::Ww | EdgeKind::Rw => {
            On::Versions(ed.key, (ed.va != Val::NIL).then_some(ed.va), ed.vb)
        }
    };
    let mut s = Step::new(rel(ed.kind), on);
    if let Some(k) = through(g, e) {
        s.grounds = Grounds::Through(rel(k));
    } else if g.through.get().is_some_and(|t| t.on_data(e)) {
        s.grounds = Grounds::Through(Rel::Wr);
    }
    s
}

/// An Elle cycle anomaly from transaction-level edges in order.
pub(super) fn cycle_anomaly(h: &History, g: &Polygraph, edges: &[EdgeId]) -> Anomaly {
    let rels = rels(g, edges);
    let keys: Vec<Option<u32>> = edges
        .iter()
        .map(|&e| {
            let ed = g.edges[e as usize];
            matches!(ed.kind, EdgeKind::Ww | EdgeKind::Wr | EdgeKind::Rw).then_some(ed.key)
        })
        .collect();
    let mut a = Anomaly::new(name_of(g, edges, &rels));
    let mut txns = Vec::new();
    for &e in edges {
        let t = g.edges[e as usize].a;
        a = a.txn(t);
        txns.push(t);
    }
    if let Some(&e) = edges.first() {
        txns.push(g.edges[e as usize].a);
    }
    a = a.cycle(Path {
        txns,
        steps: edges.iter().map(|&e| step(h, g, e)).collect(),
    });
    if let Some(s) = cycle::shape(&rels, &keys) {
        a = a.field(Field::Shape, Datum::kw(s));
    }
    a
}

pub(super) fn ww_only(k: EdgeKind) -> bool {
    k == EdgeKind::Ww
}

pub(super) fn ww_wr(k: EdgeKind) -> bool {
    matches!(k, EdgeKind::Ww | EdgeKind::Wr)
}

pub(super) fn data_dep(k: EdgeKind) -> bool {
    matches!(k, EdgeKind::Ww | EdgeKind::Wr | EdgeKind::Rw)
}

pub(super) fn data_or_session(k: EdgeKind) -> bool {
    data_dep(k) || k == EdgeKind::Process
}

pub(super) fn any_kind(_: EdgeKind) -> bool {
    true
}
