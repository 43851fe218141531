//! Fault injection, and the ground truth it leaves.
//!
//! A fault fires only where its effect will be visible in the history and
//! provable from it alone (its *witness*), and only in a transaction that
//! is not `:info`; the record is kept when that transaction commits. So a
//! recorded fault always shows, and an injection that does not commit
//! leaves no trace (its reads are not in the history). Each injection is
//! also kept *clean*: it breaks the levels its anomaly violates and no
//! weaker one (a fractured read stays read-committed, a long fork causal),
//! as long as one fault kind is enabled at a time.
//!
//! For rw-register the version order is not in the history, so a witness
//! that needs "version a precedes version b" is accepted only when that is
//! forced: a is the initial state, or b's writer read from a's writer (any
//! key), so a precedes b in every order consistent with causality; for a
//! stale session read also when a's writer precedes b's in their session.
//! List reads show their order.

use std::io::Write;

use super::sim::{Active, FABRICATED, Pending, Sim};
use super::store::{Csn, LATEST, TxnNo, Version, View};
use super::{Db, Fault};

/// What a fractured read or causality violation would do to a read.
struct Hide {
    /// The writer hidden, and its commit.
    writer: TxnNo,
    csn: Csn,
    /// The other key of the witness.
    other: u64,
    /// The txn the other key is read from (causality: the go-between).
    via: TxnNo,
    /// The older version precedes the hidden one by causality.
    co: bool,
}

impl<W: Write> Sim<'_, W> {
    fn rate(&self, f: Fault) -> f64 {
        if f.applies_to(self.db, self.opts.workload) {
            self.opts.faults.rate(f)
        } else {
            0.0
        }
    }

    fn coin(&mut self, f: Fault) -> bool {
        let r = self.rate(f);
        self.rng_fault.chance(r)
    }

    fn inject(
        a: &mut Active,
        fault: Fault,
        c4: Option<&'static str>,
        txns: Vec<TxnNo>,
        keys: Vec<u64>,
    ) {
        a.injected = true;
        a.pending.push(Pending {
            fault,
            c4,
            txns,
            keys,
        });
    }

    /// Whether `old` (a version, None for the initial state) provably comes
    /// before the versions `w` wrote, and whether causality shows it (C4's
    /// CO: false when only a list's order does). None: not provable.
    ///
    /// For registers the proof must be causal: `old` is the initial state,
    /// or `w` read from its writer. Its writer preceding `w` in their
    /// session counts only with `session` (levels without sessions may
    /// order the two the other way).
    fn ordered_before(&self, old: Option<Version>, w: TxnNo, session: bool) -> Option<bool> {
        let Some(old) = old else {
            return Some(true);
        };
        let u = self.store.writer(old.csn);
        let (ur, wr) = (&self.txns[u as usize], &self.txns[w as usize]);
        let read = !ur.info
            && self
                .recent
                .get(wr.csn)
                .is_some_and(|r| r.reads.iter().any(|x| x.csn == old.csn));
        let so = !ur.info && ur.process == wr.process && ur.seq < wr.seq;
        if read || (so && session) {
            Some(true)
        } else if self.list {
            Some(so)
        } else {
            None
        }
    }

    /// The version a first read of `key` will see through the txn's view
    /// (a list's last element).
    fn planned_read(&self, a: &Active, key: u64) -> Option<Version> {
        let mut got = Vec::new();
        self.read_into(key, &a.view, None, &mut got);
        got.last().copied()
    }

    /// Faults at begin: stale session reads and long forks replace the view.
    pub(super) fn begin_faults(&mut self, s: usize, a: &mut Active) {
        if a.info {
            return;
        }
        if self.rate(Fault::StaleSessionRead) > 0.0
            && let Some((view, p, key)) = self.stale_candidate(s, a)
            && self.coin(Fault::StaleSessionRead)
        {
            let so1 = self.txns[p as usize].seq + 1 == self.txns[a.no as usize].seq;
            a.view = view;
            a.stale = true;
            let c4 = if so1 {
                "FracturedReadCO"
            } else {
                "COConflictAO"
            };
            Self::inject(
                a,
                Fault::StaleSessionRead,
                Some(c4),
                vec![a.no, p],
                vec![key],
            );
            return;
        }
        if self.rate(Fault::LongFork) > 0.0
            && let Some((hidden, txns, keys)) = self.long_fork_candidate(s, a)
            && self.coin(Fault::LongFork)
        {
            a.view = View::Prefix {
                upto: a.upto(),
                hidden,
            };
            Self::inject(a, Fault::LongFork, None, txns, keys);
        }
    }

    /// A session txn P that wrote a key this txn reads first: the view just
    /// before P (P's own view, for the causal store).
    fn stale_candidate(&self, s: usize, a: &Active) -> Option<(View, TxnNo, u64)> {
        if self.db == Db::Serializable && a.ops.iter().any(|o| !o.read) {
            return None;
        }
        for &pc in self.sessions[s].own.iter().rev().take(8) {
            let Some(rec) = self.recent.get(pc) else {
                continue;
            };
            let view = match self.db {
                Db::Serializable | Db::SnapshotIsolation | Db::Prefix => View::Prefix {
                    upto: pc - 1,
                    hidden: Vec::new(),
                },
                Db::ReadAtomic => View::Atomic {
                    upto: pc - 1,
                    extra: Default::default(),
                },
                Db::Causal | Db::ParallelSnapshotIsolation => View::Causal { vc: rec.vc.clone() },
                Db::ReadCommitted => return None,
            };
            for o in a.ops.iter().filter(|o| o.read && o.first) {
                if !rec.writes.contains(&o.key) {
                    continue;
                }
                let mut got = Vec::new();
                self.read_into(o.key, &view, None, &mut got);
                let old = got.last().copied();
                if old.is_some_and(|v| v.csn >= pc) {
                    continue;
                }
                if self.ordered_before(old, rec.txn, true).is_some() {
                    return Some((view, rec.txn, o.key));
                }
            }
        }
        None
    }

    /// Whether every hidden commit's versions come after every visible
    /// version of their keys (up to `upto`), so that a list read through
    /// the view stays a prefix of the key's order. The SI store's first
    /// committer wins makes it so; the prefix store lets a writer that
    /// missed T1 commit after it, and hiding T1 would then cut a list in
    /// the middle (`incompatible-order`, not a long fork).
    fn hidden_is_suffix(&self, hidden: &[Csn], upto: Csn) -> bool {
        hidden.iter().all(|&c| {
            self.recent.get(c).is_some_and(|rec| {
                rec.writes.iter().all(|&k| {
                    self.store
                        .versions(k)
                        .iter()
                        .all(|v| v.csn <= c || v.csn > upto || hidden.binary_search(&v.csn).is_ok())
                })
            })
        })
    }

    /// A long fork for this txn (R2): a committed R1 that read x from T1
    /// and an older y, where T2 wrote y concurrently with T1. R2 gets a view
    /// without T1 (and whatever saw T1), so it reads y from T2 and the x
    /// before T1. Returns the commits to hide, the txns [R2, R1, T1, T2] and
    /// the keys [x, y].
    fn long_fork_candidate(
        &self,
        s: usize,
        a: &Active,
    ) -> Option<(Vec<Csn>, Vec<TxnNo>, Vec<u64>)> {
        let upto = match &a.view {
            View::Prefix { upto, .. } => *upto,
            _ => return None,
        };
        let firsts: Vec<u64> = a
            .ops
            .iter()
            .filter(|o| o.read && o.first)
            .map(|o| o.key)
            .collect();
        if firsts.len() < 2 {
            return None;
        }
        let sess = &self.sessions[s];
        // The session's views so far: R2 must see everything they saw.
        let own_upto = match sess.own.last() {
            Some(&c) => Some(self.recent.get(c)?.upto),
            None => None,
        };
        for (_, r1) in self.recent.newest().take(256) {
            if self.txns[r1.txn as usize].info {
                continue;
            }
            for rx in r1
                .reads
                .iter()
                .filter(|r| r.csn != 0 && firsts.contains(&r.key))
            {
                let c1 = rx.csn;
                let t1 = self.store.writer(c1);
                if self.txns[t1 as usize].info
                    || self.txns[t1 as usize].process == sess.process
                    || own_upto.is_some_and(|u| u >= c1)
                {
                    continue;
                }
                // T1 and every writer that saw it.
                let mut hidden = vec![c1];
                let mut complete = true;
                for c in c1 + 1..=upto {
                    match self.recent.get(c) {
                        Some(r) if !r.writes.is_empty() && r.upto >= c1 => hidden.push(c),
                        Some(_) => {}
                        None => complete = false,
                    }
                }
                if !complete || (self.list && !self.hidden_is_suffix(&hidden, upto)) {
                    continue;
                }
                let view = View::Prefix {
                    upto,
                    hidden: hidden.clone(),
                };
                let mut got = Vec::new();
                self.read_into(rx.key, &view, None, &mut got);
                let x0 = got.last().copied();
                if x0.is_some_and(|v| v.csn >= c1) || self.ordered_before(x0, t1, false).is_none() {
                    continue;
                }
                for ry in r1
                    .reads
                    .iter()
                    .filter(|r| r.key != rx.key && firsts.contains(&r.key))
                {
                    self.read_into(ry.key, &view, None, &mut got);
                    let Some(y2) = got.last().copied() else {
                        continue;
                    };
                    let t2 = self.store.writer(y2.csn);
                    let concurrent = self.recent.get(y2.csn).is_some_and(|r| r.upto < c1);
                    if y2.csn <= r1.upto || !concurrent || self.txns[t2 as usize].info {
                        continue;
                    }
                    let old_y = (ry.csn != 0).then_some(Version {
                        csn: ry.csn,
                        val: ry.val,
                    });
                    if self.ordered_before(old_y, t2, false).is_some() {
                        return Some((hidden, vec![a.no, r1.txn, t1, t2], vec![rx.key, ry.key]));
                    }
                }
            }
        }
        None
    }

    /// Faults at an external read, in a fixed order. `got` holds what the
    /// read would return and is changed in place. True when the result is
    /// made up (thin air, aborted writes) rather than a committed version.
    pub(super) fn read_faults(&mut self, a: &mut Active, i: usize, got: &mut Vec<Version>) -> bool {
        if a.info || a.injected {
            return false;
        }
        let key = a.ops[i].key;
        // A fault that changes one read of a key the transaction reads
        // again would also make the two reads differ: a non-repeatable read
        // the ground truth does not record. So those faults go only to a
        // key read once. Tested after each coin, so that a seed draws the
        // same random numbers as before.
        let once = !a
            .ops
            .iter()
            .enumerate()
            .any(|(j, o)| j != i && o.read && o.key == key);
        if self.coin(Fault::ThinAirRead) && once {
            let v = u32::MAX - self.thin;
            self.thin += 1;
            if !self.list {
                got.clear();
            }
            got.push(Version {
                csn: FABRICATED,
                val: v,
            });
            Self::inject(
                a,
                Fault::ThinAirRead,
                Some("ThinAirRead"),
                vec![a.no],
                vec![key],
            );
            return true;
        }
        if self.rate(Fault::AbortedRead) > 0.0
            && let Some((w, vals)) = self.store.keys.get(&key).and_then(|k| k.aborted.clone())
            && self.coin(Fault::AbortedRead)
            && once
        {
            if !self.list {
                got.clear();
            }
            let shown = if self.list {
                &vals[..]
            } else {
                &vals[vals.len() - 1..]
            };
            got.extend(shown.iter().map(|&val| Version {
                csn: FABRICATED,
                val,
            }));
            Self::inject(
                a,
                Fault::AbortedRead,
                Some("AbortedRead"),
                vec![a.no, w],
                vec![key],
            );
            return true;
        }
        if self.rate(Fault::IntermediateRead) > 0.0
            && let Some(prev) = self.intermediate(key, got)
            && self.coin(Fault::IntermediateRead)
            && once
        {
            let w = self.store.writer(prev.csn);
            if self.list {
                got.pop();
            } else {
                *got = vec![prev];
            }
            Self::inject(
                a,
                Fault::IntermediateRead,
                Some("IntermediateRead"),
                vec![a.no, w],
                vec![key],
            );
            return false;
        }
        if self.rate(Fault::NonRepeatableRead) > 0.0
            && let Some(first) = a.first_read(key).copied()
        {
            let mut latest = Vec::new();
            self.read_into(key, &LATEST, None, &mut latest);
            if latest.last().map_or(0, |v| v.csn) != first.csn
                && self.coin(Fault::NonRepeatableRead)
            {
                *got = latest;
                a.rc_mode = true;
                Self::inject(
                    a,
                    Fault::NonRepeatableRead,
                    Some("NonRepeatableRead"),
                    vec![a.no],
                    vec![key],
                );
                return false;
            }
        }
        for fault in [Fault::FracturedRead, Fault::CausalityViolation] {
            if self.rate(fault) > 0.0
                && let Some(h) = self.hide_candidate(a, i, got, fault == Fault::CausalityViolation)
                && self.coin(fault)
                && once
            {
                got.retain(|v| v.csn != h.csn);
                if !self.list {
                    got.clear();
                    if let Some(j) = self.store.read_reg(key, &a.view, Some(h.csn)) {
                        got.push(self.store.versions(key)[j]);
                    }
                }
                a.hide = Some((key, h.csn));
                let (c4, txns) = if fault == Fault::FracturedRead {
                    (
                        if h.co {
                            "FracturedReadCO"
                        } else {
                            "FracturedReadAO"
                        },
                        vec![a.no, h.writer],
                    )
                } else {
                    (
                        if h.co { "COConflictAO" } else { "ConflictAO" },
                        vec![a.no, h.writer, h.via],
                    )
                };
                Self::inject(a, fault, Some(c4), txns, vec![key, h.other]);
                return false;
            }
        }
        false
    }

    /// The intermediate version behind what a read of `key` got: its
    /// writer wrote the key again in the same commit.
    fn intermediate(&self, key: u64, got: &[Version]) -> Option<Version> {
        let last = *got.last()?;
        if last.csn == 0 || last.csn == FABRICATED {
            return None;
        }
        if self.txns[self.store.writer(last.csn) as usize].info {
            return None;
        }
        let prev = if self.list {
            got[..got.len() - 1].last().copied()?
        } else {
            let vs = self.store.versions(key);
            let j = vs.iter().rposition(|v| *v == last)?;
            vs[j.checked_sub(1)?]
        };
        // A duplicated append is not an intermediate one.
        (prev.csn == last.csn && prev.val != last.val).then_some(prev)
    }

    /// For a fractured read (or, `causal`, a causality violation) at op `i`:
    /// hide the writer W of what the read got.
    ///
    /// Fractured: W also wrote a key y this txn reads first, later, from W.
    /// Causality: this txn reads nothing from W, but reads (before or later)
    /// some y from U, where U read from W.
    fn hide_candidate(&self, a: &Active, i: usize, got: &[Version], causal: bool) -> Option<Hide> {
        let x = a.ops[i].key;
        let last = *got.last()?;
        if last.csn == 0 || last.csn == FABRICATED {
            return None;
        }
        let (wcsn, w) = (last.csn, self.store.writer(last.csn));
        let wr = &self.txns[w as usize];
        if wr.info || a.ops.iter().any(|o| !o.read && o.key == x) {
            return None;
        }
        // The version the read falls back to.
        let old = if self.list {
            got.iter().rev().find(|v| v.csn != wcsn).copied()
        } else {
            self.store
                .read_reg(x, &a.view, Some(wcsn))
                .map(|j| self.store.versions(x)[j])
        };
        let old_csn = old.map_or(0, |v| v.csn);
        // Reading something newer than `old` from a writer of x earlier in
        // this txn would make the stale read non-monotonic (not read
        // committed).
        let newer: Vec<Csn> = self
            .store
            .versions(x)
            .iter()
            .filter(|v| v.csn > old_csn)
            .map(|v| v.csn)
            .collect();
        if a.reads.iter().any(|r| newer.contains(&r.csn)) {
            return None;
        }
        // So would having read from W already, in a list read after this
        // transaction's own appends (what it shows before them).
        if a.guards.iter().any(|g| g.1 == wcsn) {
            return None;
        }
        let co = self.ordered_before(old, w, false)?;
        let later = a.ops[i + 1..]
            .iter()
            .filter(|o| o.read && o.first && o.key != x);
        if !causal {
            for o in later {
                if self.planned_read(a, o.key).is_some_and(|v| v.csn == wcsn) {
                    return Some(Hide {
                        writer: w,
                        csn: wcsn,
                        other: o.key,
                        via: w,
                        co,
                    });
                }
            }
            return None;
        }
        let sess_proc = self.txns[a.no as usize].process;
        if wr.process == sess_proc {
            return None;
        }
        let w_keys = &self.recent.get(wcsn)?.writes;
        if a.ops
            .iter()
            .any(|o| o.read && o.key != x && w_keys.contains(&o.key))
        {
            return None;
        }
        // U read from W. (Following W in its session would do for causal
        // consistency, but plain SI could then order U before W.)
        let before_u = |u: TxnNo, ucsn: Csn| {
            u != w
                && !self.txns[u as usize].info
                && self
                    .recent
                    .get(ucsn)
                    .is_some_and(|r| r.reads.iter().any(|x| x.csn == wcsn))
        };
        let past = a.reads.iter().map(|r| (r.key, r.csn));
        let future = later.filter_map(|o| self.planned_read(a, o.key).map(|v| (o.key, v.csn)));
        for (y, ucsn) in past.chain(future) {
            if y == x || ucsn == 0 || ucsn == FABRICATED {
                continue;
            }
            let u = self.store.writer(ucsn);
            if before_u(u, ucsn) {
                return Some(Hide {
                    writer: w,
                    csn: wcsn,
                    other: y,
                    via: u,
                    co,
                });
            }
        }
        None
    }

    /// Lost update: commit despite write-write conflicts, when one of the
    /// conflicting keys was first read by this txn at the same version that
    /// another committed txn read before writing it.
    pub(super) fn lost_update(&mut self, a: &mut Active, conflicts: &[u64]) -> bool {
        if a.info || self.rate(Fault::LostUpdate) <= 0.0 {
            return false;
        }
        let mut witness = None;
        for &k in conflicts {
            let first_is_read = a.ops.iter().find(|o| o.key == k).is_some_and(|o| o.read);
            let Some(r) = a.first_read(k) else { continue };
            if !first_is_read {
                continue;
            }
            if let Some(&t) = self.lu_index.get(&(k, r.val))
                && t != a.no
                && !self.txns[t as usize].info
            {
                witness = Some((t, k));
                break;
            }
        }
        let Some((t, k)) = witness else {
            return false;
        };
        if !self.coin(Fault::LostUpdate) {
            return false;
        }
        Self::inject(a, Fault::LostUpdate, None, vec![t, a.no], vec![k]);
        true
    }

    /// Duplicate append: apply one of this txn's appends twice. Returns the
    /// op to duplicate: a final append to its key, so the txn's own reads
    /// (which show each own append once) stay prefixes of the key's order.
    pub(super) fn duplicate_append(&mut self, a: &Active) -> Option<usize> {
        if a.info || self.rate(Fault::DuplicateAppend) <= 0.0 {
            return None;
        }
        let ops = &a.ops;
        let i = (0..ops.len()).find(|&i| {
            !ops[i].read && !ops[i + 1..].iter().any(|o| !o.read && o.key == ops[i].key)
        })?;
        if self.dups.contains_key(&a.ops[i].key) || !self.coin(Fault::DuplicateAppend) {
            return None;
        }
        self.dups.insert(a.ops[i].key, (a.ops[i].val, a.no));
        Some(i)
    }
}
