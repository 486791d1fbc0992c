//! Streaming split of an input into documents, over the byte-level lexer of
//! `lexer.rs`.
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

use std::io::BufRead;

mod attrs;

pub(crate) use attrs::parse_attributes;

use crate::error::{SkipReason, Skipped};
use crate::lexer::{LexError, Lexeme, Lexer};
use crate::short;
use crate::unescape::{self, Unescape};

/// Receives the elements of the documents a [`Scanner`] reads.
pub(crate) trait Sink {
    /// A document starts: forget anything staged for the previous one.
    fn begin(&mut self);
    /// An opening tag, unchecked. On `Err` (a malformed name or attributes)
    /// the document will be skipped, but the sink must still count the
    /// element as open: a `close` follows.
    fn open(&mut self, tag: RawTag<'_>) -> Result<(), String>;
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
    pub fn name(&self) -> Result<&'a str, String> {
        match self.bytes.get(..self.name_len).unwrap_or_default() {
            [] => Err("empty tag name".to_owned()),
            name => std::str::from_utf8(name).map_err(|err| format!("tag name: {err}")),
        }
    }

    /// The attributes, unparsed.
    pub fn attrs(&self) -> &'a [u8] {
        self.bytes.get(self.name_len..).unwrap_or_default()
    }
}

/// Byte range of a string in [`Document::text`] (or another arena).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    start: usize,
    end: usize,
}

impl Span {
    /// The string this span covers in `text`.
    pub fn of(self, text: &str) -> &str {
        text.get(self.start..self.end).unwrap_or_default()
    }
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
#[derive(Debug, Default, Clone)]
pub struct Document {
    text: String,
    attrs: Vec<(Span, Span)>,
    pub tokens: Vec<Token>,
    /// Where the text being read starts in `text`.
    text_start: Option<usize>,
}

impl Document {
    pub fn str(&self, span: Span) -> &str {
        span.of(&self.text)
    }

    pub fn attrs(&self, (from, to): (usize, usize)) -> &[(Span, Span)] {
        self.attrs.get(from..to).unwrap_or_default()
    }

    fn clear(&mut self) {
        self.text.clear();
        self.attrs.clear();
        self.tokens.clear();
        self.text_start = None;
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

/// Splits one input into documents and checks that each is well-formed.
pub(crate) struct Scanner<R: BufRead> {
    lexer: Lexer<R>,
    state: State,
}

/// The name of an open element: its content when short (see
/// [`short::key16`]), else where it starts in `State::open_names`.
#[derive(Debug, Clone, Copy)]
enum OpenName {
    Short { len: usize, key: (u64, u64) },
    Long { start: usize },
}

/// Everything but the lexer, so a lexeme borrowing the lexer's buffer can
/// be handled by `&mut State` methods.
struct State {
    input: String,
    split_at: Option<Vec<u8>>,
    /// Names of the open elements in the whole input (not only the current
    /// document), for matching end tags: short ones in `marks` itself,
    /// longer ones in `open_names`.
    open_names: Vec<u8>,
    marks: Vec<OpenName>,
    /// Depth of the current document's root, when inside one.
    doc_depth: Option<usize>,
    /// Bytes of text handed to the sink since the last tag.
    text_len: usize,
    /// Whitespace-only text skipped before `text` (it still counts towards
    /// [`MAX_VALUE_LEN`], as the value is cut before it is trimmed).
    skipped_space: usize,
    scratch: String,
    truncated: bool,
    bad: Option<Skipped>,
    done: bool,
    /// Name of the input's first top-level element.
    root: Option<String>,
}

impl<R: BufRead> Scanner<R> {
    pub fn new(input: impl Into<String>, source: R, split_at: Option<&str>) -> Self {
        Self {
            lexer: Lexer::new(source),
            state: State {
                input: input.into(),
                split_at: split_at.map(|s| s.as_bytes().to_vec()),
                open_names: Vec::new(),
                marks: Vec::new(),
                doc_depth: None,
                text_len: 0,
                skipped_space: 0,
                scratch: String::new(),
                truncated: false,
                bad: None,
                done: false,
                root: None,
            },
        }
    }

    /// Name of the input's first top-level element, once it was read (the
    /// root that holds the documents when splitting).
    pub fn root(&self) -> Option<&str> {
        self.state.root.as_deref()
    }

    /// Reads the next document into `sink`: `Ok` when it was well-formed,
    /// `Err` for a skipped one (drop what the sink staged), `None` at the
    /// end.
    pub fn next_document<S: Sink>(&mut self, sink: &mut S) -> Option<Result<(), Skipped>> {
        let st = &mut self.state;
        while !st.done {
            let step = match self.lexer.next() {
                Ok((lexeme, start, end)) => match lexeme {
                    Lexeme::Start { name, tag, empty, .. } => {
                        st.push_name(name);
                        let tag = RawTag {
                            bytes: tag,
                            name_len: name.len(),
                        };
                        st.open(sink, tag, end);
                        if empty {
                            st.close(sink)
                        } else {
                            None
                        }
                    }
                    Lexeme::End { name } => st.end_tag(sink, name, start),
                    Lexeme::Text { raw, plain } => {
                        st.push_raw_text(sink, raw, plain, end);
                        None
                    }
                    Lexeme::CData(raw) => {
                        match std::str::from_utf8(raw) {
                            Ok(s) => st.push_text(sink, s),
                            Err(e) => st.mark_bad(format!("CDATA: {e}"), end),
                        }
                        None
                    }
                    // Declarations, DOCTYPE (with any entity declarations),
                    // processing instructions and comments carry no values.
                    Lexeme::Other => None,
                    Lexeme::Eof => {
                        st.done = true;
                        st.in_doc().then(|| Err(st.skip(SkipReason::Truncated, end)))
                    }
                },
                // Markup that cannot be tokenized leaves no safe place to
                // resume: the input ends here, the document in progress is
                // skipped.
                Err((LexError::Syntax(message), position)) => {
                    st.done = true;
                    Some(Err(st.skip(SkipReason::Malformed(message), position)))
                }
                Err((LexError::Io(e), position)) => {
                    st.done = true;
                    Some(Err(st.skip(SkipReason::Io(e.to_string()), position)))
                }
            };
            if step.is_some() {
                return step;
            }
        }
        None
    }
}

impl State {
    fn push_name(&mut self, name: &[u8]) {
        let open = match short::key16(name) {
            Some(key) => OpenName::Short { len: name.len(), key },
            None => {
                let start = self.open_names.len();
                self.open_names.extend_from_slice(name);
                OpenName::Long { start }
            }
        };
        self.marks.push(open);
    }

    /// Whether `name` closes the open element `open`.
    fn matches(&self, open: OpenName, name: &[u8]) -> bool {
        match open {
            OpenName::Short { len, key } => len == name.len() && short::key16(name) == Some(key),
            OpenName::Long { start } => self.open_names.get(start..) == Some(name),
        }
    }

    /// An open element's name, for messages.
    fn name_text(&self, open: OpenName) -> String {
        let name = match open {
            OpenName::Short { len, key } => short::unkey16(len, key),
            OpenName::Long { start } => self.open_names.get(start..).unwrap_or_default().to_vec(),
        };
        String::from_utf8_lossy(&name).into_owned()
    }

    fn in_doc(&self) -> bool {
        self.doc_depth.is_some()
    }

    fn depth(&self) -> usize {
        self.marks.len()
    }

    fn skip(&mut self, reason: SkipReason, position: u64) -> Skipped {
        self.reset_doc();
        Skipped {
            input: self.input.clone(),
            position,
            reason,
        }
    }

    fn reset_doc(&mut self) {
        self.doc_depth = None;
        self.text_len = 0;
        self.skipped_space = 0;
        self.truncated = false;
        self.bad = None;
    }

    /// Marks the current document malformed at `position` (the first
    /// problem wins).
    fn mark_bad(&mut self, message: String, position: u64) {
        if self.in_doc() && self.bad.is_none() {
            self.bad = Some(Skipped {
                input: self.input.clone(),
                position,
                reason: SkipReason::Malformed(message),
            });
        }
    }

    /// Handles an opening tag already pushed on the open-element stack;
    /// `end` is the position after it.
    fn open<S: Sink>(&mut self, sink: &mut S, tag: RawTag<'_>, end: u64) {
        if !self.in_doc() {
            let name = tag.name();
            let depth = self.depth();
            // A root named like the split element is itself one document:
            // generated sets written one document per file read back with
            // the same `split_at` as their corpus.
            let bare = depth == 1
                && matches!((&self.split_at, &name), (Some(want), Ok(name)) if name.as_bytes() == want.as_slice());
            if depth == 1 && !bare && self.root.is_none() {
                self.root = name.as_ref().ok().map(|n| (*n).to_owned());
            }
            let starts = match (&self.split_at, &name) {
                (None, _) => depth == 1,
                (Some(want), Ok(name)) => bare || (depth == 2 && name.as_bytes() == want.as_slice()),
                (Some(_), Err(_)) => depth == 2,
            };
            if !starts {
                return;
            }
            self.doc_depth = Some(depth);
            sink.begin();
        }
        if self.too_deep(self.depth()) {
            // Skipped, and not handed to the sink: every element's path
            // holds all its ancestors, so 30,000 levels took 1.5 GB.
            self.mark_bad(format!("elements nest deeper than {MAX_DEPTH} levels"), end);
            return;
        }
        self.flush_text(sink);
        if let Err(msg) = sink.open(tag) {
            self.mark_bad(msg, end);
        }
    }

    /// Whether an element at `depth` of the input lies past [`MAX_DEPTH`]
    /// levels of its document.
    fn too_deep(&self, depth: usize) -> bool {
        self.doc_depth.is_some_and(|root| depth - root >= MAX_DEPTH)
    }

    fn end_tag<S: Sink>(&mut self, sink: &mut S, name: &[u8], start: u64) -> Option<Result<(), Skipped>> {
        let Some(&open) = self.marks.last() else {
            let message = format!("unmatched end tag </{}>", String::from_utf8_lossy(name));
            self.mark_bad(message, start);
            return None;
        };
        if !self.matches(open, name) {
            // Pop the element anyway, so the depth stays in step and the
            // next document can still be read.
            let message = format!(
                "end tag </{}> does not match <{}>",
                String::from_utf8_lossy(name),
                self.name_text(open)
            );
            self.mark_bad(message, start);
        }
        self.close(sink)
    }

    #[inline]
    fn close<S: Sink>(&mut self, sink: &mut S) -> Option<Result<(), Skipped>> {
        let closing = self.depth();
        if let Some(OpenName::Long { start }) = self.marks.pop() {
            self.open_names.truncate(start);
        }
        if self.too_deep(closing) {
            return None; // never opened in the sink
        }
        let root = self.doc_depth?;
        self.flush_text(sink);
        sink.close();
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

    /// Text with references (`plain`: known to have none); once the value
    /// is cut at [`MAX_VALUE_LEN`] the rest of it is not even decoded.
    #[inline]
    fn push_raw_text<S: Sink>(&mut self, sink: &mut S, raw: &[u8], plain: bool, end: u64) {
        if !self.in_doc() || self.truncated {
            return;
        }
        if self.text_len == 0 && raw.iter().all(u8::is_ascii_whitespace) {
            // Indentation between tags: trimmed anyway.
            self.skipped_space += raw.len();
            return;
        }
        let result = if plain || memchr::memchr(b'&', raw).is_none() {
            match std::str::from_utf8(raw) {
                Ok(s) => {
                    self.push_text(sink, s);
                    Ok(())
                }
                Err(_) => Err(Unescape::Utf8),
            }
        } else {
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            let result = unescape::text(raw, &mut scratch);
            if result.is_ok() {
                self.push_text(sink, &scratch);
            }
            self.scratch = scratch;
            result
        };
        match result {
            Ok(()) => {}
            Err(Unescape::Utf8) => self.mark_bad("text: invalid UTF-8".into(), end),
            Err(_) => self.mark_bad("text: `&` without a closing `;`".into(), end),
        }
    }

    #[inline]
    fn push_text<S: Sink>(&mut self, sink: &mut S, s: &str) {
        if !self.in_doc() || self.truncated {
            return;
        }
        let room = MAX_VALUE_LEN.saturating_sub(self.skipped_space + self.text_len);
        let mut cut = s.len().min(room);
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        self.truncated = cut < s.len();
        let piece = s.get(..cut).unwrap_or_default();
        if !piece.is_empty() {
            sink.text(piece);
            self.text_len += piece.len();
        }
    }

    #[inline]
    fn flush_text<S: Sink>(&mut self, sink: &mut S) {
        if self.text_len > 0 {
            sink.end_text(self.truncated);
        }
        self.text_len = 0;
        self.skipped_space = 0;
        self.truncated = false;
    }
}
