//! One transaction's view of its keys while it is compiled, and the
//! internal-consistency check that reads it: what the transaction already
//! wrote and read of each key ([`KeyState`], pooled in [`KeyStates`] so no
//! transaction allocates), and which of C4's patterns (NonRepeatableRead,
//! NotMyOwnWrite, NotMyLastWrite) a read breaks, with what Elle would print
//! as `:expected`.
//!
//! Data flow: the builder [`assign`](KeyStates::assign)s a state to each
//! micro-op before compiling the transaction; each write pushes to the
//! state's `own`, each read first goes through [`internal_check`] (when the
//! key was read or written before in the transaction) and then records what
//! it saw in `known`.

use crate::anomaly::Datum;
use crate::history::model::*;
use crate::spec::Pattern;

use super::raw::RawTxn;

#[derive(Default)]
pub(super) struct KeyState {
    /// Own writes (or appends) to the key so far, in order.
    pub(super) own: Vec<Val>,
    /// Last own write mop.
    pub(super) last_write: Option<MopId>,
    /// The last read's result (list: a range of the raw elems; register: the
    /// value) and appends since it.
    pub(super) known: Option<Known>,
    /// The key's previous micro-op in this transaction was a read.
    pub(super) read_last: bool,
    /// 1 + the position of the transaction's last write of the key (0:
    /// none), set before the transaction is compiled: a read before it may
    /// be a future read.
    pub(super) last_write_at: usize,
}

pub(super) enum Known {
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
pub(super) struct KeyStates {
    /// By key id: (stamp, index in `pool`); current when the stamp is.
    slot: Vec<(u32, u32)>,
    stamp: u32,
    /// The state (index in `pool`) of each micro-op of the transaction.
    of: Vec<u32>,
    pool: Vec<KeyState>,
    used: usize,
}

/// Up to this many micro-ops, a transaction's keys are matched by a scan.
pub(super) const SCAN_KEYS: usize = 64;

impl KeyStates {
    /// Starts a transaction whose micro-ops are on `keys`, among `0..nkeys`.
    pub(super) fn assign(&mut self, keys: &[KeyId], nkeys: usize) {
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
    pub(super) fn fresh(&mut self) -> u32 {
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
    pub(super) fn get(&mut self, i: usize) -> &mut KeyState {
        &mut self.pool[self.of[i] as usize]
    }

    pub(super) fn used(&self) -> &[KeyState] {
        &self.pool[..self.used]
    }
}

impl Known {
    /// For a list: what the transaction read (the version order's first
    /// `base` elements, then the raw elements), and its own appends since.
    fn list<'a>(&'a self, order: &[Val], raw: &RawTxn) -> Option<(Vec<Val>, &'a [Val])> {
        match self {
            Known::List {
                base,
                start,
                len,
                plus,
            } => {
                let mut v = order[..(*base as usize).min(order.len())].to_vec();
                v.extend_from_slice(raw.list(*start, *len));
                Some((v, plus))
            }
            Known::Reg(_) => None,
        }
    }
}

/// Checks a read against the transaction's own earlier reads and writes of
/// the key (`order` is the key's version order so far). Returns the C4
/// pattern and, where it can be said, what Elle would print as
/// `:expected`.
pub(super) fn internal_check(
    st: &KeyState,
    raw: &RawTxn,
    order: &[Val],
    list_mode: bool,
    val: Val,
    elems: &[Val],
) -> Vec<(Pattern, Datum)> {
    let mut out = Vec::new();
    // Two reads in a row that disagree: C4's NonRepeatableRead.
    if st.read_last {
        let differs = match &st.known {
            Some(Known::Reg(prev)) => !list_mode && *prev != val,
            Some(k) => {
                list_mode
                    && k.list(order, raw)
                        .is_some_and(|(before, _)| before != elems)
            }
            None => false,
        };
        if differs {
            out.push((
                Pattern::NonRepeatableRead,
                expected(st, raw, order, list_mode),
            ));
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
            Pattern::NotMyLastWrite
        } else {
            Pattern::NotMyOwnWrite
        };
        out.push((pattern, expected(st, raw, order, list_mode)));
        return out;
    }
    if !list_mode || !out.is_empty() {
        return out;
    }
    // A list must also keep what was read before, and all own appends.
    let (ok, pattern) = match st.known.as_ref().and_then(|k| k.list(order, raw)) {
        Some((before, plus)) => {
            let ok = elems.len() == before.len() + plus.len()
                && elems[..before.len()] == *before
                && elems[before.len()..] == plus[..];
            (ok, Pattern::NonRepeatableRead)
        }
        _ => (elems.ends_with(&st.own), Pattern::NotMyOwnWrite),
    };
    if !ok {
        out.push((pattern, expected(st, raw, order, list_mode)));
    }
    out
}

/// What the transaction's own history predicts a read returns.
pub(super) fn expected(st: &KeyState, raw: &RawTxn, order: &[Val], list_mode: bool) -> Datum {
    if !list_mode {
        return match st.own.last() {
            Some(v) => Datum::Val(*v),
            None => match st.known {
                Some(Known::Reg(v)) => Datum::Val(v),
                _ => Datum::Nil,
            },
        };
    }
    match st.known.as_ref().and_then(|k| k.list(order, raw)) {
        Some((mut v, plus)) => {
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
