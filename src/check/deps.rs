//! The dependencies every graph checker starts from: which transactions
//! take part, session order, real time, write-read edges from external
//! reads, and the write orders list reads reveal.

use rustc_hash::FxHashSet;

use crate::history::model::*;

/// What read micro-op `i` observed from outside its transaction: the
/// write (or a [`from`] constant) an external read returned; for a list
/// read after its transaction's own appends to the key, which it shows
/// last, the write of the element before them (or the initial state).
/// `None` for a read that shows nothing from outside.
pub fn outside_from(h: &History, i: usize) -> Option<u32> {
    let m = &h.mops[i];
    if !m.is_read() {
        return None;
    }
    if m.has(flag::EXTERNAL) {
        return Some(m.from);
    }
    if m.has(flag::IRREGULAR) || m.observed().is_none() {
        return None;
    }
    let start = h.txns[m.txn as usize].start as usize;
    let own = h.mops[start..i]
        .iter()
        .filter(|p| p.is_write() && p.key == m.key)
        .count();
    let len = m.len as usize;
    if own == 0 || len < own {
        return None;
    }
    let writes = &h.orders.get(m.key as usize)?.writes;
    let tail = writes.get(len - own..len)?;
    if !tail
        .iter()
        .all(|&w| w < from::THIN_AIR && h.txn_of(w) == m.txn)
    {
        return None;
    }
    Some(if len == own {
        from::INITIAL
    } else {
        writes[len - own - 1]
    })
}

/// The transaction read micro-op `i` of `t3` observed from outside (see
/// [`outside_from`]), if it is another one.
pub fn external_source(h: &History, i: usize, t3: TxnId) -> Option<TxnId> {
    let w = outside_from(h, i)?;
    if w >= from::THIN_AIR {
        return None;
    }
    let t = h.txn_of(w);
    (t != t3 && h.txns[t as usize].status != Status::Aborted).then_some(t)
}

/// Which transactions take part: committed ones, and indeterminate ones
/// somebody read from (those took effect). Aborted transactions and unread
/// indeterminate ones are left out. A committed list read shows every
/// append up to its length, not only its last element: an indeterminate
/// append anywhere in it took effect too (even when the read's last
/// element is the reader's own append). An indeterminate transaction a
/// read may have observed ([`History::candidates`]) takes part too: had it
/// not committed, nothing read from it, and placed after everything it
/// orders nothing (its reads are unknown, it ends its session, it never
/// completed), so including it never makes a violation.
pub fn included(h: &History) -> Vec<bool> {
    let mut inc: Vec<bool> = h
        .txns
        .iter()
        .map(|t| t.status == Status::Committed)
        .collect();
    // Per list-append key, the longest committed regular read.
    let mut seen = vec![0u32; h.orders.len()];
    for (i, m) in h.mops.iter().enumerate() {
        if h.txns[m.txn as usize].status != Status::Committed || !m.is_read() {
            continue;
        }
        if let Some(w) = outside_from(h, i).filter(|&w| w < from::THIN_AIR) {
            let t = h.txn_of(w);
            if t != m.txn && h.txns[t as usize].status == Status::Indeterminate {
                inc[t as usize] = true;
            }
        }
        if m.from != from::UNKNOWN
            && !m.has(flag::IRREGULAR)
            && let Some(s) = seen.get_mut(m.key as usize)
        {
            *s = (*s).max(m.len);
        }
    }
    for (&r, ws) in &h.candidates {
        if h.txns[h.txn_of(r) as usize].status != Status::Committed {
            continue;
        }
        for &w in ws {
            let t = h.txn_of(w);
            if h.txns[t as usize].status == Status::Indeterminate {
                inc[t as usize] = true;
            }
        }
    }
    for (o, &len) in h.orders.iter().zip(&seen) {
        for &w in o.writes.iter().take(len as usize) {
            if w < from::THIN_AIR {
                let t = h.txn_of(w);
                if h.txns[t as usize].status == Status::Indeterminate {
                    inc[t as usize] = true;
                }
            }
        }
    }
    inc
}

/// Session-order edges between consecutive included transactions of each
/// session.
pub fn so_edges(h: &History, inc: &[bool]) -> Vec<(u32, u32)> {
    let mut e = Vec::new();
    for s in &h.sessions {
        let mut prev: Option<TxnId> = None;
        for &t in &s.txns {
            if inc[t as usize] {
                if let Some(p) = prev {
                    e.push((p, t));
                }
                prev = Some(t);
            }
        }
    }
    e
}

/// Write-read edges `(writer, reader)` among included transactions: a
/// committed reader after each transaction it read from externally (sorted,
/// without repeats).
pub fn wr_edges(h: &History, inc: &[bool]) -> Vec<(u32, u32)> {
    wr_edges_of(h, inc, |_| true)
}

/// [`wr_edges`] of the read micro-ops `read` keeps.
pub fn wr_edges_of(h: &History, inc: &[bool], read: impl Fn(usize) -> bool) -> Vec<(u32, u32)> {
    let mut e = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        let t = t as TxnId;
        if !inc[t as usize] || txn.status != Status::Committed {
            continue;
        }
        for i in txn.mops() {
            if read(i)
                && let Some(src) = external_source(h, i, t)
                && inc[src as usize]
            {
                e.push((src, t));
            }
        }
    }
    e.sort_unstable();
    e.dedup();
    e
}

/// Whether [`so_edges`] has any: some session holds two included
/// transactions.
pub fn has_session_order(h: &History, inc: &[bool]) -> bool {
    h.sessions
        .iter()
        .any(|s| s.txns.iter().filter(|&&t| inc[t as usize]).nth(1).is_some())
}

/// Whether [`realtime_edges`] has any: some included transaction
/// completed (ok) before another was invoked. Linear, nothing built.
pub fn has_realtime(h: &History, inc: &[bool]) -> bool {
    let timed = || {
        h.txns
            .iter()
            .zip(inc)
            .filter(|&(t, &i)| i && t.invoke.is_some())
            .map(|(t, _)| t)
    };
    let first_done = timed()
        .filter(|t| t.status == Status::Committed)
        .map(|t| t.complete.index)
        .min();
    let last_invoked = timed().filter_map(|t| t.invoke).map(|p| p.index).max();
    matches!((first_done, last_invoked), (Some(d), Some(i)) if d < i)
}

/// Real-time order as Elle builds it: an almost transitively reduced set
/// of edges `a -> b` for `a` completed (ok) before `b` was invoked. Scanning
/// ops in history order, completed transactions wait in a buffer until a
/// later completion covers them. Indeterminate transactions never complete,
/// so nothing follows them in real time.
pub fn realtime_edges(h: &History, inc: &[bool]) -> Vec<(u32, u32)> {
    // (history index, is completion, txn)
    let mut events: Vec<(i64, bool, TxnId)> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if !inc[t] {
            continue;
        }
        let Some(inv) = txn.invoke else { continue };
        events.push((inv.index, false, t as TxnId));
        if txn.status == Status::Committed {
            events.push((txn.complete.index, true, t as TxnId));
        }
    }
    events.sort_unstable();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); h.txns.len()];
    let mut buf: Vec<TxnId> = Vec::new();
    let mut edges = Vec::new();
    for (_, done, t) in events {
        if !done {
            for &x in &buf {
                edges.push((x, t));
                preds[t as usize].push(x);
            }
        } else {
            let covered = &preds[t as usize];
            buf.retain(|x| !covered.contains(x));
            buf.push(t);
        }
    }
    edges
}

/// Whether the dependency graph has an edge: some committed read of a key
/// that another transaction (not aborted) writes, which gives a
/// write-read or an anti-dependency edge. Without one, as in Elle's
/// `:empty-transaction-graph`, nothing could be checked.
pub fn has_edges(h: &History) -> bool {
    // Per key: one reader and one writer seen, and whether there were
    // others.
    let mut reader: Vec<Option<TxnId>> = vec![None; h.keys.len()];
    let mut writer: Vec<Option<TxnId>> = vec![None; h.keys.len()];
    let mut many_r = vec![false; h.keys.len()];
    let mut many_w = vec![false; h.keys.len()];
    for m in &h.mops {
        let k = m.key as usize;
        let status = h.txns[m.txn as usize].status;
        let (slot, many) = if m.is_read() && status == Status::Committed {
            (&mut reader, &mut many_r)
        } else if m.is_write() && status != Status::Aborted {
            (&mut writer, &mut many_w)
        } else {
            continue;
        };
        let Some(s) = slot.get_mut(k) else { continue };
        match *s {
            None => *s = Some(m.txn),
            Some(t) if t != m.txn => many[k] = true,
            Some(_) => {}
        }
    }
    (0..h.keys.len()).any(|k| match (reader[k], writer[k]) {
        (Some(r), Some(w)) => r != w || many_r[k] || many_w[k],
        _ => false,
    })
}

/// Write-write edges the list-append version orders reveal. Along the
/// observed prefix (the longest read) consecutive writers are ordered. An
/// append no read observed still follows every observed element (a list
/// read shows all appends ordered before its last element, and no read
/// shows this one), so the last observed writer precedes each unread
/// append's writer; the unread appends' order among themselves is
/// unknown, so none is claimed. On keys whose reads disagree (an
/// incompatible order, reported as such) only the longest read's order is
/// taken, as Elle does. On rw-register histories, the write orders
/// Elle's key options infer ([`super::keys`]).
pub fn ww_edges(h: &History, inc: &[bool]) -> Vec<(u32, u32)> {
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
    // The write orders Elle's key options infer (rw-register).
    for &(_, a, b) in &super::keys::inferred(h).ww {
        let (a, b) = (h.txn_of(a), h.txn_of(b));
        if inc[a as usize] && inc[b as usize] {
            e.push((a, b));
        }
    }
    e.sort_unstable();
    e.dedup();
    e
}

/// Keys some list read disagrees on (an incompatible order).
pub fn incompatible_keys(h: &History) -> FxHashSet<KeyId> {
    h.irregular
        .keys()
        .map(|&r| h.mops[r as usize].key)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::GenOptions;
    use crate::history::Format;

    #[test]
    fn has_realtime_and_has_session_order_say_whether_either_has_an_edge() {
        // Jepsen histories (invocations), one session each (every pair
        // concurrent or not), and text histories (no invocations).
        let cases = [
            (5, Format::Edn, true),
            (1, Format::Edn, true),
            (5, Format::Text, false),
        ];
        for (sessions, format, expect) in cases {
            let h = super::super::tests::generated(&GenOptions {
                sessions,
                txns_per_session: 20,
                ops_per_txn: 3,
                keys: 5,
                workload: Workload::RwRegister,
                format,
                ..GenOptions::default()
            });
            let inc = included(&h);
            let edges = !realtime_edges(&h, &inc).is_empty();
            assert_eq!(has_realtime(&h, &inc), edges, "{sessions} {format:?}");
            assert_eq!(edges, expect, "{sessions} {format:?}");
            assert_eq!(has_session_order(&h, &inc), !so_edges(&h, &inc).is_empty());
        }
        // A single transaction orders nothing.
        let h = super::super::tests::generated(&GenOptions {
            sessions: 1,
            txns_per_session: 1,
            ops_per_txn: 2,
            workload: Workload::RwRegister,
            ..GenOptions::default()
        });
        let inc = included(&h);
        assert!(!has_realtime(&h, &inc) && realtime_edges(&h, &inc).is_empty());
        assert!(!has_session_order(&h, &inc) && so_edges(&h, &inc).is_empty());
    }
}
