//! Refute first: a large sessionless variant looks for a violation in
//! windows of the history (transactions close in time) before it builds
//! the whole polygraph.
//!
//! Why. Without session order nothing orders two writers of a key but the
//! reads, so the whole polygraph holds a constraint for nearly every pair
//! of writers of a hot key: 262,144 transactions of the causal store make
//! tens of millions of them (6.6 GB, no verdict in 90 s). But the
//! violations a Jepsen user is after are local: transactions that ran
//! concurrently and saw each other wrongly.
//!
//! Soundness. SI and serializability are closed under projection onto a
//! set of transactions, reads of writes from outside it left out (see
//! [`super::polygraph::Scope`]): a violation of a window, found by the
//! same build, prune, solve and tell as the whole, is a violation of the
//! whole, told by the same steps (each step is an edge of the whole, or
//! an order inferred as the whole's cycles infer them, marked so). A
//! window that passes proves nothing: when no window refutes, the whole
//! is checked as before, so completeness is kept.
//!
//! Data flow: the included transactions in time order (completion, or the
//! file's order where sessions interleave, else each one's place in its
//! session); windows of [`WINDOW`] of them, each overlapping the next by
//! half; a window's polygraph may hold at most [`WINDOW_PAIRS`] unordered
//! writer pairs, else the window halves (down to [`MIN_WINDOW`]). Each
//! window gets at most [`WINDOW_TIME`], all of them [`BUDGET`]; the first
//! that finds a violation decides. Memory is that of one window's polygraph plus a few arrays
//! per transaction.

use std::time::{Duration, Instant};

use super::polygraph::{Scope, Variant};
use super::solve::time_keys;
use super::{Outcome, check_polygraph_in, expired};
use crate::check::deps::included;
use crate::history::model::*;

/// Transactions per window.
pub const WINDOW: usize = 8192;

/// The fewest pairs of writers of a key (over all keys) for which a
/// history is refuted this way: smaller ones are checked whole at once, as
/// fast, with the whole's cycles to tell.
pub const MIN_PAIRS: u64 = 4 * WINDOW_PAIRS as u64;

/// Pairs of included transactions that write a common key, counted per
/// key: what the whole polygraph would hold without session order.
fn writer_pairs(h: &History, inc: &[bool]) -> u64 {
    let mut per_key = vec![0u64; h.keys.len()];
    for (t, txn) in h.txns.iter().enumerate() {
        if !inc[t] {
            continue;
        }
        for m in &h.mops[txn.mops()] {
            if m.is_write()
                && m.has(flag::FINAL)
                && let Some(c) = per_key.get_mut(m.key as usize)
            {
                *c += 1;
            }
        }
    }
    per_key.iter().map(|&n| n * n.saturating_sub(1) / 2).sum()
}

/// The smallest window tried when hot keys make a window too big.
pub const MIN_WINDOW: usize = 512;

/// Most unordered writer pairs in a window's polygraph.
pub const WINDOW_PAIRS: usize = 400_000;

/// Most time one window may take.
pub const WINDOW_TIME: Duration = Duration::from_secs(2);

/// Most time all windows together may take before the whole is checked.
pub const BUDGET: Duration = Duration::from_secs(10);

/// Where a violation was found: the window's size, its first place in
/// time order, and how many transactions were in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// Transactions in the window.
    pub size: usize,
    /// Its first transaction's place in time order.
    pub from: usize,
    /// Included transactions in all.
    pub of: usize,
}

/// Included transactions in the order they most likely took effect.
fn time_order(h: &History, inc: &[bool]) -> Vec<TxnId> {
    let mut ts: Vec<TxnId> = (0..h.txns.len() as TxnId)
        .filter(|&t| inc[t as usize])
        .collect();
    match time_keys(h) {
        Some(keys) => ts.sort_by_key(|&t| keys[t as usize]),
        None => {
            // Each session's place as a fraction of its length: sessions
            // that ran side by side advance together.
            let place = |t: TxnId| {
                let txn = &h.txns[t as usize];
                let len = h
                    .sessions
                    .get(txn.session as usize)
                    .map_or(1, |s| s.txns.len().max(1));
                (txn.seq as u64 * (1 << 20)) / len as u64
            };
            ts.sort_by_key(|&t| (place(t), t));
        }
    }
    ts
}

/// The first violation found in a window of the history, for a sessionless
/// variant of a history whose writers make at least [`MIN_PAIRS`] pairs; `None` when the variant
/// does not take this route or no window refutes (the whole is then to be
/// checked).
pub(super) fn windows(h: &History, variant: Variant, deadline: Option<Instant>) -> Option<Outcome> {
    if variant.session {
        return None;
    }
    let inc = included(h);
    let order = time_order(h, &inc);
    if order.len() <= WINDOW || writer_pairs(h, &inc) < MIN_PAIRS {
        return None;
    }
    let mut part = vec![false; h.txns.len()];
    let mut size = WINDOW;
    let mut lo = 0;
    let budget = Instant::now() + BUDGET;
    while lo < order.len() {
        if expired(deadline) || Instant::now() > budget {
            return None;
        }
        let hi = (lo + size).min(order.len());
        for &t in &order[lo..hi] {
            part[t as usize] = true;
        }
        let until = Instant::now() + WINDOW_TIME;
        let scope = Scope {
            part: Some(&part),
            max_pairs: WINDOW_PAIRS,
            fixed: None,
        };
        let mut o = check_polygraph_in(
            h,
            variant,
            Some(deadline.map_or(until, |d| d.min(until))),
            scope,
        );
        for &t in &order[lo..hi] {
            part[t as usize] = false;
        }
        if o.stats.too_big && size > MIN_WINDOW {
            size /= 2;
            continue;
        }
        if !o.timed_out && !o.anomalies.is_empty() {
            if o.stats.explain_cut && !expired(deadline) {
                // The window's own time ran out while telling: the
                // violation is certain, so tell it within the run's.
                for &t in &order[lo..hi] {
                    part[t as usize] = true;
                }
                let scope = Scope {
                    part: Some(&part),
                    max_pairs: WINDOW_PAIRS,
                    fixed: None,
                };
                let again = check_polygraph_in(h, variant, deadline, scope);
                if !again.timed_out && !again.anomalies.is_empty() {
                    o = again;
                }
            }
            o.stats.part = Some(Part {
                size: hi - lo,
                from: lo,
                of: order.len(),
            });
            return Some(o);
        }
        if hi == order.len() {
            break;
        }
        lo += size.div_ceil(2);
    }
    None
}
