//! Decodes the binary encoding of a Jepsen history that
//! `elle_si.HistoryEncoder` (Java) writes, straight into the
//! [`Builder`], pairing invocations with completions through the one
//! [`Pairer`] the file readers use.
//!
//! # Wire format, version 2
//!
//! Two byte arrays. Integers are LEB128 varints (`uv`); signed ones are
//! zigzag-mapped first (`sv`).
//!
//! *Values* (`values`): the EDN text of every value that is not a small
//! integer, each once, in order of first use: `uv len, len bytes of UTF-8`.
//! The n-th entry (from 1) has id n; id 0 is `nil`.
//!
//! *A value reference* (`ref`), as a `uv`: even, `zigzag(i) << 1` for an
//! integer `i` with |i| < 2^62; odd, `(id << 1) | 1` for an entry of the
//! value table. So `nil` is 1 and small integers take one byte.
//!
//! *Ops* (`ops`): the bytes `ELSI`, the version byte `2`, then one record per
//! element of the history, in history order, then the trailer:
//!
//! ```text
//! skip  := 0x02                        a non-client op (non-integer :process)
//! op    := 0x01 head:u8 process:sv [index:sv] [time:sv] f:ref value
//! trail := 0x03 process:sv state:u8 value   (after the last element)
//! head  := bits 0-1 :type (0 :invoke, 1 :ok, 2 :fail, 3 :info)
//!          bit 2    :index present      bit 3 :time present
//!          bits 4-5 :value: 0 absent, 1 nil, 2 micro-ops, 3 not micro-ops
//! value := (2) n:uv mop*n | (3) uv len, UTF-8 text saying what was found
//! mop   := code:u8 key:ref arg
//! code  := bits 0-1 function (0 :append, 1 :r, 2 :w)
//!          bits 2-3 argument (0 nil or absent, 1 one value, 2 a list)
//! arg   := (1) ref | (2) n:uv ref*n
//! ```
//!
//! The encoder may leave out an invocation's `:value` (state 0), since the
//! completion repeats it: walking those micro-ops was a third of the
//! encoding time. It then writes the invocation's value into a `:fail` or
//! `:info` completion that has none (so the completion never needs its
//! invocation's), and, in a trailer record (`state` as in `head` bits 4-5),
//! the value of each invocation that never completed. An invocation that
//! does carry its value is read as in version 1.
//!
//! An op without `:index` gets its position in the history (counting every
//! element), as `jepsen.history/history` numbers ops. Errors name the op by
//! its position, `history[12]`, since there is no file line to point at.
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use elle_si::edn::{self};
use elle_si::error::{self, ParseError};
use elle_si::history::build::{Arg, BuildOptions, Builder, RawKind, RawMop, RawTxn, TxnMeta};
use elle_si::history::indices::Indices;
use elle_si::history::model::*;
use elle_si::history::pairing::{ClientOp, Invocation, OpType, Paired, Pairer};
use elle_si::history::{Format, KeyOrders, Loaded, take_key_orders};
use elle_si::source::Source;

use super::bridge::clojure_remedy;
use super::options::BridgeOptions;

/// The encoding's version; `elle_si.HistoryEncoder` writes the same.
pub const WIRE_VERSION: u8 = 2;
pub(super) const MAGIC: &[u8; 4] = b"ELSI";
pub(super) const REC_OP: u8 = 0x01;
pub(super) const REC_SKIP: u8 = 0x02;
pub(super) const REC_TRAILER: u8 = 0x03;

/// A cursor over one of the two byte arrays.
pub(super) struct Bytes<'a> {
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
}

/// Where a buffer stopped making sense. Small, so that the hot decoding
/// paths return it cheaply; it becomes a [`ParseError`] on the way out.
#[derive(Debug)]
pub(super) enum Malformed {
    Truncated(usize),
    LongVarint(usize),
    IntRange(usize, i64),
    NoValue(usize, u64),
    Code(usize, &'static str),
}

impl From<Malformed> for ParseError {
    fn from(m: Malformed) -> ParseError {
        match m {
            Malformed::Truncated(at) => ParseError::new(
                at,
                "the encoded history ends in the middle of a record: the encoder and this library disagree",
            ),
            Malformed::LongVarint(at) => ParseError::new(at, "a varint longer than 64 bits"),
            Malformed::IntRange(at, i) => {
                ParseError::new(at, format!("inline integer {i} out of range"))
            }
            Malformed::NoValue(at, id) => {
                ParseError::new(at, format!("value id {id} is not in the value table"))
            }
            Malformed::Code(at, what) => ParseError::new(at, what),
        }
    }
}

impl<'a> Bytes<'a> {
    #[inline]
    pub(super) fn u8(&mut self) -> Result<u8, Malformed> {
        let c = *self.b.get(self.pos).ok_or(Malformed::Truncated(self.pos))?;
        self.pos += 1;
        Ok(c)
    }

    #[inline]
    pub(super) fn uv(&mut self) -> Result<u64, Malformed> {
        // Most varints here are one byte: small integers, counts, codes.
        match self.b.get(self.pos) {
            Some(&c) if c < 0x80 => {
                self.pos += 1;
                Ok(u64::from(c))
            }
            _ => self.uv_long(),
        }
    }

    pub(super) fn uv_long(&mut self) -> Result<u64, Malformed> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let c = self.u8()?;
            out |= u64::from(c & 0x7f) << shift;
            if c & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(Malformed::LongVarint(self.pos))
    }

    #[inline]
    pub(super) fn sv(&mut self) -> Result<i64, Malformed> {
        let z = self.uv()?;
        Ok(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    /// A length or count, of at most the bytes left (each element takes
    /// at least one).
    pub(super) fn len(&mut self) -> Result<usize, Malformed> {
        let n = self.uv()?;
        if n > (self.b.len() - self.pos.min(self.b.len())) as u64 {
            return Err(Malformed::Truncated(self.pos));
        }
        Ok(n as usize)
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        let s = self
            .b
            .get(self.pos..self.pos + n)
            .ok_or(Malformed::Truncated(self.pos))?;
        self.pos += n;
        Ok(s)
    }
}

/// What an op's `:value` held.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ValueState {
    Absent,
    Nil,
    /// Micro-ops, now in the RawTxn buffer.
    Txn,
    /// Not micro-ops; the error to give if the value is needed.
    Other(String),
}

pub(super) struct OpHead {
    pub(super) start: usize,
    pub(super) typ: OpType,
    pub(super) process: i64,
    pub(super) index: Option<i64>,
    pub(super) time: Option<i64>,
    pub(super) f: Val,
    pub(super) value: ValueState,
}

/// What a decoding keeps between the chunks of a streamed history.
pub(super) struct State {
    /// Wire value id -> interned value.
    pub(super) ids: Vec<Val>,
    pub(super) builder: Builder,
    pub(super) raw: RawTxn,
    /// The offset of every record, by position in the history.
    pub(super) starts: Vec<u32>,
    /// Time spent in the [`Builder`] (compiling, which the CLI does too
    /// after parsing), measured only when `timed`: the rest is decoding.
    pub(super) compile: Duration,
    pub(super) timed: bool,
    /// The pairing, carried across chunks (an invocation's micro-ops are
    /// re-read at its record when needed).
    pub(super) pairer: Pairer<()>,
    /// Jepsen's `:index` rule over the records so far.
    pub(super) indices: Indices,
}

impl State {
    pub(super) fn new(opts: BuildOptions, name: String) -> State {
        State {
            ids: vec![Val::NIL],
            builder: Builder::new(name, opts),
            raw: RawTxn::default(),
            starts: Vec::new(),
            compile: Duration::ZERO,
            timed: false,
            pairer: Pairer::default(),
            indices: Indices::default(),
        }
    }

    /// Interns the value-table entries in `values` (whole entries, the ones
    /// after those already read).
    pub(super) fn add_values(&mut self, values: &[u8]) -> Result<(), String> {
        let mut v = Bytes { b: values, pos: 0 };
        while v.pos < values.len() {
            let entry = v.pos;
            let text = v.len().and_then(|n| v.take(n)).map_err(|e| {
                format!(
                    "the value table is malformed: {}",
                    ParseError::from(e).message
                )
            })?;
            let value = edn::read_one(text).map_err(|e| {
                format!(
                    "value {} of the value table, {:?}, is not EDN: {} (at byte {entry})",
                    self.ids.len(),
                    String::from_utf8_lossy(text),
                    e.message
                )
            })?;
            let id = self.builder.values().intern(value);
            self.ids.push(id);
        }
        Ok(())
    }
}

/// Refuses a buffer that is not this version's encoding of a history.
pub(super) fn check_header(ops: &[u8]) -> Result<(), String> {
    if ops.len() < 5 || &ops[..4] != MAGIC {
        return Err("the encoded history does not start with ELSI: not a history encoding".into());
    }
    if ops[4] != WIRE_VERSION {
        return Err(format!(
            "the history is encoded in wire version {}, but this native library reads version {WIRE_VERSION}: rebuild the library and the Clojure side from one checkout",
            ops[4]
        ));
    }
    Ok(())
}

/// Decodes the wire format into a [`Builder`]: the ops received so far,
/// with the state carried from the chunks before.
pub(super) struct Decoder<'a> {
    pub(super) ops: Bytes<'a>,
    pub(super) s: &'a mut State,
}

pub(super) fn op_type(bits: u8) -> OpType {
    match bits & 3 {
        0 => OpType::Invoke,
        1 => OpType::Ok,
        2 => OpType::Fail,
        _ => OpType::Info,
    }
}

/// Writes `x` as the encoding's `uv` (LEB128), for encoders written in
/// Rust: the tests' and the semantic mutants' (`tests/it/support/mutant.rs`).
pub fn write_uv(out: &mut Vec<u8>, mut x: u64) {
    loop {
        let b = (x & 0x7f) as u8;
        x >>= 7;
        if x == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// The value a reference `r` (read at byte `at`) stands for.
#[inline]
pub(super) fn reference(r: u64, at: usize, ids: &[Val]) -> Result<Val, Malformed> {
    if r & 1 == 0 {
        let z = r >> 1;
        let i = ((z >> 1) as i64) ^ -((z & 1) as i64);
        return Val::int(i).ok_or(Malformed::IntRange(at, i));
    }
    ids.get((r >> 1) as usize)
        .copied()
        .ok_or(Malformed::NoValue(at, r >> 1))
}

impl<'a> Decoder<'a> {
    /// Compiles the transaction in the buffer.
    pub(super) fn push(&mut self, meta: TxnMeta) -> Result<(), ParseError> {
        if !self.s.timed {
            return self.s.builder.push_txn(meta, &self.s.raw).map(|_| ());
        }
        let t0 = Instant::now();
        let r = self.s.builder.push_txn(meta, &self.s.raw).map(|_| ());
        self.s.compile += t0.elapsed();
        r
    }

    #[inline]
    pub(super) fn val(&mut self) -> Result<Val, Malformed> {
        let at = self.ops.pos;
        let r = self.ops.uv()?;
        reference(r, at, &self.s.ids)
    }

    /// Reads `len` references into the buffer's elements: the bulk of a
    /// list-append history, hence the loop over a local cursor.
    pub(super) fn list(&mut self, len: usize) -> Result<(), Malformed> {
        let b = self.ops.b;
        let mut pos = self.ops.pos;
        let elems = &mut self.s.raw.elems;
        elems.reserve(len);
        for _ in 0..len {
            let at = pos;
            let r = match (b.get(pos), b.get(pos + 1)) {
                (Some(&c), _) if c < 0x80 => {
                    pos += 1;
                    u64::from(c)
                }
                (Some(&c0), Some(&c1)) if c1 < 0x80 => {
                    pos += 2;
                    u64::from(c0 & 0x7f) | (u64::from(c1) << 7)
                }
                _ => {
                    self.ops.pos = pos;
                    let r = self.ops.uv_long()?;
                    pos = self.ops.pos;
                    r
                }
            };
            elems.push(reference(r, at, &self.s.ids)?);
        }
        self.ops.pos = pos;
        Ok(())
    }

    /// Reads an op record whose tag is already consumed; micro-ops go to
    /// the buffer.
    pub(super) fn read_op(&mut self, start: usize) -> Result<OpHead, Malformed> {
        let head = self.ops.u8()?;
        let process = self.ops.sv()?;
        let index = if head & 4 != 0 {
            Some(self.ops.sv()?)
        } else {
            None
        };
        let time = if head & 8 != 0 {
            Some(self.ops.sv()?)
        } else {
            None
        };
        let f = self.val()?;
        let value = self.value(head >> 4)?;
        Ok(OpHead {
            start,
            typ: op_type(head),
            process,
            index,
            time,
            f,
            value,
        })
    }

    /// Reads a `:value` in state `state & 3` (micro-ops go to the buffer).
    pub(super) fn value(&mut self, state: u8) -> Result<ValueState, Malformed> {
        Ok(match state & 3 {
            0 => ValueState::Absent,
            1 => ValueState::Nil,
            2 => {
                self.micro_ops()?;
                ValueState::Txn
            }
            _ => {
                let n = self.ops.len()?;
                let text = self.ops.take(n)?;
                ValueState::Other(String::from_utf8_lossy(text).into_owned())
            }
        })
    }

    pub(super) fn micro_ops(&mut self) -> Result<(), Malformed> {
        let n = self.ops.uv()?;
        for _ in 0..n {
            let offset = self.ops.pos;
            let code = self.ops.u8()?;
            let kind = match code & 3 {
                0 => RawKind::Append,
                1 => RawKind::Read,
                2 => RawKind::Write,
                _ => return Err(Malformed::Code(offset, "unknown micro-op code")),
            };
            let key = self.val()?;
            let arg = match (code >> 2) & 3 {
                0 => Arg::Nil,
                1 => match self.val()? {
                    Val::NIL => Arg::Nil,
                    v => Arg::Val(v),
                },
                2 => {
                    let len = self.ops.len()?;
                    let start = self.s.raw.elems.len() as u32;
                    self.list(len)?;
                    Arg::List {
                        start,
                        len: self.s.raw.elems.len() as u32 - start,
                    }
                }
                _ => {
                    return Err(Malformed::Code(offset, "unknown micro-op argument code"));
                }
            };
            self.s.raw.mops.push(RawMop {
                kind,
                key,
                arg,
                offset,
            });
        }
        Ok(())
    }

    pub(super) fn client_value(start: usize, value: &ValueState) -> Result<(), ParseError> {
        match value {
            ValueState::Other(found) => Err(ParseError::new(
                start,
                format!(
                    "a client op's :value must be a vector of micro-ops like [[:append k v] [:r k nil]], found {found}"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Reads the micro-ops of the op at `start` again into the buffer.
    pub(super) fn reread_value(&mut self, start: usize) -> Result<(), ParseError> {
        let save = self.ops.pos;
        self.ops.pos = start + 1;
        self.s.raw.clear();
        let op = self.read_op(start)?;
        self.ops.pos = save;
        Self::client_value(op.start, &op.value)
    }

    /// Reads the trailer records: the offset of each one's value, by
    /// process.
    pub(super) fn trailer(&mut self) -> Result<FxHashMap<i64, usize>, ParseError> {
        let mut at = FxHashMap::default();
        while self.ops.pos < self.ops.b.len() {
            let start = self.ops.pos;
            if self.ops.u8()? != REC_TRAILER {
                return Err(ParseError::new(
                    start,
                    "a history record after the trailer: the encoder and this library disagree",
                ));
            }
            let process = self.ops.sv()?;
            at.insert(process, self.ops.pos);
            let state = self.ops.u8()?;
            self.s.raw.clear();
            self.value(state)?;
        }
        Ok(at)
    }

    /// Reads the trailer value at `at`, of the invocation at `start`, into
    /// the buffer.
    pub(super) fn trailer_value(&mut self, at: usize, start: usize) -> Result<(), ParseError> {
        let save = self.ops.pos;
        self.ops.pos = at;
        self.s.raw.clear();
        let state = self.ops.u8()?;
        let value = self.value(state)?;
        self.ops.pos = save;
        Self::client_value(start, &value)
    }

    /// The records received so far, through the [`Pairer`]. Stops before
    /// the trailer, or at the end of the ops received so far (which end
    /// with a whole record).
    pub(super) fn run(&mut self) -> Result<(), ParseError> {
        let mut pairer = std::mem::take(&mut self.s.pairer);
        let r = self.records(&mut pairer);
        self.s.pairer = pairer;
        r
    }

    pub(super) fn records(&mut self, pairer: &mut Pairer<()>) -> Result<(), ParseError> {
        while self.ops.pos < self.ops.b.len() {
            let start = self.ops.pos;
            if self.ops.b[start] == REC_TRAILER {
                break;
            }
            self.s.starts.push(start as u32);
            self.s.builder.stats().ops += 1;
            match self.ops.u8()? {
                REC_SKIP => {
                    // Its index is not sent: counted, not checked.
                    self.s.indices.skip();
                    self.s.builder.stats().skipped_ops += 1;
                    continue;
                }
                REC_OP => {}
                t => {
                    return Err(ParseError::new(
                        start,
                        format!("unknown record tag {t}: the encoder and this library disagree"),
                    ));
                }
            }
            self.s.raw.clear();
            let op = self.read_op(start)?;
            self.s.builder.stats().client_ops += 1;
            let pos = OpPos {
                index: self
                    .s
                    .indices
                    .next(op.index)
                    .map_err(|why| ParseError::new(start, why))?,
                time: op.time.unwrap_or(-1),
                line: 0,
                offset: start as u64,
            };
            let client = ClientOp {
                typ: op.typ,
                process: op.process,
                pos,
                start,
                f: op.f,
                has_value: op.value == ValueState::Txn,
            };
            let bad = Self::client_value(op.start, &op.value).err();
            let at = |inv: &Invocation<()>| format!("at history[{}]", self.position(inv.start));
            match pairer.op(&client, bad, at, || ())? {
                Paired::Pending => {}
                Paired::Txn(meta, None) => self.push(meta)?,
                Paired::Txn(meta, Some(inv)) => {
                    self.reread_value(inv.start)?;
                    self.push(meta)?;
                }
            }
        }
        Ok(())
    }

    /// After the last chunk: the trailer, and the invocations that never
    /// completed.
    pub(super) fn end(&mut self) -> Result<(), ParseError> {
        let trailer = self.trailer()?;
        // Invocations that never completed may or may not have happened.
        for (meta, inv) in self.s.pairer.finish() {
            match trailer.get(&meta.process) {
                Some(&at) => self.trailer_value(at, inv.start)?,
                None => self.reread_value(inv.start)?,
            }
            self.push(meta)?;
            self.s.builder.stats().dangling_invokes += 1;
        }
        self.s.builder.stats().completions_only = self.s.pairer.completions_only();
        Ok(())
    }

    /// The position in the history of the record holding byte `offset`.
    pub(super) fn position(&self, offset: usize) -> usize {
        self.s
            .starts
            .partition_point(|&s| s as usize <= offset)
            .saturating_sub(1)
    }

    /// `history[12] (:index 24, :process 3)` for the record holding `offset`.
    pub(super) fn describe(&self, offset: usize) -> String {
        let at = self.position(offset);
        let Some(&start) = self.s.starts.get(at) else {
            return format!("byte {offset} of the encoded history");
        };
        let mut b = Bytes {
            b: self.ops.b,
            pos: start as usize,
        };
        let head = (|| -> Result<Option<(i64, Option<i64>)>, ParseError> {
            if b.u8()? != REC_OP {
                return Ok(None);
            }
            let head = b.u8()?;
            let process = b.sv()?;
            let index = if head & 4 != 0 { Some(b.sv()?) } else { None };
            Ok(Some((process, index)))
        })();
        match head {
            Ok(Some((process, Some(index)))) => {
                format!("history[{at}] (:index {index}, :process {process})")
            }
            Ok(Some((process, None))) => format!("history[{at}] (:process {process})"),
            _ => format!("history[{at}]"),
        }
    }

    /// A decoding or compilation error as one message naming the op.
    pub(super) fn explain(&self, name: &str, e: ParseError) -> String {
        let mut msg = format!("{name}: {}: {}", self.describe(e.offset), e.message);
        for (offset, _, label) in &e.related {
            msg.push_str(&format!("\n  {label}: {}", self.describe(*offset)));
        }
        if let Some(h) = error::advice(e.help.as_deref(), e.remedy.map(clojure_remedy)) {
            msg.push_str(&format!("\n  help: {h}"));
        }
        msg
    }
}

/// Decodes an encoded history and compiles it, as [`elle_si::history::load`] does a
/// file.
pub fn decode(values: &[u8], ops: &[u8], opts: &BridgeOptions) -> Result<Loaded, String> {
    let mut d = Decoding::new(opts, false);
    d.values(values)?;
    d.ops(ops)?;
    d.finish().map(|done| done.loaded)
}

/// A decoding fed chunk by chunk: each chunk of ops ends with a whole
/// record, and each chunk of values holds whole entries (the ones its ops
/// are the first to use, or earlier).
pub(super) struct Decoding {
    pub(super) name: String,
    /// Every op received so far: errors and `:fail` completions without a
    /// value look back at earlier records.
    pub(super) buf: Vec<u8>,
    pub(super) pos: usize,
    pub(super) state: State,
    /// Elle's key options, taken into the history once compiled.
    pub(super) keys: KeyOrders,
}

/// A decoded and compiled history.
pub(super) struct Decoded {
    pub(super) loaded: Loaded,
    /// Time in the [`Builder`], when timed.
    pub(super) compile: Duration,
    /// Of which in [`Builder::finish`], after the last chunk.
    pub(super) finish: Duration,
}

impl Decoding {
    pub(super) fn new(opts: &BridgeOptions, timed: bool) -> Decoding {
        let name = opts.name.clone().unwrap_or_else(|| "history".to_string());
        let bopts = BuildOptions {
            workload: opts.workload,
            ..BuildOptions::default()
        };
        let mut state = State::new(bopts, name.clone());
        state.timed = timed;
        Decoding {
            name,
            buf: Vec::new(),
            pos: 0,
            state,
            keys: opts.keys,
        }
    }

    pub(super) fn values(&mut self, chunk: &[u8]) -> Result<(), String> {
        self.state.add_values(chunk)
    }

    /// Decodes the records of `chunk`.
    pub(super) fn ops(&mut self, chunk: &[u8]) -> Result<(), String> {
        let first = self.buf.is_empty();
        self.buf.extend_from_slice(chunk);
        if first {
            check_header(&self.buf)?;
            self.pos = 5;
        }
        self.step(|d| d.run())
    }

    /// Runs `f` over the ops received so far, from where the last chunk
    /// stopped.
    pub(super) fn step(
        &mut self,
        f: impl FnOnce(&mut Decoder) -> Result<(), ParseError>,
    ) -> Result<(), String> {
        let mut d = Decoder {
            ops: Bytes {
                b: &self.buf,
                pos: self.pos,
            },
            s: &mut self.state,
        };
        let r = f(&mut d).map_err(|e| d.explain(&self.name, e));
        self.pos = d.ops.pos;
        r
    }

    /// Ends the history and compiles it.
    pub(super) fn finish(mut self) -> Result<Decoded, String> {
        if self.buf.is_empty() {
            check_header(&self.buf)?;
        }
        self.step(|d| d.end())?;
        let t0 = Instant::now();
        let (history, anomalies) = self.state.builder.finish();
        let finish = t0.elapsed();
        let mut loaded = Loaded {
            history,
            anomalies,
            source: Arc::new(Source::from_bytes(self.name, Vec::new())),
            format: Format::Edn,
            notes: Default::default(),
        };
        take_key_orders(&mut loaded, self.keys).map_err(|e| super::bridge::error_text(&e))?;
        Ok(Decoded {
            loaded,
            compile: self.state.compile + finish,
            finish,
        })
    }
}
