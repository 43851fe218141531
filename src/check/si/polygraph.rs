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

use crate::check::tuning::{MAX_CLOCK_ENTRIES, MAX_EDGES, MAX_PAIRS};
use rustc_hash::FxHashMap;

use crate::check::budget::{self, Budget};
use crate::check::clocks::{Chains, Vectors, chains};
use crate::check::deps::{included, realtime_edges, so_edges};
use crate::check::graph::{Digraph, topo_order};
use crate::history::model::*;
use crate::spec::AnomalyType;

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

#[derive(Clone)]
pub struct Polygraph {
    pub edges: Vec<Edge>,
    pub known: Vec<EdgeId>,
    pub constraints: Vec<Constraint>,
    pub included: Vec<bool>,
    /// Unknown dependencies in the constraints, before pruning.
    pub unknown_edges: usize,
    /// Elle's `*-cycle-exists` name for this variant's model.
    pub cycle_exists: AnomalyType,
    /// Writer pairs left to a constraint (no dependency path orders them).
    pub all_pairs: usize,
    /// Too many writer pairs or edges to enumerate: no verdict (see
    /// [`MAX_PAIRS`], [`MAX_EDGES`]).
    pub too_big: bool,
    /// The budget ran out while building: incomplete, no verdict.
    pub cut: bool,
    /// Reads with several candidate writers.
    pub choices: Vec<Choice>,
    /// Number of selectors over all choices.
    pub selectors: u32,
    /// Edges present when a selector holds (write-read edges of choices,
    /// and their anti-dependencies along known write orders).
    pub cond_known: Vec<(Sel, EdgeId)>,
    /// Anti-dependencies whose write order a dependency path gave
    /// ([`DepClock`], strong-session and strict variants): ranges
    /// `lo..hi` of edge ids, ascending, each with the writer of the
    /// version their readers read.
    pub derived: Vec<(EdgeId, EdgeId, TxnId)>,
    /// Which of `derived` rest on session order or real time, set before a
    /// cycle is told (see `grounds`).
    pub through: std::cell::OnceCell<Through>,
}

/// What the anti-dependencies of [`Polygraph::derived`] rest on: session
/// order ([`EdgeKind::Process`]), real time ([`EdgeKind::Realtime`]), or
/// reads and writes alone ([`EdgeKind::Wr`]: a path of them orders the
/// writers); ranges `lo..hi` of edge ids, ascending.
#[derive(Clone, Debug, Default)]
pub struct Through {
    pub ranges: Vec<(EdgeId, EdgeId, EdgeKind)>,
}

impl Through {
    /// The range holding edge `e`'s grounds, if it is derived.
    fn range(&self, e: EdgeId) -> Option<EdgeKind> {
        let i = self.ranges.partition_point(|r| r.1 <= e);
        self.ranges.get(i).filter(|r| r.0 <= e).map(|r| r.2)
    }

    /// What edge `e` rests on beside its reads and writes, if anything.
    pub fn of(&self, e: EdgeId) -> Option<EdgeKind> {
        self.range(e).filter(|&k| k != EdgeKind::Wr)
    }

    /// Whether edge `e` is derived and rests on reads and writes alone.
    pub fn on_data(&self, e: EdgeId) -> bool {
        self.range(e) == Some(EdgeKind::Wr)
    }
}

/// Which part of a history a polygraph covers, and how many unordered
/// writer pairs it may hold before it gives up ([`Polygraph::too_big`]).
///
/// A part is a set of transactions; reads of writes from outside it are
/// left out (reads of the initial state stay). Snapshot isolation and
/// serializability are closed under this projection: the commit order of
/// the whole, restricted to the part, still serves every read kept (a
/// later writer of the key in the part was later in the whole too) and
/// every write-write conflict. So a violation of a part is one of the
/// whole, with the same steps; the part passing proves nothing.
///
/// A part may also keep only some keys: every micro-op on another key is
/// left out (its reads, its writes, and so the edges they bring). This
/// projection is sound too. Take a commit order of the whole and its
/// version order of each key: restricted to the kept keys, each kept read
/// observes the same writer, each kept key's versions keep their order,
/// and every edge the part's graph has under that order (write-read,
/// write-write, a read's anti-dependency on each later writer of its key,
/// session order, real time) is an edge of the whole's graph under it. A
/// subgraph of an acyclic graph is acyclic, and a cycle with no two
/// adjacent anti-dependencies stays one, so the part satisfies SI or
/// serializability whenever the whole does. SI's write-write conflict
/// rule is no extra condition here: two writers of a kept key are ordered
/// by the kept key's version order, as in the whole.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    /// The transactions of the part (indexed by transaction); `None`:
    /// the whole history.
    pub part: Option<&'a [bool]>,
    /// The keys the part keeps (indexed by key); `None`: all of them.
    pub keys: Option<&'a [bool]>,
    /// Most unordered writer pairs (at most [`MAX_PAIRS`]).
    pub max_pairs: usize,
    /// A guessed version order to take as known, wholly or in part (see
    /// [`Fixed`]). A polygraph so built that has a solution proves the
    /// history satisfies the variant; a cycle in it proves nothing.
    pub fixed: Option<Fixed<'a>>,
    /// The history's included transactions ([`included`]), when the caller
    /// has them: a check of many parts then does not find them again for
    /// each (a scan of every micro-op, a quarter of a part's check of a
    /// 32k history).
    pub included: Option<&'a [bool]>,
}

/// A guessed version order ([`Scope::fixed`]): each key's writers in the
/// order of `when`, taken as known for the pairs of writers farther apart
/// in it than the key's `near`: all of them ([`Fixed::WHOLE`]), none
/// ([`Fixed::OPEN`]: every pair a constraint), or those more than a band
/// apart (and past what a stale read asks, [`Fixed::stale`]), the closer
/// pairs left to the solver (so that a wrong guess
/// among writers close in time is the solver's to mend, while the pairs
/// left open grow with the band rather than with the square of the key's
/// writers).
///
/// Any solution of the polygraph so built is a version order of the
/// whole: it orders every pair of writers of a key (the far ones as
/// guessed), and a cycle of the whole's graph under it would be one of
/// the built graph's, whose edges it holds up to transitivity (see
/// [`banded`]). A cycle or an unsatisfiable core proves nothing.
///
/// Where session order makes writers' order known by reachability
/// ([`build_in`] with a strong-session variant), and on list-append keys,
/// bands are not used: a key is taken whole or left open.
#[derive(Clone, Copy, Debug)]
pub struct Fixed<'a> {
    /// Each transaction's place in the guessed order (by transaction).
    pub when: &'a [u64],
    /// Per key: how far apart in `when` two writers may be and still be
    /// left open (keys past its end: [`Fixed::OPEN`]).
    pub near: &'a [u64],
    /// Writers a stale read keeps open farther than `near`, ascending by
    /// (key, writer): `(x, w, upto)` leaves writer `w` of key `x` open
    /// with every writer of `x` placed before `upto` in `when`.
    pub stale: &'a [(KeyId, TxnId, u64)],
}

impl Fixed<'_> {
    /// The whole guessed order of a key is taken.
    pub const WHOLE: u64 = 0;
    /// None of a key's guessed order is taken.
    pub const OPEN: u64 = u64::MAX;

    fn near(&self, x: KeyId) -> u64 {
        self.near.get(x as usize).copied().unwrap_or(Self::OPEN)
    }
}

impl Scope<'_> {
    /// The whole history, within [`MAX_PAIRS`].
    pub const WHOLE: Scope<'static> = Scope {
        part: None,
        keys: None,
        max_pairs: MAX_PAIRS,
        fixed: None,
        included: None,
    };
}

/// Vector clocks over session order, write-read and real time: the
/// dependencies known before any write order, one entry per chain of a
/// chain cover ([`chains`]). Exact only with session order among the
/// edges (each session within a chain).
pub(super) struct DepClock {
    v: Vectors,
    /// Each transaction's chain.
    sess: Vec<u32>,
    /// Each transaction's place in its chain, from 1.
    pos: Vec<u32>,
}

impl DepClock {
    fn new(h: &History, inc: &[bool], g: &Polygraph) -> Option<DepClock> {
        let edges: Vec<(u32, u32)> = g
            .known
            .iter()
            .map(|&e| g.edges[e as usize])
            .filter(|e| e.kind.is_dep())
            .map(|e| (e.a, e.b))
            .collect();
        DepClock::from_edges(h, inc, &edges)
    }

    /// The clocks of dependency `edges` `(a, b)` among the included
    /// transactions, session order among them; None when they close a
    /// cycle, or when the clocks would hold more than
    /// [`MAX_CLOCK_ENTRIES`].
    pub(super) fn from_edges(h: &History, inc: &[bool], edges: &[(u32, u32)]) -> Option<DepClock> {
        let n = h.txns.len();
        let dg = Digraph::from_edges(n, edges);
        let topo = topo_order(&dg, inc)?;
        let Chains {
            chain: sess,
            pos,
            count: width,
        } = chains(
            &dg,
            &topo,
            |t| Some(h.txns[t as usize].session),
            h.sessions.len(),
        );
        if width.saturating_mul(n) > MAX_CLOCK_ENTRIES {
            return None;
        }
        let mut v = Vectors::new(n, width);
        for &a in &topo {
            v.raise(a, sess[a as usize], pos[a as usize]);
            for &b in dg.out(a) {
                v.join(b, a);
            }
        }
        Some(DepClock { v, sess, pos })
    }

    /// `a` reaches `b` through dependencies (reflexive).
    pub(super) fn reaches(&self, a: TxnId, b: TxnId) -> bool {
        a == b || self.v.get(b, self.sess[a as usize]) >= self.pos[a as usize]
    }

    /// Whether a writer of `ws` other than `w` and `r` lies on a
    /// dependency path from `w` to `r`; `s` holds `ws` by session (see
    /// [`DepClock::by_session`]). Each session's writers that reach `r`
    /// are a prefix of its run, and `w` reaches a suffix: the last of the
    /// prefix (short of `r`) decides.
    pub(super) fn writer_between(
        &self,
        ws: &[(TxnId, Val)],
        s: &SplitScratch,
        w: TxnId,
        r: TxnId,
    ) -> bool {
        s.runs.iter().any(|&(lo, hi)| {
            let list = &s.idx[lo..hi];
            let before = list.partition_point(|&j| self.reaches(ws[j].0, r));
            list[..before]
                .iter()
                .rev()
                .map(|&j| ws[j].0)
                .find(|&x| x != r)
                .is_some_and(|x| x != w && self.reaches(w, x))
        })
    }

    /// Splits the pairs of writers into the concurrent ones (into
    /// `concurrent`) and, for each writer, the writers a dependency path
    /// orders right after it (returned): the minimal ones among those it
    /// reaches (`(i, j)`, `i` first). Every other writer it reaches is
    /// reached from one of those. Both come in the order of `i`, then of
    /// the sessions, then of `j`.
    ///
    /// Returns the minimal ones and how many concurrent pairs there are;
    /// with `keep` false the concurrent pairs are not looked for (0).
    ///
    /// Per writer and session, the writers it reaches are a suffix of the
    /// session's run and those reaching it a prefix; a later writer of the
    /// same session reaches a shorter suffix and is reached by a longer
    /// prefix, so each boundary is searched from where the session's
    /// previous writer left it ([`gallop`]): a hot key's writers cost
    /// about one step per session each, not a binary search (which was a
    /// large share of a large causal store's check).
    fn split<'s>(
        &self,
        ws: &[(TxnId, Val)],
        s: &'s mut SplitScratch,
        concurrent: &mut Vec<(usize, usize)>,
        keep: bool,
    ) -> (&'s [(usize, usize)], usize) {
        self.by_session(ws, s);
        s.next.clear();
        let runs = s.runs.len();
        // Each writer's run; per (its run, another run) the boundaries its
        // session's previous writer found, and that writer's position.
        s.run_of.clear();
        s.run_of.resize(ws.len(), 0);
        for (r, &(lo, hi)) in s.runs.iter().enumerate() {
            for &i in &s.idx[lo..hi] {
                s.run_of[i] = r as u32;
            }
        }
        s.hints.clear();
        s.hints.resize(runs * runs, (0, 0));
        s.last.clear();
        s.last.resize(runs, 0);
        let mut count = 0;
        for (i, &(a, _)) in ws.iter().enumerate() {
            let r = s.run_of[i] as usize;
            // Writers of a session taken out of its order: no hint holds.
            let hinted = self.pos[a as usize] >= s.last[r];
            s.last[r] = self.pos[a as usize];
            s.cands.clear();
            for (t, &(lo, hi)) in s.runs.iter().enumerate() {
                let list = &s.idx[lo..hi];
                let hint = &mut s.hints[r * runs + t];
                if !hinted {
                    *hint = (0, 0);
                }
                // Writers before `a` (reaching it) form a prefix, writers
                // after it a suffix; between them, the concurrent ones.
                let after = gallop(list, hint.0, |j| !self.reaches(a, ws[j].0) || ws[j].0 == a);
                hint.0 = after;
                if let Some(&j) = list.get(after) {
                    s.cands.push(j);
                }
                if !keep {
                    continue;
                }
                let before = gallop(list, hint.1, |j| self.reaches(ws[j].0, a) && ws[j].0 != a);
                hint.1 = before;
                for &j in &list[before.min(after)..after] {
                    let c = ws[j].0;
                    if c != a && a < c && !self.reaches(c, a) && !self.reaches(a, c) {
                        count += 1;
                        concurrent.push((i, j));
                    }
                }
            }
            self.minimal(ws, &mut s.cands, &mut s.at);
            s.next.extend(s.cands.iter().map(|&j| (i, j)));
        }
        (&s.next, count)
    }

    /// Writers by session, each run of `s.idx` one session's in session
    /// order, sessions ascending.
    pub(super) fn by_session(&self, ws: &[(TxnId, Val)], s: &mut SplitScratch) {
        s.idx.clear();
        s.idx.extend(0..ws.len());
        let key = |i: usize| {
            let t = ws[i].0 as usize;
            (self.sess[t], self.pos[t])
        };
        s.idx.sort_unstable_by_key(|&i| key(i));
        s.runs.clear();
        let mut lo = 0;
        for k in 1..=s.idx.len() {
            if k == s.idx.len() || key(s.idx[k]).0 != key(s.idx[lo]).0 {
                s.runs.push((lo, k));
                lo = k;
            }
        }
    }

    /// Keeps of `cands` (at most one writer per session) those no other
    /// of them reaches, in their order. `at` is scratch: each session's
    /// candidate position (`u32::MAX`: none), so that each candidate is
    /// tested by one pass over its clock row.
    fn minimal(&self, ws: &[(TxnId, Val)], cands: &mut Vec<usize>, at: &mut Vec<u32>) {
        // Fewer candidates than chains: each tested against the others
        // (many short sessions make many chains, each writer few).
        if cands.len() < self.v.width() {
            let all = std::mem::take(cands);
            cands.extend(all.iter().copied().filter(|&j| {
                let t = ws[j].0;
                !all.iter().any(|&k| k != j && self.reaches(ws[k].0, t))
            }));
            return;
        }
        at.clear();
        at.resize(self.v.width(), u32::MAX);
        for &k in cands.iter() {
            let t = ws[k].0 as usize;
            at[self.sess[t] as usize] = self.pos[t];
        }
        cands.retain(|&j| {
            let t = ws[j].0;
            let own = self.sess[t as usize] as usize;
            let mine = std::mem::replace(&mut at[own], u32::MAX);
            let reached = self
                .v
                .row(t)
                .iter()
                .zip(at.iter())
                .fold(false, |any, (&r, &p)| any | (r >= p));
            at[own] = mine;
            !reached
        });
    }

    /// The first writers (into `out`): minimal among all (each session's
    /// first, less those another session's first reaches).
    fn firsts(&self, ws: &[(TxnId, Val)], s: &mut SplitScratch, out: &mut Vec<(TxnId, Val)>) {
        self.by_session(ws, s);
        s.cands.clear();
        s.cands.extend(s.runs.iter().map(|&(lo, _)| s.idx[lo]));
        self.minimal(ws, &mut s.cands, &mut s.at);
        out.extend(s.cands.iter().map(|&j| ws[j]));
    }
}

/// The end of the prefix of `list` where `holds` holds, knowing it holds
/// on `list[..from]`: a galloping search from `from`, so its cost grows
/// with the log of how far the end lies beyond `from`.
fn gallop(list: &[usize], from: usize, holds: impl Fn(usize) -> bool) -> usize {
    let mut lo = from.min(list.len());
    let mut step = 1;
    let hi = loop {
        let probe = lo + step - 1;
        if probe >= list.len() {
            break list.len();
        }
        if !holds(list[probe]) {
            break probe;
        }
        lo = probe + 1;
        step *= 2;
    };
    lo + list[lo..hi].partition_point(|&j| holds(j))
}

/// Buffers for [`DepClock::split`], reused across keys.
#[derive(Default)]
pub(super) struct SplitScratch {
    idx: Vec<usize>,
    runs: Vec<(usize, usize)>,
    cands: Vec<usize>,
    next: Vec<(usize, usize)>,
    /// Each writer's run in `runs`.
    run_of: Vec<u32>,
    /// Per pair of runs, [`DepClock::split`]'s last boundaries.
    hints: Vec<(usize, usize)>,
    /// Per run, the position of its writer [`DepClock::split`] last took.
    last: Vec<u32>,
    /// Per session, its candidate's position, for [`DepClock::minimal`].
    at: Vec<u32>,
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

    /// The transaction of a G2 node (either copy).
    #[inline]
    pub fn g2_txn(self, v: u32) -> TxnId {
        if self.serializable { v } else { v / 2 }
    }

    /// The G2 nodes that take part: the copies of the transactions `inc`.
    pub fn g2_mask(self, inc: &[bool]) -> Vec<bool> {
        (0..self.g2_nodes(inc.len()))
            .map(|v| inc[self.g2_txn(v as u32) as usize])
            .collect()
    }

    /// Whether a history this variant accepts is accepted by `weaker` too:
    /// `weaker` keeps no order this one drops, so each of its violations
    /// is one of this variant's (serializability's graph holds SI's
    /// cycles).
    pub fn implies(self, weaker: Variant) -> bool {
        self.serializable >= weaker.serializable
            && self.session >= weaker.session
            && self.realtime >= weaker.realtime
    }

    /// The model Elle names this variant by (`serializable`,
    /// `strong-session-snapshot-isolation`, ...).
    pub fn model_name(self) -> &'static str {
        match (self.serializable, self.session, self.realtime) {
            (false, _, true) => "strong-snapshot-isolation",
            (false, true, false) => "strong-session-snapshot-isolation",
            (false, false, false) => "snapshot-isolation",
            (true, _, true) => "strict-serializable",
            (true, true, false) => "strong-session-serializable",
            (true, false, false) => "serializable",
        }
    }

    /// Elle's name for "some cycle of this model's graph exists".
    pub fn cycle_exists(self) -> AnomalyType {
        match (self.serializable, self.session, self.realtime) {
            (false, _, true) => AnomalyType::StrongSiCycleExists,
            (false, true, false) => AnomalyType::StrongSessionSiCycleExists,
            (false, false, false) => AnomalyType::PlSiCycleExists,
            (true, _, true) => AnomalyType::PlSsCycleExists,
            (true, true, false) => AnomalyType::StrongSessionSerCycleExists,
            (true, false, false) => AnomalyType::Pl3CycleExists,
        }
    }
}

impl Polygraph {
    /// The variant's G2 of the known edges.
    pub fn known_g2(&self, variant: Variant) -> Digraph {
        let mut edges = Vec::with_capacity(2 * self.known.len());
        for &e in &self.known {
            variant.g2_edges(&self.edges[e as usize], &mut edges);
        }
        Digraph::from_edges(variant.g2_nodes(self.included.len()), &edges)
    }

    fn add(&mut self, e: Edge) -> EdgeId {
        self.edges.push(e);
        (self.edges.len() - 1) as EdgeId
    }
}

/// A key's writers under a partly guessed order ([`Fixed::near`]), in
/// guessed order (`when`, ascending): for each, into `upto`, the end of
/// the run of writers after it within `near` of it (the pairs left open).
///
/// Every pair farther apart keeps the guess, but only some need edges of
/// their own: writer `i`'s with the writers from `b = upto[i]` (the first
/// it is not open with) to `upto[b]`. A farther writer `c` (at or past
/// `upto[b]`) is kept after `b`, and fewer writers from it than from `i`,
/// so by induction on that count `b` reaches `c` through write-write
/// edges, and `i` through `b`; `i`'s readers reach `c` through their
/// anti-dependency on `b` (for SI a dependency follows it, as a cycle
/// through `c` needs). And the writer right after `i` in any solution's
/// order is open with `i` or one of those with edges of their own (one at
/// or past `upto[b]` is kept after `b`, which is kept after `i`), so the
/// solution's graph holds each version step's edges. Nothing here needs
/// the runs to grow along the writers, only each to pass its own writer
/// (`upto[i] > i`): [`widen`] lengthens some.
fn banded(when: &[u64], near: u64, ws: &[(TxnId, Val)], upto: &mut Vec<usize>) {
    upto.clear();
    let at = |i: usize| when[ws[i].0 as usize];
    let mut hi = 0;
    for i in 0..ws.len() {
        while hi < ws.len() && at(hi) <= at(i).saturating_add(near) {
            hi += 1;
        }
        upto.push(hi);
    }
}

/// Widens [`banded`]'s runs where a stale read asks ([`Fixed::stale`]):
/// writer `w`'s run reaches the first writer placed at or after its
/// `upto`. Runs so widened need not grow along the key's writers; what
/// [`banded`] shows holds of any runs that each pass their own writer.
fn widen(f: Fixed, x: KeyId, ws: &[(TxnId, Val)], upto: &mut [usize]) {
    let lo = f.stale.partition_point(|e| e.0 < x);
    let hi = f.stale.partition_point(|e| e.0 <= x);
    if lo == hi {
        return;
    }
    let stale = &f.stale[lo..hi];
    for (i, &(t, _)) in ws.iter().enumerate() {
        if let Ok(a) = stale.binary_search_by_key(&t, |e| e.1) {
            let until = stale[a].2;
            let end = ws.partition_point(|&(u, _)| f.when[u as usize] < until);
            upto[i] = upto[i].max(end);
        }
    }
}

/// Whether a scope's keys keep key `x`.
fn kept(keys: Option<&[bool]>, x: KeyId) -> bool {
    keys.is_none_or(|k| k.get(x as usize).copied().unwrap_or(false))
}

/// Items grouped by key, flat: key `x`'s are `items[at[x]..at[x + 1]]`.
pub(super) struct ByKey<T> {
    items: Vec<T>,
    at: Vec<u32>,
}

impl<T: Copy> ByKey<T> {
    /// Groups `(key, item)` pairs by key (a counting sort, so items of a
    /// key keep their order).
    fn new(pairs: &[(KeyId, T)]) -> ByKey<T> {
        let keys = pairs.iter().map(|p| p.0 as usize + 1).max().unwrap_or(0);
        let (at, items) = crate::check::graph::group(keys, pairs);
        ByKey { items, at }
    }

    pub(super) fn get(&self, x: KeyId) -> &[T] {
        match (self.at.get(x as usize), self.at.get(x as usize + 1)) {
            (Some(&lo), Some(&hi)) => &self.items[lo as usize..hi as usize],
            _ => &[],
        }
    }

    fn keys(&self) -> usize {
        self.at.len().saturating_sub(1)
    }
}

/// The final write of each transaction to each key (its installed
/// version), by key, in transaction order.
pub(super) fn final_writes(
    h: &History,
    inc: &[bool],
    keys: Option<&[bool]>,
) -> ByKey<(TxnId, Val)> {
    let mut pairs: Vec<(KeyId, (TxnId, Val))> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if !inc[t] {
            continue;
        }
        for i in txn.mops() {
            let m = &h.mops[i];
            if m.is_write() && m.has(flag::FINAL) && kept(keys, m.key) {
                pairs.push((m.key, (t as TxnId, m.val)));
            }
        }
    }
    ByKey::new(&pairs)
}

/// Unordered pairs among `n` writers of one key.
fn pairs_of(n: usize) -> usize {
    n * n.saturating_sub(1) / 2
}

/// Unordered pairs of writers of one key, over all keys of `writes`.
fn pairs(writes: &ByKey<(TxnId, Val)>) -> usize {
    (0..writes.keys() as KeyId)
        .map(|x| pairs_of(writes.get(x).len()))
        .sum()
}

/// How many transactions `inc` marks install a version of each key (its
/// final writers), by key.
pub fn writers_per_key(h: &History, inc: &[bool]) -> Vec<usize> {
    let mut per_key = vec![0usize; h.keys.len()];
    for (t, txn) in h.txns.iter().enumerate() {
        if !inc[t] {
            continue;
        }
        for m in &h.mops[txn.mops()] {
            if m.is_write()
                && m.has(flag::FINAL)
                && let Some(c) = per_key.get_mut(m.key as usize)
            {
                *c += 1;
            }
        }
    }
    per_key
}

/// Unordered pairs of writers of one key ([`writers_per_key`]'s counts),
/// over the keys `keys` keeps (all with `None`): the constraints a
/// sessionless polygraph starts from.
pub fn writer_pairs(per_key: &[usize], keys: Option<&[bool]>) -> usize {
    per_key
        .iter()
        .enumerate()
        .filter(|&(x, _)| kept(keys, x as KeyId))
        .map(|(_, &n)| pairs_of(n))
        .sum()
}

/// An ambiguous reader of a write: reader, its read, and the selector
/// under which it observed that write.
type AmbReader = (TxnId, MopId, Sel);

/// Readers of each writer's version of each key, flat: each reader once
/// (with its first read), ascending.
struct ReadersOf {
    list: Vec<(TxnId, Val)>,
    /// Per key (see [`ByKey`]): its writers that were read, ascending, and
    /// where their readers lie in `list`.
    groups: ByKey<(TxnId, u32, u32)>,
}

impl ReadersOf {
    /// From `(key, writer, reader, read)` items.
    fn new(mut items: Vec<(KeyId, TxnId, TxnId, MopId, Val)>) -> ReadersOf {
        items.sort_unstable();
        items.dedup_by_key(|i| (i.0, i.1, i.2));
        let mut list = Vec::with_capacity(items.len());
        let mut groups: Vec<(KeyId, (TxnId, u32, u32))> = Vec::new();
        for &(k, w, r, _, v) in &items {
            match groups.last_mut() {
                Some((gk, (gw, _, end))) if *gk == k && *gw == w => *end += 1,
                _ => groups.push((k, (w, list.len() as u32, list.len() as u32 + 1))),
            }
            list.push((r, v));
        }
        ReadersOf {
            list,
            groups: ByKey::new(&groups),
        }
    }

    fn get(&self, x: KeyId, w: TxnId) -> &[(TxnId, Val)] {
        let gs = self.groups.get(x);
        match gs.binary_search_by_key(&w, |g| g.0) {
            Ok(i) => &self.list[gs[i].1 as usize..gs[i].2 as usize],
            Err(_) => &[],
        }
    }
}

/// External readers of each write (by the writer's version), and of the
/// initial state, per key; and the reads with several candidate writers.
struct Readers {
    of: ReadersOf,
    /// Readers of the initial state (writer 0 stands for it).
    initial: ReadersOf,
    amb: FxHashMap<(KeyId, TxnId), Vec<AmbReader>>,
    choices: Vec<Choice>,
    selectors: Sel,
}

/// `part`: the scope's transactions, when it is a part; a read that may
/// have observed a writer outside it is left out (its writer is unknown
/// within the part), as is every read of such a writer.
fn readers(h: &History, inc: &[bool], scope: Scope, tv: &[(TxnId, Val)]) -> Readers {
    let part = scope.part;
    let mut of: Vec<(KeyId, TxnId, TxnId, MopId, Val)> = Vec::new();
    let mut initial: Vec<(KeyId, TxnId, TxnId, MopId, Val)> = Vec::new();
    let mut amb: FxHashMap<(KeyId, TxnId), Vec<AmbReader>> = FxHashMap::default();
    let mut choices = Vec::new();
    let mut selectors: Sel = 0;
    let any_candidates = !h.candidates.is_empty();
    for (t, txn) in h.txns.iter().enumerate() {
        if !inc[t] || txn.status != Status::Committed {
            continue;
        }
        let t = t as TxnId;
        for i in txn.mops() {
            let m = &h.mops[i];
            if !m.is_read() || !m.has(flag::EXTERNAL) || !kept(scope.keys, m.key) {
                continue;
            }
            if any_candidates && let Some(cands) = h.candidates.get(&(i as MopId)) {
                if let Some(p) = part
                    && cands.iter().any(|&w| !p[h.txn_of(w) as usize])
                {
                    continue;
                }
                let mut ws: Vec<TxnId> = cands
                    .iter()
                    .map(|&w| h.txn_of(w))
                    .filter(|&w| w != t && inc[w as usize])
                    .collect();
                ws.sort_unstable();
                ws.dedup();
                match ws.len() {
                    0 => {}
                    1 => of.push((m.key, ws[0], t, i as MopId, m.val)),
                    k => {
                        let first = selectors;
                        selectors += k as Sel;
                        for (j, &w) in ws.iter().enumerate() {
                            amb.entry((m.key, w)).or_default().push((
                                t,
                                i as MopId,
                                first + j as Sel,
                            ));
                        }
                        choices.push(Choice {
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
                initial.push((m.key, 0, t, i as MopId, m.val));
            } else if let Some(w) = m.observed()
                && let src = tv[w as usize].0
                && src != t
                && h.txns[src as usize].status != Status::Aborted
                && inc[src as usize]
            {
                // The transaction it observed (as `external_source` finds it).
                of.push((m.key, src, t, i as MopId, m.val));
            }
        }
    }
    Readers {
        of: ReadersOf::new(of),
        initial: ReadersOf::new(initial),
        amb,
        choices,
        selectors,
    }
}

/// The edges one version order of key `x` implies: `from`'s write before
/// `to`'s (a ww edge, left out with `ww` false where a dependency path
/// already orders them) and each reader of `from` anti-depending on `to`;
/// their ids go to `out`.
#[allow(clippy::too_many_arguments)]
fn order_edges(
    edges: &mut Vec<Edge>,
    out: &mut Vec<EdgeId>,
    x: KeyId,
    readers: &[(TxnId, Val)],
    (from, vf): (TxnId, Val),
    (to, vb): (TxnId, Val),
    ww: bool,
) -> usize {
    let before = out.len();
    let mut add = |e: Edge| {
        out.push(edges.len() as EdgeId);
        edges.push(e);
    };
    if ww {
        add(Edge {
            a: from,
            b: to,
            kind: EdgeKind::Ww,
            key: x,
            va: vf,
            vb,
        });
    }
    for &(r, va) in readers {
        if r != to {
            add(Edge {
                a: r,
                b: to,
                kind: EdgeKind::Rw,
                key: x,
                va,
                vb,
            });
        }
    }
    out.len() - before
}

/// The anti-dependencies of ambiguous readers of `from`'s write on `to`,
/// each under its selector, for a version order `from` before `to`; they
/// go to `out`.
fn amb_edges(
    edges: &mut Vec<Edge>,
    out: &mut Vec<(Sel, EdgeId)>,
    tv: &[(TxnId, Val)],
    x: KeyId,
    readers: &[AmbReader],
    to: (TxnId, Val),
) -> usize {
    let (to, vt) = to;
    let before = out.len();
    for &(r, rm, s) in readers {
        if r != to {
            out.push((s, edges.len() as EdgeId));
            edges.push(Edge {
                a: r,
                b: to,
                kind: EdgeKind::Rw,
                key: x,
                va: tv[rm as usize].1,
                vb: vt,
            });
        }
    }
    out.len() - before
}

/// Whether the known edges alone close a cycle of the variant's graph
/// (G2: for SI, one with no two adjacent anti-dependencies).
fn known_cyclic(g: &Polygraph, variant: Variant) -> bool {
    topo_order(&g.known_g2(variant), &variant.g2_mask(&g.included)).is_none()
}

/// Whether the known edges of the whole history close a cycle of a
/// variant without session order: the variant then rejects, and no
/// constraint need be built (see [`build_or_cycle`]). False for the
/// others.
pub fn known_cycle(h: &History, variant: Variant) -> bool {
    !variant.session && {
        let g = build_with(h, variant, Budget::NONE, Scope::WHOLE, Build::KnownOnly);
        !g.too_big && !g.cut && known_cyclic(&g, variant)
    }
}

/// What a polygraph may take as known beside what the history shows,
/// for a check that forbids every cycle of dependencies ([`Rules::ACYCLIC`]:
/// SI, serializability and the models between) or one that allows some
/// (anomalies asked for by name: `super::shapes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// One constraint per pair of writers, over all keys they both write:
    /// opposite orders on two keys close a cycle of write-write steps (a
    /// G0). Else one per pair and key.
    pub merge: bool,
    /// A writer that read the other's version of a key installs its own
    /// after it: the other order closes a G1c (write-read one way,
    /// write-write back). Else such a pair is a constraint like any other.
    pub read_orders: bool,
}

impl Rules {
    /// The rules of a check that forbids G0 and G1c.
    pub const ACYCLIC: Rules = Rules {
        merge: true,
        read_orders: true,
    };
}

/// What [`build_with`] builds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Build {
    /// Every edge and constraint.
    Full,
    /// Every edge and constraint, under these rules.
    Under(Rules),
    /// The known edges alone when they close a cycle of the variant's
    /// graph, else every edge and constraint.
    UnlessKnownCycle,
    /// The known edges alone.
    KnownOnly,
}

/// The polygraph of the whole history for a variant.
///
/// Past `budget` it stops between keys and sets [`Polygraph::too_big`]'s
/// sibling `cut`: the graph is then incomplete and decides nothing.
pub fn build(h: &History, variant: Variant, budget: Budget) -> Polygraph {
    build_in(h, variant, budget, Scope::WHOLE)
}

/// [`build`] over a [`Scope`]: the transactions of a part only, with at
/// most `scope.max_pairs` unordered writer pairs.
pub fn build_in(h: &History, variant: Variant, budget: Budget, scope: Scope) -> Polygraph {
    build_with(h, variant, budget, scope, Build::Full)
}

/// [`build`] under `rules` (a check that allows some cycles of
/// dependencies), over the whole history.
pub fn build_under(h: &History, variant: Variant, budget: Budget, rules: Rules) -> Polygraph {
    build_with(h, variant, budget, Scope::WHOLE, Build::Under(rules))
}

/// [`build_in`] for the variant's own check, which stops at a cycle of
/// known edges: when they close one, only they are built (no constraint;
/// see the comment in [`build_with`]). Another graph made from the
/// polygraph (prefix, PSI) needs [`build`].
pub fn build_or_cycle(h: &History, variant: Variant, budget: Budget, scope: Scope) -> Polygraph {
    build_with(h, variant, budget, scope, Build::UnlessKnownCycle)
}

/// The polygraph, as `what` asks.
fn build_with(
    h: &History,
    variant: Variant,
    budget: Budget,
    scope: Scope,
    what: Build,
) -> Polygraph {
    let rules = match what {
        Build::Under(r) => r,
        _ => Rules::ACYCLIC,
    };
    let mut inc = scope.included.map_or_else(|| included(h), <[bool]>::to_vec);
    if let Some(p) = scope.part {
        for (i, &inside) in inc.iter_mut().zip(p) {
            *i &= inside;
        }
    }
    let max_pairs = scope.max_pairs.min(MAX_PAIRS);
    // Each micro-op's value and transaction, compact: the lookups below
    // jump around the micro-ops, and these fit in cache far better.
    let tv: &[(TxnId, Val)] = &h.mops.iter().map(|m| (m.txn, m.val)).collect::<Vec<_>>();
    let mut g = Polygraph {
        edges: Vec::new(),
        known: Vec::new(),
        constraints: Vec::new(),
        included: inc.clone(),
        unknown_edges: 0,
        cycle_exists: variant.cycle_exists(),
        all_pairs: 0,
        too_big: false,
        cut: false,
        choices: Vec::new(),
        selectors: 0,
        cond_known: Vec::new(),
        derived: Vec::new(),
        through: std::cell::OnceCell::new(),
    };
    // Room for about an edge per micro-op (a read's write-read and
    // anti-dependency, a write's version step): growing by doubling would
    // copy them several times.
    g.edges.reserve(h.mops.len() + h.txns.len());
    g.known.reserve(h.mops.len() + h.txns.len());
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
    let rd = readers(h, &inc, scope, tv);
    // Write-read, by writer, then key, then reader.
    {
        let n = h.txns.len();
        let mut at = vec![0u32; n + 1];
        let gs = &rd.of.groups;
        for &(w, lo, hi) in &gs.items {
            at[w as usize + 1] += hi - lo;
        }
        for i in 0..n {
            at[i + 1] += at[i];
        }
        let mut slots = vec![(0 as KeyId, 0 as TxnId, Val::NIL); at[n] as usize];
        for x in 0..gs.keys() {
            for &(w, lo, hi) in gs.get(x as KeyId) {
                for &(r, v) in &rd.of.list[lo as usize..hi as usize] {
                    slots[at[w as usize] as usize] = (x as KeyId, r, v);
                    at[w as usize] += 1;
                }
            }
        }
        // `at[w]` is now where w's slots end.
        let mut w = 0usize;
        for (i, &(key, r, va)) in slots.iter().enumerate() {
            while at[w] as usize <= i {
                w += 1;
            }
            let e = g.add(Edge {
                a: w as TxnId,
                b: r,
                kind: EdgeKind::Wr,
                key,
                va,
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
    // The write orders Elle's key options infer are known, as a list's
    // are: each a write-write edge, and its readers' anti-dependencies on
    // the later writer (reads of repeated values, the only ambiguous ones,
    // take no key options).
    for &(x, wa, wb) in &crate::check::keys::inferred(h).ww {
        let (a, b) = (tv[wa as usize], tv[wb as usize]);
        if kept(scope.keys, x) && inc[a.0 as usize] && inc[b.0 as usize] {
            order_edges(&mut g.edges, &mut g.known, x, rd.of.get(x, a.0), a, b, true);
        }
    }
    // Reachability through what is known before any write order is, when
    // sessions make it cheap: writes a dependency path already orders need
    // no constraint, and their readers' anti-dependencies go only to the
    // nearest later writer per session (the rest follow by transitivity).
    let dep = if variant.session {
        DepClock::new(h, &inc, &g)
    } else {
        None
    };
    let writes = final_writes(h, &inc, scope.keys);
    let list_append = h.workload == Some(Workload::ListAppend);
    if dep.is_none() && !list_append && scope.fixed.is_none() {
        // Nothing orders a key's writers here, so every pair is open: say
        // too big before building any of them (the loop below would give
        // up at the same count, after holding gigabytes of edges).
        let all = pairs(&writes);
        if all > max_pairs {
            g.all_pairs = all;
            g.too_big = true;
            return g;
        }
    }
    if dep.is_none() && what != Build::KnownOnly && !list_append && scope.fixed.is_none() {
        // Nearly every pair is one.
        g.constraints.reserve(pairs(&writes).min(max_pairs));
    }
    let no_amb: Vec<AmbReader> = Vec::new();
    // Buffers reused across keys; `in_order[t] == x + 1` marks a writer
    // of key x whose version the reads place.
    let mut order: Vec<(TxnId, Val)> = Vec::new();
    let mut unordered: Vec<(TxnId, Val)> = Vec::new();
    let mut in_order = vec![0u32; h.txns.len()];
    let mut firsts: Vec<(TxnId, Val)> = Vec::new();
    let mut scratch = SplitScratch::default();
    let mut pairs_here: Vec<(usize, usize)> = Vec::new();
    // Each writer's place in `unordered` (`u32::MAX`: none).
    let mut slot = vec![u32::MAX; h.txns.len()];
    // A key under a band of a guessed order (`Fixed::near`): per
    // writer in `unordered`, the end of the writers it is left open with.
    let mut upto: Vec<usize> = Vec::new();
    // The edges of each key's writers: known ones, and with
    // `constraints` a constraint per pair left unordered.
    // Edges and constraints made so far, counted as work.
    let mut made = 0;
    let mut add_keys = |g: &mut Polygraph, constraints: bool| {
        for x in 0..writes.keys() as KeyId {
            let ws = writes.get(x);
            if ws.is_empty() {
                continue;
            }
            let now = g.edges.len() + g.constraints.len();
            budget::spend((now - made) as u64 + 1);
            made = now;
            if budget.expired() {
                g.cut = true;
                return;
            }
            if g.edges.len() > MAX_EDGES {
                g.too_big = true;
                return;
            }
            let readers_of = |t: TxnId| rd.of.get(x, t);
            let amb_of = |t: TxnId| rd.amb.get(&(x, t)).unwrap_or(&no_amb);
            let initial = rd.initial.get(x, 0);
            // Known order: list-append version orders.
            order.clear();
            if list_append && let Some(o) = h.orders.get(x as usize) {
                for w in o.versions() {
                    let Some(&(t, v)) = tv.get(w as usize) else {
                        continue;
                    };
                    if !inc[t as usize] {
                        continue;
                    }
                    // A transaction's appends are one version step: keep its last.
                    if let Some(last) = order.last_mut()
                        && last.0 == t
                    {
                        last.1 = v;
                        continue;
                    }
                    order.push((t, v));
                }
            }
            if let Some(f) = scope.fixed
                && f.near(x) == Fixed::WHOLE
            {
                order.extend_from_slice(ws);
                order.sort_by_key(|&(t, _)| (f.when[t as usize], t));
            }
            for &(t, _) in &order {
                in_order[t as usize] = x + 1;
            }
            unordered.clear();
            unordered.extend(
                ws.iter()
                    .copied()
                    .filter(|(t, _)| in_order[*t as usize] != x + 1),
            );
            // Writers far apart in a partly guessed order keep it.
            let band = match (scope.fixed, &dep) {
                (Some(f), None) if !list_append => match f.near(x) {
                    Fixed::WHOLE | Fixed::OPEN => None,
                    near => Some((f.when, near)),
                },
                _ => None,
            };
            if let Some((when, near)) = band {
                unordered.sort_by_key(|&(t, _)| (when[t as usize], t));
                banded(when, near, &unordered, &mut upto);
                if let Some(f) = scope.fixed {
                    widen(f, x, &unordered, &mut upto);
                }
            }
            // Observed order: ww between consecutive versions; rw from the
            // readers of each version to the next one's writer.
            for pair in order.windows(2) {
                let ((a, ma), (b, mb)) = (pair[0], pair[1]);
                let rs = readers_of(a);
                order_edges(&mut g.edges, &mut g.known, x, rs, (a, ma), (b, mb), true);
                let amb = amb_of(a);
                amb_edges(&mut g.edges, &mut g.cond_known, tv, x, amb, (b, mb));
            }
            // Readers of the initial state precede the first known version, or
            // every writer when none is known.
            firsts.clear();
            match (order.first(), &dep) {
                (Some(&f), _) => firsts.push(f),
                (None, Some(dc)) => dc.firsts(&unordered, &mut scratch, &mut firsts),
                // Under a partly guessed order, those the guess puts after
                // another follow it.
                (None, None) if band.is_some() => {
                    // Those no earlier writer is kept before (each of
                    // the others follows one that is).
                    let mut least = usize::MAX;
                    for (k, &w) in unordered.iter().enumerate() {
                        if k >= least {
                            break;
                        }
                        firsts.push(w);
                        least = least.min(upto[k]);
                    }
                }
                (None, None) => firsts.extend_from_slice(&unordered),
            }
            if band.is_some() {
                // The guessed pairs each writer heads: those from the
                // first it is not open with to the end of that one's run
                // (every farther one follows through that first one's).
                for (i, &a) in unordered.iter().enumerate() {
                    // Widened runs may reach the end before later ones.
                    let Some(&b1) = upto.get(i).filter(|&&b| b < unordered.len()) else {
                        continue;
                    };
                    let rs = readers_of(a.0);
                    let amb = amb_of(a.0);
                    for &b in &unordered[b1..upto[b1]] {
                        order_edges(&mut g.edges, &mut g.known, x, rs, a, b, true);
                        amb_edges(&mut g.edges, &mut g.cond_known, tv, x, amb, b);
                    }
                }
            }
            for &(r, va) in initial {
                for &(b, vb) in &firsts {
                    if r != b {
                        let e = g.add(Edge {
                            a: r,
                            b,
                            kind: EdgeKind::Rw,
                            key: x,
                            va,
                            vb,
                        });
                        g.known.push(e);
                    }
                }
            }
            if let Some(&(last, lm)) = order.last() {
                // Writes nobody read come after every observed one.
                let rs = readers_of(last);
                let amb = amb_of(last);
                for &(b, mb) in &unordered {
                    order_edges(&mut g.edges, &mut g.known, x, rs, (last, lm), (b, mb), true);
                    amb_edges(&mut g.edges, &mut g.cond_known, tv, x, amb, (b, mb));
                }
            }
            if unordered.len() < 2 {
                continue;
            }
            // Unknown order among the rest: a constraint per pair, except
            // where a dependency path already orders the pair.
            pairs_here.clear();
            match &dep {
                Some(dc) => {
                    // Writers a dependency path orders include every pair
                    // one of which read the other: concurrent ones bring no
                    // known edge, so without constraints they are not
                    // enumerated (nor counted: a known cycle decides
                    // however many there are).
                    let (next, count) =
                        dc.split(&unordered, &mut scratch, &mut pairs_here, constraints);
                    g.all_pairs += count;
                    if g.all_pairs > max_pairs {
                        g.too_big = true;
                        return;
                    }
                    // A dependency path already orders these writers, and so
                    // every commit order: no ww edge is needed, only the
                    // readers' anti-dependencies on the writers right after.
                    for &(i, j) in next {
                        let (a, b) = (unordered[i], unordered[j]);
                        let rs = readers_of(a.0);
                        let lo = g.edges.len() as EdgeId;
                        order_edges(&mut g.edges, &mut g.known, x, rs, a, b, false);
                        let amb = amb_of(a.0);
                        amb_edges(&mut g.edges, &mut g.cond_known, tv, x, amb, b);
                        let hi = g.edges.len() as EdgeId;
                        if lo < hi {
                            g.derived.push((lo, hi, a.0));
                        }
                    }
                }
                None => {
                    // Every pair is open, or under a band of a guessed
                    // order only those within `near` of each other.
                    let n = unordered.len();
                    let end = |i: usize| if band.is_some() { upto[i] } else { n };
                    g.all_pairs += (0..n).map(|i| end(i) - i - 1).sum::<usize>();
                    if g.all_pairs > max_pairs {
                        g.too_big = true;
                        return;
                    }
                    if constraints {
                        pairs_here
                            .extend((0..n).flat_map(|i| (i + 1..end(i)).map(move |j| (i, j))));
                    } else {
                        // Known edges come only from pairs one of which
                        // read the other's version: found through the
                        // readers, in the order of all pairs.
                        for (i, &(t, _)) in unordered.iter().enumerate() {
                            slot[t as usize] = i as u32;
                        }
                        for (i, &(a, _)) in unordered.iter().enumerate() {
                            for &(r, _) in readers_of(a) {
                                let j = slot[r as usize];
                                if j != u32::MAX && j as usize != i {
                                    let (i, j) = (i.min(j as usize), i.max(j as usize));
                                    if j < end(i) {
                                        pairs_here.push((i, j));
                                    }
                                }
                            }
                        }
                        for &(t, _) in unordered.iter() {
                            slot[t as usize] = u32::MAX;
                        }
                        pairs_here.sort_unstable();
                        pairs_here.dedup();
                    }
                }
            }
            for &(i, j) in &pairs_here {
                let (mut a, mut ma) = unordered[i];
                let (mut c, mut mc) = unordered[j];
                if a > c {
                    std::mem::swap(&mut a, &mut c);
                    std::mem::swap(&mut ma, &mut mc);
                }
                // A writer that read the other's version of the key
                // installs its own after it, at every level that forbids
                // a G1c ([`Rules::read_orders`]): that order is known,
                // not a choice.
                let c_read_a = readers_of(a).iter().any(|&(r, _)| r == c);
                let a_read_c = readers_of(c).iter().any(|&(r, _)| r == a);
                if rules.read_orders && c_read_a != a_read_c {
                    let (from, mf, to, mt) = if c_read_a {
                        (a, ma, c, mc)
                    } else {
                        (c, mc, a, ma)
                    };
                    let rs = readers_of(from);
                    order_edges(
                        &mut g.edges,
                        &mut g.known,
                        x,
                        rs,
                        (from, mf),
                        (to, mt),
                        true,
                    );
                    let amb = amb_of(from);
                    amb_edges(&mut g.edges, &mut g.cond_known, tv, x, amb, (to, mt));
                    continue;
                }
                if !constraints {
                    continue;
                }
                // One per key; a pair that writes several keys in common
                // is merged into one constraint afterwards.
                let mut con = Constraint {
                    a,
                    c,
                    ..Constraint::default()
                };
                let edges = &mut g.edges;
                let mut added = 0;
                added += order_edges(
                    edges,
                    &mut con.either,
                    x,
                    readers_of(a),
                    (a, ma),
                    (c, mc),
                    true,
                );
                added += order_edges(edges, &mut con.or, x, readers_of(c), (c, mc), (a, ma), true);
                added += amb_edges(edges, &mut con.either_if, tv, x, amb_of(a), (c, mc));
                added += amb_edges(edges, &mut con.or_if, tv, x, amb_of(c), (a, ma));
                g.unknown_edges += added;
                g.constraints.push(con);
                if g.edges.len() > MAX_EDGES {
                    g.too_big = true;
                    return;
                }
            }
        }
    };
    // With session order, only a whole history with a lost update (invalid
    // whatever the order) is worth the extra pass: an invalid history's
    // constraints serve only to tell its cycles (gigabytes of them on a
    // large causal store).
    let likely_cyclic = || {
        scope.part.is_none()
            && scope.keys.is_none()
            && scope.fixed.is_none()
            && !crate::check::basic::lost_update_groups(h).is_empty()
    };
    if what == Build::KnownOnly {
        add_keys(&mut g, false);
        return g;
    }
    if what == Build::UnlessKnownCycle && (dep.is_none() || likely_cyclic()) {
        // Nothing but the reads orders a key's writers, so nearly every
        // pair would be a constraint. When the known edges alone close a
        // cycle, none is needed: the cycle is the verdict, and pruning
        // would find it before looking at any (a plain lost update at
        // serializability: 587k constraints, 1.2 s, saved). With a guessed
        // order (`scope.fixed`) such a cycle likewise ends the attempt.
        let mut known = g.clone();
        add_keys(&mut known, false);
        if known.cut || known.too_big || known_cyclic(&known, variant) {
            return known;
        }
    }
    add_keys(&mut g, true);
    if rules.merge {
        merge_pairs(&mut g.constraints);
    }
    g
}

/// Makes the constraints of one writer pair (one per key they both write)
/// one, in the order of each pair's first, its sides' edges in the order
/// they came: a sort of the pairs rather than a map from pair to
/// constraint while building (general-rw at serializability, 540k
/// constraints: the map's probes were a fifth of the check).
fn merge_pairs(cs: &mut Vec<Constraint>) {
    let mut ids: Vec<(u64, u32)> = cs
        .iter()
        .enumerate()
        .map(|(i, c)| ((u64::from(c.a) << 32) | u64::from(c.c), i as u32))
        .collect();
    ids.sort_unstable();
    if ids.windows(2).all(|w| w[0].0 != w[1].0) {
        return;
    }
    let mut keep = vec![true; cs.len()];
    for run in ids.chunk_by(|p, q| p.0 == q.0) {
        let first = run[0].1 as usize;
        for &(_, j) in &run[1..] {
            let j = j as usize;
            keep[j] = false;
            let later = std::mem::take(&mut cs[j]);
            let con = &mut cs[first];
            con.either.extend_from_slice(&later.either);
            con.or.extend_from_slice(&later.or);
            con.either_if.extend_from_slice(&later.either_if);
            con.or_if.extend_from_slice(&later.or_if);
        }
    }
    let mut i = 0;
    cs.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A causal-store history whose writes of each key race across
    /// sessions, so that writers are both ordered and concurrent.
    fn racing(seed: u64) -> History {
        use crate::generator::{Db, GenOptions};
        super::super::tests::generated(&GenOptions {
            sessions: 6,
            txns_per_session: 40,
            ops_per_txn: 4,
            keys: 4,
            workload: Workload::RwRegister,
            db: Db::Causal,
            seed,
            ..GenOptions::default()
        })
    }

    #[test]
    fn a_stale_read_widens_one_run_and_the_rest_keep_their_band() {
        // T0 reads key 1 initial; T1..T5 write it, each in its own
        // session; T6 reads T1's version after all of them (stale).
        let h = super::super::tests::load_text(
            "r(1,0,0,10)\nw(1,1,1,11)\nw(1,2,2,12)\nw(1,3,3,13)\nw(1,4,4,14)\nw(1,5,5,15)\n\
             r(1,1,6,16)\n",
        );
        assert_eq!(h.txns.len(), 7);
        let when: Vec<u64> = (0..7).collect();
        let near = [1u64];
        let (t, x) = (|i: u32| i as TxnId, 0 as KeyId);
        let build = |stale: &[(KeyId, TxnId, u64)]| {
            let scope = Scope {
                fixed: Some(Fixed {
                    when: &when,
                    near: &near,
                    stale,
                }),
                ..Scope::WHOLE
            };
            let g = build_in(&h, super::super::tests::PLAIN_SER, Budget::NONE, scope);
            let known = |kind: EdgeKind| {
                let mut es: Vec<(TxnId, TxnId)> = g
                    .known
                    .iter()
                    .map(|&e| g.edges[e as usize])
                    .filter(|e| e.kind == kind)
                    .map(|e| (e.a, e.b))
                    .collect();
                es.sort_unstable();
                es.dedup();
                es
            };
            (
                known(EdgeKind::Ww),
                known(EdgeKind::Rw),
                g.constraints.len(),
            )
        };
        // A band of one place: each writer open with the next, kept before
        // the rest (edges to the two after that: T1 < T3, T4; T2 < T4, T5;
        // T3 < T5); the initial reader before T1 and T2, either of which
        // may come first.
        let (ww, rw, open) = build(&[]);
        let band = [(1, 3), (1, 4), (2, 4), (2, 5), (3, 5)];
        assert_eq!(ww, band.map(|(a, b)| (t(a), t(b))));
        assert!(rw.contains(&(t(0), t(1))) && rw.contains(&(t(0), t(2))));
        assert!(!rw.contains(&(t(0), t(3))));
        assert_eq!(open, 4);
        // T6's stale read leaves T1 open with every writer before it: T1
        // keeps no order, the others keep theirs; T3, open with T1 and
        // T2, may come first too, T4 not (kept after T2).
        let (ww, rw, open) = build(&[(x, t(1), 6)]);
        assert_eq!(ww, [(2, 4), (2, 5), (3, 5)].map(|(a, b)| (t(a), t(b))));
        let firsts: Vec<TxnId> = rw.iter().filter(|e| e.0 == t(0)).map(|e| e.1).collect();
        assert_eq!(firsts, vec![t(1), t(2), t(3)]);
        assert_eq!(open, 4 + 3);
    }

    #[test]
    fn split_finds_each_writers_nearest_successors_and_every_concurrent_pair() {
        let (mut ordered, mut concurrent_seen) = (0, 0);
        for seed in 0..6 {
            let h = racing(seed);
            let inc = included(&h);
            let mut edges = so_edges(&h, &inc);
            edges.extend(crate::check::deps::wr_edges(&h, &inc));
            let dc = DepClock::from_edges(&h, &inc, &edges).expect("acyclic");
            let writes = final_writes(&h, &inc, None);
            let mut s = SplitScratch::default();
            for x in 0..writes.keys() as KeyId {
                let mut ws = writes.get(x).to_vec();
                let mut r = super::super::tests::Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
                for order in 0..3 {
                    // Out of session order, reversed or shuffled: each
                    // session's search starts afresh where its order breaks.
                    match order {
                        1 => ws.reverse(),
                        2 => {
                            for i in (1..ws.len()).rev() {
                                ws.swap(i, r.next(i as u64 + 1) as usize);
                            }
                        }
                        _ => {}
                    }
                    let t = |i: usize| ws[i].0;
                    // By brute force: the writers `a` reaches that no other
                    // writer it reaches does, and the pairs neither reaches.
                    let mut next_bf = Vec::new();
                    let mut conc_bf = Vec::new();
                    for i in 0..ws.len() {
                        let reached: Vec<usize> = (0..ws.len())
                            .filter(|&j| t(j) != t(i) && dc.reaches(t(i), t(j)))
                            .collect();
                        for &j in &reached {
                            if reached.iter().all(|&k| k == j || !dc.reaches(t(k), t(j))) {
                                next_bf.push((i, j));
                            }
                        }
                        for j in 0..ws.len() {
                            if t(i) < t(j) && !dc.reaches(t(i), t(j)) && !dc.reaches(t(j), t(i)) {
                                conc_bf.push((i, j));
                            }
                        }
                    }
                    let mut conc = Vec::new();
                    let (next, count) = dc.split(&ws, &mut s, &mut conc, true);
                    let mut next = next.to_vec();
                    assert!(next.windows(2).all(|p| p[0].0 <= p[1].0), "by writer");
                    next.sort_unstable();
                    next_bf.sort_unstable();
                    assert_eq!(next, next_bf, "seed {seed}, key {x}");
                    assert_eq!(count, conc.len());
                    assert!(conc.windows(2).all(|p| p[0].0 <= p[1].0), "by writer");
                    conc.sort_unstable();
                    assert_eq!(conc, conc_bf, "seed {seed}, key {x}");
                    let (alone, _) = dc.split(&ws, &mut s, &mut Vec::new(), false);
                    let mut alone = alone.to_vec();
                    alone.sort_unstable();
                    assert_eq!(alone, next, "without the concurrent pairs");
                    ordered += next.len();
                    concurrent_seen += conc.len();
                }
            }
        }
        // The histories must exercise both.
        assert!(
            ordered > 100 && concurrent_seen > 100,
            "{ordered} {concurrent_seen}"
        );
    }

    #[test]
    fn gallop_ends_the_prefix_wherever_it_starts() {
        for len in 0..40 {
            let list: Vec<usize> = (0..len).collect();
            for end in 0..=len {
                for from in 0..=end {
                    assert_eq!(gallop(&list, from, |j| j < end), end, "{len} {end} {from}");
                }
            }
        }
    }
}
