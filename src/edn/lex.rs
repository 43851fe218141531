//! The lexical pieces of EDN: byte classes, tokens, numbers, string and
//! character literals, and scalar atoms. The structural reader is in
//! [`super::parse`].

use nom::{
    IResult, Parser,
    bytes::complete::take_while1,
    character::complete::{char as ch, digit0, digit1, one_of},
    combinator::{opt, recognize},
};

use super::parse::Cursor;
use super::value::Value;
use crate::error::ParseError;

/// Byte classes, one table lookup per byte on the hot paths.
const DELIM: u8 = 1;
const WS: u8 = 2;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let ws: &[u8] = b" \t\n\r,\x0c";
    let mut i = 0;
    while i < ws.len() {
        t[ws[i] as usize] = DELIM | WS;
        i += 1;
    }
    let delims: &[u8] = b"()[]{}\";";
    let mut i = 0;
    while i < delims.len() {
        t[delims[i] as usize] = DELIM;
        i += 1;
    }
    t
};

/// Bytes that end a token.
#[inline]
pub fn is_delim(c: u8) -> bool {
    CLASS[c as usize] & DELIM != 0
}

/// Whitespace: spaces, tabs, newlines, form feeds and commas.
#[inline]
pub fn is_ws(c: u8) -> bool {
    CLASS[c as usize] & WS != 0
}

/// A token: the run of bytes up to the next delimiter.
#[inline]
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

/// Turns a token into a scalar value.
pub fn atom_value(t: &[u8], start: usize) -> Result<Value, ParseError> {
    let Some(&c) = t.first() else {
        return Err(ParseError::new(start, "expected a value"));
    };
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

impl<'a> Cursor<'a> {
    /// Reads a decimal integer that fits i64 straight from the bytes: the
    /// hot path of history reading. `None`, with the cursor unmoved, when
    /// the token at the cursor is anything else (the generic path decides).
    #[inline]
    pub fn fast_int(&mut self) -> Option<i64> {
        let s = self.src;
        let mut i = self.pos;
        let neg = s.get(i) == Some(&b'-');
        if neg {
            i += 1;
        }
        let first = i;
        let mut n: u64 = 0;
        while let Some(&c) = s.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            // 18 digits always fit; longer ones take the careful path.
            if i - first == 18 {
                return None;
            }
            n = n * 10 + d as u64;
            i += 1;
        }
        if i == first || s.get(i).is_some_and(|&c| !is_delim(c)) {
            return None;
        }
        self.pos = i;
        Some(if neg { -(n as i64) } else { n as i64 })
    }

    #[inline]
    pub fn take_token(&mut self) -> &'a [u8] {
        let rest = &self.src[self.pos..];
        let n = rest.iter().position(|&c| is_delim(c)).unwrap_or(rest.len());
        self.pos += n;
        &rest[..n]
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

    pub(super) fn character(&mut self) -> Result<Value, ParseError> {
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
}
