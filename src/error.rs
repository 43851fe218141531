//! Errors for bad input and usage: every one names the file, the line, the
//! column and the reason, and renders as a miette diagnostic with a snippet.

use std::fmt;
use std::sync::Arc;

use miette::{Diagnostic, LabeledSpan, SourceCode};

use crate::source::{SharedSource, Source};

/// Advice that names a setting of the caller's. The core names the
/// situation; each front end words the advice in its own terms: the CLI in
/// its flags ([`Remedy::cli`]), the JNI bridge in the Clojure library's
/// functions and options (`elle_si_jni`'s `clojure_remedy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// The caller fixed the workload (its name here), and the history holds
    /// the other workload's micro-ops.
    UnfixWorkload(&'static str),
    /// A directory holding no history the reader can choose on its own.
    DirectoryFormat,
    /// A file whose format was not recognised.
    NameFormat,
    /// A register history writing one (key, value) twice, refused under
    /// [`crate::history::model::Duplicates::Reject`].
    Duplicates,
}

impl Remedy {
    /// The advice in the CLI's terms.
    pub fn cli(self) -> String {
        match self {
            Remedy::UnfixWorkload(w) => format!("the workload was given as {w}; drop -w to detect it"),
            Remedy::DirectoryFormat => "give -f cobra or -f viper, or a file".into(),
            Remedy::NameFormat => {
                "give -f (edn, json, text, dbcop-bincode, dbcop-json, dbcop-hist, cobra, viper)".into()
            }
            Remedy::Duplicates => "--duplicates any lets a read of such a value have observed either write (the exact semantics; `check` does so by default); last-writer resolves it to the last writer in file order, as PolySI does".into(),
        }
    }
}

/// Help text followed by a remedy in a front end's words.
pub fn advice(help: Option<&str>, remedy: Option<String>) -> Option<String> {
    match (help, remedy) {
        (Some(h), Some(r)) => Some(format!("{h}; {r}")),
        (Some(h), None) => Some(h.to_string()),
        (None, r) => r,
    }
}

/// A failure located at a byte offset, before it is tied to its file.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// Byte offset the error points at.
    pub offset: usize,
    /// Length in bytes of what it points at (at least 1).
    pub len: usize,
    /// What is wrong, in one sentence.
    pub message: String,
    /// How to mend it, when that can be said.
    pub help: Option<String>,
    /// A remedy each front end words its own way (a flag, an option).
    pub remedy: Option<Remedy>,
    /// Further places the message refers to (e.g. the earlier invocation).
    pub related: Vec<(usize, usize, String)>,
}

impl ParseError {
    /// An error at byte `offset` (one byte long, no help).
    pub fn new(offset: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            offset,
            len: 1,
            message: message.into(),
            help: None,
            remedy: None,
            related: Vec::new(),
        }
    }

    /// Adds a remedy.
    pub fn with_remedy(mut self, remedy: Remedy) -> ParseError {
        self.remedy = Some(remedy);
        self
    }

    /// Sets how many bytes the error spans.
    pub fn with_len(mut self, len: usize) -> ParseError {
        self.len = len.max(1);
        self
    }

    /// Adds help text.
    pub fn with_help(mut self, help: impl Into<String>) -> ParseError {
        self.help = Some(help.into());
        self
    }

    /// Adds a further place the message refers to, with its label.
    pub fn with_related(mut self, offset: usize, len: usize, label: impl Into<String>) -> Self {
        self.related.push((offset, len.max(1), label.into()));
        self
    }

    /// Ties the error to its source, computing line and column once. A
    /// snippet whose lines hold control characters (a binary file, a
    /// terminal's escape sequences) is left out: printed raw, it would
    /// garble or recolour the terminal; the message says what is there,
    /// escaped ([`InputError`]'s `Display`).
    pub fn locate(mut self, src: &Arc<Source>) -> InputError {
        let (line, column) = src.line_col(self.offset);
        self.fit_snippet(src, line);
        let shown = |l: usize| {
            let (a, b) = src.line_span(l);
            src.bytes()[a..b]
                .iter()
                .all(|&c| (c >= 0x20 && c != 0x7f) || c == b'\t' || c == b'\r')
        };
        let printable = (line.saturating_sub(1).max(1)..=line + 1).all(shown)
            && self
                .related
                .iter()
                .all(|&(o, _, _)| shown(src.line_col(o).0));
        let related = self
            .related
            .into_iter()
            .map(|(o, l, label)| {
                let (rl, _) = src.line_col(o);
                (o, l, format!("{label} (line {rl})"))
            })
            .collect();
        InputError {
            file: src.name().to_string(),
            line,
            column,
            message: self.message,
            help: self.help,
            remedy: self.remedy,
            span: (self.offset, self.len),
            related,
            src: printable.then(|| SharedSource(src.clone())),
        }
    }
}

/// The most bytes a label underlines: a longer span (a whole op, a long
/// token) is underlined from its start.
const MAX_LABEL: usize = 256;
/// The most bytes between two labels miette may draw in one snippet. Its
/// graphical renderer pads to a label's column with a width argument, which
/// overflows (a panic) past 65,535 columns: on a one-line history, a label
/// far along the line from another would get there.
const MAX_APART: usize = 2048;
/// Labels this many lines apart or more are drawn in snippets of their own
/// (miette shows a line of context either side of a label).
const OWN_SNIPPET: usize = 4;

impl ParseError {
    /// Makes every label one miette can draw: each span kept to its line
    /// and to [`MAX_LABEL`] bytes, and a related place that would share a
    /// snippet with a label too far along the line named in the help
    /// instead of drawn.
    fn fit_snippet(&mut self, src: &Source, line: usize) {
        let clamp = |offset: usize, len: usize| {
            let (_, end) = src.line_span(src.line_col(offset).0);
            len.min(MAX_LABEL).min(end.saturating_sub(offset)).max(1)
        };
        self.len = clamp(self.offset, self.len);
        let mut kept = vec![(self.offset, line)];
        let mut far = Vec::new();
        for (o, l, label) in std::mem::take(&mut self.related) {
            let (rl, rc) = src.line_col(o);
            let fits = kept
                .iter()
                .all(|&(ko, kl)| ko.abs_diff(o) <= MAX_APART || kl.abs_diff(rl) >= OWN_SNIPPET);
            if fits {
                kept.push((o, rl));
                self.related.push((o, clamp(o, l), label));
            } else {
                far.push(format!("{label}: line {rl}, column {rc}"));
            }
        }
        if !far.is_empty() {
            let far = far.join("; ");
            self.help = Some(match self.help.take() {
                Some(h) => format!("{h}\n{far}"),
                None => far,
            });
        }
    }
}

/// Bad input, located in its file.
#[derive(Debug, Clone)]
pub struct InputError {
    /// The file's name as the user gave it.
    pub file: String,
    /// 1-based line (0: the file as a whole).
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong, in one sentence.
    pub message: String,
    /// How to mend it, when that can be said.
    pub help: Option<String>,
    /// A remedy each front end words its own way (a flag, an option).
    pub remedy: Option<Remedy>,
    span: (usize, usize),
    related: Vec<(usize, usize, String)>,
    src: Option<SharedSource>,
}

impl InputError {
    /// An error about a whole file or directory: it has no place, and
    /// renders with none.
    pub fn whole(file: &str, message: impl Into<String>) -> InputError {
        InputError::at_line(file, 0, message)
    }

    /// Adds to the help (a further line when there is one already).
    pub fn add_help(mut self, help: impl Into<String>) -> InputError {
        let help = help.into();
        self.help = Some(match self.help.take() {
            Some(h) => format!("{h}\n{help}"),
            None => help,
        });
        self
    }

    /// The byte offset the error points at, when it has one (an error
    /// located by line alone, or of the whole file, has none).
    pub fn offset(&self) -> Option<usize> {
        self.src.as_ref().map(|_| self.span.0)
    }

    /// An error at a line with no byte offset (line 0: the whole file).
    pub fn at_line(file: &str, line: usize, message: impl Into<String>) -> InputError {
        InputError {
            file: file.to_string(),
            line,
            column: 1,
            message: message.into(),
            help: None,
            remedy: None,
            span: (0, 0),
            related: Vec::new(),
            src: None,
        }
    }

    /// Adds a remedy.
    pub fn with_remedy(mut self, remedy: Remedy) -> InputError {
        self.remedy = Some(remedy);
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = Printable(&self.message);
        if self.line == 0 {
            write!(f, "{}: {message}", self.file)
        } else {
            write!(f, "{}:{}:{}: {message}", self.file, self.line, self.column)
        }
    }
}

/// Text quoted from the input, control characters escaped as `\u{1b}`
/// (the message's own line breaks kept).
struct Printable<'a>(&'a str);

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if c.is_control() && c != '\n' {
                write!(f, "{}", c.escape_unicode())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

impl Diagnostic for InputError {
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        advice(self.help.as_deref(), self.remedy.map(Remedy::cli))
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.src.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.src.as_ref()?;
        let main = LabeledSpan::new_primary_with_span(Some("here".into()), self.span);
        let rest = self
            .related
            .iter()
            .map(|(o, l, label)| LabeledSpan::new_with_span(Some(label.clone()), (*o, *l)));
        Some(Box::new(std::iter::once(main).chain(rest)))
    }
}

/// Everything that stops a run before a verdict.
#[derive(Debug)]
pub enum Error {
    /// A file that could not be opened, read or written.
    Io {
        /// The file, as the user named it.
        path: String,
        /// What the system said.
        err: std::io::Error,
    },
    /// Bad input, located in its file.
    Input(Box<InputError>),
    /// A request that cannot be honoured (bad options, a model not checked).
    Usage(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, err } => write!(f, "{path}: {err}"),
            Error::Input(e) => e.fmt(f),
            Error::Usage(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl From<InputError> for Error {
    fn from(e: InputError) -> Error {
        Error::Input(Box::new(e))
    }
}

impl Error {
    /// An I/O failure on `path`.
    pub fn io(path: impl fmt::Display, err: std::io::Error) -> Error {
        Error::Io {
            path: path.to_string(),
            err,
        }
    }
}
