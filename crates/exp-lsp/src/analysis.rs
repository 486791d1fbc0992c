//! What each token of a document is: its bracket frame (block, record, list,
//! call) and its role (a property key, a block kind, a reference to a name…).
//! Built from tokens alone, so it works on half-written text; highlighting,
//! hover, completion and navigation all read it.

use crate::lex::{lex, Tok, Token, KEYWORDS};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameKind {
    /// `kind "label" { … }`
    Block {
        kind: String,
    },
    /// `{ a = 1 }` in a value.
    Record,
    List,
    /// `name(…)`, with the function's (dotted) name.
    Call {
        name: String,
    },
    /// A `(` that follows no name (not valid exp).
    Parens,
}

#[derive(Debug, Clone)]
pub struct Frame {
    pub kind: FrameKind,
    /// Index (in `Analysis::tokens`) of the opening bracket.
    pub open: usize,
    /// Index of the closing bracket, if the frame is closed.
    pub close: Option<usize>,
    pub parent: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Keyword,
    Bool,
    /// `fleet` in `fleet "sensors" {`.
    BlockKind,
    /// `"sensors"` in `fleet "sensors" {`.
    Label,
    /// `devices` in `devices = 10` directly inside a block (other than `sweep`).
    PropertyKey,
    /// A parameter name in `sweep { u = [...] }`.
    SweepParam,
    /// `shape` in `pareto(shape = 3)`.
    ArgName,
    /// A field name of a record literal.
    FieldName,
    /// The function name of a call.
    Callee,
    /// The name bound by `let`.
    LetName,
    /// The name after `as` in an import.
    ImportAlias,
    /// The string of an `import`.
    ImportPath,
    /// The first name of a path in a value: a binding, parameter, import or member.
    PathHead,
    /// A later name of a path (`s1` in `iot.s1`).
    PathMember,
    Number,
    Unit,
    Str,
    Comment,
    Punct,
    Other,
}

pub struct Analysis<'a> {
    pub text: &'a str,
    /// Every token, comments included.
    pub tokens: Vec<Token>,
    pub roles: Vec<Role>,
    /// The innermost frame each token lies in (an opening or closing bracket
    /// lies in the frame around its own).
    pub parents: Vec<Option<usize>>,
    pub frames: Vec<Frame>,
}

impl<'a> Analysis<'a> {
    pub fn new(text: &'a str) -> Self {
        let tokens = lex(text);
        let mut analysis = Analysis {
            text,
            roles: vec![Role::Other; tokens.len()],
            parents: vec![None; tokens.len()],
            frames: Vec::new(),
            tokens,
        };
        analysis.build_frames();
        analysis.assign_roles();
        analysis
    }

    pub fn text_of(&self, index: usize) -> &'a str {
        self.tokens[index].text(self.text)
    }

    /// The code token before `index`, skipping comments.
    pub fn prev(&self, index: usize) -> Option<usize> {
        (0..index).rev().find(|&i| self.tokens[i].kind != Tok::Comment)
    }

    /// The code token after `index`, skipping comments.
    pub fn next(&self, index: usize) -> Option<usize> {
        (index + 1..self.tokens.len()).find(|&i| self.tokens[i].kind != Tok::Comment)
    }

    fn adjacent(&self, a: usize, b: usize) -> bool {
        self.tokens[a].end == self.tokens[b].start
    }

    fn build_frames(&mut self) {
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
            }
        }
    }

    /// A `}` closes the innermost brace frame (and any list or call left
    /// open inside it); a `]` or `)` closes only its own kind.
    fn close_frame(&mut self, stack: &mut Vec<usize>, close: char, at: usize) {
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
    fn brace_kind(&self, i: usize) -> FrameKind {
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
    fn call_kind(&self, i: usize) -> FrameKind {
        let Some(start) = self.path_start(i) else {
            return FrameKind::Parens;
        };
        let name: String = (start..i).map(|t| self.text_of(t)).collect();
        FrameKind::Call { name }
    }

    /// The first token of the dotted name written directly before token `i`.
    fn path_start(&self, i: usize) -> Option<usize> {
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

    pub fn frame_of(&self, token: usize) -> Option<&Frame> {
        self.parents[token].map(|f| &self.frames[f])
    }

    fn assign_roles(&mut self) {
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

    fn string_role(&self, i: usize) -> Role {
        match self.prev(i).map(|p| self.text_of(p)) {
            Some("import") => Role::ImportPath,
            _ if self.opens_block_after(i) => Role::Label,
            _ => Role::Str,
        }
    }

    /// Whether the next code token is a `{` that opens a block.
    fn opens_block_after(&self, i: usize) -> bool {
        self.next(i).is_some_and(|n| {
            self.frames
                .iter()
                .any(|f| f.open == n && matches!(f.kind, FrameKind::Block { .. }))
        })
    }

    fn ident_role(&self, i: usize) -> Role {
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
    fn path_end(&self, i: usize) -> Option<usize> {
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

    fn is_call_open(&self, i: usize) -> bool {
        i < self.tokens.len() && self.tokens[i].kind == Tok::Punct('(') && self.adjacent(i - 1, i)
    }

    /// `step` after `start..end`: a `..` since the last `=` in this frame.
    fn after_range(&self, i: usize) -> bool {
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

    /// The index of the token that contains `offset` or ends at it, preferring
    /// a name or number (the word under or just before the cursor).
    pub fn token_at(&self, offset: usize) -> Option<usize> {
        let at = self.tokens.partition_point(|t| t.end < offset);
        let touching = |i: usize| {
            self.tokens
                .get(i)
                .filter(|t| t.start <= offset && offset <= t.end)
                .map(|_| i)
        };
        match (touching(at), touching(at + 1)) {
            (Some(a), Some(b)) if self.tokens[a].end == offset && is_word(self.tokens[b].kind) => Some(b),
            (Some(a), Some(b)) if self.tokens[a].end == offset && !is_word(self.tokens[a].kind) => Some(b),
            (Some(a), _) => Some(a),
            (None, b) => b,
        }
    }

    /// The frames around `offset`, innermost first.
    pub fn frames_around(&self, offset: usize) -> Vec<usize> {
        let inside =
            |f: &Frame| self.tokens[f.open].end <= offset && f.close.is_none_or(|c| offset <= self.tokens[c].start);
        let mut chain: Vec<usize> = (0..self.frames.len()).filter(|&f| inside(&self.frames[f])).collect();
        chain.reverse();
        chain
    }

    /// Code tokens directly in `frame` (`None`: the top level), in order,
    /// nested frames' brackets included but not their contents.
    pub fn direct_tokens(&self, frame: Option<usize>) -> impl Iterator<Item = usize> + '_ {
        let range = match frame {
            Some(f) => {
                let frame = &self.frames[f];
                frame.open + 1..frame.close.unwrap_or(self.tokens.len())
            }
            None => 0..self.tokens.len(),
        };
        range.filter(move |&i| self.parents[i] == frame && self.tokens[i].kind != Tok::Comment)
    }

    /// Property keys set directly in a block frame, with their value's first
    /// token (e.g. `kind` → `memleak`).
    pub fn properties(&self, frame: usize) -> Vec<(&'a str, Option<usize>)> {
        self.direct_tokens(Some(frame))
            .filter(|&i| matches!(self.roles[i], Role::PropertyKey | Role::SweepParam))
            .map(|i| (self.text_of(i), self.next(i).and_then(|eq| self.next(eq))))
            .collect()
    }

    /// The literal `kind = NAME` of a block frame (an anomaly's variant).
    pub fn variant(&self, frame: usize) -> Option<&'a str> {
        let (_, value) = self.properties(frame).into_iter().find(|(key, _)| *key == "kind")?;
        let value = value?;
        (self.roles[value] == Role::PathHead).then(|| self.text_of(value))
    }

    pub fn block_kind(&self, frame: usize) -> Option<&str> {
        match &self.frames[frame].kind {
            FrameKind::Block { kind } => Some(kind),
            _ => None,
        }
    }
}

fn is_word(kind: Tok) -> bool {
    matches!(kind, Tok::Ident | Tok::Number | Tok::Unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(text: &str) -> Vec<(&str, Role)> {
        let analysis = Analysis::new(text);
        (0..analysis.tokens.len())
            .filter(|&i| !matches!(analysis.roles[i], Role::Punct))
            .map(|i| (analysis.text_of(i), analysis.roles[i]))
            .collect()
    }

    #[test]
    fn roles_follow_the_grammar() {
        let text = r#"import "std/pareto" as p
let base = { a = 1s }
experiment "x" {
  sweep { u = 1..3 step 1 }
  fleet "f" { gap = p.shape3_1s devices = u payload = json(size = 1KiB) }
}"#;
        use Role::*;
        assert_eq!(
            roles(text),
            vec![
                ("import", Keyword),
                ("\"std/pareto\"", ImportPath),
                ("as", Keyword),
                ("p", ImportAlias),
                ("let", Keyword),
                ("base", LetName),
                ("a", FieldName),
                ("1", Number),
                ("s", Unit),
                ("experiment", BlockKind),
                ("\"x\"", Label),
                ("sweep", BlockKind),
                ("u", SweepParam),
                ("1", Number),
                ("3", Number),
                ("step", Keyword),
                ("1", Number),
                ("fleet", BlockKind),
                ("\"f\"", Label),
                ("gap", PropertyKey),
                ("p", PathHead),
                ("shape3_1s", PathMember),
                ("devices", PropertyKey),
                ("u", PathHead),
                ("payload", PropertyKey),
                ("json", Callee),
                ("size", ArgName),
                ("1", Number),
                ("KiB", Unit),
            ]
        );
    }

    #[test]
    fn frames_nest_and_survive_unclosed_brackets() {
        let text = "experiment \"x\" {\n  fleet \"f\" {\n    gap = pareto(shape = 3, \n  }\n  anomaly \"a\" { kind = memleak }\n";
        let analysis = Analysis::new(text);
        let kinds: Vec<&FrameKind> = analysis.frames.iter().map(|f| &f.kind).collect();
        assert_eq!(
            kinds,
            vec![
                &FrameKind::Block {
                    kind: "experiment".into()
                },
                &FrameKind::Block { kind: "fleet".into() },
                &FrameKind::Call { name: "pareto".into() },
                &FrameKind::Block { kind: "anomaly".into() },
            ]
        );
        // The `}` after the open call closes both the call and the fleet.
        assert!(analysis.frames[1].close.is_some() && analysis.frames[2].close.is_some());
        assert_eq!(analysis.frames[3].parent, Some(0));
        assert_eq!(analysis.variant(3), Some("memleak"));
        let inside_call = text.find("3, ").unwrap() + 3;
        assert_eq!(analysis.frames_around(inside_call), vec![2, 1, 0]);
    }
}
