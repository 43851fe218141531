//! Register values written more than once to one key, once every read is
//! resolved: the exact semantics (each read of such a value may have
//! observed any write of it that could have been read), and the policies
//! ([`Duplicates`]) as views of it. Every format compiled by the builder
//! comes here: Jepsen EDN and elle-cli JSON, the text format, dbcop's and
//! Cobra's logs that name versions by value, the JNI bridge's encoding.
//!
//! Data flow: the builder keeps every write under its value, points the
//! write index at the last writer in file order, and hands over the pairs
//! it saw written twice; [`resolve`] gives each transaction's reads of its
//! own writes back to it, records each other read's candidates
//! ([`History::candidates`]; its `from` becomes the last, the guess the
//! other checkers read), and applies the policy ([`Repeated`] records it).
//! [`drop_ambiguous`] derives, from any of the views, the history without
//! the ambiguous reads (what `check` re-checks a guessed violation on).

use rustc_hash::{FxHashMap, FxHashSet};

use crate::anomaly::{Anomaly, Datum, Field};
use crate::history::model::*;

/// Applies the policy to `h`, whose writes of `pairs` (key, value) are
/// more than one (see the module doc). Under [`Duplicates::Reject`] the
/// builder refused them already.
pub(super) fn resolve(
    h: &mut History,
    anomalies: &mut Vec<Anomaly>,
    pairs: &FxHashSet<(KeyId, Val)>,
    policy: Duplicates,
) {
    let mut writers: FxHashMap<(KeyId, Val), Vec<MopId>> = FxHashMap::default();
    for (i, m) in h.mops.iter().enumerate() {
        if m.is_write() && pairs.contains(&(m.key, m.val)) {
            writers.entry((m.key, m.val)).or_default().push(i as MopId);
        }
    }
    own_reads(h, &writers);
    attach_candidates(h, anomalies, &writers);
    let mut ambiguous: Vec<MopId> = h.candidates.keys().copied().collect();
    ambiguous.sort_unstable();
    match policy {
        Duplicates::LastWriter => h.candidates.clear(),
        Duplicates::DropReads => leave_out(h, &ambiguous),
        Duplicates::Any | Duplicates::Reject => {}
    }
    h.repeated = Some(Repeated {
        policy,
        pairs: writers.len() as u64,
        ambiguous,
    });
}

/// A transaction's read of a value it wrote earlier to the key reads that
/// write (its last such), whatever others wrote the same value: the
/// builder's index points at the last writer in the whole file.
fn own_reads(h: &mut History, writers: &FxHashMap<(KeyId, Val), Vec<MopId>>) {
    for i in 0..h.mops.len() {
        let m = h.mops[i];
        if !m.is_read() || m.has(flag::EXTERNAL) || m.from == from::UNKNOWN {
            continue;
        }
        let Some(ws) = writers.get(&(m.key, m.val)) else {
            continue;
        };
        let start = h.txns[m.txn as usize].start;
        if let Some(&w) = ws
            .iter()
            .rev()
            .find(|&&w| w >= start && (w as usize) < i && h.mops[w as usize].txn == m.txn)
        {
            h.mops[i].from = w;
        }
    }
}

/// Records for each external read of a value written more than once the
/// writes it may have observed: the final writes of it, by other
/// transactions, that did not abort (an indeterminate one may have
/// committed). Its `from` becomes the last of them in file order (the
/// guess the other checkers read). A read with no such writer keeps the
/// builder's writer, whose anomaly (aborted or intermediate read) then
/// holds whichever write it observed; a read with one reads it. A read the
/// builder took for a read of its own transaction's later write (a
/// `future-read`) may as well have observed another transaction's write
/// of the value: it is no future read, but an external read with those
/// candidates.
fn attach_candidates(
    h: &mut History,
    anomalies: &mut Vec<Anomaly>,
    writers: &FxHashMap<(KeyId, Val), Vec<MopId>>,
) {
    let another = |h: &History, r: MopId, w: MopId| {
        let (rm, wm) = (&h.mops[r as usize], &h.mops[w as usize]);
        wm.txn != rm.txn && wm.has(flag::FINAL) && h.txns[wm.txn as usize].status != Status::Aborted
    };
    anomalies.retain(|a| {
        let Some(&Datum::Mop(r)) = a
            .get(Field::Mop)
            .filter(|_| a.kind == crate::spec::Kind::Anomaly(crate::spec::AnomalyType::FutureRead))
        else {
            return true;
        };
        let m = h.mops[r as usize];
        let elsewhere = writers
            .get(&(m.key, m.val))
            .is_some_and(|ws| ws.iter().any(|&w| another(h, r, w)));
        if elsewhere {
            h.mops[r as usize].flags |= flag::EXTERNAL;
        }
        !elsewhere
    });
    for i in 0..h.mops.len() {
        let m = h.mops[i];
        if !m.is_read() || !m.has(flag::EXTERNAL) || m.from == from::UNKNOWN {
            continue;
        }
        let Some(ws) = writers.get(&(m.key, m.val)) else {
            continue;
        };
        let valid: Vec<MopId> = ws
            .iter()
            .copied()
            .filter(|&w| another(h, i as MopId, w))
            .collect();
        if let Some(&last) = valid.last() {
            h.mops[i].from = last;
        }
        if valid.len() > 1 {
            h.candidates.insert(i as MopId, valid);
        }
    }
}

/// Leaves `reads` out: nothing is known of what they observed
/// ([`from::UNKNOWN`], which every checker takes nothing from). Their
/// micro-ops stay, so a finding on the history without them names the same
/// micro-ops as on the history with them.
fn leave_out(h: &mut History, reads: &[MopId]) {
    for &r in reads {
        h.mops[r as usize].from = from::UNKNOWN;
        h.candidates.remove(&r);
    }
}

/// `h` without the reads whose writer its repeated values leave open
/// (every resolution's dependencies include what is left): a violation
/// found in it holds whichever write each such read observed. None when
/// no read is ambiguous.
pub(crate) fn drop_ambiguous(h: &History) -> Option<History> {
    let rep = h.repeated.as_ref().filter(|r| r.guessed())?;
    let mut d = h.clone();
    leave_out(&mut d, &rep.ambiguous);
    d.candidates.clear();
    d.repeated = Some(Repeated {
        policy: Duplicates::DropReads,
        ..rep.clone()
    });
    Some(d)
}
