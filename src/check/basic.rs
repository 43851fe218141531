//! Anomalies visible without a dependency graph: reads of aborted writes
//! (G1a), of intermediate writes (G1b, and the G-single-item each is), of
//! values nobody wrote, list reads showing a state that never was, dirty
//! updates, and Elle's linear-time lost-update detector.
//!
//! Reads inside aborted or indeterminate transactions returned nothing we
//! can trust, so only committed reads are examined.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::anomaly::{Anomaly, Datum, Field, On, Path, Rel, Step};
use crate::history::model::*;

/// All non-graph anomalies of a compiled history.
pub fn anomalies(h: &History) -> Vec<Anomaly> {
    let mut out = Vec::new();
    match h.workload {
        Some(Workload::ListAppend) => {
            list_reads(h, &mut out);
            skipped_appends(h, &mut out);
        }
        _ => register_reads(h, &mut out),
    }
    intermediate_reads(h, &mut out);
    if h.workload == Some(Workload::ListAppend) {
        dirty_updates(h, &mut out);
    }
    lost_updates(h, &mut out);
    out.extend(super::keys::anomalies(h));
    out
}

fn committed_reads(h: &History) -> impl Iterator<Item = (MopId, &Mop)> {
    h.mops.iter().enumerate().filter_map(move |(i, m)| {
        (m.is_read()
            && m.from != from::UNKNOWN
            && h.txns[m.txn as usize].status == Status::Committed)
            .then_some((i as MopId, m))
    })
}

fn aborted_read(h: &History, reader: &Mop, r: MopId, w: MopId, element: Option<Val>) -> Anomaly {
    let writer = h.txn_of(w);
    let mut a = Anomaly::new(crate::spec::AnomalyType::G1a)
        .pattern(crate::spec::Pattern::AbortedRead)
        .txn(reader.txn)
        .txn(writer)
        .field(Field::Op, Datum::Txn(reader.txn))
        .field(Field::Mop, Datum::Mop(r))
        .field(Field::Writer, Datum::Txn(writer));
    if let Some(e) = element {
        a = a.field(Field::Element, Datum::Val(e));
    }
    a
}

fn thin_air(reader: &Mop, r: MopId, element: Val) -> Anomaly {
    Anomaly::new(crate::spec::AnomalyType::ThinAirRead)
        .pattern(crate::spec::Pattern::ThinAirRead)
        .txn(reader.txn)
        .field(Field::Op, Datum::Txn(reader.txn))
        .field(Field::Mop, Datum::Mop(r))
        .field(Field::Element, Datum::Val(element))
}

fn register_reads(h: &History, out: &mut Vec<Anomaly>) {
    for (r, m) in committed_reads(h) {
        if m.from == from::THIN_AIR {
            out.push(thin_air(m, r, m.val));
        } else if let Some(w) = m.observed()
            && h.txns[h.txn_of(w) as usize].status == Status::Aborted
            && h.txn_of(w) != m.txn
        {
            out.push(aborted_read(h, m, r, w, None));
        }
    }
}

/// Elle reports G1a once per element of a read list that an aborted
/// transaction appended, and we do the same for elements nobody appended.
/// Every element of a regular read is a prefix position of its key's
/// order, so only keys whose order holds such an element need a look.
fn list_reads(h: &History, out: &mut Vec<Anomaly>) {
    let bad_pos = |k: KeyId| -> Vec<usize> {
        let o = &h.orders[k as usize];
        o.writes
            .iter()
            .enumerate()
            .filter(|&(_, &w)| {
                w == from::THIN_AIR || h.txns[h.txn_of(w) as usize].status == Status::Aborted
            })
            .map(|(i, _)| i)
            .collect()
    };
    let mut bad: FxHashMap<KeyId, Vec<usize>> = FxHashMap::default();
    for k in 0..h.orders.len() as KeyId {
        let p = bad_pos(k);
        if !p.is_empty() {
            bad.insert(k, p);
        }
    }
    // Irregular reads hold elements outside their key's order: find their
    // writers by value, for those keys only.
    let irregular_keys: FxHashSet<KeyId> = h
        .irregular
        .keys()
        .map(|&r| h.mops[r as usize].key)
        .collect();
    let mut by_value: FxHashMap<(KeyId, Val), MopId> = FxHashMap::default();
    if !irregular_keys.is_empty() {
        for (i, m) in h.mops.iter().enumerate() {
            if m.is_write() && irregular_keys.contains(&m.key) {
                by_value.insert((m.key, m.val), i as MopId);
            }
        }
    }
    for (r, m) in committed_reads(h) {
        if m.has(flag::IRREGULAR) {
            let elems = h.irregular.get(&r).map_or(&[][..], |v| v);
            // An element shown twice (a duplicate-elements of its own) is
            // one read of it: told once.
            let mut seen: FxHashSet<Val> = FxHashSet::default();
            for &e in elems {
                if !seen.insert(e) {
                    continue;
                }
                match by_value.get(&(m.key, e)) {
                    Some(&w) => {
                        if h.txns[h.txn_of(w) as usize].status == Status::Aborted
                            && h.txn_of(w) != m.txn
                        {
                            out.push(aborted_read(h, m, r, w, Some(e)));
                        }
                    }
                    None => out.push(thin_air(m, r, e)),
                }
            }
            continue;
        }
        let Some(positions) = bad.get(&m.key) else {
            continue;
        };
        let o = &h.orders[m.key as usize];
        let mut seen: FxHashSet<Val> = FxHashSet::default();
        for &p in positions.iter().take_while(|&&p| p < m.len as usize) {
            let w = o.writes[p];
            if !seen.insert(o.elems[p]) {
                continue;
            }
            if w == from::THIN_AIR {
                out.push(thin_air(m, r, o.elems[p]));
            } else if h.txn_of(w) != m.txn {
                out.push(aborted_read(h, m, r, w, Some(o.elems[p])));
            }
        }
    }
}

/// A committed list read that shows a state no execution produces, given
/// one transaction's appends to the key:
///
/// - an append without, before it, an append that transaction made
///   earlier to the key: `[2]` (or `[2 1]`) after one transaction appended
///   1 then 2;
/// - an append that was not the transaction's last to the key, followed by
///   another transaction's element: `[1 3]` after one appended 1 then 2
///   (another's 3 went onto a state that existed only inside the first;
///   the reader may be the one that appended 3, its own append read
///   back over that state).
///
/// Elle has no name of its own for either; its nearest is
/// `incompatible-order`: the read and the writer's own appends (1 before
/// 2) are two views of the key's list that no single order explains.
/// Reported once per such position in a key's order, by its shortest
/// committed reader other than the writer, with both views as `:values`.
/// (Where a read shows the writer's later append too, `[1 3 2]`, the order
/// itself is a write cycle, told as G0 by the dependency graph; a read
/// that ends at the earlier append, `[1]`, is a G1b.)
fn skipped_appends(h: &History, out: &mut Vec<Anomaly>) {
    // Each write's first position in its key's order.
    const ABSENT: u32 = u32::MAX;
    let mut pos = vec![ABSENT; h.mops.len()];
    for o in &h.orders {
        for (p, &w) in o.writes.iter().enumerate() {
            if w < from::THIN_AIR && pos[w as usize] == ABSENT {
                pos[w as usize] = p as u32;
            }
        }
    }
    // Per key, the (position, writer) whose list never was.
    let mut bad: FxHashMap<KeyId, Vec<(u32, TxnId)>> = FxHashMap::default();
    // Per key, within one transaction: the furthest position of its
    // appends so far, or ABSENT once one is missing from the order; and
    // the position of its last append so far.
    let mut furthest: FxHashMap<KeyId, (u32, u32)> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        furthest.clear();
        for (i, m) in h.mops[txn.mops()].iter().enumerate() {
            if !m.is_write() {
                continue;
            }
            let p = pos[txn.start as usize + i];
            if let Some(&(f, last)) = furthest.get(&m.key) {
                if p != ABSENT && (f == ABSENT || f > p) {
                    bad.entry(m.key).or_default().push((p, t as TxnId));
                }
                // The earlier append is followed by another transaction's
                // element (not a repeat of an earlier one), and this one
                // is nowhere in the order (where it is, further on, the
                // order is a write cycle, which the graph tells). Not for
                // an aborted writer, whose appends never took effect (a
                // read of one is its G1a).
                let next = last.wrapping_add(1);
                if last != ABSENT
                    && p == ABSENT
                    && txn.status != Status::Aborted
                    && let Some(o) = h.orders.get(m.key as usize)
                    && (next as usize) < o.writes.len()
                    && !o.repeats.contains(&next)
                    && o.writes[next as usize] < from::THIN_AIR
                    && h.txn_of(o.writes[next as usize]) != t as TxnId
                {
                    bad.entry(m.key).or_default().push((next, t as TxnId));
                }
            }
            let e = furthest.entry(m.key).or_insert((p, p));
            if p == ABSENT || e.0 != ABSENT && p > e.0 {
                e.0 = p;
            }
            e.1 = p;
        }
    }
    if bad.is_empty() {
        return;
    }
    for ps in bad.values_mut() {
        ps.sort_unstable();
        ps.dedup();
    }
    // The shortest committed regular reader of each bad position, other
    // than the transaction whose appends it contradicts.
    let mut first: FxHashMap<(KeyId, u32, TxnId), (u32, MopId)> = FxHashMap::default();
    for (r, m) in committed_reads(h) {
        let Some(ps) = bad.get(&m.key) else { continue };
        if m.has(flag::IRREGULAR) {
            continue;
        }
        for &(p, writer) in ps.iter().take_while(|&&(p, _)| p < m.len) {
            if writer == m.txn {
                continue;
            }
            let e = first.entry((m.key, p, writer)).or_insert((m.len, r));
            if m.len < e.0 {
                *e = (m.len, r);
            }
        }
    }
    let mut found: Vec<_> = first.into_iter().collect();
    found.sort_unstable();
    for ((k, _, writer), (len, r)) in found {
        let o = &h.orders[k as usize];
        let reader = h.mops[r as usize].txn;
        let appended: Vec<Val> = h.mops[h.txns[writer as usize].mops()]
            .iter()
            .filter(|m| m.is_write() && m.key == k)
            .map(|m| m.val)
            .collect();
        out.push(
            Anomaly::new(crate::spec::AnomalyType::IncompatibleOrder)
                .txn(reader)
                .txn(writer)
                .field(Field::Key, Datum::Key(k))
                .field(
                    Field::Values,
                    Datum::List(vec![
                        Datum::Vals(o.elems[..len as usize].to_vec()),
                        Datum::Vals(appended),
                    ]),
                )
                .field(Field::Op, Datum::Txn(reader))
                .field(Field::Mop, Datum::Mop(r))
                .field(Field::Writer, Datum::Txn(writer)),
        );
    }
}

/// G1b: a committed read observes a write its writer later overwrote.
/// Each is a G-single-item too, as Elle's list-append graph has it (a
/// version per append): the reader read the writer's version (wr), and the
/// next version is the writer's own later write, which the reader did not
/// see (rw). Every model that prohibits a G-single-item prohibits G1b
/// already; anomalies asked for by name may not (`-a G-single`).
fn intermediate_reads(h: &History, out: &mut Vec<Anomaly>) {
    for (r, m) in committed_reads(h) {
        let Some(w) = m.observed() else { continue };
        let wm = &h.mops[w as usize];
        let writer = wm.txn;
        if writer != m.txn && !wm.has(flag::FINAL) {
            if let Some(next) = (w as usize + 1..h.txns[writer as usize].mops().end)
                .map(|i| &h.mops[i])
                .find(|x| x.is_write() && x.key == wm.key)
            {
                out.push(
                    Anomaly::new(crate::spec::AnomalyType::GSingleItem)
                        .txn(writer)
                        .txn(m.txn)
                        .cycle(Path {
                            txns: vec![writer, m.txn, writer],
                            steps: vec![
                                Step::new(Rel::Wr, On::Read(wm.key, wm.val)),
                                Step::new(Rel::Rw, On::Versions(wm.key, Some(wm.val), next.val)),
                            ],
                        }),
                );
            }
            let mut a = Anomaly::new(crate::spec::AnomalyType::G1b)
                .pattern(crate::spec::Pattern::IntermediateRead)
                .txn(m.txn)
                .txn(writer)
                .field(Field::Op, Datum::Txn(m.txn))
                .field(Field::Mop, Datum::Mop(r))
                .field(Field::Writer, Datum::Txn(writer));
            if h.workload == Some(Workload::ListAppend) {
                a = a.field(Field::Element, Datum::Val(wm.val));
            }
            out.push(a);
        }
    }
}

/// Elle's dirty update: in a key's version order, a committed append
/// follows appends of aborted transactions (indeterminate ones in between
/// neither start nor end the run).
fn dirty_updates(h: &History, out: &mut Vec<Anomaly>) {
    for (k, o) in h.orders.iter().enumerate() {
        let mut run: Option<usize> = None;
        for (i, &w) in o.writes.iter().enumerate() {
            let status = if w == from::THIN_AIR {
                Status::Indeterminate
            } else {
                h.txns[h.txn_of(w) as usize].status
            };
            match status {
                Status::Aborted => {
                    run.get_or_insert(i);
                }
                Status::Committed => {
                    if let Some(s) = run.take() {
                        let first = h.txn_of(o.writes[s]);
                        let last = h.txn_of(w);
                        out.push(
                            Anomaly::new(crate::spec::AnomalyType::DirtyUpdate)
                                .txn(first)
                                .txn(last)
                                .field(Field::Key, Datum::Key(k as KeyId))
                                .field(Field::Values, Datum::Vals(o.elems[s..=i].to_vec()))
                                .field(
                                    Field::Txns,
                                    Datum::List(vec![
                                        Datum::Txn(first),
                                        Datum::Sym("...".into()),
                                        Datum::Txn(last),
                                    ]),
                                ),
                        );
                    }
                }
                Status::Indeterminate => {}
            }
        }
    }
}

/// Elle's lost update: two committed transactions read the same version of
/// a key and both then write it. Needs no version order.
fn lost_updates(h: &History, out: &mut Vec<Anomaly>) {
    for ((k, v), ts) in lost_update_groups(h) {
        let value = if v == from::INITIAL {
            Datum::Nil
        } else if h.workload == Some(Workload::ListAppend) {
            let o = &h.orders[k as usize];
            let upto = o.writes.iter().position(|&w| w == v).map_or(0, |p| p + 1);
            Datum::Vals(o.elems[..upto].to_vec())
        } else {
            Datum::Val(h.mops[v as usize].val)
        };
        let mut a = Anomaly::new(crate::spec::AnomalyType::LostUpdate)
            .field(Field::Key, Datum::Key(k))
            .field(Field::Value, value)
            .field(
                Field::Txns,
                Datum::List(ts.iter().map(|&t| Datum::Txn(t)).collect()),
            );
        for t in ts {
            a = a.txn(t);
        }
        out.push(a);
    }
}

/// The lost updates' groups: (key, the version read: the micro-op that
/// wrote it, or [`from::INITIAL`]) and the committed transactions that
/// read it and then wrote the key (two or more), by their first.
pub(crate) fn lost_update_groups(h: &History) -> Vec<((KeyId, u32), Vec<TxnId>)> {
    let mut groups: FxHashMap<(KeyId, u32), Vec<TxnId>> = FxHashMap::default();
    let mut first_read: FxHashMap<KeyId, u32> = FxHashMap::default();
    let mut wrote: Vec<KeyId> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.status != Status::Committed {
            continue;
        }
        first_read.clear();
        wrote.clear();
        for i in txn.mops() {
            let m = &h.mops[i];
            if m.is_read() {
                // A read that may have observed any of several writes
                // (dbcop's duplicates) read no version for certain.
                if (m.has(flag::EXTERNAL) && !m.has(flag::IRREGULAR) && m.from < from::THIN_AIR
                    || m.from == from::INITIAL)
                    && !h.candidates.contains_key(&(i as MopId))
                {
                    first_read.entry(m.key).or_insert(m.from);
                }
            } else if let Some(&v) = first_read.get(&m.key)
                && !wrote.contains(&m.key)
            {
                wrote.push(m.key);
                groups.entry((m.key, v)).or_default().push(t as TxnId);
            }
        }
    }
    let mut found: Vec<_> = groups.into_iter().filter(|(_, ts)| ts.len() > 1).collect();
    found.sort_unstable_by_key(|((k, v), ts)| (ts[0], *k, *v));
    found
}
