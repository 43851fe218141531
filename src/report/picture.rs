//! What a counterexample's picture shows, before it is drawn: the
//! transactions of an anomaly as boxes (file line, `:index`, process,
//! status, micro-ops, shortened when long) and the dependencies between
//! them as labelled edges. [`super::dot`] writes it as Graphviz DOT,
//! [`super::svg`] draws it; both read only this.
//!
//! Data flow: an anomaly's fields, as the checkers fill them (see
//! `crate::anomaly`), become a [`Picture`]:
//! - a cycle (`:cycle`, `:steps`, inferred steps flagged `:inferred?`,
//!   assumed ones `:assumed?`): its distinct
//!   transactions in cycle order, one edge per step, those not observed marked;
//! - a causal (C4) pattern (`:op` read `:key` from `:writer` though
//!   `:overwriter` was visible to it): the writer, the path that orders it
//!   before the overwriter (`:order`), the overwriter, the reader; edges for
//!   the order's steps, the overwriter's visibility (`:visible`), the read,
//!   and the anti-dependency the read implies (drawn as derived);
//! - an aborted or intermediate read (`:op`, `:writer`, `:mop`): the writer
//!   and the reader, joined by the read.
//!
//! Other anomalies (internal, lost-update listings, ...) have no edge to
//! draw and get no picture.

use crate::anomaly::{Anomaly, Datum, Field, Grounds, On, Path, Rel, Step};
use crate::edn::Value;
use crate::history::model::*;
use crate::report::render::{datum_value, mop_value_upto};

/// Micro-ops shown in a box before the rest is summarised.
pub const MAX_MOPS: usize = 8;
/// Elements of a list read shown before the rest is summarised.
pub const MAX_ELEMS: usize = 6;

/// The relation an edge stands for, with its colour (Elle's palette, the
/// process one darkened to read on white).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// Write-write.
    Ww,
    /// Write-read.
    Wr,
    /// Read-write (anti-dependency).
    Rw,
    /// Session order.
    Process,
    /// Real time.
    Realtime,
    /// Visibility through a chain of dependencies (causal patterns).
    Visible,
    /// Arbitration order (C4's AO): one write of a key must take effect
    /// before another's, forced by a read that saw the later one though
    /// the earlier was visible to it.
    Ao,
}

impl EdgeKind {
    /// Every kind, in legend order.
    pub const ALL: [EdgeKind; 7] = [
        EdgeKind::Ww,
        EdgeKind::Wr,
        EdgeKind::Rw,
        EdgeKind::Process,
        EdgeKind::Realtime,
        EdgeKind::Visible,
        EdgeKind::Ao,
    ];

    /// The edge of a step's relation.
    pub fn of(rel: Rel) -> EdgeKind {
        match rel {
            Rel::Ww => EdgeKind::Ww,
            Rel::Wr => EdgeKind::Wr,
            Rel::Rw => EdgeKind::Rw,
            Rel::Process => EdgeKind::Process,
            Rel::Realtime => EdgeKind::Realtime,
            Rel::Ao => EdgeKind::Ao,
        }
    }

    /// Elle's keyword for the kind (without the colon).
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Ww => "ww",
            EdgeKind::Wr => "wr",
            EdgeKind::Rw => "rw",
            EdgeKind::Process => "process",
            EdgeKind::Realtime => "realtime",
            EdgeKind::Visible => "visible",
            EdgeKind::Ao => "ao",
        }
    }

    /// What the relation means, for legends.
    pub fn meaning(self) -> &'static str {
        match self {
            EdgeKind::Ww => "write-write: overwrote its version",
            EdgeKind::Wr => "write-read: read its write",
            EdgeKind::Rw => "read-write: read a version before its write",
            EdgeKind::Process => "same process, earlier",
            EdgeKind::Realtime => "completed before the other began",
            EdgeKind::Visible => "visible through a chain of dependencies",
            EdgeKind::Ao => {
                "arbitration: its write of the key must take effect first, forced by a read"
            }
        }
    }

    /// The colour edges of this kind are drawn in.
    pub fn color(self) -> &'static str {
        match self {
            EdgeKind::Ww => "#C02700",
            EdgeKind::Wr => "#B0009A",
            EdgeKind::Rw => "#5B00C0",
            EdgeKind::Process => "#00838F",
            EdgeKind::Realtime => "#0050C0",
            EdgeKind::Visible => "#5F6B7A",
            EdgeKind::Ao => "#7A4B00",
        }
    }
}

/// The colour of a transaction's status (Elle's `type->color`).
pub fn status_color(status: &str) -> &'static str {
    match status {
        "ok" => "#0058AD",
        "info" => "#AC6E00",
        "fail" => "#A50053",
        _ => "#444444",
    }
}

/// One box.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// `T1`, `T2`, ... as the prose names them, or `init`.
    pub label: String,
    /// `line 31 · :index 30 · process 3 · ok`.
    pub title: String,
    /// `ok`, `info`, `fail`, or `init` for the initial state.
    pub status: &'static str,
    /// Micro-ops, each as Elle writes it (long reads shortened).
    pub mops: Vec<String>,
    /// Micro-ops left out.
    pub more: usize,
}

/// One arrow.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// The node the edge leaves.
    pub from: usize,
    /// The node it enters.
    pub to: usize,
    /// Its relation.
    pub kind: EdgeKind,
    /// Key and values: `k1: 3 -> 4`.
    pub label: String,
    /// Observed, or not in the history (drawn dashed): forced by the model
    /// checked, implied by the pattern, or assumed.
    pub grounds: Grounds,
}

impl Edge {
    /// Drawn dashed: not in the history.
    pub fn dashed(&self) -> bool {
        self.grounds != Grounds::Observed
    }

    /// `text` with the mark of how the edge is known (`(inferred)`,
    /// `(assumed)`) where it is not observed.
    pub fn marked(&self, text: String) -> String {
        match self.grounds.mark() {
            Some(m) => format!("{text} ({m})"),
            None => text,
        }
    }
}

/// A picture of one anomaly: transaction boxes and the edges between them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Picture {
    /// The boxes, in order of first appearance.
    pub nodes: Vec<Node>,
    /// The edges.
    pub edges: Vec<Edge>,
}

/// A value as text, long collections shortened.
pub fn short(v: &Value) -> String {
    v.abbreviated(MAX_ELEMS).to_string()
}

/// A detail as text (`nil` when absent), long collections shortened.
pub fn show(h: &History, d: Option<&Datum>) -> String {
    match d {
        None | Some(Datum::Nil) => "nil".into(),
        Some(d) => short(&datum_value(h, d)),
    }
}

/// A step's details as text: its key, its value (`:initial-state` for the
/// initial version) and later value (`nil` where the step has none), and
/// whether it starts from the initial state.
pub struct Shown {
    /// The key, or `nil`.
    pub key: String,
    /// The value read or the earlier version, or `nil`.
    pub value: String,
    /// The later version, or `nil`.
    pub later: String,
    /// Whether the step has no earlier version (the initial state).
    pub initial: bool,
}

/// The details of a step as text (see [`Shown`]).
pub fn shown(h: &History, s: &Step) -> Shown {
    let (key, value, later) = match s.on {
        On::Read(k, v) => (Some(k), Some(short(&h.value(v))), None),
        On::Versions(k, v, v2) => (
            Some(k),
            Some(v.map_or_else(|| ":initial-state".to_string(), |v| short(&h.value(v)))),
            Some(short(&h.value(v2))),
        ),
        On::Forced(r) => (
            Some(h.mops[r as usize].key),
            Some(short(&h.value(h.mops[r as usize].val))),
            None,
        ),
        On::Nothing | On::Process(_) | On::Realtime(..) => (None, None, None),
    };
    let initial = value.as_deref().is_none_or(|v| v == ":initial-state");
    let nil = || "nil".to_string();
    Shown {
        key: key.map_or_else(nil, |k| short(&h.key_value(k))),
        value: value.unwrap_or_else(nil),
        later: later.unwrap_or_else(nil),
        initial,
    }
}

/// The kind and label of one step.
fn step_edge(h: &History, step: &Step) -> (EdgeKind, String) {
    let kind = EdgeKind::of(step.rel);
    let Shown {
        key,
        value: v,
        later: v2,
        initial,
    } = shown(h, step);
    let label = match kind {
        EdgeKind::Ww => format!("key {key}: {v} then {v2}"),
        EdgeKind::Wr => format!("key {key}: read {v}"),
        EdgeKind::Rw if initial => {
            format!("key {key}: read the initial state, missed {v2}")
        }
        EdgeKind::Rw if h.workload == Some(Workload::ListAppend) => {
            format!("key {key}: read up to {v}, missed {v2}")
        }
        EdgeKind::Rw => format!("key {key}: read {v}, missed {v2}"),
        EdgeKind::Ao => match step.on {
            On::Forced(r) => format!(
                "key {key}: {} read {v}",
                crate::explain::text::place(h, h.mops[r as usize].txn)
            ),
            _ => String::new(),
        },
        EdgeKind::Process | EdgeKind::Realtime | EdgeKind::Visible => String::new(),
    };
    (kind, label)
}

struct Builder<'a> {
    h: &'a History,
    pic: Picture,
    txns: Vec<Option<TxnId>>,
}

impl Builder<'_> {
    /// The node of `t` (None: the initial state), added when new.
    fn node(&mut self, t: Option<TxnId>) -> usize {
        if let Some(i) = self.txns.iter().position(|&x| x == t) {
            return i;
        }
        let label = match t {
            Some(_) => format!("T{}", self.txns.iter().filter(|x| x.is_some()).count() + 1),
            None => "init".to_string(),
        };
        let node = match t {
            Some(t) => txn_node(self.h, t, label),
            None => Node {
                label,
                title: "the initial state".into(),
                status: "init",
                mops: Vec::new(),
                more: 0,
            },
        };
        self.txns.push(t);
        self.pic.nodes.push(node);
        self.pic.nodes.len() - 1
    }

    fn edge(&mut self, a: usize, b: usize, kind: EdgeKind, label: String, grounds: Grounds) {
        // The same arrow from two sources (the order's first step is
        // often the very read the pattern is about): drawn once.
        if self.pic.edges.iter().any(|e| {
            e.from == a && e.to == b && e.kind == kind && e.label == label && e.grounds == grounds
        }) {
            return;
        }
        self.pic.edges.push(Edge {
            from: a,
            to: b,
            kind,
            label,
            grounds,
        });
    }

    /// Edges for a path of transactions and its steps.
    fn path(&mut self, p: &Path) {
        for (i, step) in p.steps.iter().enumerate() {
            let (Some(&a), Some(&b)) = (p.txns.get(i), p.txns.get(i + 1)) else {
                break;
            };
            let (a, b) = (self.node(Some(a)), self.node(Some(b)));
            let (kind, label) = step_edge(self.h, step);
            self.edge(a, b, kind, label, step.grounds);
        }
    }
}

/// A transaction's box.
fn txn_node(h: &History, t: TxnId, label: String) -> Node {
    let txn = &h.txns[t as usize];
    let mut title = Vec::new();
    if txn.complete.line > 0 {
        title.push(format!("line {}", txn.complete.line));
    }
    if txn.complete.index >= 0 {
        title.push(format!(":index {}", txn.complete.index));
    }
    title.push(format!(
        "process {}",
        h.sessions[txn.session as usize].process
    ));
    title.push(txn.status.keyword().to_string());
    let all = txn.mops();
    let n = all.len();
    let mops = all
        .take(MAX_MOPS)
        .map(|m| mop_value_upto(h, m as MopId, MAX_ELEMS).to_string())
        .collect();
    Node {
        label,
        title: title.join(" · "),
        status: match txn.status.keyword() {
            "ok" => "ok",
            "fail" => "fail",
            _ => "info",
        },
        mops,
        more: n.saturating_sub(MAX_MOPS),
    }
}

/// The picture of an anomaly, when it has edges to draw.
pub fn picture(h: &History, a: &Anomaly) -> Option<Picture> {
    let mut b = Builder {
        h,
        pic: Picture::default(),
        txns: Vec::new(),
    };
    if let Some(c) = &a.cycle {
        b.path(c);
    } else if let (Some(Datum::Txn(reader)), Some(writer)) =
        (a.get(Field::Op), a.get(Field::Writer))
    {
        let writer = match writer {
            Datum::Txn(t) => Some(*t),
            _ => None,
        };
        let key = match a.get(Field::Mop) {
            Some(Datum::Mop(m)) => short(&h.key_value(h.mops[*m as usize].key)),
            _ => show(h, a.get(Field::Key)),
        };
        let overwriter = match a.get(Field::Overwriter) {
            Some(Datum::Txn(t)) => Some(*t),
            _ => None,
        };
        // The writer first, then what orders it before the overwriter.
        let w = b.node(writer);
        if let Some(Datum::Path(order)) = a.get(Field::Order) {
            b.path(order);
        }
        // What the read returned: the element, else the read's value.
        let read = match (a.get(Field::Element), a.get(Field::Mop)) {
            (Some(d), _) => show(h, Some(d)),
            (None, Some(Datum::Mop(m))) => match mop_value_upto(h, *m, MAX_ELEMS) {
                Value::Vector(v) if v.len() == 3 => short(&v[2]),
                _ => String::new(),
            },
            _ => String::new(),
        };
        let r_label = format!("key {key}: read {read}");
        if let Some(o) = overwriter {
            let o = b.node(Some(o));
            let r = b.node(Some(*reader));
            match a.get(Field::Visible) {
                Some(Datum::Step(step)) => {
                    let (kind, label) = step_edge(h, step);
                    b.edge(o, r, kind, label, Grounds::Observed);
                }
                Some(Datum::List(steps)) => b.edge(
                    o,
                    r,
                    EdgeKind::Visible,
                    format!("through {} dependencies", steps.len()),
                    Grounds::Observed,
                ),
                _ => {}
            }
            b.edge(w, r, EdgeKind::Wr, r_label, Grounds::Observed);
            b.edge(
                r,
                o,
                EdgeKind::Rw,
                format!("key {key}: missed the overwrite"),
                Grounds::Inferred,
            );
        } else {
            let r = b.node(Some(*reader));
            b.edge(w, r, EdgeKind::Wr, r_label, Grounds::Observed);
        }
    }
    (!b.pic.edges.is_empty()).then_some(b.pic)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{LoadOptions, load_bytes};

    #[test]
    fn a_lost_update_is_two_boxes_and_two_edges() {
        let log = b"{:type :ok, :process 0, :index 1, :value [[:r :x nil] [:w :x 1]]}\n\
                    {:type :ok, :process 1, :index 3, :value [[:r :x nil] [:w :x 2]]}\n";
        let l = load_bytes("t.edn", log.to_vec(), LoadOptions::default()).expect("loads");
        let r = crate::explain::text::tests::at_serializable(&l);
        let a = r
            .anomalies
            .values()
            .flatten()
            .find(|a| a.cycle.is_some())
            .expect("a cycle");
        let p = picture(&l.history, a).expect("a picture");
        assert_eq!(p.nodes.len(), 2);
        assert_eq!(p.edges.len(), 2);
        assert!(p.edges.iter().any(|e| e.kind == EdgeKind::Rw));
        assert!(p.nodes[0].title.contains("line"), "{:?}", p.nodes[0]);
    }

    #[test]
    fn long_transactions_are_shortened() {
        let mops: String = (0..20).map(|i| format!("[:w {i} 1]")).collect();
        let log = format!("{{:type :ok, :process 0, :index 1, :value [{mops}]}}\n");
        let l = load_bytes("t.edn", log.into_bytes(), LoadOptions::default()).expect("loads");
        let n = txn_node(&l.history, 0, "T1".into());
        assert_eq!(n.mops.len(), MAX_MOPS);
        assert_eq!(n.more, 20 - MAX_MOPS);
    }
}
