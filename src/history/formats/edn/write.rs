//! Writes a compiled history as a Jepsen EDN history (`history.edn`, one op
//! map per line), which [`super::read`](mod@super::read) and Elle read back.
//!
//! A history whose every transaction has an invocation is written as
//! invocation/completion pairs in their original order (so realtime order
//! survives), invocations that never completed as a lone invocation; a
//! history without invocations (text, dbcop, Cobra, Viper) as completions
//! only, since invented invocations would invent a realtime order.
//! Invocations show reads as `nil`; reads of an aborted or indeterminate
//! transaction are `nil` too (what they returned is unknown), and a read of
//! the initial state is `nil` (register) or `[]` (list-append).

use std::io::{self, Write};

use crate::edn::Value;
use crate::history::formats::Notes;
use crate::history::model::*;

/// One op of the written history: a transaction's invocation or completion.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OpEvent {
    pub invoke: bool,
    pub txn: TxnId,
    pub index: i64,
    pub pos: OpPos,
}

/// The ops to write, in order, and whether invocations are among them
/// (shared with elle-cli's JSON writer).
pub fn op_events(h: &History) -> (bool, Vec<OpEvent>) {
    let paired = !h.txns.is_empty() && h.txns.iter().all(|t| t.invoke.is_some());
    let mut events: Vec<OpEvent> = Vec::with_capacity(h.txns.len() * 2);
    for (i, t) in h.txns.iter().enumerate() {
        let txn = i as TxnId;
        match t.invoke {
            Some(inv) if paired => {
                events.push(OpEvent {
                    invoke: true,
                    txn,
                    index: inv.index,
                    pos: inv,
                });
                let dangling = t.status == Status::Indeterminate && t.complete == inv;
                if !dangling {
                    events.push(OpEvent {
                        invoke: false,
                        txn,
                        index: t.complete.index,
                        pos: t.complete,
                    });
                }
            }
            _ => events.push(OpEvent {
                invoke: false,
                txn,
                index: t.complete.index,
                pos: t.complete,
            }),
        }
    }
    if paired {
        events.sort_by_key(|e| (e.pos.offset, !e.invoke));
    }
    // Original indices when every op has a distinct one; otherwise count.
    let mut sorted: Vec<i64> = events.iter().map(|e| e.index).collect();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != events.len() || sorted.first().is_some_and(|&i| i < 0) {
        for (n, e) in events.iter_mut().enumerate() {
            e.index = n as i64;
        }
    }
    (paired, events)
}

/// Writes a compiled history as EDN.
pub fn write(h: &History, out: &mut dyn Write, notes: &mut Notes) -> io::Result<()> {
    let (paired, events) = op_events(h);
    let la = h.workload == Some(Workload::ListAppend);
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    let mut line = String::new();
    for e in &events {
        let txn = &h.txns[e.txn as usize];
        line.clear();
        line.push_str(&format!("{{:index {}", e.index));
        if e.pos.time >= 0 {
            line.push_str(&format!(", :time {}", e.pos.time));
        }
        let typ = if e.invoke {
            "invoke"
        } else {
            txn.status.keyword()
        };
        let f = if txn.f == Val::NIL {
            Value::keyword("txn")
        } else {
            h.value(txn.f)
        };
        line.push_str(&format!(
            ", :type :{typ}, :process {}, :f {f}, :value [",
            h.sessions[txn.session as usize].process
        ));
        for (j, m) in txn.mops().enumerate() {
            if j > 0 {
                line.push(' ');
            }
            line.push_str(&mop(h, m as MopId, e.invoke, la));
        }
        line.push_str("]}\n");
        w.write_all(line.as_bytes())?;
    }
    w.flush()?;
    if !paired && !h.txns.is_empty() {
        notes.add("no invocations in the input: written as completions only");
    }
    Ok(())
}

fn mop(h: &History, m: MopId, invoke: bool, la: bool) -> String {
    let (f, k, v) = mop_parts(h, m, invoke, la);
    format!("[:{f} {k} {v}]")
}

/// A micro-op as Jepsen writes it: function, key, value (see the module
/// doc for what reads show).
pub fn mop_parts(h: &History, m: MopId, invoke: bool, la: bool) -> (&'static str, Value, Value) {
    let mop = &h.mops[m as usize];
    let key = h.key_value(mop.key);
    if mop.is_write() {
        return (if la { "append" } else { "w" }, key, h.value(mop.val));
    }
    if invoke || mop.from == from::UNKNOWN {
        return ("r", key, Value::Nil);
    }
    if la {
        let elems = h.read_list(m).into_iter().map(|v| h.value(v)).collect();
        return ("r", key, Value::Vector(elems));
    }
    if mop.from == from::INITIAL {
        return ("r", key, Value::Nil);
    }
    ("r", key, h.value(mop.val))
}
