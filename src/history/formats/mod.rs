//! The formats of the field: one folder per format holding its reader
//! (into the builder, `history::build`) and its writer (from the compiled
//! [`History`]), a file for a format that is only read (Cobra, Viper), and
//! what they share here: detection, notes for stderr, renumbering into integer-only
//! formats, binary error locations, and the status mapping of register
//! formats.

pub(crate) mod cobra;
pub mod dbcop;
pub(crate) mod edn;
pub(crate) mod elle_json;
pub(crate) mod json_cursor;
pub mod text;
pub(crate) mod viper;

use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::anomaly::Anomaly;
use crate::edn::Value;
use crate::error::{Error, InputError, ParseError, Remedy};
use crate::history::build::{BuildOptions, Builder};
use crate::history::model::*;
use crate::history::{Format, LoadOptions, Loaded};
use crate::source::Source;

/// What a reader or writer had to say about the mapping it did (lossy
/// conversions, policies applied); printed on stderr by the CLI.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notes {
    /// The notes, one a line, as the user reads them.
    pub lines: Vec<String>,
}

impl Notes {
    /// Adds a note.
    pub fn add(&mut self, s: impl Into<String>) {
        self.lines.push(s.into());
    }

    /// Adds `n` followed by a message, when `n` is not zero; `what` is
    /// given the plural ending its noun takes (`""` for one, else `"s"`).
    pub fn count(&mut self, n: u64, what: impl FnOnce(&'static str) -> String) {
        if n > 0 {
            self.lines
                .push(format!("{n} {}", what(if n == 1 { "" } else { "s" })));
        }
    }
}

/// Notes what a history's repeated register values are, and what the
/// policy did with them ([`Repeated`]; dbcop's and Cobra's files speak of
/// variables and events, the others of keys and transactions).
pub(crate) fn repeated_notes(h: &History, format: Format, notes: &mut Notes) {
    let Some(r) = &h.repeated else { return };
    let dbcop = matches!(
        format,
        Format::DbcopBincode | Format::DbcopJson | Format::DbcopHist | Format::Cobra
    );
    let (pair, by) = if dbcop {
        ("(variable, value)", "by more than one event")
    } else {
        ("(key, value)", "more than once")
    };
    let met = match r.pairs {
        1 => format!("1 {pair} pair is written {by}"),
        n => format!("{n} {pair} pairs are written {by}"),
    };
    let reads = match r.ambiguous.len() {
        0 => "no read".to_string(),
        1 => "1 read".to_string(),
        n => format!("{n} reads"),
    };
    let done = match r.policy {
        Duplicates::Any => format!(
            "a read of one may have observed any of its writers ({reads} with several; serializability and SI weigh every choice, causal levels read the last)"
        ),
        Duplicates::LastWriter => format!(
            "{reads} with several possible writers resolved to the last in file order (PolySI's choice)"
        ),
        Duplicates::DropReads => {
            format!("{reads} with several possible writers left out, the other reads of them kept")
        }
        Duplicates::Reject => "refused".to_string(),
    };
    notes.add(format!("{met}: {done}"));
}

/// Integers at or above this are handed out to values (and keys) a
/// register format cannot hold as they are: zero where it means the initial
/// state, negatives, non-integers. 10^18 fits every target (u64, i64, and
/// the model's 62-bit inline integers) and is easy to spot.
pub(crate) const RENUMBER_BASE: u64 = 1_000_000_000_000_000_000;

/// Maps model values to the non-negative integers of a register format,
/// keeping every integer the format can hold and renumbering the rest from
/// a base ([`RENUMBER_BASE`] unless told) in order of first appearance.
#[derive(Debug, Default)]
pub(crate) struct IntMap {
    fresh: FxHashMap<Val, u64>,
    /// Whether 0 can be written as it is (keys; dbcop's JSON, where an
    /// explicit `x:=0` write is honoured).
    zero_ok: bool,
    /// The first number handed out.
    pub base: u64,
}

impl IntMap {
    pub fn new(zero_ok: bool) -> IntMap {
        IntMap::from(zero_ok, RENUMBER_BASE)
    }

    /// A map handing out numbers from `base`, which must lie above every
    /// integer it keeps among the values it will be given (a writer that
    /// knows them all: dbcop's variables then stay dense, as its tools
    /// size their tables by the largest).
    pub fn from(zero_ok: bool, base: u64) -> IntMap {
        IntMap {
            fresh: FxHashMap::default(),
            zero_ok,
            base,
        }
    }

    /// One past the largest integer among `vals` that a map keeps as it
    /// is (0 when none is).
    pub fn after_kept(zero_ok: bool, vals: impl IntoIterator<Item = Val>) -> u64 {
        vals.into_iter()
            .filter_map(|v| v.as_int())
            .filter(|&i| (i > 0 || (i == 0 && zero_ok)) && (i as u64) < RENUMBER_BASE)
            .map(|i| i as u64 + 1)
            .max()
            .unwrap_or(0)
    }

    #[inline]
    pub fn get(&mut self, v: Val) -> u64 {
        if let Some(i) = v.as_int()
            && (i > 0 || (i == 0 && self.zero_ok))
            && (i as u64) < RENUMBER_BASE
        {
            return i as u64;
        }
        let n = self.fresh.len() as u64;
        *self.fresh.entry(v).or_insert(self.base + n)
    }

    /// The number `v` was given, if it was given one.
    pub fn given(&self, v: Val) -> Option<u64> {
        self.fresh.get(&v).copied()
    }

    /// How many values were renumbered.
    pub fn renumbered(&self) -> u64 {
        self.fresh.len() as u64
    }
}

/// What a register-format writer does with each transaction status.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RegisterTxn {
    /// All micro-ops, as committed.
    Committed,
    /// Writes only, marked aborted (nothing an aborted transaction read is
    /// known).
    AbortedWrites,
    /// Writes only, as committed: the register formats cannot say "may or
    /// may not have happened". An indeterminate transaction's writes may
    /// have taken effect, and another transaction observing one proves it;
    /// marking them aborted would turn such reads into false aborted reads.
    /// Its reads returned nothing known, so they are dropped. For Jepsen
    /// histories this is exact: a process never runs again after :info, so
    /// the transaction can always be placed last if nothing observed it.
    IndeterminateWrites,
}

impl RegisterTxn {
    /// What the writer does with a transaction of status `s`.
    pub fn of(s: Status) -> RegisterTxn {
        match s {
            Status::Committed => RegisterTxn::Committed,
            Status::Aborted => RegisterTxn::AbortedWrites,
            Status::Indeterminate => RegisterTxn::IndeterminateWrites,
        }
    }

    /// Whether the transaction's reads are written.
    pub fn keeps_reads(self) -> bool {
        self == RegisterTxn::Committed
    }
}

/// A micro-op as register formats write it: the read's value, or `None`
/// for a read of the initial state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RegOp {
    /// A write of `val` to `key`.
    Write {
        /// The key.
        key: Val,
        /// The value written.
        val: Val,
    },
    /// A read of `key` that returned `val` (None: the initial state).
    Read {
        /// The key.
        key: Val,
        /// The value read.
        val: Option<Val>,
    },
}

/// The register view of a model transaction (see [`RegisterTxn`]): appends
/// become writes of the appended value, a list read becomes a read of its
/// last element (what C4 does), a read of the initial state says so.
pub fn register_ops(h: &History, t: TxnId, out: &mut Vec<RegOp>) {
    out.clear();
    let keep_reads = RegisterTxn::of(h.txns[t as usize].status).keeps_reads();
    for m in h.txn_mops(t) {
        let key = h.keys[m.key as usize];
        if m.is_write() {
            out.push(RegOp::Write { key, val: m.val });
        } else if keep_reads {
            let val = (m.from != from::INITIAL && m.val != Val::NIL).then_some(m.val);
            out.push(RegOp::Read { key, val });
        }
    }
}

/// The first transaction that writes nil (or a value no integer stands
/// for), which the register formats cannot write: their writes are
/// integers and a read of nil is a read of the initial state, so renumbering
/// it would make the reads of that write disagree with it.
pub fn nil_write(h: &History) -> Option<TxnId> {
    h.mops
        .iter()
        .find(|m| m.is_write() && m.val == Val::NIL)
        .map(|m| m.txn)
}

/// Why a transaction that writes nil is refused in `target` (see
/// [`nil_write`]).
pub fn nil_write_refused(target: &str) -> String {
    format!(
        "this transaction writes nil (or a value no integer stands for), which {target} cannot write: \
         its writes are integers and its reads of nil are reads of the initial state"
    )
}

/// Notes a register writer gives for what it could not say.
pub(crate) fn register_notes(h: &History, target: &str, notes: &mut Notes) {
    if h.workload == Some(Workload::ListAppend) {
        let orders = match target {
            "dbcop's text form" => "the version orders the lists reveal are kept in comments",
            "dbcop JSON" => "the version orders the lists reveal are kept in \"info\"",
            _ => "the version orders the lists reveal are lost",
        };
        notes.add(format!(
            "{target} holds registers: each append became a write of the appended value, and each list read a read of its last element ({orders})"
        ));
    }
    // Those with nothing left to write are left out, and noted so.
    let written = h
        .txns
        .iter()
        .enumerate()
        .filter(|(t, txn)| {
            txn.status == Status::Indeterminate
                && h.txn_mops(*t as TxnId).iter().any(|m| m.is_write())
        })
        .count();
    notes.count(written as u64, |s| {
        format!("indeterminate transaction{s} (:info, or never completed) written as committed, reads dropped: {target} cannot say \"may have happened\"")
    });
    let aborted_reads = h
        .mops
        .iter()
        .filter(|m| m.is_read() && h.txns[m.txn as usize].status == Status::Aborted)
        .count();
    notes.count(aborted_reads as u64, |s| {
        let of = if s.is_empty() {
            "of an aborted transaction"
        } else {
            "of aborted transactions"
        };
        format!("read{s} {of} dropped (what they returned is unknown)")
    });
}

/// A binary input's error: the byte offset and the record, since lines and
/// columns mean nothing there.
pub(crate) fn binary_error(
    file: &str,
    offset: usize,
    message: impl std::fmt::Display,
) -> InputError {
    InputError::whole(file, format!("at byte {offset} (0x{offset:x}): {message}"))
}

/// [`binary_error`] for a [`ParseError`], keeping its help and naming its
/// related places by byte offset.
pub(crate) fn binary_parse_error(file: &str, e: ParseError, message: String) -> InputError {
    let mut message = message;
    for (o, _, label) in &e.related {
        message.push_str(&format!("; {label} at byte {o} (0x{o:x})"));
    }
    let mut ie = binary_error(file, e.offset, message);
    ie.help = e.help;
    ie.remedy = e.remedy;
    ie
}

/// Turns a key or value of a text-like format into a model value: canonical
/// decimal integers become integers, anything else a string.
pub(crate) fn name_value(s: &str) -> Value {
    let canonical =
        !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    match canonical.then(|| s.parse::<i64>().ok()).flatten() {
        Some(i) => Value::Int(i),
        None => Value::String(s.to_string()),
    }
}

/// A u64 from a binary or JSON format as a model value.
pub(crate) fn u64_value(v: u64) -> Value {
    match i64::try_from(v) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::BigInt(v.to_string()),
    }
}

/// The builder of a register-only format (Cobra, Viper, `what` naming it):
/// refuses a forced list-append workload by name.
pub(crate) fn register_builder(
    name: &str,
    opts: BuildOptions,
    what: &str,
) -> Result<Builder, Error> {
    if opts.workload == Some(Workload::ListAppend) {
        return Err(InputError::whole(
            name,
            format!(
                "{what} logs hold register reads and writes: they cannot be read as list-append"
            ),
        )
        .into());
    }
    Ok(Builder::new(
        name,
        BuildOptions {
            workload: Some(Workload::RwRegister),
            zero_is_initial: false,
            duplicates: opts.duplicates,
        },
    ))
}

/// Shorthand for readers whose errors carry their own offsets.
pub(crate) type PResult<T> = Result<T, ParseError>;

/// Guesses a format from a file's name and first bytes (EDN and text are
/// left to the caller's older rules when this says nothing).
pub(crate) fn sniff(path: &Path, bytes: &[u8]) -> Option<(Format, &'static str)> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let head = &bytes[..bytes.len().min(64)];
    let binary = head.contains(&0);
    if name.ends_with(".log") && name.starts_with('T') && head.first() == Some(&b'S') && binary {
        return Some((Format::Cobra, "a binary T*.log file starting with S"));
    }
    if binary {
        return Some((Format::DbcopBincode, "binary content (a NUL byte)"));
    }
    let t = bytes.trim_ascii_start();
    let after = |i: usize| t.get(i..).map(<[u8]>::trim_ascii_start).unwrap_or(&[]);
    let first_line = &t[..memchr::memchr(b'\n', t).unwrap_or(t.len())];
    let has = |hay: &[u8], needle: &[u8]| memchr::memmem::find(hay, needle).is_some();
    match t.first()? {
        b'{' if after(1).first() == Some(&b'"') => {
            if has(first_line, b"\"type\"") && has(first_line, b"\"process\"") {
                Some((
                    Format::Json,
                    "a JSON object with \"type\" and \"process\" (an op, as elle-cli writes)",
                ))
            } else if name.ends_with(".log") || has(head, b"\"value\"") {
                Some((
                    Format::Viper,
                    "JSON objects with \"value\" (Viper's log lines)",
                ))
            } else {
                Some((Format::DbcopJson, "a JSON object (dbcop's history)"))
            }
        }
        b'{' | b'(' | b'#' | b';' => Some((Format::Edn, "EDN (a map, list, tag or comment first)")),
        b'[' => {
            let u = after(1);
            match u.first() {
                Some(b'{') if after(t.len() - u.len() + 1).first() == Some(&b'"') => {
                    // elle-cli ops, or a dbcop transaction object.
                    if has(&t[..t.len().min(4096)], b"\"events\"") {
                        Some((
                            Format::DbcopJson,
                            "a JSON array of objects with \"events\" (dbcop's transactions)",
                        ))
                    } else {
                        Some((Format::Json, "a JSON array of objects (elle-cli's ops)"))
                    }
                }
                Some(b'[') => Some((
                    Format::DbcopJson,
                    "a JSON array of arrays (dbcop's sessions)",
                )),
                Some(c) if c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80 => Some((
                    Format::DbcopHist,
                    "`[` then a name (dbcop's text transactions)",
                )),
                _ => Some((Format::Edn, "an EDN vector")),
            }
        }
        b'-' | b'/' => Some((Format::DbcopHist, "`---` or `//` (dbcop's text history)")),
        _ => None,
    }
}

/// Reads the formats this module owns.
pub(crate) fn read(
    source: &Arc<Source>,
    format: Format,
    opts: LoadOptions,
    notes: &mut Notes,
) -> Result<(History, Vec<Anomaly>), Error> {
    let bopts = BuildOptions {
        workload: opts.workload,
        zero_is_initial: false,
        duplicates: opts.duplicates,
    };
    let name = source.name();
    let files = || {
        [cobra::LogFile {
            name: name.to_string(),
            bytes: source.bytes().to_vec(),
        }]
    };
    match format {
        Format::Json => elle_json::read(source, bopts),
        Format::DbcopBincode | Format::DbcopJson | Format::DbcopHist => {
            let kind = match format {
                Format::DbcopBincode => dbcop::Kind::Bincode,
                Format::DbcopJson => dbcop::Kind::Json,
                _ => dbcop::Kind::Hist,
            };
            dbcop::read(source, kind, bopts, notes)
        }
        Format::Cobra => cobra::read(name, &files(), bopts, notes),
        Format::Viper => viper::read(name, &files(), bopts, notes),
        Format::Edn | Format::Text => Err(InputError::whole(
            name,
            format!("{} is read by its own module", format.name()),
        )
        .into()),
    }
}

/// Reads a directory: Cobra logs (`T*.log`), Viper logs (`J*.log`), or a
/// Jepsen run (`history.edn`).
pub(crate) fn load_dir(dir: &Path, opts: LoadOptions) -> Result<Loaded, Error> {
    let name = dir.display().to_string();
    let io = |e| Error::io(&name, e);
    let cobra = cobra::log_files(dir, Some('T')).map_err(io)?;
    let viper = cobra::log_files(dir, Some('J')).map_err(io)?;
    let format = match opts.format {
        Some(f @ (Format::Cobra | Format::Viper)) => f,
        Some(_) | None if dir.join("history.edn").is_file() => {
            return super::load(&dir.join("history.edn"), opts, None);
        }
        None if !cobra.is_empty() && viper.is_empty() => Format::Cobra,
        None if !viper.is_empty() && cobra.is_empty() => Format::Viper,
        _ => {
            return Err(InputError::whole(
                &name,
                "a directory, but not a Jepsen run (history.edn), Cobra logs (T*.log) or Viper logs (J*.log)",
            )
            .with_remedy(Remedy::DirectoryFormat)
            .into());
        }
    };
    let files = match format {
        Format::Cobra => cobra::log_files(dir, None).map_err(io)?,
        _ => viper,
    };
    if files.is_empty() {
        return Err(InputError::whole(&name, "no .log files in this directory").into());
    }
    let bopts = BuildOptions {
        workload: opts.workload,
        zero_is_initial: false,
        duplicates: opts.duplicates,
    };
    let files = files
        .iter()
        .map(|p| cobra::LogFile::read(p))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut notes = Notes::default();
    let (history, anomalies) = match format {
        Format::Cobra => cobra::read(&name, &files, bopts, &mut notes)?,
        _ => viper::read(&name, &files, bopts, &mut notes)?,
    };
    repeated_notes(&history, format, &mut notes);
    let mut l = Loaded {
        history,
        anomalies,
        source: Arc::new(Source::from_bytes(name, Vec::new())),
        format,
        notes,
    };
    super::take_key_orders(&mut l, opts.keys)?;
    Ok(l)
}

/// Writes a compiled history in a format (Cobra and Viper are read only).
pub fn write(
    h: &History,
    format: Format,
    out: &mut dyn std::io::Write,
    notes: &mut Notes,
) -> std::io::Result<()> {
    match format {
        Format::Edn => edn::write(h, out, notes),
        Format::Json => elle_json::write(h, out, notes),
        Format::Text => text::write(h, out, notes),
        Format::DbcopBincode => {
            let p = dbcop::project(h, "dbcop bincode", notes);
            dbcop::bincode::write(&p, out, notes)
        }
        Format::DbcopJson => {
            let p = dbcop::project(h, "dbcop JSON", notes);
            dbcop::json::write(&p, out, notes)
        }
        Format::DbcopHist => {
            let p = dbcop::project(h, "dbcop's text form", notes);
            dbcop::hist::write(&p, out, notes)
        }
        Format::Cobra | Format::Viper => Err(std::io::Error::other(format!(
            "{} is read only",
            format.name()
        ))),
    }
}
