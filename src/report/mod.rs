//! Results as Elle returns them, rendered: EDN, JSON, text, pictures and
//! the `elle/` folder. The verdict itself (`:valid?`, `:anomaly-types`,
//! `:not`, `:also-not`) is computed in [`crate::check::verdict`] and
//! re-exported here for the renderers and the library's users.

pub mod dot;
pub mod folder;
pub mod html;
pub mod picture;
pub mod render;
pub mod scc;
pub mod svg;

pub use crate::check::verdict::{
    Basis, CheckResult, UNKNOWN_TYPES, Unknown, Valid, finders_of, model_verdicts, names_of,
    result_map, verdict_under,
};
