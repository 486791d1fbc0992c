//! `expc xml reveal`: mapping documents generated from an obfuscated set
//! back to the original strings.
//!
//! Token-level, by a small byte scanner: element and attribute names are
//! looked up whole among the name replacements, attribute values and whole
//! text contents (unescaped) among the value replacements; everything else
//! (whitespace, comments, processing instructions, numbers the generator
//! drew) is copied byte for byte. Whole-token lookup is what makes a name
//! that is a prefix of another safe. A revealed value is escaped again:
//! `&`, `<`, `>` in text, `&`, `<` and the quote character in attributes.
//! Caveat: a generated number equal to the replacement of a numeric-looking
//! categorical value is revealed too (digits map to digits).

use std::cell::Cell;
use std::io::{Read, Write};

use super::{ObfuscationMap, StringKind};
use crate::hash::FastMap;
use crate::XmlError;

/// Bytes read from a stream at a time; a token longer than this (a long
/// comment) grows the buffer.
const CHUNK: usize = 1 << 20;

/// Lookup tables built once from a map.
#[derive(Debug)]
pub struct Revealer<'m> {
    names: FastMap<&'m str, &'m str>,
    values: FastMap<&'m str, &'m str>,
    /// Names read and names found in the map, since the last
    /// [`Revealer::take_name_counts`]: a file whose names are all unknown
    /// was obfuscated with another map.
    names_read: Cell<u64>,
    names_found: Cell<u64>,
}

/// Why scanning a token stopped.
enum Stop {
    /// The token runs past the end of a chunk that is not the last.
    Incomplete,
    Error(XmlError),
}

struct Scan<'a> {
    input: &'a [u8],
    name: &'a str,
    /// Offset of `input` in the whole stream, for error positions.
    base: u64,
    pos: usize,
    /// No more input follows `input`.
    last: bool,
    out: Vec<u8>,
}

impl<'a> Scan<'a> {
    fn fail(&self, message: &str) -> Stop {
        Stop::Error(XmlError::Reveal {
            input: self.name.to_owned(),
            position: self.base + self.pos as u64,
            message: message.to_owned(),
        })
    }

    /// Ran out of input: an error only in the last chunk.
    fn end(&self, message: &str) -> Stop {
        if self.last {
            self.fail(message)
        } else {
            Stop::Incomplete
        }
    }

    fn rest(&self) -> &'a [u8] {
        self.input.get(self.pos..).unwrap_or_default()
    }

    /// Copies up to and including `end`.
    fn copy_through(&mut self, end: &[u8], what: &str) -> Result<(), Stop> {
        let at = find(self.rest(), end).ok_or_else(|| self.end(&format!("unterminated {what}")))?;
        self.copy(at + end.len());
        Ok(())
    }

    /// Length of the run at the cursor of bytes for which `keep` holds; a
    /// run reaching the end of a chunk that is not the last is incomplete.
    fn run(&self, keep: impl Fn(u8) -> bool, what: &str) -> Result<usize, Stop> {
        let len = self.rest().iter().take_while(|&&b| keep(b)).count();
        if self.pos + len == self.input.len() {
            return Err(self.end(&format!("input ends in {what}")));
        }
        Ok(len)
    }

    fn take(&mut self, len: usize) -> &'a [u8] {
        let start = self.pos;
        self.pos += len;
        self.input.get(start..self.pos).unwrap_or_default()
    }

    fn copy(&mut self, len: usize) {
        let bytes = self.take(len);
        self.out.extend_from_slice(bytes);
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

impl<'m> Revealer<'m> {
    pub fn new(map: &'m ObfuscationMap) -> Self {
        Self {
            names: map.reverse(&[StringKind::Tag, StringKind::Attribute]),
            values: map.reverse(&[StringKind::AttributeValue, StringKind::CategoricalValue]),
            names_read: Cell::new(0),
            names_found: Cell::new(0),
        }
    }

    /// (names read, names found in the map) since the last call.
    pub fn take_name_counts(&self) -> (u64, u64) {
        (self.names_read.take(), self.names_found.take())
    }

    /// Reveals a whole input held in memory; `name` is for errors.
    pub fn reveal_bytes(&self, input: &[u8], name: &str) -> Result<Vec<u8>, XmlError> {
        let mut out = Vec::with_capacity(input.len());
        self.chunk(input, name, 0, true, &mut out)?;
        Ok(out)
    }

    /// Reveals a stream chunk by chunk (memory bounded by the chunk size and
    /// the longest token); `name` is for errors. Returns the bytes read.
    pub fn reveal_stream<R: Read, W: Write>(&self, mut input: R, mut output: W, name: &str) -> Result<u64, XmlError> {
        let io = |action: &str, e: std::io::Error| XmlError::Reveal {
            input: name.to_owned(),
            position: 0,
            message: format!("{action}: {e}"),
        };
        let mut read = vec![0u8; CHUNK];
        // Unconsumed bytes: the tail of the previous read plus this one.
        let mut buf: Vec<u8> = Vec::with_capacity(CHUNK);
        let mut out = Vec::with_capacity(CHUNK);
        let mut base = 0u64;
        loop {
            let n = loop {
                match input.read(&mut read) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    other => break other.map_err(|e| io("read", e))?,
                }
            };
            buf.extend_from_slice(read.get(..n).unwrap_or_default());
            let last = n == 0;
            out.clear();
            let consumed = self.chunk(&buf, name, base, last, &mut out)?;
            output.write_all(&out).map_err(|e| io("write", e))?;
            buf.drain(..consumed);
            base += consumed as u64;
            if last {
                output.flush().map_err(|e| io("write", e))?;
                return Ok(base);
            }
        }
    }

    /// Reveals the complete tokens of `input` into `out`; returns how many
    /// bytes were consumed (all of them when `last`).
    fn chunk(&self, input: &[u8], name: &str, base: u64, last: bool, out: &mut Vec<u8>) -> Result<usize, XmlError> {
        let mut s = Scan {
            input,
            name,
            base,
            pos: 0,
            last,
            out: std::mem::take(out),
        };
        let result = loop {
            if s.pos >= input.len() {
                break Ok(s.pos);
            }
            let (start, written) = (s.pos, s.out.len());
            match self.token(&mut s) {
                Ok(()) => {}
                Err(Stop::Incomplete) => {
                    s.out.truncate(written);
                    break Ok(start);
                }
                Err(Stop::Error(e)) => break Err(e),
            }
        };
        *out = s.out;
        result
    }

    /// One text run or one piece of markup.
    fn token(&self, s: &mut Scan<'_>) -> Result<(), Stop> {
        let rest = s.rest();
        if !rest.starts_with(b"<") {
            let len = match s.run(|b| b != b'<', "text") {
                Ok(len) => len,
                // The last text of the input (after the root) is complete.
                Err(_) if s.last => rest.len(),
                Err(stop) => return Err(stop),
            };
            let text = s.take(len);
            let revealed = self.value(text, None);
            s.out.extend_from_slice(revealed.as_deref().unwrap_or(text));
            return Ok(());
        }
        if rest.len() < 9 && !s.last {
            // Too short to tell `<!--` or `<![CDATA[` from a tag.
            return Err(Stop::Incomplete);
        }
        if rest.starts_with(b"<!--") {
            s.copy_through(b"-->", "comment")
        } else if rest.starts_with(b"<![CDATA[") {
            s.copy_through(b"]]>", "CDATA section")
        } else if rest.starts_with(b"<?") {
            s.copy_through(b"?>", "processing instruction")
        } else if rest.starts_with(b"<!") {
            // DOCTYPE: may hold an internal subset in brackets.
            let gt = find(rest, b">").ok_or_else(|| s.end("unterminated declaration"))?;
            let subset = find(rest, b"[").is_some_and(|b| b < gt);
            s.copy_through(if subset { b"]>" } else { b">" }, "declaration")
        } else if rest.starts_with(b"</") {
            s.copy(2);
            self.name(s)?;
            s.copy_through(b">", "end tag")
        } else {
            s.copy(1);
            self.start_tag(s)
        }
    }

    /// A name at the cursor, revealed.
    fn name(&self, s: &mut Scan<'_>) -> Result<(), Stop> {
        let len = s.run(|b| !is_space(b) && !matches!(b, b'/' | b'>' | b'='), "a name")?;
        if len == 0 {
            return Err(s.fail("expected a name"));
        }
        let raw = s.take(len);
        let original = std::str::from_utf8(raw).ok().and_then(|n| self.names.get(n));
        self.names_read.set(self.names_read.get() + 1);
        self.names_found
            .set(self.names_found.get() + u64::from(original.is_some()));
        s.out.extend_from_slice(original.map_or(raw, |o| o.as_bytes()));
        Ok(())
    }

    fn start_tag(&self, s: &mut Scan<'_>) -> Result<(), Stop> {
        self.name(s)?;
        loop {
            let spaces = s.run(is_space, "a tag")?;
            s.copy(spaces);
            if matches!(s.rest().first(), Some(b'>' | b'/')) {
                return s.copy_through(b">", "tag");
            }
            self.name(s)?;
            let spaces = s.run(is_space, "a tag")?;
            s.copy(spaces);
            if s.rest().first() != Some(&b'=') {
                return Err(s.fail("expected `=` after an attribute name"));
            }
            s.copy(1);
            let spaces = s.run(is_space, "a tag")?;
            s.copy(spaces);
            let quote = match s.rest().first() {
                Some(&q @ (b'"' | b'\'')) => q,
                _ => return Err(s.fail("expected a quoted attribute value")),
            };
            s.copy(1);
            let len = s.run(|b| b != quote, "an attribute value")?;
            let raw = s.take(len);
            let revealed = self.value(raw, Some(quote));
            s.out.extend_from_slice(revealed.as_deref().unwrap_or(raw));
            s.copy(1);
        }
    }

    /// The escaped original of a raw (escaped) text or attribute value
    /// (`quote` given), if it is a replacement.
    fn value(&self, raw: &[u8], quote: Option<u8>) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(raw).ok()?;
        let unescaped = unescape(text)?;
        let original = self.values.get(unescaped.as_str())?;
        let mut out = String::with_capacity(original.len());
        for c in original.chars() {
            match (c, quote) {
                ('&', _) => out.push_str("&amp;"),
                ('<', _) => out.push_str("&lt;"),
                ('>', None) => out.push_str("&gt;"),
                ('"', Some(b'"')) => out.push_str("&quot;"),
                ('\'', Some(b'\'')) => out.push_str("&apos;"),
                (c, _) => out.push(c),
            }
        }
        Some(out.into_bytes())
    }
}

/// Resolves the predefined entities and character references; `None` for
/// anything else (left as written).
fn unescape(text: &str) -> Option<String> {
    if !text.contains('&') {
        return Some(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(rest.get(..amp)?);
        let after = rest.get(amp + 1..)?;
        let semi = after.find(';')?;
        let entity = after.get(..semi)?;
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = match entity.strip_prefix("#x") {
                    Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                    None => entity.strip_prefix('#')?.parse().ok()?,
                };
                char::from_u32(code)?
            }
        };
        out.push(c);
        rest = after.get(semi + 1..)?;
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obfuscate::MapEntry;

    fn map() -> ObfuscationMap {
        let entry = |o: &str, r: &str, kinds: &[StringKind]| MapEntry {
            original: o.into(),
            replacement: r.into(),
            kinds: kinds.to_vec(),
        };
        ObfuscationMap {
            version: 1,
            seed: 0,
            entries: vec![
                entry("sensor", "qwerty", &[StringKind::Tag]),
                entry("sensorgroup", "qwertyuiopa", &[StringKind::Tag]),
                entry("name", "abcd", &[StringKind::Attribute]),
                entry(
                    "a<b",
                    "x<y",
                    &[StringKind::AttributeValue, StringKind::CategoricalValue],
                ),
            ],
        }
    }

    #[test]
    fn names_that_prefix_others_and_escaped_values() {
        let m = map();
        let r = Revealer::new(&m);
        let doc = b"<?xml version=\"1.0\"?>\n<qwertyuiopa><!-- qwerty --><qwerty abcd='x&lt;y'>x&lt;y</qwerty>\n  <qwerty/><abcd>12</abcd></qwertyuiopa >";
        let out = r.reveal_bytes(doc, "t").expect("reveal");
        assert_eq!(
            String::from_utf8(out).expect("utf8"),
            "<?xml version=\"1.0\"?>\n<sensorgroup><!-- qwerty --><sensor name='a&lt;b'>a&lt;b</sensor>\n  <sensor/><name>12</name></sensorgroup >"
        );
        // Chunk boundaries anywhere give the same bytes.
        for chunk in 1..doc.len() {
            let reader = Chunked {
                data: doc,
                at: 0,
                chunk,
            };
            let mut out = Vec::new();
            r.reveal_stream(reader, &mut out, "t").expect("stream");
            assert_eq!(out, r.reveal_bytes(doc, "t").expect("whole"), "chunk {chunk}");
        }
        assert!(matches!(
            r.reveal_bytes(b"<a b=c>", "t"),
            Err(XmlError::Reveal { position: 5, .. })
        ));
    }

    /// A reader returning at most `chunk` bytes per call.
    struct Chunked<'a> {
        data: &'a [u8],
        at: usize,
        chunk: usize,
    }

    impl Read for Chunked<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.chunk.min(buf.len()).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }
}
