//! The driver of the causal checks and the context they share: the
//! levels (`Level`), how causal-order reachability is computed (`Clocks`),
//! the per-history tables every question reads (`Ctx`, made by `build`:
//! session positions, clocks, writers per key and session), and `check`,
//! which derives the level's edges (see `derive`), finds the cycles of
//! the level's graph and hands them to `findings` to be named.

use crate::check::tuning::CAUSAL_MAX_PATHS;
use rustc_hash::{FxHashMap, FxHashSet};

use super::derive::{co_edges, derive};
use super::findings::{Spans, cyclic_co, instance, kind, sessionless, ww_cycle};
use crate::anomaly::{Anomaly, Datum, Field};
use crate::check::clocks::{TreeClock, Vectors};
use crate::check::deps::ww_edges;
use crate::check::deps::{included, so_edges, wr_edges};
use crate::check::graph::{Digraph, sccs, shortest_path};
use crate::history::model::*;
use crate::spec::{AnomalyType, Kind};

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
    pub(super) fn marker(self) -> AnomalyType {
        match self {
            Level::ReadCommitted => AnomalyType::NonMonoReadAo,
            Level::ReadAtomic => AnomalyType::FracturedReadAo,
            Level::Causal => AnomalyType::ConflictAo,
        }
    }

    /// The same, for a finding that needs session order (see
    /// `spec::AnomalyType::is_session`): it rules out only the models that
    /// keep sessions.
    pub(super) fn session_marker(self) -> AnomalyType {
        match self {
            Level::ReadCommitted => AnomalyType::NonMonoReadProcess,
            Level::ReadAtomic => AnomalyType::FracturedReadProcess,
            Level::Causal => AnomalyType::ConflictProcess,
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
    /// Instances found past `MAX_INSTANCES` of their filing, not built:
    /// by name, their identities ([`Instance`]).
    pub counted: Counted,
}

/// An instance's identity within its name: the writer it should have
/// seen (or `INIT`, the initial state), the one it saw, and the read. Two levels that find
/// one instance find it under one identity.
pub type Instance = (TxnId, TxnId, MopId);

/// How an instance is filed: its name and what it rules out (which for
/// the AO family is the level that found it).
pub type Filing = (AnomalyType, Option<AnomalyType>);

/// Instances counted and not built, by filing.
pub type Counted = FxHashMap<Filing, FxHashSet<Instance>>;

/// The identity of a built instance (see [`Instance`]), from its fields.
fn identity(a: &Anomaly) -> Option<Instance> {
    let t1 = match a.get(Field::Writer)? {
        Datum::Txn(t) => *t,
        _ => INIT,
    };
    let Datum::Txn(t2) = a.get(Field::Overwriter)? else {
        return None;
    };
    let Datum::Mop(read) = a.get(Field::Mop)? else {
        return None;
    };
    Some((t1, *t2, *read))
}

/// The instances of several levels merged, each once, as the first level
/// that found it has it: those built are merged by the caller (less those
/// an earlier level only counted); those counted (past `MAX_INSTANCES`
/// of their filing at their level) and met by no earlier level are
/// counted here, and [`Ledger::attach`] puts their number on the last one
/// kept of their filing, as `:also`.
#[derive(Default)]
pub struct Ledger {
    /// Every instance met so far, by name and identity.
    seen: FxHashSet<(Kind, Instance)>,
    /// Those of them only counted.
    counted: FxHashSet<(Kind, Instance)>,
    /// How many were counted per filing, and the last instance built of
    /// that filing by the level that counted them (to stand for them
    /// should the merge have kept none so filed).
    more: FxHashMap<Filing, (u64, Anomaly)>,
}

impl Ledger {
    /// Takes one level's findings: returns those built, to merge, less
    /// those an earlier level counted; counts those it counted that no
    /// earlier level met.
    pub fn level(&mut self, built: Vec<Anomaly>, counted: Counted) -> Vec<Anomaly> {
        for (filing, ids) in counted {
            let name = Kind::Anomaly(filing.0);
            let mut fresh = 0;
            for id in ids {
                if self.seen.insert((name, id)) {
                    self.counted.insert((name, id));
                    fresh += 1;
                }
            }
            let last = built
                .iter()
                .rev()
                .find(|a| a.kind == Kind::Anomaly(filing.0) && a.rules_out == filing.1);
            if let (true, Some(last)) = (fresh > 0, last) {
                let e = self.more.entry(filing).or_insert((0, last.clone()));
                e.0 += fresh;
            }
        }
        let mut out = Vec::with_capacity(built.len());
        for a in built {
            let key = identity(&a).map(|id| (a.kind, id));
            if key.is_some_and(|k| self.counted.contains(&k)) {
                continue;
            }
            if let Some(k) = key {
                self.seen.insert(k);
            }
            out.push(a);
        }
        out
    }

    /// Puts each filing's count on the last anomaly of `out` so filed; where
    /// the merge kept none so filed (every one built was an earlier
    /// level's), the last one built stands for itself and the rest.
    pub fn attach(self, out: &mut Vec<Anomaly>) {
        for ((name, rules_out), (n, last)) in self.more {
            let filed = |a: &Anomaly| a.kind == Kind::Anomaly(name) && a.rules_out == rules_out;
            let (a, n) = match out.iter().rposition(filed) {
                Some(i) => (&mut out[i], n),
                None => {
                    out.push(last);
                    let i = out.len() - 1;
                    (&mut out[i], n - 1)
                }
            };
            if n > 0 {
                a.fields.push((Field::Also, Datum::Int(n as i64)));
            }
        }
    }
}

pub(super) const INIT: u32 = u32::MAX;

/// Most instances of one name built; those past it are counted (see
/// [`check`]): the bound every result's lists keep.
pub(super) use crate::anomaly::MAX_INSTANCES;

/// Reachability in CO.
pub(super) enum Reach {
    Vectors(Vectors),
    Trees(Vec<TreeClock>),
    Search(Digraph),
}

pub(super) struct Ctx<'a> {
    pub(super) h: &'a History,
    pub(super) included: Vec<bool>,
    /// Session and 1-based position of each transaction.
    pub(super) sess: Vec<u32>,
    pub(super) pos: Vec<u32>,
    pub(super) reach: Reach,
    /// Writers of each key per session: (position, txn), sorted.
    /// Per key, its writers as (session, position, txn), sorted; the
    /// key's slice is `writers[writer_at[k]..writer_at[k + 1]]`.
    pub(super) writers: Vec<(u32, u32, TxnId)>,
    pub(super) writer_at: Vec<u32>,
    /// Where each session's run starts in each key's slice:
    /// `run_at[k * (S + 1) + s]`, when keys x sessions is small enough.
    pub(super) run_at: Option<Vec<u32>>,
    /// The keys each transaction writes (included ones only):
    /// `wkeys[wkeys_at[t]..wkeys_at[t + 1]]`.
    pub(super) wkeys: Vec<KeyId>,
    pub(super) wkeys_at: Vec<u32>,
    pub(super) co: Digraph,
    /// Components of CO when it is cyclic (CyclicCO).
    pub(super) co_comp: Option<Vec<u32>>,
    /// Session order is part of CO.
    pub(super) sessions: bool,
    /// When to stop deriving and telling (what was found stands).
    pub(super) deadline: Option<std::time::Instant>,
    /// The deadline stopped the check.
    pub(super) cut: std::cell::Cell<bool>,
    /// Which micro-ops of the reader last asked about read from whom.
    pub(super) spans: std::cell::RefCell<Spans>,
    /// Per derived edge `(t2, t1)`, the read that forced it (the first).
    pub(super) forced: FxHashMap<(TxnId, TxnId), MopId>,
}

impl Ctx<'_> {
    /// Whether the deadline has passed (and the check is cut short).
    pub(super) fn expired(&self) -> bool {
        let e = crate::check::budget::passed(self.deadline);
        if e {
            self.cut.set(true);
        }
        e
    }

    pub(super) fn has_clocks(&self) -> bool {
        !matches!(self.reach, Reach::Search(_))
    }

    /// `a ->CO* b` (reflexive).
    pub(super) fn co(&self, a: TxnId, b: TxnId) -> bool {
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

    pub(super) fn clock(&self, t: TxnId, s: u32) -> u32 {
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

    pub(super) fn key_writers(&self, x: KeyId) -> &[(u32, u32, TxnId)] {
        let (a, b) = (self.writer_at[x as usize], self.writer_at[x as usize + 1]);
        &self.writers[a as usize..b as usize]
    }

    /// The last writer of `x` in session `s` at a position below `limit`.
    pub(super) fn last_writer_below(&self, x: KeyId, s: u32, limit: u32) -> Option<TxnId> {
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
    pub(super) fn rows(&self, a: TxnId, b: TxnId) -> Option<(&[u32], &[u32])> {
        match &self.reach {
            Reach::Vectors(v) => Some((v.row(a), v.row(b))),
            _ => None,
        }
    }

    /// A transaction's clock, one entry per session, when there are clocks.
    pub(super) fn row(&self, t: TxnId) -> Option<&[u32]> {
        match &self.reach {
            Reach::Vectors(v) => Some(v.row(t)),
            Reach::Trees(tc) => Some(tc[t as usize].entries()),
            Reach::Search(_) => None,
        }
    }

    pub(super) fn writes_of(&self, t: TxnId) -> &[KeyId] {
        let (a, b) = (self.wkeys_at[t as usize], self.wkeys_at[t as usize + 1]);
        &self.wkeys[a as usize..b as usize]
    }
}

/// A derived edge `t2 -> t1` and the read that forced it.
#[derive(Copy, Clone)]
pub(super) struct Triangle {
    pub(super) t1: u32,
    pub(super) t2: TxnId,
    pub(super) read: MopId,
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
    // The read behind each derived edge a finding's path may take (those
    // within a cyclic component), to say why the order holds.
    if !reported.is_empty() {
        for t in triangles
            .iter()
            .filter(|t| t.t1 != INIT && comps.comp[t.t1 as usize] == comps.comp[t.t2 as usize])
        {
            ctx.forced.entry((t.t2, t.t1)).or_insert(t.read);
        }
    }
    let free = if ctx.sessions && !reported.is_empty() {
        sessionless(&ctx, level, &ww, &reported)
    } else {
        vec![true; reported.len()]
    };
    // Each name's instances past MAX_INSTANCES are counted, not built
    // (a history with duplicated values can make hundreds of thousands):
    // their identities go to `stats.counted`, for [`Ledger`].
    let mut per_filing: FxHashMap<Filing, usize> = FxHashMap::default();
    for (i, tri) in reported.iter().enumerate() {
        let k = kind(&ctx, level, tri, free[i]);
        let built = per_filing.entry((k.name, k.rules_out)).or_default();
        if *built >= MAX_INSTANCES {
            let id = (tri.t1, tri.t2, tri.read);
            stats
                .counted
                .entry((k.name, k.rules_out))
                .or_default()
                .insert(id);
            continue;
        }
        *built += 1;
        let with_path = i < CAUSAL_MAX_PATHS && !ctx.expired();
        out.push(instance(&ctx, &g, &comps.comp, tri, k, with_path));
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

pub(super) fn build<'a>(
    h: &'a History,
    clocks: Clocks,
    sessions: bool,
    stats: &mut Stats,
) -> Ctx<'a> {
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
        forced: FxHashMap::default(),
    }
}

pub(super) fn is_co_cycle(ctx: &Ctx, co_comp: &[u32], g_comp: &[u32], c: u32) -> bool {
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
