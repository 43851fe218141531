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

use rustc_hash::FxHashSet;

use crate::anomaly::{Anomaly, Datum, On, Path, Step};
use crate::check::clocks::{TreeClock, Vectors};
use crate::check::deps::{external_source, included, outside_from, so_edges, wr_edges};
use crate::check::graph::{Digraph, sccs, shortest_path};
use crate::explain::cycle::{self, Rel};
use crate::history::model::*;

/// The causal-family levels, weakest first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Biswas & Enea's read committed (C4's `read-committed-c4`): reads
    /// see committed writes, and a transaction never reads a write older
    /// than one it has already seen.
    ReadCommitted,
    /// Read atomic: a transaction sees all of another's writes or none.
    ReadAtomic,
    /// Causal consistency (Cerone's causal: transitive visibility).
    Causal,
}

impl Level {
    /// The lattice anomaly a derived-order cycle found at this level rules
    /// out models by.
    fn marker(self) -> &'static str {
        match self {
            Level::ReadCommitted => "non-mono-read-ao",
            Level::ReadAtomic => "fractured-read-ao",
            Level::Causal => "conflict-ao",
        }
    }

    /// The same, for a finding that needs session order (see
    /// `spec::AnomalyType::is_session`): it rules out only the models that
    /// keep sessions.
    fn session_marker(self) -> &'static str {
        match self {
            Level::ReadCommitted => "non-mono-read-process",
            Level::ReadAtomic => "fractured-read-process",
            Level::Causal => "conflict-process",
        }
    }
}

/// How causal-order reachability is computed (for benchmarks; the results
/// are the same).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Clocks {
    /// One vector clock per transaction.
    #[default]
    Vectors,
    /// Tree clocks (Mathur et al.): joins proportional to what changes.
    TreeClocks,
    /// No clocks: a graph search per question.
    Search,
}

/// Counts for benchmarks.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Transactions in the graph.
    pub nodes: usize,
    /// Write-read edges.
    pub wr_edges: usize,
    /// Edges the level's rules derived (arbitration, causal order).
    pub derived_edges: usize,
    /// Clock joins made.
    pub clock_joins: usize,
    /// The deadline came first: the anomalies found hold (each is a cycle
    /// of the level's graph), but others may be missing.
    pub timed_out: bool,
}

const INIT: u32 = u32::MAX;
/// Widest window of session positions scanned rather than searched.
const WINDOW_SCAN: u32 = 8;
/// Most instances that get a full path in their report.
const MAX_PATHS: usize = 1000;

/// Reachability in CO.
enum Reach {
    Vectors(Vectors),
    Trees(Vec<TreeClock>),
    Search(Digraph),
}

struct Ctx<'a> {
    h: &'a History,
    included: Vec<bool>,
    /// Session and 1-based position of each transaction.
    sess: Vec<u32>,
    pos: Vec<u32>,
    reach: Reach,
    /// Writers of each key per session: (position, txn), sorted.
    /// Per key, its writers as (session, position, txn), sorted; the
    /// key's slice is `writers[writer_at[k]..writer_at[k + 1]]`.
    writers: Vec<(u32, u32, TxnId)>,
    writer_at: Vec<u32>,
    /// Where each session's run starts in each key's slice:
    /// `run_at[k * (S + 1) + s]`, when keys x sessions is small enough.
    run_at: Option<Vec<u32>>,
    /// The keys each transaction writes (included ones only):
    /// `wkeys[wkeys_at[t]..wkeys_at[t + 1]]`.
    wkeys: Vec<KeyId>,
    wkeys_at: Vec<u32>,
    co: Digraph,
    /// Components of CO when it is cyclic (CyclicCO).
    co_comp: Option<Vec<u32>>,
    /// Session order is part of CO.
    sessions: bool,
    /// When to stop deriving and telling (what was found stands).
    deadline: Option<std::time::Instant>,
    /// The deadline stopped the check.
    cut: std::cell::Cell<bool>,
    /// Which micro-ops of the reader last asked about read from whom.
    spans: std::cell::RefCell<Spans>,
}

impl Ctx<'_> {
    /// Whether the deadline has passed (and the check is cut short).
    fn expired(&self) -> bool {
        let e = self.deadline.is_some_and(|d| std::time::Instant::now() > d);
        if e {
            self.cut.set(true);
        }
        e
    }

    fn has_clocks(&self) -> bool {
        !matches!(self.reach, Reach::Search(_))
    }

    /// `a ->CO* b` (reflexive).
    fn co(&self, a: TxnId, b: TxnId) -> bool {
        if a == b {
            return true;
        }
        if let Some(c) = &self.co_comp
            && c[a as usize] == c[b as usize]
        {
            return true;
        }
        let (sa, pa) = (self.sess[a as usize], self.pos[a as usize]);
        match &self.reach {
            Reach::Vectors(v) => v.get(b, sa) >= pa,
            Reach::Trees(t) => t[b as usize].get(sa) >= pa,
            Reach::Search(g) => shortest_path(g, a, b, |_| true).is_some(),
        }
    }

    fn clock(&self, t: TxnId, s: u32) -> u32 {
        match &self.reach {
            Reach::Vectors(v) => v.get(t, s),
            Reach::Trees(tc) => tc[t as usize].get(s),
            Reach::Search(_) => {
                // Highest position of session s that reaches t.
                let txns = &self.h.sessions[s as usize].txns;
                txns.iter()
                    .rev()
                    .find(|&&u| self.included[u as usize] && self.co(u, t))
                    .map_or(0, |&u| self.pos[u as usize])
            }
        }
    }

    fn key_writers(&self, x: KeyId) -> &[(u32, u32, TxnId)] {
        let (a, b) = (self.writer_at[x as usize], self.writer_at[x as usize + 1]);
        &self.writers[a as usize..b as usize]
    }

    /// The last writer of `x` in session `s` at a position below `limit`.
    fn last_writer_below(&self, x: KeyId, s: u32, limit: u32) -> Option<TxnId> {
        if let Some(run_at) = &self.run_at {
            // Search only the session's run: a few entries, a cache line.
            let base = x as usize * (self.h.sessions.len() + 1) + s as usize;
            let run = &self.writers[run_at[base] as usize..run_at[base + 1] as usize];
            let i = run.partition_point(|&(_, p, _)| p < limit);
            return (i > 0).then(|| run[i - 1].2);
        }
        let w = self.key_writers(x);
        let i = w.partition_point(|&(ws, p, _)| (ws, p) < (s, limit));
        (i > 0 && w[i - 1].0 == s).then(|| w[i - 1].2)
    }

    /// Both clock rows, when clocks are vectors.
    fn rows(&self, a: TxnId, b: TxnId) -> Option<(&[u32], &[u32])> {
        match &self.reach {
            Reach::Vectors(v) => Some((v.row(a), v.row(b))),
            _ => None,
        }
    }

    /// A transaction's clock, one entry per session, when there are clocks.
    fn row(&self, t: TxnId) -> Option<&[u32]> {
        match &self.reach {
            Reach::Vectors(v) => Some(v.row(t)),
            Reach::Trees(tc) => Some(tc[t as usize].entries()),
            Reach::Search(_) => None,
        }
    }

    fn writes_of(&self, t: TxnId) -> &[KeyId] {
        let (a, b) = (self.wkeys_at[t as usize], self.wkeys_at[t as usize + 1]);
        &self.wkeys[a as usize..b as usize]
    }
}

/// A derived edge `t2 -> t1` and the read that forced it.
#[derive(Copy, Clone)]
struct Triangle {
    t1: u32,
    t2: TxnId,
    read: MopId,
}

/// Checks a history at one level; returns the graph-level anomalies.
///
/// `sessions`: whether session order is part of causal order. Cerone's
/// read atomic and causal consistency include it; read committed comes in
/// both kinds (Elle's `read-committed` without, `strong-session-read-
/// committed` with), and C4's read committed is the latter.
///
/// Past `deadline` it stops deriving edges and telling paths: every
/// anomaly it reports then is still a cycle of the level's graph (a cycle
/// among some of its edges), and `Stats::timed_out` says others may be
/// missing.
pub fn check(
    h: &History,
    level: Level,
    sessions: bool,
    clocks: Clocks,
    deadline: Option<std::time::Instant>,
) -> (Vec<Anomaly>, Stats) {
    let mut stats = Stats::default();
    let n = h.txns.len();
    // Without session order, sessions are no chains and clocks do not
    // apply; read committed needs causal order only to name instances.
    let clocks = if sessions { clocks } else { Clocks::Search };
    let mut ctx = build(h, clocks, sessions, &mut stats);
    ctx.deadline = deadline;
    let mut out = Vec::new();
    if let Some(comp) = &ctx.co_comp {
        cyclic_co(&ctx, comp, &mut out);
    }

    // Derived edges.
    let mut triangles: Vec<Triangle> = Vec::new();
    derive(&ctx, level, false, |tri, redundant| {
        if !redundant {
            triangles.push(tri)
        }
    });
    stats.derived_edges = triangles.len();

    // The level's graph: SO ∪ WR ∪ WW ∪ derived.
    let mut edges = co_edges(&ctx);
    let ww = ww_edges(h, &ctx.included);
    edges.extend(ww.iter().copied());
    edges.extend(
        triangles
            .iter()
            .filter(|t| t.t1 != INIT)
            .map(|t| (t.t2, t.t1)),
    );
    let g = Digraph::from_edges(n, &edges);
    let comps = sccs(&g);
    // Write cycles are G0 whatever the level (Elle's read uncommitted):
    // name them so before the patterns they also form.
    let mut explained: FxHashSet<u32> = FxHashSet::default();
    if !ww.is_empty() {
        let wwg = Digraph::from_edges(n, &ww);
        let wc = sccs(&wwg);
        let ww_set: FxHashSet<(u32, u32)> = ww.iter().copied().collect();
        for c in wc.cyclic(&wwg) {
            if let Some(a) = ww_cycle(&ctx, &wwg, &wc.comp, c, &ww_set) {
                if let Some(&t) = a.txns.first() {
                    explained.insert(comps.comp[t as usize]);
                }
                out.push(a);
            }
        }
    }
    let mut reported: Vec<Triangle> = Vec::new();
    for tri in &triangles {
        let cyclic = tri.t1 == INIT || comps.comp[tri.t1 as usize] == comps.comp[tri.t2 as usize];
        if !cyclic {
            continue;
        }
        if tri.t1 != INIT {
            explained.insert(comps.comp[tri.t1 as usize]);
        }
        reported.push(*tri);
    }
    // Edges causal order already implies add nothing to the graph, but one
    // on a cycle is an instance too (C4 reports it): look for them only
    // when there are cycles.
    if !explained.is_empty() {
        derive(&ctx, level, true, |tri, redundant| {
            if redundant
                && tri.t1 != INIT
                && comps.comp[tri.t1 as usize] == comps.comp[tri.t2 as usize]
            {
                reported.push(tri);
            }
        });
    }
    let free = if ctx.sessions && !reported.is_empty() {
        sessionless(&ctx, level, &ww, &reported)
    } else {
        vec![true; reported.len()]
    };
    for (i, tri) in reported.iter().enumerate() {
        let with_path = i < MAX_PATHS && !ctx.expired();
        out.push(instance(
            &ctx,
            &g,
            &comps.comp,
            level,
            tri,
            free[i],
            with_path,
        ));
    }
    // Cycles with no derived edge in them: the write order the lists reveal
    // contradicts causal order (e.g. a session's appends read backwards).
    let ww_set: FxHashSet<(u32, u32)> = ww.into_iter().collect();
    for c in comps.cyclic(&g) {
        if explained.contains(&c)
            || ctx
                .co_comp
                .as_ref()
                .is_some_and(|cc| is_co_cycle(&ctx, cc, &comps.comp, c))
        {
            continue;
        }
        if ctx.expired() {
            break;
        }
        if let Some(a) = ww_cycle(&ctx, &g, &comps.comp, c, &ww_set) {
            out.push(a);
        }
    }
    stats.timed_out = ctx.cut.get();
    (out, stats)
}

/// Enumerates the derived edges of a level: for each external read `r` of
/// `x` in `t3` from `t1` (or the initial state), the writers `t2` of `x`
/// that `r` must have seen, taking only the last such writer per session
/// (earlier ones precede it in session order, so their edges follow). An
/// edge is redundant when `t2` already precedes `t1` in causal order; with
/// `redundant_too` those are looked for as well (for reporting), otherwise
/// causal-level enumeration skips what `t1` already knows.
fn derive(ctx: &Ctx, level: Level, redundant_too: bool, mut emit: impl FnMut(Triangle, bool)) {
    if level == Level::Causal && ctx.has_clocks() && !ctx.h.sessions.is_empty() {
        derive_causal(ctx, redundant_too, &mut emit);
        return;
    }
    derive_search(ctx, level, redundant_too, emit);
}

/// The reads from outside the transaction `derive` answers, in order (see
/// `deps::outside_from`: a list read after the reader's own appends counts
/// by what it shows before them): the micro-op and the transaction it read
/// from (`INIT` for the initial state).
fn external_reads<'a>(ctx: &'a Ctx<'a>, t3: TxnId) -> impl Iterator<Item = (MopId, u32)> + 'a {
    let h = ctx.h;
    h.txns[t3 as usize].mops().filter_map(move |i| {
        let t1 = match outside_from(h, i)? {
            from::INITIAL => INIT,
            w if w < from::THIN_AIR => {
                let t1 = h.txn_of(w);
                if t1 == t3 || !ctx.included[t1 as usize] {
                    return None;
                }
                t1
            }
            _ => return None,
        };
        Some((i as MopId, t1))
    })
}

/// Causal derived edges, one session of readers at a time. Walking a
/// session, the clock of its transactions only grows, so the last writer
/// of each key read in each session that the current reader knows (its
/// frontier) is kept up to date by replaying each newly known transaction's
/// writes once, instead of being searched for per read and session. A
/// read of `x` from `t1` then takes, from each session, the frontier
/// writer of `x` that `t1` does not know: one pass over two rows. Edges
/// come out in the order of `derive_search` (by reader, then read, then
/// writer); without `redundant_too`, redundant ones are left out.
fn derive_causal(ctx: &Ctx, redundant_too: bool, emit: &mut impl FnMut(Triangle, bool)) {
    let h = ctx.h;
    let k = h.sessions.len();
    let zeros = vec![0u32; k];
    // Per key, its row in the frontier table while a session is walked.
    let mut slot = vec![u32::MAX; h.keys.len()];
    let mut slot_keys: Vec<KeyId> = Vec::new();
    let mut frontier: Vec<u32> = Vec::new();
    // How far each session has been replayed.
    let mut cur = vec![0u32; k];
    let mut cands: Vec<TxnId> = Vec::new();
    // Edges by reader, gathered into reader order at the end.
    let mut found: Vec<(Triangle, bool)> = Vec::new();
    let mut at = vec![(0u32, 0u32); h.txns.len()];
    let reader =
        |t: TxnId| ctx.included[t as usize] && h.txns[t as usize].status == Status::Committed;
    for (sigma, session) in h.sessions.iter().enumerate() {
        // The keys this session reads get frontier rows.
        slot_keys.clear();
        for &t3 in &session.txns {
            if !reader(t3) {
                continue;
            }
            // (A superset of the reads `external_reads` gives is fine.)
            for m in h.txn_mops(t3) {
                if m.is_read() && slot[m.key as usize] == u32::MAX {
                    slot[m.key as usize] = slot_keys.len() as u32;
                    slot_keys.push(m.key);
                }
            }
        }
        frontier.clear();
        frontier.resize(slot_keys.len() * k, 0);
        cur.fill(0);
        for &t3 in &session.txns {
            if !reader(t3) {
                continue;
            }
            if ctx.expired() {
                break;
            }
            let r3 = ctx.row(t3).unwrap_or(&zeros);
            // Replay what t3 knows and its predecessor did not: in its own
            // session, the positions before it; elsewhere, its clock.
            for (s, &c) in r3.iter().enumerate() {
                let target = if s == sigma {
                    ctx.pos[t3 as usize] - 1
                } else {
                    c
                };
                let txns = &h.sessions[s].txns;
                while cur[s] < target {
                    let u = txns[cur[s] as usize];
                    cur[s] += 1;
                    for &x in ctx.writes_of(u) {
                        let r = slot[x as usize];
                        if r != u32::MAX {
                            frontier[r as usize * k + s] = cur[s];
                        }
                    }
                }
            }
            let start = found.len() as u32;
            for (i, t1) in external_reads(ctx, t3) {
                let x = h.mops[i as usize].key;
                let r = slot[x as usize] as usize;
                let f = &frontier[r * k..(r + 1) * k];
                let known = if t1 == INIT || redundant_too {
                    &zeros[..]
                } else {
                    ctx.row(t1).unwrap_or(&zeros)
                };
                cands.clear();
                for (s, (&p, &kn)) in f.iter().zip(known).enumerate() {
                    if p > kn {
                        cands.push(h.sessions[s].txns[p as usize - 1]);
                    }
                }
                cands.sort_unstable();
                for &t2 in &cands {
                    if t2 == t3 || t2 == t1 {
                        continue;
                    }
                    let redundant = t1 != INIT && ctx.co(t2, t1);
                    if redundant && !redundant_too {
                        continue;
                    }
                    found.push((Triangle { t1, t2, read: i }, redundant));
                }
            }
            at[t3 as usize] = (start, found.len() as u32 - start);
        }
        for &x in &slot_keys {
            slot[x as usize] = u32::MAX;
        }
    }
    for &(a, n) in &at {
        for &(tri, redundant) in &found[a as usize..(a + n) as usize] {
            emit(tri, redundant);
        }
    }
}

/// `derive` by searching each session's writers of the key per read.
///
/// At read committed and read atomic the writers a read must have seen
/// are among the transactions its own transaction read from (earlier
/// reads, or any); those are indexed once per reader by the keys it reads
/// (`Buckets`), so a reader costs its micro-ops plus what its sources
/// write, not its reads times its sources.
fn derive_search(
    ctx: &Ctx,
    level: Level,
    redundant_too: bool,
    mut emit: impl FnMut(Triangle, bool),
) {
    let h = ctx.h;
    let mut buckets = Buckets::new(h.keys.len(), h.txns.len());
    let mut cands: Vec<TxnId> = Vec::new();
    for t3 in 0..h.txns.len() as TxnId {
        if !ctx.included[t3 as usize] || h.txns[t3 as usize].status != Status::Committed {
            continue;
        }
        if ctx.expired() {
            return;
        }
        let txn = &h.txns[t3 as usize];
        if level != Level::Causal {
            buckets.start(h, t3);
        }
        if level == Level::ReadAtomic {
            for i in txn.mops() {
                if let Some(t) = external_source(h, i, t3) {
                    buckets.add(ctx, t);
                }
            }
        }
        for (i, t1) in external_reads(ctx, t3) {
            let x = h.mops[i as usize].key;
            cands.clear();
            match level {
                Level::ReadCommitted => cands.extend_from_slice(buckets.writers(x)),
                Level::ReadAtomic => {
                    let s3 = ctx.sess[t3 as usize];
                    cands.extend(ctx.last_writer_below(x, s3, ctx.pos[t3 as usize]));
                    cands.extend_from_slice(buckets.writers(x));
                }
                Level::Causal => {
                    // Only positions t3 knows and t1 does not can hold a
                    // writer that is not redundant. The session's run of
                    // the key's writers is searched when there are runs (a
                    // few entries; scanning even a short window of wide
                    // transactions costs their every micro-op); else short
                    // windows are scanned and long ones searched in the
                    // key's writers.
                    let rows = if t1 == INIT || redundant_too {
                        None
                    } else {
                        ctx.rows(t3, t1)
                    };
                    for s in 0..h.sessions.len() as u32 {
                        let limit = if s == ctx.sess[t3 as usize] {
                            ctx.pos[t3 as usize]
                        } else {
                            ctx.clock(t3, s) + 1
                        };
                        let known = rows.map_or(0, |(_, r1)| r1[s as usize]);
                        if limit <= known + 1 {
                            continue;
                        }
                        if ctx.run_at.is_none() && limit - known <= WINDOW_SCAN {
                            let txns = &h.sessions[s as usize].txns;
                            let found = (known + 1..limit)
                                .rev()
                                .map(|p| txns[p as usize - 1])
                                .find(|&t| {
                                    ctx.included[t as usize]
                                        && h.txn_mops(t).iter().any(|m| m.is_write() && m.key == x)
                                });
                            cands.extend(found);
                        } else {
                            cands.extend(ctx.last_writer_below(x, s, limit));
                        }
                    }
                }
            }
            cands.sort_unstable();
            cands.dedup();
            for &t2 in &cands {
                if t2 == t3 || t2 == t1 {
                    continue;
                }
                // (Without clocks the question costs a search; an edge kept
                // needlessly changes nothing.)
                let redundant = t1 != INIT && ctx.has_clocks() && ctx.co(t2, t1);
                emit(Triangle { t1, t2, read: i }, redundant);
            }
            if level == Level::ReadCommitted && t1 != INIT {
                buckets.add(ctx, t1);
            }
        }
        if level != Level::Causal {
            buckets.finish(h, t3);
        }
    }
}

/// For one reader at a time: per key it reads, the transactions it read
/// from that write the key, each once, in the order they were added.
struct Buckets {
    /// Per key, its bucket while the reader reads it (else `NONE`).
    slot: Vec<u32>,
    lists: Vec<Vec<TxnId>>,
    /// `added[t] == stamp`: `t` is in the buckets of the current reader.
    added: Vec<u32>,
    stamp: u32,
}

impl Buckets {
    const NONE: u32 = u32::MAX;

    fn new(keys: usize, txns: usize) -> Buckets {
        Buckets {
            slot: vec![Self::NONE; keys],
            lists: Vec::new(),
            added: vec![0; txns],
            stamp: 0,
        }
    }

    /// Opens a bucket for each key `t3` reads.
    fn start(&mut self, h: &History, t3: TxnId) {
        self.stamp += 1;
        let mut used = 0;
        for m in h.txn_mops(t3) {
            if m.is_read() && self.slot[m.key as usize] == Self::NONE {
                self.slot[m.key as usize] = used as u32;
                if used == self.lists.len() {
                    self.lists.push(Vec::new());
                }
                self.lists[used].clear();
                used += 1;
            }
        }
    }

    /// Files `t` under each key it writes that the reader reads (once).
    fn add(&mut self, ctx: &Ctx, t: TxnId) {
        if std::mem::replace(&mut self.added[t as usize], self.stamp) == self.stamp {
            return;
        }
        for &x in ctx.writes_of(t) {
            let b = self.slot[x as usize];
            if b != Self::NONE {
                self.lists[b as usize].push(t);
            }
        }
    }

    fn writers(&self, x: KeyId) -> &[TxnId] {
        match self.slot[x as usize] {
            Self::NONE => &[],
            b => &self.lists[b as usize],
        }
    }

    fn finish(&mut self, h: &History, t3: TxnId) {
        for m in h.txn_mops(t3) {
            self.slot[m.key as usize] = Self::NONE;
        }
    }
}

fn co_edges(ctx: &Ctx) -> Vec<(u32, u32)> {
    let mut e = Vec::with_capacity(ctx.co.edge_count());
    for a in 0..ctx.co.len() as u32 {
        for &b in ctx.co.out(a) {
            e.push((a, b));
        }
    }
    e
}

/// Write-write edges the list-append version orders reveal. Along the
/// observed prefix (the longest read) consecutive writers are ordered. An
/// append no read observed still follows every observed element (a list
/// read shows all appends ordered before its last element, and no read
/// shows this one), so the last observed writer precedes each unread
/// append's writer; the unread appends' order among themselves is
/// unknown, so none is claimed. On keys whose reads disagree (an
/// incompatible order, reported as such) only the longest read's order is
/// taken, as Elle does.
fn ww_edges(h: &History, inc: &[bool]) -> Vec<(u32, u32)> {
    let mut e = Vec::new();
    let incompatible = incompatible_keys(h);
    for (k, o) in h.orders.iter().enumerate() {
        let mut prev: Option<TxnId> = None;
        let mut chain: Vec<TxnId> = Vec::new();
        for w in o.versions() {
            if w == from::THIN_AIR {
                continue;
            }
            let t = h.txn_of(w);
            if !inc[t as usize] {
                continue;
            }
            if let Some(p) = prev
                && p != t
            {
                e.push((p, t));
            }
            chain.push(t);
            prev = Some(t);
        }
        let Some(last) = prev else { continue };
        // On a key reads disagree on, the recovered order (the longest
        // read) still orders what it shows, as Elle takes it, but where
        // appends no read saw fall is anyone's guess.
        if incompatible.contains(&(k as KeyId)) {
            continue;
        }
        chain.sort_unstable();
        for &w in &o.unobserved {
            let t = h.txn_of(w);
            // A writer already placed along the prefix keeps its place: its
            // unread append says the read was intermediate, not an order.
            if inc[t as usize] && chain.binary_search(&t).is_err() {
                e.push((last, t));
            }
        }
    }
    e.sort_unstable();
    e.dedup();
    e
}

/// Keys some list read disagrees on (an incompatible order).
fn incompatible_keys(h: &History) -> FxHashSet<KeyId> {
    h.irregular
        .keys()
        .map(|&r| h.mops[r as usize].key)
        .collect()
}

fn build<'a>(h: &'a History, clocks: Clocks, sessions: bool, stats: &mut Stats) -> Ctx<'a> {
    let n = h.txns.len();
    let inc = included(h);
    let mut sess = vec![0u32; n];
    let mut pos = vec![0u32; n];
    for (t, txn) in h.txns.iter().enumerate() {
        sess[t] = txn.session;
        pos[t] = txn.seq + 1;
    }
    let mut edges = if sessions {
        so_edges(h, &inc)
    } else {
        Vec::new()
    };
    let wr = wr_edges(h, &inc);
    stats.wr_edges = wr.len();
    stats.nodes = inc.iter().filter(|&&b| b).count();
    edges.extend(wr);
    let co = Digraph::from_edges(n, &edges);
    let comps = sccs(&co);
    let cyclic = comps.sizes.iter().any(|&s| s > 1);
    let k = h.sessions.len();
    let rev = co.reversed();
    let members = comps.members();
    // Components come successors first: walk them backwards.
    let reach = match clocks {
        Clocks::Vectors => {
            let mut v = Vectors::new(n, k);
            for c in (0..comps.count()).rev() {
                let ms = &members[c];
                let head = ms[0];
                for &t in ms {
                    if !inc[t as usize] {
                        continue;
                    }
                    for &p in rev.out(t) {
                        if comps.comp[p as usize] as usize != c {
                            v.join(head, p);
                            stats.clock_joins += 1;
                        }
                    }
                    v.raise(head, sess[t as usize], pos[t as usize]);
                }
                for &t in &ms[1..] {
                    v.join(t, head);
                }
            }
            Reach::Vectors(v)
        }
        Clocks::TreeClocks => {
            let mut trees: Vec<TreeClock> = sess.iter().map(|&s| TreeClock::new(k, s)).collect();
            for c in (0..comps.count()).rev() {
                let ms = &members[c];
                let head = ms[0] as usize;
                // Start from the session predecessor's clock when there is
                // one: the latest of the head's session that the component
                // reads from or follows (it knows every earlier one). Any
                // other clock rooted there is taken as known once the root
                // is raised, so starting from an earlier one (a read from
                // further back in the session) would lose what the
                // predecessor knows.
                let so_pred = ms
                    .iter()
                    .flat_map(|&t| rev.out(t).iter().copied())
                    .filter(|&p| {
                        sess[p as usize] == sess[head] && comps.comp[p as usize] as usize != c
                    })
                    .max_by_key(|&p| pos[p as usize]);
                if let Some(p) = so_pred {
                    trees[head] = trees[p as usize].clone();
                }
                for &t in ms {
                    if inc[t as usize] && sess[t as usize] == sess[head] {
                        trees[head].set_root(pos[t as usize]);
                    }
                }
                for &t in ms {
                    if !inc[t as usize] {
                        continue;
                    }
                    for &p in rev.out(t) {
                        if comps.comp[p as usize] as usize != c && Some(p) != so_pred {
                            let src =
                                std::mem::replace(&mut trees[p as usize], TreeClock::new(0, 0));
                            stats.clock_joins += trees[head].join(&src);
                            trees[p as usize] = src;
                        }
                    }
                }
                if ms.len() > 1 {
                    // A cycle: every member knows what any member knows.
                    let mut all = trees[head].clone();
                    for &t in ms {
                        let mut own = TreeClock::new(k, sess[t as usize]);
                        own.set_root(pos[t as usize]);
                        all.join(&own);
                    }
                    for &t in ms {
                        let mut tc = TreeClock::new(k, sess[t as usize]);
                        tc.set_root(pos[t as usize]);
                        tc.join(&all);
                        trees[t as usize] = tc;
                    }
                }
            }
            Reach::Trees(trees)
        }
        Clocks::Search => Reach::Search(co.clone()),
    };
    // Writers grouped by key (a counting sort), then sorted per key.
    let keys = h.keys.len();
    let mut writer_at = vec![0u32; keys + 1];
    for m in &h.mops {
        if m.is_write() && inc[m.txn as usize] {
            writer_at[m.key as usize + 1] += 1;
        }
    }
    for k in 0..keys {
        writer_at[k + 1] += writer_at[k];
    }
    let mut fill = writer_at.clone();
    let mut writers = vec![(0u32, 0u32, 0u32); writer_at[keys] as usize];
    for m in &h.mops {
        if m.is_write() && inc[m.txn as usize] {
            let t = m.txn as usize;
            writers[fill[m.key as usize] as usize] = (sess[t], pos[t], m.txn);
            fill[m.key as usize] += 1;
        }
    }
    // Dedup within each key's run (a transaction writing a key twice).
    let mut compact = Vec::with_capacity(writers.len());
    let mut at = vec![0u32; keys + 1];
    for k in 0..keys {
        let run = &mut writers[writer_at[k] as usize..writer_at[k + 1] as usize];
        run.sort_unstable();
        let start = compact.len();
        for &w in run.iter() {
            if compact.len() == start || compact.last() != Some(&w) {
                compact.push(w);
            }
        }
        at[k + 1] = compact.len() as u32;
    }
    let (writers, writer_at) = (compact, at);
    // The keys each included transaction writes, once each.
    let mut wkeys_at = vec![0u32; n + 1];
    let mut wkeys: Vec<KeyId> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if inc[t] {
            let start = wkeys.len();
            for m in &h.mops[txn.mops()] {
                if m.is_write() && !wkeys[start..].contains(&m.key) {
                    wkeys.push(m.key);
                }
            }
        }
        wkeys_at[t + 1] = wkeys.len() as u32;
    }
    let k_sess = h.sessions.len() + 1;
    let run_at = (keys.saturating_mul(k_sess) <= 1 << 24).then(|| {
        let mut run_at = vec![0u32; keys * k_sess];
        for k in 0..keys {
            let (a, b) = (writer_at[k] as usize, writer_at[k + 1] as usize);
            let slice = &writers[a..b];
            for s in 0..k_sess {
                run_at[k * k_sess + s] = (a + slice.partition_point(|w| (w.0 as usize) < s)) as u32;
            }
        }
        run_at
    });
    Ctx {
        h,
        included: inc,
        sess,
        pos,
        reach,
        writers,
        writer_at,
        run_at,
        wkeys,
        wkeys_at,
        co,
        co_comp: cyclic.then_some(comps.comp),
        sessions,
        deadline: None,
        cut: std::cell::Cell::new(false),
        spans: std::cell::RefCell::new(Spans::default()),
    }
}

fn is_co_cycle(ctx: &Ctx, co_comp: &[u32], g_comp: &[u32], c: u32) -> bool {
    // A component of the level graph that holds a CO cycle is reported as
    // CyclicCO already.
    let mut first: Option<u32> = None;
    for (t, &gc) in g_comp.iter().enumerate() {
        if gc != c {
            continue;
        }
        match first {
            None => first = Some(co_comp[t]),
            Some(f) if f == co_comp[t] => return ctx.h.txns.len() > 1,
            _ => {}
        }
    }
    false
}

// ---- reporting ----

fn step(ctx: &Ctx, a: TxnId, b: TxnId, ww: Option<&FxHashSet<(u32, u32)>>) -> Step {
    let h = ctx.h;
    // Name the relation as Elle's list-append explainer does: ww, then wr,
    // then session order (only where session order is part of the graph).
    if ww.is_none_or(|s| s.contains(&(a, b)))
        && let Some((k, va, vb)) = ww_between(h, a, b)
    {
        return Step::new(Rel::Ww, On::Versions(k, Some(va), vb));
    }
    for i in h.txns[b as usize].mops() {
        if let Some(w) = outside_from(h, i)
            && w < from::THIN_AIR
            && h.txn_of(w) == a
        {
            return Step::new(Rel::Wr, On::Read(h.mops[i].key, h.mops[w as usize].val));
        }
    }
    if ctx.sessions
        && ctx.sess[a as usize] == ctx.sess[b as usize]
        && ctx.pos[a as usize] < ctx.pos[b as usize]
    {
        return session_step(ctx, a);
    }
    Step::new(Rel::Ao, On::Nothing)
}

/// Session order from `t` to a later transaction of its session.
fn session_step(ctx: &Ctx, t: TxnId) -> Step {
    Step::new(
        Rel::Process,
        On::Process(ctx.h.sessions[ctx.sess[t as usize] as usize].process),
    )
}

/// An Elle-named cycle anomaly through `path` (first node repeated last).
/// One through session order (G0-process, G1c-process) is a cycle of the
/// level's graph all the same: no commit order extends session order,
/// reads and the lists' write order, which every level with sessions asks
/// for. It counts as `CyclicCO` too, the finding that rules out the models
/// keeping sessions (read atomic and causal as well as strong-session read
/// committed, which Elle's name alone rules out).
fn cycle_anomaly(ctx: &Ctx, path: &[u32], ww: Option<&FxHashSet<(u32, u32)>>) -> Anomaly {
    let path = Path {
        txns: path.to_vec(),
        steps: path.windows(2).map(|w| step(ctx, w[0], w[1], ww)).collect(),
    };
    let rels = path.rels();
    let mut a = Anomaly::new(cycle::name(&rels));
    if rels.contains(&Rel::Process) {
        a = a.pattern("CyclicCO");
    }
    for &v in &path.txns[..path.txns.len() - 1] {
        a = a.txn(v);
    }
    a.cycle(path)
}

/// A key on which `a`'s append directly precedes `b`'s in a version order,
/// or on which `a` wrote the last observed element and `b` an append no
/// read observed (see `ww_edges`).
fn ww_between(h: &History, a: TxnId, b: TxnId) -> Option<(KeyId, Val, Val)> {
    let range = h.txns[b as usize].mops();
    let start = range.start;
    for (i, m) in h.mops[range].iter().enumerate() {
        if !m.is_write() {
            continue;
        }
        let o = h.orders.get(m.key as usize)?;
        let mut prev: Option<MopId> = None;
        for w in o.versions() {
            if w == from::THIN_AIR {
                continue;
            }
            if h.txn_of(w) == b
                && let Some(p) = prev
                && h.txn_of(p) == a
            {
                return Some((m.key, h.mops[p as usize].val, h.mops[w as usize].val));
            }
            prev = Some(w);
        }
        let id = (start + i) as MopId;
        if let Some(p) = prev
            && h.txn_of(p) == a
            && o.unobserved.contains(&id)
        {
            return Some((m.key, h.mops[p as usize].val, m.val));
        }
    }
    None
}

fn path_of(ctx: &Ctx, path: &[u32]) -> Path {
    Path {
        txns: path.to_vec(),
        steps: path
            .windows(2)
            .map(|w| step(ctx, w[0], w[1], None))
            .collect(),
    }
}

fn instance(
    ctx: &Ctx,
    g: &Digraph,
    comp: &[u32],
    level: Level,
    tri: &Triangle,
    free: bool,
    with_path: bool,
) -> Anomaly {
    let h = ctx.h;
    let read = &h.mops[tri.read as usize];
    let t3 = read.txn;
    let t2 = tri.t2;
    let co_family = tri.t1 == INIT || ctx.co(tri.t1, t2);
    // How t2 is visible to t3.
    let (before, after) = ctx.spans.borrow_mut().reads_from(h, t3, t2, tri.read);
    let so = ctx.sess[t2 as usize] == ctx.sess[t3 as usize]
        && ctx.pos[t2 as usize] < ctx.pos[t3 as usize];
    let pattern = match (co_family, before, so || after) {
        (true, true, _) => "NonMonoReadCO",
        (true, false, true) => "FracturedReadCO",
        (true, false, false) => "COConflictAO",
        (false, true, _) => "NonMonoReadAO",
        (false, false, true) => "FracturedReadAO",
        (false, false, false) => "ConflictAO",
    };
    let mut a = Anomaly::new(crate::spec::anomaly::pattern_name(pattern))
        .pattern(pattern)
        .txn(t3);
    // What the instance proves. One that needs session order (in how t2 is
    // visible to t3, or in how t1 precedes t2) proves only the models that
    // keep sessions wrong, not Elle's sessionless ones: it gets a session
    // name, at the pattern's own level (CO family) or the level checked
    // (AO family, whose cycle needs that level's derived edges).
    let nominal = {
        use crate::spec::AnomalyType as A;
        match A::parse(&a.name) {
            Ok(A::NonMonoReadCo | A::NonMonoReadAo) => Level::ReadCommitted,
            Ok(A::FracturedReadCo | A::FracturedReadAo) => Level::ReadAtomic,
            _ => Level::Causal,
        }
    };
    let at = if co_family { nominal } else { level };
    if !free {
        let name = at.session_marker();
        a.name = name.to_string();
        a.rules_out = Some(name);
    } else if !co_family {
        a.rules_out = Some(level.marker());
    }
    if tri.t1 != INIT {
        a = a.txn(tri.t1);
    }
    a = a
        .txn(t2)
        .field("op", Datum::Txn(t3))
        .field("mop", Datum::Mop(tri.read))
        .field("key", Datum::Key(read.key))
        .field(
            "writer",
            if tri.t1 == INIT {
                Datum::kw("initial-state")
            } else {
                Datum::Txn(tri.t1)
            },
        )
        .field("overwriter", Datum::Txn(t2));
    if !with_path {
        return a;
    }
    // How t2 reaches t3 (visibility), and how t1 precedes t2.
    let vis = if before || after {
        Datum::Step(step(ctx, t2, t3, None))
    } else if so {
        Datum::Step(session_step(ctx, t3))
    } else {
        let p = co_path(ctx, t2, t3);
        Datum::List(
            p.windows(2)
                .map(|w| Datum::Step(step(ctx, w[0], w[1], None)))
                .collect(),
        )
    };
    a = a.field("visible", vis);
    if tri.t1 != INIT {
        let path = if co_family {
            co_path(ctx, tri.t1, t2)
        } else {
            let c = comp[tri.t1 as usize];
            shortest_path(g, tri.t1, t2, |v| comp[v as usize] == c).unwrap_or_default()
        };
        if !path.is_empty() {
            a = a.field("order", Datum::Path(path_of(ctx, &path)));
        }
    }
    a
}

/// Whether a reader read from `t2` before and after its micro-op `read`:
/// per reader, the first and last of its micro-ops that read from each
/// transaction, gathered once for the run of instances that share it.
#[derive(Default)]
struct Spans {
    t3: Option<TxnId>,
    /// (source, first micro-op, last micro-op), sorted by source.
    spans: Vec<(TxnId, MopId, MopId)>,
}

impl Spans {
    fn reads_from(&mut self, h: &History, t3: TxnId, t2: TxnId, read: MopId) -> (bool, bool) {
        if self.t3 != Some(t3) {
            self.t3 = Some(t3);
            self.spans.clear();
            for i in h.txns[t3 as usize].mops() {
                if let Some(t) = external_source(h, i, t3) {
                    self.spans.push((t, i as MopId, i as MopId));
                }
            }
            // Stable: per source, micro-ops stay in order.
            self.spans.sort_by_key(|s| s.0);
            self.spans.dedup_by(|later, first| {
                let same = later.0 == first.0;
                if same {
                    first.2 = later.2;
                }
                same
            });
        }
        let Ok(at) = self.spans.binary_search_by_key(&t2, |s| s.0) else {
            return (false, false);
        };
        let (_, first, last) = self.spans[at];
        (first < read, last >= read)
    }
}

/// Which reported instances hold without session order: those whose
/// overwriter is visible to the reader by reads alone (at causal
/// consistency, a path of reads), and whose writer precedes the
/// overwriter in the level's graph rebuilt without session order (reads,
/// the lists' write order, and the derived edges that are themselves
/// sessionless). The rebuilt graph holds part of the sessionless level's
/// edges, so "true" is proven and "false" only not proven: an instance
/// then claims less than it might, never more.
fn sessionless(ctx: &Ctx, level: Level, ww: &[(u32, u32)], tris: &[Triangle]) -> Vec<bool> {
    let h = ctx.h;
    let n = h.txns.len();
    let wr = wr_edges(h, &ctx.included);
    let wrg = Digraph::from_edges(n, &wr);
    let mut searches = 0;
    let vis: Vec<bool> = tris
        .iter()
        .map(|tri| {
            let t3 = h.txn_of(tri.read);
            let (before, after) = ctx.spans.borrow_mut().reads_from(h, t3, tri.t2, tri.read);
            match level {
                Level::ReadCommitted => before,
                Level::ReadAtomic => before || after,
                Level::Causal => {
                    before || after || {
                        // A search each: bounded, as the paths reported are.
                        searches += 1;
                        searches <= MAX_PATHS
                            && !ctx.expired()
                            && shortest_path(&wrg, tri.t2, t3, |_| true).is_some()
                    }
                }
            }
        })
        .collect();
    let mut edges = wr;
    edges.extend(ww.iter().copied());
    edges.extend(
        tris.iter()
            .zip(&vis)
            .filter(|&(t, &v)| v && t.t1 != INIT)
            .map(|(t, _)| (t.t2, t.t1)),
    );
    let g = Digraph::from_edges(n, &edges);
    let comps = sccs(&g);
    tris.iter()
        .zip(vis)
        .map(|(t, v)| v && (t.t1 == INIT || comps.comp[t.t1 as usize] == comps.comp[t.t2 as usize]))
        .collect()
}

/// A causal path from `a` to `b`, searched only through transactions
/// between them.
fn co_path(ctx: &Ctx, a: TxnId, b: TxnId) -> Vec<u32> {
    if !ctx.has_clocks() {
        return shortest_path(&ctx.co, a, b, |_| true).unwrap_or_default();
    }
    shortest_path(&ctx.co, a, b, |v| ctx.co(a, v) && ctx.co(v, b)).unwrap_or_default()
}

fn cyclic_co(ctx: &Ctx, comp: &[u32], out: &mut Vec<Anomaly>) {
    let h = ctx.h;
    let mut done: FxHashSet<u32> = FxHashSet::default();
    for (t, txn) in h.txns.iter().enumerate() {
        let t = t as TxnId;
        if !ctx.included[t as usize] || txn.status != Status::Committed {
            continue;
        }
        for i in txn.mops() {
            let Some(src) = external_source(h, i, t) else {
                continue;
            };
            let c = comp[t as usize];
            if comp[src as usize] != c || !done.insert(c) {
                continue;
            }
            // The WR edge src -> t closes a cycle: find t ->* src.
            let Some(mut path) = shortest_path(&ctx.co, t, src, |v| comp[v as usize] == c) else {
                continue;
            };
            path.push(t);
            // Causal order has no write-write edges: name by wr and process.
            let empty = FxHashSet::default();
            out.push(cycle_anomaly(ctx, &path, Some(&empty)).pattern("CyclicCO"));
        }
    }
}

fn ww_cycle(
    ctx: &Ctx,
    g: &Digraph,
    comp: &[u32],
    c: u32,
    ww: &FxHashSet<(u32, u32)>,
) -> Option<Anomaly> {
    let start = (0..g.len() as u32).find(|&v| comp[v as usize] == c)?;
    let path = shortest_path(g, start, start, |v| comp[v as usize] == c)?;
    (path.len() >= 2).then(|| cycle_anomaly(ctx, &path, Some(ww)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::{Db, Distribution, Fault, GenOptions, generate};
    use crate::history::{LoadOptions, Workload, load_bytes};

    type Edges = Vec<(u32, u32, MopId, bool)>;

    fn edges(ctx: &Ctx, redundant_too: bool, by_frontier: bool, keep_redundant: bool) -> Edges {
        let mut out = Vec::new();
        let mut push = |t: Triangle, r: bool| {
            if keep_redundant || !r {
                out.push((t.t1, t.t2, t.read, r));
            }
        };
        if by_frontier {
            derive_causal(ctx, redundant_too, &mut push);
        } else {
            derive_search(ctx, Level::Causal, redundant_too, push);
        }
        out
    }

    /// The frontier walk finds exactly the edges the per-read search does,
    /// in the same order, on correct and faulty histories of every store,
    /// with both kinds of clocks.
    #[test]
    fn frontier_derivation_matches_search() {
        let mut cases = 0;
        for seed in 0..24u64 {
            let db = [
                Db::Causal,
                Db::ReadAtomic,
                Db::ReadCommitted,
                Db::SnapshotIsolation,
            ][seed as usize % 4];
            let workload = if seed % 2 == 0 {
                Workload::RwRegister
            } else {
                Workload::ListAppend
            };
            let mut o = GenOptions {
                sessions: 2 + (seed % 7) as u32,
                txns_per_session: 30,
                ops_per_txn: 2 + (seed % 5) as u32,
                keys: [3, 10, 40][seed as usize % 3],
                distribution: [
                    Distribution::Uniform,
                    Distribution::Zipf,
                    Distribution::Hotspot,
                ][(seed / 3) as usize % 3],
                workload,
                db,
                seed,
                info_rate: 0.05,
                abort_rate: 0.05,
                ..GenOptions::default()
            };
            if seed % 3 != 0 {
                for f in [
                    Fault::CausalityViolation,
                    Fault::FracturedRead,
                    Fault::StaleSessionRead,
                    Fault::LostUpdate,
                    Fault::LongFork,
                ] {
                    o.faults.set(f, 0.05);
                }
            }
            let Ok(g) = generate(&o) else { continue };
            let Ok(l) = load_bytes("gen.edn", g.history, LoadOptions::default()) else {
                continue;
            };
            let h = &l.history;
            let vectors = build(h, Clocks::Vectors, true, &mut Stats::default());
            let trees = build(h, Clocks::TreeClocks, true, &mut Stats::default());
            for t in 0..h.txns.len() as TxnId {
                if vectors.included[t as usize] {
                    assert_eq!(vectors.row(t), trees.row(t), "seed {seed}, clock of {t}");
                }
            }
            for ctx in [vectors, trees] {
                let found = edges(&ctx, false, true, false);
                assert_eq!(found, edges(&ctx, false, false, false), "seed {seed}");
                assert_eq!(
                    edges(&ctx, true, true, true),
                    edges(&ctx, true, false, true),
                    "seed {seed}, redundant too"
                );
                cases += usize::from(!found.is_empty());
            }
        }
        assert!(cases > 10, "too few histories with derived edges: {cases}");
    }
}
