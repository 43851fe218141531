//! Jepsen's EDN histories (`history.edn`): the op reader, which streams a
//! file's transactions ([`for_each_txn`]), the compiler of a whole file
//! ([`read`](mod@read)), a large file's op maps read in pieces on several
//! threads (`pieces`), the reader's byte-level fast paths (`scan`), and the
//! writer ([`write()`]).

mod compile;
mod pieces;
mod read;
mod scan;
mod write;

pub use compile::{read, read_split};
pub use pieces::{PARALLEL_FROM, PIECE_BYTES, Split};
pub use read::{Progress, for_each_txn};
pub use write::{mop_parts, op_events, write};
