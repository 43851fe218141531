//! Writes the text format `r(key,value,session,txn)` / `w(...)` (reading is
//! [`super::read`](mod@super::read)): from a compiled history, or straight from a Jepsen EDN
//! stream, op by op, without building the model.
//!
//! The format holds committed register reads and writes, with transaction
//! id -1 for aborted writes and value 0 for the initial state. So (see
//! [`crate::history::formats::RegisterTxn`]): aborted transactions keep their writes under
//! -1, indeterminate ones are written as committed writes, reads of either
//! are dropped; appends become writes, list reads reads of their last
//! element; keys, values and sessions it cannot hold are renumbered from
//! [`crate::history::formats::RENUMBER_BASE`]. Transaction ids count from 0 in output order.

use std::io::{self, Write};

use crate::error::ParseError;
use crate::history::build::{Arg, RawKind, RawTxn, TxnMeta};
use crate::history::formats::{
    IntMap, Notes, RegOp, RegisterTxn, nil_write_refused, register_notes, register_ops,
};
use crate::history::model::*;

/// The writer's state: output buffer, renumbering, transaction counter.
pub struct TextWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    keys: IntMap,
    vals: IntMap,
    sessions: IntMap,
    next_txn: u64,
    pub empty_txns: u64,
    pub dropped_reads: u64,
    pub info_txns: u64,
    pub list_ops: u64,
}

impl<W: Write> TextWriter<W> {
    pub fn new(out: W) -> TextWriter<W> {
        TextWriter {
            out,
            buf: Vec::with_capacity(1 << 17),
            keys: IntMap::new(true),
            vals: IntMap::new(false),
            sessions: IntMap::new(true),
            next_txn: 0,
            empty_txns: 0,
            dropped_reads: 0,
            info_txns: 0,
            list_ops: 0,
        }
    }

    /// Writes one transaction of register ops.
    pub fn txn(&mut self, kind: RegisterTxn, process: i64, ops: &[RegOp]) -> io::Result<()> {
        if ops.is_empty() {
            self.empty_txns += 1;
            return Ok(());
        }
        if kind == RegisterTxn::IndeterminateWrites {
            self.info_txns += 1;
        }
        let session = match Val::int(process) {
            Some(v) => self.sessions.get(v),
            None => self.sessions.get(Val::NIL),
        };
        let id = if kind == RegisterTxn::AbortedWrites {
            None
        } else {
            self.next_txn += 1;
            Some(self.next_txn - 1)
        };
        for op in ops {
            let (c, key, val) = match *op {
                RegOp::Write { key, val } => (b'w', key, self.vals.get(val)),
                RegOp::Read { key, val } => (b'r', key, val.map_or(0, |v| self.vals.get(v))),
            };
            let key = self.keys.get(key);
            let b = &mut self.buf;
            b.push(c);
            b.push(b'(');
            push_u64(b, key);
            b.push(b',');
            push_u64(b, val);
            b.push(b',');
            push_u64(b, session);
            b.push(b',');
            match id {
                Some(t) => push_u64(b, t),
                None => b.extend_from_slice(b"-1"),
            }
            b.extend_from_slice(b")\n");
        }
        if self.buf.len() >= 1 << 16 {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Flushes and says what was renumbered or dropped.
    pub fn finish(mut self, notes: &mut Notes) -> io::Result<W> {
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        notes.count(self.keys.renumbered(), |s| {
            format!(
                "key{s} given new numbers, from 10^18 up (the format holds only non-negative integers below 10^18)"
            )
        });
        notes.count(self.vals.renumbered(), |s| {
            format!("value{s} given new numbers, from 10^18 up (the format holds only positive integers below 10^18: 0 is its initial state)")
        });
        notes.count(self.sessions.renumbered(), |s| {
            format!("negative session{s} given new numbers, from 10^18 up")
        });
        notes.count(self.empty_txns, |s| {
            format!("transaction{s} with nothing to write left out (empty, or reads of an aborted or indeterminate transaction only)")
        });
        Ok(self.out)
    }
}

#[inline]
fn push_u64(b: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    b.extend_from_slice(&tmp[i..]);
}

/// Writes a compiled history in the text format.
pub fn write(h: &History, out: &mut dyn Write, notes: &mut Notes) -> io::Result<()> {
    register_notes(h, "the text format", notes);
    let mut w = TextWriter::new(out);
    let mut ops = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        register_ops(h, t as TxnId, &mut ops);
        let process = h.sessions[txn.session as usize].process;
        w.txn(RegisterTxn::of(txn.status), process, &ops)?;
    }
    w.finish(notes)?;
    Ok(())
}

/// The register view of a raw transaction, as [`register_ops`] gives it
/// for a compiled one.
pub fn raw_register_ops(meta: &TxnMeta, raw: &RawTxn, out: &mut Vec<RegOp>) -> (u64, u64) {
    out.clear();
    let keep_reads = RegisterTxn::of(meta.status).keeps_reads();
    let (mut dropped, mut lists) = (0, 0);
    for m in &raw.mops {
        match m.kind {
            RawKind::Append | RawKind::Write => {
                if m.kind == RawKind::Append {
                    lists += 1;
                }
                let val = match m.arg {
                    Arg::Val(v) => v,
                    Arg::Nil => Val::NIL,
                    // A list written to a register: no integer stands for it.
                    Arg::List { .. } => Val::NIL,
                };
                out.push(RegOp::Write { key: m.key, val });
            }
            RawKind::Read if !keep_reads => dropped += 1,
            RawKind::Read => {
                let val = match m.arg {
                    Arg::Nil => None,
                    Arg::Val(v) => Some(v),
                    Arg::List { start, len } => {
                        lists += 1;
                        raw.list(start, len).last().copied()
                    }
                };
                out.push(RegOp::Read { key: m.key, val });
            }
        }
    }
    (dropped, lists)
}

/// Converts a Jepsen EDN history to the text format op by op: memory holds
/// one buffered invocation per process and the renumbering tables, however
/// long the input. `consumed` is told, now and then, the offset below which
/// the input will not be read again (so a caller can drop mapped pages).
pub fn stream_from_edn(
    src: &[u8],
    out: &mut dyn Write,
    notes: &mut Notes,
    consumed: &mut dyn FnMut(usize),
) -> Result<(), StreamError> {
    let mut released = 0usize;
    let mut w = TextWriter::new(out);
    let mut ops = Vec::new();
    let mut io_err: Option<io::Error> = None;
    let stats = crate::history::formats::edn::for_each_txn(src, |meta, raw| {
        let at = meta.complete.offset as usize;
        if at > released + (64 << 20) {
            released = at;
            consumed(at);
        }
        let (dropped, lists) = raw_register_ops(&meta, raw, &mut ops);
        if ops
            .iter()
            .any(|op| matches!(op, RegOp::Write { val, .. } if *val == Val::NIL))
        {
            return Err(ParseError::new(at, nil_write_refused("text")));
        }
        w.dropped_reads += dropped;
        w.list_ops += lists;
        if let Err(e) = w.txn(RegisterTxn::of(meta.status), meta.process, &ops) {
            io_err = Some(e);
            return Err(ParseError::new(0, "write failed"));
        }
        Ok(())
    });
    if let Some(e) = io_err {
        return Err(StreamError::Io(e));
    }
    let stats = stats.map_err(StreamError::Parse)?;
    if w.list_ops > 0 {
        notes.add(
            "the text format holds registers: each append became a write of the appended value, and each list read a read of its last element (the version orders the lists reveal are lost)",
        );
    }
    notes.count(w.info_txns, |s| {
        format!("indeterminate transaction{s} (:info, or never completed) written as committed, reads dropped: the text format cannot say \"may have happened\"")
    });
    notes.count(w.dropped_reads, |s| {
        let of = if s.is_empty() {
            "of an aborted or indeterminate transaction"
        } else {
            "of aborted or indeterminate transactions"
        };
        format!("read{s} {of} dropped (what they returned is unknown)")
    });
    notes.count(stats.skipped_ops, |s| {
        format!("op{s} without an integer :process (nemesis and others) left out")
    });
    notes.count(stats.dangling, |s| {
        format!("invocation{s} never completed, taken as indeterminate")
    });
    w.finish(notes).map_err(StreamError::Io)?;
    Ok(())
}

/// Why streaming stopped.
#[derive(Debug)]
pub enum StreamError {
    /// The EDN input is malformed.
    Parse(ParseError),
    /// Writing failed.
    Io(io::Error),
}
