//! The role of each token (a property key, a block kind, a reference to a
//! name…), read from its neighbours and its frame.

use super::{Analysis, FrameKind, Role};
use crate::lex::{Tok, KEYWORDS};

/// What roles ask of a token's neighbours, for every token, filled in one
/// pass each way (asked per token, each was a scan: quadratic in a long
/// dotted name or a long run of `step`s).
struct Neighbours {
    /// Token `i`, were it `step`, would follow `start..end`: a `..` since
    /// the last `=`, `,` or opening bracket of its frame.
    after_range: Vec<bool>,
    /// The last token of the dotted name starting at token `i`.
    path_end: Vec<usize>,
}

impl Analysis<'_> {
    pub(super) fn assign_roles(&mut self) {
        let neighbours = self.neighbours();
        for i in 0..self.tokens.len() {
            self.roles[i] = match self.tokens[i].kind {
                Tok::Comment => Role::Comment,
                Tok::Number => Role::Number,
                Tok::Unit => Role::Unit,
                Tok::Str { .. } => self.string_role(i),
                Tok::Punct(_) | Tok::DotDot => Role::Punct,
                Tok::Other => Role::Other,
                Tok::Ident => self.ident_role(i, &neighbours),
            };
        }
    }

    fn neighbours(&self) -> Neighbours {
        let count = self.tokens.len();
        let mut after_range = vec![false; count];
        let mut previous: Option<usize> = None;
        for i in 0..count {
            if self.tokens[i].kind == Tok::Comment {
                continue;
            }
            after_range[i] = match previous {
                Some(p) if self.parents[p] == self.parents[i] => match self.tokens[p].kind {
                    Tok::DotDot => true,
                    Tok::Punct('=' | ',' | '{' | '[' | '(') => false,
                    _ => after_range[p],
                },
                _ => false,
            };
            previous = Some(i);
        }
        let mut path_end: Vec<usize> = (0..count).collect();
        for i in (0..count.saturating_sub(2)).rev() {
            if self.tokens[i + 1].kind == Tok::Punct('.')
                && self.tokens[i + 2].kind == Tok::Ident
                && self.adjacent(i, i + 1)
                && self.adjacent(i + 1, i + 2)
            {
                path_end[i] = path_end[i + 2];
            }
        }
        Neighbours { after_range, path_end }
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
        self.next(i)
            .and_then(|n| self.opens[n])
            .is_some_and(|f| matches!(self.frames[f].kind, FrameKind::Block { .. }))
    }

    fn ident_role(&self, i: usize, neighbours: &Neighbours) -> Role {
        let text = self.text_of(i);
        let prev = self.prev(i);
        let prev_text = prev.map(|p| self.text_of(p));
        let next = self.next(i);
        if text == "true" || text == "false" {
            return Role::Bool;
        }
        if KEYWORDS.contains(&text) || (text == "step" && neighbours.after_range[i]) {
            return Role::Keyword;
        }
        if prev_text == Some("let") {
            return Role::LetName;
        }
        if prev_text == Some("as") {
            return Role::ImportAlias;
        }
        let is_callee = self.is_call_open(neighbours.path_end[i] + 1);
        if i > 0 && self.tokens[i - 1].kind == Tok::Punct('.') && self.adjacent(i - 1, i) {
            return if is_callee { Role::Callee } else { Role::PathMember };
        }
        if is_callee {
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

    pub(super) fn is_call_open(&self, i: usize) -> bool {
        i < self.tokens.len() && self.tokens[i].kind == Tok::Punct('(') && self.adjacent(i - 1, i)
    }
}
