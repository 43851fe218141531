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
//!   before the overwriter (`:order`), the overwriter, the transactions of
//!   the chain that makes it visible to the reader (`:visible`), the
//!   reader; edges for the order's steps, each link of the visibility
//!   chain (or its one step), the read, and the anti-dependency the read
//!   implies (drawn as derived);
//! - an aborted or intermediate read (`:op`, `:writer`, `:mop`): the writer
//!   and the reader, joined by the read.
//!
//! - a lost update (`:key`, `:value`, the transactions): the writer of the
//!   version they all read, the read of each, and each one's write over
//!   the version the others read;
//! - an internal anomaly (`:op`, `:mop`, `:expected`): the transaction
//!   alone, an arrow from the micro-op that set what was expected to the
//!   read that returned something else.
//!
//! Every micro-op an edge rests on is found in its transaction
//! ([`step_mops`]), shown highlighted, and the edge is anchored to its
//! row; the other micro-ops of a long transaction are elided around the
//! cited ones ([`Row::Elided`]), never a cited one. A derived arbitration
//! (`:ao`) step brings the read that forces it into the picture, joined
//! to it by a dashed arrow ([`Edge::why`]).
//!
//! Other anomalies (incompatible orders, duplicates, ...) have no edge to
//! draw and get no picture. A cycle's whole component is drawn the same
//! way from the transactions and steps [`super::scc`] picks
//! ([`of_steps`]).

use crate::anomaly::{Anomaly, Datum, Field, Grounds, On, Path, Rel, Step};
use crate::edn::Value;
use crate::history::model::*;
use crate::report::render::{datum_value, mop_value_upto};
use crate::spec::{AnomalyType, Kind};

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
    /// Arbitration order (C4's AO): one write of a key must take effect
    /// before another's, forced by a read that saw the later one though
    /// the earlier was visible to it.
    Ao,
    /// Within one transaction: what an earlier micro-op makes the later
    /// read return.
    Internal,
}

impl EdgeKind {
    /// Every kind, in legend order.
    pub const ALL: [EdgeKind; 7] = [
        EdgeKind::Ww,
        EdgeKind::Wr,
        EdgeKind::Rw,
        EdgeKind::Process,
        EdgeKind::Realtime,
        EdgeKind::Ao,
        EdgeKind::Internal,
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
            EdgeKind::Ao => "ao",
            EdgeKind::Internal => "internal",
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
            EdgeKind::Ao => {
                "arbitration: its write of the key must take effect first, forced by a read"
            }
            EdgeKind::Internal => "within one transaction: what its earlier micro-op implies",
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
            EdgeKind::Ao => "#7A4B00",
            EdgeKind::Internal => "#8A1C1C",
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

/// One line of a box: a micro-op, or the micro-ops left out between two
/// shown ones.
#[derive(Clone, Debug, PartialEq)]
pub enum Row {
    /// A micro-op as Elle writes it (long reads shortened), and whether an
    /// edge of the picture rests on it (drawn highlighted).
    Mop {
        /// `[:r 15 2]`.
        text: String,
        /// An edge rests on it.
        cited: bool,
    },
    /// This many micro-ops left out here.
    Elided(usize),
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
    /// Its micro-ops, those no edge rests on elided when there are more
    /// than [`MAX_MOPS`].
    pub rows: Vec<Row>,
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
    /// Key and values: `key 13: read 1, T3 wrote 2 over it`.
    pub label: String,
    /// Observed, or not in the history (drawn dashed): forced by the model
    /// checked, implied by the pattern, or assumed.
    pub grounds: Grounds,
    /// The row of `from`'s box whose micro-op the edge rests on.
    pub from_row: Option<usize>,
    /// The row of `to`'s box whose micro-op the edge rests on.
    pub to_row: Option<usize>,
    /// Not a dependency but the read that forces a derived `:ao` step
    /// (drawn dashed, its label says so).
    pub why: bool,
}

impl Edge {
    /// Drawn dashed: not in the history, or the justification of a step
    /// that is not.
    pub fn dashed(&self) -> bool {
        self.grounds != Grounds::Observed || self.why
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
    /// What the picture leaves out, said beneath it (a component's
    /// transactions past its bound).
    pub notes: Vec<String>,
}

impl Picture {
    /// The micro-op row an edge end rests on, when it does.
    pub fn cited(&self, node: usize, row: Option<usize>) -> Option<&str> {
        match self.nodes.get(node)?.rows.get(row?)? {
            Row::Mop { text, .. } => Some(text),
            Row::Elided(_) => None,
        }
    }
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

/// What an edge needs of a transaction's micro-ops.
#[derive(Copy, Clone, Debug)]
enum Want {
    /// The write (or append) of this value to the key.
    Write(KeyId, Val),
    /// A write of the key, its last.
    AnyWrite(KeyId),
    /// A read of the key that returned this version (for a list, this
    /// last element; None: the initial state).
    Read(KeyId, Option<Val>),
    /// A read of the key that saw this value (for a list, among its
    /// elements).
    Saw(KeyId, Val),
}

/// The micro-op of `t` that `w` asks for: the one that matches it
/// exactly, else one of the same key and kind.
fn find(h: &History, t: TxnId, w: Want) -> Option<MopId> {
    let la = h.workload == Some(Workload::ListAppend);
    let range = h.txns.get(t as usize)?.mops();
    let exact = |i: usize| {
        let m = &h.mops[i];
        match w {
            Want::Write(k, v) => m.is_write() && m.key == k && m.val == v,
            Want::AnyWrite(k) => m.is_write() && m.key == k && m.has(flag::FINAL),
            Want::Read(k, None) => {
                m.is_read()
                    && m.key == k
                    && (m.from == from::INITIAL || m.has(flag::NIL) || m.val == Val::NIL)
            }
            Want::Read(k, Some(v)) => m.is_read() && m.key == k && m.val == v,
            Want::Saw(k, v) => {
                m.is_read()
                    && m.key == k
                    && if la {
                        h.read_list(i as MopId).contains(&v)
                    } else {
                        m.val == v
                    }
            }
        }
    };
    let (key, write) = match w {
        Want::Write(k, _) | Want::AnyWrite(k) => (k, true),
        Want::Read(k, _) | Want::Saw(k, _) => (k, false),
    };
    range
        .clone()
        .find(|&i| exact(i))
        .or_else(|| {
            range
                .rev()
                .find(|&i| h.mops[i].key == key && h.mops[i].is_write() == write)
        })
        .map(|i| i as MopId)
}

/// The micro-ops a step from `a` to `b` rests on, in each (None for the
/// initial state, for steps of order alone, and where none is found):
/// ww: `a`'s write and `b`'s overwrite; wr: `a`'s write and `b`'s read of
/// it; rw: `a`'s read and `b`'s write it missed; ao: both writes of the
/// key, `b`'s the one the forcing read saw.
pub fn step_mops(
    h: &History,
    a: Option<TxnId>,
    b: Option<TxnId>,
    s: &Step,
) -> (Option<MopId>, Option<MopId>) {
    let at = |t: Option<TxnId>, w: Want| t.and_then(|t| find(h, t, w));
    match (s.rel, s.on) {
        (Rel::Wr, On::Read(k, v)) => (at(a, Want::Write(k, v)), at(b, Want::Saw(k, v))),
        (Rel::Ww, On::Versions(k, v, v2)) => (
            v.and_then(|v| at(a, Want::Write(k, v))),
            at(b, Want::Write(k, v2)),
        ),
        (Rel::Rw, On::Versions(k, v, v2)) => (at(a, Want::Read(k, v)), at(b, Want::Write(k, v2))),
        (Rel::Ao, On::Forced(r)) => {
            let read = &h.mops[r as usize];
            (
                at(a, Want::AnyWrite(read.key)),
                at(b, Want::Write(read.key, read.val)),
            )
        }
        _ => (None, None),
    }
}

/// The words for a write: `wrote 2` or `appended 2`.
fn wrote(h: &History, v: &str) -> String {
    if h.workload == Some(Workload::ListAppend) {
        format!("appended {v}")
    } else {
        format!("wrote {v}")
    }
}

/// The label of a step from the box labelled `a` to the one labelled `b`.
fn step_label(h: &History, step: &Step, a: &str, b: &str) -> String {
    let Shown {
        key,
        value: v,
        later: v2,
        initial,
    } = shown(h, step);
    let la = h.workload == Some(Workload::ListAppend);
    let over = if la { "after it" } else { "over it" };
    match step.rel {
        Rel::Ww if initial => format!("key {key}: {b} {} first", wrote(h, &v2)),
        Rel::Ww => format!(
            "key {key}: {a} {}, {b} {} {over}",
            wrote(h, &v),
            wrote(h, &v2)
        ),
        Rel::Wr => format!("key {key}: {a} {}, {b} read it", wrote(h, &v)),
        Rel::Rw if initial => {
            format!(
                "key {key}: read the initial state, {b} {} {over}",
                wrote(h, &v2)
            )
        }
        Rel::Rw if la => format!("key {key}: read up to {v}, {b} {} {over}", wrote(h, &v2)),
        Rel::Rw => format!("key {key}: read {v}, {b} {} {over}", wrote(h, &v2)),
        Rel::Ao => match step.on {
            On::Forced(r) => format!(
                "key {key}: forced by {}'s read of {v}",
                crate::explain::text::place(h, h.mops[r as usize].txn)
            ),
            _ => String::new(),
        },
        Rel::Process | Rel::Realtime => String::new(),
    }
}

struct Builder<'a> {
    h: &'a History,
    pic: Picture,
    txns: Vec<Option<TxnId>>,
    /// Each edge's micro-ops, in the order of `pic.edges`.
    ends: Vec<(Option<MopId>, Option<MopId>)>,
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
                rows: Vec::new(),
            },
        };
        self.txns.push(t);
        self.pic.nodes.push(node);
        self.pic.nodes.len() - 1
    }

    fn label(&self, n: usize) -> &str {
        &self.pic.nodes[n].label
    }

    #[allow(clippy::too_many_arguments)]
    fn edge(
        &mut self,
        (a, b): (usize, usize),
        kind: EdgeKind,
        label: String,
        grounds: Grounds,
        mops: (Option<MopId>, Option<MopId>),
        why: bool,
    ) {
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
            from_row: None,
            to_row: None,
            why,
        });
        self.ends.push(mops);
    }

    /// The edge of one step from `a` to `b` (transactions).
    fn step(&mut self, a: Option<TxnId>, b: Option<TxnId>, step: &Step) {
        let (na, nb) = (self.node(a), self.node(b));
        let mops = step_mops(self.h, a, b, step);
        // A derived arbitration step: the read that forces it, drawn.
        let forced = match step.on {
            On::Forced(r) if step.rel == Rel::Ao => Some(r),
            _ => None,
        };
        let label = step_label(self.h, step, self.label(na), self.label(nb));
        let label = match forced {
            Some(r) => {
                let nr = self.node(Some(self.h.mops[r as usize].txn));
                let Shown { key, value, .. } = shown(self.h, step);
                let why = format!(
                    "key {key}: {} {}, {} read it though {}'s write was visible to it",
                    self.label(nb),
                    wrote(self.h, &value),
                    self.label(nr),
                    self.label(na)
                );
                self.edge(
                    (nb, nr),
                    EdgeKind::Ao,
                    why,
                    Grounds::Observed,
                    (mops.1, Some(r)),
                    true,
                );
                format!("key {key}: forced by {}'s read of {value}", self.label(nr))
            }
            None => label,
        };
        self.edge(
            (na, nb),
            EdgeKind::of(step.rel),
            label,
            step.grounds,
            mops,
            false,
        );
    }

    /// Edges for a path of transactions and its steps.
    fn path(&mut self, p: &Path) {
        for (i, step) in p.steps.iter().enumerate() {
            let (Some(&a), Some(&b)) = (p.txns.get(i), p.txns.get(i + 1)) else {
                break;
            };
            self.step(Some(a), Some(b), step);
        }
    }

    /// The picture, each box's rows chosen around the micro-ops its edges
    /// rest on, and each edge anchored to its rows.
    fn finish(mut self) -> Picture {
        for (n, t) in self.txns.iter().enumerate() {
            let Some(t) = *t else { continue };
            let mut cited: Vec<MopId> = Vec::new();
            for (e, &(ma, mb)) in self.pic.edges.iter().zip(&self.ends) {
                if e.from == n {
                    cited.extend(ma);
                }
                if e.to == n {
                    cited.extend(mb);
                }
            }
            let (rows, row_of) = rows(self.h, t, &cited);
            self.pic.nodes[n].rows = rows;
            for (e, &(ma, mb)) in self.pic.edges.iter_mut().zip(&self.ends) {
                if e.from == n {
                    e.from_row = ma.and_then(&row_of);
                }
                if e.to == n {
                    e.to_row = mb.and_then(&row_of);
                }
            }
        }
        self.pic
    }
}

/// The rows of `t`'s box: every micro-op when there are at most
/// [`MAX_MOPS`], else those in `cited` and their neighbours up to that
/// many, the rest elided where they fall; and where each shown micro-op's
/// row is.
pub fn rows(h: &History, t: TxnId, cited: &[MopId]) -> (Vec<Row>, impl Fn(MopId) -> Option<usize>) {
    let range = h.txns[t as usize].mops();
    let (start, n) = (range.start, range.len());
    let mut shown = vec![n <= MAX_MOPS; n];
    let mut marked = vec![false; n];
    for &m in cited {
        if let Some(i) = (m as usize).checked_sub(start).filter(|&i| i < n) {
            shown[i] = true;
            marked[i] = true;
        }
    }
    // Room for one elision row besides the micro-ops.
    let budget = (MAX_MOPS - 1).max(marked.iter().filter(|&&c| c).count());
    let centres: Vec<usize> = if marked.iter().any(|&c| c) {
        (0..n).filter(|&i| marked[i]).collect()
    } else {
        vec![0]
    };
    let mut count = shown.iter().filter(|&&s| s).count();
    let mut d = 0;
    while count < budget && d < n {
        for &c in &centres {
            for i in [c.checked_sub(d), Some(c + d)].into_iter().flatten() {
                if i < n && !shown[i] && count < budget {
                    shown[i] = true;
                    count += 1;
                }
            }
        }
        d += 1;
    }
    let mut rows = Vec::new();
    let mut at = vec![None; n];
    let mut i = 0;
    while i < n {
        if shown[i] {
            at[i] = Some(rows.len());
            rows.push(Row::Mop {
                text: mop_value_upto(h, (start + i) as MopId, MAX_ELEMS).to_string(),
                cited: marked[i],
            });
            i += 1;
        } else {
            let j = (i..n).find(|&j| shown[j]).unwrap_or(n);
            rows.push(Row::Elided(j - i));
            i = j;
        }
    }
    (rows, move |m: MopId| {
        (m as usize)
            .checked_sub(start)
            .and_then(|i| at.get(i).copied().flatten())
    })
}

/// A transaction's box, its rows not yet chosen.
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
    Node {
        label,
        title: title.join(" · "),
        status: match txn.status.keyword() {
            "ok" => "ok",
            "fail" => "fail",
            _ => "info",
        },
        rows: Vec::new(),
    }
}

/// How direct an anomaly's story is, the most direct least: how many
/// transactions it draws (the reads that force an `:ao` step counted),
/// then how many of its steps are not observed.
pub fn rank(a: &Anomaly) -> (usize, usize) {
    let mut steps: Vec<&Step> = Vec::new();
    if let Some(c) = &a.cycle {
        steps.extend(&c.steps);
    }
    if let Some(Datum::Path(p)) = a.get(Field::Order) {
        steps.extend(&p.steps);
    }
    let forced = steps
        .iter()
        .filter(|s| matches!(s.on, On::Forced(_)))
        .count();
    let derived = steps
        .iter()
        .filter(|s| s.grounds != Grounds::Observed || s.rel == Rel::Ao)
        .count();
    (a.txns.len() + forced, derived)
}

/// The picture of an anomaly, when it has edges to draw.
pub fn picture(h: &History, a: &Anomaly) -> Option<Picture> {
    let mut b = Builder {
        h,
        pic: Picture::default(),
        txns: Vec::new(),
        ends: Vec::new(),
    };
    let txn = |f: Field| match a.get(f) {
        Some(Datum::Txn(t)) => Some(*t),
        _ => None,
    };
    if let Some(c) = &a.cycle {
        b.path(c);
    } else if a.kind == Kind::Anomaly(AnomalyType::LostUpdate) {
        lost_update(&mut b, a);
    } else if a.kind == Kind::Anomaly(AnomalyType::Internal) {
        internal(&mut b, a);
    } else if let (Some(reader), Some(writer)) = (txn(Field::Op), a.get(Field::Writer)) {
        let writer = match writer {
            Datum::Txn(t) => Some(*t),
            _ => None,
        };
        let read_mop = match a.get(Field::Mop) {
            Some(Datum::Mop(m)) => Some(*m),
            _ => None,
        };
        let key_id = match (read_mop, a.get(Field::Key)) {
            (Some(m), _) => Some(h.mops[m as usize].key),
            (None, Some(Datum::Key(k))) => Some(*k),
            _ => None,
        };
        let key = match key_id {
            Some(k) => short(&h.key_value(k)),
            None => show(h, a.get(Field::Key)),
        };
        // What the read returned: the element, else the read's value.
        let read_val = match a.get(Field::Element) {
            Some(Datum::Val(v)) => Some(*v),
            _ => read_mop.map(|m| h.mops[m as usize].val),
        };
        let read = match (a.get(Field::Element), read_mop) {
            (Some(d), _) => show(h, Some(d)),
            (None, Some(m)) => match mop_value_upto(h, m, MAX_ELEMS) {
                Value::Vector(v) if v.len() == 3 => short(&v[2]),
                _ => String::new(),
            },
            _ => String::new(),
        };
        // What the writer wrote: for a list read, its last element.
        let written = match (a.get(Field::Element), read_val) {
            (None, Some(v)) if h.workload == Some(Workload::ListAppend) => short(&h.value(v)),
            _ => read.clone(),
        };
        let w_mop = match (writer, key_id, read_val) {
            (Some(t), Some(k), Some(v)) => find(h, t, Want::Write(k, v)),
            _ => None,
        };
        // The writer first, then what orders it before the overwriter.
        let w = b.node(writer);
        if let Some(Datum::Path(order)) = a.get(Field::Order) {
            b.path(order);
        }
        let overwriter = txn(Field::Overwriter);
        let r = match overwriter {
            Some(ot) => {
                let o = b.node(Some(ot));
                // The chain that makes the overwriter visible: its
                // transactions between the overwriter and the reader, each
                // link drawn as the step it is.
                let chain = match a.get(Field::Visible) {
                    Some(Datum::Path(p)) => Some(p),
                    _ => None,
                };
                for &t in chain.map_or(&[][..], |p| &p.txns[..]) {
                    if t != reader {
                        b.node(Some(t));
                    }
                }
                let r = b.node(Some(reader));
                match a.get(Field::Visible) {
                    Some(Datum::Step(step)) => b.step(Some(ot), Some(reader), step),
                    Some(Datum::Path(p)) => b.path(p),
                    _ => {}
                }
                Some((o, ot, r))
            }
            None => None,
        };
        let r_node = r.map_or_else(|| b.node(Some(reader)), |(_, _, r)| r);
        // An aborted writer (G1a) says so on the arrow.
        let failed = match writer {
            Some(t) if h.txns[t as usize].status.keyword() == "fail" => " (then failed)",
            _ => "",
        };
        let r_label = format!(
            "key {key}: {} {}{failed}, {} read it",
            b.label(w),
            wrote(h, &written),
            b.label(r_node)
        );
        b.edge(
            (w, r_node),
            EdgeKind::Wr,
            r_label,
            Grounds::Observed,
            (w_mop, read_mop),
            false,
        );
        if let Some((o, ot, r)) = r {
            let o_mop = key_id.and_then(|k| find(h, ot, Want::AnyWrite(k)));
            let over = o_mop.map_or_else(
                || "?".to_string(),
                |m| short(&h.value(h.mops[m as usize].val)),
            );
            let label = format!(
                "key {key}: read {read}, {} {} over it",
                b.label(o),
                wrote(h, &over)
            );
            b.edge(
                (r, o),
                EdgeKind::Rw,
                label,
                Grounds::Inferred,
                (read_mop, o_mop),
                false,
            );
        }
    }
    (!b.pic.edges.is_empty()).then(|| b.finish())
}

/// A picture of these transactions, in this order, and these steps
/// between them (see [`super::scc`]), with `notes` on what it leaves out.
pub fn of_steps(
    h: &History,
    txns: &[TxnId],
    steps: &[(TxnId, TxnId, Step)],
    notes: Vec<String>,
) -> Picture {
    let mut b = Builder {
        h,
        pic: Picture::default(),
        txns: Vec::new(),
        ends: Vec::new(),
    };
    for &t in txns {
        b.node(Some(t));
    }
    for (a, c, s) in steps {
        b.step(Some(*a), Some(*c), s);
    }
    b.pic.notes = notes;
    b.finish()
}

/// A lost update: the version's writer (or the initial state), the read
/// of it by each transaction, and each one's write over what the next
/// read.
fn lost_update(b: &mut Builder, a: &Anomaly) {
    let h = b.h;
    let Some(Datum::Key(k)) = a.get(Field::Key) else {
        return;
    };
    let k = *k;
    let value = match a.get(Field::Value) {
        Some(Datum::Val(v)) => Some(*v),
        _ => None,
    };
    let key = short(&h.key_value(k));
    let shown_v = value.map_or_else(|| "the initial state".to_string(), |v| short(&h.value(v)));
    let reads: Vec<Option<MopId>> = a
        .txns
        .iter()
        .map(|&t| find(h, t, Want::Read(k, value)))
        .collect();
    // The writer of the version read, when a read names one.
    let observed = reads
        .iter()
        .flatten()
        .find_map(|&m| h.mops[m as usize].observed());
    let writer = observed.map(|m| h.mops[m as usize].txn);
    let w = b.node(writer);
    let nodes: Vec<usize> = a.txns.iter().map(|&t| b.node(Some(t))).collect();
    for (i, &n) in nodes.iter().enumerate() {
        let label = match writer {
            Some(_) => format!(
                "key {key}: {} {}, {} read it",
                b.label(w),
                wrote(h, &shown_v),
                b.label(n)
            ),
            None => format!("key {key}: {} read {shown_v}", b.label(n)),
        };
        b.edge(
            (w, n),
            EdgeKind::Wr,
            label,
            Grounds::Observed,
            (observed, reads[i]),
            false,
        );
    }
    if nodes.len() < 2 {
        return;
    }
    for i in 0..nodes.len() {
        let j = (i + 1) % nodes.len();
        let write = find(h, a.txns[j], Want::AnyWrite(k));
        let over = write.map_or_else(
            || "?".to_string(),
            |m| short(&h.value(h.mops[m as usize].val)),
        );
        let label = format!(
            "key {key}: read {shown_v}, {} {} over it",
            b.label(nodes[j]),
            wrote(h, &over)
        );
        b.edge(
            (nodes[i], nodes[j]),
            EdgeKind::Rw,
            label,
            Grounds::Observed,
            (reads[i], write),
            false,
        );
    }
}

/// An internal anomaly: the transaction, and an arrow from its last
/// earlier micro-op on the key (what set the expectation) to the read.
fn internal(b: &mut Builder, a: &Anomaly) {
    let h = b.h;
    let (Some(Datum::Txn(t)), Some(Datum::Mop(m))) = (a.get(Field::Op), a.get(Field::Mop)) else {
        return;
    };
    let (t, m) = (*t, *m);
    let n = b.node(Some(t));
    let key = h.mops[m as usize].key;
    let earlier = h.txns[t as usize]
        .mops()
        .rfind(|&i| i < m as usize && h.mops[i].key == key)
        .map(|i| i as MopId);
    let read = match mop_value_upto(h, m, MAX_ELEMS) {
        Value::Vector(v) if v.len() == 3 => short(&v[2]),
        _ => String::new(),
    };
    let label = format!(
        "key {}: expected {}, read {read}",
        short(&h.key_value(key)),
        show(h, a.get(Field::Expected))
    );
    b.edge(
        (n, n),
        EdgeKind::Internal,
        label,
        Grounds::Observed,
        (earlier, Some(m)),
        false,
    );
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
        // None cited: the first ones, the rest elided.
        let (r, _) = rows(&l.history, 0, &[]);
        assert_eq!(r.len(), MAX_MOPS);
        assert_eq!(r[MAX_MOPS - 1], Row::Elided(20 - (MAX_MOPS - 1)));
        // Two cited far apart: both shown and marked, neighbours around
        // them, never an elision in their place.
        let (r, at) = rows(&l.history, 0, &[3, 17]);
        for m in [3, 17] {
            let i = at(m).expect("shown");
            assert_eq!(
                r[i],
                Row::Mop {
                    text: format!("[:w {m} 1]"),
                    cited: true
                }
            );
        }
        let shown = r.iter().filter(|x| matches!(x, Row::Mop { .. })).count();
        let elided: usize = r
            .iter()
            .map(|x| match x {
                Row::Elided(n) => *n,
                Row::Mop { .. } => 0,
            })
            .sum();
        assert_eq!(shown + elided, 20);
        assert_eq!(shown, MAX_MOPS - 1);
    }
}
