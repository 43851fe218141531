//! Jepsen histories and the other formats of the field, compiled into one
//! model ([`model::History`]) that every checker reads.

pub mod build;
pub mod formats;
pub mod jepsen;
pub mod model;
pub mod text;

use std::path::Path;
use std::sync::Arc;

pub use build::BuildOptions;
pub use model::{History, Status, Workload};

use crate::anomaly::Anomaly;
use crate::error::{Error, InputError, Remedy};
use crate::source::Source;

/// Input formats `check` reads (`convert` writes all but Cobra and Viper).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Edn,
    Text,
    /// elle-cli's JSON: an array of op objects.
    Json,
    DbcopBincode,
    DbcopJson,
    DbcopHist,
    /// A directory of Cobra's binary `T*.log` files.
    Cobra,
    /// A directory of Viper's `J*.log` JSON lines.
    Viper,
}

impl Format {
    pub const ALL: [Format; 8] = [
        Format::Edn,
        Format::Json,
        Format::Text,
        Format::DbcopBincode,
        Format::DbcopJson,
        Format::DbcopHist,
        Format::Cobra,
        Format::Viper,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Edn => "edn",
            Format::Text => "text",
            Format::Json => "json",
            Format::DbcopBincode => "dbcop-bincode",
            Format::DbcopJson => "dbcop-json",
            Format::DbcopHist => "dbcop-hist",
            Format::Cobra => "cobra",
            Format::Viper => "viper",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "txt" => Some(Format::Text),
            "elle-json" => Some(Format::Json),
            _ => Format::ALL.into_iter().find(|f| f.name() == s),
        }
    }

    /// Whether `convert` can write it.
    pub fn writable(self) -> bool {
        !matches!(self, Format::Cobra | Format::Viper)
    }

    /// Guesses the format from the file name, then the first bytes.
    pub fn detect(path: &Path, bytes: &[u8]) -> Option<Format> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("edn") => return Some(Format::Edn),
            Some("bincode") => return Some(Format::DbcopBincode),
            Some("hist") => return Some(Format::DbcopHist),
            Some("txt") | Some("log") if looks_like_text(bytes) => return Some(Format::Text),
            _ => {}
        }
        formats::sniff(path, bytes).or_else(|| looks_like_text(bytes).then_some(Format::Text))
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
    /// What reading had to map or skip (for stderr).
    pub notes: formats::Notes,
}

/// How to read an input.
#[derive(Copy, Clone, Debug, Default)]
pub struct LoadOptions {
    pub format: Option<Format>,
    pub workload: Option<Workload>,
    /// dbcop inputs: what to do with two writes of one (variable, value).
    pub dbcop_duplicates: formats::dbcop::Duplicates,
}

/// Reads and compiles a history file.
pub fn load(
    path: &Path,
    opts: LoadOptions,
    progress: Option<jepsen::Progress<'_>>,
) -> Result<Loaded, Error> {
    if path.is_dir() {
        return formats::load_dir(path, opts);
    }
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
            InputError::at_line(source.name(), 1, "cannot tell the format of this file")
                .with_remedy(Remedy::NameFormat)
        })?,
    };
    let bopts = BuildOptions {
        workload: opts.workload,
        zero_is_initial: false,
    };
    let mut notes = formats::Notes::default();
    let (history, anomalies) = match format {
        Format::Edn => jepsen::read(&source, bopts, progress)?,
        Format::Text => text::read(&source, bopts)?,
        other => formats::read(&source, other, opts, &mut notes)?,
    };
    Ok(Loaded {
        history,
        anomalies,
        source,
        format,
        notes,
    })
}
