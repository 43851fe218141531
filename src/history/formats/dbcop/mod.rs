//! What dbcop's three file formats share: the session / transaction / event
//! shape they decode to, its compilation into the model (with the policy
//! for duplicate writes), and the model's projection back to that shape.
//!
//! Semantics (dbcop's own, both generations): a write is named by its
//! (variable, value); value 0 with no explicit writer, or a `null` read, is
//! the initial state; a transaction that did not commit is aborted; an event
//! that did not succeed is skipped (dbcop and PolySI skip failed events).
//!
//! Duplicate writes. dbcop requires every (variable, value) to be written
//! once: the OOPSLA'19 verifier panics and the current one reports
//! `SameVersionWrite`, because a read of such a pair could have observed
//! either write. [`Duplicates::Reject`] (the default) refuses such a file
//! with both records located. [`Duplicates::LastWriter`] is what PolySI (and
//! so VeriStrong, whose benchmark files have them) does: reads resolve to
//! the writer that comes last in file order; the earlier writes stay in the
//! history, as committed writes nobody read, under fresh values -1, -2, ...
//! With it, a VALID verdict is sound (one choice of writers works) but an
//! INVALID one may be an artefact of the choice: `elle-si check` then
//! checks again under [`Duplicates::DropReads`], which leaves those reads
//! out, and a violation that survives holds whichever write was read;
//! otherwise the answer is unknown. [`Duplicates::Any`] is the exact
//! semantics (VeriStrong's hyper-polygraphs): every write keeps its value,
//! and a read of a duplicated pair records all the writes it may have
//! observed ([`History::candidates`]); the SI and serializability checkers
//! weigh every choice, the causal ones read the last valid writer and are
//! settled as under [`Duplicates::LastWriter`].

pub(crate) mod bincode;
pub(crate) mod hist;
pub(crate) mod json;

use rustc_hash::FxHashMap;

use crate::anomaly::{Anomaly, Datum, Field};
use crate::edn::Value;
use crate::error::{ParseError, Remedy};
use crate::history::build::{Arg, BuildOptions, Builder, RawKind, RawMop, RawTxn, TxnMeta};
use crate::history::formats::{IntMap, Notes, RegOp, RegisterTxn, register_notes, register_ops};
use crate::history::model::*;

/// What to do when two writes share a (variable, value).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Duplicates {
    /// Refuse the file, as dbcop does.
    #[default]
    Reject,
    /// Resolve reads to the last writer in file order, as PolySI does.
    LastWriter,
    /// Leave out every read of a duplicated pair (other than a
    /// transaction's read of its own write): what remains holds in every
    /// resolution, so a cycle in it is a cycle whichever write was read.
    DropReads,
    /// Keep every write under its value, and let a read of a duplicated
    /// pair have observed any committed final write of it by another
    /// transaction ([`History::candidates`]): the exact semantics.
    Any,
}

impl Duplicates {
    /// The policy of this name (`reject`, `last-writer`, `drop-reads`, `any`).
    pub fn parse(s: &str) -> Option<Duplicates> {
        match s {
            "reject" => Some(Duplicates::Reject),
            "last-writer" | "last" => Some(Duplicates::LastWriter),
            "drop-reads" => Some(Duplicates::DropReads),
            "any" => Some(Duplicates::Any),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DEvent {
    pub write: bool,
    pub var: Val,
    /// None: a read of the initial state (`null`, `==?`).
    pub val: Option<Val>,
    pub ok: bool,
    pub offset: usize,
}

impl DEvent {
    /// A successful event (the text and JSON formats record no failed
    /// ones), read at byte `offset`.
    pub fn done(write: bool, var: Val, val: Option<Val>, offset: usize) -> DEvent {
        DEvent {
            write,
            var,
            val,
            ok: true,
            offset,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DTxn {
    pub events: Vec<DEvent>,
    pub committed: bool,
    pub offset: usize,
    /// 1-based line in text formats, else 0.
    pub line: u32,
}

/// A decoded dbcop history: sessions of transactions, and the values table
/// its variables and large values are interned in.
#[derive(Debug, Default)]
pub(crate) struct DHistory {
    pub sessions: Vec<Vec<DTxn>>,
    pub values: Values,
    /// Whose files these are, for what is said of them.
    pub origin: Origin,
}

/// The tool whose files a [`DHistory`] was read from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Origin {
    #[default]
    Dbcop,
    /// Cobra's logs (and VeriStrong's), whose versions are named by value.
    Cobra,
}

impl Origin {
    /// Why a (variable, value) written twice is a problem, in its terms.
    fn why_unique(self) -> &'static str {
        match self {
            Origin::Dbcop => {
                "dbcop requires every (variable, value) write to be unique, since a read of it could have observed either"
            }
            Origin::Cobra => {
                "Cobra's logs name a version by its value, so a read of it could have observed either"
            }
        }
    }
}

impl DHistory {
    /// "session s, transaction t, event e" of a byte offset (1-based
    /// sessions, as dbcop numbers them; 0-based transactions and events).
    pub fn describe(&self, offset: usize) -> String {
        let mut best = None;
        for (s, txns) in self.sessions.iter().enumerate() {
            for (t, txn) in txns.iter().enumerate() {
                if txn.offset <= offset {
                    let e = txn.events.iter().rposition(|e| e.offset <= offset);
                    best = Some((s, t, e));
                }
            }
        }
        match best {
            Some((s, t, Some(e))) => format!("session {}, transaction {t}, event {e}", s + 1),
            Some((s, t, None)) => format!("session {}, transaction {t}", s + 1),
            None => "the header".into(),
        }
    }

    pub fn intern_u64(&mut self, v: u64) -> Val {
        match i64::try_from(v).ok().and_then(Val::int) {
            Some(x) => x,
            None => self.values.intern(crate::history::formats::u64_value(v)),
        }
    }
}

/// Compiles a decoded dbcop history.
pub(crate) fn build(
    name: &str,
    d: DHistory,
    opts: BuildOptions,
    dups: Duplicates,
    notes: &mut Notes,
) -> Result<(History, Vec<Anomaly>), ParseError> {
    if opts.workload == Some(Workload::ListAppend) {
        return Err(ParseError::new(
            0,
            "dbcop histories hold register reads and writes: they cannot be read as list-append",
        ));
    }
    let (renamed, ambiguous) = resolve_duplicates(&d, dups, notes)?;
    // Under `Any`, each fresh value and the value it stands for.
    let restore: FxHashMap<Val, Val> = if dups == Duplicates::Any {
        renamed
            .iter()
            .filter_map(|(&(s, t, e), &v)| d.sessions[s][t].events[e].val.map(|orig| (v, orig)))
            .collect()
    } else {
        FxHashMap::default()
    };
    let mut b = Builder::new(
        name,
        BuildOptions {
            workload: Some(Workload::RwRegister),
            zero_is_initial: true,
        },
    );
    *b.values() = d.values;
    let mut raw = RawTxn::default();
    let mut failed = 0u64;
    let mut n = 0i64;
    for (s, txns) in d.sessions.iter().enumerate() {
        for (t, txn) in txns.iter().enumerate() {
            raw.clear();
            for (e, ev) in txn.events.iter().enumerate() {
                if !ev.ok {
                    failed += 1;
                    continue;
                }
                let (kind, arg) = if ev.write {
                    let v = renamed
                        .get(&(s, t, e))
                        .copied()
                        .or(ev.val)
                        .unwrap_or(Val::NIL);
                    (RawKind::Write, Arg::Val(v))
                } else {
                    // A read of a value this transaction wrote earlier reads
                    // that write, whatever others wrote the same value.
                    let own = (0..e).rev().find(|&w| {
                        let we = &txn.events[w];
                        we.ok && we.write && we.var == ev.var && we.val == ev.val
                    });
                    let mine = own.and_then(|w| renamed.get(&(s, t, w)).copied());
                    if mine.is_none() && ev.val.is_some_and(|v| ambiguous.contains(&(ev.var, v))) {
                        continue;
                    }
                    let v = mine.or(ev.val);
                    (RawKind::Read, v.map_or(Arg::Nil, Arg::Val))
                };
                raw.mops.push(RawMop {
                    kind,
                    key: ev.var,
                    arg,
                    offset: ev.offset,
                });
            }
            let pos = OpPos {
                index: n,
                time: -1,
                line: txn.line,
                offset: txn.offset as u64,
            };
            n += 1;
            let meta = TxnMeta {
                status: if txn.committed {
                    Status::Committed
                } else {
                    Status::Aborted
                },
                process: s as i64 + 1,
                invoke: None,
                complete: pos,
                f: Val::NIL,
            };
            b.stats().ops += 1;
            b.stats().client_ops += 1;
            b.push_txn(meta, &raw)?;
        }
    }
    notes.count(failed, |s| {
        format!("failed event{s} (success = false) skipped, as dbcop and PolySI skip them")
    });
    let (mut h, mut anomalies) = b.finish();
    if !restore.is_empty() {
        attach_candidates(&mut h, &mut anomalies, &restore);
    }
    Ok((h, anomalies))
}

/// Under [`Duplicates::Any`]: gives the renamed writes (and their own
/// transactions' reads of them) their values back, and records for each
/// external read of a duplicated (key, value) the writes it may have
/// observed: the committed final writes of it by other transactions. Its
/// `from` becomes the last of them in file order (the guess the other
/// checkers read). A read with no such writer keeps the builder's writer,
/// whose anomaly (aborted or intermediate read) then holds whichever write
/// it observed. A read the builder took for a read of its own
/// transaction's later write (a `future-read`) may as well have observed
/// another transaction's write of the pair: it is no future read, but an
/// external read with those candidates.
fn attach_candidates(h: &mut History, anomalies: &mut Vec<Anomaly>, restore: &FxHashMap<Val, Val>) {
    let mut dup: rustc_hash::FxHashSet<(KeyId, Val)> = rustc_hash::FxHashSet::default();
    for m in h.mops.iter_mut() {
        if let Some(&orig) = restore.get(&m.val) {
            m.val = orig;
            if m.is_write() {
                dup.insert((m.key, orig));
            }
        }
    }
    let mut writers: FxHashMap<(KeyId, Val), Vec<MopId>> = FxHashMap::default();
    for (i, m) in h.mops.iter().enumerate() {
        if m.is_write() && dup.contains(&(m.key, m.val)) {
            writers.entry((m.key, m.val)).or_default().push(i as MopId);
        }
    }
    let another = |h: &History, r: MopId, w: MopId| {
        let (rm, wm) = (&h.mops[r as usize], &h.mops[w as usize]);
        wm.txn != rm.txn
            && wm.has(flag::FINAL)
            && h.txns[wm.txn as usize].status == Status::Committed
    };
    anomalies.retain(|a| {
        let Some(&Datum::Mop(r)) = a.get(Field::Mop).filter(|_| a.name == "future-read") else {
            return true;
        };
        let m = h.mops[r as usize];
        let elsewhere = writers
            .get(&(m.key, m.val))
            .is_some_and(|ws| ws.iter().any(|&w| another(h, r, w)));
        if elsewhere {
            h.mops[r as usize].flags |= flag::EXTERNAL;
        }
        !elsewhere
    });
    for i in 0..h.mops.len() {
        let m = h.mops[i];
        if !m.is_read() || !m.has(flag::EXTERNAL) {
            continue;
        }
        let Some(ws) = writers.get(&(m.key, m.val)) else {
            continue;
        };
        let valid: Vec<MopId> = ws
            .iter()
            .copied()
            .filter(|&w| another(h, i as MopId, w))
            .collect();
        if let Some(&last) = valid.last() {
            h.mops[i].from = last;
        }
        if valid.len() > 1 {
            h.candidates.insert(i as MopId, valid);
        }
    }
}

/// (session, transaction, event) indices.
type EventAt = (usize, usize, usize);

/// Finds writes sharing a (variable, value) and applies the policy: an
/// error, or fresh values for all but the last writer of each pair (for
/// [`Duplicates::DropReads`], for all, and the pairs whose other reads are
/// to be left out). A transaction's reads of its own such write follow it
/// to the fresh value.
#[allow(clippy::type_complexity)]
fn resolve_duplicates(
    d: &DHistory,
    dups: Duplicates,
    notes: &mut Notes,
) -> Result<(FxHashMap<EventAt, Val>, rustc_hash::FxHashSet<(Val, Val)>), ParseError> {
    let mut writers: FxHashMap<(Val, Val), Vec<EventAt>> = FxHashMap::default();
    for (s, txns) in d.sessions.iter().enumerate() {
        for (t, txn) in txns.iter().enumerate() {
            for (e, ev) in txn.events.iter().enumerate() {
                if !(ev.write && ev.ok) {
                    continue;
                }
                let Some(v) = ev.val else { continue };
                let w = writers.entry((ev.var, v)).or_default();
                if let (Duplicates::Reject, Some(&(s0, t0, e0))) = (dups, w.first()) {
                    let first = &d.sessions[s0][t0].events[e0];
                    return Err(ParseError::new(
                        ev.offset,
                        format!(
                            "variable {} is written the value {} twice (session {}, transaction {t}, event {e}; first by session {}, transaction {t0}, event {e0}): {}",
                            d.values.get(ev.var),
                            d.values.get(v),
                            s + 1,
                            s0 + 1,
                            d.origin.why_unique()
                        ),
                    )
                    .with_related(first.offset, 1, "first written here")
                    .with_remedy(Remedy::DbcopDuplicates));
                }
                w.push((s, t, e));
            }
        }
    }
    let mut renamed = FxHashMap::default();
    let mut pairs = 0u64;
    let mut next = -1i64;
    let mut ambiguous = rustc_hash::FxHashSet::default();
    let mut all: Vec<(&(Val, Val), &Vec<EventAt>)> =
        writers.iter().filter(|(_, w)| w.len() > 1).collect();
    all.sort_unstable_by_key(|(_, w)| *w);
    for (pair, w) in all {
        pairs += 1;
        let renamed_here = if dups == Duplicates::DropReads {
            ambiguous.insert(*pair);
            &w[..]
        } else {
            &w[..w.len() - 1]
        };
        for &at in renamed_here {
            if let Some(v) = Val::int(next) {
                renamed.insert(at, v);
            }
            next -= 1;
        }
    }
    if pairs > 0 {
        notes.duplicates = Some(dups);
    }
    // The notes say what was met and what was done with it (the fact
    // itself travels as `Notes::duplicates`).
    let met = if pairs == 1 {
        "1 (variable, value) pair is written by more than one event".to_string()
    } else {
        format!("{pairs} (variable, value) pairs are written by more than one event")
    };
    // Fresh values -1 down to `next + 1`.
    let fresh = |n: usize| {
        if n == 1 {
            "under the fresh value -1".to_string()
        } else {
            format!("under fresh values -1 down to {}", next + 1)
        }
    };
    if pairs > 0 && dups == Duplicates::Any {
        notes.add(format!(
            "{met}: a read of one may have observed any of its writers (serializability and SI weigh every choice; causal levels read the last)"
        ));
    } else if pairs > 0 && dups == Duplicates::DropReads {
        notes.add(format!(
            "{met}: their writes kept {}, the other transactions' reads of them left out",
            fresh(renamed.len())
        ));
    } else if pairs > 0 {
        let n = renamed.len();
        notes.add(format!(
            "{met}: reads of them resolved to the last writer in file order (PolySI's choice); the {n} earlier write{} kept, unread, {}",
            if n == 1 { "" } else { "s" },
            fresh(n)
        ));
    }
    Ok((renamed, ambiguous))
}

/// One transaction as dbcop writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OutTxn {
    pub committed: bool,
    /// (write, variable, value); value None = read of the initial state.
    pub events: Vec<(bool, u64, Option<u64>)>,
}

/// The model as dbcop sessions, with integer variables and values (see
/// [`crate::history::formats::RegisterTxn`] for statuses; value 0 is renumbered, since it
/// names the initial state).
pub(crate) struct Projection {
    pub sessions: Vec<Vec<OutTxn>>,
    pub keys: IntMap,
    pub vals: IntMap,
    /// Version orders of list-append keys: (variable, values in order).
    pub orders: Vec<(u64, Vec<u64>)>,
    /// String keys that the text form can keep as names.
    pub key_names: FxHashMap<u64, String>,
}

pub(crate) fn project(h: &History, target: &str, notes: &mut Notes) -> Projection {
    register_notes(h, target, notes);
    // Variables renumbered after the largest kept: dbcop sizes its tables
    // by `n_variable`.
    let written = h
        .mops
        .iter()
        .filter(|m| m.is_write() || RegisterTxn::of(h.txns[m.txn as usize].status).keeps_reads());
    let mut keys = IntMap::from(
        true,
        IntMap::after_kept(true, written.map(|m| h.keys[m.key as usize])),
    );
    let mut vals = IntMap::new(false);
    // Sessions in the order of their first transaction written, as the text
    // format orders them; sessions left with nothing to write are left out.
    let mut sessions: Vec<(TxnId, Vec<OutTxn>)> = Vec::with_capacity(h.sessions.len());
    let mut ops = Vec::new();
    let mut empty = 0u64;
    for s in &h.sessions {
        let mut out = Vec::with_capacity(s.txns.len());
        let mut first = None;
        for &t in &s.txns {
            register_ops(h, t, &mut ops);
            if ops.is_empty() {
                empty += 1;
                continue;
            }
            first.get_or_insert(t);
            let events = ops
                .iter()
                .map(|op| match *op {
                    RegOp::Write { key, val } => (true, keys.get(key), Some(vals.get(val))),
                    RegOp::Read { key, val } => (false, keys.get(key), val.map(|v| vals.get(v))),
                })
                .collect();
            out.push(OutTxn {
                committed: RegisterTxn::of(h.txns[t as usize].status) != RegisterTxn::AbortedWrites,
                events,
            });
        }
        if let Some(first) = first {
            sessions.push((first, out));
        }
    }
    sessions.sort_by_key(|s| s.0);
    let sessions: Vec<Vec<OutTxn>> = sessions.into_iter().map(|s| s.1).collect();
    notes.count(empty, |s| {
        format!("transaction{s} with nothing to write left out (empty, or reads of an aborted or indeterminate transaction only)")
    });
    let mut key_names = FxHashMap::default();
    for (k, &kv) in h.keys.iter().enumerate() {
        if let Value::String(name) = h.key_value(k as KeyId)
            && is_ident(&name)
            && !matches!(crate::history::formats::name_value(&name), Value::Int(_))
        {
            // Only keys written (the others were given no number).
            if let Some(n) = keys.given(kv) {
                key_names.insert(n, name);
            }
        }
    }
    let mut orders = Vec::new();
    if h.workload == Some(Workload::ListAppend) {
        for (k, o) in h.orders.iter().enumerate() {
            if !o.elems.is_empty() {
                let key = keys.get(h.keys[k]);
                orders.push((key, o.elems.iter().map(|&v| vals.get(v)).collect()));
            }
        }
    }
    Projection {
        sessions,
        keys,
        vals,
        orders,
        key_names,
    }
}

/// Whether a name is a variable of dbcop's text form.
pub(crate) fn is_ident(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

impl Projection {
    /// Notes what was renumbered; `named`: the target writes the keys of
    /// [`Projection::key_names`] by their names (dbcop's text form).
    pub fn renumber_notes(&self, notes: &mut Notes, named: bool) {
        let kept = if named {
            self.key_names.len() as u64
        } else {
            0
        };
        notes.count(self.keys.renumbered() - kept, |s| {
            format!(
                "key{s} given new numbers, from {} up (the format holds only non-negative integers below 10^18)",
                self.keys.base
            )
        });
        notes.count(self.vals.renumbered(), |s| {
            format!("value{s} given new numbers, from 10^18 up (the format holds only positive integers below 10^18: 0 is dbcop's initial state)")
        });
    }

    pub fn txns(&self) -> usize {
        self.sessions.iter().map(Vec::len).sum()
    }

    pub fn events(&self) -> usize {
        self.sessions.iter().flatten().map(|t| t.events.len()).sum()
    }

    pub fn max_var(&self) -> Option<u64> {
        self.sessions
            .iter()
            .flatten()
            .flat_map(|t| t.events.iter().map(|e| e.1))
            .max()
    }
}

/// A model value for a dbcop variable written as text.
pub(crate) fn var_value(d: &mut DHistory, name: &str) -> Val {
    match crate::history::formats::name_value(name) {
        Value::Int(i) => match Val::int(i) {
            Some(v) => v,
            None => d.values.intern(Value::Int(i)),
        },
        v => d.values.intern(v),
    }
}

/// Which of dbcop's files.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Bincode,
    Json,
    Hist,
}

/// Reads and compiles a dbcop history of any of its three formats.
pub(crate) fn read(
    source: &std::sync::Arc<crate::source::Source>,
    kind: Kind,
    opts: BuildOptions,
    dups: Duplicates,
    notes: &mut Notes,
) -> Result<(History, Vec<Anomaly>), crate::error::Error> {
    let name = source.name();
    let bytes = source.bytes();
    let decoded = match kind {
        Kind::Bincode => bincode::decode(bytes).map(|(_, d)| d),
        Kind::Json => json::decode(bytes),
        Kind::Hist => hist::decode(bytes),
    };
    let locate = |e: ParseError, d: Option<&DHistory>| -> crate::error::Error {
        if kind == Kind::Bincode {
            let msg = match d {
                Some(d) if !e.message.contains("session ") => {
                    format!("{} ({})", e.message, d.describe(e.offset))
                }
                _ => e.message.clone(),
            };
            crate::history::formats::binary_parse_error(name, e, msg).into()
        } else {
            e.locate(source).into()
        }
    };
    let d = decoded.map_err(|e| locate(e, None))?;
    // Kept for locating build errors in a binary file.
    let shape = (kind == Kind::Bincode).then(|| DHistory {
        sessions: d.sessions.clone(),
        values: Values::default(),
        origin: d.origin,
    });
    build(name, d, opts, dups, notes).map_err(|e| locate(e, shape.as_ref()))
}
