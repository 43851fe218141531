//! Jepsen's EDN histories (`history.edn`): the op reader, which compiles a
//! file ([`read`]) or streams one's transactions ([`for_each_txn`]), its
//! byte-level fast paths, and the writer ([`write()`]).

mod read;
mod scan;
mod write;

pub use read::{Progress, for_each_txn, read};
pub use write::{mop_parts, op_events, write};
