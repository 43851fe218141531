//! The op reader of Jepsen histories in EDN (`history.edn`: one op map per
//! line, or a whole-file vector or list of op maps): each op map read into
//! its fields and its micro-ops into a [`RawTxn`]; over a stream
//! ([`for_each_txn`]) each transaction handed on as soon as it is paired.
//! Compiling a file into the builder is [`super::compile`]'s.
//!
//! The op maps are read by a typed fast path: the keys Jepsen writes
//! (`:index :time :type :process :f :value`) and the micro-ops inside
//! `:value` go straight into compact form; anything else (`:error`, nemesis
//! values, ...) falls back to the generic EDN reader. Invocations are paired
//! with completions per process; a file with no invocations at all (C4's and
//! hand-written logs) is read as completions that each stand alone.

use super::compile::Held;
use super::scan::*;
use crate::edn::Cursor;
use crate::edn::parse::{atom_value, is_delim, parse_i64};
use crate::error::ParseError;
use crate::history::build::{Arg, Builder, RawKind, RawMop, RawTxn, TxnMeta};
use crate::history::indices::Indices;
use crate::history::model::*;
use crate::history::pairing::{ClientOp, OpType, Paired, Pairer, on_line};
use crate::source::Source;
use std::collections::VecDeque;

/// Where a reader puts the values it interns: the [`Builder`] of a file
/// being compiled, or a bare value table for a stream.
pub trait OpSink {
    /// The value table.
    fn values(&mut self) -> &mut Values;
}

impl OpSink for Builder {
    fn values(&mut self) -> &mut Values {
        Builder::values(self)
    }
}

impl OpSink for Values {
    fn values(&mut self) -> &mut Values {
        self
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Process {
    Missing,
    Int(i64),
    Other,
}

/// What `:value` held.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ValueState {
    Absent,
    Nil,
    /// Micro-ops, now in the RawTxn buffer.
    Txn,
    /// Not a micro-op vector; the error to give if this is a client op.
    Other(ParseError),
}

pub(super) struct OpFields {
    start: usize,
    index: Option<i64>,
    time: Option<i64>,
    typ: Option<OpType>,
    process: Process,
    pub(super) f: Val,
    pub(super) value: ValueState,
}

/// A progress callback, given the byte offset reached (Sync: a file read
/// in pieces calls it from a thread of the pool).
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// The op reader: Jepsen's op maps, from EDN bytes, as [`ClientOp`]s with
/// their micro-ops in a buffer. Over a file it compiles into a [`Builder`]
/// (`S = Builder`, [`read`](super::compile::read)); over a stream it hands transactions on
/// (`S = Values`, [`for_each_txn`]).
pub struct EdnReader<'a, S> {
    /// The file, for releasing pages already read (None for a stream).
    pub(super) source: Option<&'a Source>,
    /// Input before this offset has been released (see [`Source::release`]).
    pub(super) released: usize,
    /// Whether an invocation's micro-ops in Jepsen's usual spelling are
    /// only checked, not read (see [`skim_micro_ops`]).
    pub(super) skim_invokes: bool,
    /// Whether list reads are read when their transaction is compiled (see
    /// [`Self::resolve_lists`]), which only a [`Builder`] does.
    defer_lists: bool,
    pub(super) src: &'a [u8],
    pub(super) cur: Cursor<'a>,
    pub(super) sink: S,
    /// The closing bracket of a whole-file vector or list, and where it
    /// opened.
    pub(super) wrapped: Option<(u8, usize)>,
    pub(super) raw: RawTxn,
    /// Jepsen's `:index` rule over the ops read so far.
    indices: Indices,
    line_at: (usize, u32),
    f_cache: Option<(&'a [u8], Val)>,
    /// List reads of the op being read, their elements not yet read (see
    /// [`Self::resolve_lists`]).
    pub(super) deferred: Vec<Deferred>,
    /// Transactions read and not yet compiled (see [`Self::submit`]).
    pub(super) queue: VecDeque<Held>,
    pub(super) spare: Vec<Held>,
}

/// A list read in Jepsen's spelling, its elements not yet read.
pub(super) struct Deferred {
    /// Index in the RawTxn's micro-ops.
    pub(super) mop: u32,
    pub(super) key: Val,
    /// The list's text, inside its brackets.
    pub(super) at: usize,
    pub(super) end: usize,
    /// The spaces in the text.
    pub(super) spaces: u32,
}

/// What a stream held, besides its transactions.
#[derive(Clone, Debug, Default)]
pub struct StreamStats {
    pub ops: u64,
    pub skipped_ops: u64,
    pub dangling: u64,
    pub completions_only: bool,
}

/// Streams the transactions of an EDN history to `emit` without compiling
/// them (what `convert` uses for EDN to text, where memory must stay flat
/// for multi-gigabyte inputs): the same op reader and pairing as [`read`](super::compile::read),
/// each invocation's micro-ops kept until its completion.
pub fn for_each_txn(
    src: &[u8],
    mut emit: impl FnMut(TxnMeta, &RawTxn) -> Result<(), ParseError>,
) -> Result<StreamStats, ParseError> {
    let mut r = EdnReader::new(src, Values::default());
    r.skim_invokes = false;
    r.defer_lists = false;
    let mut pairer: Pairer<RawTxn> = Pairer::default();
    let mut stats = StreamStats::default();
    r.open()?;
    while r.at_op()? {
        r.raw.clear();
        let mut op = r.read_op()?;
        r.number(&mut op)?;
        stats.ops += 1;
        let Some((op, bad)) = r.client_op(&op)? else {
            stats.skipped_ops += 1;
            continue;
        };
        match pairer.op(&op, bad, on_line, || r.raw.clone())? {
            Paired::Pending => {}
            Paired::Txn(meta, None) => emit(meta, &r.raw)?,
            Paired::Txn(meta, Some(inv)) => emit(meta, &inv.held)?,
        }
    }
    for (meta, inv) in pairer.finish() {
        emit(meta, &inv.held)?;
        stats.dangling += 1;
    }
    stats.completions_only = pairer.completions_only();
    Ok(stats)
}

impl<'a, S: OpSink> EdnReader<'a, S> {
    pub(super) fn new(src: &'a [u8], sink: S) -> EdnReader<'a, S> {
        EdnReader {
            source: None,
            released: 0,
            skim_invokes: true,
            defer_lists: true,
            src,
            cur: Cursor::new(src),
            sink,
            wrapped: None,
            raw: RawTxn::default(),
            indices: Indices::default(),
            line_at: (0, 1),
            f_cache: None,
            deferred: Vec::new(),
            queue: VecDeque::new(),
            spare: Vec::new(),
        }
    }

    /// Reads up to the first op: a byte order mark (editors on Windows may
    /// start the file with one), and the opening of a whole-file vector or
    /// list.
    pub(super) fn open(&mut self) -> Result<(), ParseError> {
        if self.src.starts_with(b"\xEF\xBB\xBF") {
            self.cur.pos = 3;
        }
        self.cur.skip_ws(0)?;
        self.wrapped = match self.cur.peek() {
            Some(c @ (b'[' | b'(')) => {
                let open = self.cur.pos;
                self.cur.pos += 1;
                Some((if c == b'[' { b']' } else { b')' }, open))
            }
            _ => None,
        };
        Ok(())
    }

    /// Moves to the next op: true when one starts here, false at the end of
    /// the history.
    pub(super) fn at_op(&mut self) -> Result<bool, ParseError> {
        self.cur.skip_ws(1)?;
        match (self.wrapped, self.cur.peek()) {
            (Some((close, _)), Some(c)) if c == close => {
                self.cur.pos += 1;
                self.cur.skip_ws(0)?;
                if !self.cur.at_end() {
                    return Err(ParseError::new(
                        self.cur.pos,
                        format!(
                            "unexpected {} after the history's closing `{}`",
                            self.cur.found(),
                            close as char
                        ),
                    ));
                }
                Ok(false)
            }
            (Some((close, open)), None) => Err(self.cur.unterminated(close, open)),
            (None, None) => Ok(false),
            _ => Ok(true),
        }
    }

    /// Numbers the op just read by Jepsen's `:index` rule ([`Indices`]):
    /// every op of the history, in order, once.
    pub(super) fn number(&mut self, op: &mut OpFields) -> Result<(), ParseError> {
        let i = self
            .indices
            .next(op.index)
            .map_err(|why| ParseError::new(op.start, why))?;
        op.index = Some(i);
        Ok(())
    }

    /// The op just read as a client op for the [`Pairer`], with the error
    /// its `:value` gives if it was not micro-ops; None for an op of no
    /// client (no integer `:process`: the nemesis and others).
    pub(super) fn client_op(
        &mut self,
        op: &OpFields,
    ) -> Result<Option<(ClientOp, Option<ParseError>)>, ParseError> {
        let process = match op.process {
            Process::Int(p) => p,
            // A map with neither key is no op of any kind, client or not
            // (the generator's `*.faults.edn` beside a history is one):
            // skipped, it would leave a history silently empty.
            Process::Missing if op.typ.is_none() => {
                return Err(ParseError::new(
                    op.start,
                    "not a Jepsen op: a map with neither :type nor :process",
                )
                .with_help(
                    "every op of a history has :type and :process; `elle-si gen` writes \
                     its faults beside the history as FILE.faults.edn, which is not a history.",
                ));
            }
            _ => return Ok(None),
        };
        let Some(typ) = op.typ else {
            return Err(ParseError::new(op.start, "client op has no :type")
                .with_help("every op needs :type :invoke, :ok, :fail or :info"));
        };
        let line = self.line_of(op.start);
        let pos = OpPos {
            index: op.index.unwrap_or(-1),
            time: op.time.unwrap_or(-1),
            line,
            offset: op.start as u64,
        };
        let bad = match &op.value {
            ValueState::Other(e) => Some(e.clone()),
            _ => None,
        };
        let op = ClientOp {
            typ,
            process,
            pos,
            start: op.start,
            f: op.f,
            has_value: op.value == ValueState::Txn,
        };
        Ok(Some((op, bad)))
    }

    fn line_of(&mut self, offset: usize) -> u32 {
        let (at, line) = self.line_at;
        let line = if offset >= at {
            line + memchr::memchr_iter(b'\n', &self.src[at..offset]).count() as u32
        } else {
            1 + memchr::memchr_iter(b'\n', &self.src[..offset]).count() as u32
        };
        self.line_at = (offset, line);
        line
    }

    pub(super) fn read_op(&mut self) -> Result<OpFields, ParseError> {
        self.deferred.clear();
        let start = self.cur.pos;
        if self.cur.peek() == Some(b'#') {
            self.cur.pos += 1;
            let tag = self.cur.take_token();
            if tag != b"jepsen.history.Op" {
                return Err(ParseError::new(
                    start,
                    format!(
                        "expected an op map, found the tagged literal #{}",
                        String::from_utf8_lossy(tag)
                    ),
                )
                .with_len(tag.len() + 1));
            }
            self.cur.skip_ws(1)?;
        }
        if self.cur.peek() != Some(b'{') {
            return Err(ParseError::new(
                self.cur.pos,
                format!(
                    "expected an op map `{{:type ..., :process ..., :value ...}}`, found {}",
                    self.cur.found()
                ),
            ));
        }
        let open = self.cur.pos;
        self.cur.pos += 1;
        let mut op = OpFields {
            start,
            index: None,
            time: None,
            typ: None,
            process: Process::Missing,
            f: Val::NIL,
            value: ValueState::Absent,
        };
        let mut seen = 0u8;
        loop {
            self.cur.skip_ws(1)?;
            let key_at = self.cur.pos;
            match self.cur.peek() {
                None => return Err(self.cur.unterminated(b'}', open)),
                Some(b'}') => {
                    self.cur.pos += 1;
                    return Ok(op);
                }
                Some(c @ (b')' | b']')) => return Err(self.cur.mismatch(c, b'}', open)),
                Some(b':') => {
                    let kw = self.cur.take_token();
                    let bit = match kw {
                        b":index" => 1,
                        b":time" => 2,
                        b":type" => 4,
                        b":process" => 8,
                        b":f" => 16,
                        b":value" => 32,
                        _ => 0,
                    };
                    if bit == 0 {
                        // Checked for what the generic reader checks
                        // (UTF-8, symbol characters), then skipped.
                        atom_value(kw, key_at)?;
                    } else {
                        if seen & bit != 0 {
                            return Err(ParseError::new(
                                key_at,
                                format!("duplicate key {} in op map", String::from_utf8_lossy(kw)),
                            )
                            .with_len(kw.len()));
                        }
                        seen |= bit;
                    }
                    self.cur.skip_ws(1)?;
                    if matches!(self.cur.peek(), Some(b'}') | None) {
                        return Err(ParseError::new(
                            key_at,
                            format!("map key {} has no value", String::from_utf8_lossy(kw)),
                        )
                        .with_len(kw.len()));
                    }
                    match bit {
                        1 => op.index = self.opt_int("index")?,
                        2 => op.time = self.opt_int("time")?,
                        4 => op.typ = Some(self.op_type()?),
                        8 => op.process = self.process()?,
                        16 => op.f = self.f_value()?,
                        // An invocation's micro-ops are only checked: the
                        // completion's are the ones compiled (and when
                        // the invocation's are needed after all, for a
                        // completion without any, they are read again).
                        32 if self.skim_invokes
                            && op.typ == Some(OpType::Invoke)
                            && let Some(end) = skim_micro_ops(self.src, self.cur.pos) =>
                        {
                            self.cur.pos = end;
                            op.value = ValueState::Txn;
                        }
                        32 => op.value = self.txn_value()?,
                        _ => {
                            self.cur.value(1)?;
                        }
                    }
                }
                Some(b'{') if seen & 4 != 0 => {
                    // A map where a key belongs, after the op's :type: the
                    // op map most likely lacks its closing brace, and this
                    // is the next op.
                    return Err(ParseError::new(
                        key_at,
                        "an op map begins before the one above is closed (no closing `}`)",
                    )
                    .with_related(open, 1, "the op map opened here")
                    .with_help("close the op map before the next op begins"));
                }
                Some(_) => {
                    // Jepsen's op keys are all keywords; anything else means
                    // this is not an op map (a map of ops, a JSON-ish map).
                    let k = self.cur.value(1)?;
                    return Err(ParseError::new(
                        key_at,
                        format!(
                            "an op map's keys are keywords (:type, :process, :value, ...); found {}",
                            k.kind()
                        ),
                    )
                    .with_len(self.cur.pos - key_at)
                    .with_help(
                        "Jepsen histories hold one op map per line, or a vector or list of op maps",
                    ));
                }
            }
        }
    }

    fn opt_int(&mut self, what: &str) -> Result<Option<i64>, ParseError> {
        if let Some(i) = self.cur.fast_int() {
            return Ok(Some(i));
        }
        let at = self.cur.pos;
        let v = self.cur.value(1)?;
        match v {
            crate::edn::Value::Int(i) => Ok(Some(i)),
            crate::edn::Value::Nil => Ok(None),
            crate::edn::Value::BigInt(_) if what != "time" => Err(ParseError::new(
                at,
                format!(":{what} is out of range: it must fit in a signed 64-bit integer"),
            )),
            // Elle tolerates odd times; so do we, by ignoring them.
            _ if what == "time" => Ok(None),
            v => Err(ParseError::new(
                at,
                format!(":{what} must be an integer, found {}", v.kind()),
            )),
        }
    }

    fn op_type(&mut self) -> Result<OpType, ParseError> {
        let at = self.cur.pos;
        if self.cur.peek() == Some(b':') {
            let t = self.cur.take_token();
            return match t {
                b":invoke" => Ok(OpType::Invoke),
                b":ok" => Ok(OpType::Ok),
                b":fail" => Ok(OpType::Fail),
                b":info" => Ok(OpType::Info),
                _ => Err(ParseError::new(
                    at,
                    format!(
                        "unknown :type {}: expected :invoke, :ok, :fail or :info",
                        String::from_utf8_lossy(t)
                    ),
                )
                .with_len(t.len())),
            };
        }
        let v = self.cur.value(1)?;
        Err(ParseError::new(
            at,
            format!(
                ":type must be a keyword (:invoke, :ok, :fail or :info), found {} {v}",
                v.kind()
            ),
        ))
    }

    fn process(&mut self) -> Result<Process, ParseError> {
        if let Some(p) = self.cur.fast_int() {
            return Ok(Process::Int(p));
        }
        let rest = &self.src[self.cur.pos..];
        if rest
            .first()
            .is_some_and(|c| c.is_ascii_digit() || *c == b'-')
        {
            let at = self.cur.pos;
            let t = self.cur.take_token();
            if let Some(p) = parse_i64(t) {
                return Ok(Process::Int(p));
            }
            atom_value(t, at)?;
            return Ok(Process::Other);
        }
        self.cur.value(1)?;
        Ok(Process::Other)
    }

    fn f_value(&mut self) -> Result<Val, ParseError> {
        if self.cur.peek() == Some(b':') {
            let at = self.cur.pos;
            let t = self.cur.take_token();
            if let Some((bytes, v)) = self.f_cache
                && bytes == t
            {
                return Ok(v);
            }
            let v = atom_value(t, at)?;
            let v = self.sink.values().intern(v);
            self.f_cache = Some((t, v));
            return Ok(v);
        }
        let v = self.cur.value(1)?;
        Ok(self.sink.values().intern(v))
    }

    /// Reads a scalar micro-op argument (key, written value, element).
    #[inline]
    pub(super) fn scalar(&mut self) -> Result<Val, ParseError> {
        if let Some(v) = self.cur.fast_int().and_then(Val::int) {
            return Ok(v);
        }
        let at = self.cur.pos;
        let c = self.cur.peek();
        if c.is_some_and(|c| c.is_ascii_digit() || c == b'-') {
            let t = self.cur.take_token();
            if let Some(v) = parse_i64(t).and_then(Val::int) {
                return Ok(v);
            }
            let v = atom_value(t, at)?;
            return Ok(self.sink.values().intern(v));
        }
        if self.src[at..].starts_with(b"nil") && self.src.get(at + 3).is_none_or(|&c| is_delim(c)) {
            self.cur.pos += 3;
            return Ok(Val::NIL);
        }
        let v = self.cur.value(3)?;
        Ok(self.sink.values().intern(v))
    }

    /// Reads `:value`; micro-ops go to the buffer.
    fn txn_value(&mut self) -> Result<ValueState, ParseError> {
        let at = self.cur.pos;
        match self.cur.peek() {
            Some(b'[' | b'(') => {}
            _ => {
                let v = self.cur.value(1)?;
                if v == crate::edn::Value::Nil {
                    return Ok(ValueState::Nil);
                }
                return Ok(ValueState::Other(ParseError::new(
                    at,
                    format!(
                        "a client op's :value must be a vector of micro-ops like [[:append k v] [:r k nil]], found {}",
                        v.kind()
                    ),
                )));
            }
        }
        match self.micro_ops() {
            Ok(()) => Ok(ValueState::Txn),
            Err(e) => {
                // Maybe a nemesis value: read it generically; the error only
                // stands if this turns out to be a client op.
                self.raw.clear();
                self.deferred.clear();
                self.cur.pos = at;
                self.cur.value(1)?;
                Ok(ValueState::Other(e))
            }
        }
    }

    /// Steps into the `[` or `(` here: where it opened, and the bracket
    /// that closes it.
    fn open_bracket(&mut self) -> (usize, u8) {
        let open = self.cur.pos;
        let close = if self.cur.peek() == Some(b'[') {
            b']'
        } else {
            b')'
        };
        self.cur.pos += 1;
        (open, close)
    }

    fn micro_ops(&mut self) -> Result<(), ParseError> {
        let (open, close) = self.open_bracket();
        loop {
            self.cur.skip_ws(2)?;
            let at = self.cur.pos;
            match self.cur.peek() {
                Some(c) if c == close => {
                    self.cur.pos += 1;
                    return Ok(());
                }
                None => return Err(self.cur.unterminated(close, open)),
                Some(b'[') if self.micro_op_fast() => {}
                Some(b'[' | b'(') => self.micro_op()?,
                Some(c @ (b')' | b']' | b'}')) => return Err(self.cur.mismatch(c, close, open)),
                Some(_) => {
                    return Err(ParseError::new(
                        at,
                        format!(
                            "expected a micro-op like [:append k v] or [:r k v], found {}",
                            self.cur.found()
                        ),
                    ));
                }
            }
        }
    }

    /// The micro-ops Jepsen writes, `[:append 12 3]`, `[:r 12 nil]`,
    /// `[:r 12 [1 2 3]]` and `[:w 12 3]` with single spaces and short
    /// integers, read straight from the bytes. False, with nothing read,
    /// for anything else: [`Self::micro_op`] then reads it (and finds any
    /// error) the careful way.
    #[inline]
    fn micro_op_fast(&mut self) -> bool {
        let src = self.src;
        let open = self.cur.pos;
        let rest = &src[open..];
        let (kind, at) = if rest.starts_with(b"[:r ") {
            (RawKind::Read, open + 4)
        } else if rest.starts_with(b"[:append ") {
            (RawKind::Append, open + 9)
        } else if rest.starts_with(b"[:w ") {
            (RawKind::Write, open + 4)
        } else {
            return false;
        };
        let Some((key, at)) = short_int(src, at) else {
            return false;
        };
        if src.get(at) != Some(&b' ') {
            return false;
        }
        let at = at + 1;
        let (arg, end) = match src.get(at) {
            Some(b'n') if src[at..].starts_with(b"nil]") => (Arg::Nil, at + 4),
            Some(b'[') if kind == RawKind::Read => {
                match plain_list(src, at + 1).filter(|_| self.defer_lists) {
                    // Read when the transaction is compiled: see
                    // `resolve_lists`.
                    Some((end, spaces)) => {
                        self.deferred.push(Deferred {
                            mop: self.raw.mops.len() as u32,
                            key,
                            at: at + 1,
                            end,
                            spaces,
                        });
                        (Arg::List { start: 0, len: 0 }, end + 2)
                    }
                    None => {
                        let start = self.raw.elems.len();
                        let q = match int_list(src, at + 1, &mut self.raw.elems) {
                            Some(q) => q - 1,
                            None => int_run(src, at + 1, &mut self.raw.elems),
                        };
                        if src.get(q..q + 2) != Some(b"]]") {
                            self.raw.elems.truncate(start);
                            return false;
                        }
                        let arg = Arg::List {
                            start: start as u32,
                            len: (self.raw.elems.len() - start) as u32,
                        };
                        (arg, q + 2)
                    }
                }
            }
            _ => match short_int(src, at) {
                Some((v, q)) if src.get(q) == Some(&b']') => (Arg::Val(v), q + 1),
                _ => return false,
            },
        };
        self.cur.pos = end;
        self.raw.mops.push(RawMop {
            kind,
            key,
            arg,
            offset: open,
        });
        true
    }

    fn micro_op(&mut self) -> Result<(), ParseError> {
        let (open, close) = self.open_bracket();
        self.cur.skip_ws(3)?;
        let f_at = self.cur.pos;
        let kind = match self.cur.peek() {
            Some(b':') => match self.cur.take_token() {
                b":append" => RawKind::Append,
                b":r" => RawKind::Read,
                b":w" => RawKind::Write,
                t => {
                    return Err(ParseError::new(
                        f_at,
                        format!(
                            "unknown micro-op {}: expected :append, :r or :w",
                            String::from_utf8_lossy(t)
                        ),
                    )
                    .with_len(t.len()));
                }
            },
            Some(b'"') => match self.cur.string()?.as_str() {
                "append" => RawKind::Append,
                "r" => RawKind::Read,
                "w" => RawKind::Write,
                s => {
                    return Err(ParseError::new(
                        f_at,
                        format!("unknown micro-op \"{s}\": expected :append, :r or :w"),
                    ));
                }
            },
            _ => {
                return Err(ParseError::new(
                    f_at,
                    format!(
                        "expected a micro-op function (:append, :r or :w), found {}",
                        self.cur.found()
                    ),
                ));
            }
        };
        self.cur.skip_ws(3)?;
        if matches!(self.cur.peek(), Some(b')' | b']' | b'}') | None) {
            return Err(ParseError::new(
                open,
                "a micro-op needs a key and a value: [f k v]",
            ));
        }
        let key = self.scalar()?;
        self.cur.skip_ws(3)?;
        if matches!(self.cur.peek(), Some(b')' | b']' | b'}') | None) {
            return Err(ParseError::new(
                open,
                "a micro-op needs a key and a value: [f k v]",
            ));
        }
        let arg = match (kind, self.cur.peek()) {
            (RawKind::Read, Some(c @ (b'[' | b'('))) => {
                let lopen = self.cur.pos;
                let lclose = if c == b'[' { b']' } else { b')' };
                self.cur.pos += 1;
                let start = self.raw.elems.len() as u32;
                loop {
                    self.cur.pos = int_run(self.src, self.cur.pos, &mut self.raw.elems);
                    self.cur.skip_ws(4)?;
                    match self.cur.peek() {
                        Some(x) if x == lclose => {
                            self.cur.pos += 1;
                            break;
                        }
                        None => return Err(self.cur.unterminated(lclose, lopen)),
                        Some(x @ (b')' | b']' | b'}')) => {
                            return Err(self.cur.mismatch(x, lclose, lopen));
                        }
                        _ => {
                            let v = self.scalar()?;
                            self.raw.elems.push(v);
                        }
                    }
                }
                Arg::List {
                    start,
                    len: self.raw.elems.len() as u32 - start,
                }
            }
            _ => match self.scalar()? {
                Val::NIL => Arg::Nil,
                v => Arg::Val(v),
            },
        };
        self.cur.skip_ws(3)?;
        match self.cur.peek() {
            Some(c) if c == close => self.cur.pos += 1,
            None => return Err(self.cur.unterminated(close, open)),
            _ => {
                return Err(ParseError::new(
                    self.cur.pos,
                    format!(
                        "a micro-op has three elements [f k v]; found {} after the value",
                        self.cur.found()
                    ),
                ));
            }
        }
        self.raw.mops.push(RawMop {
            kind,
            key,
            arg,
            offset: open,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The byte-level fast paths against the generic reader, on text made
    //! of the pieces that trip them up (signs, commas, long numbers,
    //! brackets, the end of the input inside an 8-byte word).

    use super::super::compile::read;
    use super::*;
    use crate::edn::parse::is_ws;
    use crate::edn::{Value, read_all};
    use crate::history::build::BuildOptions;
    use proptest::prelude::*;
    use std::sync::Arc;

    const PIECES: &[&str] = &[
        "0",
        "1",
        "7",
        "12",
        "123",
        "4567",
        "9999999",
        "12345678",
        "123456789",
        "007",
        "-3",
        "+4",
        "1.5",
        "12345678901234567890",
        " ",
        " ",
        " ",
        "  ",
        ",",
        "\n",
        "[",
        "]",
        "nil",
        "x",
        ";c\n",
        "#_1 ",
        "\u{e9}",
        "\u{ff}",
    ];

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(PIECES), 0..24).prop_map(|v| v.concat())
    }

    /// The generic reading of `[text]` as integers, if that is what it is.
    fn ints(text: &[u8]) -> Option<Vec<Val>> {
        let mut src = b"[".to_vec();
        src.extend_from_slice(text);
        src.push(b']');
        match read_all(&src).ok()?.as_slice() {
            [Value::Vector(items)] => items
                .iter()
                .map(|v| match v {
                    Value::Int(i) => Val::int(*i),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    fn reader(source: &Source) -> EdnReader<'_, Builder> {
        EdnReader::new(source.bytes(), Builder::new("t", BuildOptions::default()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn int_list_agrees(body in text(), tail in text()) {
            let src = format!("{body}{tail}");
            let src = src.as_bytes();
            let mut out = vec![Val::NIL];
            match int_list(src, 0, &mut out) {
                Some(end) => {
                    let close = src.iter().position(|&c| c == b']');
                    prop_assert_eq!(Some(end - 1), close);
                    let expected = ints(&src[..end - 1]);
                    prop_assert_eq!(Some(&out[1..]), expected.as_deref());
                }
                None => prop_assert_eq!(out, vec![Val::NIL]),
            }
        }

        #[test]
        fn digits_or_spaces_agrees(
            // Long bodies too: the block loop sums its space counts every
            // 255 blocks (4080 bytes).
            mut body in prop_oneof![
                prop::collection::vec(prop::sample::select(&b"0123456789  "[..]), 0..80),
                prop::collection::vec(prop::sample::select(&b"0123456789  "[..]), 4000..9000),
            ],
            bad in prop::option::of((any::<prop::sample::Index>(), prop::sample::select(&b"]\xfa\xff/:\n"[..]))),
        ) {
            if let Some((i, c)) = bad && !body.is_empty() {
                let i = i.index(body.len());
                body[i] = c;
            }
            let naive = body
                .iter()
                .all(|c| c.is_ascii_digit() || *c == b' ')
                .then(|| body.iter().filter(|&&c| c == b' ').count() as u32);
            prop_assert_eq!(digits_or_spaces(&body), naive);
        }

        #[test]
        fn int_run_agrees(body in text()) {
            let src = body.as_bytes();
            let mut out = Vec::new();
            let q = int_run(src, 0, &mut out);
            prop_assert!(q <= src.len());
            prop_assert!(q == src.len() || !is_ws(src[q]));
            prop_assert_eq!(Some(out), ints(&src[..q]));
        }

        #[test]
        fn skim_micro_ops_agrees(
            mops in prop::collection::vec(
                (
                    prop::sample::select(&["[:r ", "[:append ", "[:w ", "[:x ", "[:r", "[ :r "][..]),
                    prop::sample::select(&["0", "12", "1234567", "12345678", "-3", "k", ""][..]),
                    prop::sample::select(&[" ", "  ", ",", ""][..]),
                    prop::sample::select(&["nil]", "3]", "nil", "[1 2]]", "1234567]", "12345678]", "7 ]", "nil ]"][..]),
                ),
                0..6,
            ),
            seps in prop::collection::vec(prop::sample::select(&[" ", " ", "", ", ", "\n"][..]), 6),
            close in prop::sample::select(&["]", "", ")", " ]"][..]),
        ) {
            let mut text = String::from("[");
            for (i, (f, k, sp, v)) in mops.iter().enumerate() {
                if i > 0 {
                    text.push_str(seps[i]);
                }
                text.push_str(&format!("{f}{k}{sp}{v}"));
            }
            text.push_str(close);
            // What follows a :value in an op map, and room for 8-byte loads.
            text.push_str(", :time 1}        ");
            let source = Source::from_bytes("t", text.into_bytes());
            if let Some(end) = skim_micro_ops(source.bytes(), 0) {
                let mut full = reader(&source);
                prop_assert!(full.micro_ops().is_ok());
                prop_assert_eq!(full.cur.pos, end);
            }
        }

        #[test]
        fn micro_op_fast_agrees(
            f in prop::sample::select(&["[:r ", "[:append ", "[:w ", "[:r", "[:rr ", "(:r "][..]),
            body in text(),
        ) {
            let source = Source::from_bytes("t", format!("{f}{body}").into_bytes());
            let mut fast = reader(&source);
            if fast.micro_op_fast() {
                // Deferred lists are read as when compiling.
                let mut h = Held::default();
                std::mem::swap(&mut h.raw, &mut fast.raw);
                h.deferred = std::mem::take(&mut fast.deferred);
                prop_assert!(fast.resolve_lists(&mut h).is_ok());
                fast.raw = h.raw;
                let mut slow = reader(&source);
                prop_assert!(slow.micro_op().is_ok());
                prop_assert_eq!(fast.cur.pos, slow.cur.pos);
                prop_assert_eq!(&fast.raw.mops, &slow.raw.mops);
                prop_assert_eq!(&fast.raw.elems, &slow.raw.elems);
            } else {
                prop_assert_eq!(fast.cur.pos, 0);
                prop_assert!(fast.raw.mops.is_empty() && fast.raw.elems.is_empty());
            }
        }
    }

    /// A list-append history with prefix, extending, irregular and
    /// repeated reads, read in Jepsen's spelling (list texts matched
    /// against the version orders') and with commas in its lists (every
    /// list parsed): the same history.
    #[test]
    fn list_text_matching_agrees() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut lists: Vec<Vec<u64>> = vec![Vec::new(); 6];
        let mut next = [0u64; 6];
        let mut out = String::new();
        for t in 0..400 {
            let mut mops = Vec::new();
            for _ in 0..1 + rnd(6) {
                let k = rnd(6) as usize;
                if rnd(2) == 0 {
                    next[k] += 1;
                    lists[k].push(next[k]);
                    mops.push(format!("[:append {k} {}]", next[k]));
                } else {
                    let mut l = lists[k].clone();
                    match rnd(12) {
                        // A stale read, a read with a hole, a big number.
                        0 => l.truncate(rnd(l.len() as u64 + 1) as usize),
                        1 if l.len() > 2 => {
                            l.remove(1);
                        }
                        2 => l.push(123_456_789),
                        _ => {}
                    }
                    let body: Vec<String> = l.iter().map(u64::to_string).collect();
                    mops.push(format!("[:r {k} [{}]]", body.join(" ")));
                }
            }
            let typ = if rnd(10) == 0 { "info" } else { "ok" };
            out.push_str(&format!(
                "{{:type :{typ}, :f :txn, :value [{}], :process {}, :index {t}}}\n",
                mops.join(" "),
                t % 5
            ));
        }
        let commas = out
            .lines()
            .map(|l| {
                let mut s = String::new();
                let mut depth = 0;
                for c in l.chars() {
                    match c {
                        '[' => depth += 1,
                        ']' => depth -= 1,
                        ' ' if depth == 3 => {
                            s.push_str(", ");
                            continue;
                        }
                        _ => {}
                    }
                    s.push(c);
                }
                s + "\n"
            })
            .collect::<String>();
        assert_ne!(out, commas);
        let load = |text: &str| {
            let src = Arc::new(Source::from_bytes("t", text.as_bytes().to_vec()));
            read(&src, BuildOptions::default(), None).expect("reads")
        };
        let (a, aa) = load(&out);
        let (b, ba) = load(&commas);
        assert!(a.mops.iter().any(|m| m.has(flag::IRREGULAR)));
        assert_eq!(a.mops, b.mops);
        assert_eq!(a.orders, b.orders);
        assert_eq!(a.irregular, b.irregular);
        assert_eq!(aa, ba);
    }

    #[test]
    fn digits_or_spaces_counts_long_runs_of_spaces() {
        // Every byte lane of the block loop sees a space in every block.
        for n in [4079, 4080, 4081, 9000] {
            assert_eq!(digits_or_spaces(&vec![b' '; n]), Some(n as u32));
        }
        let mut s = b"7 ".repeat(5000);
        assert_eq!(digits_or_spaces(&s), Some(5000));
        s[9000] = b'x';
        assert_eq!(digits_or_spaces(&s), None);
    }

    #[test]
    fn swar_digits() {
        for s in [
            "0 ", "9]", "12 ", "1234567]", "12345678", "1x", "x", "\u{ff}1",
        ] {
            let mut b = [b' '; 8];
            b[..s.len()].copy_from_slice(s.as_bytes());
            let w = u64::from_le_bytes(b);
            let len = s.bytes().take_while(u8::is_ascii_digit).count();
            assert_eq!(digit_len(w), len, "{s}");
            if len > 0 {
                assert_eq!(swar_value(w, len), s[..len].parse::<u64>().unwrap(), "{s}");
            }
        }
    }
}
