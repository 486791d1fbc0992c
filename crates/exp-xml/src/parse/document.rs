//! A document as a flat token list over one text buffer (an arena):
//! [`Document`] is the [`Sink`] for walks that want a whole document at
//! once, and [`DocReader`] yields the documents of one input that way.

use std::io::BufRead;

use super::{parse_attributes, trimmed, RawTag, Scanner, Sink, TagError, TextRange};
use crate::error::Skipped;

/// One token of a document. Strings live in the document's one text buffer
/// (an arena), so a document costs a few allocations, not one per tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// An opening tag; `attrs` indexes [`Document::attrs`], sorted by name,
    /// values unescaped.
    Open {
        name: TextRange,
        attrs: (usize, usize),
    },
    /// Text directly before the next tag, trimmed; never empty.
    Text {
        value: TextRange,
        truncated: bool,
    },
    Close,
}

/// A well-formed document as tokens over one text buffer.
#[derive(Debug, Default, Clone)]
pub struct Document {
    text: String,
    attrs: Vec<(TextRange, TextRange)>,
    pub tokens: Vec<Token>,
    /// Where the text being read starts in `text`.
    text_start: Option<usize>,
}

impl Document {
    pub fn str(&self, range: TextRange) -> &str {
        range.of(&self.text)
    }

    pub fn attrs(&self, (from, to): (usize, usize)) -> &[(TextRange, TextRange)] {
        self.attrs.get(from..to).unwrap_or_default()
    }

    fn clear(&mut self) {
        self.text.clear();
        self.attrs.clear();
        self.tokens.clear();
        self.text_start = None;
    }

    fn push_str(&mut self, s: &str) -> TextRange {
        let start = self.text.len();
        self.text.push_str(s);
        TextRange {
            start,
            end: self.text.len(),
        }
    }
}

/// Yields the documents of one input as token lists.
pub struct DocReader<R: BufRead> {
    scanner: Scanner<R>,
    doc: Document,
}

impl<R: BufRead> DocReader<R> {
    pub fn new(input: impl Into<String>, source: R, split_at: Option<&str>) -> Self {
        Self {
            scanner: Scanner::new(input, source, split_at),
            doc: Document::default(),
        }
    }

    /// The next document, `Err` for a skipped one, `None` at the end.
    pub fn next_document(&mut self) -> Option<Result<&Document, Skipped>> {
        match self.scanner.next_document(&mut self.doc)? {
            Ok(()) => Some(Ok(&self.doc)),
            Err(skipped) => Some(Err(skipped)),
        }
    }
}

impl Sink for Document {
    fn begin(&mut self) {
        self.clear();
    }

    fn open(&mut self, tag: RawTag<'_>) -> Result<(), TagError> {
        let from = self.attrs.len();
        let result = tag
            .name()
            .and_then(|name| parse_attributes(name, tag.attrs(), &mut self.text, &mut self.attrs).map(|()| name));
        // A malformed tag still opens an element, for the close that follows.
        let name = self.push_str(result.as_deref().unwrap_or("?"));
        let attrs = (from, self.attrs.len());
        self.tokens.push(Token::Open { name, attrs });
        result.map(|_| ())
    }

    fn text(&mut self, piece: &str) {
        if self.text_start.is_none() {
            self.text_start = Some(self.text.len());
        }
        self.text.push_str(piece);
    }

    fn end_text(&mut self, truncated: bool) {
        let Some(start) = self.text_start.take() else { return };
        let (start, end) = trimmed(&self.text, start, self.text.len());
        if start < end {
            let value = TextRange { start, end };
            self.tokens.push(Token::Text { value, truncated });
        }
    }

    fn close(&mut self) {
        self.tokens.push(Token::Close);
    }
}
