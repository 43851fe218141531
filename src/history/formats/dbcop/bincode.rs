//! dbcop's OOPSLA'19 `history.bincode` (also PolySI's dbcop format): read
//! and write.
//!
//! bincode 1.x with its top-level helpers' settings: fixed-width
//! little-endian integers, `usize` as u64, `bool` as one byte 0/1, strings
//! and vectors as a u64 length then their contents, structs as their fields
//! in order. The layout is
//!
//! ```text
//! History  = params: 5 x u64 (id, n_node, n_variable, n_transaction, n_event)
//!            info: string, start: string, end: string (RFC 3339 dates)
//!            data: vec<vec<Transaction>>            (sessions)
//! Transaction = events: vec<Event>, success: bool
//! Event       = write: bool, variable: u64, value: u64, success: bool
//! ```
//!
//! Decoded by hand rather than through serde and the `bincode` crate: the
//! layout is five fixed shapes, and by hand every error can name the byte
//! offset and the record and field it was reading. `params` are not
//! trusted (dbcop writes per-session counts, PolySI totals): counts come
//! from `data`. Trailing bytes are refused.

use std::io::{self, Write};

use crate::error::ParseError;
use crate::history::formats::dbcop::{DEvent, DHistory, DTxn, Projection};
use crate::history::formats::{Notes, PResult};

struct Dec<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Dec<'_> {
    fn u64(&mut self, what: &dyn Fn() -> String) -> PResult<u64> {
        let Some(s) = self.b.get(self.pos..self.pos + 8) else {
            return Err(ParseError::new(
                self.pos,
                format!(
                    "the file ends inside {} (8 bytes needed, {} left): truncated, or not a dbcop bincode history",
                    what(),
                    self.b.len() - self.pos
                ),
            ));
        };
        self.pos += 8;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }

    fn bool(&mut self, what: &dyn Fn() -> String) -> PResult<bool> {
        match self.b.get(self.pos) {
            None => Err(ParseError::new(
                self.pos,
                format!("the file ends inside {}: truncated", what()),
            )),
            Some(&c @ (0 | 1)) => {
                self.pos += 1;
                Ok(c == 1)
            }
            Some(&c) => Err(ParseError::new(
                self.pos,
                format!(
                    "{} is the byte 0x{c:02x}, not a boolean (0 or 1): not a dbcop bincode history, or misaligned",
                    what()
                ),
            )),
        }
    }

    /// A length, checked against what is left so a bad file cannot make us
    /// allocate terabytes.
    fn len(&mut self, min_size: usize, what: &dyn Fn() -> String) -> PResult<usize> {
        let at = self.pos;
        let n = self.u64(what)?;
        let left = (self.b.len() - self.pos) as u64;
        if n.saturating_mul(min_size as u64) > left {
            return Err(ParseError::new(
                at,
                format!(
                    "{} says {n} items follow, but only {left} bytes are left: truncated, or not a dbcop bincode history",
                    what()
                ),
            ));
        }
        Ok(n as usize)
    }

    fn string(&mut self, what: &str) -> PResult<String> {
        let at = self.pos;
        let n = self.len(1, &|| format!("the length of the {what} string"))?;
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        String::from_utf8(s.to_vec())
            .map_err(|_| ParseError::new(at, format!("the {what} string is not UTF-8")))
    }
}

/// The header fields, for `stats`-like uses and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub params: [u64; 5],
    pub info: String,
    pub start: String,
    pub end: String,
}

/// Decodes a dbcop bincode history.
pub fn decode(bytes: &[u8]) -> PResult<(Header, DHistory)> {
    let mut d = Dec { b: bytes, pos: 0 };
    let mut h = Header::default();
    const NAMES: [&str; 5] = ["id", "n_node", "n_variable", "n_transaction", "n_event"];
    for (i, p) in h.params.iter_mut().enumerate() {
        *p = d.u64(&|| format!("the header field params.{}", NAMES[i]))?;
    }
    h.info = d.string("info")?;
    h.start = d.string("start")?;
    h.end = d.string("end")?;
    let mut out = DHistory::default();
    let n_sessions = d.len(8, &|| "the session count".into())?;
    for s in 0..n_sessions {
        let n_txns = d.len(9, &|| format!("session {}'s transaction count", s + 1))?;
        let mut txns = Vec::with_capacity(n_txns);
        for t in 0..n_txns {
            let offset = d.pos;
            let where_ = |e: Option<usize>, f: &str| match e {
                Some(e) => format!("session {}, transaction {t}, event {e}: field `{f}`", s + 1),
                None => format!("session {}, transaction {t}: field `{f}`", s + 1),
            };
            let n_events = d.len(18, &|| where_(None, "events (length)"))?;
            let mut events = Vec::with_capacity(n_events);
            for e in 0..n_events {
                let at = d.pos;
                let write = d.bool(&|| where_(Some(e), "write"))?;
                let var = d.u64(&|| where_(Some(e), "variable"))?;
                let val = d.u64(&|| where_(Some(e), "value"))?;
                let ok = d.bool(&|| where_(Some(e), "success"))?;
                events.push(DEvent {
                    write,
                    var: out.intern_u64(var),
                    val: Some(out.intern_u64(val)),
                    ok,
                    offset: at,
                });
            }
            let committed = d.bool(&|| where_(None, "success"))?;
            txns.push(DTxn {
                events,
                committed,
                offset,
                line: 0,
            });
        }
        out.sessions.push(txns);
    }
    if d.pos != bytes.len() {
        return Err(ParseError::new(
            d.pos,
            format!(
                "{} bytes follow the last session: not a dbcop bincode history, or a different version of it",
                bytes.len() - d.pos
            ),
        ));
    }
    Ok((h, out))
}

/// Writes dbcop sessions as bincode. `params` follow PolySI (totals), except
/// `n_variable`, which is one more than the largest variable so that a
/// reader indexing variables by number stays in bounds.
pub fn write(p: &Projection, out: &mut dyn Write, notes: &mut Notes) -> io::Result<()> {
    let mut b: Vec<u8> = Vec::with_capacity(64 + p.events() * 18 + p.txns() * 9);
    let u = |b: &mut Vec<u8>, v: u64| b.extend_from_slice(&v.to_le_bytes());
    u(&mut b, 0);
    u(&mut b, p.sessions.len() as u64);
    u(&mut b, p.max_var().map_or(0, |v| v + 1));
    u(&mut b, p.txns() as u64);
    u(&mut b, p.events() as u64);
    for s in ["converted by elle-si", EPOCH, EPOCH] {
        u(&mut b, s.len() as u64);
        b.extend_from_slice(s.as_bytes());
    }
    u(&mut b, p.sessions.len() as u64);
    for s in &p.sessions {
        u(&mut b, s.len() as u64);
        for t in s {
            u(&mut b, t.events.len() as u64);
            for &(w, var, val) in &t.events {
                b.push(w as u8);
                u(&mut b, var);
                u(&mut b, val.unwrap_or(0));
                b.push(1);
            }
            b.push(t.committed as u8);
        }
    }
    out.write_all(&b)?;
    out.flush()?;
    p.renumber_notes(notes, false);
    Ok(())
}

/// The dates written: the format requires RFC 3339 dates, and a converted
/// history has no run time of its own.
const EPOCH: &str = "1970-01-01T00:00:00+00:00";
