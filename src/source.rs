//! Input bytes (memory-mapped file or owned buffer) and the line index that
//! turns byte offsets into `file:line:column` and miette snippets.
//!
//! miette's stock sources find a line by scanning from byte 0 for every
//! label, which takes seconds near the end of a 500 MB history; we scan once,
//! lazily (only when a position is asked for), and binary-search afterwards.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

enum Data {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

/// A named input whose positions can be reported.
pub struct Source {
    name: String,
    data: Data,
    line_starts: OnceLock<Vec<usize>>,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Source({}, {} bytes)", self.name, self.bytes().len())
    }
}

impl Source {
    /// Maps a file into memory (empty files are read, since they cannot be
    /// mapped).
    pub fn open(path: &Path) -> std::io::Result<Source> {
        let file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        let data = if len == 0 || !file.metadata()?.is_file() {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut &file, &mut v)?;
            Data::Owned(v)
        } else {
            // SAFETY: the map is read-only; a file truncated under us while
            // we read it can fault, as with every mmap reader (ripgrep, git).
            let map = unsafe { memmap2::Mmap::map(&file)? };
            #[cfg(unix)]
            {
                let _ = map.advise(memmap2::Advice::Sequential);
            }
            Data::Mapped(map)
        };
        Ok(Source {
            name: path.display().to_string(),
            data,
            line_starts: OnceLock::new(),
        })
    }

    /// A source held in memory, named `name` in messages.
    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Source {
        Source {
            name: name.into(),
            data: Data::Owned(bytes),
            line_starts: OnceLock::new(),
        }
    }

    /// Its name, as messages give it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Data::Mapped(m) => m,
            Data::Owned(v) => v,
        }
    }

    /// Tells the kernel that the reader is done with `bytes()[..upto]`:
    /// mapped pages there leave the process's resident set (they stay in the
    /// page cache, and come back on a later touch, e.g. to render an error).
    /// Without this a read of a 500 MB file ends with all 500 MB resident on
    /// top of the compiled history.
    pub fn release(&self, from: usize, upto: usize) {
        #[cfg(unix)]
        if let Data::Mapped(m) = &self.data
            && from < upto
            && upto <= m.len()
        {
            // SAFETY: the map is a private, read-only map of a file. After
            // MADV_DONTNEED its pages read back from the file, so every byte
            // reads as before: no reference into the map sees a change
            // (short of the file changing under us, the caveat of any map).
            let _ = unsafe {
                m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, upto - from)
            };
        }
        #[cfg(not(unix))]
        let _ = (from, upto);
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let bytes = self.bytes();
            let mut starts = Vec::with_capacity(bytes.len() / 64 + 1);
            starts.push(0);
            starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
            starts
        })
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let starts = self.line_starts();
        let offset = offset.min(self.bytes().len());
        let line = starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = starts[line];
        let col = String::from_utf8_lossy(&self.bytes()[start..offset])
            .chars()
            .count();
        (line + 1, col + 1)
    }

    /// Byte range of the 1-based line `line` (without its newline).
    pub fn line_span(&self, line: usize) -> (usize, usize) {
        let starts = self.line_starts();
        let i = line.saturating_sub(1).min(starts.len() - 1);
        let start = starts[i];
        let end = starts
            .get(i + 1)
            .map(|e| e - 1)
            .unwrap_or(self.bytes().len());
        (start, end.max(start))
    }
}

/// Lets miette render snippets straight from a shared [`Source`].
#[derive(Clone, Debug)]
pub struct SharedSource(pub Arc<Source>);

impl SourceCode for SharedSource {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let src = &self.0;
        let bytes = src.bytes();
        let starts = src.line_starts();
        let off = span.offset().min(bytes.len());
        let end = (off + span.len()).min(bytes.len());
        let first = starts.partition_point(|&s| s <= off).saturating_sub(1);
        let last = starts.partition_point(|&s| s <= end).saturating_sub(1);
        let from_line = first.saturating_sub(before);
        let to_line = (last + after).min(starts.len() - 1);
        let start = starts[from_line];
        let stop = starts
            .get(to_line + 1)
            .map(|e| e - 1)
            .unwrap_or(bytes.len())
            .max(start);
        // Very long lines (a whole-file vector on one line) would flood the
        // terminal: clip the snippet to a window around the span.
        let (start, stop) = if stop - start > 4096 {
            let s = off.saturating_sub(200).max(start);
            (s, (end + 200).min(stop).max(s))
        } else {
            (start, stop)
        };
        let s = floor_char(bytes, start);
        let e = floor_char(bytes, stop);
        let (_, col) = if s == starts[from_line] {
            (0, 0)
        } else {
            let (_, c) = src.line_col(s);
            (0, c - 1)
        };
        Ok(Box::new(MietteSpanContents::new_named(
            src.name().to_string(),
            &bytes[s..e],
            SourceSpan::from((s, e - s)),
            from_line,
            col,
            to_line - from_line + 1,
        )))
    }
}

/// Moves an offset back to a UTF-8 character boundary.
fn floor_char(bytes: &[u8], mut i: usize) -> usize {
    while i > 0 && i < bytes.len() && (bytes[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i
}
