//! The current dbcop's text language (`.hist`): read and write.
//!
//! ```text
//! // a comment
//! [x:=1 y==2 z==?]     one transaction: a write, a read of 2, a read of
//! [w:=3]!              the initial state; `!` marks it uncommitted
//! ---                  a line of dashes starts the next session
//! [x==1]
//! ```
//!
//! Transactions on one line or on consecutive lines share a session.
//! Variables are names of letters, digits and `_` (all-digit names are read
//! as integers); versions are u64. We read a little more than dbcop does
//! (CRLF, a missing final newline, spaces inside brackets, indented
//! comments) since none of it is ambiguous, and write its canonical form:
//! one transaction per line. For list-append input, the version orders go
//! in comment lines at the top.

use std::io::{self, Write};

use crate::error::ParseError;
use crate::history::formats::dbcop::{DEvent, DHistory, DTxn, Projection, var_value};
use crate::history::formats::{Notes, PResult};

/// Decodes a `.hist` history.
pub fn decode(src: &[u8]) -> PResult<DHistory> {
    let mut d = DHistory::default();
    d.sessions.push(Vec::new());
    let mut off = 0usize;
    let mut line_no = 0u32;
    while off < src.len() {
        let end = memchr::memchr(b'\n', &src[off..]).map_or(src.len(), |i| off + i);
        line_no += 1;
        let mut text = &src[off..end];
        if text.last() == Some(&b'\r') {
            text = &text[..text.len() - 1];
        }
        let lead = text.len() - text.trim_ascii_start().len();
        let t = text.trim_ascii();
        let at = off + lead;
        if t.is_empty() || t.starts_with(b"//") {
        } else if t[0] == b'-' {
            if let Some(i) = t.iter().position(|&c| c != b'-') {
                return Err(ParseError::new(
                    at + i,
                    "a session separator is a line of dashes only",
                ));
            }
            d.sessions.push(Vec::new());
        } else {
            line(&mut d, t, at, line_no)?;
        }
        off = end + 1;
    }
    Ok(d)
}

fn line(d: &mut DHistory, t: &[u8], at: usize, line_no: u32) -> PResult<()> {
    let mut i = 0;
    while i < t.len() {
        if t[i] == b' ' || t[i] == b'\t' {
            i += 1;
            continue;
        }
        if t[i] != b'[' {
            return Err(ParseError::new(
                at + i,
                format!(
                    "expected a transaction `[x:=1 y==2]`, found `{}`",
                    String::from_utf8_lossy(&t[i..(i + 20).min(t.len())])
                ),
            ));
        }
        let start = i;
        let Some(close) = memchr::memchr(b']', &t[i..]).map(|j| i + j) else {
            return Err(ParseError::new(
                at + i,
                "this transaction has no closing `]`",
            ));
        };
        let mut events = Vec::new();
        let mut j = i + 1;
        while j < close {
            if t[j] == b' ' || t[j] == b'\t' {
                j += 1;
                continue;
            }
            let e_end = t[j..close]
                .iter()
                .position(|&c| c == b' ' || c == b'\t')
                .map_or(close, |k| j + k);
            events.push(event(d, &t[j..e_end], at + j)?);
            j = e_end;
        }
        if events.is_empty() {
            return Err(ParseError::new(
                at + start,
                "an empty transaction `[]`: dbcop's transactions hold one event or more",
            ));
        }
        i = close + 1;
        let committed = t.get(i) != Some(&b'!');
        if !committed {
            i += 1;
        }
        if let Some(&c) = t.get(i)
            && c != b' '
            && c != b'\t'
            && c != b'['
        {
            return Err(ParseError::new(
                at + i,
                format!("unexpected `{}` after a transaction", c as char),
            ));
        }
        if let Some(s) = d.sessions.last_mut() {
            s.push(DTxn {
                events,
                committed,
                offset: at + start,
                line: line_no,
            });
        }
    }
    Ok(())
}

fn event(d: &mut DHistory, e: &[u8], at: usize) -> PResult<DEvent> {
    let bad = |msg: &str| {
        ParseError::new(
            at,
            format!(
                "{msg}: expected `x:=1` (write), `x==1` (read) or `x==?` (read of the initial state), found `{}`",
                String::from_utf8_lossy(e)
            ),
        )
        .with_len(e.len())
    };
    let s = std::str::from_utf8(e).map_err(|_| bad("not UTF-8"))?;
    let name_end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .ok_or_else(|| bad("no operator"))?;
    if name_end == 0 {
        return Err(bad("no variable"));
    }
    let (name, rest) = s.split_at(name_end);
    let (write, num) = if let Some(n) = rest.strip_prefix(":=") {
        (true, n)
    } else if let Some(n) = rest.strip_prefix("==") {
        (false, n)
    } else {
        return Err(bad("unknown operator"));
    };
    let val = if num == "?" && !write {
        None
    } else if !num.is_empty() && num.bytes().all(|c| c.is_ascii_digit()) {
        let n: u64 = num
            .parse()
            .map_err(|_| bad("the version does not fit in 64 bits"))?;
        Some(d.intern_u64(n))
    } else {
        return Err(bad("a version is a non-negative integer"));
    };
    let var = var_value(d, name);
    Ok(DEvent::done(write, var, val, at))
}

/// Writes dbcop sessions in the text language.
pub fn write(p: &Projection, out: &mut dyn Write, notes: &mut Notes) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    let name = |v: u64| {
        p.key_names
            .get(&v)
            .cloned()
            .unwrap_or_else(|| v.to_string())
    };
    if !p.orders.is_empty() {
        writeln!(
            w,
            "// converted by elle-si from list-append: each append is a write, each list read a read of its last element."
        )?;
        writeln!(
            w,
            "// The version order of each key, as the list reads reveal it:"
        )?;
        for (k, vs) in &p.orders {
            let vs: Vec<String> = vs.iter().map(u64::to_string).collect();
            writeln!(w, "// {} {}", name(*k), vs.join(" "))?;
        }
    }
    for (i, s) in p.sessions.iter().enumerate() {
        if i > 0 {
            w.write_all(b"---\n")?;
        }
        for t in s {
            w.write_all(b"[")?;
            for (k, &(write, var, val)) in t.events.iter().enumerate() {
                if k > 0 {
                    w.write_all(b" ")?;
                }
                match (write, val) {
                    (true, v) => write!(w, "{}:={}", name(var), v.unwrap_or(0))?,
                    (false, Some(v)) => write!(w, "{}=={v}", name(var))?,
                    (false, None) => write!(w, "{}==?", name(var))?,
                }
            }
            w.write_all(if t.committed { b"]\n" } else { b"]!\n" })?;
        }
    }
    w.flush()?;
    p.renumber_notes(notes, true);
    Ok(())
}
