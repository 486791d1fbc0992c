//! The role of each token (a property key, a block kind, a reference to a
//! name…), read from its neighbours and its frame.

use super::{Analysis, FrameKind, Role};
use crate::lex::{Tok, KEYWORDS};

impl Analysis<'_> {
    pub(super) fn assign_roles(&mut self) {
        for i in 0..self.tokens.len() {
            self.roles[i] = match self.tokens[i].kind {
                Tok::Comment => Role::Comment,
                Tok::Number => Role::Number,
                Tok::Unit => Role::Unit,
                Tok::Str { .. } => self.string_role(i),
                Tok::Punct(_) | Tok::DotDot => Role::Punct,
                Tok::Other => Role::Other,
                Tok::Ident => self.ident_role(i),
            };
        }
    }

    pub(super) fn string_role(&self, i: usize) -> Role {
        match self.prev(i).map(|p| self.text_of(p)) {
            Some("import") => Role::ImportPath,
            _ if self.opens_block_after(i) => Role::Label,
            _ => Role::Str,
        }
    }

    /// Whether the next code token is a `{` that opens a block.
    pub(super) fn opens_block_after(&self, i: usize) -> bool {
        self.next(i).is_some_and(|n| {
            self.frames
                .iter()
                .any(|f| f.open == n && matches!(f.kind, FrameKind::Block { .. }))
        })
    }

    pub(super) fn ident_role(&self, i: usize) -> Role {
        let text = self.text_of(i);
        let prev = self.prev(i);
        let prev_text = prev.map(|p| self.text_of(p));
        let next = self.next(i);
        if text == "true" || text == "false" {
            return Role::Bool;
        }
        if KEYWORDS.contains(&text) || (text == "step" && self.after_range(i)) {
            return Role::Keyword;
        }
        if prev_text == Some("let") {
            return Role::LetName;
        }
        if prev_text == Some("as") {
            return Role::ImportAlias;
        }
        if i > 0 && self.tokens[i - 1].kind == Tok::Punct('.') && self.adjacent(i - 1, i) {
            let is_callee = self.path_end(i).is_some_and(|end| self.is_call_open(end + 1));
            return if is_callee { Role::Callee } else { Role::PathMember };
        }
        if self.path_end(i).is_some_and(|end| self.is_call_open(end + 1)) {
            return Role::Callee;
        }
        if self.opens_block_after(i)
            || next.is_some_and(|n| matches!(self.tokens[n].kind, Tok::Str { .. }) && self.opens_block_after(n))
        {
            return Role::BlockKind;
        }
        if next.is_some_and(|n| self.tokens[n].kind == Tok::Punct('=')) {
            return match self.frame_of(i).map(|f| &f.kind) {
                Some(FrameKind::Block { kind }) if kind == "sweep" => Role::SweepParam,
                Some(FrameKind::Block { .. }) | None => Role::PropertyKey,
                Some(FrameKind::Call { .. }) => Role::ArgName,
                _ => Role::FieldName,
            };
        }
        Role::PathHead
    }

    /// The last token of the dotted name starting at `i`.
    pub(super) fn path_end(&self, i: usize) -> Option<usize> {
        let mut end = i;
        while end + 2 < self.tokens.len()
            && self.tokens[end + 1].kind == Tok::Punct('.')
            && self.tokens[end + 2].kind == Tok::Ident
            && self.adjacent(end, end + 1)
            && self.adjacent(end + 1, end + 2)
        {
            end += 2;
        }
        Some(end)
    }

    pub(super) fn is_call_open(&self, i: usize) -> bool {
        i < self.tokens.len() && self.tokens[i].kind == Tok::Punct('(') && self.adjacent(i - 1, i)
    }

    /// `step` after `start..end`: a `..` since the last `=` in this frame.
    pub(super) fn after_range(&self, i: usize) -> bool {
        let mut at = i;
        while let Some(p) = self.prev(at) {
            if self.parents[p] != self.parents[i] {
                return false;
            }
            match self.tokens[p].kind {
                Tok::DotDot => return true,
                Tok::Punct('=' | ',' | '{' | '[' | '(') => return false,
                _ => at = p,
            }
        }
        false
    }
}
