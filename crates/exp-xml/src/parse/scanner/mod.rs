//! The [`Scanner`]: splits one input into documents (the whole input, or
//! each element named `split_at` under the root) and checks that each is
//! well-formed, handing its elements to a [`Sink`].
//!
//! End tags are matched against a stack of open element names
//! (`names.rs`); text between tags is resolved, cut at
//! [`MAX_VALUE_LEN`](super::MAX_VALUE_LEN) and handed over in pieces
//! (`text.rs`). A document nesting deeper than [`MAX_DEPTH`] levels is
//! skipped without reaching the sink.

mod names;
mod part;
mod text;

use std::io::BufRead;

use names::OpenName;

use super::{RawTag, Sink, MAX_DEPTH};
use crate::error::{SkipReason, Skipped};
use crate::lexer::{LexError, Lexeme, Lexer};

/// Splits one input into documents and checks that each is well-formed.
pub(crate) struct Scanner<R: BufRead> {
    lexer: Lexer<R>,
    state: State,
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
    /// Why the input cannot be read at all (its encoding, or an error
    /// reading its first bytes), reported as the first document.
    unreadable: Option<SkipReason>,
    /// Where a scan of one part of the input stops (`u64::MAX`: at its
    /// end), and whether a document starts exactly there (see `part.rs`).
    limit: u64,
    boundary: Option<bool>,
}

impl<R: BufRead> Scanner<R> {
    pub fn new(input: impl Into<String>, mut source: R, split_at: Option<&str>) -> Self {
        // Peeked, not consumed. A reader may not fail twice (a gzip stream
        // with a bad header reads as empty after its error): kept.
        let unreadable = match source.fill_buf() {
            Ok(head) => not_utf8(head).map(SkipReason::Encoding),
            Err(e) => Some(SkipReason::Io(e.to_string())),
        };
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
                unreadable,
                limit: u64::MAX,
                boundary: None,
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
        if let Some(why) = st.unreadable.take() {
            st.done = true;
            return Some(Err(st.skip(why, 0)));
        }
        while !st.done {
            let step = match self.lexer.next() {
                Ok((lexeme, start, _)) if start >= st.limit => {
                    st.stop_at_limit(&lexeme, start);
                    None
                }
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

/// Why an input starting with `head` is not UTF-8, which is all the lexer
/// reads (a UTF-16 corpus used to be "no document" or "input ended inside
/// the document"): a UTF-16 or UTF-32 byte order mark, or NUL bytes, which
/// XML never holds, among the first four.
fn not_utf8(head: &[u8]) -> Option<String> {
    let nul = |bytes: &[u8]| bytes.iter().filter(|&&x| x == 0).count();
    let (encoding, how) = match head {
        [0x00, 0x00, 0xFE, 0xFF, ..] | [0xFF, 0xFE, 0x00, 0x00, ..] => ("UTF-32", "with a byte order mark"),
        [0xFE, 0xFF, ..] | [0xFF, 0xFE, ..] => ("UTF-16", "with a byte order mark"),
        [_, _, _, _, ..] if nul(&head[..4]) == 3 => ("UTF-32", "without a byte order mark"),
        [a, b, ..] if (*a == 0) != (*b == 0) => ("UTF-16", "without a byte order mark"),
        _ => return None,
    };
    Some(format!(
        "the input is {encoding} ({how}); only UTF-8 is supported: convert it, e.g. `iconv -f {encoding} -t UTF-8`"
    ))
}

impl State {
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
        if let Err(bad_tag) = sink.open(tag) {
            self.mark_bad(bad_tag.to_string(), end);
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
}

#[cfg(test)]
mod tests {
    use super::not_utf8;

    #[test]
    fn other_encodings_are_named() {
        let utf16 = |text: &str, big: bool| -> Vec<u8> {
            text.encode_utf16()
                .flat_map(|u| if big { u.to_be_bytes() } else { u.to_le_bytes() })
                .collect()
        };
        let named = |bytes: &[u8]| not_utf8(bytes).unwrap_or_default();
        let with_bom = [&[0xFF, 0xFE][..], &utf16("<a/>", false)].concat();
        assert!(named(&with_bom).contains("UTF-16 (with a byte order mark)"));
        assert!(named(&utf16("<a/>", true)).contains("UTF-16 (without"));
        assert!(named(&utf16("\n<a/>", false)).contains("UTF-16 (without"));
        assert!(named(&[0, 0, 0, b'<', 0, 0, 0, b'a']).contains("UTF-32 (without"));
        assert!(named(&[0xFF, 0xFE, 0, 0, b'<', 0, 0, 0]).contains("`iconv -f UTF-32 -t UTF-8`"));
        assert_eq!(not_utf8(b"<a/>"), None);
        assert_eq!(
            not_utf8("\u{FEFF}<a/>".as_bytes()),
            None,
            "UTF-8 with its byte order mark"
        );
        assert_eq!(not_utf8(b""), None);
    }
}
