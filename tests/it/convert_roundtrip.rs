//! Round-trip properties over random Jepsen histories (list-append and
//! rw-register, with failed and indeterminate transactions, dangling
//! invocations, and anomalous reads): EDN -> elle-cli JSON -> EDN is
//! lossless; EDN -> text / dbcop JSON / dbcop text -> EDN keeps sessions,
//! statuses (as the register formats map them) and reads-from; the
//! streaming EDN -> text path writes the same bytes as the model path; and
//! the anomalies found before and after agree.

use elle_si::check::basic;
use elle_si::history::formats::{self, Notes, RegOp, RegisterTxn, register_ops};
use elle_si::history::model::*;
use elle_si::history::{Format, LoadOptions, Loaded};

use crate::support;

/// xorshift64*: enough randomness for shapes, reproducible by seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

/// A random history in EDN: processes run transactions concurrently
/// (invocations interleave), some fail or end :info, a few never complete,
/// and some reads return what they should not (stale, aborted or unwritten
/// values).
fn random_edn(seed: u64, list_append: bool) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let keys = 1 + r.below(6) as i64;
    let mut state: Vec<Vec<i64>> = vec![Vec::new(); keys as usize];
    let mut aborted: Vec<(i64, i64)> = Vec::new();
    let mut next_val = 1i64;
    let mut out = String::new();
    let mut index = 0;
    let mut procs: Vec<i64> = (0..1 + r.below(4) as i64).collect();
    let mut open: Vec<(i64, String, String)> = Vec::new();
    let steps = 1 + r.below(40);
    for _ in 0..steps {
        // Complete an open transaction, or invoke a new one.
        if !open.is_empty() && r.chance(50) {
            let (p, _inv, done) = open.remove(r.below(open.len() as u64) as usize);
            out.push_str(&format!(
                "{{:index {index}, :time {index}, {done}, :process {p}, :f :txn}}\n"
            ));
            index += 1;
            let _ = p;
            continue;
        }
        let free: Vec<i64> = procs
            .iter()
            .copied()
            .filter(|p| !open.iter().any(|o| o.0 == *p))
            .collect();
        let Some(&p) = free.get(r.below(free.len().max(1) as u64) as usize) else {
            continue;
        };
        let n = 1 + r.below(4);
        let typ = match r.below(10) {
            0 => "fail",
            1 => "info",
            _ => "ok",
        };
        let (mut inv, mut done) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let k = r.below(keys as u64) as i64;
            if r.chance(50) {
                let v = next_val;
                next_val += 1;
                let f = if list_append { "append" } else { "w" };
                inv.push(format!("[:{f} {k} {v}]"));
                done.push(format!("[:{f} {k} {v}]"));
                if typ == "fail" {
                    aborted.push((k, v));
                } else {
                    state[k as usize].push(v);
                }
            } else {
                inv.push(format!("[:r {k} nil]"));
                let s = &state[k as usize];
                let read: Vec<i64> = match r.below(12) {
                    // An aborted value, or one nobody wrote.
                    0 if !aborted.is_empty() => {
                        let a = aborted[r.below(aborted.len() as u64) as usize];
                        if a.0 == k { vec![a.1] } else { s.clone() }
                    }
                    1 => {
                        let mut v = s.clone();
                        v.push(999_999);
                        v
                    }
                    // Stale.
                    2 if !s.is_empty() => s[..r.below(s.len() as u64) as usize].to_vec(),
                    _ => s.clone(),
                };
                let shown = if typ != "ok" {
                    "nil".to_string()
                } else if list_append {
                    let items: Vec<String> = read.iter().map(i64::to_string).collect();
                    format!("[{}]", items.join(" "))
                } else {
                    read.last().map_or("nil".into(), i64::to_string)
                };
                done.push(format!("[:r {k} {shown}]"));
            }
        }
        let inv_s = format!(":type :invoke, :value [{}]", inv.join(" "));
        let value = if typ != "ok" && r.chance(30) {
            "nil".to_string()
        } else {
            format!("[{}]", done.join(" "))
        };
        let done_s = format!(":type :{typ}, :value {value}");
        out.push_str(&format!(
            "{{:index {index}, :time {index}, {inv_s}, :process {p}, :f :txn}}\n"
        ));
        index += 1;
        open.push((p, inv_s, done_s));
        if typ == "info" {
            let np = procs.iter().max().map_or(0, |m| m + 1);
            if let Some(slot) = procs.iter_mut().find(|x| **x == p) {
                *slot = np;
            }
        }
    }
    // Most open transactions complete; a few dangle.
    for (p, _, done) in open {
        if r.chance(80) {
            out.push_str(&format!(
                "{{:index {index}, :time {index}, {done}, :process {p}, :f :txn}}\n"
            ));
            index += 1;
        }
    }
    out
}

/// `bytes` read as `format`.
fn load_as(name: &str, bytes: Vec<u8>, format: Format) -> Loaded {
    let opts = LoadOptions {
        format: Some(format),
        ..LoadOptions::default()
    };
    support::load_bytes(name, bytes, opts)
}

fn write(h: &History, f: Format) -> Vec<u8> {
    let mut out = Vec::new();
    formats::write(h, f, &mut out, &mut Notes::default()).unwrap();
    out
}

/// Where a read's value came from, by position, so that renumbered keys
/// and values compare equal.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Obs {
    Initial,
    /// (session, committed transaction, op) of the writer.
    Committed(usize, usize, usize),
    /// (session, n-th aborted write in it).
    Aborted(usize, usize),
    ThinAir,
}

#[derive(Debug, PartialEq, Eq, Clone)]
enum OpSig {
    W(usize),
    R(usize, Obs),
}

/// A history as the register formats can say it: per session, the
/// committed (or indeterminate) transactions' ops, and the aborted writes
/// (the text format does not keep aborted transactions apart).
#[derive(Debug, PartialEq, Eq, Default)]
struct RegSig {
    sessions: Vec<(Vec<Vec<OpSig>>, Vec<usize>)>,
}

fn reg_sig(h: &History) -> RegSig {
    // Kept transactions per session, and sessions in the order of their
    // first kept transaction (the order is all a file says about sessions).
    let mut ops = Vec::new();
    let mut order: Vec<(TxnId, usize)> = Vec::new();
    let mut kept: Vec<Vec<TxnId>> = vec![Vec::new(); h.sessions.len()];
    for (si, s) in h.sessions.iter().enumerate() {
        for &t in &s.txns {
            register_ops(h, t, &mut ops);
            if !ops.is_empty() {
                kept[si].push(t);
            }
        }
        if let Some(&t) = kept[si].first() {
            order.push((t, si));
        }
    }
    order.sort_unstable();
    // Writers first, so that reads can name them.
    let mut where_: rustc_hash::FxHashMap<MopId, Obs> = Default::default();
    for (dense, &(_, si)) in order.iter().enumerate() {
        let (mut committed, mut aborted) = (0, 0);
        for &t in &kept[si] {
            let kind = RegisterTxn::of(h.txns[t as usize].status);
            let mut oi = 0;
            for m in h.txns[t as usize].mops() {
                let mop = &h.mops[m];
                if mop.is_read() && !kind.keeps_reads() {
                    continue;
                }
                if mop.is_write() {
                    let at = if kind == RegisterTxn::AbortedWrites {
                        aborted += 1;
                        Obs::Aborted(dense, aborted - 1)
                    } else {
                        Obs::Committed(dense, committed, oi)
                    };
                    where_.insert(m as MopId, at);
                }
                oi += 1;
            }
            if kind != RegisterTxn::AbortedWrites {
                committed += 1;
            }
        }
    }
    let mut keys: rustc_hash::FxHashMap<KeyId, usize> = Default::default();
    let mut key = |k: KeyId| {
        let n = keys.len();
        *keys.entry(k).or_insert(n)
    };
    let mut sig = RegSig::default();
    for &(_, si) in &order {
        let (mut txns, mut aborted) = (Vec::new(), Vec::new());
        for &t in &kept[si] {
            let kind = RegisterTxn::of(h.txns[t as usize].status);
            let mut txn = Vec::new();
            for m in h.txns[t as usize].mops() {
                let mop = &h.mops[m];
                if mop.is_read() && !kind.keeps_reads() {
                    continue;
                }
                let k = key(mop.key);
                if kind == RegisterTxn::AbortedWrites {
                    aborted.push(k);
                } else if mop.is_write() {
                    txn.push(OpSig::W(k));
                } else {
                    let obs = match mop.observed() {
                        Some(w) => where_[&w],
                        None if mop.from == from::INITIAL => Obs::Initial,
                        None => Obs::ThinAir,
                    };
                    txn.push(OpSig::R(k, obs));
                }
            }
            if kind != RegisterTxn::AbortedWrites {
                txns.push(txn);
            }
        }
        sig.sessions.push((txns, aborted));
    }
    sig
}

/// Anomaly names, sorted: what compiling and the non-graph checks find.
fn anomalies(l: &Loaded) -> Vec<String> {
    let mut v: Vec<String> = l
        .anomalies
        .iter()
        .chain(basic::anomalies(&l.history).iter())
        .map(|a| a.name().to_string())
        .collect();
    v.sort();
    v
}

/// The model's structure, without file positions.
fn structure(h: &History) -> impl PartialEq + std::fmt::Debug {
    let txns: Vec<_> = h
        .txns
        .iter()
        .map(|t| {
            (
                t.status,
                t.session,
                t.seq,
                t.start,
                t.end,
                h.value(t.f),
                t.invoke.map(|p| (p.index, p.time)),
                (t.complete.index, t.complete.time),
            )
        })
        .collect();
    let mops: Vec<_> = h
        .mops
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let list = if m.is_read() && h.workload == Some(Workload::ListAppend) {
                h.read_list(i as MopId)
                    .iter()
                    .map(|&v| h.value(v))
                    .collect()
            } else {
                Vec::new()
            };
            (
                m.kind,
                h.key_value(m.key),
                h.value(m.val),
                m.from,
                m.flags,
                list,
            )
        })
        .collect();
    (h.workload, txns, mops, h.sessions.clone(), h.stats.clone())
}

const SEEDS: u64 = 300;

#[test]
fn edn_elle_json_edn_is_lossless() {
    for seed in 0..SEEDS {
        for la in [true, false] {
            let edn = random_edn(seed, la);
            let a = load_as("a.edn", edn.clone().into_bytes(), Format::Edn);
            let json = write(&a.history, Format::Json);
            let b = load_as("b.json", json.clone(), Format::Json);
            assert_eq!(
                structure(&a.history),
                structure(&b.history),
                "seed {seed}\n{edn}\n{}",
                String::from_utf8_lossy(&json)
            );
            assert_eq!(anomalies(&a), anomalies(&b), "seed {seed}");
            let edn2 = write(&b.history, Format::Edn);
            let c = load_as("c.edn", edn2, Format::Edn);
            assert_eq!(structure(&a.history), structure(&c.history), "seed {seed}");
        }
    }
}

#[test]
fn edn_register_formats_edn_keep_sessions_statuses_reads_from() {
    for seed in 0..SEEDS {
        for la in [true, false] {
            let edn = random_edn(seed, la);
            let a = load_as("a.edn", edn.clone().into_bytes(), Format::Edn);
            let want = reg_sig(&a.history);
            for f in [
                Format::Text,
                Format::DbcopJson,
                Format::DbcopHist,
                Format::DbcopBincode,
            ] {
                let out = write(&a.history, f);
                let b = load_as("b", out.clone(), f);
                let got = reg_sig(&b.history);
                assert_eq!(
                    want,
                    got,
                    "seed {seed} {}\n{edn}\n{}",
                    f.name(),
                    String::from_utf8_lossy(&out)
                );
                let back = write(&b.history, Format::Edn);
                let c = load_as("c.edn", back, Format::Edn);
                assert_eq!(want, reg_sig(&c.history), "seed {seed} {} -> edn", f.name());
                // A register source loses nothing the basic checks see.
                if !la {
                    assert_eq!(anomalies(&b), anomalies(&c), "seed {seed} {}", f.name());
                }
            }
        }
    }
}

#[test]
fn register_sources_keep_their_anomalies() {
    // rw-register histories whose reads all resolve: the same anomalies
    // before and after a register format (info transactions' reads are
    // unknown on both sides).
    for seed in 0..SEEDS {
        let edn = random_edn(seed, false);
        let a = load_as("a.edn", edn.clone().into_bytes(), Format::Edn);
        for f in [Format::Text, Format::DbcopJson] {
            let b = load_as("b", write(&a.history, f), f);
            assert_eq!(
                anomalies(&a),
                anomalies(&b),
                "seed {seed} {}\n{edn}",
                f.name()
            );
        }
    }
}

#[test]
fn streaming_text_matches_model_text() {
    for seed in 0..SEEDS {
        for la in [true, false] {
            let edn = random_edn(seed, la);
            let a = load_as("a.edn", edn.clone().into_bytes(), Format::Edn);
            let model = write(&a.history, Format::Text);
            let mut streamed = Vec::new();
            formats::text::stream_from_edn(
                edn.as_bytes(),
                &mut streamed,
                &mut Notes::default(),
                &mut |_| {},
            )
            .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&model),
                String::from_utf8_lossy(&streamed),
                "seed {seed}\n{edn}"
            );
        }
    }
}

#[test]
fn text_is_a_fixpoint() {
    // text -> EDN -> text gives the same bytes.
    for seed in 0..SEEDS {
        let edn = random_edn(seed, true);
        let a = load_as("a.edn", edn.into_bytes(), Format::Edn);
        let t1 = write(&a.history, Format::Text);
        let b = load_as("b.txt", t1.clone(), Format::Text);
        let e = load_as("c.edn", write(&b.history, Format::Edn), Format::Edn);
        let t2 = write(&e.history, Format::Text);
        assert_eq!(
            String::from_utf8_lossy(&t1),
            String::from_utf8_lossy(&t2),
            "seed {seed}"
        );
    }
}

#[test]
fn register_ops_map_statuses() {
    let edn = "{:type :invoke, :process 0, :value [[:append 1 1] [:r 2 nil]]}\n\
               {:type :info, :process 0, :value [[:append 1 1] [:r 2 nil]]}\n\
               {:type :invoke, :process 1, :value [[:append 2 1] [:r 1 nil]]}\n\
               {:type :fail, :process 1, :value [[:append 2 1] [:r 1 nil]]}\n";
    let a = load_as("a.edn", edn.as_bytes().to_vec(), Format::Edn);
    let mut ops = Vec::new();
    register_ops(&a.history, 0, &mut ops);
    assert!(matches!(ops[..], [RegOp::Write { .. }]));
    let mut notes = Notes::default();
    let mut out = Vec::new();
    formats::write(&a.history, Format::Text, &mut out, &mut notes).unwrap();
    assert_eq!(String::from_utf8_lossy(&out), "w(1,1,0,0)\nw(2,1,1,-1)\n");
    assert!(
        notes.lines.iter().any(|n| n.contains("indeterminate")),
        "{notes:?}"
    );
    assert!(
        notes
            .lines
            .iter()
            .any(|n| n.contains("each append became a write"))
    );
}

#[test]
fn streaming_text_matches_model_text_on_shared_histories() {
    if !support::corpus() {
        return;
    }
    let dir = crate::support::root().join("../shared/histories");
    for f in [
        "elle/huge-scc.edn",
        "elle/paper-example-with-process.edn",
        "elle/rw-register.edn",
        "violations/mongodb-aborted-read.edn",
        "valid/list-append/fig10-sess10.edn",
        "tap-cases/list-append/tap-n.edn",
    ] {
        let bytes = std::fs::read(dir.join(f)).unwrap();
        let a = load_as(f, bytes.clone(), Format::Edn);
        let model = write(&a.history, Format::Text);
        let mut streamed = Vec::new();
        formats::text::stream_from_edn(&bytes, &mut streamed, &mut Notes::default(), &mut |_| {})
            .unwrap();
        assert!(
            model == streamed,
            "{f}: streamed text differs from the model's"
        );
        assert!(!model.is_empty(), "{f}");
    }
}
