//! Jepsen histories and the other formats of the field, compiled into one
//! model ([`model::History`]) that every checker reads.

// `build`, `indices` and `pairing` are public for the JNI bridge (the
// elle-si-jni crate decodes its wire format straight into the model, as the
// EDN reader does), not part of the library's API.
#[doc(hidden)]
pub mod build;
pub mod formats;
#[doc(hidden)]
pub mod indices;
pub mod model;
#[doc(hidden)]
pub mod pairing;

use std::path::Path;
use std::sync::Arc;

pub(crate) use build::BuildOptions;
pub use formats::edn::{PARALLEL_FROM, PIECE_BYTES, Progress, Split as EdnSplit};
pub use model::{Duplicates, History, KeyOrders, Status, Workload};

use crate::anomaly::Anomaly;
use crate::error::{Error, InputError, Remedy};
use crate::source::Source;

/// Input formats `check` reads (`convert` writes all but Cobra and Viper).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Jepsen's EDN: one op map a line.
    Edn,
    /// The text format of Cobra, PolySI and C4: `r(key,value,session,txn)` lines.
    Text,
    /// elle-cli's JSON: an array of op objects.
    Json,
    /// dbcop's binary (bincode) histories.
    DbcopBincode,
    /// dbcop's JSON histories.
    DbcopJson,
    /// dbcop's text language (`.hist`).
    DbcopHist,
    /// A directory of Cobra's binary `T*.log` files.
    Cobra,
    /// A directory of Viper's `J*.log` JSON lines.
    Viper,
}

impl Format {
    /// Every format.
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

    /// Its name, as `-f` spells it.
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

    /// The format of this name (or alias: `txt`, `elle-json`).
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
        Format::detect_why(path, bytes).map(|(f, _)| f)
    }

    /// [`Format::detect`], with what the guess rests on (for messages).
    pub fn detect_why(path: &Path, bytes: &[u8]) -> Option<(Format, &'static str)> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("edn") => return Some((Format::Edn, "the .edn extension")),
            Some("bincode") => return Some((Format::DbcopBincode, "the .bincode extension")),
            Some("hist") => return Some((Format::DbcopHist, "the .hist extension")),
            Some("txt") | Some("log") if looks_like_text(bytes) => {
                return Some((Format::Text, "r(...) / w(...) lines"));
            }
            _ => {}
        }
        formats::sniff(path, bytes)
            .or_else(|| looks_like_text(bytes).then_some((Format::Text, "r(...) / w(...) lines")))
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
    /// The compiled history.
    pub history: History,
    /// Anomalies found while compiling (internal, future reads, ...).
    pub anomalies: Vec<Anomaly>,
    /// The bytes it was read from (for locating errors and ops).
    pub source: Arc<Source>,
    /// The format it was read as.
    pub format: Format,
    /// What reading had to map or skip (for stderr).
    pub notes: formats::Notes,
}

/// How to read an input.
#[derive(Copy, Clone, Debug, Default)]
pub struct LoadOptions {
    /// Read as this format; None: detect it.
    pub format: Option<Format>,
    /// Read as this workload; None: detect it from the micro-ops.
    pub workload: Option<Workload>,
    /// Register histories: what to do with two writes of one (key, value).
    pub duplicates: Duplicates,
    /// Elle's key options: version orders a check infers beside the reads.
    pub keys: KeyOrders,
}

/// Takes Elle's key options into a loaded history ([`History::key_orders`]).
/// Refused (by name) where values repeat: the options order versions by
/// value, which needs each written once, as Elle's rw-register does. A
/// list-append history takes them as Elle's list-append does, inferring
/// nothing (its lists show its version orders), and a note says so.
pub fn take_key_orders(l: &mut Loaded, keys: KeyOrders) -> Result<(), Error> {
    if !keys.any() {
        return Ok(());
    }
    let asked = keys
        .names()
        .iter()
        .map(|n| format!("--{n}"))
        .collect::<Vec<_>>()
        .join(", ");
    if l.history.workload == Some(Workload::ListAppend) {
        l.notes.lines.push(format!(
            "{asked}: nothing to infer for a list-append history, whose reads show each key's \
             version order (Elle's list-append takes no such option either)"
        ));
        return Ok(());
    }
    if let Some(rep) = &l.history.repeated {
        let which = match l.history.candidates.iter().min_by_key(|(r, _)| **r) {
            Some((&r, _)) => {
                let m = l.history.mops[r as usize];
                format!(
                    "key {} has value {} written more than once",
                    l.history.key_value(m.key),
                    l.history.value(m.val)
                )
            }
            None => format!(
                "{} (key, value) pairs are written more than once",
                rep.pairs
            ),
        };
        return Err(InputError::whole(
            l.source.name(),
            format!(
                "{asked} infer version orders by value, but {which}: the options need each \
                 value written once, as Elle's rw-register does"
            ),
        )
        .into());
    }
    l.history.key_orders = keys;
    Ok(())
}

/// Reads and compiles a history file.
pub fn load(
    path: &Path,
    opts: LoadOptions,
    progress: Option<formats::edn::Progress<'_>>,
) -> Result<Loaded, Error> {
    if path.is_dir() {
        return formats::load_dir(path, opts);
    }
    let source = Source::open(path).map_err(|e| Error::io(path.display(), e))?;
    load_source(
        Arc::new(source),
        path,
        opts,
        progress,
        is_store_history(path),
    )
}

/// The first two bytes of every gzip file (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The bytes a gzip file holds (every member, as `gunzip` reads them), or
/// why they cannot be had (a truncated or corrupt file).
fn gunzip(source: &Source) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(source.bytes()),
        &mut out,
    )
    .map_err(|e| {
        InputError::whole(
            source.name(),
            format!("the file starts as gzip does, but cannot be decompressed: {e}"),
        )
    })?;
    Ok(out)
}

/// Whether error `e` lies in the first record of `bytes`, so that the
/// format guessed may be what is wrong: an error of the file as a whole,
/// or one no later than the end of [`first_record`].
fn in_first_record(source: &Source, e: &InputError) -> bool {
    let at = match e.offset() {
        Some(at) => at,
        None if e.line == 0 => return true,
        // A line alone: its start.
        None => source.line_span(e.line).0,
    };
    at < first_record(source.bytes())
}

/// Where the first record of `bytes` ends: past leading blanks, commas,
/// `;` comments and one opening bracket (a whole-file vector or array),
/// a map or object's closing brace (strings and nesting skipped), else
/// the end of the first line with content (a line-based format).
fn first_record(bytes: &[u8]) -> usize {
    let line_end = |i: usize| memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p);
    let mut i = 0;
    let mut opened = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b';' => i = line_end(i),
            b'[' | b'(' if !opened => {
                opened = true;
                i += 1;
            }
            b',' => i += 1,
            _ if b.is_ascii_whitespace() => i += 1,
            _ => break,
        }
    }
    if bytes.get(i) != Some(&b'{') {
        return line_end(i);
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (j, &b) in bytes.iter().enumerate().skip(i) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    bytes.len()
}

/// A Jepsen store's history (`history.edn`) may be empty: the run recorded
/// nothing, which is a run to report as unchecked (`:unknown`), not bad
/// input. Any other empty file is refused.
fn is_store_history(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "history.edn")
}

/// Compiles a history already in memory (`name` is used in messages and for
/// detecting the format by extension).
pub fn load_bytes(name: &str, bytes: Vec<u8>, opts: LoadOptions) -> Result<Loaded, Error> {
    load_source(
        Arc::new(Source::from_bytes(name, bytes)),
        Path::new(name),
        opts,
        None,
        is_store_history(Path::new(name)),
    )
}

/// Reads EDN bytes as [`load_bytes`] reads a Jepsen history, split as told
/// (the reader's own choice is [`EdnSplit::for_file`]): what the tests
/// compare, since the history and the first error must not depend on the
/// split.
#[doc(hidden)]
pub fn read_edn_split(
    name: &str,
    bytes: Vec<u8>,
    split: EdnSplit,
) -> Result<(History, Vec<Anomaly>), Error> {
    let source = Arc::new(Source::from_bytes(name, bytes));
    formats::edn::read_split(&source, build::BuildOptions::default(), None, split)
}

fn load_source(
    source: Arc<Source>,
    path: &Path,
    opts: LoadOptions,
    progress: Option<formats::edn::Progress<'_>>,
    empty_ok: bool,
) -> Result<Loaded, Error> {
    // A gzipped history (`history.edn.gz`) is read as the text it holds,
    // its format told by the name without `.gz` (a dbcop bincode file, which
    // may start with any bytes, is taken as one when named by -f).
    if !source.bytes().starts_with(&GZIP_MAGIC) || opts.format == Some(Format::DbcopBincode) {
        return load_text(
            source,
            path,
            opts,
            progress,
            empty_ok,
            formats::Notes::default(),
        );
    }
    let text = gunzip(&source)?;
    let mut notes = formats::Notes::default();
    notes.lines.push(format!(
        "read as gzip: {} bytes, {} once decompressed",
        source.bytes().len(),
        text.len()
    ));
    let inner = match path.extension() {
        Some(e) if e.eq_ignore_ascii_case("gz") => path.with_extension(""),
        _ => path.to_path_buf(),
    };
    let source = Arc::new(Source::from_bytes(source.name(), text));
    // (The progress bar counts the file's bytes, not the text's.)
    let _ = progress;
    load_text(source, &inner, opts, None, empty_ok, notes).map_err(|e| match e {
        Error::Input(e) => e
            .add_help("the file is gzip: its lines and columns are those of the decompressed text")
            .into(),
        e => e,
    })
}

/// [`load_source`] of text that is not compressed.
fn load_text(
    source: Arc<Source>,
    path: &Path,
    opts: LoadOptions,
    progress: Option<formats::edn::Progress<'_>>,
    empty_ok: bool,
    mut notes: formats::Notes,
) -> Result<Loaded, Error> {
    // An empty file is bad input, unless it is a store's history (a run
    // that recorded nothing) or its format was given (an empty history
    // written in it): those are read, and checked as holding nothing.
    if source.bytes().trim_ascii().is_empty() {
        if empty_ok {
            notes
                .lines
                .push("the run recorded nothing: its history.edn is empty".into());
        } else if opts.format.is_none() {
            return Err(
                InputError::whole(source.name(), "empty history: the file holds no ops").into(),
            );
        }
    }
    let (format, why) = match opts.format {
        Some(f) => (f, None),
        None if source.bytes().trim_ascii().is_empty() => (Format::Edn, None),
        None => {
            let (f, why) = Format::detect_why(path, source.bytes()).ok_or_else(|| {
                InputError::whole(source.name(), "cannot tell the format of this file")
                    .with_remedy(Remedy::NameFormat)
            })?;
            (f, Some(why))
        }
    };
    let bopts = BuildOptions {
        workload: opts.workload,
        zero_is_initial: false,
        duplicates: opts.duplicates,
    };
    let read = match format {
        Format::Edn => formats::edn::read(&source, bopts, progress),
        Format::Text => formats::text::read(&source, bopts),
        other => formats::read(&source, other, opts, &mut notes),
    };
    let (history, anomalies) = match (read, why) {
        (Ok(r), _) => r,
        // A guessed format that does not parse at its first record: say
        // what was guessed and why, so a wrong guess is seen as one. Past
        // a first record it read, the guess was right and the record is bad.
        (Err(Error::Input(e)), Some(why)) if in_first_record(&source, &e) => {
            return Err(e
                .add_help(format!(
                    "read as {} because of {why}; give -f to read it as another format",
                    format.name()
                ))
                .into());
        }
        (Err(e), _) => return Err(e),
    };
    formats::repeated_notes(&history, format, &mut notes);
    // An EDN file of no op at all (`[]`, the generator's faults of a run
    // where none fired) is as empty as an empty file.
    if format == Format::Edn && history.stats.ops == 0 && !empty_ok && opts.format.is_none() {
        let e = InputError::whole(source.name(), "empty history: the file holds no ops");
        return Err(if source.name().ends_with(".faults.edn") {
            e.add_help(
                "`elle-si gen` writes the faults that fired beside its history as \
                 FILE.faults.edn (here none), which is not a history: check FILE",
            )
        } else {
            e
        }
        .into());
    }
    let mut l = Loaded {
        history,
        anomalies,
        source,
        format,
        notes,
    };
    take_key_orders(&mut l, opts.keys)?;
    Ok(l)
}
