//! The one history model every checker reads: transactions with a status and
//! a session, their micro-operations, reads-from, and (for list-append) the
//! per-key version orders the reads reveal.
//!
//! Both workloads and every input format compile into this. It is built for
//! size: a micro-op is 32 bytes, a transaction 80, and values are interned,
//! so a 20M-micro-op history fits in well under a gigabyte.

use rustc_hash::FxHashMap;

use crate::edn::Value;

/// Index of a transaction in [`History::txns`].
pub type TxnId = u32;
/// Index of a key in [`History::keys`] (and, for list-append, [`History::orders`]).
pub type KeyId = u32;
/// Index of a micro-op in [`History::mops`]; a write is named by its mop.
pub type MopId = u32;

/// A compact value: small integers inline, anything else interned.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Val(u64);

impl Val {
    /// The interned `nil`: the initial state, or an empty list read.
    pub const NIL: Val = Val(1);
    const INLINE_MIN: i64 = -(1 << 62);
    const INLINE_MAX: i64 = (1 << 62) - 1;

    #[inline]
    /// The inline value of `i`; None when `i` needs more than 63 bits (intern it in [`Values`]).
    pub fn int(i: i64) -> Option<Val> {
        (Self::INLINE_MIN..=Self::INLINE_MAX)
            .contains(&i)
            .then_some(Val((i as u64) << 1))
    }

    #[inline]
    /// The integer this value holds inline; None for an interned value.
    pub fn as_int(self) -> Option<i64> {
        (self.0 & 1 == 0).then_some((self.0 as i64) >> 1)
    }

    #[inline]
    fn interned(i: u32) -> Val {
        Val(((i as u64) << 1) | 1)
    }

    /// The bits as stored (for hashing and cache hints; not a value).
    pub fn raw(self) -> u64 {
        self.0
    }
}

/// Interns values that do not fit inline (strings, keywords, vectors, bigints).
#[derive(Debug, Clone)]
pub struct Values {
    table: Vec<Value>,
    index: FxHashMap<Value, u32>,
}

impl Default for Values {
    fn default() -> Self {
        let mut v = Values {
            table: Vec::new(),
            index: FxHashMap::default(),
        };
        v.table.push(Value::Nil);
        v.index.insert(Value::Nil, 0);
        v
    }
}

impl Values {
    /// The compact value of `v`: inline when a small integer, else interned
    /// once. Values Clojure's `=` holds equal get one `Val` (`5` and `5N`,
    /// `[1 2]` and `(1 2)`: see [`Value::canonical`]); the first one seen is
    /// how reports show it.
    pub fn intern(&mut self, v: Value) -> Val {
        if let Value::Int(i) = v
            && let Some(x) = Val::int(i)
        {
            return x;
        }
        let key = match v {
            Value::Nil | Value::Bool(_) | Value::Int(_) | Value::Keyword(_) | Value::String(_) => {
                None
            }
            _ => Some(v.canonical()),
        };
        if let Some(Value::Int(i)) = key
            && let Some(x) = Val::int(i)
        {
            return x;
        }
        let key = key.unwrap_or_else(|| v.clone());
        if let Some(&i) = self.index.get(&key) {
            return Val::interned(i);
        }
        let i = self.table.len() as u32;
        self.table.push(v);
        self.index.insert(key, i);
        Val::interned(i)
    }

    /// How many values are interned (`nil` among them).
    pub fn len(&self) -> u32 {
        self.table.len() as u32
    }

    /// Whether only `nil` is interned.
    pub fn is_empty(&self) -> bool {
        self.table.len() <= 1
    }

    /// The `i`-th value interned, as first seen.
    pub fn entry(&self, i: u32) -> &Value {
        &self.table[i as usize]
    }

    /// The EDN value of `v` (a clone of the interned one).
    pub fn get(&self, v: Val) -> Value {
        match v.as_int() {
            Some(i) => Value::Int(i),
            None => self.table[(v.0 >> 1) as usize].clone(),
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
/// What became of a transaction, by its completion's `:type`.
pub enum Status {
    /// `:ok`: took effect.
    Committed,
    /// `:fail`: never took effect; its writes are aborted writes.
    Aborted,
    /// `:info` (or never completed): may or may not have taken effect.
    Indeterminate,
}

impl Status {
    /// Jepsen's `:type` for it, without the colon (`ok`, `fail`, `info`).
    pub fn keyword(self) -> &'static str {
        match self {
            Status::Committed => "ok",
            Status::Aborted => "fail",
            Status::Indeterminate => "info",
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
/// The kind of micro-ops a history holds, as Elle's two workloads.
pub enum Workload {
    /// Appends to lists and reads of whole lists (`:append`, `:r`).
    ListAppend,
    /// Writes and reads of single values (`:w`, `:r`).
    RwRegister,
}

impl Workload {
    /// Elle's name for it (`list-append`, `rw-register`).
    pub fn name(self) -> &'static str {
        match self {
            Workload::ListAppend => "list-append",
            Workload::RwRegister => "rw-register",
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
/// Whether a micro-op reads or writes.
pub enum MopKind {
    /// A read (`:r`).
    Read,
    /// A write (`:w`) or an append (`:append`), by workload.
    Write,
}

/// Where a read's value came from.
pub mod from {
    /// The initial state (nil, an empty list, or value 0 in the text format).
    pub const INITIAL: u32 = u32::MAX;
    /// Not observed: a read inside an aborted or indeterminate transaction,
    /// or a read left out ([`super::Duplicates::DropReads`]). Checkers
    /// take nothing from it.
    pub const UNKNOWN: u32 = u32::MAX - 1;
    /// A value nobody wrote.
    pub const THIN_AIR: u32 = u32::MAX - 2;
}

/// Micro-op flags.
pub mod flag {
    /// A read with no earlier write of its key in its transaction: what it
    /// returns came from outside (the first of several reads, or any of them).
    pub const EXTERNAL: u8 = 1;
    /// A write that is its transaction's last write to its key.
    pub const FINAL: u8 = 2;
    /// A list read that is not a prefix of its key's version order; its
    /// elements are in [`super::History::irregular`].
    pub const IRREGULAR: u8 = 4;
    /// A list read that returned `nil` rather than an empty list: the
    /// same version (the initial state), shown as the history has it.
    pub const NIL: u8 = 8;
}

/// One micro-operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Mop {
    /// Write: the value written or appended. Read: the value returned (for a
    /// list, its last element; NIL for nil or an empty list).
    pub val: Val,
    /// The key it touches.
    pub key: KeyId,
    /// The transaction it belongs to.
    pub txn: TxnId,
    /// Read: the write it observed, or a [`from`] constant. Write: unused.
    pub from: u32,
    /// List read: number of elements. Otherwise 0.
    pub len: u32,
    /// Read or write.
    pub kind: MopKind,
    /// Bits of [`flag`].
    pub flags: u8,
}

impl Mop {
    #[inline]
    /// Whether it is a read.
    pub fn is_read(&self) -> bool {
        self.kind == MopKind::Read
    }
    #[inline]
    /// Whether it is a write (or an append).
    pub fn is_write(&self) -> bool {
        self.kind == MopKind::Write
    }
    #[inline]
    /// Whether it carries the [`flag`] bit `f`.
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// The write this read observed, if it is a write.
    #[inline]
    pub fn observed(&self) -> Option<MopId> {
        (self.is_read() && self.from < from::THIN_AIR).then_some(self.from)
    }
}

/// A position in the input: the op's `:index`, `:time`, line and offset.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct OpPos {
    /// Jepsen's `:index`, or -1 when absent.
    pub index: i64,
    /// Jepsen's `:time` in nanoseconds, or -1 when absent.
    pub time: i64,
    /// 1-based line in the input.
    pub line: u32,
    /// Byte offset of the op in the input.
    pub offset: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// One transaction: its status, session, micro-ops and where it was read.
pub struct Txn {
    /// Committed, aborted or indeterminate.
    pub status: Status,
    /// Index of its session in [`History::sessions`].
    pub session: u32,
    /// Position in its session.
    pub seq: u32,
    /// Micro-ops `mops[start..end]`.
    pub start: MopId,
    /// End (exclusive) of its micro-ops in [`History::mops`].
    pub end: MopId,
    /// The invocation, when the history pairs invocations with completions.
    pub invoke: Option<OpPos>,
    /// The completion (or, for a never-completed invocation, the invocation).
    pub complete: OpPos,
    /// Jepsen's `:f`.
    pub f: Val,
}

impl Txn {
    /// The range of its micro-ops in [`History::mops`].
    pub fn mops(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
    /// Index of the invocation, else of the completion.
    pub fn invoke_index(&self) -> i64 {
        self.invoke.map_or(self.complete.index, |p| p.index)
    }
}

/// A Jepsen process: its transactions in history order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    /// The process number (or session id in session-based formats).
    pub process: i64,
    /// Its transactions, in the order the process ran them.
    pub txns: Vec<TxnId>,
}

/// The version order of one list-append key, as the reads reveal it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionOrder {
    /// The longest read's elements, in order.
    pub elems: Vec<Val>,
    /// The write of each element ([`from::THIN_AIR`] when nobody appended it).
    pub writes: Vec<u32>,
    /// Appends no read observed (from committed or indeterminate
    /// transactions): they follow `writes`, in an unknown order.
    pub unobserved: Vec<MopId>,
    /// Positions of `elems` that repeat an earlier element (Elle's
    /// `duplicate-elements`), ascending; usually none.
    pub repeats: Vec<u32>,
}

impl VersionOrder {
    /// The writes in version order, one per version: a repeated element
    /// is no new version (Elle orders the longest read's distinct
    /// elements), so a duplicate is reported once, as a duplicate, and
    /// orders no write after the ones between its copies.
    pub fn versions(&self) -> impl Iterator<Item = u32> + '_ {
        let mut repeats = self.repeats.iter().copied().peekable();
        self.writes.iter().enumerate().filter_map(move |(i, &w)| {
            if repeats.peek() == Some(&(i as u32)) {
                repeats.next();
                None
            } else {
                Some(w)
            }
        })
    }
}

/// Elle's rw-register options that infer version orders (`:wfr-keys?`,
/// `:sequential-keys?`, `:linearizable-keys?`), as asked at load: what a
/// check takes each key's version order to follow besides the reads (see
/// `check::keys`). List-append histories read theirs off the lists, so
/// they take none, as Elle's list-append.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyOrders {
    /// Within a transaction, its write of a key follows its read of it.
    pub wfr: bool,
    /// Each key is sequentially consistent: session order orders its
    /// versions.
    pub sequential: bool,
    /// Each key is linearizable: real time orders its versions.
    pub linearizable: bool,
}

impl KeyOrders {
    /// Whether any is asked.
    pub fn any(self) -> bool {
        self.wfr || self.sequential || self.linearizable
    }

    /// The options asked, by the command line's names
    /// (`--linearizable-keys`, ...), in Elle's order.
    pub fn names(self) -> Vec<&'static str> {
        [
            (self.wfr, "wfr-keys"),
            (self.sequential, "sequential-keys"),
            (self.linearizable, "linearizable-keys"),
        ]
        .into_iter()
        .filter_map(|(on, n)| on.then_some(n))
        .collect()
    }
}

/// What [`KeyOrders`] infer of a history, worked out on first use (by
/// `check::keys`) and kept with it.
#[derive(Clone, Debug, Default)]
pub struct Inferred {
    /// Write orders `(key, earlier, later)`, each write a final one of a
    /// transaction that did not abort: the inferred version order of each
    /// key is their transitive closure (none implied by others is listed).
    pub ww: Vec<(KeyId, MopId, MopId)>,
    /// Elle's `cyclic-versions`: per key, the values on a cycle of the
    /// inferred version order, and the sources (Elle's names) whose orders
    /// together close it; that source's orders are then left out.
    pub cyclic: Vec<(KeyId, Vec<Val>, Vec<&'static str>)>,
    /// The inference ran out of work (`crate::check::tuning::KEY_ORDER_WORK`): `ww` may
    /// lack orders, so a check that finds no violation cannot say valid.
    pub cut: bool,
}

/// Counts for `elle-si stats` and `--verbose`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Ops read (every op map, line or record; nemesis ops included).
    pub ops: u64,
    /// Ops of client processes (integer `:process`).
    pub client_ops: u64,
    /// Nemesis ops and others whose `:process` is not an integer.
    pub skipped_ops: u64,
    /// The file holds completions only (no `:invoke`): each op stands alone.
    pub completions_only: bool,
    /// Invocations that never completed, kept as indeterminate.
    pub dangling_invokes: u64,
}

/// A compiled history.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// None when the history has no micro-op that tells.
    pub workload: Option<Workload>,
    /// The transactions, in completion order ([`TxnId`]).
    pub txns: Vec<Txn>,
    /// The micro-ops, transaction by transaction ([`MopId`]).
    pub mops: Vec<Mop>,
    /// The sessions (Jepsen processes), in order of first appearance.
    pub sessions: Vec<Session>,
    /// Each key's value, by KeyId.
    pub keys: Vec<Val>,
    /// The interned values that do not fit inline.
    pub values: Values,
    /// List-append version orders by KeyId (empty for rw-register).
    pub orders: Vec<VersionOrder>,
    /// Elements of list reads flagged [`flag::IRREGULAR`].
    pub irregular: FxHashMap<MopId, Vec<Val>>,
    /// Counts of what reading saw.
    pub stats: Stats,
    /// Where the history came from, for messages.
    pub name: String,
    /// Reads that may have observed any of several writes of the value they
    /// returned (register histories whose writes are not unique per (key,
    /// value), under [`Duplicates::Any`]): each such external read's
    /// candidate writes, in file order. Its `from` is one of them, a
    /// guess; the SI/SER checker weighs them all, other checkers read the
    /// guess.
    pub candidates: FxHashMap<MopId, Vec<MopId>>,
    /// Elle's key options asked for this history (none by default).
    pub key_orders: KeyOrders,
    /// What they infer, once worked out (`check::keys::inferred`).
    pub inferred: std::sync::OnceLock<Inferred>,
    /// Register values written more than once to one key, and what the
    /// policy made of them; None when every write is unique per key.
    pub repeated: Option<Repeated>,
}

/// What to do when two writes share a (key, value) of a register history:
/// a read of that value may have observed either. List-append histories
/// refuse a repeated append whatever the policy (a repeated element in a
/// read is Elle's `duplicate-elements`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Duplicates {
    /// Refuse the history, as dbcop does.
    Reject,
    /// Take each read's guessed writer (the last in file order it could
    /// have observed) as the one it read, as PolySI resolves reads to the
    /// last writer. A violation may then rest on the guess: `check`
    /// settles it without the guessed reads, else answers unknown.
    LastWriter,
    /// Leave out the reads with several possible writers: what remains
    /// holds in every resolution, so a cycle in it is a cycle whichever
    /// write was read.
    DropReads,
    /// A read may have observed any write of its value that could have
    /// been read (committed or indeterminate, final in its transaction,
    /// by another transaction: [`History::candidates`]): the exact
    /// semantics, VeriStrong's hyper-polygraph. The default.
    #[default]
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

    /// Its name, as `parse` reads it.
    pub fn name(self) -> &'static str {
        match self {
            Duplicates::Reject => "reject",
            Duplicates::LastWriter => "last-writer",
            Duplicates::DropReads => "drop-reads",
            Duplicates::Any => "any",
        }
    }
}

/// A register history's values written more than once to one key (see
/// [`Duplicates`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repeated {
    /// The policy that was applied.
    pub policy: Duplicates,
    /// How many (key, value) pairs are written more than once.
    pub pairs: u64,
    /// The reads the exact semantics leaves with several possible writers,
    /// in history order: under [`Duplicates::Any`] the reads of
    /// [`History::candidates`], under [`Duplicates::LastWriter`] the reads
    /// whose writer was guessed, under [`Duplicates::DropReads`] the reads
    /// left out.
    pub ambiguous: Vec<MopId>,
}

impl Repeated {
    /// Whether some read's writer is a guess: a violation found may rest
    /// on it, and is to be settled (see `check::entry`).
    pub fn guessed(&self) -> bool {
        matches!(self.policy, Duplicates::Any | Duplicates::LastWriter)
            && !self.ambiguous.is_empty()
    }
}

impl History {
    /// The micro-ops of transaction `t`.
    pub fn txn_mops(&self, t: TxnId) -> &[Mop] {
        let t = &self.txns[t as usize];
        &self.mops[t.mops()]
    }

    /// The transaction that performed a micro-op.
    #[inline]
    pub fn txn_of(&self, m: MopId) -> TxnId {
        self.mops[m as usize].txn
    }

    /// The EDN value of key `k`.
    pub fn key_value(&self, k: KeyId) -> Value {
        self.values.get(self.keys[k as usize])
    }

    /// The EDN value of `v`.
    pub fn value(&self, v: Val) -> Value {
        self.values.get(v)
    }

    /// The elements a list read returned.
    pub fn read_list(&self, m: MopId) -> Vec<Val> {
        let mop = &self.mops[m as usize];
        if mop.has(flag::IRREGULAR) {
            return self.irregular.get(&m).cloned().unwrap_or_default();
        }
        match self.orders.get(mop.key as usize) {
            Some(o) => o.elems[..(mop.len as usize).min(o.elems.len())].to_vec(),
            None => Vec::new(),
        }
    }

    /// Number of transactions with each status.
    pub fn status_counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for t in &self.txns {
            match t.status {
                Status::Committed => c.0 += 1,
                Status::Aborted => c.1 += 1,
                Status::Indeterminate => c.2 += 1,
            }
        }
        c
    }
}
