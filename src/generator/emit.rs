//! Writes generated transactions as a Jepsen `history.edn` (an invocation
//! and a completion per transaction, one op map per line) or in the
//! `r(key,value,session,txn)` text format (committed transactions only, and
//! aborted writes under transaction -1), streaming through a buffer.
//!
//! It also numbers transactions as elle-si's readers will, so the faults the
//! generator records name the same transactions a checker reports.

use std::io::{self, Write};

use super::repeats::Repeats;
use super::sim::{Active, Outcome, Planned};
use crate::history::{Format, Workload};

pub(crate) struct Emitter<W: Write> {
    out: W,
    buf: Vec<u8>,
    format: Format,
    list: bool,
    /// The next `:index`.
    index: i64,
    /// The next transaction number of the loaded history.
    next_id: u32,
    /// Text: the last group written, as (process, aborted).
    last_group: Option<(i64, bool)>,
    pub ops_written: u64,
}

const FLUSH_AT: usize = 1 << 16;

impl<W: Write> Emitter<W> {
    pub fn new(out: W, format: Format, workload: Workload) -> Emitter<W> {
        Emitter {
            out,
            buf: Vec::with_capacity(FLUSH_AT * 2),
            format,
            list: workload == Workload::ListAppend,
            index: 0,
            next_id: 0,
            last_group: None,
            ops_written: 0,
        }
    }

    fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()?;
        Ok(self.out)
    }

    /// The invocation (EDN only: the text format has none).
    pub fn invoke(&mut self, time: u64, process: i64, ops: &[Planned]) -> io::Result<()> {
        if self.format != Format::Edn {
            return Ok(());
        }
        self.op_head(time, "invoke", process);
        self.invoke_value(ops);
        self.buf.extend_from_slice(b"}\n");
        self.ops_written += 1;
        self.maybe_flush()
    }

    /// The completion, or the text lines of a finished transaction. Returns
    /// the transaction's number and `:index` (text: its id) in the loaded
    /// history, when it is a transaction there.
    pub fn complete(
        &mut self,
        time: u64,
        process: i64,
        a: &Active,
        committed: bool,
        rep: &Repeats,
    ) -> io::Result<Option<(u32, i64)>> {
        let r = match self.format {
            Format::Text => self.text_txn(process, a, committed, rep),
            // GenOptions::check admits only EDN and text.
            _ => Some(self.edn_completion(time, process, a, rep)),
        };
        self.maybe_flush()?;
        Ok(r)
    }

    fn edn_completion(&mut self, time: u64, process: i64, a: &Active, rep: &Repeats) -> (u32, i64) {
        let index = self.index;
        let (typ, error) = match a.outcome {
            Outcome::Ok => ("ok", None),
            Outcome::Fail(e) => ("fail", Some(e)),
            Outcome::Info => ("info", Some("timeout")),
        };
        self.op_head(time, typ, process);
        if a.outcome == Outcome::Ok {
            self.ok_value(a, rep);
        } else {
            self.invoke_value(&a.ops);
        }
        if let Some(e) = error {
            self.buf.extend_from_slice(b", :error [:");
            self.buf.extend_from_slice(e.as_bytes());
            self.buf.push(b']');
        }
        self.buf.extend_from_slice(b"}\n");
        self.ops_written += 1;
        let id = self.next_id;
        self.next_id += 1;
        (id, index)
    }

    fn op_head(&mut self, time: u64, typ: &str, process: i64) {
        let b = &mut self.buf;
        b.extend_from_slice(b"{:index ");
        push_i64(b, self.index);
        b.extend_from_slice(b", :time ");
        push_u64(b, time);
        b.extend_from_slice(b", :type :");
        b.extend_from_slice(typ.as_bytes());
        b.extend_from_slice(b", :process ");
        push_i64(b, process);
        b.extend_from_slice(b", :f :txn, :value ");
        self.index += 1;
    }

    fn write_mop(&mut self, op: &Planned) {
        let b = &mut self.buf;
        b.extend_from_slice(match (self.list, op.read) {
            (_, true) => b"[:r ",
            (true, false) => b"[:append ",
            (false, false) => b"[:w ",
        });
        push_u64(b, op.key);
        b.push(b' ');
    }

    fn invoke_value(&mut self, ops: &[Planned]) {
        self.buf.push(b'[');
        for (i, op) in ops.iter().enumerate() {
            if i > 0 {
                self.buf.push(b' ');
            }
            self.write_mop(op);
            if op.read {
                self.buf.extend_from_slice(b"nil]");
            } else {
                push_u64(&mut self.buf, op.shown as u64);
                self.buf.push(b']');
            }
        }
        self.buf.push(b']');
    }

    fn ok_value(&mut self, a: &Active, rep: &Repeats) {
        self.buf.push(b'[');
        for (i, op) in a.ops.iter().enumerate() {
            if i > 0 {
                self.buf.push(b' ');
            }
            self.write_mop(op);
            if !op.read {
                push_u64(&mut self.buf, op.shown as u64);
            } else {
                let vals = a.result(i);
                match (vals.is_empty(), self.list) {
                    (true, _) => self.buf.extend_from_slice(b"nil"),
                    (false, false) => push_u64(&mut self.buf, rep.show(op.key, vals[0]) as u64),
                    (false, true) => {
                        self.buf.push(b'[');
                        for (j, v) in vals.iter().enumerate() {
                            if j > 0 {
                                self.buf.push(b' ');
                            }
                            push_u64(&mut self.buf, *v as u64);
                        }
                        self.buf.push(b']');
                    }
                }
            }
            self.buf.push(b']');
        }
        self.buf.push(b']');
    }

    /// A committed transaction's lines under its own id; an aborted one's
    /// writes under -1 (the reader merges consecutive -1 lines of a session
    /// into one transaction, and so do we when numbering).
    fn text_txn(
        &mut self,
        process: i64,
        a: &Active,
        committed: bool,
        rep: &Repeats,
    ) -> Option<(u32, i64)> {
        let id: i64 = if committed { a.no as i64 } else { -1 };
        let mut wrote = false;
        for (i, op) in a.ops.iter().enumerate() {
            if !committed && op.read {
                continue;
            }
            let val = if op.read {
                a.result(i).first().map_or(0, |&v| rep.show(op.key, v))
            } else {
                op.shown
            };
            let b = &mut self.buf;
            b.extend_from_slice(if op.read { b"r(" } else { b"w(" });
            push_u64(b, op.key);
            b.push(b',');
            push_u64(b, val as u64);
            b.push(b',');
            push_i64(b, process);
            b.push(b',');
            push_i64(b, id);
            b.extend_from_slice(b")\n");
            self.ops_written += 1;
            wrote = true;
        }
        if !wrote {
            return None;
        }
        let merged = !committed && self.last_group == Some((process, true));
        self.last_group = Some((process, !committed));
        if !merged {
            self.next_id += 1;
        }
        Some((self.next_id - 1, id))
    }
}

pub(crate) fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

pub(crate) fn push_i64(buf: &mut Vec<u8>, n: i64) {
    if n < 0 {
        buf.push(b'-');
    }
    push_u64(buf, n.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_format_like_display() {
        for n in [0i64, 7, 10, 99, 1234567890, -1, -42, i64::MIN, i64::MAX] {
            let mut b = Vec::new();
            push_i64(&mut b, n);
            assert_eq!(String::from_utf8(b).ok(), Some(n.to_string()));
        }
    }
}
