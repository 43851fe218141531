//! Reads the text format of Cobra, PolySI and C4: one micro-op per line,
//! `r(key,value,session,txn)` or `w(key,value,session,txn)`.
//!
//! Consecutive lines with the same session and transaction id form one
//! transaction. Transaction id -1 marks an aborted transaction's writes.
//! Value 0 is the initial state: a read of 0 observes it, and a write of 0
//! (an explicit initial transaction) restates it and is dropped. Every
//! transaction here is a completion standing alone, committed unless aborted.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, InputError, ParseError};
use crate::history::build::{Arg, BuildOptions, Builder, RawKind, RawMop, RawTxn, TxnMeta};
use crate::history::model::*;
use crate::source::Source;

/// Reads a text-format history.
pub fn read(
    source: &Arc<Source>,
    opts: BuildOptions,
) -> Result<(History, Vec<crate::anomaly::Anomaly>), Error> {
    let opts = BuildOptions {
        zero_is_initial: true,
        workload: Some(opts.workload.unwrap_or(Workload::RwRegister)),
        duplicates: opts.duplicates,
    };
    if opts.workload == Some(Workload::ListAppend) {
        return Err(InputError::whole(
            source.name(),
            "the text format holds register reads and writes: it cannot be read as list-append",
        )
        .into());
    }
    let mut b = Builder::new(source.name(), opts);
    run(source.bytes(), &mut b).map_err(|e| Error::from(e.locate(source)))?;
    Ok(b.finish())
}

struct Line {
    kind: RawKind,
    key: i64,
    val: i64,
    session: i64,
    txn: i64,
}

/// Streams the lines, one transaction per run of lines with the same
/// session and id. C4 lets a transaction's lines interleave with others'
/// (ids are global); when an id comes back after its run ended, we start
/// again and group by id instead, which costs memory for every line.
fn run(src: &[u8], b: &mut Builder) -> Result<(), ParseError> {
    let mut closed: FxHashSet<i64> = FxHashSet::default();
    let mut group: Option<Group> = None;
    let mut raw = RawTxn::default();
    let mut interleaved = false;
    for_each_line(src, |l, line, off| {
        if l.txn == -1 && l.kind == RawKind::Read {
            return Err(ParseError::new(
                off,
                "a read in transaction -1: -1 marks aborted writes only",
            ));
        }
        let same = group
            .as_ref()
            .is_some_and(|g| g.session == l.session && g.txn == l.txn);
        if !same {
            if let Some(g) = group.take() {
                if g.txn != -1 {
                    closed.insert(g.txn);
                }
                push(b, &g, &mut raw)?;
            }
            if l.txn != -1 && closed.contains(&l.txn) {
                interleaved = true;
                return Err(ParseError::new(off, "interleaved"));
            }
            group = Some(Group {
                session: l.session,
                txn: l.txn,
                line,
                offset: off,
            });
        }
        add(&mut raw, &l, off)
    })
    .or_else(|e| if interleaved { Ok(()) } else { Err(e) })?;
    if !interleaved {
        if let Some(g) = group.take() {
            push(b, &g, &mut raw)?;
        }
        return Ok(());
    }
    // Second pass, grouping lines by transaction id.
    *b = Builder::new(b.name(), b.options());
    let mut order: Vec<(Group, RawTxn)> = Vec::new();
    let mut index: FxHashMap<i64, usize> = FxHashMap::default();
    let mut last_aborted: Option<(i64, usize)> = None;
    for_each_line(src, |l, line, off| {
        let slot = if l.txn == -1 {
            match last_aborted {
                Some((s, i)) if s == l.session && i + 1 == order.len() => i,
                _ => {
                    order.push((
                        Group {
                            session: l.session,
                            txn: -1,
                            line,
                            offset: off,
                        },
                        RawTxn::default(),
                    ));
                    last_aborted = Some((l.session, order.len() - 1));
                    order.len() - 1
                }
            }
        } else {
            *index.entry(l.txn).or_insert_with(|| {
                order.push((
                    Group {
                        session: l.session,
                        txn: l.txn,
                        line,
                        offset: off,
                    },
                    RawTxn::default(),
                ));
                order.len() - 1
            })
        };
        add(&mut order[slot].1, &l, off)
    })?;
    for (g, mut raw) in order {
        push(b, &g, &mut raw)?;
    }
    Ok(())
}

struct Group {
    session: i64,
    txn: i64,
    line: u32,
    offset: usize,
}

/// Calls `f` with each non-blank line, its number and its offset.
fn for_each_line(
    src: &[u8],
    mut f: impl FnMut(Line, u32, usize) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    let mut line_no = 0u32;
    let mut off = 0usize;
    while off < src.len() {
        let end = memchr::memchr(b'\n', &src[off..]).map_or(src.len(), |i| off + i);
        line_no += 1;
        let text = &src[off..end];
        let trimmed = text.trim_ascii();
        if !trimmed.is_empty() {
            let lead = text.len() - text.trim_ascii_start().len();
            f(parse_line(trimmed, off + lead)?, line_no, off + lead)?;
        }
        off = end + 1;
    }
    Ok(())
}

/// Adds a line's micro-op. Writes of 0 are dropped: 0 is the initial
/// state in this format (C4 does the same), so `w(k,0,..)` restates it.
fn add(raw: &mut RawTxn, l: &Line, off: usize) -> Result<(), ParseError> {
    if l.kind == RawKind::Write && l.val == 0 {
        return Ok(());
    }
    let key = Val::int(l.key).ok_or_else(|| ParseError::new(off, "key out of range"))?;
    let val = Val::int(l.val).ok_or_else(|| ParseError::new(off, "value out of range"))?;
    raw.mops.push(RawMop {
        kind: l.kind,
        key,
        arg: Arg::Val(val),
        offset: off,
    });
    Ok(())
}

fn push(b: &mut Builder, g: &Group, raw: &mut RawTxn) -> Result<(), ParseError> {
    let pos = OpPos {
        index: g.txn,
        time: -1,
        line: g.line,
        offset: g.offset as u64,
    };
    let meta = TxnMeta {
        status: if g.txn == -1 {
            Status::Aborted
        } else {
            Status::Committed
        },
        process: g.session,
        invoke: None,
        complete: pos,
        f: Val::NIL,
    };
    b.stats().ops += 1;
    b.stats().client_ops += 1;
    b.push_txn(meta, raw)?;
    raw.clear();
    Ok(())
}

fn parse_line(t: &[u8], at: usize) -> Result<Line, ParseError> {
    let bad = |msg: &str| {
        ParseError::new(
            at,
            format!(
                "{msg}: expected r(key,value,session,txn) or w(key,value,session,txn), found `{}`",
                String::from_utf8_lossy(&t[..t.len().min(60)])
            ),
        )
        .with_len(t.len())
    };
    let kind = match t.first() {
        Some(b'r' | b'R') => RawKind::Read,
        Some(b'w' | b'W') => RawKind::Write,
        _ => return Err(bad("unknown operation")),
    };
    let inner = t[1..].trim_ascii();
    let inner = inner
        .strip_prefix(b"(")
        .and_then(|s| s.strip_suffix(b")"))
        .ok_or_else(|| bad("missing parentheses"))?;
    let mut nums = [0i64; 4];
    let mut n = 0;
    for part in inner.split(|&c| c == b',') {
        if n == 4 {
            return Err(bad("too many fields"));
        }
        let p = part.trim_ascii();
        nums[n] = std::str::from_utf8(p)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("fields must be integers"))?;
        n += 1;
    }
    if n != 4 {
        return Err(bad("four fields needed"));
    }
    Ok(Line {
        kind,
        key: nums[0],
        val: nums[1],
        session: nums[2],
        txn: nums[3],
    })
}
