//! The JNI bridge (feature `jni`): the native methods of the Java class
//! `elle_si.Native`, through which the Clojure library in `clj/` checks
//! Jepsen histories inside the JVM that ran the test.
//!
//! A history crosses the boundary either as the path of a history file (an
//! archived `history.edn`, read as the CLI reads it) or in the compact binary
//! encoding below, which `elle_si.HistoryEncoder` (Java) writes from the op
//! maps and this module decodes straight into the [`Builder`], pairing
//! invocations with completions exactly as the EDN reader does
//! ([`crate::history::jepsen`]). The result comes back as the text of Elle's
//! result map in EDN. Nothing here is global: calls run in parallel (Jepsen's
//! `checker/compose` runs its checkers under `pmap`).
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
//! A history may also arrive in chunks (`streamOpen`, `streamFeed`,
//! `streamFinish`): the concatenation of the chunks' value bytes is the
//! value table and of their op bytes the ops above, each chunk cut after a
//! whole record and a whole value entry. A thread of ours decodes and
//! compiles each chunk as it comes, so the JVM's encoding and our decoding
//! overlap; it never touches the JVM.
//!
//! An op without `:index` gets its position in the history (counting every
//! element), as `jepsen.history/history` numbers ops. Errors name the op by
//! its position, `history[12]`, since there is no file line to point at.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ::jni::errors::{Error as JniError, ErrorPolicy};
use ::jni::objects::{JByteArray, JClass, JString};
use ::jni::strings::JNIString;
use ::jni::sys::{jint, jlong};
use ::jni::{Env, EnvUnowned, jni_str};
use rustc_hash::FxHashMap;

use crate::check::{self, CheckOptions};
use crate::edn::{self, Value};
use crate::error::{self, Error, ParseError, Remedy};
use crate::history::build::{Arg, BuildOptions, Builder, RawKind, RawMop, RawTxn, TxnMeta};
use crate::history::jepsen::OpType;
use crate::history::model::*;
use crate::history::{self, Format, LoadOptions, Loaded};
use crate::report::{folder, render};
use crate::source::Source;

/// The encoding's version; `elle_si.HistoryEncoder` writes the same.
pub const WIRE_VERSION: u8 = 2;
const MAGIC: &[u8; 4] = b"ELSI";
const REC_OP: u8 = 0x01;
const REC_SKIP: u8 = 0x02;
const REC_TRAILER: u8 = 0x03;

// ---------------------------------------------------------------------------
// Options

/// What the Clojure side asks for, as an EDN map:
/// `{:models ["serializable"] :anomalies ["G1"] :timeout-ms 1000
///   :workload "list-append" :name "history" :timings true}`.
#[derive(Debug, Default)]
pub struct BridgeOptions {
    pub models: Vec<String>,
    pub anomalies: Vec<String>,
    pub timeout: Option<Duration>,
    pub workload: Option<Workload>,
    pub name: Option<String>,
    /// Add `:elle-si/timings` (decode, check, render, in ns) to the result.
    pub timings: bool,
    /// Render each op in the anomalies as `#elle-si/op <index>`: the JVM
    /// holds the history and puts its own op there, and a result with many
    /// anomalies does not repeat whole ops (reading them back was most of
    /// the time of a check with 100k anomalies).
    pub op_refs: bool,
    /// Elle's `:directory`: write the elle/ folder there (see
    /// [`crate::report::folder`]), with Elle's plot options
    /// (`:plot-format`, `:max-plot-bytes`, `:plot-timeout-ms`).
    pub directory: Option<String>,
    pub plot: folder::PlotOptions,
}

fn names(v: &Value, what: &str) -> Result<Vec<String>, String> {
    match v {
        Value::Nil => Ok(Vec::new()),
        Value::Vector(xs) | Value::List(xs) | Value::Set(xs) => xs
            .iter()
            .map(|x| match x {
                Value::String(s) | Value::Keyword(s) | Value::Symbol(s) => Ok(s.clone()),
                other => Err(format!("{what} must be names, found {other}")),
            })
            .collect(),
        other => Err(format!(
            "{what} must be a collection of names, found {other}"
        )),
    }
}

impl BridgeOptions {
    pub fn parse(text: &str) -> Result<BridgeOptions, String> {
        let mut o = BridgeOptions::default();
        if text.trim().is_empty() {
            return Ok(o);
        }
        let v = edn::read_one(text.as_bytes())
            .map_err(|e| format!("bad options {text:?}: {}", e.message))?;
        let Value::Map(entries) = v else {
            return Err(format!("options must be an EDN map, found {text}"));
        };
        for (k, v) in &entries {
            let Value::Keyword(k) = k else {
                return Err(format!("option keys must be keywords, found {k}"));
            };
            match k.as_str() {
                "models" => o.models = names(v, ":models")?,
                "anomalies" => o.anomalies = names(v, ":anomalies")?,
                "timeout-ms" => match v {
                    Value::Nil => {}
                    Value::Int(ms) if *ms >= 0 => {
                        o.timeout = Some(Duration::from_millis(*ms as u64))
                    }
                    other => {
                        return Err(format!(
                            ":timeout-ms must be a non-negative integer, found {other}"
                        ));
                    }
                },
                "workload" => {
                    o.workload = match v {
                        Value::Nil => None,
                        Value::String(s) | Value::Keyword(s) => match s.as_str() {
                            "list-append" => Some(Workload::ListAppend),
                            "rw-register" => Some(Workload::RwRegister),
                            other => {
                                return Err(format!(
                                    "unknown workload {other}: expected list-append or rw-register"
                                ));
                            }
                        },
                        other => return Err(format!(":workload must be a name, found {other}")),
                    }
                }
                "name" => match v {
                    Value::String(s) => o.name = Some(s.clone()),
                    Value::Nil => {}
                    other => return Err(format!(":name must be a string, found {other}")),
                },
                "timings" => o.timings = matches!(v, Value::Bool(true)),
                "op-refs" => o.op_refs = matches!(v, Value::Bool(true)),
                "directory" => match v {
                    Value::String(s) => o.directory = Some(s.clone()),
                    Value::Nil => {}
                    other => return Err(format!(":directory must be a string, found {other}")),
                },
                "plot-format" => match v {
                    Value::String(s) | Value::Keyword(s) => {
                        o.plot.format = folder::PlotFormat::parse(s)?
                    }
                    Value::Nil => {}
                    other => return Err(format!(":plot-format must be a name, found {other}")),
                },
                "max-plot-bytes" => match v {
                    Value::Int(n) if *n >= 0 => o.plot.max_plot_bytes = *n as usize,
                    Value::Nil => {}
                    other => {
                        return Err(format!(
                            ":max-plot-bytes must be a non-negative integer, found {other}"
                        ));
                    }
                },
                "plot-timeout-ms" => match v {
                    Value::Int(ms) if *ms >= 0 => {
                        o.plot.plot_timeout = Duration::from_millis(*ms as u64)
                    }
                    Value::Nil => {}
                    other => {
                        return Err(format!(
                            ":plot-timeout must be a non-negative integer, found {other}"
                        ));
                    }
                },
                other => return Err(format!("unknown option :{other}")),
            }
        }
        Ok(o)
    }

    /// Parses the model names and Elle's `:anomalies` into a typed request,
    /// refused (by name) where it cannot be honoured, as the CLI refuses it.
    ///
    /// An empty model list is Elle's `:consistency-models nil`: only the
    /// anomalies (and the ones implying them) are prohibited, looked for by
    /// whichever checkers can find them ([`check::plan`]).
    fn check_options(&self) -> Result<CheckOptions, String> {
        let o = CheckOptions {
            models: check::resolve_models(&self.models).map_err(|e| e.to_string())?,
            timeout: self.timeout,
            anomalies: check::resolve_anomalies(&self.anomalies).map_err(|e| e.to_string())?,
        };
        check::plan(&o).map_err(|e| e.to_string())?;
        Ok(o)
    }
}

// ---------------------------------------------------------------------------
// Decoding

/// A cursor over one of the two byte arrays.
struct Bytes<'a> {
    b: &'a [u8],
    pos: usize,
}

/// Where a buffer stopped making sense. Small, so that the hot decoding
/// paths return it cheaply; it becomes a [`ParseError`] on the way out.
#[derive(Debug)]
enum Malformed {
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
    fn u8(&mut self) -> Result<u8, Malformed> {
        let c = *self.b.get(self.pos).ok_or(Malformed::Truncated(self.pos))?;
        self.pos += 1;
        Ok(c)
    }

    #[inline]
    fn uv(&mut self) -> Result<u64, Malformed> {
        // Most varints here are one byte: small integers, counts, codes.
        match self.b.get(self.pos) {
            Some(&c) if c < 0x80 => {
                self.pos += 1;
                Ok(u64::from(c))
            }
            _ => self.uv_long(),
        }
    }

    fn uv_long(&mut self) -> Result<u64, Malformed> {
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
    fn sv(&mut self) -> Result<i64, Malformed> {
        let z = self.uv()?;
        Ok(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    /// A length or count, of at most the bytes left (each element takes
    /// at least one).
    fn len(&mut self) -> Result<usize, Malformed> {
        let n = self.uv()?;
        if n > (self.b.len() - self.pos.min(self.b.len())) as u64 {
            return Err(Malformed::Truncated(self.pos));
        }
        Ok(n as usize)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
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
enum ValueState {
    Absent,
    Nil,
    /// Micro-ops, now in the RawTxn buffer.
    Txn,
    /// Not micro-ops; the error to give if the value is needed.
    Other(String),
}

struct OpHead {
    start: usize,
    typ: OpType,
    process: i64,
    index: Option<i64>,
    time: Option<i64>,
    f: Val,
    value: ValueState,
}

struct Pending {
    pos: OpPos,
    start: usize,
    f: Val,
}

/// What a decoding keeps between the chunks of a streamed history.
struct State {
    /// Wire value id -> interned value.
    ids: Vec<Val>,
    builder: Builder,
    raw: RawTxn,
    /// The offset of every record, by position in the history.
    starts: Vec<u32>,
    /// Time spent in the [`Builder`] (compiling, which the CLI does too
    /// after parsing), measured only when `timed`: the rest is decoding.
    compile: Duration,
    timed: bool,
    /// Outstanding invocations, by process.
    pending: FxHashMap<i64, Pending>,
    /// Decided by the first client op: whether invocations and completions
    /// are paired, and that op's offset.
    paired: Option<(bool, usize)>,
}

impl State {
    fn new(opts: BuildOptions, name: String) -> State {
        State {
            ids: vec![Val::NIL],
            builder: Builder::new(name, opts),
            raw: RawTxn::default(),
            starts: Vec::new(),
            compile: Duration::ZERO,
            timed: false,
            pending: FxHashMap::default(),
            paired: None,
        }
    }

    /// Interns the value-table entries in `values` (whole entries, the ones
    /// after those already read).
    fn add_values(&mut self, values: &[u8]) -> Result<(), String> {
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
fn check_header(ops: &[u8]) -> Result<(), String> {
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
struct Decoder<'a> {
    ops: Bytes<'a>,
    s: &'a mut State,
}

fn op_type(bits: u8) -> OpType {
    match bits & 3 {
        0 => OpType::Invoke,
        1 => OpType::Ok,
        2 => OpType::Fail,
        _ => OpType::Info,
    }
}

fn status(t: OpType) -> Status {
    match t {
        OpType::Ok => Status::Committed,
        OpType::Fail => Status::Aborted,
        _ => Status::Indeterminate,
    }
}

fn keyword(t: OpType) -> &'static str {
    match t {
        OpType::Invoke => "invoke",
        OpType::Ok => "ok",
        OpType::Fail => "fail",
        OpType::Info => "info",
    }
}

/// Writes `x` as the encoding's `uv` (LEB128), for encoders written in
/// Rust: the tests' and the semantic mutants' (`tests/mutant_support`).
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
fn reference(r: u64, at: usize, ids: &[Val]) -> Result<Val, Malformed> {
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
    fn push(&mut self, meta: TxnMeta) -> Result<(), ParseError> {
        if !self.s.timed {
            return self.s.builder.push_txn(meta, &self.s.raw).map(|_| ());
        }
        let t0 = Instant::now();
        let r = self.s.builder.push_txn(meta, &self.s.raw).map(|_| ());
        self.s.compile += t0.elapsed();
        r
    }

    #[inline]
    fn val(&mut self) -> Result<Val, Malformed> {
        let at = self.ops.pos;
        let r = self.ops.uv()?;
        reference(r, at, &self.s.ids)
    }

    /// Reads `len` references into the buffer's elements: the bulk of a
    /// list-append history, hence the loop over a local cursor.
    fn list(&mut self, len: usize) -> Result<(), Malformed> {
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
    fn read_op(&mut self, start: usize) -> Result<OpHead, Malformed> {
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
    fn value(&mut self, state: u8) -> Result<ValueState, Malformed> {
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

    fn micro_ops(&mut self) -> Result<(), Malformed> {
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

    fn client_value(start: usize, value: &ValueState) -> Result<(), ParseError> {
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
    fn reread_value(&mut self, start: usize) -> Result<(), ParseError> {
        let save = self.ops.pos;
        self.ops.pos = start + 1;
        self.s.raw.clear();
        let op = self.read_op(start)?;
        self.ops.pos = save;
        Self::client_value(op.start, &op.value)
    }

    /// Reads the trailer records: the offset of each one's value, by
    /// process.
    fn trailer(&mut self) -> Result<FxHashMap<i64, usize>, ParseError> {
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
    fn trailer_value(&mut self, at: usize, start: usize) -> Result<(), ParseError> {
        let save = self.ops.pos;
        self.ops.pos = at;
        self.s.raw.clear();
        let state = self.ops.u8()?;
        let value = self.value(state)?;
        self.ops.pos = save;
        Self::client_value(start, &value)
    }

    /// The pairing loop of [`crate::history::jepsen`], over records.
    /// Stops before the trailer, or at the end of the ops received so far
    /// (which end with a whole record).
    fn run(&mut self) -> Result<(), ParseError> {
        let mut pending = std::mem::take(&mut self.s.pending);
        let mut paired = self.s.paired;
        let r = self.records(&mut pending, &mut paired);
        self.s.pending = pending;
        self.s.paired = paired;
        r
    }

    fn records(
        &mut self,
        pending: &mut FxHashMap<i64, Pending>,
        paired: &mut Option<(bool, usize)>,
    ) -> Result<(), ParseError> {
        while self.ops.pos < self.ops.b.len() {
            let start = self.ops.pos;
            if self.ops.b[start] == REC_TRAILER {
                break;
            }
            let ordinal = self.s.starts.len() as i64;
            self.s.starts.push(start as u32);
            self.s.builder.stats().ops += 1;
            match self.ops.u8()? {
                REC_SKIP => {
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
            let process = op.process;
            let typ = op.typ;
            let pos = OpPos {
                index: op.index.unwrap_or(ordinal),
                time: op.time.unwrap_or(-1),
                line: 0,
                offset: start as u64,
            };
            let is_paired = match *paired {
                Some((p, _)) => p,
                None => {
                    *paired = Some((typ == OpType::Invoke, start));
                    typ == OpType::Invoke
                }
            };
            if !is_paired {
                if typ == OpType::Invoke {
                    let first = paired.map_or(0, |p| p.1);
                    return Err(ParseError::new(
                        start,
                        "an :invoke in a history that began with a completion",
                    )
                    .with_related(first, 1, "first client op, a completion")
                    .with_help(
                        "a history either pairs every completion with an invocation, or holds completions only",
                    ));
                }
                Self::client_value(op.start, &op.value)?;
                let meta = TxnMeta {
                    status: status(typ),
                    process,
                    invoke: None,
                    complete: pos,
                    f: op.f,
                };
                self.push(meta)?;
                continue;
            }
            if typ == OpType::Invoke {
                if let Some(prev) = pending.get(&process) {
                    let prev_at = self.position(prev.start);
                    return Err(ParseError::new(
                        start,
                        format!(
                            "process {process} invokes again while its invocation at history[{prev_at}] has not completed"
                        ),
                    )
                    .with_related(prev.start, 1, "the outstanding invocation"));
                }
                Self::client_value(op.start, &op.value)?;
                pending.insert(
                    process,
                    Pending {
                        pos,
                        start,
                        f: op.f,
                    },
                );
                continue;
            }
            let Some(inv) = pending.remove(&process) else {
                return Err(ParseError::new(
                    start,
                    format!(
                        "a :{} completion for process {process}, which has no outstanding invocation",
                        keyword(typ)
                    ),
                )
                .with_help("each completion must follow an :invoke by the same process"));
            };
            let st = status(typ);
            match (&op.value, st) {
                (ValueState::Absent | ValueState::Nil, Status::Aborted | Status::Indeterminate) => {
                    // Jepsen copies the invocation's value; when it does not,
                    // the invocation says what was attempted.
                    self.reread_value(inv.start)?;
                }
                _ => Self::client_value(op.start, &op.value)?,
            }
            let meta = TxnMeta {
                status: st,
                process,
                invoke: Some(inv.pos),
                complete: pos,
                f: if op.f == Val::NIL { inv.f } else { op.f },
            };
            self.push(meta)?;
        }
        Ok(())
    }

    /// After the last chunk: the trailer, and the invocations that never
    /// completed.
    fn end(&mut self) -> Result<(), ParseError> {
        let trailer = self.trailer()?;
        // Invocations that never completed may or may not have happened.
        let mut dangling: Vec<(i64, Pending)> =
            std::mem::take(&mut self.s.pending).into_iter().collect();
        dangling.sort_by_key(|(_, p)| p.start);
        for (process, inv) in dangling {
            match trailer.get(&process) {
                Some(&at) => self.trailer_value(at, inv.start)?,
                None => self.reread_value(inv.start)?,
            }
            let meta = TxnMeta {
                status: Status::Indeterminate,
                process,
                invoke: Some(inv.pos),
                complete: inv.pos,
                f: inv.f,
            };
            self.push(meta)?;
            self.s.builder.stats().dangling_invokes += 1;
        }
        self.s.builder.stats().completions_only = self.s.paired.is_some_and(|p| !p.0);
        Ok(())
    }

    /// The position in the history of the record holding byte `offset`.
    fn position(&self, offset: usize) -> usize {
        self.s
            .starts
            .partition_point(|&s| s as usize <= offset)
            .saturating_sub(1)
    }

    /// `history[12] (:index 24, :process 3)` for the record holding `offset`.
    fn describe(&self, offset: usize) -> String {
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
    fn explain(&self, name: &str, e: ParseError) -> String {
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

/// Decodes an encoded history and compiles it, as [`history::load`] does a
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
struct Decoding {
    name: String,
    /// Every op received so far: errors and `:fail` completions without a
    /// value look back at earlier records.
    buf: Vec<u8>,
    pos: usize,
    state: State,
}

/// A decoded and compiled history.
struct Decoded {
    loaded: Loaded,
    /// Time in the [`Builder`], when timed.
    compile: Duration,
    /// Of which in [`Builder::finish`], after the last chunk.
    finish: Duration,
}

impl Decoding {
    fn new(opts: &BridgeOptions, timed: bool) -> Decoding {
        let name = opts.name.clone().unwrap_or_else(|| "history".to_string());
        let bopts = BuildOptions {
            workload: opts.workload,
            zero_is_initial: false,
        };
        let mut state = State::new(bopts, name.clone());
        state.timed = timed;
        Decoding {
            name,
            buf: Vec::new(),
            pos: 0,
            state,
        }
    }

    fn values(&mut self, chunk: &[u8]) -> Result<(), String> {
        self.state.add_values(chunk)
    }

    /// Decodes the records of `chunk`.
    fn ops(&mut self, chunk: &[u8]) -> Result<(), String> {
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
    fn step(
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
    fn finish(mut self) -> Result<Decoded, String> {
        if self.buf.is_empty() {
            check_header(&self.buf)?;
        }
        self.step(|d| d.end())?;
        let t0 = Instant::now();
        let (history, anomalies) = self.state.builder.finish();
        let finish = t0.elapsed();
        let loaded = Loaded {
            history,
            anomalies,
            source: Arc::new(Source::from_bytes(self.name, Vec::new())),
            format: Format::Edn,
            notes: Default::default(),
        };
        Ok(Decoded {
            loaded,
            compile: self.state.compile + finish,
            finish,
        })
    }
}

/// An input error as one message: where, what, and the help line.
fn error_text(e: &Error) -> String {
    match e {
        Error::Input(ie) => {
            match error::advice(ie.help.as_deref(), ie.remedy.map(clojure_remedy)) {
                Some(h) => format!("{ie}\n  help: {h}"),
                None => ie.to_string(),
            }
        }
        other => other.to_string(),
    }
}

/// A [`Remedy`] in the Clojure library's terms (the CLI's are its flags).
fn clojure_remedy(r: Remedy) -> String {
    match r {
        Remedy::UnfixWorkload(w) => format!(
            "elle-si.{w}/check and /check-file (or :workload :{w}) check a {w} history; \
             elle-si.core/check and /check-file without :workload detect the workload"
        ),
        Remedy::DirectoryFormat => "check-file takes a history file, or a directory holding a \
             Jepsen run's history.edn, or Cobra's logs alone, or Viper's alone"
            .into(),
        Remedy::NameFormat => "check-file reads Jepsen EDN, elle-cli JSON, the r(k,v,s,t) text \
             format, dbcop, Cobra and Viper histories, told apart by their content"
            .into(),
        Remedy::DbcopDuplicates => "check-file refuses such a history, as dbcop does; the elle-si \
             command line reads it (elle-si check --dbcop-duplicates)"
            .into(),
    }
}

/// The `:index` of an op map as [`render::op_value`] writes it.
fn op_index(entries: &[(Value, Value)]) -> Option<i64> {
    let mut index = None;
    let mut is_op = false;
    for (k, v) in entries {
        match (k, v) {
            (Value::Keyword(k), Value::Int(i)) if k == "index" => index = Some(*i),
            (Value::Keyword(k), Value::Keyword(t)) if k == "type" => {
                is_op = matches!(t.as_str(), "invoke" | "ok" | "fail" | "info")
            }
            _ => {}
        }
    }
    if is_op { index } else { None }
}

/// Replaces every op map in a rendered result by `#elle-si/op <index>`.
fn op_refs(v: &mut Value) {
    match v {
        Value::Map(entries) => {
            if let Some(i) = op_index(entries) {
                *v = Value::Tagged("elle-si/op".into(), Box::new(Value::Int(i)));
                return;
            }
            for (_, x) in entries.iter_mut() {
                op_refs(x);
            }
        }
        Value::Vector(xs) | Value::List(xs) | Value::Set(xs) => xs.iter_mut().for_each(op_refs),
        _ => {}
    }
}

/// Checks a compiled history and renders Elle's result map as EDN.
fn check_loaded(
    loaded: &Loaded,
    copts: &CheckOptions,
    opts: &BridgeOptions,
    times: &[(&str, Duration)],
) -> Result<String, String> {
    let t0 = Instant::now();
    let result = check::entry::check_loaded(loaded, None, copts).unwrap_or_else(|e| {
        let mut r = check::check(loaded, copts);
        r.notes.push(e.to_string());
        r
    });
    let check_time = t0.elapsed();
    if let Some(dir) = &opts.directory {
        folder::write_folder(
            Path::new(dir),
            opts.name.as_deref().unwrap_or(loaded.source.name()),
            &loaded.history,
            &result,
            &copts.models,
            &opts.plot,
        )
        .map_err(|e| error_text(&e))?;
    }
    let t1 = Instant::now();
    let mut value = render::result_value(&loaded.history, &result);
    if opts.op_refs {
        op_refs(&mut value);
    }
    if opts.timings {
        let render_time = t1.elapsed();
        let kw = |s: &str| Value::Keyword(s.to_string());
        let ns = |d: Duration| Value::Int(d.as_nanos().min(i64::MAX as u128) as i64);
        let s = &loaded.history.stats;
        let mut t: Vec<(Value, Value)> = times.iter().map(|&(k, d)| (kw(k), ns(d))).collect();
        if let Value::Map(m) = &mut value {
            t.extend([
                (kw("check-ns"), ns(check_time)),
                (kw("render-ns"), ns(render_time)),
                (kw("ops"), Value::Int(s.ops as i64)),
                (kw("client-ops"), Value::Int(s.client_ops as i64)),
                (kw("txns"), Value::Int(loaded.history.txns.len() as i64)),
            ]);
            m.push((kw("elle-si/timings"), Value::Map(t)));
        }
    }
    Ok(value.to_string())
}

/// Checks an encoded history; the result is Elle's result map in EDN.
pub fn check_encoded(values: &[u8], ops: &[u8], options: &str) -> Result<String, String> {
    let opts = BridgeOptions::parse(options)?;
    let copts = opts.check_options()?;
    let t0 = Instant::now();
    let mut d = Decoding::new(&opts, opts.timings);
    d.values(values)?;
    d.ops(ops)?;
    let done = d.finish()?;
    // Decoding alone is the bridge's cost; compiling into the model the CLI
    // does too, after parsing.
    let times = [
        ("decode-ns", t0.elapsed().saturating_sub(done.compile)),
        ("compile-ns", done.compile),
    ];
    check_loaded(&done.loaded, &copts, &opts, &times)
}

/// A history that arrives in chunks while the JVM is still encoding it. A
/// thread of ours, which never touches the JVM, decodes and compiles each
/// chunk as it comes, so that encoding there and decoding here overlap:
/// on two cores the bridge then costs little more than the encoding.
pub struct Stream {
    opts: BridgeOptions,
    copts: CheckOptions,
    tx: Option<SyncSender<Msg>>,
    worker: Option<JoinHandle<Result<(Decoded, Duration), String>>>,
}

enum Msg {
    /// Value-table entries and op records, each chunk whole.
    Chunk(Vec<u8>, Vec<u8>),
    /// The JVM gave up (its encoder threw): stop without compiling.
    Abort,
}

impl Stream {
    /// Starts a check with the options' EDN text; refuses bad options at
    /// once, before anything is encoded.
    pub fn open(options: &str) -> Result<Stream, String> {
        let opts = BridgeOptions::parse(options)?;
        let copts = opts.check_options()?;
        // A few chunks in flight: the encoder runs ahead of the decoder
        // without holding the whole history twice.
        let (tx, rx) = sync_channel::<Msg>(8);
        let mut d = Decoding::new(&opts, opts.timings);
        let worker = std::thread::Builder::new()
            .name("elle-si-decode".into())
            .spawn(move || {
                let mut busy = Duration::ZERO;
                while let Ok(msg) = rx.recv() {
                    let Msg::Chunk(values, ops) = msg else {
                        return Err("the encoding was abandoned".to_string());
                    };
                    let t0 = Instant::now();
                    d.values(&values)?;
                    d.ops(&ops)?;
                    busy += t0.elapsed();
                }
                let t0 = Instant::now();
                let done = d.finish()?;
                busy += t0.elapsed();
                Ok((done, busy))
            })
            .map_err(|e| format!("could not start the decoding thread: {e}"))?;
        Ok(Stream {
            opts,
            copts,
            tx: Some(tx),
            worker: Some(worker),
        })
    }

    /// Hands a chunk to the decoding thread (waiting while it is eight
    /// chunks behind).
    pub fn feed(&mut self, values: Vec<u8>, ops: Vec<u8>) {
        if let Some(tx) = &self.tx {
            // A closed channel means the decoder stopped at an error, which
            // `finish` reports.
            let _ = tx.send(Msg::Chunk(values, ops));
        }
    }

    /// Ends the history, waits for its decoding, checks it and renders the
    /// result map.
    pub fn finish(mut self) -> Result<String, String> {
        drop(self.tx.take());
        let t0 = Instant::now();
        let Some(worker) = self.worker.take() else {
            return Err("the stream was already finished".into());
        };
        let (done, busy) = match worker.join() {
            Ok(r) => r?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let wait = t0.elapsed();
        // The decoding ran beside the encoding; what the JVM waited for is
        // `wait`, of which `finish-compile` is the compiler's last step.
        let times = [
            ("decode-ns", busy.saturating_sub(done.compile)),
            ("compile-ns", done.compile),
            ("wait-ns", wait),
            ("finish-compile-ns", done.finish),
        ];
        check_loaded(&done.loaded, &self.copts, &self.opts, &times)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Msg::Abort);
        }
    }
}

/// Checks a history file (EDN or the text format, detected as the CLI
/// detects it).
pub fn check_file(path: &str, options: &str) -> Result<String, String> {
    let opts = BridgeOptions::parse(options)?;
    let copts = opts.check_options()?;
    let t0 = Instant::now();
    let lopts = LoadOptions {
        format: None,
        workload: opts.workload,
        ..LoadOptions::default()
    };
    let loaded = history::load(Path::new(path), lopts, None).map_err(|e| error_text(&e))?;
    check_loaded(&loaded, &copts, &opts, &[("decode-ns", t0.elapsed())])
}

// ---------------------------------------------------------------------------
// JNI

/// Why a native method failed.
#[derive(Debug)]
enum BridgeError {
    /// Bad history or options: `IllegalArgumentException`.
    Input(String),
    /// The JNI itself failed (or a Java exception is pending).
    Jni(JniError),
}

impl std::fmt::Display for BridgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BridgeError::Input(m) => f.write_str(m),
            BridgeError::Jni(e) => write!(f, "JNI failure: {e}"),
        }
    }
}

impl std::error::Error for BridgeError {}

impl From<JniError> for BridgeError {
    fn from(e: JniError) -> Self {
        BridgeError::Jni(e)
    }
}

thread_local! {
    /// Where this thread's last panic happened, ` (at src/...:line:col)`,
    /// and its backtrace when `RUST_BACKTRACE` asks for one: what
    /// [`ThrowWithMessage`] adds to the panic's message.
    static PANIC_AT: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// Called by the JVM when it loads the library: installs the panic hook.
/// Every panic of ours reaches Java as an `IllegalStateException`
/// ([`ThrowWithMessage`]), so the hook prints nothing: the default hook
/// writes the panic and a backtrace to the JVM's stderr, which reads like
/// a crash. The hook notes the panic's place, and the backtrace when
/// `RUST_BACKTRACE` asks for one, and the exception's message carries them.
/// The hook is this library's own: another Rust library in the JVM has a
/// standard library, and a hook, of its own.
#[unsafe(no_mangle)]
pub extern "system" fn JNI_OnLoad(
    _vm: *mut ::jni::sys::JavaVM,
    _reserved: *mut std::ffi::c_void,
) -> jint {
    std::panic::set_hook(Box::new(|info| {
        let mut note = match info.location() {
            Some(l) => format!(" (at {l})"),
            None => String::new(),
        };
        let bt = std::backtrace::Backtrace::capture();
        if bt.status() == std::backtrace::BacktraceStatus::Captured {
            note.push_str(&format!("\nRust backtrace (RUST_BACKTRACE is set):\n{bt}"));
        }
        PANIC_AT.set(Some(note));
    }));
    ::jni::sys::JNI_VERSION_1_8
}

/// Turns errors and panics into Java exceptions that carry the whole
/// message. (The stock `ThrowRuntimeExAndDefault` drops the text of
/// formatted panics, whose payload is a `String`.)
struct ThrowWithMessage;

impl<T: Default> ErrorPolicy<T, BridgeError> for ThrowWithMessage {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        err: BridgeError,
    ) -> ::jni::errors::Result<T> {
        if env.exception_check() {
            // A Java exception is already on its way: it says more.
            return Ok(T::default());
        }
        let _ = match err {
            BridgeError::Input(m) => env.throw_new(
                jni_str!("java/lang/IllegalArgumentException"),
                JNIString::new(m),
            ),
            BridgeError::Jni(e) => env.throw_new(
                jni_str!("java/lang/RuntimeException"),
                JNIString::new(format!("elle-si: JNI failure: {e}")),
            ),
        };
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> ::jni::errors::Result<T> {
        let text = if let Some(s) = payload.downcast_ref::<&'static str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "(a panic without a message)".to_string()
        };
        // The place (and backtrace), when the panic happened on this
        // thread: one on the decoding thread is resumed here without them.
        let text = text + &PANIC_AT.take().unwrap_or_default();
        // Dropping an arbitrary payload may itself panic; leak it then.
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| drop(payload))) {
            std::mem::forget(p);
        }
        if env.exception_check() {
            return Ok(T::default());
        }
        let _ = env.throw_new(
            jni_str!("java/lang/IllegalStateException"),
            JNIString::new(format!(
                "elle-si internal error (a bug: please report it with the history): {text}"
            )),
        );
        Ok(T::default())
    }
}

fn byte_array(env: &Env, arr: &JByteArray, len: jint, what: &str) -> Result<Vec<u8>, BridgeError> {
    if arr.is_null() {
        return Err(BridgeError::Input(format!("{what} is null")));
    }
    let cap = arr.len(env)?;
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= cap)
        .ok_or_else(|| {
            BridgeError::Input(format!(
                "{what}: length {len} outside the array of {cap} bytes"
            ))
        })?;
    let mut buf = vec![0i8; len];
    arr.get_region(env, 0, &mut buf)?;
    // i8 -> u8 in place: same size and alignment.
    let mut buf = std::mem::ManuallyDrop::new(buf);
    let (ptr, len, cap) = (buf.as_mut_ptr(), buf.len(), buf.capacity());
    // SAFETY: the allocation came from a Vec<i8>, whose layout u8 shares.
    Ok(unsafe { Vec::from_raw_parts(ptr.cast::<u8>(), len, cap) })
}

fn string(env: &mut Env, s: &JString, what: &str) -> Result<String, BridgeError> {
    if s.is_null() {
        return Err(BridgeError::Input(format!("{what} is null")));
    }
    Ok(s.try_to_string(env)?)
}

/// `static native String checkEncoded(byte[] values, int valuesLen, byte[] ops, int opsLen, String options)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_checkEncoded<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    values: JByteArray<'caller>,
    values_len: jint,
    ops: JByteArray<'caller>,
    ops_len: jint,
    options: JString<'caller>,
) -> JString<'caller> {
    unowned_env
        .with_env(|env| -> Result<JString<'caller>, BridgeError> {
            let values = byte_array(env, &values, values_len, "the value table")?;
            let ops = byte_array(env, &ops, ops_len, "the encoded ops")?;
            let options = string(env, &options, "the options")?;
            let out = check_encoded(&values, &ops, &options).map_err(BridgeError::Input)?;
            Ok(JString::from_str(env, out)?)
        })
        .resolve::<ThrowWithMessage>()
}

/// The stream behind a handle from `streamOpen`.
fn stream<'h>(handle: jlong) -> Result<&'h mut Stream, BridgeError> {
    if handle == 0 {
        return Err(BridgeError::Input(
            "the native stream is closed (finished or abandoned)".into(),
        ));
    }
    // SAFETY: a non-zero handle is a `Box<Stream>` from `streamOpen` that
    // `streamFinish` or `streamAbort` has not taken back: elle_si.NativeStream
    // hands it out once and zeroes it, under its lock, when it does.
    Ok(unsafe { &mut *(handle as *mut Stream) })
}

/// Takes back the stream behind a handle.
fn take_stream(handle: jlong) -> Result<Box<Stream>, BridgeError> {
    let s: *mut Stream = stream(handle)?;
    // SAFETY: as in `stream`; the caller forgets the handle.
    Ok(unsafe { Box::from_raw(s) })
}

/// `static native long streamOpen(String options)`: starts a streamed
/// check; the handle goes to `streamFeed`, then once to `streamFinish` or
/// `streamAbort`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_streamOpen<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    options: JString<'caller>,
) -> jlong {
    unowned_env
        .with_env(|env| -> Result<jlong, BridgeError> {
            let options = string(env, &options, "the options")?;
            let s = Stream::open(&options).map_err(BridgeError::Input)?;
            Ok(Box::into_raw(Box::new(s)) as jlong)
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native void streamFeed(long handle, byte[] values, int valuesLen, byte[] ops, int opsLen)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_streamFeed<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    values: JByteArray<'caller>,
    values_len: jint,
    ops: JByteArray<'caller>,
    ops_len: jint,
) {
    unowned_env
        .with_env(|env| -> Result<(), BridgeError> {
            let s = stream(handle)?;
            let values = byte_array(env, &values, values_len, "the value table")?;
            let ops = byte_array(env, &ops, ops_len, "the encoded ops")?;
            s.feed(values, ops);
            Ok(())
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native String streamFinish(long handle)`: the result map's EDN.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_streamFinish<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) -> JString<'caller> {
    unowned_env
        .with_env(|env| -> Result<JString<'caller>, BridgeError> {
            let s = take_stream(handle)?;
            let out = s.finish().map_err(BridgeError::Input)?;
            Ok(JString::from_str(env, out)?)
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native void streamAbort(long handle)`: abandons a stream.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_streamAbort<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    unowned_env
        .with_env(|_env| -> Result<(), BridgeError> {
            drop(take_stream(handle)?);
            Ok(())
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native String checkFile(String path, String options)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_checkFile<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    path: JString<'caller>,
    options: JString<'caller>,
) -> JString<'caller> {
    unowned_env
        .with_env(|env| -> Result<JString<'caller>, BridgeError> {
            let path = string(env, &path, "the path")?;
            let options = string(env, &options, "the options")?;
            let out = check_file(&path, &options).map_err(BridgeError::Input)?;
            Ok(JString::from_str(env, out)?)
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native String version()`: the crate version and wire version,
/// which the Clojure side compares with its own.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_version<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JString<'caller> {
    unowned_env
        .with_env(|env| -> Result<JString<'caller>, BridgeError> {
            let v = format!("{} {WIRE_VERSION}", env!("CARGO_PKG_VERSION"));
            Ok(JString::from_str(env, v)?)
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native void panicForTest(String message)`: panics with a
/// formatted message, so the tests can see that a panic reaches Java as an
/// exception with its text and the JVM carries on.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_panicForTest<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    message: JString<'caller>,
) {
    unowned_env
        .with_env(|env| -> Result<(), BridgeError> {
            let m = string(env, &message, "the message")?;
            panic!("deliberate panic for the tests: {m}");
        })
        .resolve::<ThrowWithMessage>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small encoder for the tests, mirroring `elle_si.HistoryEncoder`.
    #[derive(Default)]
    struct Enc {
        values: Vec<u8>,
        ops: Vec<u8>,
        ids: Vec<String>,
    }

    enum V<'a> {
        I(i64),
        E(&'a str),
    }

    use super::write_uv as uv;

    fn sv(out: &mut Vec<u8>, i: i64) {
        uv(out, ((i << 1) ^ (i >> 63)) as u64)
    }

    impl Enc {
        fn new() -> Enc {
            let mut e = Enc::default();
            e.ops.extend_from_slice(MAGIC);
            e.ops.push(WIRE_VERSION);
            e
        }

        fn r(&mut self, v: V) {
            match v {
                V::I(i) => uv(&mut self.ops, (((i << 1) ^ (i >> 63)) as u64) << 1),
                V::E(text) => {
                    let id = match self.ids.iter().position(|t| t == text) {
                        Some(p) => p + 1,
                        None => {
                            self.ids.push(text.to_string());
                            uv(&mut self.values, text.len() as u64);
                            self.values.extend_from_slice(text.as_bytes());
                            self.ids.len()
                        }
                    };
                    uv(&mut self.ops, ((id as u64) << 1) | 1)
                }
            }
        }

        /// `mops`: (function code, key, arg) with arg None, Some(vec) for a
        /// list, or a one-element scalar marker.
        fn op(
            &mut self,
            typ: u8,
            process: i64,
            index: Option<i64>,
            mops: Option<&[(u8, i64, Arg2)]>,
        ) {
            self.ops.push(REC_OP);
            let state = if mops.is_some() { 2 } else { 1 };
            self.ops
                .push(typ | if index.is_some() { 4 } else { 0 } | (state << 4));
            sv(&mut self.ops, process);
            if let Some(i) = index {
                sv(&mut self.ops, i);
            }
            self.r(V::E(":txn"));
            if let Some(mops) = mops {
                self.mops(mops);
            }
        }

        /// An invocation without its value, as `elle_si.HistoryEncoder`
        /// writes them.
        fn invoke_elided(&mut self, process: i64, index: i64) {
            self.ops.push(REC_OP);
            self.ops.push(INV | 4);
            sv(&mut self.ops, process);
            sv(&mut self.ops, index);
            self.r(V::E(":txn"));
        }

        fn trailer(&mut self, process: i64, mops: &[(u8, i64, Arg2)]) {
            self.ops.push(REC_TRAILER);
            sv(&mut self.ops, process);
            self.ops.push(2);
            self.mops(mops);
        }

        fn mops(&mut self, mops: &[(u8, i64, Arg2)]) {
            {
                uv(&mut self.ops, mops.len() as u64);
                for (f, k, a) in mops {
                    let argc = match a {
                        Arg2::Nil => 0,
                        Arg2::One(_) => 1,
                        Arg2::List(_) => 2,
                    };
                    self.ops.push(f | (argc << 2));
                    self.r(V::I(*k));
                    match a {
                        Arg2::Nil => {}
                        Arg2::One(v) => self.r(V::I(*v)),
                        Arg2::List(vs) => {
                            uv(&mut self.ops, vs.len() as u64);
                            for v in vs.iter() {
                                self.r(V::I(*v));
                            }
                        }
                    }
                }
            }
        }
    }

    #[derive(Clone)]
    enum Arg2 {
        Nil,
        One(i64),
        List(Vec<i64>),
    }

    const INV: u8 = 0;
    const OK: u8 = 1;
    const FAIL: u8 = 2;
    const APPEND: u8 = 0;
    const READ: u8 = 1;

    fn opts() -> BridgeOptions {
        BridgeOptions::default()
    }

    #[test]
    fn pairs_invocations_with_completions() {
        let mut e = Enc::new();
        e.op(INV, 0, Some(0), Some(&[(APPEND, 1, Arg2::One(1))]));
        e.ops.push(REC_SKIP);
        e.op(INV, 1, Some(2), Some(&[(READ, 1, Arg2::Nil)]));
        e.op(OK, 0, Some(3), Some(&[(APPEND, 1, Arg2::One(1))]));
        e.op(OK, 1, Some(4), Some(&[(READ, 1, Arg2::List(vec![1]))]));
        // A failed append without a value: the invocation tells.
        e.op(INV, 0, Some(5), Some(&[(APPEND, 1, Arg2::One(2))]));
        e.op(FAIL, 0, Some(6), None);
        // Never completes.
        e.op(INV, 2, Some(7), Some(&[(APPEND, 1, Arg2::One(3))]));
        let l = decode(&e.values, &e.ops, &opts()).unwrap();
        let h = &l.history;
        assert_eq!(h.stats.ops, 8);
        assert_eq!(h.stats.skipped_ops, 1);
        assert_eq!(h.stats.dangling_invokes, 1);
        assert_eq!(h.workload, Some(Workload::ListAppend));
        let st: Vec<Status> = h.txns.iter().map(|t| t.status).collect();
        assert_eq!(
            st,
            [
                Status::Committed,
                Status::Committed,
                Status::Aborted,
                Status::Indeterminate
            ]
        );
        assert_eq!(h.txns[1].complete.index, 4);
        assert_eq!(h.txns[1].invoke.map(|p| p.index), Some(2));
        // The failed txn's append came from its invocation.
        let m = &h.mops[h.txns[2].start as usize];
        assert_eq!(m.val, Val::int(2).unwrap());
        assert_eq!(h.value(h.txns[0].f), Value::Keyword("txn".into()));
    }

    #[test]
    fn elided_invocation_values_come_from_the_completion_or_the_trailer() {
        let mut e = Enc::new();
        e.invoke_elided(0, 0);
        e.op(OK, 0, Some(1), Some(&[(APPEND, 1, Arg2::One(1))]));
        // The encoder copies the invocation's value into a bare :fail.
        e.invoke_elided(0, 2);
        e.op(FAIL, 0, Some(3), Some(&[(APPEND, 1, Arg2::One(2))]));
        // Never completes: its value is in the trailer.
        e.invoke_elided(1, 4);
        e.invoke_elided(2, 5);
        e.trailer(2, &[(READ, 1, Arg2::List(vec![1]))]);
        e.trailer(1, &[(APPEND, 1, Arg2::One(3))]);
        let l = decode(&e.values, &e.ops, &opts()).unwrap();
        let h = &l.history;
        assert_eq!(h.stats.ops, 6);
        assert_eq!(h.stats.dangling_invokes, 2);
        let st: Vec<(Status, usize)> = h.txns.iter().map(|t| (t.status, t.mops().len())).collect();
        assert_eq!(
            st,
            [
                (Status::Committed, 1),
                (Status::Aborted, 1),
                (Status::Indeterminate, 1),
                (Status::Indeterminate, 1)
            ]
        );
        // Dangling invocations in history order, each with its own value.
        assert_eq!(h.txns[2].invoke.map(|p| p.index), Some(4));
        assert_eq!(h.mops[h.txns[2].start as usize].kind, MopKind::Write);
        assert_eq!(h.mops[h.txns[3].start as usize].kind, MopKind::Read);
        // A record after the trailer is refused.
        e.op(OK, 3, Some(6), None);
        match decode(&e.values, &e.ops, &opts()) {
            Err(err) => assert!(err.contains("after the trailer"), "{err}"),
            Ok(_) => panic!("a record after the trailer was accepted"),
        }
    }

    #[test]
    fn ops_without_index_get_their_position() {
        let mut e = Enc::new();
        e.ops.push(REC_SKIP);
        e.op(OK, 0, None, Some(&[(APPEND, 1, Arg2::One(1))]));
        let l = decode(&e.values, &e.ops, &opts()).unwrap();
        assert_eq!(l.history.txns[0].complete.index, 1);
        assert!(l.history.stats.completions_only);
    }

    #[test]
    fn errors_name_the_op() {
        let mut e = Enc::new();
        e.op(OK, 0, Some(10), Some(&[(APPEND, 1, Arg2::One(1))]));
        e.op(OK, 3, Some(11), Some(&[(APPEND, 1, Arg2::One(1))]));
        let err = decode(&e.values, &e.ops, &opts()).err().unwrap();
        assert!(
            err.starts_with(
                "history: history[1] (:index 11, :process 3): value 1 appended to key 1 twice"
            ),
            "{err}"
        );
        assert!(
            err.contains("written before here: history[0] (:index 10"),
            "{err}"
        );
    }

    #[test]
    fn completion_without_invocation_is_refused() {
        let mut e = Enc::new();
        e.op(INV, 0, Some(0), Some(&[(APPEND, 1, Arg2::One(1))]));
        e.op(OK, 1, Some(1), Some(&[(APPEND, 1, Arg2::One(1))]));
        let err = decode(&e.values, &e.ops, &opts()).err().unwrap();
        assert!(err.contains("history[1]"), "{err}");
        assert!(err.contains("no outstanding invocation"), "{err}");
    }

    #[test]
    fn truncated_and_foreign_buffers_are_refused() {
        let mut e = Enc::new();
        e.op(OK, 0, Some(0), Some(&[(APPEND, 1, Arg2::One(1))]));
        let cut = &e.ops[..e.ops.len() - 1];
        let err = decode(&e.values, cut, &opts()).err().unwrap();
        assert!(err.contains("ends in the middle of a record"), "{err}");
        let err = decode(&[], b"{:type :ok}", &opts()).err().unwrap();
        assert!(err.contains("ELSI"), "{err}");
        let mut v2 = e.ops.clone();
        v2[4] = WIRE_VERSION + 1;
        let err = decode(&e.values, &v2, &opts()).err().unwrap();
        assert!(
            err.contains(&format!("wire version {}", WIRE_VERSION + 1)),
            "{err}"
        );
    }

    #[test]
    fn interned_values_round_trip() {
        let mut e = Enc::new();
        e.ops.push(REC_OP);
        e.ops.push(1 | (2 << 4));
        sv(&mut e.ops, 0);
        e.r(V::E(":txn"));
        uv(&mut e.ops, 1);
        e.ops.push(APPEND | (1 << 2));
        e.r(V::E("[:anti 1]"));
        e.r(V::E("\"s\""));
        let l = decode(&e.values, &e.ops, &opts()).unwrap();
        let h = &l.history;
        assert_eq!(
            h.key_value(0),
            Value::Vector(vec![Value::Keyword("anti".into()), Value::Int(1)])
        );
        assert_eq!(h.value(h.mops[0].val), Value::String("s".into()));
    }

    #[test]
    fn op_refs_replace_op_maps_only() {
        let text = "{:anomalies {:G1a [{:op {:index 3, :type :ok, :process 0, :value [[:r :x [1]]]}, \
                    :mop [:r :x [1]], :type :G1a, :steps [{:type :ww, :index 9}]}]}}";
        let mut v = edn::read_one(text.as_bytes()).unwrap();
        op_refs(&mut v);
        assert_eq!(
            v.to_string(),
            "{:anomalies {:G1a [{:op #elle-si/op 3, :mop [:r :x [1]], :type :G1a, :steps [{:type :ww, :index 9}]}]}}"
        );
    }

    #[test]
    fn options_parse_and_refuse() {
        let o = BridgeOptions::parse(
            r#"{:models ["serializable"] :anomalies [:G1] :timeout-ms 500 :workload "rw-register" :timings true}"#,
        )
        .unwrap();
        assert_eq!(o.models, ["serializable"]);
        assert_eq!(o.anomalies, ["G1"]);
        assert_eq!(o.timeout, Some(Duration::from_millis(500)));
        assert_eq!(o.workload, Some(Workload::RwRegister));
        assert!(o.timings);
        assert!(!o.op_refs);
        assert!(BridgeOptions::parse("{:op-refs true}").unwrap().op_refs);
        assert!(BridgeOptions::parse("{:bogus 1}").is_err());
        assert!(BridgeOptions::parse("[1]").is_err());
    }

    #[test]
    fn anomalies_reach_the_checker() {
        use crate::spec::{AnomalyType as A, Model};
        let copts = |text: &str| BridgeOptions::parse(text).unwrap().check_options();
        // Alone: only G0 (and what implies it) is prohibited.
        let o = copts("{:models [] :anomalies [:G0]}").unwrap();
        assert!(o.models.is_empty());
        assert_eq!(o.anomalies, [A::G0]);
        // Beside models.
        let o = copts(r#"{:models ["serializable"] :anomalies [:G0 ":G1c"]}"#).unwrap();
        assert_eq!(o.models, [Model::Serializable]);
        assert_eq!(o.anomalies, [A::G0, A::G1c]);
        // Beside models that allow them: looked for too.
        let o = copts(r#"{:models ["read-committed"] :anomalies [:G2-item]}"#).unwrap();
        assert_eq!(o.anomalies, [A::G2Item]);
        // An anomaly no checker finds, and an unknown one, are refused.
        let err = copts("{:models [] :anomalies [:G-cursor]}").err().unwrap();
        assert!(err.contains("G-cursor"), "{err}");
        let err = copts("{:models [] :anomalies [:G0 :G9]}").err().unwrap();
        assert!(err.starts_with("unknown anomaly type `G9`"), "{err}");
        let err = copts("{:models []}").err().unwrap();
        assert!(err.starts_with("nothing to check"), "{err}");
    }

    /// A history in chunks as `elle_si.HistoryEncoder` flushes them: after
    /// each record, the value-table entries and the ops written since the
    /// last chunk.
    type Chunks = Vec<(Vec<u8>, Vec<u8>)>;

    fn chunked(build: impl Fn(&mut Enc, &mut dyn FnMut(&Enc))) -> (Enc, Chunks) {
        let mut e = Enc::new();
        let mut marks = vec![(0, 0)];
        build(&mut e, &mut |e: &Enc| {
            marks.push((e.values.len(), e.ops.len()))
        });
        marks.push((e.values.len(), e.ops.len()));
        let chunks = marks
            .windows(2)
            .map(|w| {
                (
                    e.values[w[0].0..w[1].0].to_vec(),
                    e.ops[w[0].1..w[1].1].to_vec(),
                )
            })
            .collect();
        (e, chunks)
    }

    fn a_history(e: &mut Enc, mark: &mut dyn FnMut(&Enc)) {
        e.invoke_elided(0, 0);
        mark(e);
        e.op(OK, 0, Some(1), Some(&[(APPEND, 1, Arg2::One(1))]));
        mark(e);
        e.invoke_elided(1, 2);
        mark(e);
        e.op(OK, 1, Some(3), Some(&[(READ, 1, Arg2::List(vec![1, 2]))]));
        mark(e);
        e.invoke_elided(0, 4);
        mark(e);
        e.op(FAIL, 0, Some(5), Some(&[(APPEND, 1, Arg2::One(2))]));
        mark(e);
        e.invoke_elided(2, 6);
        mark(e);
        e.trailer(2, &[(READ, 1, Arg2::List(vec![1]))]);
    }

    const STRICT: &str = r#"{:models ["strict-serializable"]}"#;

    #[test]
    fn a_streamed_history_checks_as_a_whole_one() {
        let (e, chunks) = chunked(a_history);
        let whole = check_encoded(&e.values, &e.ops, STRICT).unwrap();
        // The read of [1 2] saw an aborted append: not valid.
        assert!(whole.contains(":valid? false"), "{whole}");
        let mut s = Stream::open(STRICT).unwrap();
        for (values, ops) in chunks.clone() {
            s.feed(values, ops);
        }
        assert_eq!(s.finish().unwrap(), whole);
        // One chunk, or none at all, is a stream too.
        let mut s = Stream::open(STRICT).unwrap();
        s.feed(e.values.clone(), e.ops.clone());
        assert_eq!(s.finish().unwrap(), whole);
        let err = Stream::open(STRICT).unwrap().finish().err().unwrap();
        assert!(err.contains("does not start with ELSI"), "{err}");
    }

    #[test]
    fn a_stream_reports_the_first_bad_chunk_and_can_be_abandoned() {
        let (_, mut chunks) = chunked(a_history);
        // An unknown record tag in the fourth record.
        chunks[3].1[0] = 0x7f;
        let mut s = Stream::open(STRICT).unwrap();
        for (values, ops) in chunks.clone() {
            s.feed(values, ops);
        }
        let err = s.finish().err().unwrap();
        assert!(
            err.contains("history[3]") && err.contains("unknown record tag 127"),
            "{err}"
        );
        // Dropped half-way: the decoding thread stops, nothing hangs.
        let mut s = Stream::open(STRICT).unwrap();
        for (values, ops) in chunks.into_iter().take(2) {
            s.feed(values, ops);
        }
        drop(s);
        let err = Stream::open("{:models [\"no-such-model\"]}").err().unwrap();
        assert!(err.contains("no-such-model"), "{err}");
    }
}
