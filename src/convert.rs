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
/// conversion could not say exactly. The output is opened (and an
/// existing file emptied) only once the input has been read whole, so a
/// conversion refused for its input leaves an existing output as it was;
/// a new history too large to hold is streamed instead (EDN to text, into
/// a file not there yet). An output file it created is removed when the
/// conversion fails: no empty or partial history is left behind.
pub fn convert(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<Notes, Error> {
    let mut created = false;
    let r = convert_to(input, output, opts, &mut created);
    if r.is_err() && created {
        let _ = std::fs::remove_file(output);
    }
    r
}

/// [`convert`]; `created` is set once the output file is.
fn convert_to(
    input: &Path,
    output: &Path,
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
    let out_name = output.display().to_string();
    let stdout = output == Path::new("-");
    let existing = (!stdout).then(|| std::fs::metadata(output).ok()).flatten();
    if let Some(m) = &existing {
        if m.is_dir() {
            return Err(Error::Usage(format!(
                "{out_name} is a directory: give a file to write"
            )));
        }
        if same_file(m, &input) {
            return Err(Error::Usage(format!(
                "{out_name} is the input: write the conversion to another file"
            )));
        }
    }
    let open = |created: &mut bool| -> Result<Box<dyn Write>, Error> {
        if stdout {
            return Ok(Box::new(std::io::stdout().lock()));
        }
        let f = std::fs::File::create(output).map_err(|e| Error::io(&out_name, e))?;
        *created = true;
        Ok(Box::new(std::io::BufWriter::with_capacity(1 << 20, f)))
    };
    let io = |e| Error::io(&out_name, e);
    if opts.to == Format::Text && !input.is_dir() {
        let in_err = |e| Error::io(input.display(), e);
        // Read through a source of our own rather than `history::load`, to
        // release the pages already converted: resident memory then stays
        // flat too.
        let source = std::sync::Arc::new(Source::open(&input).map_err(in_err)?);
        let bytes = source.bytes();
        let from = opts.from.or_else(|| Format::detect(&input, bytes));
        if from == Some(Format::Edn) && opts.load.workload.is_none() {
            let stream = |sink: &mut dyn Write, notes: &mut Notes| {
                let mut released = 0;
                let mut release = |upto: usize| {
                    source.release(released, upto);
                    released = upto;
                };
                formats::text::stream_from_edn(bytes, sink, notes, &mut release)
            };
            // Over an existing file, the input is read through once first
            // (writing nothing), so that a bad one leaves the file as it was.
            if existing.is_some()
                && let Err(formats::text::StreamError::Parse(e)) =
                    stream(&mut std::io::sink(), &mut Notes::default())
            {
                return Err(e.locate(&source).into());
            }
            let mut sink = open(created)?;
            let r = stream(&mut sink, &mut notes);
            return match r {
                Ok(()) => {
                    sink.flush().map_err(io)?;
                    drop(sink);
                    // Nothing written to a new file: no transaction.
                    if *created && std::fs::metadata(output).is_ok_and(|m| m.len() == 0) {
                        return Err(nothing_to_write(&input, 0));
                    }
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
    if opts.to == Format::Json
        && let Some((a, b, both)) = formats::elle_json::merged(&loaded.history)
    {
        return Err(Error::Usage(format!(
            "{}: {a} and {b} would both be written as {both} in elle-cli's JSON, which has no keywords: convert to edn, or rename one",
            input.display()
        )));
    }
    // The register formats: text and dbcop's.
    if (opts.to == Format::Text || dbcop.contains(&opts.to))
        && let Some(t) = formats::nil_write(&loaded.history)
    {
        let line = loaded.history.txns[t as usize].complete.line;
        return Err(Error::Usage(format!(
            "{}: line {line}: {}",
            input.display(),
            formats::nil_write_refused(opts.to.name())
        )));
    }
    if loaded.history.txns.is_empty() {
        // An empty output is no history: `check` refuses it.
        return Err(nothing_to_write(&input, loaded.history.stats.skipped_ops));
    }
    let mut sink = open(created)?;
    notes.lines.extend(loaded.notes.lines.iter().cloned());
    // The model holds client transactions only.
    notes.count(loaded.history.stats.skipped_ops, |s| {
        format!("op{s} without an integer :process (nemesis and others) left out")
    });
    if let Some(r) = &loaded.history.repeated
        && r.policy != history::Duplicates::Any
    {
        // The policy decides how `check` reads them; the output holds
        // the values as they are, and a check of it weighs every writer.
        notes.add(format!(
            "the output keeps the repeated values as the history has them (--duplicates {} is how check reads them, not what is written)",
            r.policy.name()
        ));
    }
    notes.count(loaded.anomalies.len() as u64, |s| {
        format!(
            "anomal{} found while reading (the output keeps the history as it is)",
            if s.is_empty() { "y" } else { "ies" }
        )
    });
    formats::write(&loaded.history, opts.to, &mut sink, &mut notes).map_err(io)?;
    sink.flush().map_err(io)?;
    Ok(notes)
}

/// The refusal of a conversion with no client transaction to write.
fn nothing_to_write(input: &Path, skipped: u64) -> Error {
    let why = if skipped > 0 {
        format!(
            ": its {skipped} ops have no integer :process (nemesis and others), and are left out"
        )
    } else {
        String::new()
    };
    Error::Usage(format!(
        "{}: no client transaction to write{why}",
        input.display()
    ))
}

/// Whether `output`'s metadata `m` is that of the file `input` (the same
/// device and inode; never, where those are not known).
fn same_file(m: &std::fs::Metadata, input: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(input).is_ok_and(|i| i.dev() == m.dev() && i.ino() == m.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (m, input);
        false
    }
}
