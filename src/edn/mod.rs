//! EDN: values, the generic reader, and printing.

pub mod lex;
pub mod parse;
pub mod value;

pub use parse::{Cursor, MAX_DEPTH, read_all, read_one};
pub use value::Value;
