//! Writes elle-cli's JSON histories: the shape [`super::read`](mod@super::read) reads, one
//! op object per line, invocations and completions as in EDN (see
//! [`crate::history::formats::edn::write`]).

use std::io::{self, Write};

use serde_json::Value as J;

use crate::edn::{Value, to_json as json};
use crate::history::formats::Notes;
use crate::history::model::*;

/// Two keys of the history that JSON would write alike (a keyword and the
/// string of its name: JSON has no keywords), or two values written to
/// one key alike: elle-cli's JSON cannot hold the history as it is. The
/// pair, rendered as EDN, and what both become.
pub fn merged(h: &History) -> Option<(String, String, String)> {
    use rustc_hash::FxHashMap;
    let mut keys: FxHashMap<String, KeyId> = FxHashMap::default();
    for k in 0..h.keys.len() as KeyId {
        let kv = h.key_value(k);
        let j = json(&kv).to_string();
        if let Some(&other) = keys.get(&j) {
            return Some((h.key_value(other).to_string(), kv.to_string(), j));
        }
        keys.insert(j, k);
    }
    // Integers and strings render apart: values collide only beside a
    // keyword (or another form JSON lacks), which most histories never
    // write.
    let exotic = h
        .mops
        .iter()
        .filter(|m| m.is_write() && m.val.as_int().is_none())
        .any(|m| !matches!(h.value(m.val), Value::String(_)));
    if !exotic {
        return None;
    }
    let mut vals: FxHashMap<(KeyId, String), Val> = FxHashMap::default();
    for m in h.mops.iter().filter(|m| m.is_write()) {
        let v = h.value(m.val);
        let other = *vals.entry((m.key, json(&v).to_string())).or_insert(m.val);
        if other != m.val {
            return Some((
                h.value(other).to_string(),
                v.to_string(),
                json(&v).to_string(),
            ));
        }
    }
    None
}

/// Writes a compiled history as elle-cli JSON.
pub fn write(h: &History, out: &mut dyn Write, notes: &mut Notes) -> io::Result<()> {
    let (paired, events) = crate::history::formats::edn::op_events(h);
    let la = h.workload == Some(Workload::ListAppend);
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    let mut keywords = 0u64;
    w.write_all(b"[")?;
    for (n, e) in events.iter().enumerate() {
        let txn = &h.txns[e.txn as usize];
        let mut m = serde_json::Map::new();
        m.insert("index".into(), J::from(e.index));
        if e.pos.time >= 0 {
            m.insert("time".into(), J::from(e.pos.time));
        }
        let typ = if e.invoke {
            "invoke"
        } else {
            txn.status.keyword()
        };
        m.insert("type".into(), J::from(typ));
        m.insert(
            "process".into(),
            J::from(h.sessions[txn.session as usize].process),
        );
        let f = if txn.f == Val::NIL {
            J::from("txn")
        } else {
            json(&h.value(txn.f))
        };
        m.insert("f".into(), f);
        let mops = txn
            .mops()
            .map(|i| {
                let (f, k, v) =
                    crate::history::formats::edn::mop_parts(h, i as MopId, e.invoke, la);
                if matches!(k, Value::Keyword(_)) || matches!(v, Value::Keyword(_)) {
                    keywords += 1;
                }
                J::Array(vec![J::from(f), json(&k), json(&v)])
            })
            .collect();
        m.insert("value".into(), J::Array(mops));
        w.write_all(if n == 0 { b"" } else { b",\n " })?;
        serde_json::to_writer(&mut w, &J::Object(m))?;
    }
    w.write_all(b"]\n")?;
    w.flush()?;
    if !paired && !h.txns.is_empty() {
        notes.add("no invocations in the input: written as completions only");
    }
    notes.count(keywords, |s| {
        format!("micro-op{s} with keyword keys or values written as JSON strings (elle-cli reads them back as strings)")
    });
    Ok(())
}
