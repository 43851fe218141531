//! The whole strongly connected component a cycle lies in, drawn on
//! request (the CLI's `--plot-scc`, Clojure's `:plot-scc?`) beside the
//! cycle's own picture, as Elle's `sccs/` folder draws every component:
//! `sccs/<n>.svg` (and `.dot`) in the elle/ folder, one per component
//! some cycle anomaly lies in.
//!
//! Data flow: the history's dependencies, each a labelled [`Step`]
//! (write-read from each committed read's writer; write-write between
//! consecutive versions of a key, as the list reads or Elle's key options
//! order them; read-write from each reader of a version to the writer of
//! the next), with session order and real time where the cycle's steps
//! use them, and the cycles' own steps (an order the checked model
//! forces, which the history alone may not show), make a graph per such
//! extent ([`Extent`]); its strongly connected components come from
//! [`crate::check::graph::sccs`]. A component's picture
//! ([`Components::picture`]) draws its transactions, the cycle's first
//! and then those nearest it, and one edge per ordered pair among them,
//! each labelled and anchored as a cycle picture's are
//! ([`picture::of_steps`]); past [`MAX_TXNS`] transactions or
//! [`MAX_EDGES`] edges the rest is said by count.

use rustc_hash::FxHashMap;

use crate::anomaly::{Anomaly, On, Rel, Step};
use crate::check::deps::{included, incompatible_keys, outside_from, realtime_edges, so_edges};
use crate::check::graph::{Digraph, sccs};
use crate::history::model::*;
use crate::report::picture::{self, Picture};

/// Most transactions a component's picture draws: boxes stack in one
/// column, 100 to 200 px each, so 24 make a picture four screens tall
/// (room for the 16-transaction cycle of Elle's huge-scc history and a
/// few of its neighbours), and a component of thousands (that history's
/// has 1,161 at strict serializability) would make an SVG of megabytes no
/// one reads. The others are said by count.
pub const MAX_TXNS: usize = 24;

/// Most edges a component's picture draws among its transactions: each
/// arc takes its own lane (46 px) right of the column, so 48 make it about
/// 2,500 px wide. The others are said by count.
pub const MAX_EDGES: usize = 48;

/// Which orders besides the data dependencies a component's graph holds:
/// those its cycle's steps use, as the model checked does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// Session order.
    pub process: bool,
    /// Real time.
    pub realtime: bool,
}

impl Extent {
    /// The extent of a cycle anomaly's graph, when it has a cycle.
    pub fn of(a: &Anomaly) -> Option<Extent> {
        let c = a.cycle.as_ref()?;
        let has = |r: Rel| c.steps.iter().any(|s| s.rel == r);
        Some(Extent {
            process: has(Rel::Process),
            realtime: has(Rel::Realtime),
        })
    }
}

/// The history's dependencies as labelled edges, with session order and
/// real time as `x` asks.
fn dependencies(h: &History, x: Extent) -> Vec<(TxnId, TxnId, Step)> {
    let inc = included(h);
    let committed = |t: TxnId| h.txns[t as usize].status == Status::Committed;
    let mut out = Vec::new();
    // Each committed read by what it observed from outside its
    // transaction (a write, or the initial state of its key).
    let mut readers: FxHashMap<(KeyId, u32), Vec<TxnId>> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        let t = t as TxnId;
        if !inc[t as usize] || !committed(t) {
            continue;
        }
        for i in txn.mops() {
            let Some(w) = outside_from(h, i) else {
                continue;
            };
            let key = h.mops[i].key;
            if w == from::INITIAL {
                readers.entry((key, w)).or_default().push(t);
            } else if w < from::THIN_AIR {
                let src = h.txn_of(w);
                if src != t && inc[src as usize] {
                    out.push((
                        src,
                        t,
                        Step::new(Rel::Wr, On::Read(key, h.mops[w as usize].val)),
                    ));
                    readers.entry((key, w)).or_default().push(t);
                }
            }
        }
    }
    // Consecutive versions `a` then `b` of a key (a None: the initial
    // state): ww from a's writer, rw from each reader of a.
    let mut versions = |k: KeyId, a: Option<MopId>, b: MopId| {
        let tb = h.txn_of(b);
        if !inc[tb as usize] {
            return;
        }
        let va = a.map(|a| h.mops[a as usize].val);
        let on = On::Versions(k, va, h.mops[b as usize].val);
        if let Some(a) = a {
            let ta = h.txn_of(a);
            if ta != tb && inc[ta as usize] {
                out.push((ta, tb, Step::new(Rel::Ww, on)));
            }
        }
        let of = a.unwrap_or(from::INITIAL);
        for &r in readers.get(&(k, of)).map_or(&[][..], Vec::as_slice) {
            if r != tb {
                out.push((r, tb, Step::new(Rel::Rw, on)));
            }
        }
    };
    let incompatible = incompatible_keys(h);
    for (k, o) in h.orders.iter().enumerate() {
        let k = k as KeyId;
        let mut prev: Option<MopId> = None;
        for w in o.versions() {
            if w == from::THIN_AIR {
                continue;
            }
            versions(k, prev, w);
            prev = Some(w);
        }
        // Appends no read saw follow the last one read (see
        // `check::deps::ww_edges`), except where reads disagree.
        if !incompatible.contains(&k) {
            for &w in &o.unobserved {
                versions(k, prev, w);
            }
        }
    }
    for &(k, a, b) in &crate::check::keys::inferred(h).ww {
        versions(k, Some(a), b);
    }
    if x.process {
        for (a, b) in so_edges(h, &inc) {
            let p = h.sessions[h.txns[a as usize].session as usize].process;
            out.push((a, b, Step::new(Rel::Process, On::Process(p))));
        }
    }
    if x.realtime {
        for (a, b) in realtime_edges(h, &inc) {
            out.push((a, b, Step::new(Rel::Realtime, On::Realtime(a, b))));
        }
    }
    out
}

/// One extent's graph: its labelled edges (sorted by their ends) and the
/// component of each transaction.
struct Graph {
    edges: Vec<(TxnId, TxnId, Step)>,
    comp: Vec<u32>,
}

impl Graph {
    fn new(h: &History, x: Extent, cycles: &[&Anomaly]) -> Graph {
        let mut edges = dependencies(h, x);
        for a in cycles.iter().filter(|a| Extent::of(a) == Some(x)) {
            let Some(c) = &a.cycle else { continue };
            for (i, s) in c.steps.iter().enumerate() {
                if let (Some(&p), Some(&q)) = (c.txns.get(i), c.txns.get(i + 1)) {
                    edges.push((p, q, *s));
                }
            }
        }
        // The cycle's own steps first among a pair's, then by relation.
        edges.sort_by_key(|&(a, b, s)| (a, b, rel_order(s.rel)));
        let pairs: Vec<(u32, u32)> = edges.iter().map(|&(a, b, _)| (a, b)).collect();
        let comp = sccs(&Digraph::from_edges(h.txns.len(), &pairs)).comp;
        Graph { edges, comp }
    }
}

/// The order a pair's steps are preferred in, when one edge is drawn for
/// it (as the explainers name a pair: ww, then wr, then rw, then orders).
fn rel_order(r: Rel) -> u8 {
    match r {
        Rel::Ww => 0,
        Rel::Wr => 1,
        Rel::Rw => 2,
        Rel::Process => 3,
        Rel::Realtime => 4,
        Rel::Ao => 5,
    }
}

/// The components the cycle anomalies of a result lie in, each extent's
/// graph built once, when first asked for.
pub struct Components<'a> {
    h: &'a History,
    cycles: Vec<&'a Anomaly>,
    graphs: FxHashMap<Extent, Graph>,
}

/// A cycle's component, as [`Components::of`] names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Id {
    extent: Extent,
    comp: u32,
}

impl<'a> Components<'a> {
    /// For these anomalies (those with a cycle are drawn).
    pub fn new(h: &'a History, anomalies: impl IntoIterator<Item = &'a Anomaly>) -> Self {
        Components {
            h,
            cycles: anomalies
                .into_iter()
                .filter(|a| a.cycle.is_some())
                .collect(),
            graphs: FxHashMap::default(),
        }
    }

    fn graph(&mut self, x: Extent) -> &Graph {
        let (h, cycles) = (self.h, &self.cycles);
        self.graphs
            .entry(x)
            .or_insert_with(|| Graph::new(h, x, cycles))
    }

    /// The component a cycle anomaly lies in (None: no cycle).
    pub fn of(&mut self, a: &Anomaly) -> Option<Id> {
        let x = Extent::of(a)?;
        let t = *a.cycle.as_ref()?.txns.first()?;
        let comp = *self.graph(x).comp.get(t as usize)?;
        Some(Id { extent: x, comp })
    }

    /// The picture of component `id`, the transactions of `a`'s cycle
    /// first, and how many transactions the component has.
    pub fn picture(&mut self, id: Id, a: &Anomaly) -> (Picture, usize) {
        let h = self.h;
        let g = self.graph(id.extent);
        let inside = |t: TxnId| g.comp.get(t as usize) == Some(&id.comp);
        let size = g.comp.iter().filter(|&&c| c == id.comp).count();
        // The cycle's transactions, then the others breadth first from
        // them (either direction), so that those drawn hang together.
        let mut near: FxHashMap<TxnId, Vec<TxnId>> = FxHashMap::default();
        for &(p, q, _) in g.edges.iter().filter(|e| inside(e.0) && inside(e.1)) {
            near.entry(p).or_default().push(q);
            near.entry(q).or_default().push(p);
        }
        let mut drawn: Vec<TxnId> = Vec::new();
        for &t in a.cycle.iter().flat_map(|c| &c.txns) {
            if inside(t) && !drawn.contains(&t) {
                drawn.push(t);
            }
        }
        let mut at = 0;
        while at < drawn.len() && drawn.len() < MAX_TXNS {
            let mut next: Vec<TxnId> = near.get(&drawn[at]).cloned().unwrap_or_default();
            next.sort_unstable();
            for t in next {
                if drawn.len() < MAX_TXNS && !drawn.contains(&t) {
                    drawn.push(t);
                }
            }
            at += 1;
        }
        // One edge per ordered pair, the first of its steps.
        let mut steps: Vec<(TxnId, TxnId, Step)> = Vec::new();
        let mut more_edges = 0;
        let mut last: Option<(TxnId, TxnId)> = None;
        let cycle_pairs: Vec<(TxnId, TxnId)> = a
            .cycle
            .iter()
            .flat_map(|c| c.txns.windows(2).map(|w| (w[0], w[1])))
            .collect();
        let mut pairs: Vec<&(TxnId, TxnId, Step)> = g
            .edges
            .iter()
            .filter(|e| drawn.contains(&e.0) && drawn.contains(&e.1))
            .filter(|e| {
                let first = last != Some((e.0, e.1));
                last = Some((e.0, e.1));
                first
            })
            .collect();
        // The cycle's pairs first (they tell the anomaly), as its steps.
        pairs.sort_by_key(|e| !cycle_pairs.contains(&(e.0, e.1)));
        for &(p, q, s) in pairs {
            let s = match a.cycle.as_ref().and_then(|c| {
                c.txns
                    .windows(2)
                    .position(|w| (w[0], w[1]) == (p, q))
                    .and_then(|i| c.steps.get(i))
            }) {
                Some(cs) => *cs,
                None => s,
            };
            if steps.len() < MAX_EDGES {
                steps.push((p, q, s));
            } else {
                more_edges += 1;
            }
        }
        let mut notes = Vec::new();
        if size > drawn.len() {
            notes.push(format!(
                "{} more transactions in this component, not drawn (at most {MAX_TXNS} are)",
                size - drawn.len()
            ));
        }
        if more_edges > 0 {
            notes.push(format!(
                "{more_edges} more dependencies among these transactions, not drawn (at most {MAX_EDGES} are)"
            ));
        }
        (picture::of_steps(h, &drawn, &steps, notes), size)
    }
}
