//! The generic EDN reader: a hand-written recursive descent over bytes whose
//! lexical pieces (tokens, numbers) are nom parsers.
//!
//! The cursor is shared with the typed op reader in `history::jepsen`, which
//! reads the keys it knows itself and calls [`Cursor::value`] for the rest.
//! Nesting is bounded by [`MAX_DEPTH`]: deeper input is an error, not a stack
//! overflow (JNI threads have small stacks).

use nom::{
    IResult, Parser,
    bytes::complete::take_while1,
    character::complete::{char as ch, digit0, digit1, one_of},
    combinator::{opt, recognize},
};

use super::value::Value;
use crate::error::ParseError;

/// Deepest nesting of collections and tags the reader accepts.
pub const MAX_DEPTH: usize = 100;

/// Bytes that end a token.
#[inline]
pub fn is_delim(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b'\r' | b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';'
    ) || c == 0x0c
}

/// A token: the run of bytes up to the next delimiter.
pub fn token(i: &[u8]) -> IResult<&[u8], &[u8]> {
    take_while1(|c: u8| !is_delim(c)).parse(i)
}

/// The numeric part of a number token: sign, digits, fraction, exponent.
fn number_body(i: &[u8]) -> IResult<&[u8], &[u8]> {
    recognize((
        opt(one_of("+-")),
        digit1,
        opt((ch('.'), digit0)),
        opt((one_of("eE"), opt(one_of("+-")), digit1)),
    ))
    .parse(i)
}

/// Reads a decimal integer that fits i64, or `None` (for bigints and junk).
#[inline]
pub fn parse_i64(t: &[u8]) -> Option<i64> {
    let (neg, digits) = match t.first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let v = (d - b'0') as i64;
        n = if neg {
            n.checked_mul(10)?.checked_sub(v)?
        } else {
            n.checked_mul(10)?.checked_add(v)?
        };
    }
    Some(n)
}

/// Classifies a token that starts like a number.
fn number(t: &[u8], offset: usize) -> Result<Value, ParseError> {
    let bad = || {
        ParseError::new(
            offset,
            format!("invalid number `{}`", String::from_utf8_lossy(t)),
        )
        .with_len(t.len())
    };
    let Ok((rest, body)) = number_body(t) else {
        return Err(bad());
    };
    let s = std::str::from_utf8(body).map_err(|_| bad())?;
    let is_float = body.iter().any(|&c| matches!(c, b'.' | b'e' | b'E'));
    match rest {
        b"" if is_float => s.parse::<f64>().map(Value::Float).map_err(|_| bad()),
        b"" => Ok(parse_i64(body)
            .map(Value::Int)
            .unwrap_or_else(|| Value::BigInt(s.trim_start_matches('+').to_string()))),
        b"N" if !is_float => Ok(Value::BigInt(s.trim_start_matches('+').to_string())),
        b"M" => Ok(Value::BigDec(s.to_string())),
        [b'/', den @ ..] if !is_float && !den.is_empty() && den.iter().all(u8::is_ascii_digit) => {
            Ok(Value::Ratio(String::from_utf8_lossy(t).into_owned()))
        }
        _ => Err(bad()),
    }
}

fn is_symbol_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'.' | b'*'
                | b'+'
                | b'!'
                | b'-'
                | b'_'
                | b'?'
                | b'$'
                | b'%'
                | b'&'
                | b'='
                | b'<'
                | b'>'
                | b'/'
                | b':'
                | b'#'
                | b'\''
        )
        || c >= 0x80
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
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | 0x0c) => self.pos += 1,
                Some(b';') => {
                    self.pos = match memchr::memchr(b'\n', &self.src[self.pos..]) {
                        Some(i) => self.pos + i + 1,
                        None => self.src.len(),
                    }
                }
                Some(b'#') if self.src.get(self.pos + 1) == Some(&b'_') => {
                    let start = self.pos;
                    self.pos += 2;
                    self.skip_ws(depth)?;
                    if matches!(self.peek(), None | Some(b')' | b']' | b'}')) {
                        return Err(ParseError::new(
                            start,
                            "`#_` discards nothing: no form follows it",
                        )
                        .with_len(2));
                    }
                    self.value(depth)?;
                }
                _ => return Ok(()),
            }
        }
    }

    /// Reads the next form (whitespace already skipped or not).
    pub fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.skip_ws(depth)?;
        if depth >= MAX_DEPTH {
            return Err(self.err(format!(
                "nesting deeper than {MAX_DEPTH} levels; histories never nest this deep"
            )));
        }
        let start = self.pos;
        let Some(c) = self.peek() else {
            return Err(self.err("expected a value, found end of input"));
        };
        match c {
            b'(' => {
                self.pos += 1;
                self.seq(b')', start, depth).map(Value::List)
            }
            b'[' => {
                self.pos += 1;
                self.seq(b']', start, depth).map(Value::Vector)
            }
            b'{' => {
                self.pos += 1;
                self.map_body(start, depth).map(Value::Map)
            }
            b'"' => self.string().map(Value::String),
            b'\\' => self.character(),
            b'#' => self.dispatch(depth),
            b')' | b']' | b'}' => Err(self.err(format!(
                "unexpected `{}`: nothing open here to close",
                c as char
            ))),
            _ => self.atom(),
        }
    }

    /// Reads forms up to `close`; the opener is already consumed.
    pub fn seq(
        &mut self,
        close: u8,
        open_at: usize,
        depth: usize,
    ) -> Result<Vec<Value>, ParseError> {
        let mut out = Vec::new();
        loop {
            self.skip_ws(depth + 1)?;
            match self.peek() {
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(c @ (b')' | b']' | b'}')) => return Err(self.mismatch(c, close, open_at)),
                None => return Err(self.unterminated(close, open_at)),
                _ => out.push(self.value(depth + 1)?),
            }
        }
    }

    fn map_body(
        &mut self,
        open_at: usize,
        depth: usize,
    ) -> Result<Vec<(Value, Value)>, ParseError> {
        let mut out = Vec::new();
        loop {
            self.skip_ws(depth + 1)?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(c @ (b')' | b']')) => return Err(self.mismatch(c, b'}', open_at)),
                None => return Err(self.unterminated(b'}', open_at)),
                _ => {
                    let key_at = self.pos;
                    let k = self.value(depth + 1)?;
                    self.skip_ws(depth + 1)?;
                    if self.peek() == Some(b'}') {
                        return Err(ParseError::new(key_at, format!("map key {k} has no value"))
                            .with_help("a map needs an even number of forms"));
                    }
                    let v = self.value(depth + 1)?;
                    out.push((k, v));
                }
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

    /// Reads a string literal at the cursor.
    pub fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        self.pos += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let rest = &self.src[self.pos..];
            let Some(i) = memchr::memchr2(b'"', b'\\', rest) else {
                return Err(ParseError::new(
                    start,
                    "unterminated string: no closing `\"`",
                ));
            };
            out.extend_from_slice(&rest[..i]);
            self.pos += i;
            if rest[i] == b'"' {
                self.pos += 1;
                return String::from_utf8(out).map_err(|e| {
                    ParseError::new(
                        start + 1 + e.utf8_error().valid_up_to(),
                        "invalid UTF-8 in string",
                    )
                });
            }
            // Backslash escape.
            let esc_at = self.pos;
            let Some(&e) = self.src.get(self.pos + 1) else {
                return Err(ParseError::new(
                    start,
                    "unterminated string: no closing `\"`",
                ));
            };
            self.pos += 2;
            let c = match e {
                b'n' => '\n',
                b't' => '\t',
                b'r' => '\r',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'"' => '"',
                b'\\' => '\\',
                b'\'' => '\'',
                b'u' => self.unicode_escape(esc_at)?,
                b'0'..=b'7' => {
                    // Clojure's octal escape, up to three digits.
                    self.pos -= 1;
                    let mut n = 0u32;
                    let mut k = 0;
                    while k < 3 && matches!(self.peek(), Some(b'0'..=b'7')) {
                        n = n * 8 + (self.src[self.pos] - b'0') as u32;
                        self.pos += 1;
                        k += 1;
                    }
                    char::from_u32(n).filter(|_| n <= 0o377).ok_or_else(|| {
                        ParseError::new(esc_at, "octal escape out of range").with_len(k + 1)
                    })?
                }
                _ => {
                    return Err(ParseError::new(
                        esc_at,
                        format!("unknown string escape `\\{}`", e as char),
                    )
                    .with_len(2));
                }
            };
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }

    /// Reads the four hex digits after `\u` (cursor just past the `u`),
    /// joining a UTF-16 surrogate pair when one follows.
    fn unicode_escape(&mut self, esc_at: usize) -> Result<char, ParseError> {
        let hi = self.hex4(esc_at)?;
        if (0xD800..0xDC00).contains(&hi)
            && self.src.get(self.pos) == Some(&b'\\')
            && self.src.get(self.pos + 1) == Some(&b'u')
        {
            let save = self.pos;
            self.pos += 2;
            let lo = self.hex4(save)?;
            if (0xDC00..0xE000).contains(&lo) {
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                return char::from_u32(c)
                    .ok_or_else(|| ParseError::new(esc_at, "invalid \\u escape").with_len(12));
            }
            self.pos = save;
        }
        Ok(char::from_u32(hi).unwrap_or('\u{FFFD}'))
    }

    fn hex4(&mut self, esc_at: usize) -> Result<u32, ParseError> {
        let digits = self.src.get(self.pos..self.pos + 4).unwrap_or(&[]);
        let ok = digits.len() == 4 && digits.iter().all(u8::is_ascii_hexdigit);
        if !ok {
            return Err(
                ParseError::new(esc_at, "`\\u` must be followed by four hex digits").with_len(2),
            );
        }
        self.pos += 4;
        let s = std::str::from_utf8(digits).unwrap_or("0");
        Ok(u32::from_str_radix(s, 16).unwrap_or(0xFFFD))
    }

    fn character(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        self.pos += 1;
        let rest = &self.src[self.pos..];
        if rest.is_empty() {
            return Err(ParseError::new(
                start,
                "`\\` at end of input: expected a character",
            ));
        }
        // The first character may itself be a delimiter, as in `\(` or `\,`.
        let first_len = utf8_len(rest[0]).min(rest.len());
        let name_len = first_len
            + match token(&rest[first_len..]) {
                Ok((_, t)) => t.len(),
                Err(_) => 0,
            };
        let name = std::str::from_utf8(&rest[..name_len])
            .map_err(|_| ParseError::new(self.pos, "invalid UTF-8 in character literal"))?;
        let c = match name {
            "newline" => '\n',
            "space" => ' ',
            "tab" => '\t',
            "return" => '\r',
            "backspace" => '\u{8}',
            "formfeed" => '\u{c}',
            n if n.len() == 5
                && n.starts_with('u')
                && n[1..].bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                char::from_u32(u32::from_str_radix(&n[1..], 16).unwrap_or(0xFFFD))
                    .unwrap_or('\u{FFFD}')
            }
            n if n.len() > 1
                && n.starts_with('o')
                && n[1..].bytes().all(|b| (b'0'..=b'7').contains(&b)) =>
            {
                char::from_u32(u32::from_str_radix(&n[1..], 8).unwrap_or(0xFFFD))
                    .unwrap_or('\u{FFFD}')
            }
            n if n.chars().count() == 1 => n.chars().next().unwrap_or('\u{FFFD}'),
            n => {
                return Err(
                    ParseError::new(start, format!("unknown character literal `\\{n}`"))
                        .with_len(n.len() + 1),
                );
            }
        };
        self.pos += name_len;
        Ok(Value::Char(c))
    }

    /// `#` forms: sets, symbolic values, namespaced maps and tagged literals.
    fn dispatch(&mut self, depth: usize) -> Result<Value, ParseError> {
        let start = self.pos;
        match self.src.get(self.pos + 1) {
            Some(b'{') => {
                self.pos += 2;
                self.seq(b'}', start, depth).map(Value::Set)
            }
            Some(b'#') => {
                self.pos += 2;
                let t = self.take_token();
                match t {
                    b"Inf" => Ok(Value::Float(f64::INFINITY)),
                    b"-Inf" => Ok(Value::Float(f64::NEG_INFINITY)),
                    b"NaN" => Ok(Value::Float(f64::NAN)),
                    _ => Err(ParseError::new(
                        start,
                        "unknown symbolic value: expected ##Inf, ##-Inf or ##NaN",
                    )
                    .with_len(t.len() + 2)),
                }
            }
            Some(b':') => {
                // Namespaced map `#:ns{:a 1}` = `{:ns/a 1}`.
                self.pos += 2;
                let ns = String::from_utf8_lossy(self.take_token()).into_owned();
                self.skip_ws(depth)?;
                if self.peek() != Some(b'{') {
                    return Err(self.err(format!(
                        "expected `{{` after `#:{ns}`, found {}",
                        self.found()
                    )));
                }
                let open = self.pos;
                self.pos += 1;
                let m = self.map_body(open, depth)?;
                Ok(Value::Map(
                    m.into_iter()
                        .map(|(k, v)| match k {
                            Value::Keyword(n) if !n.contains('/') => {
                                (Value::Keyword(format!("{ns}/{n}")), v)
                            }
                            k => (k, v),
                        })
                        .collect(),
                ))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                self.pos += 1;
                let tag_at = self.pos;
                let tag = self.take_token();
                let tag = std::str::from_utf8(tag)
                    .map_err(|_| ParseError::new(tag_at, "invalid UTF-8 in tag"))?
                    .to_string();
                self.skip_ws(depth)?;
                if self.at_end() {
                    return Err(ParseError::new(
                        start,
                        format!("tag #{tag} has no form after it"),
                    ));
                }
                let v = self.value(depth + 1)?;
                Ok(Value::Tagged(tag, Box::new(v)))
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

    #[inline]
    pub fn take_token(&mut self) -> &'a [u8] {
        let rest = &self.src[self.pos..];
        match token(rest) {
            Ok((_, t)) => {
                self.pos += t.len();
                t
            }
            Err(_) => &rest[..0],
        }
    }

    /// Numbers, keywords, symbols, nil, true, false.
    fn atom(&mut self) -> Result<Value, ParseError> {
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

/// Turns a token into a scalar value.
pub fn atom_value(t: &[u8], start: usize) -> Result<Value, ParseError> {
    let c = t[0];
    if c.is_ascii_digit() || (matches!(c, b'+' | b'-') && t.get(1).is_some_and(u8::is_ascii_digit))
    {
        return number(t, start);
    }
    let s = std::str::from_utf8(t)
        .map_err(|e| ParseError::new(start + e.valid_up_to(), "invalid UTF-8"))?;
    if let Some(bad) = t.iter().position(|&b| !is_symbol_byte(b)) {
        return Err(ParseError::new(
            start + bad,
            format!("unexpected character `{}` in `{s}`", t[bad] as char),
        ));
    }
    Ok(match s {
        "nil" => Value::Nil,
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ if c == b':' => {
            if t.len() == 1 {
                return Err(ParseError::new(start, "a keyword needs a name after `:`"));
            }
            Value::Keyword(s[1..].to_string())
        }
        _ => Value::Symbol(s.to_string()),
    })
}

#[inline]
fn utf8_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
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
