//! The oracle's own tiny history: transactions of reads and writes (or
//! appends) on small integer keys, with process, outcome and invocation /
//! completion positions, and its rendering to Jepsen EDN for the checker.
//! The oracle never reads the checker's history model: it decides on this
//! type, and the checker sees only the rendered text.

use std::fmt::Write;

pub type Key = u8;
pub type Val = u32;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Workload {
    /// `[:w k v]` and `[:r k v]`, `nil` for the initial state.
    Register,
    /// `[:append k v]` and `[:r k [v ...]]`, `[]` for the initial state.
    List,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Status {
    Ok,
    /// Aborted: its writes must never be read.
    Fail,
    /// Indeterminate: may or may not have committed; its reads are unknown.
    Info,
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Op {
    /// A write of a register, or an append to a list.
    Write(Key, Val),
    /// The value read: a register's is empty (nil) or one value; a list's
    /// is the list.
    Read(Key, Vec<Val>),
}

#[derive(Clone, Debug)]
pub struct Txn {
    pub process: u32,
    pub status: Status,
    pub ops: Vec<Op>,
    /// Positions of the invocation and completion events in the history
    /// (all distinct; a process's transactions do not overlap).
    pub invoke: usize,
    pub complete: usize,
}

#[derive(Clone, Debug)]
pub struct History {
    pub workload: Workload,
    pub txns: Vec<Txn>,
}

impl History {
    /// Jepsen EDN, one event a line, `:index` in event order.
    pub fn to_edn(&self) -> String {
        let mut events: Vec<(usize, usize, bool)> = Vec::new();
        for (i, t) in self.txns.iter().enumerate() {
            events.push((t.invoke, i, false));
            events.push((t.complete, i, true));
        }
        events.sort_unstable();
        let mut out = String::new();
        for (index, &(_, i, done)) in events.iter().enumerate() {
            let t = &self.txns[i];
            let ty = match (done, t.status) {
                (false, _) => "invoke",
                (true, Status::Ok) => "ok",
                (true, Status::Fail) => "fail",
                (true, Status::Info) => "info",
            };
            // Only an :ok completion knows what was read.
            let reads_known = done && t.status == Status::Ok;
            let _ = writeln!(
                out,
                "{{:index {index}, :time {}, :type :{ty}, :process {}, :f :txn, :value {}}}",
                index * 1000,
                t.process,
                self.ops_edn(&t.ops, reads_known)
            );
        }
        out
    }

    fn ops_edn(&self, ops: &[Op], reads_known: bool) -> String {
        let mut s = String::from("[");
        for (i, op) in ops.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            match (op, self.workload) {
                (Op::Write(k, v), Workload::Register) => {
                    let _ = write!(s, "[:w {k} {v}]");
                }
                (Op::Write(k, v), Workload::List) => {
                    let _ = write!(s, "[:append {k} {v}]");
                }
                (Op::Read(k, _), _) if !reads_known => {
                    let _ = write!(s, "[:r {k} nil]");
                }
                (Op::Read(k, vs), Workload::Register) => match vs.first() {
                    None => {
                        let _ = write!(s, "[:r {k} nil]");
                    }
                    Some(v) => {
                        let _ = write!(s, "[:r {k} {v}]");
                    }
                },
                (Op::Read(k, vs), Workload::List) => {
                    let vs: Vec<String> = vs.iter().map(Val::to_string).collect();
                    let _ = write!(s, "[:r {k} [{}]]", vs.join(" "));
                }
            }
        }
        s.push(']');
        s
    }
}
