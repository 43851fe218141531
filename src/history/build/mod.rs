//! Compiles transactions, as the format readers hand them over one by one,
//! into the [`History`] model.
//!
//! Everything that needs only one transaction at a time happens here, while
//! its micro-ops (and the full lists its reads returned) are at hand:
//! workload detection, internal consistency, future reads, and for
//! list-append the per-key version order, grown from the longest read seen so
//! far. Keeping only the longest list per key (plus the length of each read)
//! is what lets a 100 MB list-append history compile in a few tens of MB: a
//! read that is a prefix of the order is fully described by its length.
//!
//! Data flow: a reader fills a [`RawTxn`] (see [`raw`]) and calls
//! [`Builder::push_txn`] for each transaction; the builder gives each key an
//! id ([`tables`]), settles the workload from the first telling micro-op,
//! checks each read against the transaction's own reads and writes
//! ([`internal`]), grows each list key's version order from its reads, and
//! leaves reads pending until [`Builder::finish`] ([`finish`]) resolves them
//! to their writes and settles the orders. [`memory`] holds the cache and
//! page hints that keep this fast on large histories.

mod finish;
mod internal;
mod memory;
mod raw;
mod repeated;
mod tables;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::anomaly::{Anomaly, Datum, Field};
use crate::error::{ParseError, Remedy};
use crate::history::model::*;

use internal::{KeyStates, Known, internal_check};
use memory::{advise_huge, prefetch};
pub use raw::{Arg, ListBase, ListHint, RawKind, RawMop, RawTxn, TxnMeta};
pub(crate) use repeated::drop_ambiguous;
use tables::{FIRST_CAPACITY, KeyIndex, OrderText, WriteIndex, grow, last_element};

/// Placeholder for a committed read not yet resolved to its write.
const PENDING: u32 = u32::MAX - 3;

/// Slice equality that compares in blocks rather than stopping at each
/// element (the common case is equal lists).
#[inline]
fn same_vals(a: &[Val], b: &[Val]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        if x.iter().zip(y).fold(false, |d, (p, q)| d | (p != q)) {
            return false;
        }
    }
    ca.remainder() == cb.remainder()
}

/// Options a reader passes on.
#[derive(Copy, Clone, Debug, Default)]
pub struct BuildOptions {
    /// Forced by `-w`; otherwise detected from the micro-ops.
    pub workload: Option<Workload>,
    /// The text format's convention: a read of 0 that nobody wrote observes
    /// the initial state.
    pub zero_is_initial: bool,
    /// Register values written more than once to a key (see
    /// [`Duplicates`]).
    pub duplicates: Duplicates,
}

pub struct Builder {
    h: History,
    opts: BuildOptions,
    /// The first micro-op that fixed the workload.
    evidence: Option<(Workload, usize)>,
    key_index: KeyIndex,
    write_index: WriteIndex,
    session_index: FxHashMap<i64, u32>,
    /// Irregular (non-prefix) list reads, per key.
    incompatible: FxHashMap<KeyId, Vec<MopId>>,
    anomalies: Vec<Anomaly>,
    kstate: KeyStates,
    txn_writes: Vec<(usize, KeyId, Val)>,
    /// The key of each micro-op of the transaction being compiled.
    txn_keys: Vec<KeyId>,
    /// By key: its version order's text, for [`Self::list_base`].
    texts: Vec<OrderText>,
    /// A list read's full elements, when they are needed whole.
    scratch: Vec<Val>,
    /// The capacity of `h.mops` when it was last given to [`advise_huge`].
    mops_advised: usize,
    /// Register (key, value) pairs written more than once (allowed unless
    /// [`Duplicates::Reject`]), settled in [`Builder::finish`].
    repeated: FxHashSet<(KeyId, Val)>,
}

impl Builder {
    pub fn new(name: impl Into<String>, opts: BuildOptions) -> Builder {
        let h = History {
            name: name.into(),
            workload: opts.workload,
            ..History::default()
        };
        Builder {
            h,
            opts,
            evidence: None,
            key_index: KeyIndex::default(),
            write_index: WriteIndex::default(),
            session_index: FxHashMap::default(),
            incompatible: FxHashMap::default(),
            anomalies: Vec::new(),
            kstate: KeyStates::default(),
            txn_writes: Vec::new(),
            txn_keys: Vec::new(),
            texts: Vec::new(),
            scratch: Vec::new(),
            mops_advised: 0,
            repeated: FxHashSet::default(),
        }
    }

    pub fn name(&self) -> String {
        self.h.name.clone()
    }

    pub fn options(&self) -> BuildOptions {
        self.opts
    }

    pub fn values(&mut self) -> &mut Values {
        &mut self.h.values
    }

    pub fn stats(&mut self) -> &mut Stats {
        &mut self.h.stats
    }

    fn key(&mut self, k: Val) -> KeyId {
        if let Some(id) = self.key_index.get(k) {
            return id;
        }
        let id = self.h.keys.len() as KeyId;
        self.h.keys.push(k);
        self.h.orders.push(VersionOrder::default());
        self.key_index.insert(k, id);
        self.write_index.add_key();
        self.texts.push(OrderText::fresh());
        id
    }

    /// The first of two steps that load what compiling `raw` will touch:
    /// asks for its keys' entries in the per-key tables.
    #[inline]
    pub fn prefetch_entries(&self, raw: &RawTxn) {
        for m in &raw.mops {
            let Some(k) = self.key_index.get(m.key) else {
                continue;
            };
            let k = k as usize;
            match m.kind {
                RawKind::Read => {
                    prefetch(self.texts.as_ptr().wrapping_add(k));
                    prefetch(self.h.orders.as_ptr().wrapping_add(k));
                }
                _ => prefetch(self.write_index.dense.as_ptr().wrapping_add(k)),
            }
        }
    }

    /// The second step (some time after the first): asks for what those
    /// entries point to, the keys' version orders (their ends, where reads
    /// add to them) and texts (as far as `lists`, (micro-op, text length)
    /// pairs, will compare them), and the write index's entries.
    #[inline]
    pub fn prefetch_data(&self, raw: &RawTxn, lists: impl Iterator<Item = (usize, usize)>) {
        for (i, len) in lists {
            let Some(k) = raw.mops.get(i).and_then(|m| self.key_index.get(m.key)) else {
                continue;
            };
            // A read no longer than the known text is (most likely) a
            // prefix of the order, and compiles without touching it.
            let mut grows = true;
            if let Some(t) = self.texts.get(k as usize) {
                let n = len.min(t.text.len()).min(256);
                for off in (0..n).step_by(64) {
                    prefetch(t.text.as_ptr().wrapping_add(off));
                }
                grows = !t.ok || len > t.text.len();
            }
            if grows && let Some(o) = self.h.orders.get(k as usize) {
                prefetch(
                    o.elems
                        .as_ptr()
                        .wrapping_add(o.elems.len().saturating_sub(1)),
                );
            }
        }
        for m in &raw.mops {
            if m.kind != RawKind::Read
                && let Arg::Val(v) = m.arg
                && let Some(k) = self.key_index.get(m.key)
                && let Some((ids, _)) = self.write_index.dense.get(k as usize)
                && let Some(i) = v.as_int().and_then(|i| usize::try_from(i).ok())
            {
                prefetch(ids.as_ptr().wrapping_add(i.min(ids.len())));
            }
        }
    }

    /// Matches the text of a list read (between its brackets) of key `key`
    /// against the text of the key's version order, as far as it is known:
    /// a read that spells a prefix of the order needs no parsing, and one
    /// that extends it needs only its new elements parsed. Exact for a
    /// `text` of integers separated by single spaces; any other text, and
    /// every text before the workload is known to be list-append, gives
    /// [`ListBase::Unknown`]. `spaces` is the number of spaces in `text`
    /// (the reader counted them while checking it).
    #[inline]
    pub fn list_base(&self, key: Val, text: &[u8], spaces: u32) -> ListBase {
        if self.h.workload != Some(Workload::ListAppend) || text.is_empty() {
            return ListBase::Unknown;
        }
        let Some(k) = self.key_index.get(key) else {
            return ListBase::Unknown;
        };
        let Some(t) = self.texts.get(k as usize).filter(|t| t.ok) else {
            return ListBase::Unknown;
        };
        let known = t.text.as_slice();
        if text.len() <= known.len() {
            if known.starts_with(text)
                && known.get(text.len()).is_none_or(|&c| c == b' ')
                && let Some(last) = last_element(text)
            {
                return ListBase::Prefix {
                    base: 1 + spaces,
                    last,
                };
            }
        } else if known.is_empty() {
            return ListBase::Grow { base: 0, skip: 0 };
        } else if text.len() > known.len() + 1
            && text.starts_with(known)
            && text[known.len()] == b' '
        {
            return ListBase::Grow {
                base: t.count,
                skip: known.len() + 1,
            };
        }
        ListBase::Unknown
    }

    fn session(&mut self, process: i64) -> u32 {
        if let Some(&s) = self.session_index.get(&process) {
            return s;
        }
        let s = self.h.sessions.len() as u32;
        self.h.sessions.push(Session {
            process,
            txns: Vec::new(),
        });
        self.session_index.insert(process, s);
        s
    }

    /// Notes what workload a micro-op implies; refuses a mix.
    #[inline]
    fn evidence(&mut self, w: Workload, offset: usize, what: &str) -> Result<(), ParseError> {
        // The common case: the workload detected, and this micro-op agrees.
        if self.opts.workload.is_none() && self.evidence.is_some_and(|(seen, _)| seen == w) {
            return Ok(());
        }
        self.evidence_slow(w, offset, what)
    }

    #[cold]
    #[inline(never)]
    fn evidence_slow(&mut self, w: Workload, offset: usize, what: &str) -> Result<(), ParseError> {
        if let Some(forced) = self.opts.workload {
            if forced != w {
                return Err(ParseError::new(
                    offset,
                    format!("{what} does not belong in a {} history", forced.name()),
                )
                .with_remedy(Remedy::UnfixWorkload(forced.name())));
            }
            return Ok(());
        }
        match self.evidence {
            None => {
                self.evidence = Some((w, offset));
                self.h.workload = Some(w);
                Ok(())
            }
            Some((seen, _)) if seen == w => Ok(()),
            Some((seen, at)) => Err(ParseError::new(
                offset,
                format!(
                    "{what}: this history mixes {} and {} micro-ops",
                    seen.name(),
                    w.name()
                ),
            )
            .with_related(at, 1, format!("{} micro-op", seen.name()))
            .with_help("a history is either list-append or rw-register")),
        }
    }

    /// Compiles one transaction.
    pub fn push_txn(&mut self, meta: TxnMeta, raw: &RawTxn) -> Result<TxnId, ParseError> {
        self.push_txn_in(meta, raw, &[])
    }

    /// Compiles one transaction whose [`RawTxn::hints`] point into `src`.
    pub fn push_txn_in(
        &mut self,
        meta: TxnMeta,
        raw: &RawTxn,
        src: &[u8],
    ) -> Result<TxnId, ParseError> {
        let committed = meta.status == Status::Committed;
        for m in &raw.mops {
            match (m.kind, m.arg) {
                (RawKind::Append, _) => {
                    self.evidence(Workload::ListAppend, m.offset, "an append")?
                }
                (RawKind::Write, _) => {
                    self.evidence(Workload::RwRegister, m.offset, "a register write")?
                }
                (RawKind::Read, Arg::List { .. })
                    if committed && self.opts.workload != Some(Workload::RwRegister) =>
                {
                    self.evidence(Workload::ListAppend, m.offset, "a read of a list")?
                }
                (RawKind::Read, Arg::Val(_)) if committed => {
                    self.evidence(Workload::RwRegister, m.offset, "a read of a single value")?
                }
                _ => {}
            }
        }
        let list_mode = self.h.workload == Some(Workload::ListAppend);

        let tid = self.h.txns.len() as TxnId;
        let session = self.session(meta.process);
        let seq = self.h.sessions[session as usize].txns.len() as u32;
        self.h.sessions[session as usize].txns.push(tid);
        if meta.status == Status::Indeterminate {
            // An indeterminate op ends its process's session, as Jepsen
            // retires a process whose op timed out: it may take effect
            // after what the process does next, so it orders nothing
            // after it (Elle orders a process by its ok ops). What the
            // process does next is a session of its own.
            self.session_index.remove(&meta.process);
        }
        let start = self.h.mops.len() as MopId;
        // Grown here, so that the new pages are advised before any is used.
        self.h.mops.reserve(raw.mops.len());
        if self.h.mops.capacity() != self.mops_advised {
            self.mops_advised = self.h.mops.capacity();
            advise_huge(&self.h.mops);
        }

        let mut keys = std::mem::take(&mut self.txn_keys);
        keys.clear();
        for m in &raw.mops {
            keys.push(self.key(m.key));
        }
        // Own writes, for future reads.
        self.txn_writes.clear();
        for (i, m) in raw.mops.iter().enumerate() {
            if m.kind != RawKind::Read
                && let Arg::Val(v) = m.arg
            {
                self.txn_writes.push((i, keys[i], v));
            }
        }
        self.warm(raw, &keys);
        let mut kstate = std::mem::take(&mut self.kstate);
        kstate.assign(&keys, self.h.keys.len());
        for &(j, _, _) in &self.txn_writes {
            kstate.get(j).last_write_at = j + 1;
        }
        let mut hints = raw.hints.as_slice();

        for (i, m) in raw.mops.iter().enumerate() {
            let key = keys[i];
            let id = self.h.mops.len() as MopId;
            let st = kstate.get(i);
            match m.kind {
                RawKind::Append | RawKind::Write => {
                    let v = match m.arg {
                        Arg::Val(v) => v,
                        Arg::Nil => Val::NIL,
                        Arg::List { start, len } => self.list_value(raw, start, len),
                    };
                    if v == Val::NIL && m.kind == RawKind::Write {
                        return Err(ParseError::new(
                            m.offset,
                            "a register write of nil: nil is a register's initial, unwritten \
                             value, so a read of nil could not tell this write from the initial \
                             state",
                        )
                        .with_help(
                            "write a value other than nil (Elle reads nil as unwritten too)",
                        ));
                    }
                    // A register value written again: a read of it may
                    // have observed either write (unless refused).
                    let repeats =
                        m.kind == RawKind::Write && self.opts.duplicates != Duplicates::Reject;
                    // Refused: a register's policy could decide it.
                    let refused = |mut e: ParseError| {
                        if m.kind == RawKind::Write {
                            e.remedy = Some(Remedy::Duplicates);
                        }
                        e
                    };
                    if st.own.contains(&v) && !repeats {
                        return Err(refused(ParseError::new(
                            m.offset,
                            format!(
                                "value {} written to key {} twice in one transaction",
                                self.h.values.get(v),
                                self.h.values.get(m.key)
                            ),
                        )));
                    }
                    if let Some(prev) = self.write_index.get(key, v) {
                        if repeats {
                            self.repeated.insert((key, v));
                        } else {
                            let pt = &self.h.txns[self.h.mops[prev as usize].txn as usize];
                            let verb = if m.kind == RawKind::Append {
                                "appended"
                            } else {
                                "written"
                            };
                            return Err(refused(
                                ParseError::new(
                                    m.offset,
                                    format!(
                                        "value {} {verb} to key {} twice: values must be unique per key",
                                        self.h.values.get(v),
                                        self.h.values.get(m.key)
                                    ),
                                )
                                .with_related(
                                    pt.complete.offset as usize,
                                    1,
                                    "written before here",
                                ),
                            ));
                        }
                    }
                    // Registers may be many, each written a few times:
                    // their tables grow from small.
                    let first = if list_mode { FIRST_CAPACITY } else { 0 };
                    self.write_index.insert(key, v, id, first);
                    st.own.push(v);
                    st.last_write = Some(id);
                    st.read_last = false;
                    if let Some(Known::List { plus, .. }) = &mut st.known {
                        plus.push(v);
                    }
                    self.h.mops.push(Mop {
                        val: v,
                        key,
                        txn: tid,
                        from: 0,
                        len: 0,
                        kind: MopKind::Write,
                        flags: 0,
                    });
                }
                RawKind::Read if !committed => {
                    self.h.mops.push(Mop {
                        val: Val::NIL,
                        key,
                        txn: tid,
                        from: from::UNKNOWN,
                        len: 0,
                        kind: MopKind::Read,
                        flags: 0,
                    });
                }
                RawKind::Read => {
                    let mut flags = if st.own.is_empty() { flag::EXTERNAL } else { 0 };
                    if list_mode && m.arg == Arg::Nil {
                        flags |= flag::NIL;
                    }
                    while hints.first().is_some_and(|h| (h.mop as usize) < i) {
                        hints = &hints[1..];
                    }
                    let hint = hints.first().filter(|h| h.mop as usize == i);
                    let base = hint.map_or(0, |h| h.base);
                    // The list is the version order's first `base`
                    // elements, then `tail`.
                    let tail: &[Val] = match m.arg {
                        Arg::List { start, len } => raw.list(start, len),
                        _ => &[],
                    };
                    let future_here = st.last_write_at > i + 1;
                    let check_here = st.read_last || !st.own.is_empty();
                    // The whole list, when anything needs it whole.
                    let mut scratch = std::mem::take(&mut self.scratch);
                    scratch.clear();
                    let whole = base == 0 || (!future_here && !check_here && list_mode);
                    if !whole {
                        let order = &self.h.orders[key as usize].elems;
                        scratch.extend_from_slice(&order[..(base as usize).min(order.len())]);
                        scratch.extend_from_slice(tail);
                    }
                    let full: &[Val] = if base == 0 { tail } else { &scratch };
                    let (val, len) = match m.arg {
                        Arg::Nil => (Val::NIL, 0),
                        Arg::Val(v) => (v, 0),
                        Arg::List { .. } if list_mode => {
                            let last = match tail.last() {
                                Some(&v) => v,
                                None if base > 0 => hint.map_or(Val::NIL, |h| h.last),
                                None => Val::NIL,
                            };
                            (last, base + tail.len() as u32)
                        }
                        Arg::List { .. } => (self.intern_list(full), 0),
                    };
                    if check_here {
                        // Internal consistency against what this transaction
                        // already read and wrote.
                        let order = &self.h.orders[key as usize].elems;
                        for (pattern, expected) in
                            internal_check(st, raw, order, list_mode, val, full)
                        {
                            self.anomalies.push(
                                Anomaly::new(crate::spec::AnomalyType::Internal)
                                    .pattern(pattern)
                                    .txn(tid)
                                    .field(Field::Op, Datum::Txn(tid))
                                    .field(Field::Mop, Datum::Mop(id))
                                    .field(Field::Expected, expected),
                            );
                        }
                    }
                    // A read of a write this transaction makes later (not
                    // a register read its own last write explains: a
                    // value it writes again).
                    let own_explains = !list_mode && st.own.last() == Some(&val);
                    let future = if future_here && !own_explains {
                        self.txn_writes.iter().find(|&&(j, k, w)| {
                            j > i
                                && k == key
                                && if list_mode {
                                    full.contains(&w)
                                } else {
                                    w == val
                                }
                        })
                    } else {
                        None
                    };
                    if let Some(&(_, _, w)) = future {
                        flags &= !flag::EXTERNAL;
                        self.anomalies.push(
                            Anomaly::new(crate::spec::AnomalyType::FutureRead)
                                .pattern(crate::spec::Pattern::FutureRead)
                                .txn(tid)
                                .field(Field::Op, Datum::Txn(tid))
                                .field(Field::Mop, Datum::Mop(id))
                                .field(Field::Element, Datum::Val(w)),
                        );
                    }
                    st.known = Some(match m.arg {
                        Arg::List { start, len } if list_mode => Known::List {
                            base,
                            start,
                            len,
                            plus: Vec::new(),
                        },
                        // nil: an empty list.
                        _ if list_mode => Known::List {
                            base: 0,
                            start: 0,
                            len: 0,
                            plus: Vec::new(),
                        },
                        _ => Known::Reg(val),
                    });
                    st.read_last = true;
                    if list_mode {
                        let agrees = if base > 0 && tail.is_empty() {
                            // A known prefix: nothing to compare or add.
                            Some(false)
                        } else {
                            self.extend_order(key, base, tail)
                        };
                        match agrees {
                            Some(grew) => {
                                let text = hint.and_then(|h| src.get(h.text.0..h.text.1));
                                self.note_text(key, len, grew, text);
                            }
                            None => {
                                flags |= flag::IRREGULAR;
                                if base > 0 && whole {
                                    let order = &self.h.orders[key as usize].elems;
                                    scratch.extend_from_slice(&order[..base as usize]);
                                    scratch.extend_from_slice(tail);
                                }
                                let full = if base == 0 { tail } else { &scratch };
                                self.h.irregular.insert(id, full.to_vec());
                                self.incompatible.entry(key).or_default().push(id);
                            }
                        }
                    }
                    self.scratch = scratch;
                    self.h.mops.push(Mop {
                        val,
                        key,
                        txn: tid,
                        from: PENDING,
                        len,
                        kind: MopKind::Read,
                        flags,
                    });
                }
            }
        }
        for st in kstate.used() {
            if let Some(w) = st.last_write {
                self.h.mops[w as usize].flags |= flag::FINAL;
            }
        }
        self.kstate = kstate;
        self.txn_keys = keys;
        let end = self.h.mops.len() as MopId;
        self.h.txns.push(Txn {
            status: meta.status,
            session,
            seq,
            start,
            end,
            invoke: meta.invoke,
            complete: meta.complete,
            f: meta.f,
        });
        Ok(tid)
    }

    /// Loads the per-key data that compiling the transaction's micro-ops
    /// will touch (a read's version order, a write's entry in the write
    /// index), all at once: keys are scattered, and the cache misses of
    /// independent loads overlap, where one micro-op at a time they would
    /// come one after another.
    #[inline]
    fn warm(&self, raw: &RawTxn, keys: &[KeyId]) {
        let mut touch = 0u64;
        let mut hints = raw.hints.as_slice();
        for (i, (m, &k)) in raw.mops.iter().zip(keys).enumerate() {
            match (m.kind, m.arg) {
                (RawKind::Read, Arg::List { len, .. }) => {
                    while hints.first().is_some_and(|h| (h.mop as usize) < i) {
                        hints = &hints[1..];
                    }
                    let base = hints
                        .first()
                        .filter(|h| h.mop as usize == i)
                        .map_or(0, |h| h.base as usize);
                    // A read of a known prefix touches no order.
                    if (base == 0 || len > 0)
                        && let Some(o) = self.h.orders.get(k as usize)
                        && let Some(e) = o.elems.get(base).or(o.elems.last())
                    {
                        touch ^= e.raw();
                    }
                }
                (RawKind::Append | RawKind::Write, Arg::Val(v)) => {
                    touch ^= u64::from(self.write_index.touch(k, v));
                }
                _ => {}
            }
        }
        std::hint::black_box(touch);
    }

    /// A list where a register value belongs: intern it whole.
    fn list_value(&mut self, raw: &RawTxn, start: u32, len: u32) -> Val {
        self.intern_list(raw.list(start, len))
    }

    fn intern_list(&mut self, list: &[Val]) -> Val {
        let items = list.iter().map(|&v| self.h.values.get(v)).collect();
        self.h.values.intern(crate::edn::Value::Vector(items))
    }

    /// Grows the key's version order with a read of its first `base`
    /// elements followed by `tail` (the order only grows while reading, so
    /// its first `base` elements are still those the read was matched
    /// against). Some(whether the order grew), or None when the read
    /// disagrees with it.
    fn extend_order(&mut self, key: KeyId, base: u32, tail: &[Val]) -> Option<bool> {
        let order = &mut self.h.orders[key as usize].elems;
        let base = base as usize;
        if base > order.len() {
            return None;
        }
        let n = (order.len() - base).min(tail.len());
        if !same_vals(&order[base..base + n], &tail[..n]) {
            return None;
        }
        if n < tail.len() {
            grow(order, tail.len() - n, FIRST_CAPACITY);
            order.extend_from_slice(&tail[n..]);
            return Some(true);
        }
        Some(false)
    }

    /// Keeps the key's [`OrderText`] in step with its version order, after a
    /// read of `len` elements spelt `text` (None: not in the spelling
    /// [`Self::list_base`] matches) agreed with it.
    fn note_text(&mut self, key: KeyId, len: u32, grew: bool, text: Option<&[u8]>) {
        let t = &mut self.texts[key as usize];
        if t.ok && !grew {
            return;
        }
        let count = self.h.orders[key as usize].elems.len() as u32;
        match text {
            Some(text) if len == count => {
                if !(t.ok && text.starts_with(&t.text)) {
                    t.text.clear();
                }
                let have = t.text.len();
                grow(&mut t.text, text.len() - have, 4 * FIRST_CAPACITY);
                t.text.extend_from_slice(&text[have..]);
                t.count = count;
                t.ok = true;
            }
            _ => t.ok = false,
        }
    }
}
