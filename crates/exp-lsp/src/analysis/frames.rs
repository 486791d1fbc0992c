//! The bracket frames of a document: blocks, records, lists and calls,
//! each with its opening and (if any) closing token, nested by parent;
//! unclosed brackets are closed where the text shows they end.

use super::{Analysis, Frame, FrameKind};
use crate::lex::{Tok, KEYWORDS};

impl Analysis<'_> {
    pub(super) fn build_frames(&mut self) {
        let mut stack: Vec<usize> = Vec::new();
        for i in 0..self.tokens.len() {
            self.parents[i] = stack.last().copied();
            let kind = match self.tokens[i].kind {
                Tok::Punct('{') => Some(self.brace_kind(i)),
                Tok::Punct('[') => Some(FrameKind::List),
                Tok::Punct('(') => Some(self.call_kind(i)),
                Tok::Punct(close @ ('}' | ']' | ')')) => {
                    self.close_frame(&mut stack, close, i);
                    None
                }
                _ => None,
            };
            if let Some(kind) = kind {
                self.frames.push(Frame {
                    kind,
                    open: i,
                    close: None,
                    parent: stack.last().copied(),
                });
                stack.push(self.frames.len() - 1);
                self.opens[i] = Some(self.frames.len() - 1);
            }
        }
    }

    /// A `}` closes the innermost brace frame (and any list or call left
    /// open inside it); a `]` or `)` closes only its own kind.
    pub(super) fn close_frame(&mut self, stack: &mut Vec<usize>, close: char, at: usize) {
        let opener = |frame: &Frame| match frame.kind {
            FrameKind::Block { .. } | FrameKind::Record => '}',
            FrameKind::List => ']',
            FrameKind::Call { .. } | FrameKind::Parens => ')',
        };
        let Some(position) = stack.iter().rposition(|&f| opener(&self.frames[f]) == close) else {
            return;
        };
        if close != '}' && position + 1 != stack.len() {
            return;
        }
        for &frame in &stack[position + 1..] {
            self.frames[frame].close = Some(at);
        }
        self.frames[stack[position]].close = Some(at);
        stack.truncate(position);
        self.parents[at] = stack.last().copied();
    }

    /// `kind {` or `kind "label" {` opens a block; any other `{` a record.
    pub(super) fn brace_kind(&self, i: usize) -> FrameKind {
        let Some(mut prev) = self.prev(i) else {
            return FrameKind::Record;
        };
        if matches!(self.tokens[prev].kind, Tok::Str { .. }) {
            match self.prev(prev) {
                Some(p) => prev = p,
                None => return FrameKind::Record,
            }
        }
        let is_name = self.tokens[prev].kind == Tok::Ident && !KEYWORDS.contains(&self.text_of(prev));
        let after_dot = self.prev(prev).is_some_and(|p| self.tokens[p].kind == Tok::Punct('.'));
        if is_name && !after_dot {
            FrameKind::Block {
                kind: self.text_of(prev).to_string(),
            }
        } else {
            FrameKind::Record
        }
    }

    /// `name(` (no space: the grammar's callee rule) opens a call.
    pub(super) fn call_kind(&self, i: usize) -> FrameKind {
        let Some(start) = self.path_start(i) else {
            return FrameKind::Parens;
        };
        let name: String = (start..i).map(|t| self.text_of(t)).collect();
        FrameKind::Call { name }
    }

    /// The first token of the dotted name written directly before token `i`.
    pub(super) fn path_start(&self, i: usize) -> Option<usize> {
        let last = i.checked_sub(1)?;
        if self.tokens[last].kind != Tok::Ident || !self.adjacent(last, i) {
            return None;
        }
        let mut start = last;
        while start >= 2
            && self.tokens[start - 1].kind == Tok::Punct('.')
            && self.tokens[start - 2].kind == Tok::Ident
            && self.adjacent(start - 1, start)
            && self.adjacent(start - 2, start - 1)
        {
            start -= 2;
        }
        Some(start)
    }
}
