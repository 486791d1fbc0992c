//! Streaming split of an input into documents, with quick-xml's pull reader.
//!
//! Nothing here builds a DOM: a document is a flat token list (open, text,
//! close) that the skeleton/path builders walk iteratively, so nesting depth
//! costs heap, never stack. A document is buffered whole only so that a
//! malformed one can be dropped without leaving half of it in the counts.
//!
//! Entities are never expanded: quick-xml does not process DOCTYPE entity
//! declarations, and a reference to an unknown entity is kept literally as
//! `&name;`. Only the five predefined entities and character references are
//! resolved.

use std::io::BufRead;

use quick_xml::errors::{Error, IllFormedError};
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::Reader;

use crate::error::{SkipReason, Skipped};

/// Longest value kept, in bytes. Longer text is truncated (at a character
/// boundary) and flagged, so a 50 MB text node costs 4 KiB in the counts.
pub const MAX_VALUE_LEN: usize = 4096;

/// Read buffer capacity above which the buffer is released after an event,
/// so one huge text node does not pin its size for the rest of the input.
const BUF_RELEASE: usize = 1 << 20;

/// Byte range of a string in [`Document::text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    start: usize,
    end: usize,
}

/// One token of a document. Strings live in the document's one text buffer
/// (an arena), so a document costs a few allocations, not one per tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// An opening tag; `attrs` indexes [`Document::attrs`], sorted by name,
    /// values unescaped.
    Open {
        name: Span,
        attrs: (usize, usize),
    },
    /// Text directly before the next tag, trimmed; never empty.
    Text {
        value: Span,
        truncated: bool,
    },
    Close,
}

/// A well-formed document as tokens over one text buffer.
#[derive(Debug, Default)]
pub struct Document {
    text: String,
    attrs: Vec<(Span, Span)>,
    pub tokens: Vec<Token>,
}

impl Document {
    pub fn str(&self, span: Span) -> &str {
        self.text.get(span.start..span.end).unwrap_or_default()
    }

    pub fn attrs(&self, (from, to): (usize, usize)) -> &[(Span, Span)] {
        self.attrs.get(from..to).unwrap_or_default()
    }

    fn clear(&mut self) {
        self.text.clear();
        self.attrs.clear();
        self.tokens.clear();
    }

    fn push_str(&mut self, s: &str) -> Span {
        let start = self.text.len();
        self.text.push_str(s);
        Span {
            start,
            end: self.text.len(),
        }
    }
}

/// Yields the documents of one input.
pub struct DocReader<R: BufRead> {
    reader: Reader<R>,
    input: String,
    split_at: Option<Vec<u8>>,
    buf: Vec<u8>,
    /// Open elements in the whole input (not only the current document).
    depth: usize,
    /// Depth of the current document's root, when inside one.
    doc_depth: Option<usize>,
    /// The document being read; reused (cleared) for the next one.
    doc: Document,
    text: String,
    truncated: bool,
    bad: Option<Skipped>,
    done: bool,
}

impl<R: BufRead> DocReader<R> {
    pub fn new(input: impl Into<String>, source: R, split_at: Option<&str>) -> Self {
        let mut reader = Reader::from_reader(source);
        let config = reader.config_mut();
        config.check_end_names = true;
        config.expand_empty_elements = false;
        Self {
            reader,
            input: input.into(),
            split_at: split_at.map(|s| s.as_bytes().to_vec()),
            buf: Vec::new(),
            depth: 0,
            doc_depth: None,
            doc: Document::default(),
            text: String::new(),
            truncated: false,
            bad: None,
            done: false,
        }
    }

    /// The next document, `Err` for a skipped one, `None` at the end.
    pub fn next_document(&mut self) -> Option<Result<&Document, Skipped>> {
        while !self.done {
            // The buffer is taken out of `self` so the event borrowing it
            // does not lock `self` while it is handled.
            let mut buf = std::mem::take(&mut self.buf);
            if buf.capacity() > BUF_RELEASE {
                buf = Vec::new();
            }
            buf.clear();
            let event = self.reader.read_event_into(&mut buf);
            let step: Option<Result<(), Skipped>> = match event {
                Ok(Event::Start(e)) => {
                    self.depth += 1;
                    self.open(&e);
                    None
                }
                Ok(Event::Empty(e)) => {
                    self.depth += 1;
                    self.open(&e);
                    self.close()
                }
                Ok(Event::End(_)) => self.close(),
                Ok(Event::Text(t)) => {
                    match t.decode() {
                        Ok(s) => self.push_text(&s),
                        Err(e) => self.mark_bad(format!("text: {e}")),
                    }
                    None
                }
                Ok(Event::CData(t)) => {
                    match t.decode() {
                        Ok(s) => self.push_text(&s),
                        Err(e) => self.mark_bad(format!("CDATA: {e}")),
                    }
                    None
                }
                Ok(Event::GeneralRef(r)) => {
                    self.push_ref(&r);
                    None
                }
                Ok(Event::Eof) => {
                    self.done = true;
                    self.doc_depth.is_some().then(|| Err(self.skip(SkipReason::Truncated)))
                }
                // Declarations, DOCTYPE (with any entity declarations),
                // processing instructions and comments carry no values.
                Ok(_) => None,
                Err(e) => self.error(e),
            };
            self.buf = buf;
            match step {
                Some(Ok(())) => return Some(Ok(&self.doc)),
                Some(Err(skipped)) => return Some(Err(skipped)),
                None => {}
            }
        }
        None
    }

    fn in_doc(&self) -> bool {
        self.doc_depth.is_some()
    }

    fn skip(&mut self, reason: SkipReason) -> Skipped {
        let position = self.reader.buffer_position();
        self.reset_doc();
        Skipped {
            input: self.input.clone(),
            position,
            reason,
        }
    }

    fn reset_doc(&mut self) {
        self.doc_depth = None;
        self.text.clear();
        self.truncated = false;
        self.bad = None;
    }

    /// Marks the current document malformed at `position`, or, without a
    /// position, at the reader's current position.
    fn mark_bad_at(&mut self, message: String, position: Option<u64>) {
        if self.in_doc() && self.bad.is_none() {
            self.bad = Some(Skipped {
                input: self.input.clone(),
                position: position.unwrap_or_else(|| self.reader.buffer_position()),
                reason: SkipReason::Malformed(message),
            });
        }
    }

    fn mark_bad(&mut self, message: String) {
        self.mark_bad_at(message, None);
    }

    /// Handles an opening tag already counted in `depth`.
    fn open(&mut self, e: &BytesStart<'_>) {
        let name = std::str::from_utf8(e.name().into_inner()).map_err(|err| format!("tag name: {err}"));
        if !self.in_doc() {
            let starts = match (&self.split_at, &name) {
                (None, _) => self.depth == 1,
                (Some(want), Ok(name)) => self.depth == 2 && name.as_bytes() == want.as_slice(),
                (Some(_), Err(_)) => self.depth == 2,
            };
            if !starts {
                return;
            }
            self.doc_depth = Some(self.depth);
            self.doc.clear();
        }
        self.flush_text();
        let result = name.and_then(|name| self.push_open(name, e));
        if let Err(msg) = result {
            self.mark_bad(msg);
            // Keep the token stream balanced for the close that follows.
            let name = self.doc.push_str("?");
            let at = self.doc.attrs.len();
            self.doc.tokens.push(Token::Open { name, attrs: (at, at) });
        }
    }

    /// Pushes an opening tag, attributes sorted by name. Attribute values
    /// with unknown entities are kept raw rather than expanded.
    fn push_open(&mut self, name: &str, e: &BytesStart<'_>) -> Result<(), String> {
        let from = self.doc.attrs.len();
        for attr in e.attributes() {
            let attr = attr.map_err(|err| format!("attribute in <{name}>: {err}"))?;
            let key = std::str::from_utf8(attr.key.into_inner())
                .map_err(|err| format!("attribute name in <{name}>: {err}"))?;
            let key = self.doc.push_str(key);
            let value = match attr.unescape_value() {
                Ok(v) => self.doc.push_str(&v),
                Err(_) => self.doc.push_str(&String::from_utf8_lossy(&attr.value)),
            };
            self.doc.attrs.push((key, value));
        }
        let name = self.doc.push_str(name);
        let Document { text, attrs, .. } = &mut self.doc;
        if let Some(list) = attrs.get_mut(from..) {
            list.sort_by(|a, b| {
                let ka = text.get(a.0.start..a.0.end);
                let kb = text.get(b.0.start..b.0.end);
                ka.cmp(&kb)
            });
        }
        let to = self.doc.attrs.len();
        self.doc.tokens.push(Token::Open {
            name,
            attrs: (from, to),
        });
        Ok(())
    }

    fn close(&mut self) -> Option<Result<(), Skipped>> {
        let closing = self.depth;
        self.depth = self.depth.saturating_sub(1);
        let root = self.doc_depth?;
        self.flush_text();
        self.doc.tokens.push(Token::Close);
        if closing != root {
            return None;
        }
        let result = match self.bad.take() {
            Some(skipped) => Err(skipped),
            None => Ok(()),
        };
        self.reset_doc();
        Some(result)
    }

    fn error(&mut self, e: Error) -> Option<Result<(), Skipped>> {
        match e {
            // quick-xml pops the element on a mismatched end tag, so the
            // depth stays in step and the next document can still be read.
            Error::IllFormed(IllFormedError::MismatchedEndTag { .. }) => {
                self.mark_bad_at(e.to_string(), Some(self.reader.error_position()));
                self.close()
            }
            Error::IllFormed(IllFormedError::UnmatchedEndTag(_))
            | Error::IllFormed(IllFormedError::DoubleHyphenInComment)
            | Error::IllFormed(IllFormedError::MissingDeclVersion(_))
            | Error::IllFormed(IllFormedError::MissingDoctypeName) => {
                self.mark_bad_at(e.to_string(), Some(self.reader.error_position()));
                None
            }
            Error::IllFormed(IllFormedError::MissingEndTag(_)) => {
                self.done = true;
                self.in_doc().then(|| Err(self.skip(SkipReason::Truncated)))
            }
            Error::Io(io) => {
                self.done = true;
                Some(Err(self.skip(SkipReason::Io(io.to_string()))))
            }
            // A syntax error leaves the reader with no safe place to resume:
            // the input ends here, the document in progress is skipped.
            other => {
                self.done = true;
                let mut skipped = self.skip(SkipReason::Malformed(other.to_string()));
                skipped.position = self.reader.error_position();
                Some(Err(skipped))
            }
        }
    }

    fn push_text(&mut self, s: &str) {
        if !self.in_doc() || self.truncated {
            return;
        }
        let room = MAX_VALUE_LEN.saturating_sub(self.text.len());
        if s.len() <= room {
            self.text.push_str(s);
        } else {
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            self.text.push_str(&s[..cut]);
            self.truncated = true;
        }
    }

    fn push_ref(&mut self, r: &BytesRef<'_>) {
        if !self.in_doc() {
            return;
        }
        let resolved = match r.resolve_char_ref() {
            Ok(Some(c)) => Some(c),
            Ok(None) => match r.as_ref() {
                b"amp" => Some('&'),
                b"lt" => Some('<'),
                b"gt" => Some('>'),
                b"apos" => Some('\''),
                b"quot" => Some('"'),
                _ => None,
            },
            Err(_) => None,
        };
        match resolved {
            Some(c) => self.push_text(c.encode_utf8(&mut [0; 4])),
            // Unknown (e.g. DOCTYPE-declared) entity: kept literally, never
            // expanded.
            None => {
                let name = String::from_utf8_lossy(r.as_ref()).into_owned();
                self.push_text(&format!("&{name};"));
            }
        }
    }

    fn flush_text(&mut self) {
        let value = self.text.trim();
        if !value.is_empty() {
            let value = self.doc.push_str(value);
            self.doc.tokens.push(Token::Text {
                value,
                truncated: self.truncated,
            });
        }
        self.text.clear();
        self.truncated = false;
    }
}
