//! Pairs Jepsen-style invocations with completions per process, as
//! `history::jepsen` does, for the other readers of op streams (elle-cli's
//! JSON, the streaming EDN converter). Memory is one buffered invocation per
//! process, so streams of any length pass through flat.

use rustc_hash::FxHashMap;

use crate::error::ParseError;
use crate::history::build::{RawTxn, TxnMeta};
use crate::history::jepsen::OpType;
use crate::history::model::*;

/// One client op of the stream.
pub struct Op {
    pub typ: OpType,
    pub process: i64,
    pub pos: OpPos,
    /// Byte offset, for errors.
    pub start: usize,
    pub f: Val,
    /// Whether `:value` held micro-ops (false: absent or nil).
    pub has_value: bool,
}

struct Pending {
    pos: OpPos,
    start: usize,
    f: Val,
    raw: RawTxn,
}

/// The pairing state.
#[derive(Default)]
pub struct Pairer {
    pending: FxHashMap<i64, Pending>,
    /// Decided by the first client op: whether invocations come first.
    paired: Option<(bool, usize)>,
    pub dangling: u64,
}

fn status(t: OpType) -> Status {
    match t {
        OpType::Ok => Status::Committed,
        OpType::Fail => Status::Aborted,
        _ => Status::Indeterminate,
    }
}

impl Pairer {
    /// Whether the stream holds completions only (known after the first op).
    pub fn completions_only(&self) -> bool {
        self.paired.is_some_and(|p| !p.0)
    }

    /// Takes one client op with its micro-ops; calls `emit` for each
    /// transaction it completes.
    pub fn op(
        &mut self,
        op: Op,
        raw: &RawTxn,
        emit: &mut impl FnMut(TxnMeta, &RawTxn) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
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
                    "an invocation in a history that began with a completion",
                )
                .with_related(first, 1, "first client op, a completion")
                .with_help(
                    "a history either pairs every completion with an invocation, or holds completions only",
                ));
            }
            let meta = TxnMeta {
                status: status(op.typ),
                process: op.process,
                invoke: None,
                complete: op.pos,
                f: op.f,
            };
            return emit(meta, raw);
        }
        if op.typ == OpType::Invoke {
            if let Some(prev) = self.pending.get(&op.process) {
                return Err(ParseError::new(
                    op.start,
                    format!(
                        "process {} invokes again while its invocation on line {} has not completed",
                        op.process, prev.pos.line
                    ),
                )
                .with_related(prev.start, 1, "the outstanding invocation"));
            }
            self.pending.insert(
                op.process,
                Pending {
                    pos: op.pos,
                    start: op.start,
                    f: op.f,
                    raw: raw.clone(),
                },
            );
            return Ok(());
        }
        let Some(inv) = self.pending.remove(&op.process) else {
            return Err(ParseError::new(
                op.start,
                format!(
                    "a completion for process {}, which has no outstanding invocation",
                    op.process
                ),
            )
            .with_help("each completion must follow an invocation by the same process"));
        };
        let st = status(op.typ);
        let meta = TxnMeta {
            status: st,
            process: op.process,
            invoke: Some(inv.pos),
            complete: op.pos,
            f: if op.f == Val::NIL { inv.f } else { op.f },
        };
        // Jepsen copies the invocation's value into failed and indeterminate
        // completions; when it does not, the invocation says what was tried.
        if !op.has_value && st != Status::Committed {
            emit(meta, &inv.raw)
        } else {
            emit(meta, raw)
        }
    }

    /// Emits the invocations that never completed, as indeterminate, in
    /// file order.
    pub fn finish(
        &mut self,
        emit: &mut impl FnMut(TxnMeta, &RawTxn) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        let mut dangling: Vec<(i64, Pending)> = self.pending.drain().collect();
        dangling.sort_by_key(|(_, p)| p.start);
        for (process, inv) in dangling {
            let meta = TxnMeta {
                status: Status::Indeterminate,
                process,
                invoke: Some(inv.pos),
                complete: inv.pos,
                f: inv.f,
            };
            emit(meta, &inv.raw)?;
            self.dangling += 1;
        }
        Ok(())
    }
}
