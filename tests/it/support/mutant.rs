//! Semantic mutants of generated histories, and the run every mutant gets:
//! shared by the property test (`tests/it/prop_mutants.rs`), the fuzz
//! target (`fuzz/fuzz_targets/mutants.rs`, which includes this file by
//! path) and the long-running drivers through the CLI and the JVM
//! (`tests/it/fuzz_cli.rs`, `clj/bench/elle_si/fuzz.clj`), so that all
//! explore the same space and a case one finds replays in the others.
//!
//! Data flow: a few bytes choose the generator's options (workload, store,
//! size, seed, faults, info and abort rates); its history is read back as
//! EDN op maps; further bytes pick and place mutations, each a change a
//! real history has shown or could show (a value written twice, by one
//! transaction or two; a value moved to another transaction; a read of a
//! value nobody wrote; completions dropped, duplicated, reordered, or turned
//! `:info` / `:fail`; invocations without completions; nil, empty, nested
//! and odd reads; keys of mixed types; empty transactions; lines shuffled;
//! and values: a written value respelled as `5N`, an integer past i64, a
//! double, a decimal, a string, a keyword or nil, in its every mention or
//! some; list reads made long, up to 20,000 elements, appended or from
//! thin air; a list element repeated; a process reused after an `:info`).
//! [`exercise`] then sends the mutant through the EDN file reader under each
//! workload option, every model the CLI accepts (each alone and all at
//! once, under a timeout), every rendering (text explanations, EDN and
//! JSON as the CLI bounds them),
//! and, with the `jni` feature, through the JNI bridge's decoder from its
//! wire encoding. Byte-level fuzzing rarely builds a history well-formed
//! enough to reach the compiler's deeper paths; these mutants start there.
//!
//! The contract checked: no panic (the caller sees it), no hang (each check
//! runs under a timeout; the callers bound the whole), a refusal is an input
//! error naming the file, a line and a column, and a committed read of a
//! value nobody wrote (values compared as Clojure's `=` compares them)
//! never leaves a model valid.

#![allow(dead_code)]

use std::time::Duration;

use elle_si::check::{self, CheckOptions};
use elle_si::edn::{self, Value};
use elle_si::error::Error;
use elle_si::generator::{Db, Fault, GenOptions, generate};
use elle_si::history::{Format, LoadOptions, Loaded, Workload, load_bytes};
use elle_si::report::{CheckResult, Valid, render};
use elle_si::spec::Model;

/// The name mutants are read under (errors must name it).
pub const NAME: &str = "mutant.edn";

/// Each check's timeout.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// Choices drawn from the input bytes; past their end, from a generator
/// seeded by them (zeros would always pick the first choice).
pub struct Draw<'a> {
    bytes: &'a [u8],
    pos: usize,
    state: u64,
}

impl<'a> Draw<'a> {
    pub fn new(bytes: &'a [u8]) -> Draw<'a> {
        let state = bytes.iter().fold(0x9e37_79b9_7f4a_7c15u64, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
        Draw {
            bytes,
            pos: 0,
            state,
        }
    }

    pub fn byte(&mut self) -> u8 {
        let b = match self.bytes.get(self.pos) {
            Some(&b) => b,
            None => {
                // splitmix64
                self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = self.state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                (z ^ (z >> 31)) as u8
            }
        };
        self.pos += 1;
        b
    }

    fn more(&self) -> bool {
        self.pos < self.bytes.len()
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let x = u16::from_le_bytes([self.byte(), self.byte()]) as usize;
        x % n
    }
}

/// A mutation, by what it does to the history.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// A transaction's write (or append) repeated in the same transaction.
    WriteTwiceInTxn,
    /// A transaction's write repeated in another transaction.
    WriteTwiceAcrossTxns,
    /// A write taken from its transaction and given to another.
    MoveWrite,
    /// A committed read of a value nobody wrote.
    ThinAirRead,
    DropCompletion,
    DuplicateCompletion,
    /// Two lines swapped.
    SwapLines,
    CompletionToInfo,
    CompletionToFail,
    /// A new invocation that never completes.
    DanglingInvoke,
    /// A completion whose invocation is gone.
    DropInvocation,
    /// A read's value replaced by nil, an empty list, a nested list, a
    /// scalar where a list belongs, a list with a repeated element, ...
    OddRead,
    /// A micro-op's key replaced by one of another type.
    MixedKey,
    /// A transaction with no micro-ops (or a nil value).
    EmptyTxn,
    ShuffleLines,
    /// A written value spelled as another kind (`5N`, an integer past
    /// i64, a double, a decimal, a string, a keyword, nil), in every write
    /// and read of it on its key or in some of them only: those left read
    /// a value nobody wrote, unless Clojure's `=` holds the two equal (`5`
    /// and `5N`).
    RespellValue,
    /// A committed list read made long (up to 20,000 elements): the key's
    /// elements, then new ones appended by a transaction of their own or
    /// by nobody (each one a thin-air read).
    LongRead,
    /// An element of a committed list read repeated, beside itself or at
    /// the end.
    RepeatElement,
    /// A process reused after an `:info`: a later transaction moved to
    /// the process of one whose completion is (made) `:info`.
    ReuseAfterInfo,
}

impl Mutation {
    pub const ALL: [Mutation; 19] = [
        Mutation::WriteTwiceInTxn,
        Mutation::WriteTwiceAcrossTxns,
        Mutation::MoveWrite,
        Mutation::ThinAirRead,
        Mutation::DropCompletion,
        Mutation::DuplicateCompletion,
        Mutation::SwapLines,
        Mutation::CompletionToInfo,
        Mutation::CompletionToFail,
        Mutation::DanglingInvoke,
        Mutation::DropInvocation,
        Mutation::OddRead,
        Mutation::MixedKey,
        Mutation::EmptyTxn,
        Mutation::ShuffleLines,
        Mutation::RespellValue,
        Mutation::LongRead,
        Mutation::RepeatElement,
        Mutation::ReuseAfterInfo,
    ];
}

/// A mutated history: its op maps, and how it was made.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub options: GenOptions,
    pub mutations: Vec<Mutation>,
    pub ops: Vec<Value>,
    /// Written inside `[` `]` rather than one op per line.
    pub wrapped: bool,
}

impl Mutant {
    /// The history file's text.
    pub fn edn(&self) -> Vec<u8> {
        let lines: Vec<String> = self.ops.iter().map(|o| o.to_string()).collect();
        let body = lines.join("\n");
        if self.wrapped {
            format!("[{body}]\n").into_bytes()
        } else {
            format!("{body}\n").into_bytes()
        }
    }
}

/// The generator's options, drawn small (a few sessions, a few short
/// transactions over a few keys), so that mutations collide.
pub fn gen_options(d: &mut Draw) -> GenOptions {
    let workload = if d.byte() & 1 == 0 {
        Workload::ListAppend
    } else {
        Workload::RwRegister
    };
    let db = Db::ALL[d.below(Db::ALL.len())];
    let mut opts = GenOptions {
        sessions: 1 + d.below(4) as u32,
        txns_per_session: 1 + d.below(6) as u32,
        ops_per_txn: 1 + d.below(4) as u32,
        read_ratio: [0.3, 0.5, 0.8][d.below(3)],
        keys: 1 + d.below(5) as u64,
        workload,
        seed: d.below(1 << 16) as u64,
        format: Format::Edn,
        db,
        replicas: 1 + d.below(3) as u32,
        info_rate: [0.0, 0.0, 0.2, 0.5][d.below(4)],
        abort_rate: [0.0, 0.0, 0.2][d.below(3)],
        max_writes_per_key: [None, Some(2)][d.below(2)],
        ..GenOptions::default()
    };
    let f = d.below(Fault::ALL.len() + 4);
    if let Some(&fault) = Fault::ALL.get(f)
        && fault.applies_to(db, workload)
    {
        opts = opts.with_fault(fault, 0.5);
    }
    opts
}

/// Builds a mutant from bytes: the generator's options first, then up to
/// four mutations, each with its own choices.
pub fn mutant(bytes: &[u8]) -> Mutant {
    let mut d = Draw::new(bytes);
    let options = gen_options(&mut d);
    let g = generate(&options).expect("the drawn generator options are in range");
    let ops = edn::read_all(&g.history).expect("the generator writes EDN");
    let mut m = Mutant {
        options,
        mutations: Vec::new(),
        ops,
        wrapped: d.byte() & 1 == 1,
    };
    let n = 1 + d.below(4);
    for _ in 0..n {
        if !d.more() && !m.mutations.is_empty() {
            break;
        }
        let mu = Mutation::ALL[d.below(Mutation::ALL.len())];
        apply(&mut m.ops, mu, &mut d);
        m.mutations.push(mu);
    }
    m
}

// ---------------------------------------------------------------------------
// Op maps

fn kw(s: &str) -> Value {
    Value::keyword(s)
}

fn field<'v>(op: &'v Value, k: &str) -> Option<&'v Value> {
    op.get(&kw(k))
}

fn field_mut<'v>(op: &'v mut Value, k: &str) -> Option<&'v mut Value> {
    match op {
        Value::Map(m) => m.iter_mut().find(|(x, _)| *x == kw(k)).map(|(_, v)| v),
        _ => None,
    }
}

fn set_field(op: &mut Value, k: &str, v: Value) {
    if let Some(x) = field_mut(op, k) {
        *x = v;
    } else if let Value::Map(m) = op {
        m.push((kw(k), v));
    }
}

fn op_type(op: &Value) -> Option<&str> {
    match field(op, "type") {
        Some(Value::Keyword(k)) => Some(k),
        _ => None,
    }
}

/// The micro-ops of an op, when its value is a vector of them.
fn mops_mut(op: &mut Value) -> Option<&mut Vec<Value>> {
    match field_mut(op, "value") {
        Some(Value::Vector(v)) => Some(v),
        _ => None,
    }
}

fn mops(op: &Value) -> &[Value] {
    match field(op, "value") {
        Some(Value::Vector(v)) => v,
        _ => &[],
    }
}

/// A micro-op's function, key and argument.
fn mop_parts(m: &Value) -> Option<(&str, &Value, &Value)> {
    match m {
        Value::Vector(v) if v.len() == 3 => match &v[0] {
            Value::Keyword(f) => Some((f, &v[1], &v[2])),
            _ => None,
        },
        _ => None,
    }
}

fn is_write(m: &Value) -> bool {
    matches!(mop_parts(m), Some(("w" | "append", _, _)))
}

fn is_read(m: &Value) -> bool {
    matches!(mop_parts(m), Some(("r", _, _)))
}

/// A transaction: its invocation and completion lines, as far as process
/// order pairs them.
#[derive(Copy, Clone, Debug)]
struct Txn {
    invoke: Option<usize>,
    complete: Option<usize>,
}

impl Txn {
    fn lines(self) -> impl Iterator<Item = usize> {
        self.invoke.into_iter().chain(self.complete)
    }
}

fn txns(ops: &[Value]) -> Vec<Txn> {
    let mut open: Vec<(Value, usize)> = Vec::new();
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let p = field(op, "process").cloned().unwrap_or(Value::Nil);
        match op_type(op) {
            Some("invoke") => {
                if let Some(j) = open.iter().position(|(q, _)| *q == p) {
                    let (_, inv) = open.remove(j);
                    out.push(Txn {
                        invoke: Some(inv),
                        complete: None,
                    });
                }
                open.push((p, i));
            }
            Some(_) => {
                let invoke = open
                    .iter()
                    .position(|(q, _)| *q == p)
                    .map(|j| open.remove(j).1);
                out.push(Txn {
                    invoke,
                    complete: Some(i),
                });
            }
            None => {}
        }
    }
    out.extend(open.into_iter().map(|(_, i)| Txn {
        invoke: Some(i),
        complete: None,
    }));
    out
}

fn pick<T: Copy>(d: &mut Draw, xs: &[T]) -> Option<T> {
    (!xs.is_empty()).then(|| xs[d.below(xs.len())])
}

/// Lines holding a micro-op that `want` accepts, with its position.
fn mop_sites(ops: &[Value], want: fn(&Value) -> bool, completions: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if completions && op_type(op) == Some("invoke") {
            continue;
        }
        for (j, m) in mops(op).iter().enumerate() {
            if want(m) {
                out.push((i, j));
            }
        }
    }
    out
}

/// The transaction a line belongs to.
fn txn_of(ts: &[Txn], line: usize) -> Option<Txn> {
    ts.iter()
        .copied()
        .find(|t| t.invoke == Some(line) || t.complete == Some(line))
}

/// A value of another type than the keys a generator writes.
fn odd_key(d: &mut Draw) -> Value {
    match d.below(8) {
        0 => Value::String("x".into()),
        1 => kw("k"),
        2 => Value::Float(1.5),
        3 => Value::Vector(vec![Value::Int(1)]),
        4 => Value::Nil,
        5 => Value::BigInt("99999999999999999999".into()),
        6 => Value::Int(-1),
        _ => Value::Bool(true),
    }
}

fn odd_read(d: &mut Draw) -> Value {
    match d.below(9) {
        0 => Value::Nil,
        1 => Value::Vector(vec![]),
        2 => Value::Vector(vec![
            Value::Vector(vec![Value::Int(1), Value::Int(2)]),
            Value::Int(3),
        ]),
        3 => Value::Int(7),
        4 => Value::Vector(vec![Value::Int(1), Value::Int(1)]),
        5 => Value::String("s".into()),
        6 => Value::Map(vec![(kw("a"), Value::Int(1))]),
        7 => Value::List(vec![Value::Int(1), Value::Nil]),
        _ => Value::Set(vec![Value::Int(2)]),
    }
}

/// A value no generated history writes.
fn fresh(d: &mut Draw) -> Value {
    Value::Int(1_000_000 + d.below(1000) as i64)
}

/// `v` (an integer) spelled as another kind of value: the same integer as
/// a bigint (`5N`, equal to `5` in Clojure), or one of a value Clojure
/// tells apart from it (an integer past i64, a double, a decimal, a
/// string, a keyword, nil).
fn respelled(v: i64, d: &mut Draw) -> Value {
    match d.below(7) {
        0 => Value::BigInt(v.to_string()),
        1 => Value::BigInt(format!(
            "{}",
            100_000_000_000_000_000_000u128 + v.unsigned_abs() as u128
        )),
        2 => Value::Float(v as f64 + 0.5),
        3 => Value::BigDec(format!("{v}.50")),
        4 => Value::String(format!("v{v}")),
        5 => kw(&format!("v{v}")),
        _ => Value::Nil,
    }
}

/// How long a list [`Mutation::LongRead`] makes: mostly short, one in
/// twenty-one past the renderings' bounds (1,000 elements shown at a first
/// mention, 1,000 anomalies a type), up to issue 53's 20,000. Rarely: a
/// long thin-air read checked at every model costs the property test's
/// renderings about a second a model.
fn long_length(d: &mut Draw) -> usize {
    match d.below(64) {
        0..28 => 3,
        28..48 => 12,
        48..61 => 150,
        61 => 1_100,
        62 => 2_500,
        _ => 20_000,
    }
}

/// The elements appended to `key` anywhere in `ops`, in the order they
/// first appear.
fn appended(ops: &[Value], key: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for op in ops {
        for (f, k, v) in mops(op).iter().filter_map(mop_parts) {
            if f == "append" && k == key && !out.contains(v) {
                out.push(v.clone());
            }
        }
    }
    out
}

/// A committed read's list at line `i`, micro-op `j`, when it has one.
fn read_list_mut(ops: &mut [Value], i: usize, j: usize) -> Option<&mut Vec<Value>> {
    match mops_mut(&mut ops[i]).and_then(|ms| ms.get_mut(j)) {
        Some(Value::Vector(m)) if m.len() == 3 => match &mut m[2] {
            Value::Vector(es) | Value::List(es) => Some(es),
            _ => None,
        },
        _ => None,
    }
}

/// Applies one mutation (a no-op where the history gives it nothing to
/// act on).
pub fn apply(ops: &mut Vec<Value>, mu: Mutation, d: &mut Draw) {
    let ts = txns(ops);
    match mu {
        Mutation::WriteTwiceInTxn => {
            if let Some((i, j)) = pick(d, &mop_sites(ops, is_write, false)) {
                let w = mops(&ops[i])[j].clone();
                let lines = txn_of(&ts, i).map_or(vec![i], |t| t.lines().collect());
                let at = d.below(mops(&ops[i]).len() + 1);
                for l in lines {
                    if let Some(v) = mops_mut(&mut ops[l]) {
                        let at = at.min(v.len());
                        v.insert(at, w.clone());
                    }
                }
                // And sometimes by another transaction too.
                if d.byte() & 3 == 0 {
                    give(ops, &ts, i, &w, d);
                }
            }
        }
        Mutation::WriteTwiceAcrossTxns | Mutation::MoveWrite => {
            let Some((i, j)) = pick(d, &mop_sites(ops, is_write, false)) else {
                return;
            };
            let w = mops(&ops[i])[j].clone();
            if !give(ops, &ts, i, &w, d) {
                return;
            }
            if mu == Mutation::MoveWrite {
                let from = txn_of(&ts, i).map_or(vec![i], |t| t.lines().collect());
                for l in from {
                    if let Some(v) = mops_mut(&mut ops[l])
                        && let Some(p) = v.iter().position(|m| *m == w)
                    {
                        v.remove(p);
                    }
                }
            }
        }
        Mutation::ThinAirRead => {
            let oks: Vec<Txn> = ts
                .iter()
                .copied()
                .filter(|t| t.complete.is_some_and(|c| op_type(&ops[c]) == Some("ok")))
                .collect();
            let Some(t) = pick(d, &oks) else { return };
            let keys: Vec<Value> = ops
                .iter()
                .flat_map(|o| {
                    mops(o)
                        .iter()
                        .filter_map(mop_parts)
                        .map(|(_, k, _)| k.clone())
                })
                .collect();
            let key = pick_value(d, &keys).unwrap_or(Value::Int(0));
            let v = fresh(d);
            let list = matches!(
                ops.iter().flat_map(|o| mops(o).iter()).find_map(mop_parts),
                Some(("append", _, _))
            );
            let read = if list {
                Value::Vector(vec![Value::Int(1_000_999), v])
            } else {
                v
            };
            let at = d.below(8);
            for l in t.lines() {
                let arg = if Some(l) == t.complete {
                    read.clone()
                } else {
                    Value::Nil
                };
                if let Some(ms) = mops_mut(&mut ops[l]) {
                    let at = at.min(ms.len());
                    ms.insert(at, Value::Vector(vec![kw("r"), key.clone(), arg]));
                }
            }
        }
        Mutation::DropCompletion | Mutation::DropInvocation => {
            let lines: Vec<usize> = ts
                .iter()
                .filter_map(|t| {
                    if mu == Mutation::DropCompletion {
                        t.complete
                    } else {
                        t.invoke
                    }
                })
                .collect();
            if let Some(l) = pick(d, &lines) {
                ops.remove(l);
            }
        }
        Mutation::DuplicateCompletion => {
            let lines: Vec<usize> = ts.iter().filter_map(|t| t.complete).collect();
            if let Some(l) = pick(d, &lines) {
                let at = (l + 1 + d.below(4)).min(ops.len());
                let c = ops[l].clone();
                ops.insert(at, c);
            }
        }
        Mutation::SwapLines => {
            if !ops.is_empty() {
                let (a, b) = (d.below(ops.len()), d.below(ops.len()));
                ops.swap(a, b);
            }
        }
        Mutation::CompletionToInfo | Mutation::CompletionToFail => {
            let lines: Vec<usize> = ts.iter().filter_map(|t| t.complete).collect();
            if let Some(l) = pick(d, &lines) {
                let t = if mu == Mutation::CompletionToInfo {
                    "info"
                } else {
                    "fail"
                };
                set_field(&mut ops[l], "type", kw(t));
            }
        }
        Mutation::DanglingInvoke => {
            let Some(t) = pick(d, &ts) else { return };
            let Some(l) = t.invoke.or(t.complete) else {
                return;
            };
            let mut inv = ops[l].clone();
            set_field(&mut inv, "type", kw("invoke"));
            // A process of its own, or the same one: an invocation
            // followed by another of its process.
            if d.byte() & 1 == 0 {
                set_field(&mut inv, "process", Value::Int(1000 + d.below(4) as i64));
            }
            let at = d.below(ops.len() + 1);
            ops.insert(at, inv);
        }
        Mutation::OddRead => {
            if let Some((i, j)) = pick(d, &mop_sites(ops, is_read, true)) {
                let v = odd_read(d);
                if let Some(Value::Vector(m)) = mops_mut(&mut ops[i]).map(|ms| &mut ms[j]) {
                    m[2] = v;
                }
            }
        }
        Mutation::MixedKey => {
            let all = |_: &Value| true;
            if let Some((i, j)) = pick(d, &mop_sites(ops, all, false)) {
                let k = odd_key(d);
                let both = d.byte() & 1 == 0;
                let lines = match txn_of(&ts, i) {
                    Some(t) if both => t.lines().collect(),
                    _ => vec![i],
                };
                for l in lines {
                    if let Some(Value::Vector(m)) =
                        mops_mut(&mut ops[l]).and_then(|ms| ms.get_mut(j))
                        && m.len() == 3
                    {
                        m[1] = k.clone();
                    }
                }
            }
        }
        Mutation::EmptyTxn => {
            let Some(t) = pick(d, &ts) else { return };
            let v = if d.byte() & 3 == 0 {
                Value::Nil
            } else {
                Value::Vector(vec![])
            };
            for l in t.lines() {
                set_field(&mut ops[l], "value", v.clone());
            }
        }
        Mutation::ShuffleLines => {
            for i in (1..ops.len()).rev() {
                let j = d.below(i + 1);
                ops.swap(i, j);
            }
        }
        Mutation::RespellValue => {
            let Some((i, j)) = pick(d, &mop_sites(ops, is_write, false)) else {
                return;
            };
            let Some(("w" | "append", key, &Value::Int(v))) = mop_parts(&mops(&ops[i])[j]) else {
                return;
            };
            let key = key.clone();
            let to = respelled(v, d);
            let everywhere = d.byte() & 1 == 0;
            let from = Value::Int(v);
            for op in ops.iter_mut() {
                let Some(ms) = mops_mut(op) else { continue };
                for m in ms.iter_mut() {
                    let Value::Vector(p) = m else { continue };
                    if p.len() != 3 || p[1] != key {
                        continue;
                    }
                    let list = match &mut p[2] {
                        Value::Vector(es) | Value::List(es) => es,
                        x => {
                            if *x == from && (everywhere || d.byte() & 1 == 0) {
                                *x = to.clone();
                            }
                            continue;
                        }
                    };
                    for e in list.iter_mut() {
                        if *e == from && (everywhere || d.byte() & 1 == 0) {
                            *e = to.clone();
                        }
                    }
                }
            }
        }
        Mutation::LongRead => {
            let Some((i, j)) = pick(d, &mop_sites(ops, is_read, true)) else {
                return;
            };
            let Some((_, key, _)) = mop_parts(&mops(&ops[i])[j]) else {
                return;
            };
            let key = key.clone();
            let n = long_length(d);
            let mut list = appended(ops, &key);
            list.truncate(n);
            let base = 2_000_000 + 100_000 * d.below(8) as i64;
            let new: Vec<Value> = (0..(n - list.len()) as i64)
                .map(|x| Value::Int(base + x))
                .collect();
            list.extend(new.iter().cloned());
            if let Some(Value::Vector(m)) = mops_mut(&mut ops[i]).and_then(|ms| ms.get_mut(j)) {
                m[2] = Value::Vector(list);
            }
            // The new elements appended, before the read completes, by a
            // transaction of a process of its own; or by nobody.
            if !new.is_empty() && d.byte() & 1 == 0 {
                let appends: Vec<Value> = new
                    .into_iter()
                    .map(|v| Value::Vector(vec![kw("append"), key.clone(), v]))
                    .collect();
                let p = Value::Int(3000 + d.below(4) as i64);
                let op = |t: &str| {
                    Value::Map(vec![
                        (kw("type"), kw(t)),
                        (kw("f"), kw("txn")),
                        (kw("value"), Value::Vector(appends.clone())),
                        (kw("process"), p.clone()),
                    ])
                };
                let at = d.below(i + 1);
                ops.insert(at, op("ok"));
                ops.insert(at, op("invoke"));
                // Numbered as Jepsen numbers ops, when the history is.
                if ops.iter().any(|o| field(o, "index").is_some()) {
                    for (n, o) in ops.iter_mut().enumerate() {
                        set_field(o, "index", Value::Int(n as i64));
                    }
                }
            }
        }
        Mutation::RepeatElement => {
            let sites: Vec<(usize, usize)> = mop_sites(ops, is_read, true)
                .into_iter()
                .filter(|&(i, j)| {
                    matches!(mop_parts(&mops(&ops[i])[j]), Some((_, _, Value::Vector(es))) if !es.is_empty())
                })
                .collect();
            let Some((i, j)) = pick(d, &sites) else {
                return;
            };
            let (e, at_end) = (d.byte() as usize, d.byte() & 1 == 0);
            if let Some(es) = read_list_mut(ops, i, j) {
                let e = e % es.len();
                let x = es[e].clone();
                let at = if at_end { es.len() } else { e + 1 };
                es.insert(at, x);
            }
        }
        Mutation::ReuseAfterInfo => {
            let done: Vec<Txn> = ts
                .iter()
                .copied()
                .filter(|t| t.complete.is_some())
                .collect();
            let Some(t) = pick(d, &done) else { return };
            let Some(c) = t.complete else { return };
            set_field(&mut ops[c], "type", kw("info"));
            let Some(p) = field(&ops[c], "process").cloned() else {
                return;
            };
            let later: Vec<Txn> = ts
                .iter()
                .copied()
                .filter(|u| u.invoke.is_some_and(|l| l > c))
                .collect();
            let Some(u) = pick(d, &later) else { return };
            for l in u.lines() {
                set_field(&mut ops[l], "process", p.clone());
            }
        }
    }
}

/// Adds the micro-op `w` of line `i` to another transaction: often the
/// next to complete (a compiler holding a few transactions back meets
/// both at once), else any. False when there is no other.
fn give(ops: &mut [Value], ts: &[Txn], i: usize, w: &Value, d: &mut Draw) -> bool {
    let others: Vec<Txn> = ts
        .iter()
        .copied()
        .filter(|t| t.invoke != Some(i) && t.complete != Some(i))
        .collect();
    let next = txn_of(ts, i).and_then(|t| t.complete).and_then(|c| {
        others
            .iter()
            .copied()
            .filter(|t| t.complete > Some(c))
            .min_by_key(|t| t.complete)
    });
    let near = d.byte() & 1 == 0;
    let Some(to) = next.filter(|_| near).or_else(|| pick(d, &others)) else {
        return false;
    };
    let at = d.below(8);
    for l in to.lines() {
        if let Some(v) = mops_mut(&mut ops[l]) {
            let at = at.min(v.len());
            v.insert(at, w.clone());
        }
    }
    true
}

fn pick_value(d: &mut Draw, xs: &[Value]) -> Option<Value> {
    (!xs.is_empty()).then(|| xs[d.below(xs.len())].clone())
}

// ---------------------------------------------------------------------------
// The run

/// Every model the CLI accepts, once each.
pub fn accepted_models() -> Vec<Model> {
    Model::ALL.to_vec()
}

/// Whether a committed transaction reads a value (a number, string or
/// keyword, or a list element that is one) that no line of the mutant
/// writes to that key, values compared as Clojure's `=` compares them
/// (`5` is `5N`).
pub fn has_thin_air_read(ops: &[Value]) -> bool {
    let scalar = |v: &Value| {
        matches!(
            v,
            Value::Int(_)
                | Value::BigInt(_)
                | Value::Float(_)
                | Value::BigDec(_)
                | Value::String(_)
                | Value::Keyword(_)
        )
    };
    let mut written: std::collections::HashSet<(Value, Value)> = Default::default();
    for op in ops {
        for m in mops(op) {
            if let Some(("w" | "append", k, v)) = mop_parts(m) {
                written.insert((k.canonical(), v.canonical()));
            }
        }
    }
    let unwritten = |k: &Value, v: &Value| !written.contains(&(k.canonical(), v.canonical()));
    ops.iter()
        .filter(|op| op_type(op) == Some("ok"))
        .flat_map(|op| mops(op).iter().filter_map(mop_parts))
        .any(|(f, k, v)| {
            f == "r"
                && match v {
                    Value::Vector(es) => {
                        es.iter().all(scalar) && es.iter().any(|e| unwritten(k, e))
                    }
                    v => scalar(v) && unwritten(k, v),
                }
        })
}

/// What one mutant's run saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Load attempts refused as bad input.
    pub refused: usize,
    /// Checks run, and how many said :valid? true, false, :unknown.
    pub checks: usize,
    pub verdicts: [usize; 3],
}

/// Renders a result every way the CLI and the bridge do: explaining the
/// first three anomalies of each type, as the text report does, or, with
/// `every`, all of them, as the `-d` folder does.
fn render_all(l: &Loaded, r: &CheckResult, every: bool) {
    let h = &l.history;
    for list in r.anomalies.values() {
        for a in list.iter().take(if every { usize::MAX } else { 3 }) {
            for &t in &a.txns {
                let _ = elle_si::explain::text::place(h, t);
            }
            let _ = elle_si::explain::text::explain(h, a, "  ");
        }
    }
    // As `-o edn` and `-o json` write it, bounded by the input's size.
    let bounds = render::Bounds::for_input(l.source.bytes().len(), None);
    for syntax in [render::Syntax::Edn, render::Syntax::Json { file: None }] {
        let mut out = Vec::new();
        render::write_result(&mut out, h, r, syntax, &bounds).expect("rendering into memory");
        if matches!(syntax, render::Syntax::Edn) {
            assert!(
                edn::read_one(&out).is_ok(),
                "the EDN result map reads back: {}",
                String::from_utf8_lossy(&out)
            );
        }
    }
}

/// Checks `l` at `models` and renders the result (every anomaly
/// explained with `every`).
fn check_one(l: &Loaded, models: Vec<Model>, every: bool, seen: &mut Seen) -> CheckResult {
    let r = check::check(
        l,
        &CheckOptions {
            models,
            timeout: Some(CHECK_TIMEOUT),
            anomalies: Vec::new(),
        },
    );
    render_all(l, &r, every);
    seen.checks += 1;
    seen.verdicts[match r.valid {
        Valid::True => 0,
        Valid::False => 1,
        Valid::Unknown => 2,
    }] += 1;
    r
}

/// Runs a mutant through the reader, every model and every rendering, and
/// the JNI decoder; panics where the contract breaks.
pub fn exercise(m: &Mutant) -> Seen {
    let bytes = m.edn();
    let models = accepted_models();
    let thin_air = has_thin_air_read(&m.ops);
    let mut seen = Seen::default();
    for workload in [None, Some(Workload::ListAppend), Some(Workload::RwRegister)] {
        let opts = LoadOptions {
            format: Some(Format::Edn),
            workload,
            ..LoadOptions::default()
        };
        let l = match load_bytes(NAME, bytes.clone(), opts) {
            Ok(l) => l,
            Err(e) => {
                input_error(&e);
                seen.refused += 1;
                continue;
            }
        };
        // Every model alone under the detected workload; all at once
        // under each.
        if workload.is_none() {
            for &model in &models {
                let r = check_one(&l, vec![model], false, &mut seen);
                assert!(
                    !(thin_air && r.valid == Valid::True),
                    "{model} passes a committed read of a value nobody wrote"
                );
            }
        }
        check_one(&l, models.clone(), true, &mut seen);
    }
    #[cfg(feature = "jni")]
    jni_path(m, &models);
    seen
}

/// A refusal must be an input error naming the file, a line and a column,
/// that renders as a diagnostic.
fn input_error(e: &Error) {
    match e {
        Error::Input(ie) => {
            let s = ie.to_string();
            assert!(s.starts_with(&format!("{NAME}:")), "{s}");
            assert!(ie.line >= 1 && ie.column >= 1, "{s}");
            let mut out = String::new();
            miette::GraphicalReportHandler::new()
                .render_report(&mut out, &**ie)
                .expect("rendering a diagnostic");
        }
        other => panic!("not an input error: {other}"),
    }
}

// ---------------------------------------------------------------------------
// The JNI bridge's wire encoding (see the top of jni/src/wire.rs), written here
// from the op maps as `elle_si.HistoryEncoder` writes it from the JVM's.

#[cfg(feature = "jni")]
fn jni_path(m: &Mutant, models: &[Model]) {
    let (values, ops) = encode(&m.ops);
    let names: Vec<String> = models
        .iter()
        .map(|m| format!("\"{}\"", m.friendly()))
        .collect();
    let options = format!(
        "{{:models [{}] :timeout-ms {} :name \"{NAME}\"}}",
        names.join(" "),
        CHECK_TIMEOUT.as_millis()
    );
    match elle_si_jni::check_encoded(&values, &ops, &options) {
        Ok(result) => assert!(
            edn::read_one(result.as_bytes()).is_ok(),
            "the bridge's result reads back: {result}"
        ),
        Err(msg) => assert!(!msg.is_empty()),
    }
}

#[cfg(feature = "jni")]
use elle_si_jni::write_uv as uv;

#[cfg(feature = "jni")]
fn zigzag(i: i64) -> u64 {
    ((i << 1) ^ (i >> 63)) as u64
}

#[cfg(feature = "jni")]
#[derive(Default)]
struct Wire {
    values: Vec<u8>,
    ops: Vec<u8>,
    ids: Vec<String>,
}

#[cfg(feature = "jni")]
impl Wire {
    /// A value reference: small integers inline, the rest by their EDN
    /// text in the value table (nil is entry 0).
    fn r(&mut self, v: &Value) {
        match v {
            Value::Nil => uv(&mut self.ops, 1),
            Value::Int(i) if i.unsigned_abs() < 1 << 61 => uv(&mut self.ops, zigzag(*i) << 1),
            other => {
                let text = other.to_string();
                let id = match self.ids.iter().position(|t| *t == text) {
                    Some(p) => p + 1,
                    None => {
                        uv(&mut self.values, text.len() as u64);
                        self.values.extend_from_slice(text.as_bytes());
                        self.ids.push(text);
                        self.ids.len()
                    }
                };
                uv(&mut self.ops, ((id as u64) << 1) | 1)
            }
        }
    }

    fn op(&mut self, op: &Value) {
        let typ = match op_type(op) {
            Some("invoke") => 0,
            Some("ok") => 1,
            Some("fail") => 2,
            Some("info") => 3,
            _ => {
                self.ops.push(0x02);
                return;
            }
        };
        let Some(Value::Int(process)) = field(op, "process") else {
            self.ops.push(0x02);
            return;
        };
        let index = field(op, "index").and_then(Value::as_int);
        let time = field(op, "time").and_then(Value::as_int);
        let value = field(op, "value");
        let micro: Option<Vec<(u8, &Value, Option<&Value>)>> = match value {
            Some(Value::Vector(ms)) => ms
                .iter()
                .map(|m| match m {
                    Value::Vector(p) if (2..=3).contains(&p.len()) => {
                        let f = match &p[0] {
                            Value::Keyword(f) if f == "append" => 0,
                            Value::Keyword(f) if f == "r" => 1,
                            Value::Keyword(f) if f == "w" => 2,
                            _ => return None,
                        };
                        Some((f, &p[1], p.get(2)))
                    }
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        let state: u8 = match (value, &micro) {
            (None, _) => 0,
            (Some(Value::Nil), _) => 1,
            (_, Some(_)) => 2,
            _ => 3,
        };
        self.ops.push(0x01);
        self.ops.push(
            typ | if index.is_some() { 4 } else { 0 }
                | if time.is_some() { 8 } else { 0 }
                | (state << 4),
        );
        uv(&mut self.ops, zigzag(*process));
        if let Some(i) = index {
            uv(&mut self.ops, zigzag(i));
        }
        if let Some(t) = time {
            uv(&mut self.ops, zigzag(t));
        }
        self.r(field(op, "f").unwrap_or(&Value::Nil));
        match (state, micro) {
            (2, Some(ms)) => {
                uv(&mut self.ops, ms.len() as u64);
                for (f, k, arg) in ms {
                    let (code, list) = match arg {
                        None | Some(Value::Nil) => (0, None),
                        Some(Value::Vector(es)) | Some(Value::List(es)) => (2, Some(es)),
                        Some(_) => (1, None),
                    };
                    self.ops.push(f | (code << 2));
                    self.r(k);
                    match (code, list, arg) {
                        (2, Some(es), _) => {
                            uv(&mut self.ops, es.len() as u64);
                            for e in es {
                                self.r(e);
                            }
                        }
                        (1, _, Some(a)) => self.r(a),
                        _ => {}
                    }
                }
            }
            (3, _) => {
                let text = value.map(Value::to_string).unwrap_or_default();
                uv(&mut self.ops, text.len() as u64);
                self.ops.extend_from_slice(text.as_bytes());
            }
            _ => {}
        }
    }
}

/// The op maps in the bridge's wire encoding: (values, ops).
#[cfg(feature = "jni")]
pub fn encode(ops: &[Value]) -> (Vec<u8>, Vec<u8>) {
    let mut w = Wire::default();
    w.ops.extend_from_slice(b"ELSI");
    w.ops.push(elle_si_jni::WIRE_VERSION);
    for op in ops {
        w.op(op);
    }
    (w.values, w.ops)
}
