//! Test oracle for generated list-append histories: the version order is in
//! the lists, so the dependency graph is known and serializability and
//! snapshot isolation come down to acyclicity (Adya; Cerone and Gotsman's
//! `(SO ∪ WR ∪ WW) ; RW?` for SI). Independent of the crate's checkers.

#![allow(dead_code)]

use elle_si::history::model::{History, Status, TxnId, flag, from};

#[derive(Default)]
pub struct Graph {
    pub n: usize,
    pub dep: Vec<Vec<u32>>,
    pub rw: Vec<Vec<u32>>,
}

impl Graph {
    fn add(v: &mut [Vec<u32>], a: TxnId, b: TxnId) {
        if a != b && !v[a as usize].contains(&b) {
            v[a as usize].push(b);
        }
    }
}

/// The dependency graph of a list-append history over committed
/// transactions (and :info ones whose appends were read); `session` adds
/// session order to Dep.
pub fn graph(h: &History, session: bool) -> Graph {
    let n = h.txns.len();
    let mut g = Graph {
        n,
        dep: vec![Vec::new(); n],
        rw: vec![Vec::new(); n],
    };
    let live = |t: TxnId| h.txns[t as usize].status != Status::Aborted;
    let writer = |w: u32| {
        (w < from::THIN_AIR)
            .then(|| h.txn_of(w))
            .filter(|&t| live(t))
    };
    for (k, o) in h.orders.iter().enumerate() {
        for w in o.writes.windows(2) {
            if let (Some(a), Some(b)) = (writer(w[0]), writer(w[1])) {
                Graph::add(&mut g.dep, a, b);
            }
        }
        // Appends nobody read come after every element somebody read.
        let unread: Vec<TxnId> = o.unobserved.iter().filter_map(|&w| writer(w)).collect();
        if let Some(a) = o.writes.last().and_then(|&w| writer(w)) {
            for &b in &unread {
                Graph::add(&mut g.dep, a, b);
            }
        }
        for (m, mop) in h.mops.iter().enumerate() {
            if mop.key as usize != k
                || !mop.is_read()
                || !mop.has(flag::EXTERNAL)
                || mop.has(flag::IRREGULAR)
                || h.txns[mop.txn as usize].status != Status::Committed
            {
                continue;
            }
            let _ = m;
            let len = mop.len as usize;
            if len > 0
                && let Some(a) = writer(o.writes[len - 1])
            {
                Graph::add(&mut g.dep, a, mop.txn);
            }
            if let Some(&next) = o.writes.get(len)
                && let Some(b) = writer(next)
            {
                Graph::add(&mut g.rw, mop.txn, b);
            }
            if len == o.writes.len() {
                for &b in &unread {
                    Graph::add(&mut g.rw, mop.txn, b);
                }
            }
        }
    }
    if session {
        for s in &h.sessions {
            let ok: Vec<TxnId> = s
                .txns
                .iter()
                .copied()
                .filter(|&t| h.txns[t as usize].status == Status::Committed)
                .collect();
            for w in ok.windows(2) {
                Graph::add(&mut g.dep, w[0], w[1]);
            }
        }
    }
    g
}

fn cyclic(n: usize, adj: &[Vec<u32>]) -> bool {
    let mut indeg = vec![0u32; n];
    for outs in adj {
        for &b in outs {
            indeg[b as usize] += 1;
        }
    }
    let mut stack: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut seen = 0;
    while let Some(v) = stack.pop() {
        seen += 1;
        for &b in &adj[v] {
            indeg[b as usize] -= 1;
            if indeg[b as usize] == 0 {
                stack.push(b as usize);
            }
        }
    }
    seen < n
}

/// Serializable (with `session`: strong session serializable).
pub fn serializable(h: &History, session: bool) -> bool {
    let g = graph(h, session);
    let all: Vec<Vec<u32>> = (0..g.n)
        .map(|v| g.dep[v].iter().chain(&g.rw[v]).copied().collect())
        .collect();
    !cyclic(g.n, &all)
}

/// Snapshot isolation (with `session`: strong session SI): Dep ∪ Dep;RW
/// acyclic.
pub fn snapshot_isolation(h: &History, session: bool) -> bool {
    let g = graph(h, session);
    let mut induced: Vec<Vec<u32>> = g.dep.clone();
    for (a, outs) in induced.iter_mut().enumerate() {
        for &b in &g.dep[a] {
            for &c in &g.rw[b as usize] {
                if !outs.contains(&c) {
                    outs.push(c);
                }
            }
        }
    }
    // A self-loop a -> a (a Dep b RW a) is a cycle too.
    if induced
        .iter()
        .enumerate()
        .any(|(a, o)| o.contains(&(a as u32)))
    {
        return false;
    }
    !cyclic(g.n, &induced)
}

/// Weak isolation levels, as Biswas and Enea axiomatize them (with
/// Cerone's session order inside visibility).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Weak {
    ReadCommitted,
    ReadAtomic,
    Causal,
}

/// Whether a list-append history satisfies a weak level. The version order
/// is the lists', so the commit order must extend SO ∪ WR ∪ WW, and a read
/// of x must show every x-writer its premise makes visible: for read
/// committed, writers the transaction read from earlier; for read atomic,
/// its session predecessors and everything it reads from; for causal, its
/// causal past. Reads of aborted or made-up elements are not judged here.
pub fn weak(h: &History, level: Weak) -> bool {
    weak_violation(h, level).is_none()
}

/// Why a list-append history violates a weak level, if it does.
pub fn weak_violation(h: &History, level: Weak) -> Option<String> {
    let n = h.txns.len();
    let g = graph(h, true);
    // SO ∪ WR ∪ WW: `graph` puts all three in `dep`.
    if cyclic(n, &g.dep) {
        return Some("SO ∪ WR ∪ WW is cyclic".into());
    }
    let words = n.div_ceil(64);
    // Causal past, by a topological pass over SO ∪ WR (WW is not causality).
    let mut so_wr: Vec<Vec<u32>> = vec![Vec::new(); n];
    let live = |t: TxnId| h.txns[t as usize].status != Status::Aborted;
    for s in &h.sessions {
        let ok: Vec<TxnId> = s
            .txns
            .iter()
            .copied()
            .filter(|&t| h.txns[t as usize].status == Status::Committed)
            .collect();
        for w in ok.windows(2) {
            so_wr[w[0] as usize].push(w[1]);
        }
    }
    for m in h.mops.iter() {
        if m.is_read()
            && m.has(flag::EXTERNAL)
            && h.txns[m.txn as usize].status == Status::Committed
            && let Some(w) = m.observed()
            && live(h.txn_of(w))
            && h.txn_of(w) != m.txn
        {
            so_wr[h.txn_of(w) as usize].push(m.txn);
        }
    }
    let mut past = vec![0u64; n * words];
    let mut indeg = vec![0u32; n];
    for outs in &so_wr {
        for &b in outs {
            indeg[b as usize] += 1;
        }
    }
    let mut stack: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    while let Some(v) = stack.pop() {
        for &b in &so_wr[v] {
            let b = b as usize;
            for w in 0..words {
                let x = past[v * words + w];
                past[b * words + w] |= x;
            }
            past[b * words + v / 64] |= 1 << (v % 64);
            indeg[b] -= 1;
            if indeg[b] == 0 {
                stack.push(b);
            }
        }
    }
    let before = |a: usize, b: usize| past[b * words + a / 64] >> (a % 64) & 1 == 1;
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.status != Status::Committed {
            continue;
        }
        let mut read_from: Vec<TxnId> = Vec::new();
        for m in h.mops[txn.mops()].iter() {
            if !m.is_read() || !m.has(flag::EXTERNAL) || m.has(flag::IRREGULAR) {
                continue;
            }
            let o = &h.orders[m.key as usize];
            let shown = &o.writes[..(m.len as usize).min(o.writes.len())];
            if shown
                .iter()
                .any(|&w| w >= from::THIN_AIR || !live(h.txn_of(w)))
            {
                continue;
            }
            let in_list = |t2: TxnId| shown.iter().any(|&w| h.txn_of(w) == t2);
            let premise = |t2: TxnId| match level {
                Weak::ReadCommitted => read_from.contains(&t2),
                Weak::ReadAtomic => {
                    let same = h.txns[t2 as usize].session == txn.session
                        && h.txns[t2 as usize].seq < txn.seq
                        && h.txns[t2 as usize].status == Status::Committed;
                    same || so_wr[t2 as usize].contains(&(t as u32))
                }
                Weak::Causal => before(t2 as usize, t),
            };
            for w in o.writes.iter().chain(&o.unobserved) {
                if *w >= from::THIN_AIR {
                    continue;
                }
                let t2 = h.txn_of(*w);
                if t2 as usize != t && live(t2) && premise(t2) && !in_list(t2) {
                    return Some(format!(
                        "txn {t} reads key {:?} without txn {t2}'s write",
                        h.key_value(m.key)
                    ));
                }
            }
            if let Some(w) = m.observed() {
                read_from.push(h.txn_of(w));
            }
        }
    }
    None
}
