//! The text format of Cobra, PolySI and C4, one micro-op per line,
//! `r(key,value,session,txn)` or `w(key,value,session,txn)`: the reader
//! (`read`) and the writer ([`write()`], and [`stream_from_edn`] straight
//! from a Jepsen EDN stream).

mod read;
mod write;

pub use read::read;
pub use write::{StreamError, stream_from_edn, write};
