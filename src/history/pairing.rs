//! Pairs Jepsen's invocations with their completions, per process: the one
//! pairing that every reader of an op stream uses (EDN files and streams,
//! elle-cli's JSON, the JNI bridge's wire records), so that all of them
//! accept the same histories and word their errors alike.
//!
//! Data flow: a reader hands each client op ([`ClientOp`]) to
//! [`Pairer::op`]; out comes either nothing (an invocation, now pending) or a
//! transaction's [`TxnMeta`] with where its micro-ops are: the completion's
//! own, or, for a `:fail` or `:info` completion that carries none, its
//! invocation's. A reader that can look back at its input keeps nothing per
//! invocation (`H = ()`) and re-reads the invocation at its offset; a stream
//! that cannot look back keeps the invocation's micro-ops (`H = RawTxn`).
//! Memory is one pending invocation per process. The first client op
//! decides the history's shape: an invocation means every completion is
//! paired; a completion means the history holds completions only (C4's and
//! hand-written logs), each a transaction of its own.

use rustc_hash::FxHashMap;

use crate::error::ParseError;
use crate::history::build::TxnMeta;
use crate::history::model::{OpPos, Status, Val};

/// Jepsen's `:type` of an op.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpType {
    /// `:invoke`: the client started the operation.
    Invoke,
    /// `:ok`: it took effect.
    Ok,
    /// `:fail`: it did not take effect.
    Fail,
    /// `:info`: it may or may not have taken effect.
    Info,
}

impl OpType {
    /// The status of the transaction a completion of this type ends.
    pub fn status(self) -> Status {
        match self {
            OpType::Ok => Status::Committed,
            OpType::Fail => Status::Aborted,
            _ => Status::Indeterminate,
        }
    }

    /// Jepsen's keyword, without the colon.
    pub fn keyword(self) -> &'static str {
        match self {
            OpType::Invoke => "invoke",
            OpType::Ok => "ok",
            OpType::Fail => "fail",
            OpType::Info => "info",
        }
    }
}

/// One client op (an op with an integer `:process`), as the pairer needs
/// it.
#[derive(Clone, Debug)]
pub struct ClientOp {
    pub typ: OpType,
    pub process: i64,
    pub pos: OpPos,
    /// Byte offset of the op in its input, for errors and re-reading.
    pub start: usize,
    pub f: Val,
    /// Whether `:value` held micro-ops (false: absent or nil; a value
    /// that is not micro-ops is given to [`Pairer::op`] as its error).
    pub has_value: bool,
}

/// An invocation waiting for its completion.
#[derive(Clone, Debug)]
pub struct Invocation<H> {
    pub pos: OpPos,
    /// Byte offset of the invocation, where its micro-ops can be re-read.
    pub start: usize,
    pub f: Val,
    /// What the reader kept of it (see the module doc).
    pub held: H,
}

/// What a client op completes.
pub enum Paired<H> {
    /// Nothing yet: the op was an invocation.
    Pending,
    /// A transaction. Its micro-ops are the op's own, or, when the
    /// invocation is given, the invocation's (Jepsen copies the
    /// invocation's value into `:fail` and `:info` completions; when it
    /// does not, the invocation says what was attempted).
    Txn(TxnMeta, Option<Invocation<H>>),
}

/// Where an earlier op of a file is, for [`Pairer::op`]'s messages.
pub fn on_line<H>(inv: &Invocation<H>) -> String {
    format!("on line {}", inv.pos.line)
}

/// The pairing state of one history.
pub struct Pairer<H> {
    pending: FxHashMap<i64, Invocation<H>>,
    /// Decided by the first client op: whether invocations come first, and
    /// where that op is.
    paired: Option<(bool, usize)>,
}

impl<H> Default for Pairer<H> {
    fn default() -> Self {
        Pairer {
            pending: FxHashMap::default(),
            paired: None,
        }
    }
}

impl<H> Pairer<H> {
    /// Whether the history holds completions only (known after the first
    /// client op).
    pub fn completions_only(&self) -> bool {
        self.paired.is_some_and(|p| !p.0)
    }

    /// Takes one client op. `bad_value` is the error to give when its
    /// `:value` was not micro-ops (after the pairing's own errors);
    /// `locate` words where an earlier op is (`on line 12`,
    /// `at history[12]`); `hold` keeps what an invocation needs later.
    pub fn op(
        &mut self,
        op: &ClientOp,
        bad_value: Option<ParseError>,
        locate: impl FnOnce(&Invocation<H>) -> String,
        hold: impl FnOnce() -> H,
    ) -> Result<Paired<H>, ParseError> {
        let is_paired = match self.paired {
            Some((p, _)) => p,
            None => {
                let p = op.typ == OpType::Invoke;
                self.paired = Some((p, op.start));
                p
            }
        };
        if !is_paired {
            if op.typ == OpType::Invoke {
                let first = self.paired.map_or(0, |p| p.1);
                return Err(ParseError::new(
                    op.start,
                    "an :invoke in a history that began with a completion",
                )
                .with_related(first, 1, "first client op, a completion")
                .with_help(
                    "a history either pairs every completion with an invocation, or holds completions only",
                ));
            }
            if let Some(e) = bad_value {
                return Err(e);
            }
            let meta = TxnMeta {
                status: op.typ.status(),
                process: op.process,
                invoke: None,
                complete: op.pos,
                f: op.f,
            };
            return Ok(Paired::Txn(meta, None));
        }
        if op.typ == OpType::Invoke {
            if let Some(prev) = self.pending.get(&op.process) {
                return Err(ParseError::new(
                    op.start,
                    format!(
                        "process {} invokes again while its invocation {} has not completed",
                        op.process,
                        locate(prev)
                    ),
                )
                .with_related(prev.start, 1, "the outstanding invocation"));
            }
            if let Some(e) = bad_value {
                return Err(e);
            }
            let inv = Invocation {
                pos: op.pos,
                start: op.start,
                f: op.f,
                held: hold(),
            };
            self.pending.insert(op.process, inv);
            return Ok(Paired::Pending);
        }
        let Some(inv) = self.pending.remove(&op.process) else {
            return Err(ParseError::new(
                op.start,
                format!(
                    "a :{} completion for process {}, which has no outstanding invocation",
                    op.typ.keyword(),
                    op.process
                ),
            )
            .with_help("each completion must follow an :invoke by the same process"));
        };
        let status = op.typ.status();
        let meta = TxnMeta {
            status,
            process: op.process,
            invoke: Some(inv.pos),
            complete: op.pos,
            f: if op.f == Val::NIL { inv.f } else { op.f },
        };
        match bad_value {
            Some(e) => Err(e),
            None if !op.has_value && status != Status::Committed => {
                Ok(Paired::Txn(meta, Some(inv)))
            }
            None => Ok(Paired::Txn(meta, None)),
        }
    }

    /// Ends the history: the invocations that never completed (they may or
    /// may not have happened), as indeterminate transactions of their own
    /// micro-ops, in input order.
    pub fn finish(&mut self) -> Vec<(TxnMeta, Invocation<H>)> {
        let mut dangling: Vec<(i64, Invocation<H>)> = self.pending.drain().collect();
        dangling.sort_by_key(|(_, p)| p.start);
        dangling
            .into_iter()
            .map(|(process, inv)| {
                let meta = TxnMeta {
                    status: Status::Indeterminate,
                    process,
                    invoke: Some(inv.pos),
                    complete: inv.pos,
                    f: inv.f,
                };
                (meta, inv)
            })
            .collect()
    }
}
