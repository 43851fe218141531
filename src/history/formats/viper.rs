//! Reads Viper's client logs (ViperBench's `J<thread>.log`): a directory of
//! JSON-lines files, one per session, one committed transaction per line:
//! `{"value": [["r", key, value, isDead], ["w", key, value, succ], ...]}`,
//! with optional client timestamps and `"isInitial": true` on the line that
//! sets the initial state. Read only.
//!
//! As in Viper: the initial line's writes are the initial state (a read of
//! one of them, or of a pair nobody wrote when there is no initial line, or
//! of value 0, reads the initial state); failed writes (`succ` false) are
//! skipped. Inserts, deletes, range reads and reads of dead rows are not
//! supported yet and are refused rather than misread.

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value as J;

use crate::anomaly::Anomaly;
use crate::edn::Value;
use crate::error::{Error, InputError};
use crate::history::build::{Arg, BuildOptions, Builder, RawKind, RawMop, RawTxn, TxnMeta};
use crate::history::formats::Notes;
use crate::history::formats::cobra::LogFile;
use crate::history::model::*;

struct VOp {
    write: bool,
    key: Val,
    val: Val,
}

struct VTxn {
    file: usize,
    line: u32,
    offset: usize,
    ops: Vec<VOp>,
}

/// Reads Viper logs (each file one session).
pub fn read(
    name: &str,
    files: &[LogFile],
    opts: BuildOptions,
    notes: &mut Notes,
) -> Result<(History, Vec<Anomaly>), Error> {
    let mut b = super::register_builder(name, opts, "Viper")?;
    let mut txns: Vec<VTxn> = Vec::new();
    let mut initial: Option<FxHashMap<Val, Val>> = None;
    let mut failed = 0u64;
    for (fi, f) in files.iter().enumerate() {
        let file = &f.name;
        let bytes = &f.bytes;
        let mut off = 0usize;
        let mut line = 0u32;
        while off < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[off..]).map_or(bytes.len(), |i| off + i);
            line += 1;
            let text = bytes[off..end].trim_ascii();
            let at = off;
            off = end + 1;
            if text.is_empty() {
                continue;
            }
            let err = |msg: String| Error::from(InputError::at_line(file, line as usize, msg));
            let v: J = serde_json::from_slice(text).map_err(|e| err(format!("bad JSON: {e}")))?;
            let Some(mops) = v.get("value").and_then(J::as_array) else {
                return Err(err(
                    "expected a transaction {\"value\": [[\"r\", k, v, dead], [\"w\", k, v, ok], ...]}"
                        .into(),
                ));
            };
            let mut ops = Vec::with_capacity(mops.len());
            for m in mops {
                let a = m.as_array().map(Vec::as_slice).unwrap_or(&[]);
                let f = a.first().and_then(J::as_str).unwrap_or("");
                match (f, a.len()) {
                    ("r" | "w", 4) => {}
                    ("i" | "d" | "range", _) => {
                        return Err(err(format!(
                            "Viper's `{f}` micro-op (inserts, deletes, range reads) is not supported yet"
                        )));
                    }
                    _ => {
                        return Err(err(format!(
                            "expected a micro-op [\"r\", key, value, isDead] or [\"w\", key, value, succ], found {m}"
                        )));
                    }
                }
                let flag = a[3].as_bool().ok_or_else(|| {
                    err(format!("the fourth element of {m} must be true or false"))
                })?;
                if f == "r" && flag {
                    return Err(err(format!(
                        "a read of a dead (deleted) row, {m}: not supported yet"
                    )));
                }
                if f == "w" && !flag {
                    failed += 1;
                    continue;
                }
                let key = scalar(&mut b, &a[1]).ok_or_else(|| err(format!("bad key in {m}")))?;
                let val = scalar(&mut b, &a[2]).ok_or_else(|| err(format!("bad value in {m}")))?;
                ops.push(VOp {
                    write: f == "w",
                    key,
                    val,
                });
            }
            if v.get("isInitial").and_then(J::as_bool) == Some(true) {
                if initial.is_some() {
                    return Err(err("a second initial transaction".into()));
                }
                if ops.iter().any(|o| !o.write) {
                    return Err(err("the initial transaction may only write".into()));
                }
                initial = Some(ops.iter().map(|o| (o.key, o.val)).collect());
                continue;
            }
            txns.push(VTxn {
                file: fi,
                line,
                offset: at,
                ops,
            });
        }
    }
    let written: FxHashSet<(Val, Val)> = txns
        .iter()
        .flat_map(|t| t.ops.iter().filter(|o| o.write).map(|o| (o.key, o.val)))
        .collect();
    let zero = Val::int(0);
    let mut raw = RawTxn::default();
    for (n, t) in txns.iter().enumerate() {
        raw.clear();
        for o in &t.ops {
            let arg = if o.write || written.contains(&(o.key, o.val)) {
                Arg::Val(o.val)
            } else {
                let init = match &initial {
                    None => true,
                    Some(m) => m.get(&o.key) == Some(&o.val) || Some(o.val) == zero,
                };
                if init { Arg::Nil } else { Arg::Val(o.val) }
            };
            raw.mops.push(RawMop {
                kind: if o.write {
                    RawKind::Write
                } else {
                    RawKind::Read
                },
                key: o.key,
                arg,
                offset: t.offset,
            });
        }
        let process = files[t.file].process(t.file);
        let meta = TxnMeta {
            status: Status::Committed,
            process,
            invoke: None,
            complete: OpPos {
                index: n as i64,
                time: -1,
                line: t.line,
                offset: t.offset as u64,
            },
            f: Val::NIL,
        };
        b.stats().ops += 1;
        b.stats().client_ops += 1;
        b.push_txn(meta, &raw).map_err(|e| {
            Error::from(InputError::at_line(
                &files[t.file].name,
                t.line as usize,
                e.message,
            ))
        })?;
    }
    notes.count(failed, |s| {
        format!("failed write{s} (succ = false) skipped")
    });
    Ok(b.finish())
}

fn scalar(b: &mut Builder, v: &J) -> Option<Val> {
    match v {
        J::Number(n) => {
            let i = n.as_i64()?;
            Some(Val::int(i).unwrap_or_else(|| b.values().intern(Value::Int(i))))
        }
        J::String(s) => Some(b.values().intern(Value::String(s.clone()))),
        _ => None,
    }
}
