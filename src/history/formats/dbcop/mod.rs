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
//! either write. [`Duplicates::Reject`] refuses such a file with both
//! records located; the other policies are the builder's, as for every
//! register format (`history::build::repeated`): by default
//! ([`Duplicates::Any`]) a read of such a pair may have observed any of
//! its writers (VeriStrong's hyper-polygraphs).

pub(crate) mod bincode;
pub(crate) mod hist;
pub(crate) mod json;

use rustc_hash::FxHashMap;

use crate::anomaly::Anomaly;
use crate::edn::Value;
use crate::error::{ParseError, Remedy};
use crate::history::build::{Arg, BuildOptions, Builder, RawKind, RawMop, RawTxn, TxnMeta};
use crate::history::formats::{IntMap, Notes, RegOp, RegisterTxn, register_notes, register_ops};
use crate::history::model::*;

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

/// Compiles a decoded dbcop history; a (variable, value) written twice is
/// refused here under [`Duplicates::Reject`] (with both events located),
/// and left to the builder's policy otherwise.
pub(crate) fn build(
    name: &str,
    d: DHistory,
    opts: BuildOptions,
    notes: &mut Notes,
) -> Result<(History, Vec<Anomaly>), ParseError> {
    if opts.workload == Some(Workload::ListAppend) {
        return Err(ParseError::new(
            0,
            "dbcop histories hold register reads and writes: they cannot be read as list-append",
        ));
    }
    if opts.duplicates == Duplicates::Reject {
        refuse_duplicates(&d)?;
    }
    let mut b = Builder::new(
        name,
        BuildOptions {
            workload: Some(Workload::RwRegister),
            zero_is_initial: true,
            duplicates: opts.duplicates,
        },
    );
    *b.values() = d.values;
    let mut raw = RawTxn::default();
    let mut failed = 0u64;
    let mut n = 0i64;
    for (s, txns) in d.sessions.iter().enumerate() {
        for txn in txns {
            raw.clear();
            for ev in &txn.events {
                if !ev.ok {
                    failed += 1;
                    continue;
                }
                let (kind, arg) = if ev.write {
                    (RawKind::Write, Arg::Val(ev.val.unwrap_or(Val::NIL)))
                } else {
                    (RawKind::Read, ev.val.map_or(Arg::Nil, Arg::Val))
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
    Ok(b.finish())
}

/// The first (variable, value) written twice, as dbcop refuses it: both
/// events located, in the terms of the tool whose files these are.
fn refuse_duplicates(d: &DHistory) -> Result<(), ParseError> {
    let mut first: FxHashMap<(Val, Val), (usize, usize, usize)> = FxHashMap::default();
    for (s, txns) in d.sessions.iter().enumerate() {
        for (t, txn) in txns.iter().enumerate() {
            for (e, ev) in txn.events.iter().enumerate() {
                if !(ev.write && ev.ok) {
                    continue;
                }
                let Some(v) = ev.val else { continue };
                let Some(&(s0, t0, e0)) = first.get(&(ev.var, v)) else {
                    first.insert((ev.var, v), (s, t, e));
                    continue;
                };
                let at = &d.sessions[s0][t0].events[e0];
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
                .with_related(at.offset, 1, "first written here")
                .with_remedy(Remedy::Duplicates));
            }
        }
    }
    Ok(())
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
    build(name, d, opts, notes).map_err(|e| locate(e, shape.as_ref()))
}
