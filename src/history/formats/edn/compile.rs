//! Compiles a Jepsen EDN file into the history model: the op reader
//! ([`super::read`](mod@super::read)) over the file's bytes, invocations paired with their
//! completions, each transaction held briefly before the [`Builder`]
//! compiles it.
//!
//! Data flow: [`read`] runs the reader op by op; a completed transaction is
//! submitted to a short queue ([`HOLD`] deep) while the builder is asked to
//! load the per-key data it will touch; when it leaves the queue, its list
//! reads (deferred by the reader) are matched against the keys' version
//! orders as they now stand and only what is new is parsed, and the
//! builder compiles it. Input already read is released from memory as the
//! reader moves on; an invocation's micro-ops are re-read at its offset
//! when its completion arrives.

use std::sync::Arc;

use super::pieces::{Pieces, Split};
use super::read::{Deferred, EdnReader, OpFields, Progress, ValueState};
use super::scan::*;
use crate::error::{Error, ParseError};
use crate::history::build::{Arg, BuildOptions, Builder, ListBase, ListHint, RawTxn, TxnMeta};
use crate::history::model::*;
use crate::history::pairing::{Paired, Pairer, on_line};
use crate::source::Source;

/// How much read input to let pile up before releasing it.
const RELEASE_EVERY: usize = 8 << 20;

/// How many transactions wait between being read and being compiled.
const HOLD: usize = 2;

/// A transaction read and not yet compiled.
#[derive(Default)]
pub(super) struct Held {
    meta: Option<TxnMeta>,
    pub(super) raw: RawTxn,
    pub(super) deferred: Vec<Deferred>,
}

/// Reads a Jepsen EDN history: a large one in pieces on the current rayon
/// pool ([`Split::for_file`]).
pub fn read(
    source: &Arc<Source>,
    opts: BuildOptions,
    progress: Option<Progress<'_>>,
) -> Result<(History, Vec<crate::anomaly::Anomaly>), Error> {
    read_split(
        source,
        opts,
        progress,
        Split::for_file(source.bytes().len()),
    )
}

/// [`read`], split as told: the same history and the same first error
/// however split (what the tests compare).
pub fn read_split(
    source: &Arc<Source>,
    opts: BuildOptions,
    progress: Option<Progress<'_>>,
    split: Split,
) -> Result<(History, Vec<crate::anomaly::Anomaly>), Error> {
    let mut r = EdnReader::new(source.bytes(), Builder::new(source.name(), opts));
    r.source = Some(source);
    r.run(progress, split)
        .map_err(|e| Error::from(e.locate(source)))?;
    Ok(r.sink.finish())
}

impl<'a> EdnReader<'a, Builder> {
    fn run(&mut self, progress: Option<Progress<'_>>, split: Split) -> Result<(), ParseError> {
        match self.run_ops(progress, split) {
            Ok(()) => self.flush(),
            // The transactions still held come first in the file, and
            // their errors first in what is reported.
            Err(e) => {
                self.flush()?;
                Err(e)
            }
        }
    }

    /// Hands a transaction (its micro-ops in `self.raw`) to the builder.
    /// Compiling it touches scattered per-key data; it is compiled
    /// [`HOLD`] transactions later, by when that data has been loaded
    /// (asked for here, in two steps: the keys' entries, then what they
    /// point to), so that the loads overlap with other work rather than
    /// stall it.
    fn submit(&mut self, meta: TxnMeta) -> Result<(), ParseError> {
        let mut h = self.spare.pop().unwrap_or_default();
        std::mem::swap(&mut h.raw, &mut self.raw);
        std::mem::swap(&mut h.deferred, &mut self.deferred);
        h.meta = Some(meta);
        self.sink.prefetch_entries(&h.raw);
        self.queue.push_back(h);
        if let Some(prev) = self
            .queue
            .len()
            .checked_sub(2)
            .and_then(|i| self.queue.get(i))
        {
            self.sink.prefetch_data(
                &prev.raw,
                prev.deferred.iter().map(|d| (d.mop as usize, d.end - d.at)),
            );
        }
        while self.queue.len() > HOLD {
            self.compile_next()?;
        }
        Ok(())
    }

    fn compile_next(&mut self) -> Result<(), ParseError> {
        let Some(mut h) = self.queue.pop_front() else {
            return Ok(());
        };
        let r = match self.resolve_lists(&mut h) {
            Ok(()) => match h.meta.take() {
                Some(meta) => self.sink.push_txn_in(meta, &h.raw, self.src).map(|_| ()),
                None => Ok(()),
            },
            Err(e) => Err(e),
        };
        h.raw.clear();
        h.deferred.clear();
        self.spare.push(h);
        if r.is_err() {
            // The builder is left mid-transaction: nothing after this one
            // may be compiled (it could find the failed transaction's
            // writes), and its error is the first in the file anyway.
            self.queue.clear();
        }
        r
    }

    fn flush(&mut self) -> Result<(), ParseError> {
        while !self.queue.is_empty() {
            self.compile_next()?;
        }
        Ok(())
    }

    fn run_ops(&mut self, progress: Option<Progress<'_>>, split: Split) -> Result<(), ParseError> {
        self.open()?;
        // An invocation's micro-ops are re-read at its offset when needed.
        let mut pairer: Pairer<()> = Pairer::default();
        let mut n: u64 = 0;
        match split {
            Split::Sequential => {
                while self.at_op()? {
                    self.raw.clear();
                    let op = self.read_op()?;
                    self.take_op(op, &mut pairer, &mut n, progress)?;
                }
            }
            Split::Pieces { bytes, threads } => {
                Pieces::new(self.src, self.cur.pos, bytes, threads)
                    .run(self, |r, op| r.take_op(op, &mut pairer, &mut n, progress))?;
            }
        }
        // Invocations that never completed may or may not have happened.
        for (meta, inv) in pairer.finish() {
            self.reread_value(inv.start)?;
            self.submit(meta)?;
            self.sink.stats().dangling_invokes += 1;
        }
        self.sink.stats().completions_only = pairer.completions_only();
        Ok(())
    }

    /// Takes an op just read (its micro-ops in the buffer, the cursor past
    /// it): numbered, paired, and a transaction it completes submitted.
    fn take_op(
        &mut self,
        mut op: OpFields,
        pairer: &mut Pairer<()>,
        n: &mut u64,
        progress: Option<Progress<'_>>,
    ) -> Result<(), ParseError> {
        *n += 1;
        if self.cur.pos - self.released >= RELEASE_EVERY
            && let Some(source) = self.source
        {
            // Released input still reads (its pages fault back in);
            // keeping the last stretch saves that for the invocations
            // still pending, which are re-read at their completion.
            let upto = self.cur.pos - RELEASE_EVERY / 2;
            source.release(self.released, upto);
            self.released = upto;
        }
        if n.is_multiple_of(65536)
            && let Some(p) = progress
        {
            p(self.cur.pos as u64);
        }
        self.number(&mut op)?;
        self.sink.stats().ops += 1;
        let Some((op, bad)) = self.client_op(&op)? else {
            self.sink.stats().skipped_ops += 1;
            return Ok(());
        };
        self.sink.stats().client_ops += 1;
        match pairer.op(&op, bad, on_line, || ())? {
            Paired::Pending => {}
            Paired::Txn(meta, None) => self.submit(meta)?,
            Paired::Txn(meta, Some(inv)) => {
                self.reread_value(inv.start)?;
                self.submit(meta)?;
            }
        }
        Ok(())
    }

    /// Reads the micro-ops of the op at `start` again into the buffer.
    fn reread_value(&mut self, start: usize) -> Result<(), ParseError> {
        let save = self.cur.pos;
        self.cur.pos = start;
        self.raw.clear();
        self.skim_invokes = false;
        let op = self.read_op();
        self.skim_invokes = true;
        self.cur.pos = save;
        match op?.value {
            ValueState::Other(e) => Err(e),
            _ => Ok(()),
        }
    }

    /// Reads the elements of a held transaction's list reads, now that it
    /// is to be compiled: each list is first matched against its key's
    /// version order as it now stands ([`Builder::list_base`]), and a prefix
    /// of it is not parsed at all, an extension of it only past the known
    /// part.
    pub(super) fn resolve_lists(&mut self, h: &mut Held) -> Result<(), ParseError> {
        let src = self.src;
        for d in &h.deferred {
            let elems = &mut h.raw.elems;
            let start = elems.len();
            let text = &src[d.at..d.end];
            let hint = |base, last| ListHint {
                mop: d.mop,
                base,
                last,
                text: (d.at, d.end),
            };
            let hint = match self.sink.list_base(d.key, text, d.spaces) {
                ListBase::Prefix { base, last } => Some(hint(base, last)),
                ListBase::Grow { base, skip }
                    if int_list_body(src, d.at + skip, d.end, elems).is_some() =>
                {
                    Some(hint(base, Val::NIL))
                }
                _ => {
                    elems.truncate(start);
                    if int_list_body(src, d.at, d.end, elems).is_some() {
                        Some(hint(0, Val::NIL))
                    } else {
                        // Other spacing: the careful way.
                        elems.truncate(start);
                        let mut i = d.at;
                        loop {
                            i = int_run(src, i, elems);
                            if i >= d.end {
                                break;
                            }
                            let save = self.cur.pos;
                            self.cur.pos = i;
                            let v = self.scalar();
                            i = self.cur.pos;
                            self.cur.pos = save;
                            elems.push(v?);
                        }
                        None
                    }
                }
            };
            let elems = &mut h.raw.elems;
            if let Some(x) = hint {
                h.raw.hints.push(x);
            }
            h.raw.mops[d.mop as usize].arg = Arg::List {
                start: start as u32,
                len: (elems.len() - start) as u32,
            };
        }
        Ok(())
    }
}
