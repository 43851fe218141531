//! elle-si-jni, the JNI bridge: a cdylib (`libelle_si_jni.so`, built with
//! `cargo build --release -p elle-si-jni`) holding the native methods of the
//! Java class `elle_si.Native`, through which the Clojure library in `clj/`
//! checks Jepsen histories inside the JVM that ran the test. It links the
//! `elle-si` library; the library knows nothing of it.
//!
//! A history crosses the boundary either as the path of a history file (an
//! archived `history.edn`, read as the CLI reads it) or in a compact binary
//! encoding (see `wire`) that `elle_si.HistoryEncoder` (Java) writes from
//! the op maps and this module decodes straight into the history model,
//! pairing invocations with completions as the EDN reader does (through
//! `elle_si::history::pairing`). The result comes back as the text of
//! Elle's result map in EDN. Nothing here is global: calls run in parallel
//! (Jepsen's `checker/compose` runs its checkers under `pmap`).
//!
//! One file per job: `options` (what the Clojure side asks for),
//! `wire` (the binary encoding of a history, decoded into the
//! history model), `stream` (a history fed
//! in chunks to a decoding thread), `threads` (the pools the checks run
//! in, one per `:threads` size), `bridge` (checking and rendering the
//! result map), and `ffi` (the exported native methods: all the unsafe code
//! of the bridge).

pub(crate) mod bridge;
mod ffi;
pub(crate) mod options;
pub(crate) mod stream;
#[cfg(test)]
mod tests;
pub(crate) mod threads;
pub(crate) mod wire;

pub use bridge::{check_encoded, check_file};
pub use options::BridgeOptions;
pub use stream::Stream;
pub use wire::{WIRE_VERSION, decode, write_uv};
