//! Walks JSON by hand at the outer levels (arrays and objects) and hands
//! each inner value to serde_json, so that readers know the byte offset of
//! every op or event and their errors name its line and column.

use serde::de::{DeserializeOwned, IgnoredAny};

use crate::error::ParseError;

pub struct JsonCursor<'a> {
    pub src: &'a [u8],
    pub pos: usize,
}

impl<'a> JsonCursor<'a> {
    pub fn new(src: &'a [u8]) -> JsonCursor<'a> {
        JsonCursor { src, pos: 0 }
    }

    pub fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.src.get(self.pos) {
            self.pos += 1;
        }
    }

    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.src.get(self.pos).copied()
    }

    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    fn found(&self) -> String {
        match self.src.get(self.pos) {
            None => "the end of the file".into(),
            Some(_) => {
                let end = (self.pos + 20).min(self.src.len());
                format!("`{}`", String::from_utf8_lossy(&self.src[self.pos..end]))
            }
        }
    }

    pub fn expect(&mut self, c: u8, what: &str) -> Result<(), ParseError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            return Ok(());
        }
        Err(ParseError::new(
            self.pos,
            format!("expected {what}, found {}", self.found()),
        ))
    }

    /// Reads one value with serde_json; returns it and its offset.
    pub fn value<T: DeserializeOwned>(&mut self) -> Result<(T, usize), ParseError> {
        self.ws();
        let start = self.pos;
        let mut it = serde_json::Deserializer::from_slice(&self.src[start..]).into_iter::<T>();
        match it.next() {
            Some(Ok(v)) => {
                self.pos = start + it.byte_offset();
                Ok((v, start))
            }
            Some(Err(e)) => Err(self.json_error(start, &e)),
            None => Err(ParseError::new(
                start,
                "expected a value, found the end of the file",
            )),
        }
    }

    pub fn skip(&mut self) -> Result<usize, ParseError> {
        self.value::<IgnoredAny>().map(|(_, at)| at)
    }

    /// serde_json's error, at its line and column counted from `start`.
    pub fn json_error(&self, start: usize, e: &serde_json::Error) -> ParseError {
        let mut off = start;
        for _ in 1..e.line() {
            match memchr::memchr(b'\n', &self.src[off..]) {
                Some(i) => off += i + 1,
                None => break,
            }
        }
        let off = (off + e.column().saturating_sub(1)).min(self.src.len());
        let msg = e.to_string();
        // serde_json appends " at line L column C", relative to `start`.
        let msg = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        ParseError::new(off, format!("bad JSON: {msg}"))
    }

    /// Walks an array, calling `f` at each element (whitespace skipped).
    pub fn array(
        &mut self,
        what: &str,
        mut f: impl FnMut(&mut Self, usize) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        let open = self.pos;
        self.expect(b'[', &format!("{what} (a JSON array)"))?;
        let mut i = 0;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            f(self, i)?;
            i += 1;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => {
                    return Err(ParseError::new(
                        open,
                        format!("{what}: the file ends before this array is closed"),
                    ));
                }
                _ => {
                    return Err(ParseError::new(
                        self.pos,
                        format!("expected `,` or `]` in {what}, found {}", self.found()),
                    ));
                }
            }
        }
    }

    /// Walks an object, calling `f` with each key (the cursor then at its
    /// value) and the key's offset.
    pub fn object(
        &mut self,
        what: &str,
        mut f: impl FnMut(&mut Self, &str, usize) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        let open = self.pos;
        self.expect(b'{', &format!("{what} (a JSON object)"))?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let (key, at) = self.value::<String>()?;
            self.expect(b':', "`:` after an object key")?;
            self.ws();
            f(self, &key, at)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => {
                    return Err(ParseError::new(
                        open,
                        format!("{what}: the file ends before this object is closed"),
                    ));
                }
                _ => {
                    return Err(ParseError::new(
                        self.pos,
                        format!("expected `,` or `}}` in {what}, found {}", self.found()),
                    ));
                }
            }
        }
    }
}
