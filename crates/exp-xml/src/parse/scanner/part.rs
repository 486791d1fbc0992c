//! Scanning one part of an input, for a split of a large input across
//! threads (`parallel/chunks.rs`).
//!
//! A part starts where a document is expected to start — the byte of a
//! `<split_at` tag found by a plain byte search — and ends where the next
//! part is expected to start. The byte search cannot tell a document's tag
//! from the same bytes in a comment, in CDATA or deeper in the tree, so
//! every guess is checked by the part before it: a scan from the input's
//! start (or from a checked guess) that reaches the next guess must find
//! there exactly the state a part scanner starts in — between documents,
//! inside the root only, the next lexeme a `<split_at` tag starting on that
//! byte. Parts that all check out read, together, exactly what one scan of
//! the whole input reads; a guess that does not check out makes the caller
//! scan the input whole instead.

use std::io::BufRead;

use super::{Scanner, State};
use crate::lexer::{Lexeme, Lexer};

impl<R: BufRead> Scanner<R> {
    /// A scanner of the input from byte `offset` on (`source` starts
    /// there), assumed to be where a document starts, right inside the
    /// root. Its [`root`](Scanner::root) is unknown: a part's scanner
    /// reports none.
    pub fn resume(input: impl Into<String>, source: R, split_at: &str, offset: u64) -> Self {
        let mut scanner = Self {
            lexer: Lexer::at(source, offset),
            state: Scanner::<&[u8]>::new(input, &[][..], Some(split_at)).state,
        };
        // The root's name is not known here; it only matters for matching
        // the root's own end tag, which is outside every document.
        scanner.state.push_name(b"");
        scanner.state.root = Some(String::new());
        scanner
    }

    /// Stops the scan at the first lexeme starting at or after `limit`.
    pub fn stop_at(&mut self, limit: u64) {
        self.state.limit = limit;
    }

    /// Whether the scan stopped at its limit in the state a part scanner
    /// starts in (see the module comment): `false` too when the input
    /// ended, or could not be read on, before the limit.
    pub fn reached_boundary(&self) -> bool {
        self.state.boundary == Some(true)
    }
}

impl State {
    /// The scan has reached its limit with `lexeme`, starting at `start`.
    #[cold]
    pub(super) fn stop_at_limit(&mut self, lexeme: &Lexeme<'_>, start: u64) {
        let is_split = |name: &[u8]| self.split_at.as_deref() == Some(name);
        let document_starts = matches!(lexeme, Lexeme::Start { name, .. } if is_split(name));
        let between = !self.in_doc() && self.depth() == 1 && self.bad.is_none();
        self.boundary = Some(start == self.limit && between && document_starts);
        self.done = true;
    }
}
