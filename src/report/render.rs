//! Renders results: Elle's EDN result map, the same in JSON, and a short
//! human summary. Transactions in anomalies become op maps rebuilt from the
//! model (list reads from the key's version order), with their file line.

use crate::anomaly::{Anomaly, Datum, Grounds, On, Step};
use crate::edn::Value;
use crate::history::model::*;
use crate::report::CheckResult;

fn kw(s: &str) -> Value {
    Value::Keyword(s.to_string())
}

/// A micro-op as Elle writes it.
pub fn mop_value(h: &History, m: MopId) -> Value {
    mop_value_upto(h, m, usize::MAX)
}

/// `... n more`, closing a collection shown in part.
fn more(n: usize) -> Value {
    Value::Symbol(format!("... {n} more"))
}

/// A micro-op with at most `limit` elements of a list read, then
/// `... n more` (what a report shows, built without the rest).
pub fn mop_value_upto(h: &History, m: MopId, limit: usize) -> Value {
    let mop = &h.mops[m as usize];
    let la = h.workload == Some(Workload::ListAppend);
    let (f, v) = if mop.is_write() {
        (if la { "append" } else { "w" }, h.value(mop.val))
    } else if mop.from == from::UNKNOWN || mop.has(flag::NIL) {
        ("r", Value::Nil)
    } else if la {
        let l = h.read_list(m);
        let mut v: Vec<Value> = l.iter().take(limit).map(|&v| h.value(v)).collect();
        if l.len() > limit {
            v.push(more(l.len() - limit));
        }
        ("r", Value::Vector(v))
    } else {
        ("r", h.value(mop.val))
    };
    Value::Vector(vec![kw(f), h.key_value(mop.key), v])
}

/// A transaction as its completion op map.
pub fn op_value(h: &History, t: TxnId) -> Value {
    op_value_upto(h, t, usize::MAX)
}

/// A transaction's op map with at most `limit` micro-ops, and list reads
/// of at most `limit` elements, each then closed by `... n more`.
pub fn op_value_upto(h: &History, t: TxnId, limit: usize) -> Value {
    op_map(h, t, limit, None)
}

/// A transaction's invocation op map, as Jepsen logged it (its reads not
/// yet answered, `nil`): a real-time step's later transaction, which
/// Elle's explainer gives by its invocation, the op that shows the other
/// had completed before it began. Its completion where the history has
/// no invocation.
pub fn invocation_value(h: &History, t: TxnId) -> Value {
    match h.txns[t as usize].invoke {
        Some(at) => op_map(h, t, usize::MAX, Some(at)),
        None => op_value(h, t),
    }
}

/// [`op_value_upto`], or with `invoked` the invocation at that place.
fn op_map(h: &History, t: TxnId, limit: usize, invoked: Option<OpPos>) -> Value {
    let txn = &h.txns[t as usize];
    let at = invoked.unwrap_or(txn.complete);
    let mut m = Vec::with_capacity(8);
    if at.index >= 0 {
        m.push((kw("index"), Value::Int(at.index)));
    }
    if at.time >= 0 {
        m.push((kw("time"), Value::Int(at.time)));
    }
    m.push((
        kw("type"),
        kw(if invoked.is_some() {
            "invoke"
        } else {
            txn.status.keyword()
        }),
    ));
    m.push((
        kw("process"),
        Value::Int(h.sessions[txn.session as usize].process),
    ));
    m.push((
        kw("f"),
        if txn.f == Val::NIL {
            kw("txn")
        } else {
            h.value(txn.f)
        },
    ));
    let mut value: Vec<Value> = txn
        .mops()
        .take(limit)
        .map(|i| match mop_value_upto(h, i as MopId, limit) {
            // An invocation's reads are yet to be answered.
            Value::Vector(mut mv) if invoked.is_some() && !h.mops[i].is_write() => {
                mv[2] = Value::Nil;
                Value::Vector(mv)
            }
            v => v,
        })
        .collect();
    if txn.mops().len() > limit {
        value.push(more(txn.mops().len() - limit));
    }
    m.push((kw("value"), Value::Vector(value)));
    if at.line > 0 {
        m.push((kw("line"), Value::Int(at.line as i64)));
    }
    Value::Map(m)
}

/// A detail as EDN, transactions as op maps.
pub fn datum_value(h: &History, d: &Datum) -> Value {
    match d {
        Datum::Nil => Value::Nil,
        Datum::Bool(b) => Value::Bool(*b),
        Datum::Int(i) => Value::Int(*i),
        Datum::Str(s) => Value::String(s.clone()),
        Datum::Kw(s) => kw(s),
        Datum::Sym(s) => Value::Symbol(s.clone()),
        Datum::Txn(t) => op_value(h, *t),
        Datum::Mop(m) => mop_value(h, *m),
        Datum::Key(k) => h.key_value(*k),
        Datum::Val(v) => h.value(*v),
        Datum::Vals(vs) => Value::Vector(vs.iter().map(|v| h.value(*v)).collect()),
        Datum::List(ds) => Value::Vector(ds.iter().map(|d| datum_value(h, d)).collect()),
        Datum::Map(kvs) => {
            let mut m: Vec<(Value, Value)> = kvs
                .iter()
                .map(|(k, v)| (datum_value(h, k), datum_value(h, v)))
                .collect();
            // Integers in order, then the rest as printed.
            m.sort_by_cached_key(|(k, _)| match k {
                Value::Int(i) => (0, *i, String::new()),
                k => (1, 0, k.to_string()),
            });
            Value::Map(m)
        }
        Datum::Step(s) => step_value(h, s),
        Datum::Path(p) => Value::Map(vec![
            (kw("ops"), txns_value(h, &p.txns)),
            (kw("steps"), steps_value(h, &p.steps)),
        ]),
        Datum::Alternative(name, c) => Value::Map(vec![
            (kw("type"), kw(name)),
            (
                kw("cycle"),
                c.as_ref().map_or(Value::Nil, |c| txns_value(h, &c.txns)),
            ),
            (
                kw("steps"),
                c.as_ref().map_or(Value::Nil, |c| steps_value(h, &c.steps)),
            ),
        ]),
    }
}

/// Transactions as a vector of op maps.
fn txns_value(h: &History, ts: &[TxnId]) -> Value {
    Value::Vector(ts.iter().map(|&t| op_value(h, t)).collect())
}

/// Steps as a vector of step maps.
fn steps_value(h: &History, steps: &[Step]) -> Value {
    Value::Vector(steps.iter().map(|s| step_value(h, s)).collect())
}

/// One step as Elle's step map: `{:type :ww, :key k, :value v, :value' v'}`
/// (`:initial-state` for the initial version), `{:type :wr, :key k, :value
/// v}`, `{:type :process, :process p}`, `{:type :realtime, :a' op, :b op}`;
/// `:inferred? true` when elle-si inferred the order (with `:through
/// :process` or `:realtime` when only that order forces it), `:assumed?
/// true` when it took one of several to tell the cycle.
pub fn step_value(h: &History, s: &Step) -> Value {
    let mut m = vec![(kw("type"), kw(s.rel.name()))];
    match s.on {
        On::Nothing => {}
        On::Forced(r) => {
            // The read that forced the order: its key, the value it read
            // (the step's second transaction's write), and its reader.
            let read = &h.mops[r as usize];
            m.push((kw("key"), h.key_value(read.key)));
            m.push((kw("value"), h.value(read.val)));
            m.push((kw("op"), op_value(h, read.txn)));
        }
        On::Process(p) => m.push((kw("process"), Value::Int(p))),
        On::Realtime(a, b) => {
            m.push((kw("a'"), op_value(h, a)));
            m.push((kw("b"), invocation_value(h, b)));
        }
        On::Read(k, v) => {
            m.push((kw("key"), h.key_value(k)));
            m.push((kw("value"), h.value(v)));
        }
        On::Versions(k, v, v2) => {
            m.push((kw("key"), h.key_value(k)));
            m.push((
                kw("value"),
                v.map_or_else(|| kw("initial-state"), |v| h.value(v)),
            ));
            m.push((kw("value'"), h.value(v2)));
        }
    }
    match s.grounds {
        Grounds::Observed => {}
        Grounds::Inferred => m.push((kw("inferred?"), Value::Bool(true))),
        Grounds::Assumed => m.push((kw("assumed?"), Value::Bool(true))),
        Grounds::Through(r) => {
            m.push((kw("inferred?"), Value::Bool(true)));
            m.push((kw("through"), kw(r.name())));
        }
    }
    Value::Map(m)
}

/// One anomaly as Elle's map (plus `:cycle-type`, the type its steps tell,
/// when it is filed under a narrowed claim, and `:pattern` when a C4
/// pattern applies).
pub fn anomaly_value(h: &History, a: &Anomaly) -> Value {
    if given_as_true(&a.name) {
        return Value::Bool(true);
    }
    let mut m: Vec<(Value, Value)> = Vec::new();
    if let Some(c) = &a.cycle {
        m.push((kw("cycle"), txns_value(h, &c.txns)));
        m.push((kw("steps"), steps_value(h, &c.steps)));
    }
    m.extend(
        a.fields
            .iter()
            .map(|(k, d)| (kw(k.name()), datum_value(h, d))),
    );
    m.push((kw("type"), kw(&a.name)));
    if let Some(t) = &a.told {
        m.push((kw("cycle-type"), kw(t)));
    }
    if let Some(p) = a.pattern {
        m.push((kw("pattern"), kw(p)));
    }
    Value::Map(m)
}

/// The text a result map is written in.
#[derive(Clone, Copy, Debug)]
pub enum Syntax<'a> {
    /// Elle's EDN, as `Display` gives [`result_value`].
    Edn,
    /// JSON, as [`json`] gives it (keys sorted), with a `"file"` entry
    /// when one is named.
    Json {
        /// The history's file, for runs of several.
        file: Option<&'a str>,
    },
}

/// Writes [`result_value`]'s text in `syntax` to `out`, rendering one
/// anomaly at a time: a large violation's map is never held whole (a
/// 100k-transaction list-append history with lost updates at strict
/// serializability: 14k cycles whose ops hold long list reads, 1.5 GB of
/// EDN, which as one value peaked at 11 GB).
pub fn write_result(
    out: &mut impl std::io::Write,
    h: &History,
    r: &CheckResult,
    syntax: Syntax,
) -> std::io::Result<()> {
    let frame = result_value(h, &without_anomalies(r));
    let anomalies = "anomalies";
    // The frame's entries as text, in order; the anomalies' value None.
    let entries: Vec<(String, Option<String>)> = match syntax {
        Syntax::Edn => match &frame {
            Value::Map(m) => m
                .iter()
                .map(|(k, v)| (k.to_string(), (*k != kw(anomalies)).then(|| v.to_string())))
                .collect(),
            _ => Vec::new(),
        },
        Syntax::Json { file } => match json(&frame) {
            serde_json::Value::Object(mut m) => {
                if let Some(f) = file {
                    m.insert("file".into(), serde_json::Value::String(f.into()));
                }
                m.iter()
                    .map(|(k, v)| {
                        let key = serde_json::Value::String(k.clone()).to_string();
                        (key, (k != anomalies).then(|| v.to_string()))
                    })
                    .collect()
            }
            _ => Vec::new(),
        },
    };
    let json_syntax = matches!(syntax, Syntax::Json { .. });
    let (is, then, next) = if json_syntax {
        (":", ",", ",")
    } else {
        (" ", ", ", " ")
    };
    let key = |t: &str| {
        if json_syntax {
            serde_json::Value::String(t.into()).to_string()
        } else {
            kw(t).to_string()
        }
    };
    out.write_all(b"{")?;
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.write_all(then.as_bytes())?;
        }
        write!(out, "{k}{is}")?;
        if let Some(v) = v {
            out.write_all(v.as_bytes())?;
            continue;
        }
        out.write_all(b"{")?;
        for (j, (t, list)) in r.anomalies.iter().enumerate() {
            if j > 0 {
                out.write_all(then.as_bytes())?;
            }
            write!(out, "{}{is}", key(t))?;
            if given_as_true(t) {
                out.write_all(b"true")?;
                continue;
            }
            out.write_all(b"[")?;
            for (n, a) in list.iter().enumerate() {
                if n > 0 {
                    out.write_all(next.as_bytes())?;
                }
                let v = anomaly_value(h, a);
                if json_syntax {
                    serde_json::to_writer(&mut *out, &json(&v)).map_err(std::io::Error::from)?;
                } else {
                    write!(out, "{v}")?;
                }
            }
            out.write_all(b"]")?;
        }
        out.write_all(b"}")?;
    }
    out.write_all(b"}")
}

/// `r` with each anomaly list emptied, its types kept: the frame of its
/// result map.
fn without_anomalies(r: &CheckResult) -> CheckResult {
    CheckResult {
        valid: r.valid,
        anomaly_types: r.anomaly_types.clone(),
        anomalies: r
            .anomalies
            .keys()
            .map(|t| (t.clone(), Vec::new()))
            .collect(),
        not: r.not.clone(),
        also_not: r.also_not.clone(),
        notes: Vec::new(),
        undecided: Vec::new(),
        ruled_out: std::collections::BTreeSet::new(),
    }
}

/// Whether Elle gives anomalies of type `t` as `true` rather than a list
/// of them (an empty transaction graph has nothing to list).
fn given_as_true(t: &str) -> bool {
    t == "empty-transaction-graph"
}

/// Elle's result map.
pub fn result_value(h: &History, r: &CheckResult) -> Value {
    let mut m = vec![(
        kw("valid?"),
        match r.valid {
            super::Valid::True => Value::Bool(true),
            super::Valid::False => Value::Bool(false),
            super::Valid::Unknown => kw("unknown"),
        },
    )];
    if r.anomalies.is_empty() {
        return Value::Map(m);
    }
    m.push((
        kw("anomaly-types"),
        Value::Vector(r.anomaly_types.iter().map(|t| kw(t)).collect()),
    ));
    let anomalies = r
        .anomalies
        .iter()
        .map(|(t, list)| {
            let v = if given_as_true(t) {
                Value::Bool(true)
            } else {
                Value::Vector(list.iter().map(|a| anomaly_value(h, a)).collect())
            };
            (kw(t), v)
        })
        .collect();
    m.push((kw("anomalies"), Value::Map(anomalies)));
    m.push((kw("not"), Value::Set(r.not.iter().map(|s| kw(s)).collect())));
    m.push((
        kw("also-not"),
        Value::Set(r.also_not.iter().map(|s| kw(s)).collect()),
    ));
    Value::Map(m)
}

/// EDN as JSON (see [`crate::edn::to_json`]).
pub use crate::edn::to_json as json;
