//! Turning the checks' results into findings: each violating derived
//! edge becomes a C4 pattern instance (`instance`, with the reads that make
//! the overwriter visible, from `Spans`, and the paths that prove it: how
//! the writer precedes the overwriter, `:order`, and the chain of
//! dependencies that makes the overwriter visible to the reader,
//! `:visible`, each a path of transactions and steps),
//! whether it holds without session order is decided by `sessionless`, and
//! cycles of causal order or of the write order become Elle-named cycle
//! anomalies (`cyclic_co`, `ww_cycle`, `cycle_anomaly`) whose steps are
//! named by `step`.

use rustc_hash::FxHashSet;

use super::driver::{Ctx, INIT, Level, Triangle};
use crate::anomaly::{Anomaly, Datum, Field, Grounds, On, Path, Step};
use crate::check::deps::{external_source, outside_from, wr_edges};
use crate::check::graph::{Digraph, sccs, shortest_path};
use crate::check::tuning::CAUSAL_MAX_PATHS;
use crate::history::model::*;
use crate::spec::naming::{self as cycle, Rel};
use crate::spec::{AnomalyType, Pattern};

pub(super) fn step(ctx: &Ctx, a: TxnId, b: TxnId, ww: Option<&FxHashSet<(u32, u32)>>) -> Step {
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
    // A derived edge: say which read forced it. Not in the history, but
    // forced by the level checked, given that read: inferred.
    match ctx.forced.get(&(a, b)) {
        Some(&r) => Step {
            rel: Rel::Ao,
            on: On::Forced(r),
            grounds: Grounds::Inferred,
        },
        None => Step::new(Rel::Ao, On::Nothing),
    }
}

/// Session order from `t` to a later transaction of its session.
pub(super) fn session_step(ctx: &Ctx, t: TxnId) -> Step {
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
pub(super) fn cycle_anomaly(
    ctx: &Ctx,
    path: &[u32],
    ww: Option<&FxHashSet<(u32, u32)>>,
) -> Anomaly {
    let path = Path {
        txns: path.to_vec(),
        steps: path.windows(2).map(|w| step(ctx, w[0], w[1], ww)).collect(),
    };
    let rels = path.rels();
    let mut a = Anomaly::new(cycle::name(&rels));
    if rels.contains(&Rel::Process) {
        a = a.pattern(crate::spec::Pattern::CyclicCo);
    }
    for &v in &path.txns[..path.txns.len() - 1] {
        a = a.txn(v);
    }
    a.cycle(path)
}

/// A key on which `a`'s append directly precedes `b`'s in a version order,
/// or on which `a` wrote the last observed element and `b` an append no
/// read observed, or on which Elle's key options order `a`'s write before
/// `b`'s (see `check::deps::ww_edges`).
pub(super) fn ww_between(h: &History, a: TxnId, b: TxnId) -> Option<(KeyId, Val, Val)> {
    let inferred = &crate::check::keys::inferred(h).ww;
    if let Some(&(x, wa, wb)) = inferred
        .iter()
        .find(|&&(_, wa, wb)| h.txn_of(wa) == a && h.txn_of(wb) == b)
    {
        return Some((x, h.mops[wa as usize].val, h.mops[wb as usize].val));
    }
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

pub(super) fn path_of(ctx: &Ctx, path: &[u32]) -> Path {
    Path {
        txns: path.to_vec(),
        steps: path
            .windows(2)
            .map(|w| step(ctx, w[0], w[1], None))
            .collect(),
    }
}

/// What an instance is, before it is built: its pattern and name, and
/// how its writer is visible to its reader.
pub(super) struct Kind {
    pattern: Pattern,
    /// The anomaly's name (a session name where it needs session order).
    pub name: AnomalyType,
    pub rules_out: Option<AnomalyType>,
    co_family: bool,
    before: bool,
    after: bool,
    so: bool,
}

/// Classifies an instance (see [`instance`]): cheap, so that instances
/// past a bound are counted by name without being built.
pub(super) fn kind(ctx: &Ctx, level: Level, tri: &Triangle, free: bool) -> Kind {
    let h = ctx.h;
    let t3 = h.mops[tri.read as usize].txn;
    let t2 = tri.t2;
    let co_family = tri.t1 == INIT || ctx.co(tri.t1, t2);
    // How t2 is visible to t3.
    let (before, after) = ctx.spans.borrow_mut().reads_from(h, t3, t2, tri.read);
    let so = ctx.sess[t2 as usize] == ctx.sess[t3 as usize]
        && ctx.pos[t2 as usize] < ctx.pos[t3 as usize];
    let pattern = match (co_family, before, so || after) {
        (true, true, _) => Pattern::NonMonoReadCo,
        (true, false, true) => Pattern::FracturedReadCo,
        (true, false, false) => Pattern::CoConflictAo,
        (false, true, _) => Pattern::NonMonoReadAo,
        (false, false, true) => Pattern::FracturedReadAo,
        (false, false, false) => Pattern::ConflictAo,
    };
    let mut name = pattern.anomaly();
    // What the instance proves. One that needs session order (in how t2 is
    // visible to t3, or in how t1 precedes t2) proves only the models that
    // keep sessions wrong, not Elle's sessionless ones: it gets a session
    // name, at the pattern's own level (CO family) or the level checked
    // (AO family, whose cycle needs that level's derived edges).
    let nominal = {
        use AnomalyType as A;
        match name {
            A::NonMonoReadCo | A::NonMonoReadAo => Level::ReadCommitted,
            A::FracturedReadCo | A::FracturedReadAo => Level::ReadAtomic,
            _ => Level::Causal,
        }
    };
    let at = if co_family { nominal } else { level };
    let mut rules_out = None;
    if !free {
        let marker = at.session_marker();
        name = marker;
        rules_out = Some(marker);
    } else if !co_family {
        rules_out = Some(level.marker());
    }
    Kind {
        pattern,
        name,
        rules_out,
        co_family,
        before,
        after,
        so,
    }
}

/// An instance of kind `k` ([`kind`]), with the paths that tell it when
/// `with_path`.
pub(super) fn instance(
    ctx: &Ctx,
    g: &Digraph,
    comp: &[u32],
    tri: &Triangle,
    k: Kind,
    with_path: bool,
) -> Anomaly {
    let h = ctx.h;
    let read = &h.mops[tri.read as usize];
    let t3 = read.txn;
    let t2 = tri.t2;
    let (co_family, before, after, so) = (k.co_family, k.before, k.after, k.so);
    let mut a = Anomaly::new(k.name).pattern(k.pattern).txn(t3);
    a.rules_out = k.rules_out;
    if tri.t1 != INIT {
        a = a.txn(tri.t1);
    }
    a = a
        .txn(t2)
        .field(Field::Op, Datum::Txn(t3))
        .field(Field::Mop, Datum::Mop(tri.read))
        .field(Field::Key, Datum::Key(read.key))
        .field(
            Field::Writer,
            if tri.t1 == INIT {
                Datum::kw("initial-state")
            } else {
                Datum::Txn(tri.t1)
            },
        )
        .field(Field::Overwriter, Datum::Txn(t2));
    if !with_path {
        return a;
    }
    // How t2 reaches t3 (visibility), and how t1 precedes t2.
    let vis = if before || after {
        Datum::Step(step(ctx, t2, t3, None))
    } else if so {
        Datum::Step(session_step(ctx, t3))
    } else {
        // The chain itself, its transactions with its steps, so that the
        // prose and the picture can name every link.
        Datum::Path(path_of(ctx, &co_path(ctx, t2, t3)))
    };
    a = a.field(Field::Visible, vis);
    if tri.t1 != INIT {
        let path = if co_family {
            co_path(ctx, tri.t1, t2)
        } else {
            let c = comp[tri.t1 as usize];
            shortest_path(g, tri.t1, t2, |v| comp[v as usize] == c).unwrap_or_default()
        };
        if !path.is_empty() {
            a = a.field(Field::Order, Datum::Path(path_of(ctx, &path)));
        }
    }
    a
}

/// Whether a reader read from `t2` before and after its micro-op `read`:
/// per reader, the first and last of its micro-ops that read from each
/// transaction, gathered once for the run of instances that share it.
#[derive(Default)]
pub(super) struct Spans {
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
pub(super) fn sessionless(
    ctx: &Ctx,
    level: Level,
    ww: &[(u32, u32)],
    tris: &[Triangle],
) -> Vec<bool> {
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
                        searches <= CAUSAL_MAX_PATHS
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
pub(super) fn co_path(ctx: &Ctx, a: TxnId, b: TxnId) -> Vec<u32> {
    if !ctx.has_clocks() {
        return shortest_path(&ctx.co, a, b, |_| true).unwrap_or_default();
    }
    shortest_path(&ctx.co, a, b, |v| ctx.co(a, v) && ctx.co(v, b)).unwrap_or_default()
}

pub(super) fn cyclic_co(ctx: &Ctx, comp: &[u32], out: &mut Vec<Anomaly>) {
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
            out.push(
                cycle_anomaly(ctx, &path, Some(&empty)).pattern(crate::spec::Pattern::CyclicCo),
            );
        }
    }
}

pub(super) fn ww_cycle(
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
