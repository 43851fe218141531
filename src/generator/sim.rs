//! The simulation: sessions run their transactions one step at a time
//! (invoke, begin, each micro-op, commit, complete), interleaved at random
//! from the seed, so invocations of several processes are outstanding at
//! once as in a real Jepsen run. Each step reads or changes the [`Store`]
//! under the rules of the chosen isolation level; faults hook in at begin,
//! at reads and at commit (see `faults.rs`).

use std::collections::VecDeque;
use std::io::Write;

use rustc_hash::{FxHashMap, FxHashSet};

use super::emit::Emitter;
use super::keys::KeyChooser;
use super::repeats::Repeats;
use super::rng::Rng;
use super::store::{Csn, KeyState, LATEST, Store, TxnNo, Version, View};
use super::{Db, Fault, FiredFault, GenOptions, GenStats, Report};
use crate::error::Error;
use crate::history::Workload;

/// A planned micro-op. Values are handed out at invocation, unique per key.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Planned {
    pub key: u64,
    /// The value a write writes (0 for reads), unique per key in the
    /// store.
    pub val: u32,
    /// The value the history shows it writing (`val`, unless it repeats
    /// an earlier write's: see `repeats.rs`).
    pub shown: u32,
    pub read: bool,
    /// The transaction's first op on this key.
    pub first: bool,
    /// A read with no write of its key before it in the transaction.
    pub ext: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    /// Aborted, with the `:error` keyword Jepsen would show.
    Fail(&'static str),
    Info,
}

/// A read a transaction really made of a committed (or initial) version:
/// for a list, its last element (csn 0 and value 0 when empty).
#[derive(Copy, Clone, Debug)]
pub(crate) struct ReadRec {
    pub key: u64,
    pub csn: Csn,
    pub val: u32,
}

/// A fault injected into (or observed by) a transaction, recorded when that
/// transaction commits.
#[derive(Clone, Debug)]
pub(crate) struct Pending {
    pub fault: Fault,
    pub c4: Option<&'static str>,
    pub txns: Vec<TxnNo>,
    pub keys: Vec<u64>,
}

/// A transaction under way.
pub(crate) struct Active {
    pub no: TxnNo,
    pub ops: Vec<Planned>,
    /// Per op, its read result as a range of `vals`.
    res: Vec<(u32, u32)>,
    vals: Vec<u32>,
    pub view: View,
    next: usize,
    pub reads: Vec<ReadRec>,
    /// List reads after own appends: the key and the csn of the last
    /// foreign element shown; commit refuses if the key moved on since.
    pub guards: Vec<(u64, Csn)>,
    /// A commit this transaction must not see on a key, until it reads
    /// from that commit (fractured reads and causality violations hide one
    /// writer from one key).
    pub hide: Option<(u64, Csn)>,
    doomed: bool,
    /// Reads see the latest committed state (after a non-repeatable read).
    pub rc_mode: bool,
    /// A stale-session view: no serializability validation.
    pub stale: bool,
    /// A fault was injected: no second one in the same transaction.
    pub injected: bool,
    pub pending: Vec<Pending>,
    pub info: bool,
    info_commits: bool,
    user_abort: bool,
    pub outcome: Outcome,
}

impl Active {
    pub fn result(&self, i: usize) -> &[u32] {
        let (s, l) = self.res[i];
        &self.vals[s as usize..(s + l) as usize]
    }

    pub fn upto(&self) -> Csn {
        match &self.view {
            View::Prefix { upto, .. } | View::Atomic { upto, .. } => *upto,
            _ => 0,
        }
    }

    /// The first read of `key` (a real one), if any.
    pub fn first_read(&self, key: u64) -> Option<&ReadRec> {
        self.reads.iter().find(|r| r.key == key)
    }
}

/// Everything about a transaction the rest of the run may ask.
#[derive(Clone, Debug)]
pub(crate) struct TxnRec {
    pub process: i64,
    /// Position in its process.
    pub seq: u32,
    /// Its commit, or 0.
    pub csn: Csn,
    pub info: bool,
    /// Its number and `:index` in the emitted history.
    pub out: Option<(u32, i64)>,
}

/// A committed transaction, kept for a while for the fault logic.
#[derive(Clone, Debug, Default)]
pub(crate) struct CommitRec {
    pub txn: TxnNo,
    /// Its view's prefix (serializable, snapshot isolation, read atomic).
    pub upto: Csn,
    pub reads: Vec<ReadRec>,
    /// Keys written, each once.
    pub writes: Vec<u64>,
    /// Causal store: the replica clock it read from.
    pub vc: Vec<u32>,
}

/// The last commits, by csn.
pub(crate) struct Recent {
    base: Csn,
    recs: VecDeque<CommitRec>,
    cap: usize,
}

impl Recent {
    pub fn get(&self, csn: Csn) -> Option<&CommitRec> {
        csn.checked_sub(self.base)
            .and_then(|i| self.recs.get(i as usize))
    }

    fn push(&mut self, rec: CommitRec) {
        if self.recs.len() == self.cap {
            self.recs.pop_front();
            self.base += 1;
        }
        self.recs.push_back(rec);
    }

    /// Newest first, with their csns.
    pub fn newest(&self) -> impl Iterator<Item = (Csn, &CommitRec)> {
        let base = self.base;
        self.recs
            .iter()
            .enumerate()
            .rev()
            .map(move |(i, r)| (base + i as Csn, r))
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    Invoke,
    Begin,
    Op,
    Commit,
    Complete,
}

pub(crate) struct Session {
    pub process: i64,
    pub replica: usize,
    left: u32,
    seq: u32,
    phase: Phase,
    /// Boxed: it moves out and back in at every step.
    active: Option<Box<Active>>,
    /// This process's recent commits (not :info ones), oldest first.
    pub own: Vec<Csn>,
}

pub(crate) struct Sim<'o, W: Write> {
    pub opts: &'o GenOptions,
    pub db: Db,
    pub list: bool,
    pub store: Store,
    pub txns: Vec<TxnRec>,
    pub recent: Recent,
    pub sessions: Vec<Session>,
    emit: Emitter<W>,
    keys: KeyChooser,
    /// Key rotation: each slot's generation.
    gens: FxHashMap<u64, u64>,
    rng_wl: Rng,
    rng_sched: Rng,
    rng_store: Rng,
    pub rng_fault: Rng,
    time: u64,
    pub fired: Vec<Pending>,
    pub stats: GenStats,
    /// Lost updates: (key, value first read) -> the first committed
    /// transaction that read it and then wrote the key.
    pub lu_index: FxHashMap<(u64, u32), TxnNo>,
    /// Duplicated appends not yet observed: key -> (element, writer).
    pub dups: FxHashMap<u64, (u32, TxnNo)>,
    /// Thin-air values count down from u32::MAX; no real value gets there.
    pub thin: u32,
    /// The values the history shows repeated (`--repeat-values`).
    pub repeats: Repeats,
    buf: Vec<Version>,
}

/// A read result that no commit produced (thin air, aborted writes).
pub(crate) const FABRICATED: Csn = Csn::MAX;

impl<'o, W: Write> Sim<'o, W> {
    pub fn new(opts: &'o GenOptions, out: W) -> Sim<'o, W> {
        let causal = matches!(opts.db, Db::Causal | Db::ParallelSnapshotIsolation);
        let replicas = if causal { opts.replicas as usize } else { 1 };
        let sessions = (0..opts.sessions)
            .map(|i| Session {
                process: i as i64,
                replica: i as usize % replicas,
                left: opts.txns_per_session,
                seq: 0,
                phase: Phase::Invoke,
                active: None,
                own: Vec::new(),
            })
            .collect();
        Sim {
            opts,
            db: opts.db,
            list: opts.workload == Workload::ListAppend,
            store: Store::new(replicas),
            txns: Vec::new(),
            recent: Recent {
                base: 1,
                recs: VecDeque::new(),
                cap: (opts.sessions as usize * 16).max(4096),
            },
            sessions,
            emit: Emitter::new(out, opts.format, opts.workload),
            keys: KeyChooser::new(opts.keys, opts.distribution, opts.zipf_exponent),
            gens: FxHashMap::default(),
            rng_wl: Rng::new(opts.seed, 1),
            rng_sched: Rng::new(opts.seed, 2),
            rng_store: Rng::new(opts.seed, 3),
            rng_fault: Rng::new(opts.seed, 4),
            time: 0,
            fired: Vec::new(),
            stats: GenStats::default(),
            lu_index: FxHashMap::default(),
            dups: FxHashMap::default(),
            thin: 0,
            repeats: Repeats::new(opts.repeat_values, opts.seed),
            buf: Vec::new(),
        }
    }

    /// Runs every session to the end.
    pub fn run(mut self) -> Result<(Report, W), Error> {
        let mut live: Vec<usize> = (0..self.sessions.len())
            .filter(|&s| self.sessions[s].left > 0)
            .collect();
        let causal = matches!(self.db, Db::Causal | Db::ParallelSnapshotIsolation);
        while !live.is_empty() {
            if causal && self.rng_sched.below(3) == 0 {
                self.store.replicate(&mut self.rng_store);
                continue;
            }
            let i = self.rng_sched.below(live.len() as u64) as usize;
            self.time += 1_000 + self.rng_sched.below(99_000);
            if self.step(live[i])? {
                live.swap_remove(i);
            }
        }
        self.finish()
    }

    fn io(e: std::io::Error) -> Error {
        Error::io("generated history", e)
    }

    /// One step of session `s`; true when the session is done.
    fn step(&mut self, s: usize) -> Result<bool, Error> {
        let phase = self.sessions[s].phase;
        if phase == Phase::Invoke {
            self.invoke(s).map_err(Self::io)?;
            return Ok(false);
        }
        let Some(mut a) = self.sessions[s].active.take() else {
            return Ok(true);
        };
        let mut next = phase;
        match phase {
            Phase::Begin => {
                a.view = self.begin_view(s);
                self.begin_faults(s, &mut a);
                next = Phase::Op;
            }
            Phase::Op => {
                if a.next < a.ops.len() && !a.doomed {
                    let i = a.next;
                    a.next += 1;
                    if a.ops[i].read {
                        self.read_op(&mut a, i);
                    } else {
                        self.write_op(&mut a, i);
                    }
                }
                if a.next >= a.ops.len() || a.doomed {
                    next = Phase::Commit;
                }
            }
            Phase::Commit => {
                self.commit(s, &mut a);
                next = Phase::Complete;
            }
            Phase::Complete => {
                let committed = self.txns[a.no as usize].csn != 0;
                let sess = &self.sessions[s];
                let out = self
                    .emit
                    .complete(self.time, sess.process, &a, committed, &self.repeats)
                    .map_err(Self::io)?;
                self.txns[a.no as usize].out = out;
                let sess = &mut self.sessions[s];
                if a.outcome == Outcome::Info {
                    // Jepsen retires a process whose op crashed.
                    sess.process += self.opts.sessions as i64;
                    sess.seq = 0;
                    sess.own.clear();
                }
                sess.left -= 1;
                sess.phase = Phase::Invoke;
                return Ok(sess.left == 0);
            }
            Phase::Invoke => {}
        }
        let sess = &mut self.sessions[s];
        sess.active = Some(a);
        sess.phase = next;
        Ok(false)
    }

    fn key_for(&mut self, slot: u64, write: bool) -> u64 {
        let Some(max) = self.opts.max_writes_per_key else {
            return slot;
        };
        let n = self.opts.keys.max(1);
        let g = self.gens.entry(slot).or_insert(0);
        let mut key = slot + *g * n;
        if write && self.store.keys.get(&key).is_some_and(|k| k.last_val >= max) {
            *g += 1;
            key = slot + *g * n;
        }
        key
    }

    fn invoke(&mut self, s: usize) -> std::io::Result<()> {
        let no = self.txns.len() as TxnNo;
        let n = self.opts.ops_per_txn as usize;
        let mut ops: Vec<Planned> = Vec::with_capacity(n);
        for _ in 0..n {
            let read = self.rng_wl.unit() < self.opts.read_ratio;
            let slot = self.keys.slot(&mut self.rng_wl);
            let key = self.key_for(slot, !read);
            let val = if read {
                0
            } else {
                let k = self.store.keys.entry(key).or_default();
                k.last_val += 1;
                k.last_val
            };
            let shown = if read || self.list {
                val
            } else {
                let mine: Vec<u32> = ops
                    .iter()
                    .filter(|o| o.key == key && !o.read)
                    .map(|o| o.shown)
                    .collect();
                self.repeats.plan(key, val, &mine)
            };
            let first = !ops.iter().any(|o| o.key == key);
            let ext = read && !ops.iter().any(|o| o.key == key && !o.read);
            ops.push(Planned {
                key,
                val,
                shown,
                read,
                first,
                ext,
            });
        }
        let info = self.rng_store.chance(self.opts.info_rate);
        let info_commits = info && self.rng_store.below(2) == 0;
        let user_abort = self.rng_store.chance(self.opts.abort_rate);
        let sess = &mut self.sessions[s];
        self.txns.push(TxnRec {
            process: sess.process,
            seq: sess.seq,
            csn: 0,
            info,
            out: None,
        });
        sess.seq += 1;
        self.emit.invoke(self.time, sess.process, &ops)?;
        sess.active = Some(Box::new(Active {
            no,
            res: vec![(0, 0); ops.len()],
            ops,
            vals: Vec::new(),
            view: View::Latest,
            next: 0,
            reads: Vec::new(),
            guards: Vec::new(),
            hide: None,
            doomed: false,
            rc_mode: false,
            stale: false,
            injected: false,
            pending: Vec::new(),
            info,
            info_commits,
            user_abort,
            outcome: Outcome::Ok,
        }));
        sess.phase = Phase::Begin;
        Ok(())
    }

    fn begin_view(&mut self, s: usize) -> View {
        let last = self.store.last_csn();
        match self.db {
            Db::Serializable | Db::SnapshotIsolation | Db::Prefix => View::Prefix {
                upto: last,
                hidden: Vec::new(),
            },
            Db::ReadCommitted => View::Latest,
            Db::Causal | Db::ParallelSnapshotIsolation => View::Causal {
                vc: self.store.replicas[self.sessions[s].replica].clone(),
            },
            Db::ReadAtomic => self.atomic_view(s, last),
        }
    }

    /// Read atomic: a stale prefix that still holds the session's own
    /// commits, and half of the commits after it at random; for lists,
    /// closed under earlier writers of each key a member wrote, so every
    /// list read is a prefix.
    fn atomic_view(&mut self, s: usize, last: Csn) -> View {
        let lag = self.rng_store.below(2 * self.opts.sessions as u64 + 1) as Csn;
        let own = self.sessions[s].own.last().copied().unwrap_or(0);
        let upto = last.saturating_sub(lag).max(own);
        let mut extra = FxHashSet::default();
        for c in upto + 1..=last {
            if self.rng_store.below(2) == 0 {
                extra.insert(c);
            }
        }
        if self.list {
            let mut work: Vec<Csn> = extra.iter().copied().collect();
            while let Some(c) = work.pop() {
                let Some(rec) = self.recent.get(c) else {
                    continue;
                };
                for k in &rec.writes {
                    for v in self
                        .store
                        .versions(*k)
                        .iter()
                        .rev()
                        .skip_while(|v| v.csn >= c)
                        .take_while(|v| v.csn > upto)
                    {
                        if extra.insert(v.csn) {
                            work.push(v.csn);
                        }
                    }
                }
            }
        }
        View::Atomic { upto, extra }
    }

    fn write_op(&mut self, a: &mut Active, i: usize) {
        if self.db != Db::ReadCommitted {
            return;
        }
        let k = self.store.keys.entry(a.ops[i].key).or_default();
        match k.lock {
            Some(o) if o != a.no => a.doomed = true,
            _ => k.lock = Some(a.no),
        }
    }

    /// The view reads go through (commit validation keeps `a.view`).
    fn read_view<'a>(&self, a: &'a Active) -> &'a View {
        if a.rc_mode { &LATEST } else { &a.view }
    }

    /// What a read of `key` sees through `view`, into `out` (a register
    /// gives at most one version).
    pub fn read_into(&self, key: u64, view: &View, except: Option<Csn>, out: &mut Vec<Version>) {
        if self.list {
            self.store.read_list(key, view, except, out);
        } else {
            out.clear();
            if let Some(i) = self.store.read_reg(key, view, except) {
                out.push(self.store.versions(key)[i]);
            }
        }
    }

    fn read_op(&mut self, a: &mut Active, i: usize) {
        let op = a.ops[i];
        // Once the transaction has read from the hidden writer, hiding it
        // again would make reads go back in time (not read committed).
        let hide = a
            .hide
            .filter(|h| h.0 == op.key && !a.reads.iter().any(|r| r.csn == h.1))
            .map(|h| h.1);
        let mut got = std::mem::take(&mut self.buf);
        self.read_into(op.key, self.read_view(a), hide, &mut got);
        let start = a.vals.len() as u32;
        if !op.ext {
            // After its own write, a transaction sees it.
            let mut own = a.ops[..i]
                .iter()
                .filter(|o| !o.read && o.key == op.key)
                .map(|o| o.val);
            if self.list {
                a.guards
                    .push((op.key, got.last().map_or(0, |v: &Version| v.csn)));
                a.vals.extend(got.iter().map(|v| v.val));
                a.vals.extend(own);
            } else {
                a.vals.extend(own.next_back());
            }
        } else {
            let fabricated = self.read_faults(a, i, &mut got);
            if self.list && !a.info {
                self.observe_duplicates(a, op.key, &got);
            }
            if !fabricated {
                let last = got.last().copied().unwrap_or(Version { csn: 0, val: 0 });
                a.reads.push(ReadRec {
                    key: op.key,
                    csn: last.csn,
                    val: last.val,
                });
            }
            a.vals.extend(got.iter().map(|v| v.val));
        }
        a.res[i] = (start, a.vals.len() as u32 - start);
        self.buf = got;
    }

    fn observe_duplicates(&self, a: &mut Active, key: u64, got: &[Version]) {
        let Some(&(val, writer)) = self.dups.get(&key) else {
            return;
        };
        let seen = a
            .pending
            .iter()
            .any(|p| p.fault == Fault::DuplicateAppend && p.keys == [key]);
        if !seen && got.iter().filter(|v| v.val == val).count() > 1 {
            a.pending.push(Pending {
                fault: Fault::DuplicateAppend,
                c4: None,
                txns: vec![a.no, writer],
                keys: vec![key],
            });
        }
    }

    /// Keys whose committed state moved past what the transaction may
    /// overwrite: (write-write conflicts lost-update may skip, any other
    /// conflict).
    fn conflicts(&self, s: usize, a: &Active) -> (Vec<u64>, bool) {
        let mut ww = Vec::new();
        let mut fatal = a.guards.iter().any(|&(k, g)| self.store.latest(k) != g);
        let writes = a.ops.iter().filter(|o| !o.read);
        match self.db {
            Db::Serializable => {
                let read_only = a.ops.iter().all(|o| o.read);
                if !read_only && !a.stale {
                    let upto = a.upto();
                    for o in &a.ops {
                        if self.store.latest(o.key) > upto {
                            if !o.read {
                                ww.push(o.key);
                            } else if !a.rc_mode && !a.ops.iter().any(|w| !w.read && w.key == o.key)
                            {
                                fatal = true;
                            }
                        }
                    }
                }
            }
            // First committer wins, against the snapshot: at SI a prefix
            // of the commit order, at PSI the replica's causal snapshot.
            Db::SnapshotIsolation | Db::ParallelSnapshotIsolation => {
                for o in writes {
                    if !self.store.visible(&a.view, self.store.latest(o.key)) {
                        ww.push(o.key);
                    }
                }
            }
            _ => {}
        }
        // A list is appended to only at a replica that has applied all its
        // earlier appends, so that every list read stays a prefix of the
        // key's order (Elle's premise). The causal store has no other
        // conflict rule; at PSI first committer wins is stricter, except
        // for a lost update let through, which this keeps from cutting the
        // replica's lists in the middle.
        if self.list && matches!(self.db, Db::Causal | Db::ParallelSnapshotIsolation) {
            let vc = View::Causal {
                vc: self.store.replicas[self.sessions[s].replica].clone(),
            };
            fatal |= a
                .ops
                .iter()
                .filter(|o| !o.read)
                .any(|o| !self.store.visible(&vc, self.store.latest(o.key)));
        }
        ww.sort_unstable();
        ww.dedup();
        (ww, fatal)
    }

    fn commit(&mut self, s: usize, a: &mut Active) {
        let fail = if a.doomed {
            Some("conflict")
        } else if a.user_abort {
            Some("rollback")
        } else if a.info && !a.info_commits {
            Some("timeout")
        } else {
            let (ww, fatal) = self.conflicts(s, a);
            if fatal || (!ww.is_empty() && !self.lost_update(a, &ww)) || !self.faults_unambiguous(a)
            {
                Some("conflict")
            } else {
                None
            }
        };
        match fail {
            Some(e) => self.abort(a, e),
            None => self.apply(s, a),
        }
        self.release_locks(a);
    }

    /// With repeated values: whether every read of the transactions a
    /// pending fault names shows a value written once so far (then those
    /// values are pinned, never to be repeated), so that no other write of
    /// its value explains the fault away. A transaction whose fault would
    /// rest on a repeated value is aborted instead.
    fn faults_unambiguous(&mut self, a: &Active) -> bool {
        if !self.repeats.on() || !a.pending.iter().any(|p| p.injected()) {
            return true;
        }
        let mut reads: Vec<(u64, u32)> = Vec::new();
        for (i, op) in a.ops.iter().enumerate() {
            if op.read && op.ext {
                reads.extend(a.result(i).iter().map(|&v| (op.key, v)));
            }
        }
        for p in &a.pending {
            for &t in p.txns.iter().filter(|&&t| t != a.no) {
                let tr = &self.txns[t as usize];
                // The history shows no read of an aborted or timed-out one.
                if tr.csn == 0 || tr.info {
                    continue;
                }
                let rec = self.recent.get(tr.csn);
                match rec.filter(|r| r.txn == t) {
                    Some(r) => reads.extend(r.reads.iter().map(|r| (r.key, r.val))),
                    // Too old to tell: not safe.
                    None => return false,
                }
            }
        }
        if !self.repeats.unique(&reads) {
            return false;
        }
        self.repeats.pin(&reads);
        true
    }

    fn release_locks(&mut self, a: &Active) {
        if self.db != Db::ReadCommitted {
            return;
        }
        for o in a.ops.iter().filter(|o| !o.read) {
            if let Some(k) = self.store.keys.get_mut(&o.key)
                && k.lock == Some(a.no)
            {
                k.lock = None;
            }
        }
    }

    fn abort(&mut self, a: &mut Active, error: &'static str) {
        self.stats.dropped_injections += a.pending.iter().filter(|p| p.injected()).count() as u64;
        a.pending.clear();
        if a.info {
            a.outcome = Outcome::Info;
            self.stats.info += 1;
            return;
        }
        a.outcome = Outcome::Fail(error);
        self.stats.fail += 1;
        let mut keys: Vec<u64> = a.ops.iter().filter(|o| !o.read).map(|o| o.key).collect();
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            let vals = a
                .ops
                .iter()
                .filter(|o| !o.read && o.key == k)
                .map(|o| o.val)
                .collect();
            let ks: &mut KeyState = self.store.keys.entry(k).or_default();
            ks.aborted = Some((a.no, vals));
        }
    }

    fn apply(&mut self, s: usize, a: &mut Active) {
        let r = self.sessions[s].replica;
        let dep = match (&a.view, self.db) {
            (_, Db::Causal) if self.list => Some(self.store.replicas[r].clone()),
            (View::Causal { vc }, _) => Some(vc.clone()),
            _ => None,
        };
        let csn = self.store.push_commit(a.no, r, dep.as_deref());
        let dup = self.duplicate_append(a);
        let mut writes: Vec<u64> = Vec::new();
        for (i, o) in a.ops.iter().enumerate().filter(|(_, o)| !o.read) {
            let v = Version { csn, val: o.val };
            let k = self.store.keys.entry(o.key).or_default();
            k.versions.push(v);
            if dup == Some(i) {
                k.versions.push(v);
            }
            if !writes.contains(&o.key) {
                writes.push(o.key);
            }
        }
        self.txns[a.no as usize].csn = csn;
        if self.opts.faults.rate(Fault::LostUpdate) > 0.0 {
            for &k in &writes {
                let first = a.ops.iter().find(|o| o.key == k).is_some_and(|o| o.read);
                if let Some(r) = a.first_read(k)
                    && first
                {
                    self.lu_index.entry((k, r.val)).or_insert(a.no);
                }
            }
        }
        let vc = match &a.view {
            View::Causal { vc } => vc.clone(),
            _ => Vec::new(),
        };
        self.recent.push(CommitRec {
            txn: a.no,
            upto: a.upto(),
            reads: std::mem::take(&mut a.reads),
            writes,
            vc,
        });
        if a.info {
            a.outcome = Outcome::Info;
            self.stats.info += 1;
            self.stats.dropped_injections +=
                a.pending.iter().filter(|p| p.injected()).count() as u64;
            a.pending.clear();
            return;
        }
        a.outcome = Outcome::Ok;
        self.stats.ok += 1;
        let own = &mut self.sessions[s].own;
        own.push(csn);
        if own.len() > 32 {
            own.remove(0);
        }
        for p in a.pending.drain(..) {
            if p.fault == Fault::DuplicateAppend {
                let k = p.keys[0];
                if self.dups.get(&k).map(|d| d.1) != Some(p.txns[1]) {
                    continue;
                }
                self.dups.remove(&k);
            }
            self.fired.push(p);
        }
    }

    fn finish(self) -> Result<(Report, W), Error> {
        let ops_written = self.emit.ops_written;
        let out = self.emit.finish().map_err(Self::io)?;
        let txns = &self.txns;
        let faults = self
            .fired
            .iter()
            .map(|p| {
                let outs: Vec<(u32, i64)> = p
                    .txns
                    .iter()
                    .map(|&t| txns[t as usize].out.unwrap_or((u32::MAX, -1)))
                    .collect();
                FiredFault {
                    fault: p.fault,
                    elle: p.fault.elle(),
                    c4: p.c4,
                    txns: outs.iter().map(|o| o.0).collect(),
                    indices: outs.iter().map(|o| o.1).collect(),
                    keys: p.keys.iter().map(|&k| k as i64).collect(),
                }
            })
            .collect();
        let mut stats = self.stats;
        stats.txns = txns.len() as u64;
        stats.ops_written = ops_written;
        Ok((
            Report {
                faults,
                inapplicable: self.opts.inapplicable_faults(),
                stats,
            },
            out,
        ))
    }
}

impl Pending {
    /// Whether this is an injection (not an observation of a duplicate).
    pub fn injected(&self) -> bool {
        self.fault != Fault::DuplicateAppend
    }
}
