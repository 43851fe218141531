//! Reads elle-cli's JSON histories: one JSON array of op objects, e.g.
//! `{"index": 3, "process": 1, "type": "ok", "f": "txn", "value":
//! [["append", 255, 8], ["r", 253, [1, 3, 4]]]}`. Ops pair and stand alone
//! as in EDN (through [`crate::history::pairing`]); ops whose `process` is
//! not an integer are skipped. As elle-cli does, the values of `type` and
//! `f` are keywords and keys and values stay what JSON says (strings stay
//! strings).

use std::sync::Arc;

use serde_json::Value as J;

use crate::anomaly::Anomaly;
use crate::edn::Value;
use crate::error::{Error, ParseError};
use crate::history::build::{Arg, BuildOptions, Builder, RawKind, RawMop, RawTxn};
use crate::history::formats::PResult;
use crate::history::formats::json_cursor::JsonCursor;
use crate::history::indices::Indices;
use crate::history::model::*;
use crate::history::pairing::{ClientOp, OpType, Paired, Pairer, on_line};
use crate::source::Source;

/// Reads an elle-cli JSON history.
pub fn read(source: &Arc<Source>, opts: BuildOptions) -> Result<(History, Vec<Anomaly>), Error> {
    let mut b = Builder::new(source.name(), opts);
    run(source.bytes(), &mut b).map_err(|e| Error::from(e.locate(source)))?;
    Ok(b.finish())
}

fn run(src: &[u8], b: &mut Builder) -> PResult<()> {
    let mut c = JsonCursor::new(src);
    // A JSON op is read whole and not kept: an invocation's micro-ops are
    // held until its completion.
    let mut pairer: Pairer<RawTxn> = Pairer::default();
    let mut raw = RawTxn::default();
    let mut line_at = (0usize, 1u32);
    let mut indices = Indices::default();
    if c.peek() == Some(b'{') {
        // One op object a line (JSON lines) is no format of elle-cli's.
        return Err(ParseError::new(
            c.pos,
            "expected the history (a JSON array of ops), found an op object on its own",
        )
        .with_help(
            "elle-cli reads one JSON array: put the ops between [ and ], separated by commas",
        ));
    }
    c.array("the history", |c, _| {
        let (v, at) = c.value::<J>()?;
        b.stats().ops += 1;
        let J::Object(m) = &v else {
            return Err(ParseError::new(at, "expected an op object {\"type\": ..., \"process\": ..., \"value\": [...]}"));
        };
        let index = match m.get("index") {
            None | Some(J::Null) => None,
            Some(i) => Some(i.as_i64().ok_or_else(|| {
                ParseError::new(at, format!("\"index\" must be a 64-bit integer, found {i}"))
            })?),
        };
        let index = indices.next(index).map_err(|why| ParseError::new(at, why))?;
        let Some(process) = m.get("process").and_then(J::as_i64) else {
            b.stats().skipped_ops += 1;
            return Ok(());
        };
        b.stats().client_ops += 1;
        let typ = match m.get("type").and_then(J::as_str) {
            Some("invoke") => OpType::Invoke,
            Some("ok") => OpType::Ok,
            Some("fail") => OpType::Fail,
            Some("info") => OpType::Info,
            _ => {
                return Err(ParseError::new(
                    at,
                    "a client op needs \"type\": \"invoke\", \"ok\", \"fail\" or \"info\"",
                ));
            }
        };
        raw.clear();
        let has_value = match m.get("value") {
            None | Some(J::Null) => false,
            Some(J::Array(mops)) => {
                for mop in mops {
                    micro_op(b, mop, at, &mut raw)?;
                }
                true
            }
            Some(other) => {
                return Err(ParseError::new(
                    at,
                    format!(
                        "a client op's \"value\" must be an array of micro-ops like [\"append\", k, v], found {other}"
                    ),
                ));
            }
        };
        let f = match m.get("f") {
            None | Some(J::Null) => Val::NIL,
            Some(J::String(s)) => b.values().intern(Value::Keyword(s.clone())),
            Some(other) => {
                let v = plain(other, at)?;
                b.values().intern(v)
            }
        };
        let (from, line) = line_at;
        let line = line + memchr::memchr_iter(b'\n', &src[from..at]).count() as u32;
        line_at = (at, line);
        let pos = OpPos {
            index,
            time: m.get("time").and_then(J::as_i64).unwrap_or(-1),
            line,
            offset: at as u64,
        };
        let op = ClientOp {
            typ,
            process,
            pos,
            start: at,
            f,
            has_value,
        };
        match pairer.op(&op, None, on_line, || raw.clone())? {
            Paired::Pending => Ok(()),
            Paired::Txn(meta, None) => b.push_txn(meta, &raw).map(|_| ()),
            Paired::Txn(meta, Some(inv)) => b.push_txn(meta, &inv.held).map(|_| ()),
        }
    })?;
    if !c.at_end() {
        return Err(ParseError::new(
            c.pos,
            "unexpected text after the history's closing `]`",
        ));
    }
    for (meta, inv) in pairer.finish() {
        b.push_txn(meta, &inv.held)?;
        b.stats().dangling_invokes += 1;
    }
    let s = b.stats();
    s.completions_only = pairer.completions_only();
    Ok(())
}

fn micro_op(b: &mut Builder, mop: &J, at: usize, raw: &mut RawTxn) -> PResult<()> {
    let bad = || {
        ParseError::new(
            at,
            format!(
                "expected a micro-op [\"append\", k, v], [\"r\", k, v] or [\"w\", k, v], found {mop}"
            ),
        )
    };
    let J::Array(a) = mop else { return Err(bad()) };
    if a.len() != 3 {
        return Err(bad());
    }
    let kind = match a[0].as_str() {
        Some("append") => RawKind::Append,
        Some("r") => RawKind::Read,
        Some("w") => RawKind::Write,
        _ => return Err(bad()),
    };
    let key = scalar(b, &a[1], at)?;
    let arg = match (&a[2], kind) {
        (J::Null, _) => Arg::Nil,
        (J::Array(items), RawKind::Read) => {
            let start = raw.elems.len() as u32;
            for x in items {
                let v = scalar(b, x, at)?;
                raw.elems.push(v);
            }
            Arg::List {
                start,
                len: items.len() as u32,
            }
        }
        (x, _) => Arg::Val(scalar(b, x, at)?),
    };
    raw.mops.push(RawMop {
        kind,
        key,
        arg,
        offset: at,
    });
    Ok(())
}

fn scalar(b: &mut Builder, v: &J, at: usize) -> PResult<Val> {
    if let Some(i) = v.as_i64()
        && let Some(x) = Val::int(i)
    {
        return Ok(x);
    }
    let v = plain(v, at)?;
    Ok(b.values().intern(v))
}

/// A JSON value as EDN.
fn plain(v: &J, at: usize) -> PResult<Value> {
    Ok(match v {
        J::Null => Value::Nil,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::Int(i),
            (_, Some(u), _) => Value::BigInt(u.to_string()),
            (_, _, Some(f)) => Value::Float(f),
            _ => return Err(ParseError::new(at, format!("unreadable number {n}"))),
        },
        J::String(s) => Value::String(s.clone()),
        J::Array(xs) => Value::Vector(xs.iter().map(|x| plain(x, at)).collect::<PResult<_>>()?),
        J::Object(m) => Value::Map(
            m.iter()
                .map(|(k, x)| Ok((Value::String(k.clone()), plain(x, at)?)))
                .collect::<PResult<_>>()?,
        ),
    })
}
