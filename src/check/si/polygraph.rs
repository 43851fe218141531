//! The generalized polygraph of a history (PolySI, Def. 9): the dependency
//! edges that are known, and for every pair of writers of a key whose
//! order is not, a constraint with two sides — "a before c" brings the
//! write-write edge and the anti-dependencies of a's readers on c; "c
//! before a" the mirror. Constraints are coalesced per pair of transactions
//! across all keys they both write (sound for SI and serializability: two
//! opposite write orders would form a dependency 2-cycle, which both
//! forbid).
//!
//! List-append histories reveal each key's version order, so almost every
//! write order is known and few constraints remain; appends nobody read
//! follow the observed ones (both SI and serializability read prefixes of
//! the commit order), in an order left to constraints.
//!
//! Reads that may have observed any of several writes ([`History::candidates`],
//! dbcop histories whose writes are not unique) make it a hyper-polygraph
//! (VeriStrong): such a read is a [`Choice`], with a selector per candidate
//! writer, exactly one of them true. Its write-read edge holds under its
//! selector; its anti-dependency on a later writer under the selector and
//! that write order (a known order, or a constraint's side).

use rustc_hash::FxHashMap;

use crate::check::clocks::Vectors;
use crate::check::deps::{external_source, included, realtime_edges, so_edges};
use crate::check::graph::Digraph;
use crate::check::si::prune::topo_order;
use crate::history::model::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// Session order.
    Process,
    /// Real time: completed before invoked.
    Realtime,
    Wr,
    Ww,
    Rw,
}

impl EdgeKind {
    /// Dependencies (SO, WR, WW, real time), as opposed to anti-dependencies.
    pub fn is_dep(self) -> bool {
        self != EdgeKind::Rw
    }

    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Process => "process",
            EdgeKind::Realtime => "realtime",
            EdgeKind::Wr => "wr",
            EdgeKind::Ww => "ww",
            EdgeKind::Rw => "rw",
        }
    }
}

/// One labelled edge between transactions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub a: TxnId,
    pub b: TxnId,
    pub kind: EdgeKind,
    /// For data edges: the key; its values are the versions involved.
    pub key: KeyId,
    /// ww: a's value; wr: the value read; rw: the value read by a.
    pub va: Val,
    /// ww, rw: b's value.
    pub vb: Val,
}

pub type EdgeId = u32;

/// "Either a's writes come first, or c's": each side's edges, and the
/// edges each side brings only under a selector (anti-dependencies of
/// reads that may have observed a's or c's write).
#[derive(Clone, Debug, Default)]
pub struct Constraint {
    pub a: TxnId,
    pub c: TxnId,
    pub either: Vec<EdgeId>,
    pub or: Vec<EdgeId>,
    pub either_if: Vec<(Sel, EdgeId)>,
    pub or_if: Vec<(Sel, EdgeId)>,
}

/// A selector: "this read observed this writer's write".
pub type Sel = u32;

/// A read with several candidate writers: their selectors are
/// `first..first + writers.len()`, exactly one true.
#[derive(Clone, Debug)]
pub struct Choice {
    pub reader: TxnId,
    pub mop: MopId,
    /// Candidate writing transactions, ascending.
    pub writers: Vec<TxnId>,
    pub first: Sel,
}

/// Which dependency graph a model asks to be acyclic.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    /// Serializability (all edges) rather than SI ((Dep) ; RW?).
    pub serializable: bool,
    /// Session order is a dependency (strong session variants).
    pub session: bool,
    /// Real-time order is a dependency (strict / strong variants).
    pub realtime: bool,
}

pub struct Polygraph {
    pub edges: Vec<Edge>,
    pub known: Vec<EdgeId>,
    pub constraints: Vec<Constraint>,
    pub included: Vec<bool>,
    /// Unknown dependencies in the constraints, before pruning.
    pub unknown_edges: usize,
    /// Elle's `*-cycle-exists` name for this variant's model.
    pub cycle_exists: &'static str,
    /// Writer pairs left to a constraint (no dependency path orders them).
    pub all_pairs: usize,
    /// Too many writer pairs to enumerate: no verdict (see [`MAX_PAIRS`]).
    pub too_big: bool,
    /// Reads with several candidate writers.
    pub choices: Vec<Choice>,
    /// Number of selectors over all choices.
    pub selectors: u32,
    /// Edges present when a selector holds (write-read edges of choices,
    /// and their anti-dependencies along known write orders).
    pub cond_known: Vec<(Sel, EdgeId)>,
}

/// Most unordered writer pairs a polygraph holds (each is a constraint
/// with its anti-dependencies): beyond this the variant answers unknown
/// rather than run out of memory.
pub const MAX_PAIRS: usize = 20_000_000;

/// Vector clocks over session order, write-read and real time: the
/// dependencies known before any write order.
struct DepClock {
    v: Vectors,
    sess: Vec<u32>,
    pos: Vec<u32>,
}

impl DepClock {
    fn new(h: &History, inc: &[bool], g: &Polygraph) -> Option<DepClock> {
        let n = h.txns.len();
        let edges: Vec<(u32, u32)> = g
            .known
            .iter()
            .map(|&e| g.edges[e as usize])
            .filter(|e| e.kind.is_dep())
            .map(|e| (e.a, e.b))
            .collect();
        let dg = Digraph::from_edges(n, &edges);
        let topo = topo_order(&dg, inc)?;
        let sess: Vec<u32> = h.txns.iter().map(|t| t.session).collect();
        let pos: Vec<u32> = h.txns.iter().map(|t| t.seq + 1).collect();
        let mut v = Vectors::new(n, h.sessions.len());
        for &a in &topo {
            v.raise(a, sess[a as usize], pos[a as usize]);
            for &b in dg.out(a) {
                v.join(b, a);
            }
        }
        Some(DepClock { v, sess, pos })
    }

    /// `a` reaches `b` through dependencies (reflexive).
    fn reaches(&self, a: TxnId, b: TxnId) -> bool {
        a == b || self.v.get(b, self.sess[a as usize]) >= self.pos[a as usize]
    }

    /// Splits the pairs of writers into the concurrent ones and, for each
    /// writer, the writers a dependency path orders right after it: the
    /// minimal ones among those it reaches (`(i, j)`, `i` first). Every
    /// other writer it reaches is reached from one of those.
    #[allow(clippy::type_complexity)]
    fn split(&self, ws: &[(TxnId, MopId)]) -> (Vec<(usize, usize)>, Vec<(usize, usize)>) {
        let by_sess = self.by_session(ws);
        let mut next = Vec::new();
        let mut concurrent = Vec::new();
        let mut cands: Vec<usize> = Vec::new();
        for (i, &(a, _)) in ws.iter().enumerate() {
            cands.clear();
            for list in &by_sess {
                // Writers before `a` (reaching it) form a prefix, writers
                // after it a suffix; between them, the concurrent ones.
                let after = list.partition_point(|&j| !self.reaches(a, ws[j].0) || ws[j].0 == a);
                let before = list.partition_point(|&j| self.reaches(ws[j].0, a) && ws[j].0 != a);
                if let Some(&j) = list.get(after) {
                    cands.push(j);
                }
                for &j in &list[before.min(after)..after] {
                    let c = ws[j].0;
                    if c != a && a < c && !self.reaches(c, a) && !self.reaches(a, c) {
                        concurrent.push((i, j));
                    }
                }
            }
            for j in self.minimal(ws, &cands) {
                next.push((i, j));
            }
        }
        (next, concurrent)
    }

    /// Writers by session, each list in session order.
    fn by_session(&self, ws: &[(TxnId, MopId)]) -> Vec<Vec<usize>> {
        let mut by_sess: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
        for (i, &(t, _)) in ws.iter().enumerate() {
            by_sess.entry(self.sess[t as usize]).or_default().push(i);
        }
        let mut lists: Vec<Vec<usize>> = by_sess.into_values().collect();
        for list in &mut lists {
            list.sort_by_key(|&i| self.pos[ws[i].0 as usize]);
        }
        lists
    }

    /// The writers among `cands` that no other of them reaches.
    fn minimal(&self, ws: &[(TxnId, MopId)], cands: &[usize]) -> Vec<usize> {
        cands
            .iter()
            .copied()
            .filter(|&j| {
                cands
                    .iter()
                    .all(|&k| k == j || !self.reaches(ws[k].0, ws[j].0))
            })
            .collect()
    }

    /// The first writers: minimal among all (each session's first, less
    /// those another session's first reaches).
    fn firsts(&self, ws: &[(TxnId, MopId)]) -> Vec<(TxnId, MopId)> {
        let heads: Vec<usize> = self
            .by_session(ws)
            .iter()
            .filter_map(|l| l.first().copied())
            .collect();
        self.minimal(ws, &heads)
            .into_iter()
            .map(|j| ws[j])
            .collect()
    }
}

impl Variant {
    /// Nodes of G2 for `n` transactions: two copies each for SI, one for
    /// serializability (see the module `si`).
    pub fn g2_nodes(self, n: usize) -> usize {
        if self.serializable { n } else { 2 * n }
    }

    /// The G2 edges of a transaction-level edge.
    #[inline]
    pub fn g2_edges(self, ed: &Edge, out: &mut Vec<(u32, u32)>) {
        if self.serializable {
            out.push((ed.a, ed.b));
        } else if ed.kind.is_dep() {
            out.push((2 * ed.a, 2 * ed.b));
            out.push((2 * ed.a + 1, 2 * ed.b));
        } else {
            out.push((2 * ed.a, 2 * ed.b + 1));
        }
    }

    /// The G2 node of a transaction's first copy.
    #[inline]
    pub fn g2_node(self, t: TxnId) -> u32 {
        if self.serializable { t } else { 2 * t }
    }

    /// Elle's name for "some cycle of this model's graph exists".
    pub fn cycle_exists(self) -> &'static str {
        match (self.serializable, self.session, self.realtime) {
            (false, _, true) => "strong-snapshot-isolation-cycle-exists",
            (false, true, false) => "strong-session-snapshot-isolation-cycle-exists",
            (false, false, false) => "PL-SI-cycle-exists",
            (true, _, true) => "PL-SS-cycle-exists",
            (true, true, false) => "strong-session-serializable-cycle-exists",
            (true, false, false) => "PL-3-cycle-exists",
        }
    }
}

impl Polygraph {
    fn add(&mut self, e: Edge) -> EdgeId {
        self.edges.push(e);
        (self.edges.len() - 1) as EdgeId
    }
}

/// The final write of each transaction to each key: its installed version.
fn final_writes(h: &History, inc: &[bool]) -> FxHashMap<KeyId, Vec<(TxnId, MopId)>> {
    let mut by_key: FxHashMap<KeyId, Vec<(TxnId, MopId)>> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        if !inc[t] {
            continue;
        }
        for i in txn.mops() {
            let m = &h.mops[i];
            if m.is_write() && m.has(flag::FINAL) {
                by_key
                    .entry(m.key)
                    .or_default()
                    .push((t as TxnId, i as MopId));
            }
        }
    }
    by_key
}

/// An ambiguous reader of a write: reader, its read, and the selector
/// under which it observed that write.
type AmbReader = (TxnId, MopId, Sel);

/// External readers of each write (by the writer's version), and of the
/// initial state, per key; and the reads with several candidate writers.
struct Readers {
    of: FxHashMap<(KeyId, TxnId), Vec<(TxnId, MopId)>>,
    initial: FxHashMap<KeyId, Vec<(TxnId, MopId)>>,
    amb: FxHashMap<(KeyId, TxnId), Vec<AmbReader>>,
    choices: Vec<Choice>,
    selectors: Sel,
}

fn readers(h: &History, inc: &[bool]) -> Readers {
    let mut r = Readers {
        of: FxHashMap::default(),
        initial: FxHashMap::default(),
        amb: FxHashMap::default(),
        choices: Vec::new(),
        selectors: 0,
    };
    for (t, txn) in h.txns.iter().enumerate() {
        if !inc[t] || txn.status != Status::Committed {
            continue;
        }
        let t = t as TxnId;
        for i in txn.mops() {
            let m = &h.mops[i];
            if !m.is_read() || !m.has(flag::EXTERNAL) {
                continue;
            }
            if let Some(cands) = h.candidates.get(&(i as MopId)) {
                let mut ws: Vec<TxnId> = cands
                    .iter()
                    .map(|&w| h.txn_of(w))
                    .filter(|&w| w != t && inc[w as usize])
                    .collect();
                ws.sort_unstable();
                ws.dedup();
                match ws.len() {
                    0 => {}
                    1 => {
                        r.of.entry((m.key, ws[0]))
                            .or_default()
                            .push((t, i as MopId))
                    }
                    k => {
                        let first = r.selectors;
                        r.selectors += k as Sel;
                        for (j, &w) in ws.iter().enumerate() {
                            r.amb.entry((m.key, w)).or_default().push((
                                t,
                                i as MopId,
                                first + j as Sel,
                            ));
                        }
                        r.choices.push(Choice {
                            reader: t,
                            mop: i as MopId,
                            writers: ws,
                            first,
                        });
                    }
                }
                continue;
            }
            if m.from == from::INITIAL {
                r.initial.entry(m.key).or_default().push((t, i as MopId));
            } else if let Some(src) = external_source(h, m, t)
                && inc[src as usize]
            {
                r.of.entry((m.key, src)).or_default().push((t, i as MopId));
            }
        }
    }
    for v in r.of.values_mut().chain(r.initial.values_mut()) {
        v.sort_unstable();
        v.dedup_by_key(|x| x.0);
    }
    r
}

/// The edges one version order of key `x` implies: `from`'s write before
/// `to`'s (a ww edge, left out with `ww` false where a dependency path
/// already orders them) and each reader of `from` anti-depending on `to`.
fn order_edges(
    g: &mut Polygraph,
    h: &History,
    x: KeyId,
    readers: &[(TxnId, MopId)],
    (from, mf): (TxnId, MopId),
    (to, mt): (TxnId, MopId),
    ww: bool,
) -> Vec<EdgeId> {
    let val_of = |m: MopId| h.mops[m as usize].val;
    let mut out = Vec::with_capacity(readers.len() + 1);
    if ww {
        out.push(g.add(Edge {
            a: from,
            b: to,
            kind: EdgeKind::Ww,
            key: x,
            va: val_of(mf),
            vb: val_of(mt),
        }));
    }
    for &(r, rm) in readers {
        if r != to {
            out.push(g.add(Edge {
                a: r,
                b: to,
                kind: EdgeKind::Rw,
                key: x,
                va: val_of(rm),
                vb: val_of(mt),
            }));
        }
    }
    out
}

/// The anti-dependencies of ambiguous readers of `from`'s write on `to`,
/// each under its selector, for a version order `from` before `to`.
fn amb_edges(
    g: &mut Polygraph,
    h: &History,
    x: KeyId,
    readers: &[AmbReader],
    to: (TxnId, MopId),
) -> Vec<(Sel, EdgeId)> {
    let (to, mt) = to;
    let mut out = Vec::with_capacity(readers.len());
    for &(r, rm, s) in readers {
        if r != to {
            let e = g.add(Edge {
                a: r,
                b: to,
                kind: EdgeKind::Rw,
                key: x,
                va: h.mops[rm as usize].val,
                vb: h.mops[mt as usize].val,
            });
            out.push((s, e));
        }
    }
    out
}

pub fn build(h: &History, variant: Variant) -> Polygraph {
    let inc = included(h);
    let mut g = Polygraph {
        edges: Vec::new(),
        known: Vec::new(),
        constraints: Vec::new(),
        included: inc.clone(),
        unknown_edges: 0,
        cycle_exists: variant.cycle_exists(),
        all_pairs: 0,
        too_big: false,
        choices: Vec::new(),
        selectors: 0,
        cond_known: Vec::new(),
    };
    let plain = |a, b, kind| Edge {
        a,
        b,
        kind,
        key: 0,
        va: Val::NIL,
        vb: Val::NIL,
    };
    if variant.session {
        for (a, b) in so_edges(h, &inc) {
            let e = g.add(plain(a, b, EdgeKind::Process));
            g.known.push(e);
        }
    }
    if variant.realtime {
        for (a, b) in realtime_edges(h, &inc) {
            let e = g.add(plain(a, b, EdgeKind::Realtime));
            g.known.push(e);
        }
    }
    let rd = readers(h, &inc);
    // Write-read.
    type ReadersOf = ((KeyId, TxnId), Vec<(TxnId, MopId)>);
    let mut wr: Vec<ReadersOf> = rd.of.iter().map(|(k, v)| (*k, v.clone())).collect();
    wr.sort_unstable_by_key(|(k, _)| (k.1, k.0));
    for ((key, w), rs) in &wr {
        for &(r, m) in rs {
            let e = g.add(Edge {
                a: *w,
                b: r,
                kind: EdgeKind::Wr,
                key: *key,
                va: h.mops[m as usize].val,
                vb: Val::NIL,
            });
            g.known.push(e);
        }
    }
    // Write-read under a selector.
    for ch in &rd.choices {
        let m = h.mops[ch.mop as usize];
        for (j, &w) in ch.writers.iter().enumerate() {
            let e = g.add(Edge {
                a: w,
                b: ch.reader,
                kind: EdgeKind::Wr,
                key: m.key,
                va: m.val,
                vb: Val::NIL,
            });
            g.cond_known.push((ch.first + j as Sel, e));
        }
    }
    g.choices = rd.choices.clone();
    g.selectors = rd.selectors;
    // Reachability through what is known before any write order is, when
    // sessions make it cheap: writes a dependency path already orders need
    // no constraint, and their readers' anti-dependencies go only to the
    // nearest later writer per session (the rest follow by transitivity).
    let dep = if variant.session {
        DepClock::new(h, &inc, &g)
    } else {
        None
    };
    let writes = final_writes(h, &inc);
    let mut keys: Vec<KeyId> = writes.keys().copied().collect();
    keys.sort_unstable();
    // Per unordered pair of writers: index of its constraint.
    let mut pairs: FxHashMap<(TxnId, TxnId), usize> = FxHashMap::default();
    let empty: Vec<(TxnId, MopId)> = Vec::new();
    let no_amb: Vec<AmbReader> = Vec::new();
    let val_of = |m: MopId| h.mops[m as usize].val;
    for x in keys {
        let ws = &writes[&x];
        let readers_of = |t: TxnId| rd.of.get(&(x, t)).unwrap_or(&empty);
        let amb_of = |t: TxnId| rd.amb.get(&(x, t)).unwrap_or(&no_amb);
        let initial = rd.initial.get(&x).unwrap_or(&empty);
        // Known order: list-append version orders.
        let order: Vec<(TxnId, MopId)> = match h.orders.get(x as usize) {
            Some(o) if h.workload == Some(Workload::ListAppend) => {
                let mut seq: Vec<(TxnId, MopId)> = Vec::new();
                for &w in &o.writes {
                    if w == from::THIN_AIR || !inc[h.txn_of(w) as usize] {
                        continue;
                    }
                    let t = h.txn_of(w);
                    // A transaction's appends are one version step: keep its last.
                    if let Some(last) = seq.last_mut()
                        && last.0 == t
                    {
                        last.1 = w;
                        continue;
                    }
                    seq.push((t, w));
                }
                seq
            }
            _ => Vec::new(),
        };
        let in_order: rustc_hash::FxHashSet<TxnId> = order.iter().map(|p| p.0).collect();
        let unordered: Vec<(TxnId, MopId)> = ws
            .iter()
            .copied()
            .filter(|(t, _)| !in_order.contains(t))
            .collect();
        // Observed order: ww between consecutive versions; rw from the
        // readers of each version to the next one's writer.
        for pair in order.windows(2) {
            let ((a, ma), (b, mb)) = (pair[0], pair[1]);
            let es = order_edges(&mut g, h, x, readers_of(a), (a, ma), (b, mb), true);
            g.known.extend(es);
            let es = amb_edges(&mut g, h, x, amb_of(a), (b, mb));
            g.cond_known.extend(es);
        }
        // Readers of the initial state precede the first known version, or
        // every writer when none is known.
        let firsts: Vec<(TxnId, MopId)> = match (order.first(), &dep) {
            (Some(&f), _) => vec![f],
            (None, Some(dc)) => dc.firsts(&unordered),
            (None, None) => unordered.clone(),
        };
        for &(r, rm) in initial {
            for &(b, mb) in &firsts {
                if r != b {
                    let e = g.add(Edge {
                        a: r,
                        b,
                        kind: EdgeKind::Rw,
                        key: x,
                        va: h.mops[rm as usize].val,
                        vb: val_of(mb),
                    });
                    g.known.push(e);
                }
            }
        }
        if let Some(&(last, lm)) = order.last() {
            // Writes nobody read come after every observed one.
            for &(b, mb) in &unordered {
                let es = order_edges(&mut g, h, x, readers_of(last), (last, lm), (b, mb), true);
                g.known.extend(es);
                let es = amb_edges(&mut g, h, x, amb_of(last), (b, mb));
                g.cond_known.extend(es);
            }
        }
        // Unknown order among the rest: a constraint per pair, except
        // where a dependency path already orders the pair.
        let pairs_here: Vec<(usize, usize)> = match &dep {
            Some(dc) => {
                let (next, concurrent) = dc.split(&unordered);
                g.all_pairs += concurrent.len();
                if g.all_pairs > MAX_PAIRS {
                    g.too_big = true;
                    return g;
                }
                // A dependency path already orders these writers, and so
                // every commit order: no ww edge is needed, only the
                // readers' anti-dependencies on the writers right after.
                for (i, j) in next {
                    let (a, b) = (unordered[i], unordered[j]);
                    let es = order_edges(&mut g, h, x, readers_of(a.0), a, b, false);
                    g.known.extend(es);
                    let es = amb_edges(&mut g, h, x, amb_of(a.0), b);
                    g.cond_known.extend(es);
                }
                concurrent
            }
            _ => {
                let n = unordered.len();
                g.all_pairs += n * n.saturating_sub(1) / 2;
                if g.all_pairs > MAX_PAIRS {
                    g.too_big = true;
                    return g;
                }
                (0..n)
                    .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                    .collect()
            }
        };
        for (i, j) in pairs_here {
            {
                let (mut a, mut ma) = unordered[i];
                let (mut c, mut mc) = unordered[j];
                if a > c {
                    std::mem::swap(&mut a, &mut c);
                    std::mem::swap(&mut ma, &mut mc);
                }
                // A writer that read the other's version of the key
                // installs its own after it, whatever the level: that order
                // is known, not a choice.
                let c_read_a = readers_of(a).iter().any(|&(r, _)| r == c);
                let a_read_c = readers_of(c).iter().any(|&(r, _)| r == a);
                if c_read_a != a_read_c {
                    let (from, mf, to, mt) = if c_read_a {
                        (a, ma, c, mc)
                    } else {
                        (c, mc, a, ma)
                    };
                    let es =
                        order_edges(&mut g, h, x, readers_of(from), (from, mf), (to, mt), true);
                    g.known.extend(es);
                    let es = amb_edges(&mut g, h, x, amb_of(from), (to, mt));
                    g.cond_known.extend(es);
                    continue;
                }
                let idx = *pairs.entry((a, c)).or_insert_with(|| {
                    g.constraints.push(Constraint {
                        a,
                        c,
                        ..Constraint::default()
                    });
                    g.constraints.len() - 1
                });
                let either = order_edges(&mut g, h, x, readers_of(a), (a, ma), (c, mc), true);
                let or = order_edges(&mut g, h, x, readers_of(c), (c, mc), (a, ma), true);
                let either_if = amb_edges(&mut g, h, x, amb_of(a), (c, mc));
                let or_if = amb_edges(&mut g, h, x, amb_of(c), (a, ma));
                g.unknown_edges += either.len() + or.len() + either_if.len() + or_if.len();
                let con = &mut g.constraints[idx];
                con.either.extend(either);
                con.or.extend(or);
                con.either_if.extend(either_if);
                con.or_if.extend(or_if);
            }
        }
    }
    g
}
