//! EDN: values, the generic reader, printing, and the values' JSON form.

pub mod json;
pub mod lex;
pub mod parse;
pub mod value;

pub use json::to_json;
pub use parse::{Cursor, MAX_DEPTH, read_all, read_one};
pub use value::Value;
