//! What a format reader hands the [`Builder`](super::Builder): one
//! transaction's micro-ops as read ([`RawTxn`], reused from one transaction
//! to the next), what is known of the transaction besides ([`TxnMeta`]), and
//! what a reader learnt of a list read from its text ([`ListHint`],
//! [`ListBase`]). Only types: the compiling is in the builder.

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
    /// [`Builder::list_base`](super::Builder::list_base)), in micro-op order. Only
    /// [`Builder::push_txn_in`](super::Builder::push_txn_in) reads these; a read with none is whole in
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
    /// given to [`Builder::push_txn_in`](super::Builder::push_txn_in): integers of 1 to 8 digits
    /// separated by single spaces.
    pub text: (usize, usize),
}

/// What [`Builder::list_base`](super::Builder::list_base) found.
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
