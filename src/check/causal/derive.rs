//! Edge derivation: the edges of a level's graph beyond causal order.
//! `derive` enumerates the derived (arbitration) edges each read forces,
//! by a per-session frontier at causal consistency with clocks
//! (`derive_causal`, with `Buckets` for the reader's sources) or by a
//! search per read and session otherwise (`derive_search`); `co_edges`
//! gives causal order's edges (the write order the lists reveal is
//! `check::deps::ww_edges`).

use super::driver::{Ctx, INIT, Level, Triangle};
use crate::check::deps::{external_source, outside_from};
use crate::check::tuning::WINDOW_SCAN;
use crate::history::model::*;

/// Enumerates the derived edges of a level: for each external read `r` of
/// `x` in `t3` from `t1` (or the initial state), the writers `t2` of `x`
/// that `r` must have seen, taking only the last such writer per session
/// (earlier ones precede it in session order, so their edges follow). An
/// edge is redundant when `t2` already precedes `t1` in causal order; with
/// `redundant_too` those are looked for as well (for reporting), otherwise
/// causal-level enumeration skips what `t1` already knows.
pub(super) fn derive(
    ctx: &Ctx,
    level: Level,
    redundant_too: bool,
    mut emit: impl FnMut(Triangle, bool),
) {
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
pub(super) fn external_reads<'a>(
    ctx: &'a Ctx<'a>,
    t3: TxnId,
) -> impl Iterator<Item = (MopId, u32)> + 'a {
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
pub(super) fn derive_causal(ctx: &Ctx, redundant_too: bool, emit: &mut impl FnMut(Triangle, bool)) {
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
pub(super) fn derive_search(
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

pub(super) fn co_edges(ctx: &Ctx) -> Vec<(u32, u32)> {
    let mut e = Vec::with_capacity(ctx.co.edge_count());
    for a in 0..ctx.co.len() as u32 {
        for &b in ctx.co.out(a) {
            e.push((a, b));
        }
    }
    e
}
