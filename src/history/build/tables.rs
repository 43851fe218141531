//! The builder's per-key tables and how they grow: keys to their ids
//! ([`KeyIndex`]), each (key, value) to its write ([`WriteIndex`]), and each
//! key's version order as a read spelt it ([`OrderText`]). Jepsen's keys and
//! values are small integers, so each table indexes a vector where it can
//! and hashes only the rest.

use rustc_hash::FxHashMap;

use crate::history::model::*;

/// The capacity a list-append key's growing tables (version order, write
/// index, order text: in elements, or 4 bytes an element) start with when
/// first used, rather than growing through 4, 8 and 16: each step is a
/// reallocation and a copy, for every key.
pub(super) const FIRST_CAPACITY: usize = 16;

/// Makes room for `extra` more elements in a per-key table: at first for
/// `first` elements, then growing small tables fourfold rather than
/// twofold (ten thousand keys of about a hundred elements each otherwise
/// make some 70k reallocations, most of the allocator's time in a read).
/// Tables past a thousand elements grow as vectors do, so a long table
/// wastes no more than a vector would.
#[inline]
pub(super) fn grow<T>(v: &mut Vec<T>, extra: usize, first: usize) {
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
pub(super) const NONE: u32 = u32::MAX;

/// Keys to their ids. Jepsen's keys are small integers: those are found by
/// indexing a vector (no hashing, and a table a few times smaller than a
/// hash map's); others by a hash map.
#[derive(Default)]
pub(super) struct KeyIndex {
    pub(super) dense: Vec<KeyId>,
    pub(super) sparse: FxHashMap<Val, KeyId>,
}

impl KeyIndex {
    #[inline]
    pub(super) fn get(&self, k: Val) -> Option<KeyId> {
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
    pub(super) fn insert(&mut self, k: Val, id: KeyId) {
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
    pub(super) fn put_dense(dense: &mut Vec<KeyId>, k: Val, id: KeyId, limit: usize) -> bool {
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
pub(super) struct WriteIndex {
    /// By key: the write of each small value, and how many there are.
    pub(super) dense: Vec<(Vec<MopId>, u32)>,
    pub(super) sparse: FxHashMap<(KeyId, Val), MopId>,
}

impl WriteIndex {
    pub(super) fn add_key(&mut self) {
        self.dense.push((Vec::new(), 0));
    }

    #[inline]
    pub(super) fn get(&self, k: KeyId, v: Val) -> Option<MopId> {
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
    /// [`Builder::warm`](super::Builder::warm).
    #[inline]
    pub(super) fn touch(&self, k: KeyId, v: Val) -> u32 {
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
    pub(super) fn insert(&mut self, k: KeyId, v: Val, id: MopId, first: usize) {
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
pub(super) struct OrderText {
    pub(super) text: Vec<u8>,
    pub(super) count: u32,
    pub(super) ok: bool,
}

impl OrderText {
    pub(super) fn fresh() -> OrderText {
        OrderText {
            text: Vec::new(),
            count: 0,
            ok: true,
        }
    }
}

/// The value of a list text's last element (the text is canonical, see
/// [`OrderText`]).
pub(super) fn last_element(text: &[u8]) -> Option<Val> {
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
