//! Telling a cycle: transaction-level edges of the polygraph into Elle's
//! anomaly (its kind from the cycle's steps, each step's relation and the
//! datum that justifies it), and the predicates on edge kinds that the
//! cycle passes of [`super::cycles`] keep.

use super::polygraph::{EdgeId, EdgeKind, Polygraph};
use crate::anomaly::{Anomaly, Datum};
use crate::explain::cycle::{self, Rel};
use crate::history::model::*;

pub(super) fn rel(k: EdgeKind) -> Rel {
    match k {
        EdgeKind::Ww => Rel::Ww,
        EdgeKind::Wr => Rel::Wr,
        EdgeKind::Rw => Rel::Rw,
        EdgeKind::Process => Rel::Process,
        EdgeKind::Realtime => Rel::Realtime,
    }
}

pub(super) fn step_datum(h: &History, g: &Polygraph, e: EdgeId) -> Datum {
    let ed = g.edges[e as usize];
    let mut f = vec![("type".to_string(), Datum::kw(ed.kind.name()))];
    match ed.kind {
        EdgeKind::Process => f.push((
            "process".into(),
            Datum::Int(h.sessions[h.txns[ed.a as usize].session as usize].process),
        )),
        EdgeKind::Realtime => {
            f.push(("a'".into(), Datum::Txn(ed.a)));
            f.push(("b".into(), Datum::Txn(ed.b)));
        }
        EdgeKind::Wr => {
            f.push(("key".into(), Datum::Key(ed.key)));
            f.push(("value".into(), Datum::Val(ed.va)));
        }
        EdgeKind::Ww | EdgeKind::Rw => {
            f.push(("key".into(), Datum::Key(ed.key)));
            f.push((
                "value".into(),
                if ed.va == Val::NIL {
                    Datum::kw("initial-state")
                } else {
                    Datum::Val(ed.va)
                },
            ));
            f.push(("value'".into(), Datum::Val(ed.vb)));
        }
    }
    Datum::Map(f)
}

/// An Elle cycle anomaly from transaction-level edges in order.
pub(super) fn cycle_anomaly(h: &History, g: &Polygraph, edges: &[EdgeId]) -> Anomaly {
    let rels: Vec<Rel> = edges
        .iter()
        .map(|&e| rel(g.edges[e as usize].kind))
        .collect();
    let keys: Vec<Option<u32>> = edges
        .iter()
        .map(|&e| {
            let ed = g.edges[e as usize];
            matches!(ed.kind, EdgeKind::Ww | EdgeKind::Wr | EdgeKind::Rw).then_some(ed.key)
        })
        .collect();
    let mut a = Anomaly::new(cycle::name(&rels));
    let mut ops = Vec::new();
    for &e in edges {
        let t = g.edges[e as usize].a;
        a = a.txn(t);
        ops.push(Datum::Txn(t));
    }
    if let Some(&e) = edges.first() {
        ops.push(Datum::Txn(g.edges[e as usize].a));
    }
    a = a.field("cycle", Datum::List(ops)).field(
        "steps",
        Datum::List(edges.iter().map(|&e| step_datum(h, g, e)).collect()),
    );
    if let Some(s) = cycle::shape(&rels, &keys) {
        a = a.field("shape", Datum::kw(s));
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
