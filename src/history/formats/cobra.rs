//! Reads Cobra's client logs (CobraBench's `T<thread>.log`): a directory of
//! binary files, one per client session, each a bare run of big-endian
//! records. Read only.
//!
//! ```text
//! 'S' i64 txn_id [i64 timestamp]      start   (timestamps: optional build flag)
//! 'C' i64 txn_id [i64 timestamp]      commit
//! 'W' i64 write_id i64 key_hash i64 value_hash
//! 'R' i64 writer_txn_id i64 write_id i64 key_hash i64 value_hash
//! ```
//!
//! Only committed transactions are logged. A read names the write it saw by
//! its unique `write_id`, so the model's key is `key_hash` and its value the
//! `write_id`; reads whose writer is Cobra's INIT or NULL transaction saw
//! the initial state; garbage-collection reads are skipped. Whether the
//! files carry timestamps is found by trying both layouts.
//!
//! Logs whose writes carry the universal write id `0xabddefee` (VeriStrong's
//! TPC-C, RUBiS and Twitter benchmark logs, whose reads name that id and
//! that writer too) name versions by value instead: every write and read
//! is then `(key_hash, value_hash)`, as in dbcop's formats, and compiled as
//! dbcop's are ([`super::dbcop`]), with its policy for a value written more
//! than once (VeriStrong's reader matches a read to a write by value
//! alone; RUBiS and Twitter logs repeat values). Each file is a session,
//! numbered from 1 in the files' order; a value hash of 0 is the initial
//! state there, as dbcop's value 0 is.

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::anomaly::Anomaly;
use crate::edn::Value;
use crate::error::Error;
use crate::error::ParseError;
use crate::history::build::{Arg, BuildOptions, Builder, RawKind, RawMop, RawTxn, TxnMeta};
use crate::history::formats::dbcop::{DEvent, DHistory, DTxn, Origin};
use crate::history::formats::{Notes, binary_error};
use crate::history::model::*;

const INIT_TXN: i64 = 0xbebe_ebee;
const NULL_TXN: i64 = 0xdead_beef;
const GC_WID_TRUE: i64 = 0x2333_2333;
const GC_WID_FALSE: i64 = 0x6666_6666;
const DELETE_WID: i64 = 0xabcd_efab;
const MISSING: i64 = 0xadea_fbee;
/// The write id (and writer) of a log that names versions by value.
const UNIVERSAL: i64 = 0xabdd_efee;

/// The files of a Cobra log directory (`*.log`), in session order: by the
/// thread number in `T<n>.log`, then by name.
pub fn log_files(dir: &Path, prefix: Option<char>) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension().is_some_and(|e| e == "log")
                && prefix.is_none_or(|c| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(c))
                })
        })
        .collect();
    files.sort_by_key(|p| (thread_number(p), p.clone()));
    Ok(files)
}

/// One log file of a session-per-file format, read into memory.
pub struct LogFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

impl LogFile {
    pub fn read(p: &Path) -> Result<LogFile, Error> {
        let name = p.display().to_string();
        let bytes = std::fs::read(p).map_err(|e| Error::io(&name, e))?;
        Ok(LogFile { name, bytes })
    }

    /// The session: the thread number in the name, else the file's place.
    pub fn process(&self, i: usize) -> i64 {
        thread_number(Path::new(&self.name)).unwrap_or(i as i64)
    }
}

/// `n` of `T<n>.log` / `J<n>.log`.
pub fn thread_number(p: &Path) -> Option<i64> {
    let stem = p.file_stem()?.to_str()?;
    stem.get(1..)?.parse().ok()
}

struct Record {
    kind: RawKind,
    key: i64,
    write_id: i64,
    value: i64,
    /// Read: the transaction it names as the writer.
    writer: i64,
    offset: usize,
}

struct CTxn {
    id: i64,
    offset: usize,
    records: Vec<Record>,
}

/// Reads Cobra logs (each file one session); `opts.duplicates` is the
/// policy for a value written more than once where versions are named by
/// value.
pub fn read(
    name: &str,
    files: &[LogFile],
    opts: BuildOptions,
    notes: &mut Notes,
) -> Result<(History, Vec<Anomaly>), Error> {
    let parsed = files
        .iter()
        .map(|f| {
            let bytes = &f.bytes;
            match parse(bytes, false) {
                Ok(t) => Ok(t),
                Err(first) => parse(bytes, true).map_err(|_| {
                    Error::from(binary_error(
                        &f.name,
                        first.0,
                        format!("{} (not a Cobra log?)", first.1),
                    ))
                }),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let by_value = parsed.iter().flatten().any(|t| {
        t.records
            .iter()
            .any(|r| r.kind == RawKind::Write && r.write_id == UNIVERSAL)
    });
    if by_value {
        return read_by_value(name, files, parsed, opts, notes);
    }
    let mut b = super::register_builder(name, opts, "Cobra")?;
    let mut writer_of: FxHashMap<i64, i64> = FxHashMap::default();
    let mut reads: Vec<(i64, i64, usize, usize)> = Vec::new();
    let mut raw = RawTxn::default();
    let (mut gc, mut deletes, mut n) = (0u64, 0i64, 0i64);
    for (fi, (f, txns)) in files.iter().zip(parsed).enumerate() {
        let file = &f.name;
        let process = f.process(fi);
        for t in txns {
            raw.clear();
            for r in &t.records {
                let key = int_val(&mut b, r.key);
                let arg = match (r.kind, seen(r)) {
                    (RawKind::Read, Seen::Gc) => {
                        gc += 1;
                        continue;
                    }
                    (RawKind::Read, Seen::Initial) => Arg::Nil,
                    (RawKind::Read, Seen::Unsupported) => return Err(unsupported(file, r)),
                    (RawKind::Read, Seen::Write) => {
                        reads.push((r.write_id, r.writer, fi, r.offset));
                        Arg::Val(int_val(&mut b, r.write_id))
                    }
                    _ if r.write_id == DELETE_WID => {
                        // Deletes share one id: give each its own value.
                        deletes += 1;
                        Arg::Val(int_val(&mut b, -deletes))
                    }
                    _ => {
                        if let Some(prev) = writer_of.insert(r.write_id, t.id)
                            && prev != t.id
                        {
                            return Err(binary_error(
                                file,
                                r.offset,
                                format!(
                                    "write id {:#x} was already written by transaction {prev:#x}: Cobra's write ids are unique",
                                    r.write_id
                                ),
                            )
                            .into());
                        }
                        Arg::Val(int_val(&mut b, r.write_id))
                    }
                };
                raw.mops.push(RawMop {
                    kind: r.kind,
                    key,
                    arg,
                    offset: r.offset,
                });
            }
            let meta = TxnMeta {
                status: Status::Committed,
                process,
                invoke: None,
                complete: OpPos {
                    index: n,
                    time: -1,
                    line: 0,
                    offset: t.offset as u64,
                },
                f: Val::NIL,
            };
            n += 1;
            b.stats().ops += 1;
            b.stats().client_ops += 1;
            b.push_txn(meta, &raw).map_err(|e| {
                Error::from(binary_error(
                    file,
                    e.offset,
                    format!("transaction {:#x}: {}", t.id, e.message),
                ))
            })?;
        }
    }
    for (wid, writer, fi, off) in reads {
        if let Some(&w) = writer_of.get(&wid)
            && w != writer
        {
            return Err(binary_error(
                &files[fi].name,
                off,
                format!(
                    "this read names transaction {writer:#x} as the writer of write {wid:#x}, which transaction {w:#x} wrote"
                ),
            )
            .into());
        }
    }
    notes.count(gc, |s| format!("garbage-collection read{s} skipped"));
    notes.count(deletes as u64, |s| {
        format!("delete{s} read as a write of a distinct value each (-1, -2, ...)")
    });
    Ok(b.finish())
}

/// What a read record says it observed.
enum Seen {
    /// A garbage-collection read (of Cobra's INIT or NULL writer): skipped.
    Gc,
    /// The initial state (Cobra's INIT or NULL writer).
    Initial,
    /// A deleted or missing row.
    Unsupported,
    /// A write.
    Write,
}

fn seen(r: &Record) -> Seen {
    if r.writer == INIT_TXN || r.writer == NULL_TXN {
        if r.write_id == GC_WID_TRUE || r.write_id == GC_WID_FALSE {
            Seen::Gc
        } else {
            Seen::Initial
        }
    } else if r.write_id == DELETE_WID || r.write_id == MISSING {
        Seen::Unsupported
    } else {
        Seen::Write
    }
}

/// The refusal of a read of a deleted or missing row.
fn unsupported(file: &str, r: &Record) -> Error {
    binary_error(
        file,
        r.offset,
        "a read of a deleted or missing row: not supported yet",
    )
    .into()
}

/// Logs that name versions by value (see the module's doc): compiled as a
/// dbcop history of `(key_hash, value_hash)` events. Byte offsets run on
/// from one file into the next there, and are told back per file.
fn read_by_value(
    name: &str,
    files: &[LogFile],
    parsed: Vec<Vec<CTxn>>,
    opts: BuildOptions,
    notes: &mut Notes,
) -> Result<(History, Vec<Anomaly>), Error> {
    let mut d = DHistory {
        origin: Origin::Cobra,
        ..DHistory::default()
    };
    let mut int = |i: i64| Val::int(i).unwrap_or_else(|| d.values.intern(Value::Int(i)));
    let mut sessions = Vec::with_capacity(files.len());
    let (mut base, mut gc) = (0usize, 0u64);
    let mut bases = Vec::with_capacity(files.len());
    for (f, txns) in files.iter().zip(parsed) {
        bases.push(base);
        let mut session = Vec::with_capacity(txns.len());
        for t in txns {
            let mut events = Vec::with_capacity(t.records.len());
            for r in &t.records {
                let write = r.kind == RawKind::Write;
                let val = match (write, seen(r)) {
                    (false, Seen::Gc) => {
                        gc += 1;
                        continue;
                    }
                    (false, Seen::Initial) => None,
                    (false, Seen::Unsupported) => return Err(unsupported(&f.name, r)),
                    _ => Some(int(r.value)),
                };
                events.push(DEvent::done(write, int(r.key), val, base + r.offset));
            }
            session.push(DTxn {
                events,
                committed: true,
                offset: base + t.offset,
                line: 0,
            });
        }
        sessions.push(session);
        base += f.bytes.len();
    }
    d.sessions = sessions;
    notes.add(format!(
        "writes carry Cobra's universal write id {UNIVERSAL:#x}: versions named by value, each file a session numbered from 1"
    ));
    notes.count(gc, |s| format!("garbage-collection read{s} skipped"));
    // The file a run-on offset falls in, and the offset within it.
    let locate = |at: usize| {
        let fi = bases.partition_point(|&b| b <= at).saturating_sub(1);
        match (files.get(fi), bases.get(fi)) {
            (Some(f), Some(&b)) => (f.name.as_str(), at - b),
            _ => (name, at),
        }
    };
    super::dbcop::build(name, d, opts, notes).map_err(|e| {
        let (file, at) = locate(e.offset);
        let related = e
            .related
            .iter()
            .map(|(o, len, label)| match locate(*o) {
                (f, local) if f == file => (local, *len, label.clone()),
                (f, local) => (local, *len, format!("{label} (in {f})")),
            })
            .collect();
        let message = e.message.clone();
        let e = ParseError {
            offset: at,
            related,
            ..e
        };
        super::binary_parse_error(file, e, message).into()
    })
}

fn int_val(b: &mut Builder, i: i64) -> Val {
    Val::int(i).unwrap_or_else(|| b.values().intern(Value::Int(i)))
}

/// Parses one file's records; the error is (offset, message).
fn parse(bytes: &[u8], timestamps: bool) -> Result<Vec<CTxn>, (usize, String)> {
    let mut out = Vec::new();
    let mut cur: Option<CTxn> = None;
    let mut pos = 0usize;
    let mut rec = 0u64;
    let i64_at = |p: usize, field: &str, rec: u64| -> Result<i64, (usize, String)> {
        bytes
            .get(p..p + 8)
            .map(|s| {
                let mut a = [0u8; 8];
                a.copy_from_slice(s);
                i64::from_be_bytes(a)
            })
            .ok_or_else(|| {
                (
                    p,
                    format!("the file ends inside record {rec}'s field `{field}`: truncated"),
                )
            })
    };
    let ts = if timestamps { 8 } else { 0 };
    while pos < bytes.len() {
        let at = pos;
        let op = bytes[pos];
        pos += 1;
        match op {
            b'S' => {
                let id = i64_at(pos, "txn_id", rec)?;
                pos += 8 + ts;
                if let Some(open) = &cur {
                    return Err((
                        at,
                        format!(
                            "record {rec}: transaction {id:#x} starts inside transaction {:#x}, which never committed",
                            open.id
                        ),
                    ));
                }
                cur = Some(CTxn {
                    id,
                    offset: at,
                    records: Vec::new(),
                });
            }
            b'C' => {
                let id = i64_at(pos, "txn_id", rec)?;
                pos += 8 + ts;
                match cur.take() {
                    Some(t) if t.id == id => out.push(t),
                    Some(t) => {
                        return Err((
                            at,
                            format!(
                                "record {rec}: commit of transaction {id:#x} inside transaction {:#x}",
                                t.id
                            ),
                        ));
                    }
                    None => {
                        return Err((
                            at,
                            format!(
                                "record {rec}: commit of transaction {id:#x}, which never started"
                            ),
                        ));
                    }
                }
            }
            b'W' | b'R' => {
                let read = op == b'R';
                let writer = if read {
                    let w = i64_at(pos, "writer_txn_id", rec)?;
                    pos += 8;
                    w
                } else {
                    0
                };
                let write_id = i64_at(pos, "write_id", rec)?;
                let key = i64_at(pos + 8, "key_hash", rec)?;
                let value = i64_at(pos + 16, "value_hash", rec)?;
                pos += 24;
                let Some(t) = cur.as_mut() else {
                    return Err((
                        at,
                        format!("record {rec}: a read or write outside any transaction"),
                    ));
                };
                t.records.push(Record {
                    kind: if read { RawKind::Read } else { RawKind::Write },
                    key,
                    write_id,
                    value,
                    writer,
                    offset: at,
                });
            }
            b'A' => {
                return Err((
                    at,
                    format!("record {rec}: an abort record, which Cobra's clients never write"),
                ));
            }
            c => {
                return Err((
                    at,
                    format!(
                        "record {rec}: unknown record type 0x{c:02x} (expected 'S', 'C', 'W' or 'R')"
                    ),
                ));
            }
        }
        rec += 1;
    }
    if let Some(t) = cur {
        return Err((
            t.offset,
            format!("transaction {:#x} never commits: truncated log", t.id),
        ));
    }
    Ok(out)
}
