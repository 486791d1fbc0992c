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
//!
//! The parts:
//! - this file: the lexemes, the buffer and its refills, and the loop that
//!   hands out one lexeme at a time;
//! - `text.rs`: where a run of text ends, and where a long one is cut into
//!   pieces;
//! - `markup.rs`: where a tag, comment, CDATA section, processing
//!   instruction or DOCTYPE ends;
//! - `words.rs`: the word-at-a-time byte search both use for short scans.

mod markup;
mod text;
mod words;

#[cfg(test)]
mod tests;

use std::io::{self, BufRead};

/// Bytes appended to the buffer per refill (at most).
const FILL: usize = 256 * 1024;

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

    /// A lexer of the input from byte `offset` on (`source` starts there):
    /// positions stay those of the whole input, and no byte order mark is
    /// looked for.
    pub fn at(source: R, offset: u64) -> Self {
        Self {
            offset,
            ..Self::new(source)
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

/// What a lexeme is, before it is sliced out of the buffer.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Eof,
    Text,
    Start,
    End,
    CData,
    Other,
}
