//! What Elle's rw-register key options infer of each key's version order
//! ([`KeyOrders`]): the write orders every check then takes as known
//! before it solves anything ([`inferred`]'s `ww`, which
//! [`super::deps::ww_edges`] and the polygraph read), and Elle's
//! `cyclic-versions` where those orders contradict themselves.
//!
//! Elle's meaning, per key, over the versions (values) of the key:
//!
//! - the initial state (nil) precedes every value a transaction wrote
//!   (committed or indeterminate) or a committed one read;
//! - `:wfr-keys?`: a committed transaction whose first micro-op on the key
//!   read a value (not nil) and that wrote the key wrote after what it
//!   read;
//! - `:sequential-keys?`: for committed `a` before committed `b` in one
//!   process, `a`'s final value of the key (its last write, else its
//!   read) comes no later than `b`'s first (its first read, when not nil,
//!   else its write, else its nil read);
//! - `:linearizable-keys?`: the same for committed `a` completed before
//!   `b` (committed or indeterminate; an indeterminate one by its write)
//!   was invoked.
//!
//! Elle adds these orders source by source, in that order; a source whose
//! orders close a cycle of two or more values on some key is left out
//! whole, and each such cycle reported as `cyclic-versions` with the
//! sources that close it. Elle relates `a` only to the nearest
//! transactions on the key along a process or real-time path; here every
//! such pair is related, which is what each key being sequential or
//! linearizable means (Elle's relations are all among them), so a
//! version order elle-si accepts satisfies Elle's too.
//!
//! How. Each source is a graph over the key's values, with an auxiliary
//! node per position of a chain (a process's transactions, or the
//! committed ones in completion order) that every earlier final value
//! precedes and that precedes every later first value, so that every
//! pair costs nothing: the graph is linear in micro-ops. An edge means
//! "no later than" (a read of what `a` wrote is the same value), so a
//! contradiction is a component with two values. The write orders are
//! then the graph's order among values some transaction installed, as
//! few as keep it: each value's nearest such values, none implied by
//! another ([`KEY_ORDER_WORK`] bounds the search).

use crate::check::tuning::KEY_ORDER_WORK;
use rustc_hash::FxHashMap;

use super::graph::{Digraph, sccs};
use crate::anomaly::{Anomaly, Datum, Field};
use crate::history::model::*;

/// What the history's key options infer, worked out once.
pub fn inferred(h: &History) -> &Inferred {
    h.inferred.get_or_init(|| infer(h))
}

/// Elle's `cyclic-versions`, one per cycle, and a `cycle-search-timeout`
/// when the inference ran out of work.
pub fn anomalies(h: &History) -> Vec<Anomaly> {
    let inf = inferred(h);
    let writers = writers(h);
    let mut out = Vec::new();
    for (k, vals, sources) in &inf.cyclic {
        let mut a = Anomaly::new(crate::spec::AnomalyType::CyclicVersions)
            .field(Field::Key, Datum::Key(*k))
            .field(Field::Scc, Datum::Set(vals.clone()))
            .field(
                Field::Sources,
                Datum::List(sources.iter().map(|s| Datum::kw(s)).collect()),
            );
        for v in vals {
            if let Some(&w) = writers.get(&(*k, *v)) {
                a = a.txn(h.txn_of(w));
            }
        }
        out.push(a);
    }
    if inf.cut {
        out.push(Anomaly::search_timeout("inferred-version-orders"));
    }
    out
}

/// The final write of each (key, value) by a transaction that did not
/// abort (the first, should a value repeat: loading refuses key options
/// where one does).
fn writers(h: &History) -> FxHashMap<(KeyId, Val), MopId> {
    let mut w = FxHashMap::default();
    for (i, m) in h.mops.iter().enumerate() {
        if m.is_write()
            && m.has(flag::FINAL)
            && m.val != Val::NIL
            && h.txns[m.txn as usize].status != Status::Aborted
        {
            w.entry((m.key, m.val)).or_insert(i as MopId);
        }
    }
    w
}

/// One transaction's external interaction with one key, as Elle reads
/// it: its first and final values (see the module doc).
#[derive(Clone, Copy)]
struct Touch {
    key: KeyId,
    txn: TxnId,
    first: Val,
    last: Val,
    /// Its read (not nil) and its write, when it did both.
    wfr: Option<(Val, Val)>,
    committed: bool,
}

/// Whether a transaction is a never-completed invocation (Elle's history
/// holds only its invocation, which says nothing).
fn dangling(t: &Txn) -> bool {
    t.status == Status::Indeterminate && t.invoke == Some(t.complete)
}

/// Every transaction's touches, by key then transaction.
fn touches(h: &History) -> Vec<Touch> {
    let mut out = Vec::new();
    // Per key of the transaction: (its external read, its last write).
    let mut at: FxHashMap<KeyId, usize> = FxHashMap::default();
    let mut seen: Vec<(KeyId, Option<Val>, Option<Val>)> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.status == Status::Aborted || dangling(txn) {
            continue;
        }
        let committed = txn.status == Status::Committed;
        at.clear();
        seen.clear();
        for m in &h.mops[txn.mops()] {
            // A read of the initial state is of nil, whatever the format
            // writes (the text format's 0).
            let read = if m.from == from::INITIAL {
                Val::NIL
            } else {
                m.val
            };
            let i = *at.entry(m.key).or_insert_with(|| {
                seen.push((m.key, m.is_read().then_some(read), None));
                seen.len() - 1
            });
            if m.is_write() {
                seen[i].2 = Some(m.val);
            }
        }
        for &(key, read, write) in &seen {
            // An indeterminate transaction's reads returned nothing known.
            let read = if committed { read } else { None };
            let first = match read {
                Some(v) if v != Val::NIL => Some(v),
                _ => write.or(read),
            };
            let (Some(first), Some(last)) = (first, write.or(read)) else {
                continue;
            };
            let wfr = match (read, write) {
                (Some(r), Some(w)) if r != Val::NIL && r != w => Some((r, w)),
                _ => None,
            };
            out.push(Touch {
                key,
                txn: t as TxnId,
                first,
                last,
                wfr,
                committed,
            });
        }
    }
    out.sort_by_key(|t| (t.key, t.txn));
    out
}

/// The nodes of every key's graph: one per (key, value), and auxiliary
/// ones (no value).
#[derive(Default)]
struct Nodes {
    index: FxHashMap<(KeyId, Val), u32>,
    key: Vec<KeyId>,
    val: Vec<Option<Val>>,
}

impl Nodes {
    fn value(&mut self, k: KeyId, v: Val) -> u32 {
        let n = self.key.len() as u32;
        let id = *self.index.entry((k, v)).or_insert(n);
        if id == n {
            self.key.push(k);
            self.val.push(Some(v));
        }
        id
    }

    fn aux(&mut self, k: KeyId) -> u32 {
        self.key.push(k);
        self.val.push(None);
        (self.key.len() - 1) as u32
    }

    fn len(&self) -> usize {
        self.key.len()
    }
}

/// Edges making every final value of `chain[..i]` precede (no later
/// than) the first values of those `later` gives at `i`: one auxiliary
/// node per position. `later(i)` lists the touches whose predecessors
/// along the chain are exactly `chain[..i]`.
fn prefix_edges(
    nodes: &mut Nodes,
    chain: &[Touch],
    later: &[(usize, Touch)],
    edges: &mut Vec<(u32, u32)>,
) {
    let Some(first) = chain.first() else { return };
    let aux: Vec<u32> = chain.iter().map(|_| nodes.aux(first.key)).collect();
    for (i, a) in chain.iter().enumerate() {
        let l = nodes.value(a.key, a.last);
        edges.push((l, aux[i]));
        if i > 0 {
            edges.push((aux[i - 1], aux[i]));
        }
    }
    for &(i, b) in later {
        if i > 0 {
            let f = nodes.value(b.key, b.first);
            edges.push((aux[i - 1], f));
        }
    }
}

/// The edges of each source asked, in Elle's order.
fn sources(
    h: &History,
    asked: KeyOrders,
    nodes: &mut Nodes,
) -> Vec<(&'static str, Vec<(u32, u32)>)> {
    let all = touches(h);
    let mut out: Vec<(&'static str, Vec<(u32, u32)>)> = Vec::new();
    let mut initial = Vec::new();
    for t in &all {
        for v in [t.first, t.last] {
            if v != Val::NIL {
                let nil = nodes.value(t.key, Val::NIL);
                let n = nodes.value(t.key, v);
                initial.push((nil, n));
            }
        }
    }
    out.push(("initial-state", initial));
    if asked.wfr {
        let mut e = Vec::new();
        for t in all.iter().filter(|t| t.committed) {
            if let Some((r, w)) = t.wfr {
                e.push((nodes.value(t.key, r), nodes.value(t.key, w)));
            }
        }
        out.push(("wfr-keys", e));
    }
    let by_key = |all: &[Touch]| -> Vec<(usize, usize)> {
        let mut runs = Vec::new();
        let mut lo = 0;
        for i in 1..=all.len() {
            if i == all.len() || all[i].key != all[lo].key {
                runs.push((lo, i));
                lo = i;
            }
        }
        runs
    };
    let runs = by_key(&all);
    if asked.sequential {
        let mut e = Vec::new();
        for &(lo, hi) in &runs {
            let mut oks: Vec<Touch> = all[lo..hi]
                .iter()
                .copied()
                .filter(|t| t.committed)
                .collect();
            let txn = |t: &Touch| &h.txns[t.txn as usize];
            oks.sort_by_key(|t| (txn(t).session, txn(t).seq));
            let mut s = 0;
            while s < oks.len() {
                let mut end = s + 1;
                while end < oks.len() && txn(&oks[end]).session == txn(&oks[s]).session {
                    end += 1;
                }
                let chain = &oks[s..end];
                let later: Vec<(usize, Touch)> = chain.iter().copied().enumerate().collect();
                prefix_edges(nodes, chain, &later, &mut e);
                s = end;
            }
        }
        out.push(("sequential-keys", e));
    }
    if asked.linearizable {
        let mut e = Vec::new();
        for &(lo, hi) in &runs {
            let txn = |t: &Touch| &h.txns[t.txn as usize];
            let mut oks: Vec<Touch> = all[lo..hi]
                .iter()
                .copied()
                .filter(|t| t.committed)
                .collect();
            oks.sort_by_key(|t| (txn(t).complete.index, t.txn));
            let later: Vec<(usize, Touch)> = all[lo..hi]
                .iter()
                .filter_map(|&b| {
                    let inv = txn(&b).invoke?.index;
                    Some((oks.partition_point(|a| txn(a).complete.index < inv), b))
                })
                .collect();
            prefix_edges(nodes, &oks, &later, &mut e);
        }
        out.push(("linearizable-keys", e));
    }
    out
}

/// The components of `g` holding two values or more: (key, values).
fn contradictions(nodes: &Nodes, g: &Digraph) -> Vec<(KeyId, Vec<Val>)> {
    let c = sccs(g);
    let mut vals: Vec<Vec<Val>> = vec![Vec::new(); c.count()];
    let mut key = vec![0; c.count()];
    for n in 0..nodes.len() {
        if let Some(v) = nodes.val[n] {
            let comp = c.comp[n] as usize;
            vals[comp].push(v);
            key[comp] = nodes.key[n];
        }
    }
    let mut out: Vec<(KeyId, Vec<Val>)> = vals
        .into_iter()
        .zip(key)
        .filter(|(vs, _)| vs.len() > 1)
        .map(|(mut vs, k)| {
            vs.sort_unstable();
            (k, vs)
        })
        .collect();
    out.sort_unstable();
    out
}

fn infer(h: &History) -> Inferred {
    let asked = h.key_orders;
    let mut inf = Inferred::default();
    if !asked.any() || h.workload == Some(Workload::ListAppend) {
        return inf;
    }
    let mut nodes = Nodes::default();
    let srcs = sources(h, asked, &mut nodes);
    let n = nodes.len();
    let mut accepted: Vec<(u32, u32)> = Vec::new();
    // The accepted edges of the sources beyond the initial state (which
    // orders no two writes).
    let mut ordering: Vec<(u32, u32)> = Vec::new();
    let mut names: Vec<&'static str> = Vec::new();
    for (name, edges) in srcs {
        let mut all = accepted.clone();
        all.extend_from_slice(&edges);
        let cycles = contradictions(&nodes, &Digraph::from_edges(n, &all));
        if cycles.is_empty() {
            accepted = all;
            if name != "initial-state" {
                ordering.extend_from_slice(&edges);
            }
            names.push(name);
        } else {
            let mut with = names.clone();
            with.push(name);
            inf.cyclic
                .extend(cycles.into_iter().map(|(k, vs)| (k, vs, with.clone())));
        }
    }
    let (ww, cut) = nearest_writes(h, &nodes, &ordering);
    inf.ww = ww;
    inf.cut = cut;
    inf
}

/// The write orders `ordering` makes among installed values, as few as
/// keep its order: each value's nearest installed successors, none
/// reachable from another. Whether [`KEY_ORDER_WORK`] cut it short.
fn nearest_writes(
    h: &History,
    nodes: &Nodes,
    ordering: &[(u32, u32)],
) -> (Vec<(KeyId, MopId, MopId)>, bool) {
    const NONE: u32 = u32::MAX;
    let g = Digraph::from_edges(nodes.len(), ordering);
    // No component holds two values (those sources were left out);
    // components come successors first.
    let c = sccs(&g);
    let writers = writers(h);
    let mut writer = vec![NONE; c.count()];
    for v in 0..nodes.len() {
        if let Some(val) = nodes.val[v]
            && let Some(&w) = writers.get(&(nodes.key[v], val))
        {
            writer[c.comp[v] as usize] = w;
        }
    }
    let cedges: Vec<(u32, u32)> = ordering
        .iter()
        .map(|&(a, b)| (c.comp[a as usize], c.comp[b as usize]))
        .filter(|(a, b)| a != b)
        .collect();
    let cg = Digraph::from_edges(c.count(), &cedges);
    let mut nearest: Vec<Vec<u32>> = vec![Vec::new(); c.count()];
    let mut work: u64 = 0;
    let mut cand: Vec<u32> = Vec::new();
    let mut stamp = vec![0u32; c.count()];
    let mut round = 0u32;
    let mut stack: Vec<u32> = Vec::new();
    for x in 0..c.count() as u32 {
        cand.clear();
        for &s in cg.out(x) {
            if writer[s as usize] != NONE {
                cand.push(s);
            } else {
                cand.extend_from_slice(&nearest[s as usize]);
            }
        }
        work += cand.len() as u64;
        // Earliest first: a component reaches only lower-numbered ones.
        cand.sort_unstable_by(|a, b| b.cmp(a));
        cand.dedup();
        let mut kept: Vec<u32> = Vec::new();
        for &m in &cand {
            // Whether a kept one reaches m, through installed values.
            round += 1;
            stack.clear();
            stack.extend(kept.iter().copied());
            let mut reached = false;
            while let Some(y) = stack.pop() {
                work += 1;
                if y == m {
                    reached = true;
                    break;
                }
                if y < m || stamp[y as usize] == round {
                    continue;
                }
                stamp[y as usize] = round;
                stack.extend(nearest[y as usize].iter().copied().filter(|&z| z >= m));
            }
            if !reached {
                kept.push(m);
            }
        }
        nearest[x as usize] = kept;
        if work > KEY_ORDER_WORK {
            return (collect(&writer, &nearest, h), true);
        }
    }
    (collect(&writer, &nearest, h), false)
}

/// The orders from each installed value to its nearest ones, sorted.
fn collect(writer: &[u32], nearest: &[Vec<u32>], h: &History) -> Vec<(KeyId, MopId, MopId)> {
    let mut out: Vec<(KeyId, MopId, MopId)> = Vec::new();
    for (x, ns) in nearest.iter().enumerate() {
        let a = writer[x];
        if a == u32::MAX {
            continue;
        }
        for &m in ns {
            let b = writer[m as usize];
            out.push((h.mops[a as usize].key, a, b));
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{LoadOptions, load_bytes};

    fn inferred_of(text: &str, keys: KeyOrders) -> Inferred {
        let l = load_bytes(
            "k.edn",
            text.as_bytes().to_vec(),
            LoadOptions {
                keys,
                ..LoadOptions::default()
            },
        )
        .expect("loads");
        inferred(&l.history).clone()
    }

    /// Transactions `(process, invoke index, complete index, mops)`.
    fn history(txns: &[(u32, u32, u32, &str)]) -> String {
        let mut events: Vec<(u32, String)> = Vec::new();
        for &(p, i, c, mops) in txns {
            let inv = mops
                .replace(":r :x 1", ":r :x nil")
                .replace(":r :x 2", ":r :x nil");
            events.push((
                i,
                format!(":type :invoke :process {p} :f :txn :value {inv}"),
            ));
            events.push((c, format!(":type :ok :process {p} :f :txn :value {mops}")));
        }
        events.sort();
        events
            .iter()
            .map(|(i, e)| format!("{{:index {i} {e}}}\n"))
            .collect()
    }

    const LIN: KeyOrders = KeyOrders {
        wfr: false,
        sequential: false,
        linearizable: true,
    };

    #[test]
    fn a_chain_of_writes_in_real_time_is_one_order_per_step() {
        // Four writes one after another: three orders, none implied by
        // the others (the chain's closure is all six pairs).
        let h = history(&[
            (0, 0, 1, "[[:w :x 1]]"),
            (1, 2, 3, "[[:w :x 2]]"),
            (2, 4, 5, "[[:w :x 3]]"),
            (3, 6, 7, "[[:w :x 4]]"),
        ]);
        let inf = inferred_of(&h, LIN);
        assert!(inf.cyclic.is_empty() && !inf.cut);
        assert_eq!(inf.ww.len(), 3);
        let none = inferred_of(
            &h,
            KeyOrders {
                linearizable: false,
                ..LIN
            },
        );
        assert!(none.ww.is_empty());
    }

    #[test]
    fn concurrent_writes_are_left_unordered() {
        // 1 completes before 2 and 3 start, which overlap; 4 starts after
        // both complete: 1 < 2, 1 < 3, 2 < 4, 3 < 4, and 2, 3 unordered.
        let h = history(&[
            (0, 0, 1, "[[:w :x 1]]"),
            (1, 2, 5, "[[:w :x 2]]"),
            (2, 3, 4, "[[:w :x 3]]"),
            (3, 6, 7, "[[:w :x 4]]"),
        ]);
        let inf = inferred_of(&h, LIN);
        assert_eq!(inf.ww.len(), 4);
    }

    #[test]
    fn a_read_passes_its_version_on() {
        // 1's write runs beside 2's, but a read of 1 completed before 2's
        // write was invoked: 1 < 2 through the value it read. Without the
        // reader, nothing orders them.
        let h = history(&[
            (0, 0, 5, "[[:w :x 1]]"),
            (1, 1, 2, "[[:r :x 1]]"),
            (2, 3, 6, "[[:w :x 2]]"),
        ]);
        let inf = inferred_of(&h, LIN);
        assert_eq!(inf.ww.len(), 1);
        let h = history(&[(0, 0, 5, "[[:w :x 1]]"), (2, 3, 6, "[[:w :x 2]]")]);
        assert!(inferred_of(&h, LIN).ww.is_empty());
    }
}
