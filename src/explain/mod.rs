//! Counterexamples a database engineer reads at a glance: cycles named as
//! Elle names them, with each step's key and values.

pub mod text;
