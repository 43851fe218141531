//! The current dbcop's JSON history: read and write.
//!
//! The CLI file is `{"params": {...}, "info": s, "start": date, "end": date,
//! "data": [session, ...]}`; the bare `[session, ...]` is accepted too. A
//! session is an array of `{"events": [...], "committed": bool}`; an event
//! is `{"Write": {"variable": v, "version": n}}`, `{"Read": {"variable": v,
//! "version": n | null}}`, or the compact `["w", v, n]` / `["r", v, n|null]`
//! (dbcop reads both, mixed). We write the wrapper with tagged events, one
//! transaction per line; for list-append input, the version orders go in
//! `info` (the only free-form field).

use std::io::{self, Write};

use serde_json::Value as J;

use crate::error::ParseError;
use crate::history::formats::dbcop::{DEvent, DHistory, DTxn, Projection};
use crate::history::formats::json_cursor::JsonCursor;
use crate::history::formats::{Notes, PResult};

/// Decodes a dbcop JSON history.
pub fn decode(src: &[u8]) -> PResult<DHistory> {
    let mut c = JsonCursor::new(src);
    let mut d = DHistory::default();
    let mut found_data = false;
    match c.peek() {
        Some(b'{') => c.object("the dbcop history", |c, key, _| {
            if key == "data" {
                found_data = true;
                sessions(c, &mut d)
            } else {
                c.skip().map(|_| ())
            }
        })?,
        Some(b'[') => {
            found_data = true;
            sessions(&mut c, &mut d)?
        }
        _ => {
            return Err(ParseError::new(
                c.pos,
                "expected a dbcop history: {\"data\": [[transaction, ...], ...], ...} or [[transaction, ...], ...]",
            ));
        }
    }
    if !found_data {
        return Err(ParseError::new(
            0,
            "the dbcop history has no \"data\" field",
        ));
    }
    if !c.at_end() {
        return Err(ParseError::new(c.pos, "unexpected text after the history"));
    }
    Ok(d)
}

fn sessions(c: &mut JsonCursor, d: &mut DHistory) -> PResult<()> {
    c.array("the sessions", |c, _| {
        let mut txns = Vec::new();
        c.array("a session", |c, _| {
            let offset = c.pos;
            let mut events = Vec::new();
            let mut committed = None;
            c.object("a transaction", |c, key, at| match key {
                "events" => c.array("a transaction's events", |c, _| {
                    let (v, at) = c.value::<J>()?;
                    events.push(event(d, &v, at)?);
                    Ok(())
                }),
                "committed" | "success" => {
                    let (b, at) = c.value::<J>()?;
                    committed = Some(b.as_bool().ok_or_else(|| {
                        ParseError::new(at, format!("\"{key}\" must be true or false"))
                    })?);
                    Ok(())
                }
                _ => {
                    let _ = at;
                    c.skip().map(|_| ())
                }
            })?;
            let Some(committed) = committed else {
                return Err(ParseError::new(
                    offset,
                    "a transaction needs \"committed\": true or false",
                ));
            };
            txns.push(DTxn {
                events,
                committed,
                offset,
                line: 0,
            });
            Ok(())
        })?;
        d.sessions.push(txns);
        Ok(())
    })
}

fn event(d: &mut DHistory, v: &J, at: usize) -> PResult<DEvent> {
    let bad = || {
        ParseError::new(
            at,
            format!(
                "expected an event {{\"Write\": {{\"variable\": v, \"version\": n}}}}, {{\"Read\": {{\"variable\": v, \"version\": n or null}}}}, [\"w\", v, n] or [\"r\", v, n or null]; found {}",
                clip(v)
            ),
        )
    };
    let (write, var, ver) = match v {
        J::Object(m) if m.len() == 1 => {
            let (tag, body) = m.iter().next().ok_or_else(bad)?;
            let write = match tag.as_str() {
                "Write" => true,
                "Read" => false,
                _ => return Err(bad()),
            };
            (write, body.get("variable"), body.get("version"))
        }
        J::Array(a) if a.len() == 3 => {
            let write = match a[0].as_str() {
                Some("w") => true,
                Some("r") => false,
                _ => return Err(bad()),
            };
            (write, a.get(1), a.get(2))
        }
        _ => return Err(bad()),
    };
    let var = match var {
        Some(J::Number(n)) => match n.as_u64() {
            Some(u) => d.intern_u64(u),
            None => return Err(bad()),
        },
        Some(J::String(s)) => super::var_value(d, s),
        _ => return Err(bad()),
    };
    let val = match ver {
        Some(J::Null) if !write => None,
        Some(J::Number(n)) => match n.as_u64() {
            Some(u) => Some(d.intern_u64(u)),
            None => return Err(bad()),
        },
        _ => return Err(bad()),
    };
    Ok(DEvent::done(write, var, val, at))
}

fn clip(v: &J) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        format!("{}...", &s[..s.floor_char_boundary(80)])
    } else {
        s
    }
}

/// Writes dbcop sessions as dbcop's JSON.
pub fn write(p: &Projection, out: &mut dyn Write, notes: &mut Notes) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    let info = if p.orders.is_empty() {
        "converted by elle-si".to_string()
    } else {
        let orders: Vec<String> = p
            .orders
            .iter()
            .map(|(k, vs)| {
                let vs: Vec<String> = vs.iter().map(u64::to_string).collect();
                format!("{k}: {}", vs.join(" "))
            })
            .collect();
        format!(
            "converted by elle-si from list-append; version orders: {}",
            orders.join("; ")
        )
    };
    write!(
        w,
        "{{\"params\": {{\"id\": 0, \"n_node\": {}, \"n_variable\": {}, \"n_transaction\": {}, \"n_event\": {}}},\n \"info\": {},\n \"start\": \"{EPOCH}\", \"end\": \"{EPOCH}\",\n \"data\": [",
        p.sessions.len(),
        p.max_var().map_or(0, |v| v + 1),
        p.txns(),
        p.events(),
        J::String(info)
    )?;
    for (i, s) in p.sessions.iter().enumerate() {
        w.write_all(if i == 0 { b"\n  [" } else { b",\n  [" })?;
        for (j, t) in s.iter().enumerate() {
            w.write_all(if j == 0 { b"\n   " } else { b",\n   " })?;
            w.write_all(b"{\"events\": [")?;
            for (k, &(write, var, val)) in t.events.iter().enumerate() {
                if k > 0 {
                    w.write_all(b", ")?;
                }
                let tag = if write { "Write" } else { "Read" };
                match val {
                    Some(v) => write!(
                        w,
                        "{{\"{tag}\": {{\"variable\": {var}, \"version\": {v}}}}}"
                    )?,
                    None => write!(
                        w,
                        "{{\"{tag}\": {{\"variable\": {var}, \"version\": null}}}}"
                    )?,
                }
            }
            write!(w, "], \"committed\": {}}}", t.committed)?;
        }
        w.write_all(b"]")?;
    }
    w.write_all(b"\n]}\n")?;
    w.flush()?;
    p.renumber_notes(notes, false);
    Ok(())
}

const EPOCH: &str = "1970-01-01T00:00:00+00:00";
