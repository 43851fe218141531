//! Strong-session serializability and strong-session snapshot isolation
//! for histories with few sessions, by searching prefixes of the sessions
//! rather than version orders (Biswas & Enea, "On the Complexity of
//! Checking Transactional Consistency", OOPSLA 2019, section 4.1 for
//! serializability, section 4.3 for snapshot isolation).
//!
//! Theory. A commit order that extends session order is built one
//! transaction at a time; what has been placed is a prefix of every
//! session, so a state is one position per session. A transaction `t`
//! (the next of its session) may follow the placed prefix `P` exactly when
//! (a) every transaction `t` reads from is in `P`, and (b) for every key
//! `t` writes, no transaction outside `P` (other than `t`) reads that key
//! from a writer in `P` (or from the initial state): once `t` overwrites
//! the key, such a read could no longer be served. By Lemma 4.1 of the
//! paper, a prefix reached this way is serializable whatever order its
//! transactions were placed in, so the search remembers each dead-end
//! prefix and never enters it again: at most `∏(nᵢ + 1)` states.
//!
//! Snapshot isolation reduces to the same search (section 4.3): each
//! transaction is split into its reads (the snapshot) and its writes (the
//! commit), in session order, so a session's position counts halves; and
//! the write halves of two transactions that write a common key may not
//! interleave with each other's halves (the paper's auxiliary variables):
//! `t` may not commit while a transaction that writes one of its keys has
//! taken its snapshot and not committed. At most `∏(2nᵢ + 1)` states.
//!
//! Data flow: the history's included transactions (as the polygraph takes
//! them: [`crate::check::deps::included`]) and their external reads, by
//! writer, are laid out per session; a depth-first search tries sessions
//! in the order their next step most likely happened (completion, or
//! invocation for a snapshot), keeps for each key how many reads outside
//! the prefix wait on the key's current writer, and undoes steps on the
//! way back. It stops when the budget runs out or after [`MAX_STATES`] states.
//!
//! Which variants: the strong-session ones without real time (where
//! session order is part of the commit order, as the paper assumes), on
//! rw-register histories without ambiguous reads, with at most
//! [`MAX_SESSIONS`] sessions and at most [`MAX_STATES`] prefixes in all
//! (`∏(nᵢ + 1)`, or `∏(2nᵢ + 1)` for SI), so that it always finishes:
//! two sessions of 1,000 transactions, three of 200. Anything
//! else (real time, plain variants, list-append version orders, several
//! candidate writers) is left to the SAT route. A valid answer is final;
//! an invalid one is handed to the SAT route, its solver bounded as naming
//! is ([`Telling::naming`]), so that it names a cycle, and otherwise stands
//! as the variant's `*-cycle-exists` with the transactions the search
//! could not place.

use crate::check::budget::Budget;
use crate::check::tuning::{MAX_SESSIONS, MAX_STATES};

use rustc_hash::FxHashSet;

use super::polygraph::Variant;
use super::{Outcome, Telling};
use crate::anomaly::{Anomaly, Datum, Field};
use crate::check::deps::included;
use crate::history::model::*;

/// Reads of the initial state stand for a writer that precedes everyone.
const INITIAL: TxnId = TxnId::MAX;

/// What the search concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A commit order exists (the history satisfies the variant).
    Valid,
    /// Every prefix was tried: no commit order exists. The transactions
    /// the deepest prefix could not be extended by (one per unfinished
    /// session).
    Invalid(Vec<TxnId>),
    /// Out of time or states.
    Undecided,
}

/// The search's view of a history.
struct Layout {
    /// Included transactions of each session, in order.
    chains: Vec<Vec<TxnId>>,
    /// Each transaction's (session, place in it); `u32::MAX` when left out.
    place: Vec<(u32, u32)>,
    /// Keys each transaction writes (sorted, distinct).
    writes: Vec<Vec<KeyId>>,
    /// Each transaction's external reads: (key, writer or [`INITIAL`]),
    /// distinct.
    reads: Vec<Vec<(KeyId, TxnId)>>,
    /// Each writer's readers: (key, reader).
    readers: Vec<Vec<(KeyId, TxnId)>>,
    /// Per key, reads of the initial state.
    initial: Vec<u32>,
    /// Sort key of each transaction's snapshot and commit.
    when: Vec<(u64, u64)>,
}

/// Whether the search applies to this history and variant.
pub fn applies(h: &History, variant: Variant) -> bool {
    variant.session
        && !variant.realtime
        && h.orders.is_empty()
        && h.candidates.is_empty()
        // (Its commit orders know nothing of the orders key options infer.)
        && crate::check::keys::inferred(h).ww.is_empty()
        && !h.sessions.is_empty()
        && h.sessions.len() <= MAX_SESSIONS
        && bits(h, variant).is_some()
        && space(h, variant) <= MAX_STATES as u128
}

/// How many prefixes there are: `∏(steps + 1)` over sessions (saturating).
fn space(h: &History, variant: Variant) -> u128 {
    let per: u128 = if variant.serializable { 1 } else { 2 };
    h.sessions.iter().fold(1u128, |acc, s| {
        acc.saturating_mul(per * s.txns.len() as u128 + 1)
    })
}

/// Bits per session position, when all fit in 128.
fn bits(h: &History, variant: Variant) -> Option<Vec<u32>> {
    let per = if variant.serializable { 1 } else { 2 };
    let bs: Vec<u32> = h
        .sessions
        .iter()
        .map(|s| u64::BITS - (per * s.txns.len() as u64 + 1).leading_zeros())
        .collect();
    (bs.iter().sum::<u32>() <= 128).then_some(bs)
}

fn layout(h: &History) -> Layout {
    let inc = included(h);
    let n = h.txns.len();
    let mut place = vec![(u32::MAX, u32::MAX); n];
    let chains: Vec<Vec<TxnId>> = h
        .sessions
        .iter()
        .map(|s| {
            s.txns
                .iter()
                .copied()
                .filter(|&t| inc[t as usize])
                .collect()
        })
        .collect();
    for (s, c) in chains.iter().enumerate() {
        for (i, &t) in c.iter().enumerate() {
            place[t as usize] = (s as u32, i as u32);
        }
    }
    let mut writes = vec![Vec::new(); n];
    let mut reads = vec![Vec::new(); n];
    let mut readers = vec![Vec::new(); n];
    let mut initial = vec![0u32; h.keys.len()];
    for (t, txn) in h.txns.iter().enumerate() {
        if !inc[t] {
            continue;
        }
        let ws: &mut Vec<KeyId> = &mut writes[t];
        for m in &h.mops[txn.mops()] {
            if m.is_write() {
                ws.push(m.key);
            }
        }
        ws.sort_unstable();
        ws.dedup();
        if txn.status != Status::Committed {
            continue;
        }
        // External reads, as the polygraph takes them.
        let rs: &mut Vec<(KeyId, TxnId)> = &mut reads[t];
        for m in &h.mops[txn.mops()] {
            if !m.is_read() || !m.has(flag::EXTERNAL) {
                continue;
            }
            if m.from == from::INITIAL {
                rs.push((m.key, INITIAL));
            } else if let Some(w) = m.observed() {
                let src = h.txn_of(w);
                if src != t as TxnId
                    && h.txns[src as usize].status != Status::Aborted
                    && inc[src as usize]
                {
                    rs.push((m.key, src));
                }
            }
        }
        rs.sort_unstable();
        rs.dedup();
        for &(x, src) in rs.iter() {
            if src == INITIAL {
                initial[x as usize] += 1;
            } else {
                readers[src as usize].push((x, t as TxnId));
            }
        }
    }
    // When each step most likely happened: the history's indices where it
    // has them, else the place in the session scaled to its length (so
    // that sessions advance evenly).
    let timed = h.txns.iter().all(|t| t.complete.index >= 0);
    let when = (0..n)
        .map(|t| {
            let txn = &h.txns[t];
            if timed {
                (txn.invoke_index().max(0) as u64, txn.complete.index as u64)
            } else {
                let (s, i) = place[t];
                let len = chains.get(s as usize).map_or(1, |c| c.len().max(1)) as u64;
                let k = (u64::from(i) << 20) / len;
                (2 * k, 2 * k + 1)
            }
        })
        .collect();
    Layout {
        chains,
        place,
        writes,
        reads,
        readers,
        initial,
        when,
    }
}

/// The search's state: positions and, per key, the reads outside the
/// prefix waiting on the key's current writer.
struct State<'a> {
    l: &'a Layout,
    /// Serializability (one step per transaction) or SI (two).
    ser: bool,
    pos: Vec<u32>,
    pending: Vec<u32>,
    shift: Vec<u32>,
}

impl State<'_> {
    fn steps(&self, s: usize) -> u32 {
        let n = self.l.chains[s].len() as u32;
        if self.ser { n } else { 2 * n }
    }

    /// Whether transaction `t` has committed (its writes are placed).
    fn committed(&self, t: TxnId) -> bool {
        let (s, i) = self.l.place[t as usize];
        let p = self.pos[s as usize];
        if self.ser { i < p } else { 2 * i + 2 <= p }
    }

    /// Whether transaction `t` has read (its snapshot is placed).
    fn has_read(&self, t: TxnId) -> bool {
        let (s, i) = self.l.place[t as usize];
        let p = self.pos[s as usize];
        if self.ser { i < p } else { 2 * i < p }
    }

    fn key(&self) -> u128 {
        self.pos
            .iter()
            .zip(&self.shift)
            .fold(0u128, |k, (&p, &b)| (k << b) | u128::from(p))
    }

    /// Session `s`'s next step: its transaction, and whether it is a
    /// snapshot (reads) step, a commit (writes) step, or both.
    fn next(&self, s: usize) -> Option<(TxnId, bool, bool)> {
        let p = self.pos[s];
        if p >= self.steps(s) {
            return None;
        }
        if self.ser {
            Some((self.l.chains[s][p as usize], true, true))
        } else {
            let t = self.l.chains[s][(p / 2) as usize];
            Some((t, p.is_multiple_of(2), !p.is_multiple_of(2)))
        }
    }

    fn sort_key(&self, s: usize) -> u64 {
        match self.next(s) {
            Some((t, read, _)) => {
                let (a, b) = self.l.when[t as usize];
                if read && !self.ser { a } else { b }
            }
            None => u64::MAX,
        }
    }

    /// Whether session `s`'s next step may follow the prefix.
    fn enabled(&self, s: usize) -> bool {
        let Some((t, read, write)) = self.next(s) else {
            return false;
        };
        let l = self.l;
        if read
            && !l.reads[t as usize]
                .iter()
                .all(|&(_, w)| w == INITIAL || self.committed(w))
        {
            return false;
        }
        if write {
            for &x in &l.writes[t as usize] {
                // t's own waiting reads of x (serializability: they are
                // served in the same step).
                let own = if read {
                    l.reads[t as usize].iter().filter(|r| r.0 == x).count() as u32
                } else {
                    0
                };
                if self.pending[x as usize] > own {
                    return false;
                }
            }
            if !self.ser {
                // No transaction writing a common key between this one's
                // snapshot and its commit.
                for (s2, &p) in self.pos.iter().enumerate() {
                    if s2 == s || p.is_multiple_of(2) || p >= self.steps(s2) {
                        continue;
                    }
                    let u = l.chains[s2][(p / 2) as usize];
                    if intersects(&l.writes[t as usize], &l.writes[u as usize]) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Takes session `s`'s next step (forward) or takes it back.
    fn step(&mut self, s: usize, forward: bool) {
        if !forward {
            self.pos[s] -= 1;
        }
        let Some((t, read, write)) = self.next(s) else {
            return;
        };
        let l = self.l;
        if read {
            for &(x, _) in &l.reads[t as usize] {
                if forward {
                    self.pending[x as usize] -= 1;
                } else {
                    self.pending[x as usize] += 1;
                }
            }
        }
        if write {
            for &(x, r) in &l.readers[t as usize] {
                if !self.has_read(r) {
                    if forward {
                        self.pending[x as usize] += 1;
                    } else {
                        self.pending[x as usize] -= 1;
                    }
                }
            }
        }
        if forward {
            self.pos[s] += 1;
        }
    }
}

fn intersects(a: &[KeyId], b: &[KeyId]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// Searches for a commit order (see the module doc). `max_states` bounds
/// the prefixes entered.
pub fn search(h: &History, variant: Variant, budget: Budget, max_states: usize) -> Verdict {
    let Some(shift) = bits(h, variant).filter(|_| applies(h, variant)) else {
        return Verdict::Undecided;
    };
    let l = layout(h);
    let mut st = State {
        l: &l,
        ser: variant.serializable,
        pos: vec![0; l.chains.len()],
        pending: l.initial.clone(),
        shift,
    };
    let total: u64 = (0..l.chains.len()).map(|s| u64::from(st.steps(s))).sum();
    let mut done: u64 = 0;
    let mut dead: FxHashSet<u128> = FxHashSet::default();
    let order = |st: &State| {
        let mut c: Vec<u32> = (0..st.pos.len() as u32)
            .filter(|&s| st.enabled(s as usize))
            .collect();
        c.sort_by_key(|&s| st.sort_key(s as usize));
        c
    };
    // Each frame: the sessions to try from a state, and how many were.
    let mut frames: Vec<(Vec<u32>, usize)> = vec![(order(&st), 0)];
    let (mut deepest, mut deepest_pos) = (0u64, st.pos.clone());
    let mut states = 0usize;
    loop {
        if done == total {
            return Verdict::Valid;
        }
        let Some(top) = frames.last_mut() else {
            break;
        };
        if top.1 == top.0.len() {
            // A dead end: no extension of this prefix completes.
            dead.insert(st.key());
            frames.pop();
            let Some(parent) = frames.last() else { break };
            let s = parent.0[parent.1 - 1] as usize;
            st.step(s, false);
            done -= 1;
            continue;
        }
        let s = top.0[top.1] as usize;
        top.1 += 1;
        st.step(s, true);
        done += 1;
        if dead.contains(&st.key()) {
            st.step(s, false);
            done -= 1;
            continue;
        }
        states += 1;
        if states >= max_states || (states.is_multiple_of(4096) && budget.expired()) {
            return Verdict::Undecided;
        }
        if done > deepest {
            deepest = done;
            deepest_pos.clone_from(&st.pos);
        }
        frames.push((order(&st), 0));
    }
    st.pos = deepest_pos;
    let stuck = (0..st.pos.len())
        .filter_map(|s| st.next(s).map(|(t, _, _)| t))
        .collect();
    Verdict::Invalid(stuck)
}

/// Decides a variant by the search where it applies (see the module doc),
/// else, or when the search runs out, by `sat` (the polygraph route,
/// telling as asked) with the time left. Where cycles are to be told, an
/// invalid verdict lets `sat` name one, its solver bounded as naming is;
/// without one it stands as the variant's `*-cycle-exists`.
pub fn decide(
    h: &History,
    variant: Variant,
    budget: Budget,
    telling: Telling,
    sat: impl FnOnce(Budget, Telling) -> Outcome,
) -> Outcome {
    if !applies(h, variant) {
        return sat(budget, telling);
    }
    match search(h, variant, budget, MAX_STATES) {
        Verdict::Valid => Outcome {
            anomalies: Vec::new(),
            timed_out: false,
            stats: super::Stats {
                decision: Some(super::Decision::SessionSearch),
                ..Default::default()
            },
        },
        Verdict::Undecided => sat(budget, telling),
        Verdict::Invalid(stuck) => {
            let named = if telling.cycles {
                sat(budget, telling.naming())
            } else {
                Outcome {
                    anomalies: Vec::new(),
                    timed_out: true,
                    stats: Default::default(),
                }
            };
            if !named.timed_out && !named.anomalies.is_empty() {
                // The search decided; the whole polygraph named it.
                let mut named = named;
                named.stats.decision = Some(super::Decision::SessionSearch);
                return named;
            }
            let mut a = Anomaly::new(variant.cycle_exists()).field(
                Field::Unplaceable,
                Datum::List(stuck.iter().map(|&t| Datum::Txn(t)).collect()),
            );
            for &t in &stuck {
                a = a.txn(t);
            }
            let mut stats = named.stats;
            stats.decision = Some(super::Decision::SessionSearch);
            // Not named: the budget ran out, or the solver's bound.
            if budget.expired() {
                stats.explain_cut = true;
            } else if telling.cycles {
                stats.untold = 1;
            }
            Outcome {
                anomalies: vec![a],
                timed_out: false,
                stats,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::generated;
    use super::*;
    use crate::generator::{Db, Fault, GenOptions};

    const VARIANTS: [Variant; 2] = [
        Variant {
            serializable: true,
            session: true,
            realtime: false,
        },
        Variant {
            serializable: false,
            session: true,
            realtime: false,
        },
    ];

    /// A small generated rw-register history: few keys, so writes contend.
    fn history(db: Db, sessions: u32, seed: u64, fault: Option<Fault>) -> History {
        let mut opts = GenOptions {
            sessions,
            txns_per_session: 6 + (seed % 10) as u32,
            ops_per_txn: 2 + (seed % 3) as u32,
            keys: 3 + seed % 4,
            workload: Workload::RwRegister,
            db,
            seed,
            info_rate: 0.05,
            abort_rate: 0.05,
            ..GenOptions::default()
        };
        if let Some(f) = fault {
            opts = opts.with_fault(f, 0.2);
        }
        generated(&opts)
    }

    #[test]
    fn the_search_agrees_with_the_polygraph_route() {
        let dbs = [
            Db::Serializable,
            Db::SnapshotIsolation,
            Db::Causal,
            Db::ReadAtomic,
        ];
        let faults = [
            None,
            Some(Fault::LostUpdate),
            Some(Fault::LongFork),
            Some(Fault::StaleSessionRead),
            Some(Fault::CausalityViolation),
            Some(Fault::FracturedRead),
        ];
        // (valid, invalid) verdicts per variant.
        let mut seen = [[0usize; 2]; 2];
        let (mut n, mut skipped) = (0, 0);
        for seed in 0..60u64 {
            for &db in &dbs {
                for &fault in &faults {
                    let sessions = 2 + (seed % 3) as u32;
                    let h = history(db, sessions, seed, fault);
                    for (i, &v) in VARIANTS.iter().enumerate() {
                        // Timed-out clients start new sessions: a few
                        // histories have too many prefixes to take on.
                        if !applies(&h, v) {
                            skipped += 1;
                            continue;
                        }
                        let by_search = search(&h, v, Budget::NONE, MAX_STATES);
                        let sat = super::super::check_polygraph(&h, v, Budget::NONE);
                        assert!(!sat.timed_out);
                        let valid = sat.anomalies.is_empty();
                        match &by_search {
                            Verdict::Valid => assert!(valid, "{v:?} {db:?} {fault:?} {seed}"),
                            Verdict::Invalid(stuck) => {
                                assert!(!valid, "{v:?} {db:?} {fault:?} {seed}");
                                assert!(!stuck.is_empty());
                            }
                            Verdict::Undecided => panic!("undecided {v:?} {seed}"),
                        }
                        seen[i][usize::from(!valid)] += 1;
                        n += 1;
                    }
                }
            }
        }
        // Both outcomes at both levels, many times.
        println!("(valid, invalid) per variant: {seen:?}; {n} compared, {skipped} skipped");
        assert!(skipped * 10 < n, "{skipped} of {n} skipped");
        for s in seen {
            assert!(s[0] > 100 && s[1] > 100, "{seen:?} of {n}");
        }
    }

    #[test]
    fn an_invalid_verdict_comes_with_a_named_cycle_or_the_cycle_marker() {
        for seed in 0..20u64 {
            let h = history(Db::Causal, 3, seed, Some(Fault::LostUpdate));
            for v in VARIANTS {
                let o = super::super::check(&h, v, Budget::NONE);
                let by_search = search(&h, v, Budget::NONE, MAX_STATES);
                assert_eq!(o.anomalies.is_empty(), by_search == Verdict::Valid);
                assert!(!o.timed_out);
            }
        }
    }

    /// The issue's 2-session history (`elle-si gen --workload rw-register
    /// --db causal --sessions 2 --txns-per-session 1000 --ops-per-txn 2
    /// --keys 20 --distribution uniform --read-ratio 0.5 --seed 252
    /// --stale-session-read 0.02`), and the same without the fault.
    fn two_sessions(fault: f64) -> History {
        let opts = GenOptions {
            sessions: 2,
            txns_per_session: 1000,
            ops_per_txn: 2,
            keys: 20,
            read_ratio: 0.5,
            workload: Workload::RwRegister,
            db: Db::Causal,
            seed: 252,
            ..GenOptions::default()
        }
        .with_fault(Fault::StaleSessionRead, fault);
        generated(&opts)
    }

    #[test]
    fn the_issues_two_session_history_is_decided_by_the_search() {
        let stale = two_sessions(0.02);
        for v in VARIANTS {
            let verdict = search(&stale, v, Budget::NONE, MAX_STATES);
            // A stale read in one's own session is a cycle through session
            // order at both levels.
            assert!(matches!(verdict, Verdict::Invalid(_)), "{v:?}");
        }
        let fine = two_sessions(0.0);
        for v in VARIANTS {
            let verdict = search(&fine, v, Budget::NONE, MAX_STATES);
            let sat = super::super::check_polygraph(&fine, v, Budget::NONE);
            assert_eq!(verdict == Verdict::Valid, sat.anomalies.is_empty(), "{v:?}");
        }
    }

    #[test]
    fn refused_where_it_does_not_apply() {
        let h = history(Db::Serializable, 2, 1, None);
        for v in VARIANTS {
            assert!(applies(&h, v));
            assert!(!applies(
                &h,
                Variant {
                    realtime: true,
                    ..v
                }
            ));
            assert!(!applies(
                &h,
                Variant {
                    session: false,
                    ..v
                }
            ));
        }
        // A state budget too small to finish: undecided, never a verdict.
        assert_eq!(search(&h, VARIANTS[0], Budget::NONE, 1), Verdict::Undecided);
    }
}
