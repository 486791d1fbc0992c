//! Streaming split of an input into documents, over the byte-level lexer of
//! `lexer/`.
//!
//! Nothing here builds a DOM: the [`Scanner`] checks well-formedness and
//! hands each document's elements to a [`Sink`] as events (open, text,
//! close), and says at the end of the document whether it was well-formed.
//! A sink stages what it records until then, so a malformed document can be
//! dropped without leaving half of it in the counts. [`DocReader`] is the
//! sink that keeps a document as a flat token list, for walks that want the
//! whole document; the extractor is a sink of its own. Nesting depth costs
//! heap, never stack.
//!
//! Entities are never expanded: DOCTYPE declarations are skipped unread, and
//! a reference to an unknown entity is kept literally as `&name;` (in an
//! attribute value, the whole value is then kept raw). Only the five
//! predefined entities and character references are resolved.
//!
//! The parts:
//! - this file: the [`Sink`] interface, the limits, opening tags as written
//!   ([`RawTag`]) and ranges of an arena's text ([`TextRange`]);
//! - `scanner.rs`: the [`Scanner`], which splits an input into documents and
//!   checks that each is well-formed (with the stack of open element names
//!   in `scanner/names.rs` and the text between tags in `scanner/text.rs`);
//! - `attrs.rs`: the attributes of an opening tag, parsed, resolved and
//!   sorted;
//! - `document.rs`: a document as a token list ([`Document`]) and the
//!   reader that yields them ([`DocReader`]).

mod attrs;
mod document;
mod scanner;

pub(crate) use attrs::parse_attributes;
pub use document::{DocReader, Document, Token};
pub(crate) use scanner::Scanner;

/// Receives the elements of the documents a [`Scanner`] reads.
pub(crate) trait Sink {
    /// A document starts: forget anything staged for the previous one.
    fn begin(&mut self);
    /// An opening tag, unchecked. On `Err` (a malformed name or attributes)
    /// the document will be skipped, but the sink must still count the
    /// element as open: a `close` follows.
    fn open(&mut self, tag: RawTag<'_>) -> Result<(), TagError>;
    /// A piece of text, references resolved; the pieces up to the next tag
    /// are one text.
    fn text(&mut self, piece: &str);
    /// The text since the last tag is complete (`truncated`: cut at
    /// [`MAX_VALUE_LEN`]): the sink trims it (see [`trimmed`]) and drops it
    /// if nothing is left.
    fn end_text(&mut self, truncated: bool);
    fn close(&mut self);
}

/// Longest value kept, in bytes. Longer text is truncated (at a character
/// boundary) and flagged, so a 50 MB text node costs 4 KiB in the counts.
pub const MAX_VALUE_LEN: usize = 4096;

/// Deepest element nesting of one document; a deeper document is skipped
/// as malformed. Real documents nest a few dozen levels.
pub const MAX_DEPTH: usize = 1000;

/// The range `start..end` of `text` without leading and trailing
/// whitespace.
pub(crate) fn trimmed(text: &str, start: usize, end: usize) -> (usize, usize) {
    let value = text.get(start..end).unwrap_or_default();
    let lead = value.len() - value.trim_start().len();
    let trail = value.len() - value.trim_end().len();
    (start + lead, (end - trail).max(start + lead))
}

/// An opening tag as written, `<name attrs>` without the brackets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawTag<'a> {
    /// The name and the attributes.
    pub bytes: &'a [u8],
    name_len: usize,
}

impl<'a> RawTag<'a> {
    /// The tag name, checked.
    pub fn name(&self) -> Result<&'a str, TagError> {
        match self.bytes.get(..self.name_len).unwrap_or_default() {
            [] => Err(TagError::EmptyName),
            name => std::str::from_utf8(name).map_err(TagError::NameNotUtf8),
        }
    }

    /// The attributes, unparsed.
    pub fn attrs(&self) -> &'a [u8] {
        self.bytes.get(self.name_len..).unwrap_or_default()
    }
}

/// Why an opening tag is malformed. Its text is the message of the
/// document's [`SkipReason::Malformed`](crate::SkipReason::Malformed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TagError {
    #[error("empty tag name")]
    EmptyName,
    #[error("tag name: {0}")]
    NameNotUtf8(std::str::Utf8Error),
    #[error("attribute in <{element}>: {problem}")]
    Attribute { element: String, problem: AttributeProblem },
    #[error("duplicate attribute in <{element}>")]
    DuplicateAttribute { element: String },
}

/// What is wrong with one attribute of a tag (`attrs.rs`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AttributeProblem {
    #[error("no `=` after the name")]
    NoEquals,
    #[error("value not quoted")]
    NotQuoted,
    #[error("unclosed value")]
    Unclosed,
    #[error("no space after a value")]
    NoSpaceAfterValue,
    #[error("empty name")]
    EmptyName,
    #[error("name: {0}")]
    NameNotUtf8(std::str::Utf8Error),
}

/// Byte range of a string in a [`Document`]'s text buffer (or another
/// arena of strings). Where a string lies in memory, not in the input: not
/// to be confused with `exp_diagnostics::Span`, a source location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextRange {
    start: usize,
    end: usize,
}

impl TextRange {
    /// The string this range covers in `text`.
    pub fn of(self, text: &str) -> &str {
        text.get(self.start..self.end).unwrap_or_default()
    }
}
