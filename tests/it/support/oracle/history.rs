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

/// A key or a value, as [`History::to_edn_with`] asks for its text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Atom {
    Key(Key),
    Val(Val),
}

impl History {
    /// Jepsen EDN, one event a line, `:index` in event order.
    pub fn to_edn(&self) -> String {
        self.to_edn_with(&mut |a| match a {
            Atom::Key(k) => k.to_string(),
            Atom::Val(v) => v.to_string(),
        })
    }

    /// [`Self::to_edn`] with each key and value written as `text` says
    /// (asked once per occurrence, so one value may be written in several
    /// forms Clojure's `=` holds equal).
    pub fn to_edn_with(&self, text: &mut dyn FnMut(Atom) -> String) -> String {
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
                self.ops_edn(&t.ops, reads_known, text)
            );
        }
        out
    }

    fn ops_edn(
        &self,
        ops: &[Op],
        reads_known: bool,
        text: &mut dyn FnMut(Atom) -> String,
    ) -> String {
        let mut s = String::from("[");
        for (i, op) in ops.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            let (f, k) = match (op, self.workload) {
                (Op::Write(k, _), Workload::Register) => ("w", k),
                (Op::Write(k, _), Workload::List) => ("append", k),
                (Op::Read(k, _), _) => ("r", k),
            };
            let _ = write!(s, "[:{f} {} ", text(Atom::Key(*k)));
            match (op, self.workload) {
                (Op::Write(_, v), _) => s.push_str(&text(Atom::Val(*v))),
                (Op::Read(..), _) if !reads_known => s.push_str("nil"),
                (Op::Read(_, vs), Workload::Register) => match vs.first() {
                    None => s.push_str("nil"),
                    Some(v) => s.push_str(&text(Atom::Val(*v))),
                },
                (Op::Read(_, vs), Workload::List) => {
                    let vs: Vec<String> = vs.iter().map(|&v| text(Atom::Val(v))).collect();
                    let _ = write!(s, "[{}]", vs.join(" "));
                }
            }
            s.push(']');
        }
        s.push(']');
        s
    }
}
