//! elle-cli's JSON histories (`elle-cli --format json`): [`read`](mod@read) and
//! [`write()`].

mod read;
mod write;

pub use read::read;
pub use write::{merged, write};
