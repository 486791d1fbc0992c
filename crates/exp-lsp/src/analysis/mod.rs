//! What each token of a document is: its bracket frame (block, record, list,
//! call) and its role (a property key, a block kind, a reference to a name…).
//! Built from tokens alone, so it works on half-written text; highlighting,
//! hover, completion and navigation all read it.
//!
//! Built in time linear in the text: every question a token's role asks of
//! its neighbours (does the next token open a block, is this `step` after a
//! range, where does this dotted name end) is answered from a table filled
//! in one pass, never by a scan per token.

mod frames;
mod roles;

use crate::lex::{lex, Tok, Token};

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
    /// The frame each token opens (its opening bracket's frame).
    pub opens: Vec<Option<usize>>,
}

impl<'a> Analysis<'a> {
    pub fn new(text: &'a str) -> Self {
        let tokens = lex(text);
        let mut analysis = Analysis {
            text,
            roles: vec![Role::Other; tokens.len()],
            parents: vec![None; tokens.len()],
            opens: vec![None; tokens.len()],
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

    pub fn frame_of(&self, token: usize) -> Option<&Frame> {
        self.parents[token].map(|f| &self.frames[f])
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
        let first = frame.map_or(0, |f| self.frames[f].open + 1);
        self.direct_tokens_from(frame, first)
    }

    /// [`Analysis::direct_tokens`] from token `first` on.
    pub fn direct_tokens_from(&self, frame: Option<usize>, first: usize) -> impl Iterator<Item = usize> + '_ {
        let end = frame.and_then(|f| self.frames[f].close).unwrap_or(self.tokens.len());
        (first..end).filter(move |&i| self.parents[i] == frame && self.tokens[i].kind != Tok::Comment)
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
    fn dotted_calls_and_step_are_read_from_their_neighbours() {
        use Role::*;
        let text = "let x = m.n.f(1)\nlet y = [1..2 /* c */ step 1, step]\n";
        assert_eq!(
            roles(text),
            vec![
                ("let", Keyword),
                ("x", LetName),
                ("m", Callee),
                ("n", Callee),
                ("f", Callee),
                ("1", Number),
                ("let", Keyword),
                ("y", LetName),
                ("1", Number),
                ("2", Number),
                ("/* c */", Comment),
                ("step", Keyword),
                ("1", Number),
                ("step", PathHead),
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
