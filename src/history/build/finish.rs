//! What is decided once the last transaction is in: each read resolved to
//! the write it observed, and for list-append each key's version order
//! settled (Elle's longest read where reads disagree), with the anomalies
//! only the whole history shows (`duplicate-elements`,
//! `incompatible-order`).
//!
//! Data flow: [`Builder::finish`] resolves pending reads through the write
//! index; `finish_orders` first rebases keys whose reads disagree on their
//! longest read and re-sorts which reads are irregular, then maps each
//! order's elements to their writes (finding repeats and unobserved writes)
//! and reports the incompatible orders, shortest list first.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::anomaly::{Anomaly, Datum, Field};
use crate::history::model::*;

use super::{Builder, PENDING};

impl Builder {
    /// Resolves reads-from and version orders, and returns the history with
    /// the anomalies compilation found.
    pub fn finish(mut self) -> (History, Vec<Anomaly>) {
        let list_mode = self.h.workload == Some(Workload::ListAppend);
        let zero = Val::int(0);
        // In blocks, each loaded up front (see `warm`).
        const BLOCK: usize = 16;
        for m in 0..self.h.mops.len() {
            if m % BLOCK == 0 {
                let end = (m + BLOCK).min(self.h.mops.len());
                let mut touch = 0u32;
                for mop in &self.h.mops[m..end] {
                    if mop.from == PENDING {
                        touch ^= self.write_index.touch(mop.key, mop.val);
                    }
                }
                std::hint::black_box(touch);
            }
            let mop = self.h.mops[m];
            if mop.from != PENDING {
                continue;
            }
            // A list read's value is its last element, which may be an
            // appended nil: only an empty list (or nil) is the initial state.
            let initial = if list_mode {
                mop.len == 0
            } else {
                mop.val == Val::NIL
            };
            let from = if initial {
                from::INITIAL
            } else if let Some(w) = self.write_index.get(mop.key, mop.val) {
                w
            } else if self.opts.zero_is_initial && Some(mop.val) == zero {
                from::INITIAL
            } else {
                from::THIN_AIR
            };
            self.h.mops[m].from = from;
        }
        if list_mode {
            self.finish_orders();
        } else {
            self.h.orders.clear();
        }
        if !self.repeated.is_empty() {
            super::repeated::resolve(
                &mut self.h,
                &mut self.anomalies,
                &self.repeated,
                self.opts.duplicates,
            );
        }
        (self.h, self.anomalies)
    }

    /// Where reads disagree, Elle takes the longest read as the version
    /// order; so do we, and re-sort which reads agree with it.
    fn rebase_orders(&mut self) {
        let mut keys: Vec<KeyId> = self.incompatible.keys().copied().collect();
        keys.sort_unstable();
        let h = &mut self.h;
        let mut old: FxHashMap<KeyId, Vec<Val>> = FxHashMap::default();
        for &k in &keys {
            let order = &h.orders[k as usize].elems;
            let longest = self.incompatible[&k]
                .iter()
                .map(|r| &h.irregular[r])
                .fold(order, |best, l| if l.len() > best.len() { l } else { best })
                .clone();
            if longest != *order {
                old.insert(
                    k,
                    std::mem::replace(&mut h.orders[k as usize].elems, longest),
                );
            }
        }
        if old.is_empty() {
            return;
        }
        for k in old.keys() {
            self.incompatible.insert(*k, Vec::new());
        }
        for i in 0..h.mops.len() {
            let m = h.mops[i];
            let Some(prev) = old.get(&m.key) else {
                continue;
            };
            if !m.is_read() || m.from == from::UNKNOWN {
                continue;
            }
            let id = i as MopId;
            let list = if m.has(flag::IRREGULAR) {
                h.irregular.remove(&id).unwrap_or_default()
            } else {
                prev[..(m.len as usize).min(prev.len())].to_vec()
            };
            let mop = &mut h.mops[i];
            if h.orders[m.key as usize].elems.starts_with(&list) {
                mop.flags &= !flag::IRREGULAR;
                mop.len = list.len() as u32;
            } else {
                mop.flags |= flag::IRREGULAR;
                mop.len = list.len() as u32;
                h.irregular.insert(id, list);
                self.incompatible.entry(m.key).or_default().push(id);
            }
        }
    }

    fn finish_orders(&mut self) {
        self.rebase_orders();
        let h = &mut self.h;
        // A bit per micro-op (a byte each would not stay in cache).
        let mut in_order = vec![0u64; h.mops.len().div_ceil(64)];
        for (k, order) in h.orders.iter_mut().enumerate() {
            let k = k as KeyId;
            let mut seen_thin: FxHashSet<Val> = FxHashSet::default();
            order.writes = Vec::with_capacity(order.elems.len());
            order.repeats.clear();
            let mut dups: Vec<Val> = Vec::new();
            for &e in &order.elems {
                let w = self.write_index.get(k, e);
                let dup = match w {
                    Some(w) => {
                        let (word, bit) = (w as usize / 64, 1u64 << (w % 64));
                        let seen = in_order[word] & bit != 0;
                        in_order[word] |= bit;
                        seen
                    }
                    None => !seen_thin.insert(e),
                };
                if dup {
                    order.repeats.push(order.writes.len() as u32);
                    if !dups.contains(&e) {
                        dups.push(e);
                    }
                }
                order.writes.push(w.unwrap_or(from::THIN_AIR));
            }
            if !dups.is_empty() {
                self.anomalies
                    .push(duplicates_anomaly(&h.mops, k, order, &dups));
            }
        }
        for (id, m) in h.mops.iter().enumerate() {
            if m.is_write()
                && in_order[id / 64] & (1u64 << (id % 64)) == 0
                && h.txns[m.txn as usize].status != Status::Aborted
            {
                h.orders[m.key as usize].unobserved.push(id as MopId);
            }
        }
        let mut keys: Vec<_> = self.incompatible.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            let reads = &self.incompatible[&k];
            let mut lists: Vec<Vec<Val>> = vec![h.orders[k as usize].elems.clone()];
            for r in reads {
                let l = &h.irregular[r];
                if !lists.contains(l) {
                    lists.push(l.clone());
                }
            }
            // As Elle lists them: shortest first.
            lists.sort_by_key(Vec::len);
            let mut a = Anomaly::new(crate::spec::AnomalyType::IncompatibleOrder)
                .field(Field::Key, Datum::Key(k))
                .field(
                    Field::Values,
                    Datum::List(lists.into_iter().map(Datum::Vals).collect()),
                );
            // The first read that shows the key's whole order, so that
            // every list is named by a read (the order's own was not).
            let whole = h.orders[k as usize].elems.len();
            if let Some(m) = h.mops.iter().find(|m| {
                m.is_read() && m.key == k && !m.has(flag::IRREGULAR) && m.len as usize == whole
            }) {
                a = a.txn(m.txn);
            }
            for &r in reads {
                a = a.txn(h.mops[r as usize].txn);
            }
            self.anomalies.push(a);
        }
    }
}

/// Elle's duplicate-elements: a read that shows an element twice.
fn duplicates_anomaly(mops: &[Mop], k: KeyId, order: &VersionOrder, dups: &[Val]) -> Anomaly {
    // The shortest read that already shows the first duplicate twice.
    let second = order
        .elems
        .iter()
        .enumerate()
        .filter(|(_, e)| **e == dups[0])
        .nth(1)
        .map_or(0, |(i, _)| i);
    let reader = mops
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.is_read() && m.key == k && !m.has(flag::IRREGULAR) && m.len as usize > second
        })
        .min_by_key(|(_, m)| m.len);
    let mut a =
        Anomaly::new(crate::spec::AnomalyType::DuplicateElements).field(Field::Key, Datum::Key(k));
    if let Some((id, m)) = reader {
        a = a
            .txn(m.txn)
            .field(Field::Op, Datum::Txn(m.txn))
            .field(Field::Mop, Datum::Mop(id as MopId));
    }
    let counts = dups
        .iter()
        .map(|d| {
            let n = order.elems.iter().filter(|e| *e == d).count() as i64;
            (Datum::Val(*d), Datum::Int(n))
        })
        .collect();
    a.field(Field::Duplicates, Datum::Map(counts))
}
