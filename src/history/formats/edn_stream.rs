//! Reads a Jepsen EDN history op by op, pairs invocations with completions,
//! and hands each transaction on without building the model: what
//! `convert` uses for EDN to text, where memory must stay flat for
//! multi-gigabyte inputs. It accepts what `history::jepsen` accepts (one op
//! map per line, or a whole-file vector or list of op maps, with or without
//! `#jepsen.history.Op` tags) and pairs the same way.

use crate::edn::Cursor;
use crate::edn::parse::{atom_value, is_delim, parse_i64};
use crate::error::ParseError;
use crate::history::build::{Arg, RawKind, RawMop, RawTxn, TxnMeta};
use crate::history::formats::pairing::{Op, Pairer};
use crate::history::jepsen::OpType;
use crate::history::model::*;

/// What a stream held, besides its transactions.
#[derive(Clone, Debug, Default)]
pub struct StreamStats {
    pub ops: u64,
    pub skipped_ops: u64,
    pub dangling: u64,
    pub completions_only: bool,
}

/// Streams the transactions of an EDN history to `emit`, with the value
/// table that interns keys and values that are not small integers.
pub fn for_each_txn(
    src: &[u8],
    values: &mut Values,
    mut emit: impl FnMut(TxnMeta, &RawTxn, &mut Values) -> Result<(), ParseError>,
) -> Result<StreamStats, ParseError> {
    let mut r = Reader {
        src,
        cur: Cursor::new(src),
        raw: RawTxn::default(),
        line_at: (0, 1),
        values,
        f_cache: None,
    };
    let mut pairer = Pairer::default();
    let mut stats = StreamStats::default();
    r.cur.skip_ws(0)?;
    let wrapped = match r.cur.peek() {
        Some(c @ (b'[' | b'(')) => {
            let open = r.cur.pos;
            r.cur.pos += 1;
            Some((if c == b'[' { b']' } else { b')' }, open))
        }
        _ => None,
    };
    loop {
        r.cur.skip_ws(1)?;
        match (wrapped, r.cur.peek()) {
            (Some((close, _)), Some(c)) if c == close => {
                r.cur.pos += 1;
                r.cur.skip_ws(0)?;
                if !r.cur.at_end() {
                    return Err(ParseError::new(
                        r.cur.pos,
                        format!(
                            "unexpected {} after the history's closing `{}`",
                            r.cur.found(),
                            close as char
                        ),
                    ));
                }
                break;
            }
            (Some((close, open)), None) => return Err(r.cur.unterminated(close, open)),
            (None, None) => break,
            _ => {}
        }
        r.raw.clear();
        let op = r.read_op()?;
        stats.ops += 1;
        let Some(process) = op.process else {
            stats.skipped_ops += 1;
            continue;
        };
        let Some(typ) = op.typ else {
            return Err(ParseError::new(op.start, "client op has no :type")
                .with_help("every op needs :type :invoke, :ok, :fail or :info"));
        };
        if let Some(e) = op.bad_value {
            return Err(e);
        }
        let line = r.line_of(op.start);
        let pos = OpPos {
            index: op.index.unwrap_or(-1),
            time: op.time.unwrap_or(-1),
            line,
            offset: op.start as u64,
        };
        let o = Op {
            typ,
            process,
            pos,
            start: op.start,
            f: op.f,
            has_value: op.has_value,
        };
        let (raw, vals) = (&r.raw, &mut *r.values);
        pairer.op(o, raw, &mut |m, raw| emit(m, raw, vals))?;
    }
    let vals = &mut *r.values;
    pairer.finish(&mut |m, raw| emit(m, raw, vals))?;
    stats.dangling = pairer.dangling;
    stats.completions_only = pairer.completions_only();
    Ok(stats)
}

struct OpFields {
    start: usize,
    index: Option<i64>,
    time: Option<i64>,
    typ: Option<OpType>,
    /// None for a non-integer (nemesis) or missing process.
    process: Option<i64>,
    f: Val,
    has_value: bool,
    /// `:value` was not micro-ops: the error, if this is a client op.
    bad_value: Option<ParseError>,
}

struct Reader<'a, 'v> {
    src: &'a [u8],
    cur: Cursor<'a>,
    raw: RawTxn,
    line_at: (usize, u32),
    values: &'v mut Values,
    f_cache: Option<(&'a [u8], Val)>,
}

impl<'a> Reader<'a, '_> {
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

    fn read_op(&mut self) -> Result<OpFields, ParseError> {
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
                ));
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
            process: None,
            f: Val::NIL,
            has_value: false,
            bad_value: None,
        };
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
                Some(_) => {
                    let kw: &[u8] = if self.cur.peek() == Some(b':') {
                        self.cur.take_token()
                    } else {
                        self.cur.value(1)?;
                        b""
                    };
                    self.cur.skip_ws(1)?;
                    if matches!(self.cur.peek(), Some(b'}') | None) {
                        return Err(ParseError::new(key_at, "map key has no value"));
                    }
                    match kw {
                        b":index" => op.index = self.int()?,
                        b":time" => op.time = self.int()?,
                        b":type" => op.typ = Some(self.op_type()?),
                        b":process" => op.process = self.int()?,
                        b":f" => op.f = self.f_value()?,
                        b":value" => self.txn_value(&mut op)?,
                        _ => {
                            self.cur.value(1)?;
                        }
                    }
                }
            }
        }
    }

    /// An integer, or None for anything else (read and skipped).
    #[inline]
    fn int(&mut self) -> Result<Option<i64>, ParseError> {
        if self
            .cur
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || c == b'-')
        {
            let save = self.cur.pos;
            if let Some(i) = parse_i64(self.cur.take_token()) {
                return Ok(Some(i));
            }
            self.cur.pos = save;
        }
        Ok(self.cur.value(1)?.as_int())
    }

    fn f_value(&mut self) -> Result<Val, ParseError> {
        let start = self.cur.pos;
        if self.cur.peek() == Some(b':') {
            let t = self.cur.take_token();
            if let Some((bytes, v)) = self.f_cache
                && bytes == t
            {
                return Ok(v);
            }
            self.cur.pos = start;
        }
        let v = self.cur.value(1)?;
        let v = self.values.intern(v);
        self.f_cache = Some((&self.src[start..self.cur.pos], v));
        Ok(v)
    }

    fn op_type(&mut self) -> Result<OpType, ParseError> {
        let at = self.cur.pos;
        if self.cur.peek() == Some(b':') {
            match self.cur.take_token() {
                b":invoke" => return Ok(OpType::Invoke),
                b":ok" => return Ok(OpType::Ok),
                b":fail" => return Ok(OpType::Fail),
                b":info" => return Ok(OpType::Info),
                _ => self.cur.pos = at,
            }
        }
        let v = self.cur.value(1)?;
        if let crate::edn::Value::Keyword(k) = &v {
            match k.as_str() {
                "invoke" => return Ok(OpType::Invoke),
                "ok" => return Ok(OpType::Ok),
                "fail" => return Ok(OpType::Fail),
                "info" => return Ok(OpType::Info),
                _ => {}
            }
        }
        Err(ParseError::new(
            at,
            format!("unknown :type {v}: expected :invoke, :ok, :fail or :info"),
        ))
    }

    #[inline]
    fn scalar(&mut self) -> Result<Val, ParseError> {
        let at = self.cur.pos;
        let c = self.cur.peek();
        if c.is_some_and(|c| c.is_ascii_digit() || c == b'-') {
            let t = self.cur.take_token();
            if let Some(v) = parse_i64(t).and_then(Val::int) {
                return Ok(v);
            }
            let v = atom_value(t, at)?;
            return Ok(self.values.intern(v));
        }
        if self.src[at..].starts_with(b"nil") && self.src.get(at + 3).is_none_or(|&c| is_delim(c)) {
            self.cur.pos += 3;
            return Ok(Val::NIL);
        }
        let v = self.cur.value(3)?;
        Ok(self.values.intern(v))
    }

    fn txn_value(&mut self, op: &mut OpFields) -> Result<(), ParseError> {
        let at = self.cur.pos;
        if !matches!(self.cur.peek(), Some(b'[' | b'(')) {
            let v = self.cur.value(1)?;
            if v != crate::edn::Value::Nil {
                op.bad_value = Some(ParseError::new(
                    at,
                    format!(
                        "a client op's :value must be a vector of micro-ops like [[:append k v] [:r k nil]], found {}",
                        v.kind()
                    ),
                ));
            }
            return Ok(());
        }
        match self.micro_ops() {
            Ok(()) => op.has_value = true,
            Err(e) => {
                self.raw.clear();
                self.cur.pos = at;
                self.cur.value(1)?;
                op.bad_value = Some(e);
            }
        }
        Ok(())
    }

    fn micro_ops(&mut self) -> Result<(), ParseError> {
        let open = self.cur.pos;
        let close = if self.cur.peek() == Some(b'[') {
            b']'
        } else {
            b')'
        };
        self.cur.pos += 1;
        loop {
            self.cur.skip_ws(2)?;
            match self.cur.peek() {
                Some(c) if c == close => {
                    self.cur.pos += 1;
                    return Ok(());
                }
                None => return Err(self.cur.unterminated(close, open)),
                Some(b'[' | b'(') => self.micro_op()?,
                Some(_) => {
                    return Err(ParseError::new(
                        self.cur.pos,
                        format!(
                            "expected a micro-op like [:append k v] or [:r k v], found {}",
                            self.cur.found()
                        ),
                    ));
                }
            }
        }
    }

    fn micro_op(&mut self) -> Result<(), ParseError> {
        let open = self.cur.pos;
        let close = if self.cur.peek() == Some(b'[') {
            b']'
        } else {
            b')'
        };
        self.cur.pos += 1;
        self.cur.skip_ws(3)?;
        let f_at = self.cur.pos;
        let kind = match self.cur.peek() {
            Some(b':') => match self.cur.take_token() {
                b":append" => Some(RawKind::Append),
                b":r" => Some(RawKind::Read),
                b":w" => Some(RawKind::Write),
                _ => None,
            },
            Some(b'"') => match self.cur.string()?.as_str() {
                "append" => Some(RawKind::Append),
                "r" => Some(RawKind::Read),
                "w" => Some(RawKind::Write),
                _ => None,
            },
            _ => None,
        };
        let Some(kind) = kind else {
            return Err(ParseError::new(
                f_at,
                "expected a micro-op function: :append, :r or :w",
            ));
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
