//! Jepsen histories and the other formats of the field, compiled into one
//! model ([`model::History`]) that every checker reads.

pub mod build;
pub mod jepsen;
pub mod model;
pub mod text;

use std::path::Path;
use std::sync::Arc;

pub use build::BuildOptions;
pub use model::{History, Status, Workload};

use crate::anomaly::Anomaly;
use crate::error::{Error, InputError};
use crate::source::Source;

/// Input formats `check` reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Edn,
    Text,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Edn => "edn",
            Format::Text => "text",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "edn" => Some(Format::Edn),
            "text" | "txt" => Some(Format::Text),
            _ => None,
        }
    }

    /// Guesses the format from the file name, then the first bytes.
    pub fn detect(path: &Path, bytes: &[u8]) -> Option<Format> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("edn") => return Some(Format::Edn),
            Some("txt") | Some("log") if looks_like_text(bytes) => return Some(Format::Text),
            _ => {}
        }
        let first = bytes.iter().copied().find(|c| !c.is_ascii_whitespace())?;
        match first {
            b'{' | b'[' | b'(' | b'#' | b';' => Some(Format::Edn),
            _ if looks_like_text(bytes) => Some(Format::Text),
            _ => None,
        }
    }
}

fn looks_like_text(bytes: &[u8]) -> bool {
    let t = bytes.trim_ascii_start();
    t.len() >= 2
        && matches!(t[0], b'r' | b'w' | b'R' | b'W')
        && t[1..].trim_ascii_start().first() == Some(&b'(')
}

/// A history read from a file, with what compiling it found.
pub struct Loaded {
    pub history: History,
    /// Anomalies found while compiling (internal, future reads, ...).
    pub anomalies: Vec<Anomaly>,
    pub source: Arc<Source>,
    pub format: Format,
}

/// How to read an input.
#[derive(Copy, Clone, Debug, Default)]
pub struct LoadOptions {
    pub format: Option<Format>,
    pub workload: Option<Workload>,
}

/// Reads and compiles a history file.
pub fn load(
    path: &Path,
    opts: LoadOptions,
    progress: Option<jepsen::Progress<'_>>,
) -> Result<Loaded, Error> {
    let source = Source::open(path).map_err(|e| Error::io(path.display(), e))?;
    load_source(Arc::new(source), path, opts, progress)
}

/// Compiles a history already in memory (`name` is used in messages and for
/// detecting the format by extension).
pub fn load_bytes(name: &str, bytes: Vec<u8>, opts: LoadOptions) -> Result<Loaded, Error> {
    load_source(
        Arc::new(Source::from_bytes(name, bytes)),
        Path::new(name),
        opts,
        None,
    )
}

fn load_source(
    source: Arc<Source>,
    path: &Path,
    opts: LoadOptions,
    progress: Option<jepsen::Progress<'_>>,
) -> Result<Loaded, Error> {
    let format = match opts.format {
        Some(f) => f,
        None => Format::detect(path, source.bytes()).ok_or_else(|| {
            InputError::at_line(
                source.name(),
                1,
                "cannot tell the format of this file: it is neither Jepsen EDN nor the r(k,v,s,t) text format; give -f",
            )
        })?,
    };
    let bopts = BuildOptions {
        workload: opts.workload,
        zero_is_initial: false,
    };
    let (history, anomalies) = match format {
        Format::Edn => jepsen::read(&source, bopts, progress)?,
        Format::Text => text::read(&source, bopts)?,
    };
    Ok(Loaded {
        history,
        anomalies,
        source,
        format,
    })
}
