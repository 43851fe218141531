//! The generic EDN reader: a hand-written loop over bytes with an explicit
//! stack of open forms, whose lexical pieces (tokens, numbers) are nom
//! parsers.
//!
//! The cursor is shared with the typed op reader in `history::formats::edn`, which
//! reads the keys it knows itself and calls [`Cursor::value`] for the rest.
//! Nesting is bounded by [`MAX_DEPTH`]: deeper input is an error. The reader
//! never recurses per level, so no input can overflow the native stack (JNI
//! threads have small stacks).

use super::value::Value;
use crate::error::ParseError;

pub use super::lex::{atom_value, is_delim, is_ws, parse_i64, token};

/// Deepest nesting of collections and tags the reader accepts.
pub const MAX_DEPTH: usize = 100;

#[derive(Copy, Clone)]
enum Seq {
    List,
    Vector,
    Set,
}

impl Seq {
    fn close(self) -> u8 {
        match self {
            Seq::List => b')',
            Seq::Vector => b']',
            Seq::Set => b'}',
        }
    }
}

/// A form the reader's loop has opened and not yet finished.
enum Frame {
    Seq {
        kind: Seq,
        open: usize,
        items: Vec<Value>,
    },
    Map {
        open: usize,
        /// `#:ns{...}`: the namespace of its plain keyword keys.
        ns: Option<String>,
        items: Vec<(Value, Value)>,
        /// A key read and awaiting its value, with its offset.
        key: Option<(Value, usize)>,
    },
    /// `#tag`, awaiting its form.
    Tag { at: usize, tag: String },
    /// `#_`, awaiting the form it drops.
    Discard { at: usize },
}

impl Frame {
    fn seq(kind: Seq, open: usize) -> Frame {
        Frame::Seq {
            kind,
            open,
            items: Vec::new(),
        }
    }

    fn map(open: usize, ns: Option<String>) -> Frame {
        Frame::Map {
            open,
            ns,
            items: Vec::new(),
            key: None,
        }
    }
}

/// A value for a message: printed, and cut short if long.
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

/// Reads EDN from a byte slice, one form at a time.
pub struct Cursor<'a> {
    pub src: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(src: &'a [u8]) -> Cursor<'a> {
        Cursor { src, pos: 0 }
    }

    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    #[inline]
    pub fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    fn err(&self, message: impl Into<String>) -> ParseError {
        ParseError::new(self.pos, message)
    }

    /// What is at the cursor, for "found ..." in messages.
    pub fn found(&self) -> String {
        match self.peek() {
            None => "end of input".into(),
            Some(_) => {
                let rest = &self.src[self.pos..];
                let t = match token(rest) {
                    Ok((_, t)) => t,
                    Err(_) => &rest[..1],
                };
                let t = &t[..t.len().min(40)];
                format!("`{}`", String::from_utf8_lossy(t))
            }
        }
    }

    /// Skips whitespace, commas, `;` comments and `#_` discarded forms.
    #[inline]
    pub fn skip_ws(&mut self, depth: usize) -> Result<(), ParseError> {
        while let Some(&c) = self.src.get(self.pos) {
            if !is_ws(c) {
                if c == b';' || c == b'#' {
                    return self.skip_ws_slow(depth);
                }
                break;
            }
            self.pos += 1;
        }
        Ok(())
    }

    fn skip_ws_slow(&mut self, depth: usize) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                Some(c) if is_ws(c) => self.pos += 1,
                Some(b';') => self.comment()?,
                Some(b'#') if self.src.get(self.pos + 1) == Some(&b'_') => {
                    let start = self.pos;
                    self.pos += 2;
                    self.skip_plain_ws()?;
                    if matches!(self.peek(), None | Some(b')' | b']' | b'}')) {
                        return Err(ParseError::new(
                            start,
                            "`#_` discards nothing: no form follows it",
                        )
                        .with_len(2));
                    }
                    // The discarded form, read by the reader's loop, which
                    // also takes further `#_`s (`#_ #_ a b`) without
                    // recursion.
                    self.value(depth)?;
                }
                _ => return Ok(()),
            }
        }
    }

    /// Skips whitespace and comments, but not `#_` (the reader's loop
    /// takes discards as frames, so that they nest without recursion).
    #[inline]
    fn skip_plain_ws(&mut self) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                Some(c) if is_ws(c) => self.pos += 1,
                Some(b';') => self.comment()?,
                _ => return Ok(()),
            }
        }
    }

    fn comment(&mut self) -> Result<(), ParseError> {
        let end = match memchr::memchr(b'\n', &self.src[self.pos..]) {
            Some(i) => self.pos + i + 1,
            None => self.src.len(),
        };
        if let Err(e) = std::str::from_utf8(&self.src[self.pos..end]) {
            return Err(ParseError::new(
                self.pos + e.valid_up_to(),
                "invalid UTF-8 in a comment",
            ));
        }
        self.pos = end;
        Ok(())
    }

    fn too_deep(&self) -> ParseError {
        self.err(format!(
            "nesting deeper than {MAX_DEPTH} levels; histories never nest this deep"
        ))
    }

    /// Reads the next form (whitespace already skipped or not), `depth`
    /// levels down in the caller's own nesting.
    ///
    /// A loop over an explicit stack of open forms, not recursion: the
    /// native stack stays flat however deep the input, and the nesting
    /// bound is a plain count.
    pub fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            self.skip_plain_ws()?;
            let start = self.pos;
            let Some(c) = self.peek() else {
                return Err(match stack.last() {
                    None => self.err("expected a value, found end of input"),
                    Some(f) => self.unclosed(f),
                });
            };
            let nests = match c {
                b'(' | b'[' | b'{' => true,
                b'#' => matches!(
                    self.src.get(self.pos + 1),
                    Some(b'{' | b'_' | b':') | Some(b'a'..=b'z' | b'A'..=b'Z')
                ),
                _ => false,
            };
            if nests && depth + stack.len() >= MAX_DEPTH {
                return Err(self.too_deep());
            }
            let (mut v, mut v_at) = match c {
                b'(' | b'[' | b'{' => {
                    self.pos += 1;
                    stack.push(match c {
                        b'(' => Frame::seq(Seq::List, start),
                        b'[' => Frame::seq(Seq::Vector, start),
                        _ => Frame::map(start, None),
                    });
                    continue;
                }
                b')' | b']' | b'}' => {
                    let Some(frame) = stack.pop() else {
                        return Err(self.err(format!(
                            "unexpected `{}`: nothing open here to close",
                            c as char
                        )));
                    };
                    let v = self.close(frame, c)?;
                    self.pos += 1;
                    v
                }
                b'"' => (Value::String(self.string()?), start),
                b'\\' => (self.character()?, start),
                b'#' => match self.dispatch(&mut stack)? {
                    Some(v) => (v, start),
                    None => continue,
                },
                _ => (self.atom()?, start),
            };
            // Hand the finished value to the innermost open form.
            loop {
                match stack.last_mut() {
                    None => return Ok(v),
                    Some(Frame::Discard { .. }) => {
                        stack.pop();
                        break;
                    }
                    Some(Frame::Tag { .. }) => {
                        if let Some(Frame::Tag { at, tag }) = stack.pop() {
                            v = Value::Tagged(tag, Box::new(v));
                            v_at = at;
                        }
                    }
                    Some(Frame::Seq { items, .. }) => {
                        items.push(v);
                        break;
                    }
                    Some(Frame::Map { items, key, .. }) => {
                        match key.take() {
                            None => *key = Some((v, v_at)),
                            Some((k, _)) => items.push((k, v)),
                        }
                        break;
                    }
                }
            }
        }
    }

    /// Closes the innermost open form at the closing bracket `c`.
    fn close(&self, frame: Frame, c: u8) -> Result<(Value, usize), ParseError> {
        match frame {
            Frame::Seq { kind, open, items } => {
                let want = kind.close();
                if c != want {
                    return Err(self.mismatch(c, want, open));
                }
                let v = match kind {
                    Seq::List => Value::List(items),
                    Seq::Vector => Value::Vector(items),
                    Seq::Set => Value::Set(items),
                };
                Ok((v, open))
            }
            Frame::Map {
                open,
                ns,
                items,
                key,
            } => {
                if c != b'}' {
                    return Err(self.mismatch(c, b'}', open));
                }
                if let Some((k, at)) = key {
                    return Err(
                        ParseError::new(at, format!("map key {} has no value", short(&k)))
                            .with_help("a map needs an even number of forms"),
                    );
                }
                let items = match ns {
                    None => items,
                    // `#:ns{:a 1}` is `{:ns/a 1}`.
                    Some(ns) => items
                        .into_iter()
                        .map(|(k, v)| match k {
                            Value::Keyword(n) if !n.contains('/') => {
                                (Value::Keyword(format!("{ns}/{n}")), v)
                            }
                            k => (k, v),
                        })
                        .collect(),
                };
                Ok((Value::Map(items), open))
            }
            f => Err(self.unclosed(&f)),
        }
    }

    /// The error for input that ends (or closes) where `f` needs a form.
    fn unclosed(&self, f: &Frame) -> ParseError {
        match f {
            Frame::Seq { kind, open, .. } => self.unterminated(kind.close(), *open),
            Frame::Map { open, .. } => self.unterminated(b'}', *open),
            Frame::Tag { at, tag } => {
                ParseError::new(*at, format!("tag #{tag} has no form after it"))
                    .with_len(tag.len() + 1)
            }
            Frame::Discard { at } => {
                ParseError::new(*at, "`#_` discards nothing: no form follows it").with_len(2)
            }
        }
    }

    pub fn mismatch(&self, found: u8, close: u8, open_at: usize) -> ParseError {
        let open = match close {
            b')' => '(',
            b']' => '[',
            _ => '{',
        };
        ParseError::new(
            self.pos,
            format!(
                "unbalanced brackets: `{}` where `{}` was expected to close the `{open}`",
                found as char, close as char
            ),
        )
        .with_related(open_at, 1, format!("`{open}` opened here"))
    }

    pub fn unterminated(&self, close: u8, open_at: usize) -> ParseError {
        let what = match close {
            b')' => "list",
            b']' => "vector",
            _ => "map or set",
        };
        ParseError::new(
            open_at,
            format!(
                "input ends inside this {what}: no closing `{}` (truncated file?)",
                close as char
            ),
        )
    }

    /// `#` forms: sets, discards, symbolic values, namespaced maps and
    /// tagged literals. Returns a finished value, or `None` after opening
    /// a form on the stack.
    fn dispatch(&mut self, stack: &mut Vec<Frame>) -> Result<Option<Value>, ParseError> {
        let start = self.pos;
        match self.src.get(self.pos + 1) {
            Some(b'{') => {
                self.pos += 2;
                stack.push(Frame::seq(Seq::Set, start));
                Ok(None)
            }
            Some(b'_') => {
                self.pos += 2;
                stack.push(Frame::Discard { at: start });
                Ok(None)
            }
            Some(b'#') => {
                self.pos += 2;
                let t = self.take_token();
                match t {
                    b"Inf" => Ok(Some(Value::Float(f64::INFINITY))),
                    b"-Inf" => Ok(Some(Value::Float(f64::NEG_INFINITY))),
                    b"NaN" => Ok(Some(Value::Float(f64::NAN))),
                    _ => Err(ParseError::new(
                        start,
                        "unknown symbolic value: expected ##Inf, ##-Inf or ##NaN",
                    )
                    .with_len(t.len() + 2)),
                }
            }
            Some(b':') => {
                self.pos += 2;
                let ns_at = self.pos;
                let ns = match atom_value(self.take_token(), ns_at) {
                    Ok(Value::Symbol(ns)) => ns,
                    _ => {
                        return Err(ParseError::new(
                            start,
                            "a namespaced map `#:ns{...}` needs a namespace name after `#:`",
                        )
                        .with_len(self.pos - start));
                    }
                };
                self.skip_plain_ws()?;
                if self.peek() != Some(b'{') {
                    return Err(self.err(format!(
                        "expected `{{` after `#:{ns}`, found {}",
                        self.found()
                    )));
                }
                stack.push(Frame::map(self.pos, Some(ns)));
                self.pos += 1;
                Ok(None)
            }
            Some(c) if c.is_ascii_alphabetic() => {
                self.pos += 1;
                let tag_at = self.pos;
                let tag = self.take_token();
                let tag = std::str::from_utf8(tag)
                    .map_err(|_| ParseError::new(tag_at, "invalid UTF-8 in tag"))?
                    .to_string();
                stack.push(Frame::Tag { at: start, tag });
                Ok(None)
            }
            _ => Err(ParseError::new(
                start,
                format!(
                    "unknown `#` form `#{}`",
                    String::from_utf8_lossy(&self.src[start + 1..(start + 2).min(self.src.len())])
                ),
            )
            .with_len(2)),
        }
    }

    /// Numbers, keywords, symbols, nil, true, false.
    fn atom(&mut self) -> Result<Value, ParseError> {
        if let Some(i) = self.fast_int() {
            return Ok(Value::Int(i));
        }
        let start = self.pos;
        let t = self.take_token();
        if t.is_empty() {
            return Err(ParseError::new(
                start,
                format!("expected a value, found {}", self.found()),
            ));
        }
        atom_value(t, start)
    }
}

/// Reads every top-level form of an EDN text.
pub fn read_all(src: &[u8]) -> Result<Vec<Value>, ParseError> {
    let mut c = Cursor::new(src);
    let mut out = Vec::new();
    loop {
        c.skip_ws(0)?;
        if c.at_end() {
            return Ok(out);
        }
        out.push(c.value(0)?);
    }
}

/// Reads exactly one form.
pub fn read_one(src: &[u8]) -> Result<Value, ParseError> {
    let mut c = Cursor::new(src);
    let v = c.value(0)?;
    c.skip_ws(0)?;
    if !c.at_end() {
        return Err(ParseError::new(
            c.pos,
            format!("expected end of input after one form, found {}", c.found()),
        ));
    }
    Ok(v)
}
