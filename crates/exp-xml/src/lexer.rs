//! A byte-level XML tokenizer over a refillable buffer, for `parse.rs`.
//!
//! quick-xml's buffered reader copies every event into a caller buffer and
//! decodes names, attributes and text through several layers; on an event
//! log that alone capped extraction near 130 MB per CPU-second. This lexer
//! finds markup with `memchr` in a buffer it refills itself and hands out
//! borrowed slices: start/end tags, text, CDATA, and "other" markup
//! (comments, processing instructions, declarations, DOCTYPE with its
//! internal subset), which is skipped without being interpreted — so entity
//! declarations are never even read.
//!
//! Only the markup being scanned must be contiguous in the buffer: long text
//! is handed out in pieces, so a 50 MB text node never sits in memory whole
//! (unless the source itself is one in-memory slice).

use std::io::{self, BufRead};

use memchr::{memchr, memchr2, memchr3, memmem};

/// Bytes appended to the buffer per refill (at most).
const FILL: usize = 256 * 1024;

/// Text longer than this without a `<` is handed out in pieces.
const TEXT_PIECE: usize = 64 * 1024;

/// One token of the input; slices borrow the lexer's buffer.
#[derive(Debug)]
pub(crate) enum Lexeme<'a> {
    /// `<name attrs>` or `<name attrs/>`: `tag` is the name and the raw
    /// attributes as written, `name` its start.
    Start {
        name: &'a [u8],
        tag: &'a [u8],
        empty: bool,
    },
    End {
        name: &'a [u8],
    },
    /// Raw text (entities not yet resolved), possibly one piece of a longer
    /// run: pieces end at a UTF-8 boundary and never inside a reference.
    /// `plain`: known to hold no `&`.
    Text {
        raw: &'a [u8],
        plain: bool,
    },
    CData(&'a [u8]),
    /// Comment, processing instruction, XML declaration, DOCTYPE.
    Other,
    Eof,
}

/// What stops the input.
#[derive(Debug)]
pub(crate) enum LexError {
    /// Markup that cannot be tokenized (unclosed comment, tag or CDATA at
    /// the end of the input, unknown `<!` markup, empty tag name).
    Syntax(String),
    Io(io::Error),
}

pub(crate) struct Lexer<R> {
    source: R,
    buf: Vec<u8>,
    pos: usize,
    /// Absolute input position of `buf[0]`.
    offset: u64,
    eof: bool,
    /// The text found last holds no `&`.
    text_plain: bool,
    /// A read error that came after some data: reported by the next fill,
    /// so the documents before it are still read.
    failed: Option<io::Error>,
}

impl<R: BufRead> Lexer<R> {
    pub fn new(source: R) -> Self {
        Self {
            source,
            buf: Vec::new(),
            pos: 0,
            offset: 0,
            eof: false,
            text_plain: false,
            failed: None,
        }
    }

    /// Absolute position of `pos`: after the last lexeme, or at the markup
    /// that failed.
    fn position(&self) -> u64 {
        self.offset + self.pos as u64
    }

    /// Appends up to [`FILL`] bytes; `false` at the end of the input.
    #[cold]
    #[inline(never)]
    fn fill(&mut self) -> Result<bool, LexError> {
        if let Some(e) = self.failed.take() {
            return Err(LexError::Io(e));
        }
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.offset += self.pos as u64;
            self.pos = 0;
        }
        let mut added = 0;
        while added < FILL {
            let chunk = match self.source.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if added > 0 => {
                    self.failed = Some(e);
                    break;
                }
                Err(e) => return Err(LexError::Io(e)),
            };
            if chunk.is_empty() {
                self.eof = true;
                break;
            }
            let take = chunk.len().min(FILL - added);
            self.buf.extend_from_slice(&chunk[..take]);
            self.source.consume(take);
            added += take;
        }
        Ok(added > 0)
    }

    /// The next lexeme with its absolute start and end positions; an error
    /// comes with the position of the markup that failed.
    #[inline(always)]
    pub fn next(&mut self) -> Result<(Lexeme<'_>, u64, u64), (LexError, u64)> {
        match self.advance() {
            Ok((kind, from, end)) => {
                let (start, stop) = (self.offset + from as u64, self.offset + end as u64);
                Ok((self.lexeme(kind, from, end), start, stop))
            }
            Err(e) => Err((e, self.position())),
        }
    }

    /// Finds the next lexeme: its kind and range in `buf`; `pos` moves past
    /// it.
    #[inline(always)]
    fn advance(&mut self) -> Result<(Kind, usize, usize), LexError> {
        if self.offset == 0 && self.pos == 0 {
            // Skip a UTF-8 byte order mark.
            while self.buf.len() < 3 && self.fill()? {}
            if self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.pos = 3;
            }
        }
        loop {
            if self.pos >= self.buf.len() && !self.fill()? {
                return Ok((Kind::Eof, self.pos, self.pos));
            }
            let found = if self.buf[self.pos] == b'<' {
                self.markup()?
            } else {
                self.text_end()?.map(|end| (Kind::Text, end))
            };
            if let Some((kind, end)) = found {
                let from = self.pos;
                self.pos = end;
                return Ok((kind, from, end));
            }
        }
    }

    /// End of the text starting at `pos`, or `None` after a refill (call
    /// again).
    fn text_end(&mut self) -> Result<Option<usize>, LexError> {
        let rest = &self.buf[self.pos..];
        // One scan finds the end and whether a reference comes before it.
        let first = scan(
            rest,
            |w| matches(w, b'<') | matches(w, b'&'),
            |t| memchr2(b'<', b'&', t),
        );
        self.text_plain = first.is_none_or(|i| rest[i] == b'<');
        let end = match first {
            Some(i) if rest[i] == b'&' => find_short(b'<', &rest[i..]).map(|j| i + j),
            found => found,
        };
        if let Some(i) = end {
            return Ok(Some(self.pos + i));
        }
        if self.buf.len() - self.pos <= TEXT_PIECE {
            if self.fill()? {
                return Ok(None);
            }
            return Ok(Some(self.buf.len()));
        }
        let rest = &self.buf[self.pos..];
        // A long piece: cut before a reference that may continue in the
        // next piece, and at a character boundary.
        let mut cut = rest.len();
        if let Some(amp) = memchr::memrchr(b'&', rest) {
            if memchr(b';', &rest[amp..]).is_none() && amp > 0 {
                cut = amp;
            }
        }
        // Step back over a character whose bytes may continue in the next
        // piece.
        let mut lead = cut.saturating_sub(1);
        while lead > 0 && rest[lead] & 0xC0 == 0x80 {
            lead -= 1;
        }
        let width = match rest[lead] {
            b if b >= 0xF0 => 4,
            b if b >= 0xE0 => 3,
            b if b >= 0xC0 => 2,
            _ => 1,
        };
        if lead > 0 && lead + width > cut {
            cut = lead;
        }
        Ok(Some(self.pos + cut.max(1)))
    }

    /// Kind and end (exclusive) of the markup at `pos`; `None` after a
    /// refill (call again).
    fn markup(&mut self) -> Result<Option<(Kind, usize)>, LexError> {
        let p = self.pos;
        let found = {
            let rest = &self.buf[p..];
            match rest.get(1) {
                None => None,
                Some(b'/') => find_short(b'>', rest).map(|i| (Kind::End, p + i + 1)),
                Some(b'?') => memmem::find(&rest[2..], b"?>").map(|i| (Kind::Other, p + 2 + i + 2)),
                Some(b'!') => match bang(rest) {
                    Bang::Comment => memmem::find(&rest[4..], b"-->").map(|i| (Kind::Other, p + 4 + i + 3)),
                    Bang::CData => memmem::find(&rest[9..], b"]]>").map(|i| (Kind::CData, p + 9 + i + 3)),
                    Bang::Doctype => doctype_end(rest).map(|i| (Kind::Other, p + i + 1)),
                    Bang::Unknown if self.eof || rest.len() >= 9 => {
                        return Err(LexError::Syntax("unknown `<!` markup".into()));
                    }
                    Bang::Unknown => None,
                },
                Some(_) => tag_end(rest).map(|i| (Kind::Start, p + i + 1)),
            }
        };
        if found.is_some() {
            return Ok(found);
        }
        if self.fill()? {
            return Ok(None);
        }
        let what = match self.buf.get(p + 1) {
            Some(b'!') => "comment, CDATA or DOCTYPE",
            Some(b'?') => "processing instruction",
            _ => "tag",
        };
        Err(LexError::Syntax(format!("unclosed {what} at the end of the input")))
    }

    #[inline(always)]
    fn lexeme(&self, kind: Kind, from: usize, end: usize) -> Lexeme<'_> {
        let markup = &self.buf[from..end];
        match kind {
            Kind::Eof => Lexeme::Eof,
            Kind::Text => Lexeme::Text {
                raw: markup,
                plain: self.text_plain,
            },
            Kind::End => Lexeme::End {
                name: markup[2..markup.len() - 1].trim_ascii_end(),
            },
            Kind::Other => Lexeme::Other,
            Kind::CData => Lexeme::CData(&markup[9..markup.len() - 3]),
            Kind::Start => {
                let inner = &markup[1..markup.len() - 1];
                let (inner, empty) = match inner.strip_suffix(b"/") {
                    Some(inner) => (inner, true),
                    None => (inner, false),
                };
                let name_len = inner
                    .iter()
                    .position(|b| b.is_ascii_whitespace())
                    .unwrap_or(inner.len());
                Lexeme::Start {
                    name: &inner[..name_len],
                    tag: inner,
                    empty,
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Eof,
    Text,
    Start,
    End,
    CData,
    Other,
}

enum Bang {
    Comment,
    CData,
    Doctype,
    Unknown,
}

fn bang(rest: &[u8]) -> Bang {
    if rest.starts_with(b"<!--") {
        Bang::Comment
    } else if rest.starts_with(b"<![CDATA[") {
        Bang::CData
    } else if rest.len() >= 9 && rest[2..9].eq_ignore_ascii_case(b"DOCTYPE") {
        Bang::Doctype
    } else {
        Bang::Unknown
    }
}

/// How far the word-at-a-time loops look before handing over to
/// `memchr`: most names, values and indentation are short, and a `memchr`
/// call costs more than scanning a few words.
const SHORT: usize = 32;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `word` equal to `byte`; exact for the
/// lowest such byte, which is all the callers use.
fn matches(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Index of the first byte in `hay` for which `mask` (see [`matches`]) of
/// its 8-byte word is set, looking at most [`SHORT`] bytes a word at a
/// time; then `tail` takes over from the offset it is given.
fn scan(hay: &[u8], mask: impl Fn(u64) -> u64, tail: impl Fn(&[u8]) -> Option<usize>) -> Option<usize> {
    let mut i = 0;
    while i < SHORT {
        let Some(Ok(word)) = hay.get(i..i + 8).map(<[u8; 8]>::try_from) else {
            break;
        };
        let m = mask(u64::from_le_bytes(word));
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    tail(hay.get(i..)?).map(|j| i + j)
}

/// Index of the first `byte` in `hay`.
fn find_short(byte: u8, hay: &[u8]) -> Option<usize> {
    scan(hay, |w| matches(w, byte), |rest| memchr(byte, rest))
}

/// Index of the `>` closing a start tag, skipping quoted attribute values.
fn tag_end(rest: &[u8]) -> Option<usize> {
    let mut i = 1;
    loop {
        let j = i + scan(
            rest.get(i..)?,
            |w| matches(w, b'>') | matches(w, b'"') | matches(w, b'\''),
            |tail| memchr3(b'>', b'"', b'\'', tail),
        )?;
        let quote = rest[j];
        if quote == b'>' {
            return Some(j);
        }
        i = j + 1 + find_short(quote, &rest[j + 1..])? + 1;
    }
}

/// Index of the `>` closing a DOCTYPE, skipping its internal subset
/// (`[...]`) and quoted literals; nothing in it is interpreted.
fn doctype_end(rest: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    for (i, &b) in rest.iter().enumerate().skip(9) {
        match (quote, b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'[') => depth += 1,
            (None, b']') => depth = depth.saturating_sub(1),
            (None, b'>') if depth == 0 => return Some(i),
            (None, _) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(xml: &[u8]) -> Vec<String> {
        let mut lexer = Lexer::new(xml);
        let mut out = Vec::new();
        loop {
            let s = match lexer.next().map(|(lexeme, _, _)| lexeme) {
                Ok(Lexeme::Start { name, tag, empty }) => format!(
                    "S {} [{}]{}",
                    String::from_utf8_lossy(name),
                    String::from_utf8_lossy(&tag[name.len()..]),
                    if empty { "/" } else { "" }
                ),
                Ok(Lexeme::End { name }) => format!("E {}", String::from_utf8_lossy(name)),
                Ok(Lexeme::Text { raw, .. }) => format!("T {}", String::from_utf8_lossy(raw)),
                Ok(Lexeme::CData(t)) => format!("C {}", String::from_utf8_lossy(t)),
                Ok(Lexeme::Other) => "O".into(),
                Ok(Lexeme::Eof) => break,
                Err((e, _)) => {
                    out.push(format!("ERR {e:?}"));
                    break;
                }
            };
            out.push(s);
        }
        out
    }

    #[test]
    fn word_scans_agree_with_byte_loops() {
        let alphabet = b"ab <>\"'\xC3\xA9=";
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for len in 0..120 {
            for _ in 0..200 {
                let hay: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        alphabet[(x % alphabet.len() as u64) as usize]
                    })
                    .collect();
                for byte in [b'<', b'>', b'"'] {
                    assert_eq!(find_short(byte, &hay), hay.iter().position(|&b| b == byte));
                }
                let naive = || {
                    let mut quote = None;
                    for (i, &b) in hay.iter().enumerate().skip(1) {
                        match (quote, b) {
                            (Some(q), b) if b == q => quote = None,
                            (Some(_), _) => {}
                            (None, b'"' | b'\'') => quote = Some(b),
                            (None, b'>') => return Some(i),
                            (None, _) => {}
                        }
                    }
                    None
                };
                assert_eq!(tag_end(&hay), naive(), "{:?}", String::from_utf8_lossy(&hay));
            }
        }
    }

    #[test]
    fn tokens() {
        let got = lex(b"\xEF\xBB\xBF<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x \"]>\">]><r a='>' b=\"'\"><!-- c --><e/>t&amp;<![CDATA[<x>]]></r >");
        assert_eq!(
            got,
            [
                "O",
                "O",
                "S r [ a='>' b=\"'\"]",
                "O",
                "S e []/",
                "T t&amp;",
                "C <x>",
                "E r",
            ]
        );
        assert!(lex(b"<a><!-- open").last().is_some_and(|s| s.starts_with("ERR")));
        assert!(lex(b"<a x='1").last().is_some_and(|s| s.starts_with("ERR")));
    }

    #[test]
    fn long_text_comes_in_pieces_at_char_boundaries() {
        let text = "é&amp;".repeat(40_000);
        let xml = format!("<a>{text}</a>");
        let pieces = lex(xml.as_bytes());
        let texts = pieces.iter().filter(|p| p.starts_with("T ")).count();
        assert!(texts >= 2, "{texts}");
        let joined: String = pieces.iter().filter_map(|p| p.strip_prefix("T ")).collect();
        assert_eq!(joined, text);
    }
}
