//! EDN: values, the generic reader, printing, and the values' JSON form.

pub(crate) mod json;
pub(crate) mod lex;
pub(crate) mod parse;
pub(crate) mod value;

pub use json::to_json;
pub(crate) use parse::Cursor;
pub use parse::{MAX_DEPTH, read_all, read_one};
pub use value::Value;
