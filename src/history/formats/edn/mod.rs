//! Jepsen's EDN histories (`history.edn`): the op reader, which streams a
//! file's transactions ([`for_each_txn`]), the compiler of a whole file
//! ([`read`](mod@read)), the reader's byte-level fast paths (`scan`), and the writer
//! ([`write()`]).

mod compile;
mod read;
mod scan;
mod write;

pub use compile::read;
pub use read::{Progress, for_each_txn};
pub use write::{mop_parts, op_events, write};
