//! `elle-si convert`, and the resolution of input paths that `check` shares:
//! Jepsen store directories become their runs' `history.edn` files.
//!
//! Conversion reads the input into the history model and writes it out
//! (see `history::formats` for what each target can say), except EDN to
//! text, which streams op by op so that memory stays flat however large the
//! input.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, InputError};
use crate::history::formats::{self, Notes};
use crate::history::{self, Format, LoadOptions};
use crate::source::Source;

/// Expands the paths given to `check`: a file stays as it is; a Jepsen run
/// directory (`store/<test>/<time>/`, or `store/<test>/latest`) becomes its
/// `history.edn`; a Cobra or Viper log directory stays as it is; any other
/// directory (`store/`, `store/<test>/`) is walked for every run below it,
/// in name order, not following symlinks (Jepsen's `latest` and `current`
/// links would count runs twice).
pub fn expand_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let before = out.len();
        walk(p, &mut out)?;
        if out.len() == before {
            return Err(InputError::whole(
                &p.display().to_string(),
                "no history under this directory: expected Jepsen runs (history.edn), Cobra logs (T*.log) or Viper logs (J*.log)",
            )
            .into());
        }
    }
    Ok(out)
}

fn is_log_dir(dir: &Path) -> bool {
    ['T', 'J']
        .iter()
        .any(|&c| formats::cobra::log_files(dir, Some(c)).is_ok_and(|f| !f.is_empty()))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let history = dir.join("history.edn");
    if history.is_file() {
        out.push(history);
        return Ok(());
    }
    if is_log_dir(dir) {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir.display(), e))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for d in subdirs {
        walk(&d, out)?;
    }
    Ok(())
}

/// What `convert` does.
#[derive(Clone, Debug)]
pub struct ConvertOptions {
    /// The input's format; None: detect it.
    pub from: Option<Format>,
    /// The format to write.
    pub to: Format,
    /// How to read the input.
    pub load: LoadOptions,
}

/// Converts `input` to `output` (`-` for stdout); returns what the
/// conversion could not say exactly. A file is written beside `output`
/// and renamed over it once the conversion succeeds, so that a failed one
/// leaves no empty or partial history behind and an existing `output` as
/// it was.
pub fn convert(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<Notes, Error> {
    let shown = output.display().to_string();
    // The file to replace: an existing one through its links, so that a
    // link stays a link.
    let target = match std::fs::metadata(output) {
        _ if output == Path::new("-") => None,
        Ok(m) if m.is_dir() => {
            return Err(Error::Usage(format!(
                "{shown} is a directory: give a file to write"
            )));
        }
        Ok(m) if m.is_file() => {
            Some(std::fs::canonicalize(output).map_err(|e| Error::io(&shown, e))?)
        }
        // A device or a pipe is written as it is.
        Ok(_) => None,
        Err(_) => Some(output.to_path_buf()),
    };
    let Some(target) = target else {
        return convert_to(input, (output, &shown), opts, &mut false);
    };
    let mut name = std::ffi::OsString::from(".");
    name.push(target.file_name().unwrap_or(target.as_os_str()));
    name.push(format!(".elle-si-{}.tmp", std::process::id()));
    let partial = target.with_file_name(name);
    let mut created = false;
    let r = convert_to(input, (&partial, &shown), opts, &mut created).and_then(|notes| {
        std::fs::rename(&partial, &target).map_err(|e| Error::io(&shown, e))?;
        Ok(notes)
    });
    if r.is_err() && created {
        let _ = std::fs::remove_file(&partial);
    }
    r
}

/// [`convert`] into `output`, named `shown` in errors; `created` is set
/// once the output file is.
fn convert_to(
    input: &Path,
    (output, shown): (&Path, &str),
    opts: &ConvertOptions,
    created: &mut bool,
) -> Result<Notes, Error> {
    if !opts.to.writable() {
        return Err(Error::Usage(format!(
            "{} is read only: convert to edn, json, text, dbcop-bincode, dbcop-json or dbcop-hist",
            opts.to.name()
        )));
    }
    let input = match expand_inputs(&[input.to_path_buf()])?.as_slice() {
        [one] => one.clone(),
        many => {
            return Err(Error::Usage(format!(
                "{} holds {} histories; convert one at a time",
                input.display(),
                many.len()
            )));
        }
    };
    let mut notes = Notes::default();
    let out_name = shown;
    let mut sink: Box<dyn Write> = if output == Path::new("-") {
        Box::new(std::io::stdout().lock())
    } else {
        let f = std::fs::File::create(output).map_err(|e| Error::io(out_name, e))?;
        *created = true;
        Box::new(std::io::BufWriter::with_capacity(1 << 20, f))
    };
    let io = |e| Error::io(out_name, e);
    if opts.to == Format::Text && !input.is_dir() {
        let in_err = |e| Error::io(input.display(), e);
        // Read through a source of our own rather than `history::load`, to
        // release the pages already converted: resident memory then stays
        // flat too.
        let source = std::sync::Arc::new(Source::open(&input).map_err(in_err)?);
        let bytes = source.bytes();
        let from = opts.from.or_else(|| Format::detect(&input, bytes));
        if from == Some(Format::Edn) && opts.load.workload.is_none() {
            let mut released = 0;
            let mut release = |upto: usize| {
                source.release(released, upto);
                released = upto;
            };
            let r = formats::text::stream_from_edn(bytes, &mut sink, &mut notes, &mut release);
            return match r {
                Ok(()) => {
                    sink.flush().map_err(io)?;
                    Ok(notes)
                }
                Err(formats::text::StreamError::Parse(e)) => Err(e.locate(&source).into()),
                Err(formats::text::StreamError::Io(e)) => Err(io(e)),
            };
        }
    }
    let load = LoadOptions {
        format: opts.from,
        ..opts.load
    };
    let loaded = history::load(&input, load, None)?;
    let dbcop = [Format::DbcopBincode, Format::DbcopJson, Format::DbcopHist];
    if !loaded.history.candidates.is_empty() && !dbcop.contains(&opts.to) {
        // Jepsen's, elle-cli's and the text format name each version by a
        // value unique to its key: what they would hold is refused on
        // reading.
        return Err(Error::Usage(format!(
            "{}: {} reads may have observed any of several writes of one value (--dbcop-duplicates any), which {} cannot say (it names each version by a value unique to its key): convert to dbcop-bincode, dbcop-json or dbcop-hist, or pick a writer with --dbcop-duplicates last-writer or drop-reads",
            input.display(),
            loaded.history.candidates.len(),
            opts.to.name()
        )));
    }
    notes.lines.extend(loaded.notes.lines.iter().cloned());
    if !loaded.anomalies.is_empty() {
        notes.add(format!(
            "{} anomalies found while reading (the output keeps the history as it is)",
            loaded.anomalies.len()
        ));
    }
    formats::write(&loaded.history, opts.to, &mut sink, &mut notes).map_err(io)?;
    sink.flush().map_err(io)?;
    Ok(notes)
}
