//! Small histories for the oracle: random ones from a fixed-seed generator
//! (a serial execution whose reads see a random earlier committed state,
//! with aborted and indeterminate transactions, occasional reads of
//! aborted, intermediate, unwritten or reordered values, and processes
//! whose transactions interleave in real time), and every history of a
//! given tiny shape.

use super::history::{History, Key, Op, Status, Txn, Val, Workload};

/// SplitMix64: a fixed seed gives the same histories everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True with probability p percent.
    pub fn pct(&mut self, p: usize) -> bool {
        self.below(100) < p
    }
}

/// How a random history's transactions choose what they see.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A prefix of the commit order (a snapshot), mostly recent.
    Snapshot,
    /// A snapshot, and a writer of a key written since aborts (first
    /// committer wins).
    FirstCommitterWins,
    /// A random set closed under what its members saw and session order.
    Causal,
    /// Any set.
    Arbitrary,
    /// Each read its own snapshot.
    PerRead,
}

/// A random history of 1..=max_txns transactions: they run one after
/// another in a simulated store, each seeing a set of the committed ones
/// (chosen by the history's [`Mode`]); a read returns the key's state
/// after the last visible writer in commit order (for a list, every
/// append up to it). Occasionally a read is made up (a value aborted,
/// intermediate, later or never written, or a list reordered).
pub fn random(rng: &mut Rng, workload: Workload, max_txns: usize) -> History {
    let n = 2 + rng.below(max_txns.max(2) - 1);
    let nkeys = 1 + rng.below(3);
    let slots = 1 + rng.below(3);
    let mode = [
        Mode::Snapshot,
        Mode::FirstCommitterWins,
        Mode::Causal,
        Mode::Arbitrary,
        Mode::PerRead,
    ][rng.below(5)];
    let wild = [0, 0, 2, 6][rng.below(4)];
    let mut next: Vec<Val> = vec![1; nkeys];
    let mut written: Vec<Vec<Val>> = vec![Vec::new(); nkeys];
    // Committed transactions (indices) in commit order, what each saw,
    // and each transaction's writes.
    let mut committed: Vec<usize> = Vec::new();
    let mut saw: Vec<u64> = Vec::new();
    let mut writes: Vec<Vec<(usize, Val)>> = Vec::new();
    let mut last_of_slot: Vec<Option<usize>> = vec![None; slots];
    let mut pid: Vec<u32> = (0..slots as u32).collect();
    let mut fresh_pid = slots as u32;
    let mut txns = Vec::new();
    let mut slot_of = Vec::new();
    for i in 0..n {
        let slot = rng.below(slots);
        let mut status = match rng.below(10) {
            0 => Status::Fail,
            1 => Status::Info,
            _ => Status::Ok,
        };
        let session: u64 = (0..i)
            .filter(|&j| slot_of[j] == slot && committed.contains(&j))
            .fold(0, |s, j| s | 1 << j);
        let snapshot = |rng: &mut Rng| -> (u64, usize) {
            let mut s = committed.len();
            while s > 0 && rng.pct(35) {
                s -= 1;
            }
            let mut v: u64 = committed[..s].iter().fold(0, |m, &j| m | 1 << j);
            if rng.pct(85) {
                // Session order mostly holds: include the session's own.
                while s < committed.len() && session & !v != 0 {
                    v |= 1 << committed[s];
                    s += 1;
                }
            }
            (v, s)
        };
        let (mut vis, snap) = snapshot(rng);
        match mode {
            Mode::Causal | Mode::Arbitrary => {
                vis = committed
                    .iter()
                    .filter(|_| rng.pct(50))
                    .fold(0, |m, &j| m | 1 << j);
                if rng.pct(if mode == Mode::Causal { 90 } else { 60 }) {
                    vis |= session;
                }
                if mode == Mode::Causal {
                    loop {
                        let more = committed
                            .iter()
                            .enumerate()
                            .filter(|&(_, &j)| vis & 1 << j != 0)
                            .fold(vis, |m, (c, _)| m | saw[c]);
                        if more == vis {
                            break;
                        }
                        vis = more;
                    }
                }
            }
            _ => {}
        }
        let state = |vis: u64, k: usize| -> Vec<Val> {
            let last = committed
                .iter()
                .enumerate()
                .filter(|&(c, &j)| vis & 1 << j != 0 && writes[c].iter().any(|w| w.0 == k))
                .map(|(c, _)| c)
                .next_back();
            let Some(last) = last else { return Vec::new() };
            let vals = writes[..=last]
                .iter()
                .flatten()
                .filter(|w| w.0 == k)
                .map(|w| w.1);
            match workload {
                Workload::Register => writes[last]
                    .iter()
                    .rev()
                    .find(|w| w.0 == k)
                    .map(|w| vec![w.1])
                    .unwrap_or_default(),
                Workload::List => vals.collect(),
            }
        };
        let mut ops = Vec::new();
        let mut mine: Vec<Vec<Val>> = vec![Vec::new(); nkeys];
        for _ in 0..1 + rng.below(4) {
            let k = rng.below(nkeys);
            if rng.pct(45) {
                let v = next[k];
                next[k] += 1;
                written[k].push(v);
                mine[k].push(v);
                ops.push(Op::Write(k as Key, v));
                continue;
            }
            let seen = if mode == Mode::PerRead {
                snapshot(rng).0
            } else {
                vis
            };
            let mut ext = state(seen, k);
            if rng.pct(wild) {
                // A read no correct store gives.
                match rng.below(4) {
                    0 if !written[k].is_empty() => {
                        let v = written[k][rng.below(written[k].len())];
                        match workload {
                            Workload::Register => ext = vec![v],
                            Workload::List => ext.push(v),
                        }
                    }
                    1 if ext.len() >= 2 => {
                        let i = rng.below(ext.len() - 1);
                        ext.swap(i, i + 1);
                    }
                    2 if !ext.is_empty() => {
                        ext.remove(rng.below(ext.len()));
                    }
                    _ => ext = vec![99],
                }
            }
            let v = match workload {
                Workload::Register => match mine[k].last() {
                    Some(&own) if !rng.pct(wild) => vec![own],
                    _ => ext.last().map(|&v| vec![v]).unwrap_or_default(),
                },
                Workload::List => {
                    let mut l = ext;
                    l.extend(&mine[k]);
                    l
                }
            };
            ops.push(Op::Read(k as Key, v));
        }
        if mode == Mode::FirstCommitterWins
            && status != Status::Fail
            && committed[snap..]
                .iter()
                .enumerate()
                .any(|(c, _)| writes[snap + c].iter().any(|w| !mine[w.0].is_empty()))
        {
            status = Status::Fail;
        }
        let commits = match status {
            Status::Ok => true,
            Status::Fail => false,
            Status::Info => rng.pct(50),
        };
        if commits {
            committed.push(i);
            saw.push(vis);
            writes.push(
                ops.iter()
                    .filter_map(|o| match o {
                        Op::Write(k, v) => Some((*k as usize, *v)),
                        _ => None,
                    })
                    .collect(),
            );
            last_of_slot[slot] = Some(i);
        }
        txns.push(Txn {
            process: pid[slot],
            status,
            ops,
            invoke: 0,
            complete: 0,
        });
        slot_of.push(slot);
        if status == Status::Info {
            // Jepsen gives a crashed process a new id.
            pid[slot] = fresh_pid;
            fresh_pid += 1;
        }
    }
    schedule(rng, &mut txns, &slot_of);
    History { workload, txns }
}

/// Invocation and completion positions: transactions invoked in order, a
/// slot's previous one completed first, others completed at random.
fn schedule(rng: &mut Rng, txns: &mut [Txn], slot_of: &[usize]) {
    let mut pos = 0;
    let mut pending: Vec<usize> = Vec::new();
    for i in 0..txns.len() {
        let mut j = 0;
        while j < pending.len() {
            let p = pending[j];
            if slot_of[p] == slot_of[i] || rng.pct(40) {
                txns[p].complete = pos;
                pos += 1;
                pending.remove(j);
            } else {
                j += 1;
            }
        }
        txns[i].invoke = pos;
        pos += 1;
        pending.push(i);
    }
    while !pending.is_empty() {
        let p = pending.remove(rng.below(pending.len()));
        txns[p].complete = pos;
        pos += 1;
    }
}

/// What one operation of an enumerated transaction does: write key k
/// (the value is the transaction's number + 1), or read key k and see the
/// writes of these transactions, in this order (a register's at most one).
#[derive(Clone, Debug)]
enum Shape {
    W(Key),
    R(Key, Vec<usize>),
}

/// Visits every history of `ntxns` transactions, each of 1..=max_ops
/// operations on `nkeys` keys, all :ok, under every grouping into
/// processes, run one after another or all at once (as far as processes
/// allow). Reads see only values some transaction of the history writes
/// (a list read at most `max_read` of them).
pub fn exhaustive(
    workload: Workload,
    ntxns: usize,
    nkeys: usize,
    max_ops: usize,
    max_read: usize,
    visit: &mut dyn FnMut(&History),
) {
    // Read values: ordered selections of distinct transactions.
    let mut sels: Vec<Vec<usize>> = vec![Vec::new()];
    let max_len = if workload == Workload::Register {
        1
    } else {
        max_read.min(ntxns)
    };
    let mut frontier = sels.clone();
    for _ in 0..max_len {
        let mut nf = Vec::new();
        for s in &frontier {
            for t in 0..ntxns {
                if !s.contains(&t) {
                    let mut s2 = s.clone();
                    s2.push(t);
                    nf.push(s2);
                }
            }
        }
        sels.extend(nf.iter().cloned());
        frontier = nf;
    }
    let mut op_shapes = Vec::new();
    for k in 0..nkeys as Key {
        op_shapes.push(Shape::W(k));
        for s in &sels {
            op_shapes.push(Shape::R(k, s.clone()));
        }
    }
    let mut txn_shapes: Vec<Vec<Shape>> = Vec::new();
    let mut frontier: Vec<Vec<Shape>> = vec![Vec::new()];
    for _ in 0..max_ops {
        let mut nf = Vec::new();
        for t in &frontier {
            for o in &op_shapes {
                let mut t2 = t.clone();
                t2.push(o.clone());
                nf.push(t2);
            }
        }
        txn_shapes.extend(nf.iter().cloned());
        frontier = nf;
    }
    // A transaction writes a key at most once.
    txn_shapes.retain(|t| {
        let ws: Vec<Key> = t
            .iter()
            .filter_map(|o| if let Shape::W(k) = o { Some(*k) } else { None })
            .collect();
        (0..ws.len()).all(|i| !ws[i + 1..].contains(&ws[i]))
    });
    let groupings = restricted_growth(ntxns);
    let mut idx = vec![0usize; ntxns];
    loop {
        let shapes: Vec<&Vec<Shape>> = idx.iter().map(|&i| &txn_shapes[i]).collect();
        let writes = |t: usize, k: Key| {
            shapes[t]
                .iter()
                .any(|o| matches!(o, Shape::W(kk) if *kk == k))
        };
        let sound = shapes.iter().all(|s| {
            s.iter()
                .all(|o| !matches!(o, Shape::R(k, ts) if ts.iter().any(|&t| !writes(t, *k))))
        });
        if sound {
            for g in &groupings {
                for concurrent in [false, true] {
                    visit(&build(workload, &shapes, g, concurrent));
                }
            }
        }
        let mut i = 0;
        loop {
            if i == ntxns {
                return;
            }
            idx[i] += 1;
            if idx[i] < txn_shapes.len() {
                break;
            }
            idx[i] = 0;
            i += 1;
        }
    }
}

/// Groupings of n transactions into processes (restricted growth strings).
fn restricted_growth(n: usize) -> Vec<Vec<u32>> {
    let mut out = vec![vec![0u32]];
    for _ in 1..n {
        let mut next = Vec::new();
        for g in &out {
            let max = *g.iter().max().unwrap_or(&0);
            for p in 0..=max + 1 {
                let mut g2 = g.clone();
                g2.push(p);
                next.push(g2);
            }
        }
        out = next;
    }
    out
}

fn build(workload: Workload, shapes: &[&Vec<Shape>], procs: &[u32], concurrent: bool) -> History {
    let txns = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let ops = s
                .iter()
                .map(|o| match o {
                    Shape::W(k) => Op::Write(*k, i as Val + 1),
                    Shape::R(k, ts) => Op::Read(*k, ts.iter().map(|&t| t as Val + 1).collect()),
                })
                .collect();
            (procs[i], Status::Ok, ops)
        })
        .collect();
    timed(workload, txns, concurrent)
}

/// A history of these (process, outcome, operations), invoked in order:
/// one after another, or all at once as far as their processes allow
/// (each completed when its process's next one starts, the rest at the end).
pub fn timed(workload: Workload, txns: Vec<(u32, Status, Vec<Op>)>, concurrent: bool) -> History {
    let mut txns: Vec<Txn> = txns
        .into_iter()
        .map(|(process, status, ops)| Txn {
            process,
            status,
            ops,
            invoke: 0,
            complete: 0,
        })
        .collect();
    let mut pos = 0;
    if concurrent {
        let mut pending: Vec<usize> = Vec::new();
        for i in 0..txns.len() {
            if let Some(j) = pending
                .iter()
                .position(|&p| txns[p].process == txns[i].process)
            {
                let p = pending.remove(j);
                txns[p].complete = pos;
                pos += 1;
            }
            txns[i].invoke = pos;
            pos += 1;
            pending.push(i);
        }
        for p in pending {
            txns[p].complete = pos;
            pos += 1;
        }
    } else {
        for t in &mut txns {
            t.invoke = pos;
            t.complete = pos + 1;
            pos += 2;
        }
    }
    History { workload, txns }
}

/// Visits `h` under every assignment of outcomes to its transactions
/// (:ok, :fail, or :info for a process's last one), all :ok excepted.
pub fn with_outcomes(h: &History, visit: &mut dyn FnMut(&History)) {
    let n = h.txns.len();
    let last_of_process = |i: usize| {
        !h.txns[i + 1..]
            .iter()
            .any(|t| t.process == h.txns[i].process)
    };
    for code in 1..3usize.pow(n as u32) {
        let mut g = h.clone();
        let mut c = code;
        let mut fine = true;
        for (i, t) in g.txns.iter_mut().enumerate() {
            t.status = [Status::Ok, Status::Fail, Status::Info][c % 3];
            fine &= t.status != Status::Info || last_of_process(i);
            c /= 3;
        }
        if fine {
            visit(&g);
        }
    }
}

/// `h` with each key's values passed through `f` (a register history whose
/// writes `f` makes repeat: a read of a repeated value may then have
/// observed any of its writers).
pub fn map_values(h: &History, f: &dyn Fn(Key, Val) -> Val) -> History {
    let mut g = h.clone();
    for t in &mut g.txns {
        for op in &mut t.ops {
            match op {
                Op::Write(k, v) => *v = f(*k, *v),
                Op::Read(k, vs) => vs.iter_mut().for_each(|v| *v = f(*k, *v)),
            }
        }
    }
    g
}

/// `h` (a register history) with repeated values, as transaction fuzzers
/// write them: each value written to a key after its first shows, with
/// probability `pct` percent, as one written to the key before it (values
/// nobody wrote stay as they are).
pub fn with_repeats(rng: &mut Rng, h: &History, pct: usize) -> History {
    let mut order: Vec<(Key, Val)> = Vec::new();
    for t in &h.txns {
        for op in &t.ops {
            if let Op::Write(k, v) = op
                && !order.contains(&(*k, *v))
            {
                order.push((*k, *v));
            }
        }
    }
    let mut image: Vec<((Key, Val), Val)> = Vec::new();
    for (i, &(k, v)) in order.iter().enumerate() {
        let earlier: Vec<Val> = image[..i]
            .iter()
            .filter(|((kk, _), _)| *kk == k)
            .map(|(_, u)| *u)
            .collect();
        let u = if !earlier.is_empty() && rng.pct(pct) {
            earlier[rng.below(earlier.len())]
        } else {
            v
        };
        image.push(((k, v), u));
    }
    map_values(h, &|k, v| {
        image
            .iter()
            .find(|(kv, _)| *kv == (k, v))
            .map_or(v, |(_, u)| *u)
    })
}

/// The oracle's history of a small Jepsen EDN register history, one event
/// a line, as the generator writes it (`elle-si gen`): each completion
/// paired with its process's pending invocation, reads as the `:ok`
/// completion gives them. Only the EDN reader is shared with the checker,
/// never its history model. Panics on anything else (it reads the
/// generator's output, not users').
pub fn from_edn(text: &str) -> History {
    use elle_si::edn::{Value, read_one};
    let get = |m: &Value, k: &str| match m {
        Value::Map(es) => es
            .iter()
            .find(|(key, _)| *key == Value::Keyword(k.into()))
            .map(|(_, v)| v.clone()),
        _ => None,
    };
    let int = |v: &Value| match v {
        Value::Int(i) => *i,
        other => panic!("not an integer: {other}"),
    };
    let mut txns: Vec<Txn> = Vec::new();
    let mut pending: Vec<(u32, usize)> = Vec::new();
    for (at, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let e = read_one(line.as_bytes()).expect("the generator's EDN");
        let process = get(&e, "process").map(|p| int(&p)).expect(":process") as u32;
        let ty = match get(&e, "type") {
            Some(Value::Keyword(t)) => t,
            other => panic!("no :type: {other:?}"),
        };
        let ops = match get(&e, "value") {
            Some(Value::Vector(ms)) => ms
                .iter()
                .map(|m| match m {
                    Value::Vector(p) if p.len() == 3 => {
                        let k = int(&p[1]) as Key;
                        match (&p[0], &p[2]) {
                            (Value::Keyword(f), v) if f == "w" => Op::Write(k, int(v) as Val),
                            (Value::Keyword(f), Value::Nil) if f == "r" => Op::Read(k, vec![]),
                            (Value::Keyword(f), v) if f == "r" => Op::Read(k, vec![int(v) as Val]),
                            other => panic!("not a register micro-op: {other:?}"),
                        }
                    }
                    other => panic!("not a micro-op: {other}"),
                })
                .collect(),
            other => panic!("no :value: {other:?}"),
        };
        if ty == "invoke" {
            pending.push((process, at));
            continue;
        }
        let i = pending
            .iter()
            .position(|p| p.0 == process)
            .expect("an invocation before its completion");
        let (_, invoke) = pending.remove(i);
        let status = match ty.as_str() {
            "ok" => Status::Ok,
            "fail" => Status::Fail,
            _ => Status::Info,
        };
        txns.push(Txn {
            process,
            status,
            ops,
            invoke,
            complete: at,
        });
    }
    assert!(
        pending.is_empty(),
        "invocations never completed: {pending:?}"
    );
    txns.sort_by_key(|t| t.invoke);
    History {
        workload: Workload::Register,
        txns,
    }
}
