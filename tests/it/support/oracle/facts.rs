//! What a history says, for one choice of which `:info` transactions
//! committed: the committed transactions as nodes (node 0 is the initial
//! transaction, which wrote every key's initial state), who each external
//! read read from, session order (ended by an `:info` transaction), real-time order, and for lists the write
//! order the reads reveal. A history no level can accept (a read of a value
//! nobody wrote, of an aborted or uncommitted write, of an intermediate
//! write, a read that contradicts the transaction's own writes, list reads
//! that are not prefixes of one another) is `Broken` with the reason.
//!
//! Read-from is by value: a register read of v reads from a writer of v
//! (when several transactions wrote v to the key, one of them, chosen by
//! [`choices`] and [`interpret`]'s `picks`: the oracle tries every
//! choice); a list read reads from the writer of its last element not
//! appended by the reader itself (list values are unique per key). Every list read, the
//! reader's own appends included, is a prefix of the key's one version
//! order (Elle's list-append convention: else "incompatible order"), and
//! the longest reveals the order of the writers of its elements (each
//! writer's appends contiguous and in its own order). Appends no read shows
//! come after every element a read shows (Elle's convention), in any order.

use super::history::{History, Key, Op, Status, Txn, Val, Workload};

/// A set of nodes (at most 16: the oracle is for tiny histories).
pub type Set = u16;

pub fn bit(n: usize) -> Set {
    1 << n
}

/// An external read: `reader` read `key` from `src` (0 = initial state).
#[derive(Clone, Copy, Debug)]
pub struct Read {
    pub reader: usize,
    pub key: Key,
    pub src: usize,
    /// It read a write `src` overwrote later (G1b; only where
    /// [`interpret_with`] keeps such reads).
    pub intermediate: bool,
    /// The reader writes the key after this read and not before it
    /// (Elle's lost update is two such reads of one version).
    pub then_writes: bool,
}

#[derive(Debug)]
pub struct Facts {
    /// Number of nodes, the initial transaction included.
    pub n: usize,
    /// For each node but 0, the history's transaction index.
    pub txn_of: Vec<usize>,
    /// Per node, the keys it wrote (bit k); node 0 writes all.
    pub writes: Vec<u32>,
    /// External reads, each reader's in program order.
    pub reads: Vec<Read>,
    /// Session order pairs (transitive), between committed transactions.
    pub so: Vec<(usize, usize)>,
    /// Real-time order pairs: a completed :ok before the other's invocation.
    pub rt: Vec<(usize, usize)>,
    /// Lists: the write order the reads reveal (pairs of nodes).
    pub wo: Vec<(usize, usize)>,
    /// Lists: per key, the writers in the order reads show them, and the
    /// committed writers no read shows.
    pub observed: Vec<(Key, Vec<usize>, Vec<usize>)>,
    /// Registers, under Elle's key options ([`assume`]): per key, writer
    /// pairs (a, b) whose versions the options order a before b (node 0,
    /// the initial state, never second); also in `wo`.
    pub assumed: Vec<(Key, usize, usize)>,
    /// The options order some version before the initial state: no
    /// version order is possible.
    pub impossible: bool,
}

/// Elle's rw-register key options, as the oracle reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Assume {
    /// `:wfr-keys?`: a transaction's write of a key follows its read of it.
    pub wfr: bool,
    /// `:sequential-keys?`: each process's order orders each key's versions.
    pub sequential: bool,
    /// `:linearizable-keys?`: real time orders each key's versions.
    pub linearizable: bool,
}

/// A transaction's first and final values of a key (`None`: the initial
/// state), and its read and write of it when it did both.
type Ends = (Option<Val>, Option<Val>, Option<(Val, Val)>);

/// A transaction's first and final values of key `k` as Elle reads them
/// (`None` for the initial state): the first is its first micro-op's read
/// when that read something, else its last write, else that nil read; the
/// final is its last write, else its first read. An `:info`
/// transaction's reads are unknown: only its last write counts. `None`
/// when it does not touch `k` so.
fn ends(t: &Txn, k: Key) -> Option<Ends> {
    let first_read = match t
        .ops
        .iter()
        .find(|o| matches!(o, Op::Write(kk, _) | Op::Read(kk, _) if *kk == k))
    {
        Some(Op::Read(_, vs)) if t.status == Status::Ok => Some(vs.first().copied()),
        _ => None,
    };
    let write = t.ops.iter().rev().find_map(|o| match o {
        Op::Write(kk, v) if *kk == k => Some(*v),
        _ => None,
    });
    let first = match first_read {
        Some(Some(v)) => Some(Some(v)),
        _ => write.map(Some).or(first_read),
    }?;
    let last = write.map(Some).or(first_read)?;
    let wfr = match (first_read, write) {
        (Some(Some(r)), Some(w)) if r != w => Some((r, w)),
        _ => None,
    };
    Some((first, last, wfr))
}

/// Adds to `f` (the facts of `h` under one choice of committed `:info`
/// transactions) the version orders Elle's key options `a` assume, by
/// their definition: for every pair the option relates (a committed
/// transaction before another in its process, or completed before the
/// other's invocation), the first's final value of each key no later than
/// the second's first; with `wfr`, a committed transaction's read value
/// before its write. Values are their writers' nodes.
pub fn assume(h: &History, f: &mut Facts, a: Assume) {
    let mut node_of = vec![usize::MAX; h.txns.len()];
    for (v, &t) in f.txn_of.iter().enumerate().skip(1) {
        node_of[t] = v;
    }
    // The node of key k's value v (None: the initial state, node 0);
    // None when its writer did not commit here.
    let node = |k: Key, v: Option<Val>| -> Option<usize> {
        match v {
            None => Some(0),
            Some(v) => h
                .txns
                .iter()
                .position(|t| t.ops.contains(&Op::Write(k, v)))
                .map(|w| node_of[w])
                .filter(|&n| n != usize::MAX),
        }
    };
    let mut keys: Vec<Key> = h
        .txns
        .iter()
        .flat_map(|t| {
            t.ops.iter().map(|o| match o {
                Op::Write(k, _) | Op::Read(k, _) => *k,
            })
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut pairs: Vec<(Key, Option<Val>, Option<Val>)> = Vec::new();
    for &k in &keys {
        for (i, ti) in h.txns.iter().enumerate() {
            let Some((_, last, wfr)) = ends(ti, k) else {
                continue;
            };
            if ti.status != Status::Ok {
                continue;
            }
            if a.wfr
                && let Some((r, w)) = wfr
            {
                pairs.push((k, Some(r), Some(w)));
            }
            for (j, tj) in h.txns.iter().enumerate() {
                let Some((first, ..)) = ends(tj, k) else {
                    continue;
                };
                if i == j || tj.status == Status::Fail {
                    continue;
                }
                let same_process = ti.process == tj.process && ti.invoke < tj.invoke;
                if (a.sequential && same_process && tj.status == Status::Ok)
                    || (a.linearizable && ti.complete < tj.invoke)
                {
                    pairs.push((k, last, first));
                }
            }
        }
    }
    for (k, x, y) in pairs {
        if x == y {
            continue;
        }
        let (Some(nx), Some(ny)) = (node(k, x), node(k, y)) else {
            continue;
        };
        if ny == 0 {
            f.impossible = true;
        } else if nx != ny {
            f.assumed.push((k, nx, ny));
            f.wo.push((nx, ny));
        }
    }
}

pub enum Interp {
    Broken(&'static str),
    Facts(Facts),
}

impl Facts {
    pub fn writes_key(&self, node: usize, key: Key) -> bool {
        self.writes[node] & (1 << key) != 0
    }
    pub fn keys(&self) -> Vec<Key> {
        let mut ks: Vec<Key> = self
            .reads
            .iter()
            .map(|r| r.key)
            .chain(
                (1..self.n)
                    .flat_map(|v| (0..32u8).filter(move |&k| self.writes[v] & (1 << k) != 0)),
            )
            .collect();
        ks.sort_unstable();
        ks.dedup();
        ks
    }
}

/// Indices of the `:info` transactions (each may be committed or not).
pub fn infos(h: &History) -> Vec<usize> {
    (0..h.txns.len())
        .filter(|&i| h.txns[i].status == Status::Info)
        .collect()
}

/// The part of a read of `k` returning `vs` that came from outside its
/// transaction, whose micro-ops before it are `before`: None for a
/// register read after its own write (nothing did); an error when the
/// read contradicts the transaction's own writes (Elle's `:internal`).
fn from_outside<'a>(
    workload: Workload,
    before: &[Op],
    k: Key,
    vs: &'a [Val],
) -> Result<Option<&'a [Val]>, &'static str> {
    let mine: Vec<Val> = before
        .iter()
        .filter_map(|o| match o {
            Op::Write(kk, v) if *kk == k => Some(*v),
            _ => None,
        })
        .collect();
    match workload {
        Workload::Register => match mine.last() {
            Some(last) if vs != [*last] => Err("internal: not its own last write"),
            Some(_) => Ok(None),
            None => Ok(Some(vs)),
        },
        Workload::List if mine.is_empty() => Ok(Some(vs)),
        Workload::List => {
            if vs.len() < mine.len() || vs[vs.len() - mine.len()..] != mine[..] {
                return Err("internal: not ending in its own appends");
            }
            Ok(Some(&vs[..vs.len() - mine.len()]))
        }
    }
}

/// Whether a committed transaction read a key it wrote without seeing
/// its own writes (Elle's `:internal`, which Elle's read committed does
/// not prohibit).
pub fn internal(h: &History) -> bool {
    h.txns.iter().filter(|t| t.status == Status::Ok).any(|t| {
        t.ops.iter().enumerate().any(|(p, op)| match op {
            Op::Read(k, vs) => from_outside(h.workload, &t.ops[..p], *k, vs).is_err(),
            _ => false,
        })
    })
}

/// The register reads whose value several transactions wrote to the key:
/// each (transaction, position) with those writers, in history order. A
/// read may have observed any of them.
pub fn choices(h: &History) -> Vec<((usize, usize), Vec<usize>)> {
    let mut out = Vec::new();
    if h.workload != Workload::Register {
        return out;
    }
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.status != Status::Ok {
            continue;
        }
        for (p, op) in txn.ops.iter().enumerate() {
            let Op::Read(k, vs) = op else { continue };
            // Only a read of what came from outside chooses a writer.
            let Ok(Some(&[v])) = from_outside(h.workload, &txn.ops[..p], *k, vs) else {
                continue;
            };
            let ws: Vec<usize> = (0..h.txns.len())
                .filter(|&w| h.txns[w].ops.contains(&Op::Write(*k, v)))
                .collect();
            if ws.len() > 1 {
                out.push(((t, p), ws));
            }
        }
    }
    out
}

/// Interprets `h` with the `:info` transactions in `committed_infos` (bit i
/// of the mask for the i-th of [`infos`]) taken as committed, and each read
/// of [`choices`] observing the writer `picks` names (its index among
/// them).
pub fn interpret(h: &History, committed_infos: u32, picks: &[usize]) -> Interp {
    interpret_with(h, committed_infos, picks, false)
}

/// [`interpret`], keeping reads of intermediate writes (marked, not
/// `Broken`) when `intermediate`: anomalies asked for by name need not
/// prohibit G1b.
pub fn interpret_with(
    h: &History,
    committed_infos: u32,
    picks: &[usize],
    intermediate: bool,
) -> Interp {
    let points = choices(h);
    let infos = infos(h);
    let committed: Vec<bool> = h
        .txns
        .iter()
        .enumerate()
        .map(|(i, t)| match t.status {
            Status::Ok => true,
            Status::Fail => false,
            Status::Info => {
                let j = infos.iter().position(|&x| x == i).unwrap_or(0);
                committed_infos & (1 << j) != 0
            }
        })
        .collect();
    let mut node_of = vec![usize::MAX; h.txns.len()];
    let mut txn_of = vec![usize::MAX];
    for (i, &c) in committed.iter().enumerate() {
        if c {
            node_of[i] = txn_of.len();
            txn_of.push(i);
        }
    }
    let n = txn_of.len();
    // Who wrote (key, value), and each transaction's writes per key in order.
    let writer = |k: Key, v: Val| -> Option<usize> {
        h.txns.iter().position(|t| t.ops.contains(&Op::Write(k, v)))
    };
    // Who the read at (t, p) of (k, v) observed.
    let source = |t: usize, p: usize, k: Key, v: Val| -> Option<usize> {
        match points.iter().position(|(at, _)| *at == (t, p)) {
            Some(i) => Some(points[i].1[picks[i]]),
            None => writer(k, v),
        }
    };
    let own = |t: usize, k: Key| -> Vec<Val> {
        h.txns[t]
            .ops
            .iter()
            .filter_map(|o| match o {
                Op::Write(kk, v) if *kk == k => Some(*v),
                _ => None,
            })
            .collect()
    };
    let mut writes = vec![u32::MAX; n];
    for v in 1..n {
        writes[v] = 0;
        for o in &h.txns[txn_of[v]].ops {
            if let Op::Write(k, _) = o {
                writes[v] |= 1 << k;
            }
        }
    }
    let mut reads = Vec::new();
    // Lists: every external read's list, per key.
    let mut lists: Vec<(Key, Vec<Val>)> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.status != Status::Ok {
            continue;
        }
        for (p, op) in txn.ops.iter().enumerate() {
            let Op::Read(k, vs) = op else { continue };
            let k = *k;
            let ext = match from_outside(h.workload, &txn.ops[..p], k, vs) {
                Ok(Some(ext)) => ext,
                Ok(None) => continue,
                Err(why) => return Interp::Broken(why),
            };
            for &v in ext {
                let w = match h.workload {
                    Workload::Register => source(t, p, k, v),
                    Workload::List => writer(k, v),
                };
                match w {
                    None => return Interp::Broken("thin-air read"),
                    Some(w) if w == t => return Interp::Broken("future read of its own write"),
                    Some(w) if !committed[w] => return Interp::Broken("G1a: aborted read"),
                    Some(_) => {}
                }
            }
            let mut inter = false;
            let src = match ext.last() {
                None => 0,
                Some(&v) => {
                    let w = match h.workload {
                        Workload::Register => source(t, p, k, v),
                        Workload::List => writer(k, v),
                    }
                    .unwrap_or(0);
                    if own(w, k).last() != Some(&v) {
                        if !intermediate {
                            return Interp::Broken("G1b: intermediate read");
                        }
                        inter = true;
                    }
                    node_of[w]
                }
            };
            let writes_k = |o: &Op| matches!(o, Op::Write(kk, _) if *kk == k);
            let then_writes =
                !txn.ops[..p].iter().any(writes_k) && txn.ops[p..].iter().any(writes_k);
            if h.workload == Workload::List {
                // The whole list, own appends included, shows the order.
                lists.push((k, vs.clone()));
            }
            reads.push(Read {
                reader: node_of[t],
                key: k,
                src,
                intermediate: inter,
                then_writes,
            });
        }
    }
    let mut so = Vec::new();
    let mut rt = Vec::new();
    for a in 1..n {
        for b in 1..n {
            let (ta, tb) = (&h.txns[txn_of[a]], &h.txns[txn_of[b]]);
            // An `:info` transaction ends its process's session (Jepsen
            // retires a process whose op timed out): nothing after it is
            // ordered after it, or after what came before it.
            let ended = |i: &Txn| {
                i.status == Status::Info
                    && i.process == ta.process
                    && ta.invoke <= i.invoke
                    && i.invoke < tb.invoke
            };
            if a != b
                && ta.process == tb.process
                && ta.invoke < tb.invoke
                && !h.txns.iter().any(ended)
            {
                so.push((a, b));
            }
            if a != b && ta.status == Status::Ok && ta.complete < tb.invoke {
                rt.push((a, b));
            }
        }
    }
    let mut wo = Vec::new();
    let mut observed = Vec::new();
    if h.workload == Workload::List {
        let mut keys: Vec<Key> = lists.iter().map(|l| l.0).collect();
        for &ws in &writes[1..] {
            keys.extend((0..32u8).filter(|&k| ws & (1 << k) != 0));
        }
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            let mut longest: &[Val] = &[];
            for (kk, l) in &lists {
                if *kk != k {
                    continue;
                }
                let (short, long) = if l.len() > longest.len() {
                    (longest, l.as_slice())
                } else {
                    (l.as_slice(), longest)
                };
                if long[..short.len()] != *short {
                    return Interp::Broken("incompatible list orders");
                }
                longest = long;
            }
            // The writers in list order, each writer's appends contiguous
            // and in its own order.
            let mut seq: Vec<usize> = Vec::new();
            let mut i = 0;
            while i < longest.len() {
                let w = writer(k, longest[i]).unwrap_or(0);
                let mine = own(w, k);
                let start = mine.iter().position(|&v| v == longest[i]).unwrap_or(0);
                let take = (mine.len() - start).min(longest.len() - i);
                if start != 0 || longest[i..i + take] != mine[..take] || seq.contains(&node_of[w]) {
                    return Interp::Broken("G0: a transaction's appends split or reordered");
                }
                seq.push(node_of[w]);
                i += take;
            }
            let unobserved: Vec<usize> = (1..n)
                .filter(|&v| writes[v] & (1 << k) != 0 && !seq.contains(&v))
                .collect();
            for p in seq.windows(2) {
                wo.push((p[0], p[1]));
            }
            if let Some(&last) = seq.last() {
                for &u in &unobserved {
                    wo.push((last, u));
                }
            }
            observed.push((k, seq, unobserved));
        }
    }
    Interp::Facts(Facts {
        n,
        txn_of,
        writes,
        reads,
        so,
        rt,
        wo,
        observed,
        assumed: Vec::new(),
        impossible: false,
    })
}
