//! The binary's own modules (the command line, with clap), beside
//! `main.rs`; the library knows nothing of them.

pub mod generate;
pub mod keys;
