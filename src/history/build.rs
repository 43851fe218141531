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

use rustc_hash::{FxHashMap, FxHashSet};

use crate::anomaly::{Anomaly, Datum};
use crate::error::{ParseError, Remedy};
use crate::history::model::*;

/// A micro-op as a reader sees it, before compilation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RawKind {
    Append,
    Write,
    Read,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    Nil,
    Val(Val),
    /// Elements `elems[start..start + len]` of the [`RawTxn`].
    List {
        start: u32,
        len: u32,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawMop {
    pub kind: RawKind,
    pub key: Val,
    pub arg: Arg,
    /// Byte offset of the micro-op, for errors.
    pub offset: usize,
}

/// A reusable buffer for one transaction's micro-ops.
#[derive(Default, Debug, Clone)]
pub struct RawTxn {
    pub mops: Vec<RawMop>,
    pub elems: Vec<Val>,
    /// What a reader learnt of some list reads from their text (see
    /// [`Builder::list_base`]), in micro-op order. Only
    /// [`Builder::push_txn_in`] reads these; a read with none is whole in
    /// `elems`.
    pub hints: Vec<ListHint>,
}

/// A list read as a reader matched its text against its key's version
/// order: the list is the first `base` elements of the key's version order
/// (as it stood when the text was read), followed by the elements its
/// [`Arg::List`] holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ListHint {
    /// The read's index in [`RawTxn::mops`].
    pub mop: u32,
    pub base: u32,
    /// The list's last element, when `base > 0` and the arg holds none.
    pub last: Val,
    /// Byte range of the list's text (inside its brackets) in the source
    /// given to [`Builder::push_txn_in`]: integers of 1 to 8 digits
    /// separated by single spaces.
    pub text: (usize, usize),
}

/// What [`Builder::list_base`] found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ListBase {
    /// Nothing known: read the whole list.
    Unknown,
    /// The list is the version order's first `base` elements.
    Prefix { base: u32, last: Val },
    /// The list is the version order's first `base` elements, then the
    /// elements spelt from byte `skip` of the text on.
    Grow { base: u32, skip: usize },
}

impl RawTxn {
    pub fn clear(&mut self) {
        self.mops.clear();
        self.elems.clear();
        self.hints.clear();
    }

    pub fn list(&self, start: u32, len: u32) -> &[Val] {
        &self.elems[start as usize..(start + len) as usize]
    }
}

/// What a reader knows of a transaction besides its micro-ops.
#[derive(Copy, Clone, Debug)]
pub struct TxnMeta {
    pub status: Status,
    /// Jepsen process, or session id.
    pub process: i64,
    pub invoke: Option<OpPos>,
    pub complete: OpPos,
    pub f: Val,
}

/// Placeholder for a committed read not yet resolved to its write.
const PENDING: u32 = u32::MAX - 3;

#[derive(Default)]
struct KeyState {
    /// Own writes (or appends) to the key so far, in order.
    own: Vec<Val>,
    /// Last own write mop.
    last_write: Option<MopId>,
    /// The last read's result (list: a range of the raw elems; register: the
    /// value) and appends since it.
    known: Option<Known>,
    /// The key's previous micro-op in this transaction was a read.
    read_last: bool,
    /// 1 + the position of the transaction's last write of the key (0:
    /// none), set before the transaction is compiled: a read before it may
    /// be a future read.
    last_write_at: usize,
}

enum Known {
    /// The version order's first `base` elements, then raw
    /// `elems[start..start + len]`, then `plus`.
    List {
        base: u32,
        start: u32,
        len: u32,
        plus: Vec<Val>,
    },
    Reg(Val),
}

/// Per-transaction key states, kept between transactions so that their
/// buffers are reused rather than allocated for every transaction. Each
/// micro-op's state is settled before the transaction is compiled
/// ([`Self::assign`]): in a small transaction by looking for its key among
/// the micro-ops before it (all in cache), in a large one through a table
/// indexed by key id, its entries stamped with the transaction they belong
/// to (so nothing needs clearing between transactions).
#[derive(Default)]
struct KeyStates {
    /// By key id: (stamp, index in `pool`); current when the stamp is.
    slot: Vec<(u32, u32)>,
    stamp: u32,
    /// The state (index in `pool`) of each micro-op of the transaction.
    of: Vec<u32>,
    pool: Vec<KeyState>,
    used: usize,
}

/// Up to this many micro-ops, a transaction's keys are matched by a scan.
const SCAN_KEYS: usize = 64;

impl KeyStates {
    /// Starts a transaction whose micro-ops are on `keys`, among `0..nkeys`.
    fn assign(&mut self, keys: &[KeyId], nkeys: usize) {
        self.used = 0;
        self.of.clear();
        if keys.len() <= SCAN_KEYS {
            for (i, &k) in keys.iter().enumerate() {
                let s = match keys[..i].iter().position(|&x| x == k) {
                    Some(j) => self.of[j],
                    None => self.fresh(),
                };
                self.of.push(s);
            }
            return;
        }
        if self.slot.len() < nkeys {
            self.slot.resize(nkeys, (0, 0));
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Wrapped: no entry may look current.
            self.slot.fill((0, 0));
            self.stamp = 1;
        }
        for &k in keys {
            let e = self.slot[k as usize];
            let s = if e.0 == self.stamp {
                e.1
            } else {
                let s = self.fresh();
                self.slot[k as usize] = (self.stamp, s);
                s
            };
            self.of.push(s);
        }
    }

    /// A cleared state for the next key of the transaction.
    #[inline]
    fn fresh(&mut self) -> u32 {
        let i = self.used;
        self.used += 1;
        if i == self.pool.len() {
            self.pool.push(KeyState::default());
        } else {
            let st = &mut self.pool[i];
            st.own.clear();
            st.last_write = None;
            st.known = None;
            st.read_last = false;
            st.last_write_at = 0;
        }
        i as u32
    }

    /// The state of the transaction's micro-op `i`.
    #[inline]
    fn get(&mut self, i: usize) -> &mut KeyState {
        &mut self.pool[self.of[i] as usize]
    }

    fn used(&self) -> &[KeyState] {
        &self.pool[..self.used]
    }
}

/// The capacity a list-append key's growing tables (version order, write
/// index, order text: in elements, or 4 bytes an element) start with when
/// first used, rather than growing through 4, 8 and 16: each step is a
/// reallocation and a copy, for every key.
const FIRST_CAPACITY: usize = 16;

/// Makes room for `extra` more elements in a per-key table: at first for
/// `first` elements, then growing small tables fourfold rather than
/// twofold (ten thousand keys of about a hundred elements each otherwise
/// make some 70k reallocations, most of the allocator's time in a read).
/// Tables past a thousand elements grow as vectors do, so a long table
/// wastes no more than a vector would.
#[inline]
fn grow<T>(v: &mut Vec<T>, extra: usize, first: usize) {
    let need = v.len() + extra;
    if need > v.capacity() {
        let target = match v.capacity() {
            0 => first,
            c if c < 1024 => 4 * c,
            c => 2 * c,
        };
        v.reserve_exact(target.max(need) - v.len());
    }
}

/// No entry, in the dense tables below.
const NONE: u32 = u32::MAX;

/// Keys to their ids. Jepsen's keys are small integers: those are found by
/// indexing a vector (no hashing, and a table a few times smaller than a
/// hash map's); others by a hash map.
#[derive(Default)]
struct KeyIndex {
    dense: Vec<KeyId>,
    sparse: FxHashMap<Val, KeyId>,
}

impl KeyIndex {
    #[inline]
    fn get(&self, k: Val) -> Option<KeyId> {
        if let Some(i) = k.as_int()
            && let Ok(i) = usize::try_from(i)
            && let Some(&id) = self.dense.get(i)
            && id != NONE
        {
            return Some(id);
        }
        if self.sparse.is_empty() {
            return None;
        }
        self.sparse.get(&k).copied()
    }

    /// Adds a key that `get` did not find.
    fn insert(&mut self, k: Val, id: KeyId) {
        // The table stays within a few times the number of keys.
        let limit = 2 * id as usize + 1024;
        if !Self::put_dense(&mut self.dense, k, id, limit) {
            self.sparse.insert(k, id);
        }
        // Keys met early, while the table was small, move to it as it may
        // grow (or they would be hashed for every micro-op on them): each
        // time the number of keys doubles.
        if id.wrapping_add(1).is_power_of_two() && !self.sparse.is_empty() {
            let dense = &mut self.dense;
            self.sparse
                .retain(|&k, &mut id| !Self::put_dense(dense, k, id, limit));
        }
    }

    /// Puts (k, id) in the dense table if k is an integer below `limit`.
    fn put_dense(dense: &mut Vec<KeyId>, k: Val, id: KeyId, limit: usize) -> bool {
        let Some(i) = k.as_int().and_then(|i| usize::try_from(i).ok()) else {
            return false;
        };
        if i >= limit {
            return false;
        }
        if i >= dense.len() {
            dense.resize(i + 1, NONE);
        }
        dense[i] = id;
        true
    }
}

/// The write of each (key, value). Jepsen appends 1, 2, 3, ... to each key
/// (and writes small integers to registers): those are found by indexing a
/// per-key vector, which keeps the table compact and a key's writes
/// together; other values by a hash map.
#[derive(Default)]
struct WriteIndex {
    /// By key: the write of each small value, and how many there are.
    dense: Vec<(Vec<MopId>, u32)>,
    sparse: FxHashMap<(KeyId, Val), MopId>,
}

impl WriteIndex {
    fn add_key(&mut self) {
        self.dense.push((Vec::new(), 0));
    }

    #[inline]
    fn get(&self, k: KeyId, v: Val) -> Option<MopId> {
        if let Some(i) = v.as_int()
            && let Ok(i) = usize::try_from(i)
            && let Some((ids, _)) = self.dense.get(k as usize)
            && let Some(&id) = ids.get(i)
            && id != NONE
        {
            return Some(id);
        }
        if self.sparse.is_empty() {
            return None;
        }
        self.sparse.get(&(k, v)).copied()
    }

    /// Loads the entry of (k, v), or where it would go: for
    /// [`Builder::warm`].
    #[inline]
    fn touch(&self, k: KeyId, v: Val) -> u32 {
        let Some((ids, _)) = self.dense.get(k as usize) else {
            return 0;
        };
        match v.as_int().and_then(|i| usize::try_from(i).ok()) {
            Some(i) => ids.get(i).or(ids.last()).copied().unwrap_or(0),
            None => 0,
        }
    }

    /// Adds a write that `get` did not find; `first` is the capacity a
    /// key's table starts with (0: as a vector does).
    fn insert(&mut self, k: KeyId, v: Val, id: MopId, first: usize) {
        if let Some(i) = v.as_int()
            && let Ok(i) = usize::try_from(i)
            && let Some((ids, n)) = self.dense.get_mut(k as usize)
            // The key's table stays within about twice its writes.
            && i < 2 * *n as usize + 16
        {
            if i >= ids.len() {
                if first > 0 {
                    grow(ids, i + 1 - ids.len(), first);
                }
                ids.resize(i + 1, NONE);
            }
            ids[i] = id;
            *n += 1;
            return;
        }
        self.sparse.insert((k, v), id);
    }
}

/// A key's version order as a read spelt it: when `ok`, `text` reads as
/// exactly the order's `count` elements (integers of up to 8 digits
/// separated by single spaces). A later read whose text is a prefix of it
/// needs no parsing and no comparison: it is a prefix of the order.
#[derive(Default)]
struct OrderText {
    text: Vec<u8>,
    count: u32,
    ok: bool,
}

impl OrderText {
    fn fresh() -> OrderText {
        OrderText {
            text: Vec::new(),
            count: 0,
            ok: true,
        }
    }
}

/// The value of a list text's last element (the text is canonical, see
/// [`OrderText`]).
fn last_element(text: &[u8]) -> Option<Val> {
    let from = memchr::memrchr(b' ', text).map_or(0, |p| p + 1);
    let digits = &text[from..];
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        n = n * 10 + i64::from(d.wrapping_sub(b'0'));
    }
    Val::int(n)
}

/// Asks for the cache line at `p` (a hint: any address will do).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints at the cache; it reads nothing and
    // cannot fault, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the kernel to back a large vector with huge pages (2 MB on x86-64,
/// where Linux's default is to use them only where asked). The compiled
/// micro-ops of a 100 MB history are some 40 MB, written once from front to
/// back: in 4 KB pages that is ten thousand page faults, each clearing its
/// page, which cost the reader about 5% of its time. Only a hint: where the
/// kernel has no huge pages to give, nothing changes.
fn advise_huge<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < (4 << 20) {
            return;
        }
        let start = v.as_ptr() as usize;
        let from = start & !(PAGE - 1);
        let len = (start + bytes - from).next_multiple_of(PAGE);
        // SAFETY: MADV_HUGEPAGE changes how pages are backed, never their
        // contents; the range is the vector's own allocation, widened to
        // whole pages (a neighbour on a shared page gets the same hint).
        let _ = unsafe { libc::madvise(from as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

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

    pub fn workload(&self) -> Option<Workload> {
        self.h.workload
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
                    if st.own.contains(&v) {
                        return Err(ParseError::new(
                            m.offset,
                            format!(
                                "value {} written to key {} twice in one transaction",
                                self.h.values.get(v),
                                self.h.values.get(m.key)
                            ),
                        ));
                    }
                    if let Some(prev) = self.write_index.get(key, v) {
                        let pt = &self.h.txns[self.h.mops[prev as usize].txn as usize];
                        let verb = if m.kind == RawKind::Append {
                            "appended"
                        } else {
                            "written"
                        };
                        return Err(ParseError::new(
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
                        ));
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
                                Anomaly::new("internal")
                                    .pattern(pattern)
                                    .txn(tid)
                                    .field("op", Datum::Txn(tid))
                                    .field("mop", Datum::Mop(id))
                                    .field("expected", expected),
                            );
                        }
                    }
                    // A read of a write this transaction makes later.
                    let future = if future_here {
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
                            Anomaly::new("future-read")
                                .pattern("FutureRead")
                                .txn(tid)
                                .field("op", Datum::Txn(tid))
                                .field("mop", Datum::Mop(id))
                                .field("element", Datum::Val(w)),
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

    /// Resolves reads-from and version orders, and returns the history with
    /// the anomalies compilation found.
    pub fn finish(mut self) -> (History, Vec<Anomaly>) {
        let list_mode = self.h.workload == Some(Workload::ListAppend);
        let zero = Val::int(0);
        // In blocks, each loaded up front (see `warm`).
        const BLOCK: usize = 16;
        for m in 0..self.h.mops.len() {
            if m % BLOCK == 0 {
                let end = (m + BLOCK).min(self.h.mops.len());
                let mut touch = 0u32;
                for mop in &self.h.mops[m..end] {
                    if mop.from == PENDING {
                        touch ^= self.write_index.touch(mop.key, mop.val);
                    }
                }
                std::hint::black_box(touch);
            }
            let mop = self.h.mops[m];
            if mop.from != PENDING {
                continue;
            }
            let from = if mop.val == Val::NIL {
                from::INITIAL
            } else if let Some(w) = self.write_index.get(mop.key, mop.val) {
                w
            } else if self.opts.zero_is_initial && Some(mop.val) == zero {
                from::INITIAL
            } else {
                from::THIN_AIR
            };
            self.h.mops[m].from = from;
        }
        if list_mode {
            self.finish_orders();
        } else {
            self.h.orders.clear();
        }
        (self.h, self.anomalies)
    }

    /// Where reads disagree, Elle takes the longest read as the version
    /// order; so do we, and re-sort which reads agree with it.
    fn rebase_orders(&mut self) {
        let mut keys: Vec<KeyId> = self.incompatible.keys().copied().collect();
        keys.sort_unstable();
        let h = &mut self.h;
        let mut old: FxHashMap<KeyId, Vec<Val>> = FxHashMap::default();
        for &k in &keys {
            let order = &h.orders[k as usize].elems;
            let longest = self.incompatible[&k]
                .iter()
                .map(|r| &h.irregular[r])
                .fold(order, |best, l| if l.len() > best.len() { l } else { best })
                .clone();
            if longest != *order {
                old.insert(
                    k,
                    std::mem::replace(&mut h.orders[k as usize].elems, longest),
                );
            }
        }
        if old.is_empty() {
            return;
        }
        for k in old.keys() {
            self.incompatible.insert(*k, Vec::new());
        }
        for i in 0..h.mops.len() {
            let m = h.mops[i];
            let Some(prev) = old.get(&m.key) else {
                continue;
            };
            if !m.is_read() || m.from == from::UNKNOWN {
                continue;
            }
            let id = i as MopId;
            let list = if m.has(flag::IRREGULAR) {
                h.irregular.remove(&id).unwrap_or_default()
            } else {
                prev[..(m.len as usize).min(prev.len())].to_vec()
            };
            let mop = &mut h.mops[i];
            if h.orders[m.key as usize].elems.starts_with(&list) {
                mop.flags &= !flag::IRREGULAR;
                mop.len = list.len() as u32;
            } else {
                mop.flags |= flag::IRREGULAR;
                mop.len = list.len() as u32;
                h.irregular.insert(id, list);
                self.incompatible.entry(m.key).or_default().push(id);
            }
        }
    }

    fn finish_orders(&mut self) {
        self.rebase_orders();
        let h = &mut self.h;
        // A bit per micro-op (a byte each would not stay in cache).
        let mut in_order = vec![0u64; h.mops.len().div_ceil(64)];
        for (k, order) in h.orders.iter_mut().enumerate() {
            let k = k as KeyId;
            let mut seen_thin: FxHashSet<Val> = FxHashSet::default();
            order.writes = Vec::with_capacity(order.elems.len());
            order.repeats.clear();
            let mut dups: Vec<Val> = Vec::new();
            for &e in &order.elems {
                let w = self.write_index.get(k, e);
                let dup = match w {
                    Some(w) => {
                        let (word, bit) = (w as usize / 64, 1u64 << (w % 64));
                        let seen = in_order[word] & bit != 0;
                        in_order[word] |= bit;
                        seen
                    }
                    None => !seen_thin.insert(e),
                };
                if dup {
                    order.repeats.push(order.writes.len() as u32);
                    if !dups.contains(&e) {
                        dups.push(e);
                    }
                }
                order.writes.push(w.unwrap_or(from::THIN_AIR));
            }
            if !dups.is_empty() {
                self.anomalies
                    .push(duplicates_anomaly(&h.mops, k, order, &dups));
            }
        }
        for (id, m) in h.mops.iter().enumerate() {
            if m.is_write()
                && in_order[id / 64] & (1u64 << (id % 64)) == 0
                && h.txns[m.txn as usize].status != Status::Aborted
            {
                h.orders[m.key as usize].unobserved.push(id as MopId);
            }
        }
        let mut keys: Vec<_> = self.incompatible.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            let reads = &self.incompatible[&k];
            let mut lists: Vec<Vec<Val>> = vec![h.orders[k as usize].elems.clone()];
            for r in reads {
                let l = &h.irregular[r];
                if !lists.contains(l) {
                    lists.push(l.clone());
                }
            }
            // As Elle lists them: shortest first.
            lists.sort_by_key(Vec::len);
            let mut a = Anomaly::new("incompatible-order")
                .field("key", Datum::Key(k))
                .field(
                    "values",
                    Datum::List(lists.into_iter().map(Datum::Vals).collect()),
                );
            for &r in reads {
                a = a.txn(h.mops[r as usize].txn);
            }
            self.anomalies.push(a);
        }
    }
}

/// Elle's duplicate-elements: a read that shows an element twice.
fn duplicates_anomaly(mops: &[Mop], k: KeyId, order: &VersionOrder, dups: &[Val]) -> Anomaly {
    // The shortest read that already shows the first duplicate twice.
    let second = order
        .elems
        .iter()
        .enumerate()
        .filter(|(_, e)| **e == dups[0])
        .nth(1)
        .map_or(0, |(i, _)| i);
    let reader = mops
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.is_read() && m.key == k && !m.has(flag::IRREGULAR) && m.len as usize > second
        })
        .min_by_key(|(_, m)| m.len);
    let mut a = Anomaly::new("duplicate-elements").field("key", Datum::Key(k));
    if let Some((id, m)) = reader {
        a = a
            .txn(m.txn)
            .field("op", Datum::Txn(m.txn))
            .field("mop", Datum::Mop(id as MopId));
    }
    let counts = dups
        .iter()
        .map(|d| {
            let n = order.elems.iter().filter(|e| *e == d).count() as i64;
            Datum::List(vec![Datum::Val(*d), Datum::Int(n)])
        })
        .collect();
    a.field("duplicates", Datum::List(counts))
}

/// The list a [`Known::List`] stands for, without its own appends.
fn known_list(order: &[Val], raw: &RawTxn, base: u32, start: u32, len: u32) -> Vec<Val> {
    let mut v = order[..(base as usize).min(order.len())].to_vec();
    v.extend_from_slice(raw.list(start, len));
    v
}

/// Checks a read against the transaction's own earlier reads and writes of
/// the key (`order` is the key's version order so far). Returns the C4
/// pattern and, where it can be said, what Elle would print as
/// `:expected`.
fn internal_check(
    st: &KeyState,
    raw: &RawTxn,
    order: &[Val],
    list_mode: bool,
    val: Val,
    elems: &[Val],
) -> Vec<(&'static str, Datum)> {
    let mut out = Vec::new();
    // Two reads in a row that disagree: C4's NonRepeatableRead.
    if st.read_last {
        let differs = match &st.known {
            Some(Known::Reg(prev)) => !list_mode && *prev != val,
            Some(Known::List {
                base, start, len, ..
            }) => list_mode && known_list(order, raw, *base, *start, *len) != elems,
            None => false,
        };
        if differs {
            out.push(("NonRepeatableRead", expected(st, raw, order, list_mode)));
        }
    }
    let Some(last) = st.own.last().copied() else {
        return out;
    };
    // After its own write, a read must show the transaction's last write.
    let got = if list_mode {
        elems.last().copied()
    } else {
        Some(val)
    };
    if got != Some(last) {
        let pattern = if got.is_some_and(|g| st.own.contains(&g)) {
            "NotMyLastWrite"
        } else {
            "NotMyOwnWrite"
        };
        out.push((pattern, expected(st, raw, order, list_mode)));
        return out;
    }
    if !list_mode || !out.is_empty() {
        return out;
    }
    // A list must also keep what was read before, and all own appends.
    let (ok, pattern) = match &st.known {
        Some(Known::List {
            base,
            start,
            len,
            plus,
        }) => {
            let before = known_list(order, raw, *base, *start, *len);
            let ok = elems.len() == before.len() + plus.len()
                && elems[..before.len()] == *before
                && elems[before.len()..] == plus[..];
            (ok, "NonRepeatableRead")
        }
        _ => (elems.ends_with(&st.own), "NotMyOwnWrite"),
    };
    if !ok {
        out.push((pattern, expected(st, raw, order, list_mode)));
    }
    out
}

/// What the transaction's own history predicts a read returns.
fn expected(st: &KeyState, raw: &RawTxn, order: &[Val], list_mode: bool) -> Datum {
    if !list_mode {
        return match st.own.last() {
            Some(v) => Datum::Val(*v),
            None => match st.known {
                Some(Known::Reg(v)) => Datum::Val(v),
                _ => Datum::Nil,
            },
        };
    }
    match &st.known {
        Some(Known::List {
            base,
            start,
            len,
            plus,
        }) => {
            let mut v = known_list(order, raw, *base, *start, *len);
            v.extend_from_slice(plus);
            Datum::Vals(v)
        }
        _ => {
            let mut items = vec![Datum::Sym("...".into())];
            items.extend(st.own.iter().map(|v| Datum::Val(*v)));
            Datum::List(items)
        }
    }
}
