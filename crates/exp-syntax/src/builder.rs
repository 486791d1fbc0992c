//! Builds the AST from pest's parse tree. Kept apart from the grammar binding
//! so the tree shape and the grammar can change independently.

use exp_diagnostics::{Code, Diagnostic, FileId, Span};
use pest::iterators::Pair;

use crate::ast::*;
use crate::parser::Rule;

pub(crate) struct Builder<'d> {
    pub file: FileId,
    /// Where the parsed text starts in the file (non-zero while recovering).
    pub offset: usize,
    pub diagnostics: &'d mut Vec<Diagnostic>,
}

impl Builder<'_> {
    /// The pair's span without trailing whitespace and comments, which pest
    /// includes when a rule ends in an optional part that did not match.
    pub(crate) fn span(&self, pair: &Pair<Rule>) -> Span {
        let start = pair.as_span().start();
        Span::new(self.file, self.offset + start..self.offset + exact_end(pair))
    }

    pub fn item(&mut self, pair: Pair<Rule>) -> Item {
        let span = self.span(&pair);
        match pair.as_rule() {
            Rule::import => {
                let mut inner = pair.into_inner().filter(|p| p.as_rule() != Rule::kw_import);
                let path = self.string(inner.next().expect("grammar: import has a path"));
                let alias = inner.find(|p| p.as_rule() == Rule::ident).map(|p| self.ident(p));
                Item::Import(Import { path, alias, span })
            }
            Rule::let_item => {
                let mut inner = pair
                    .into_inner()
                    .filter(|p| !matches!(p.as_rule(), Rule::kw_let | Rule::eq));
                let name = self.ident(inner.next().expect("grammar: let has a name"));
                let value = self.expr(inner.next().expect("grammar: let has a value"));
                Item::Let(Let { name, value, span })
            }
            Rule::block => Item::Block(self.block(pair)),
            rule => unreachable!("grammar: {rule:?} is not an item"),
        }
    }

    pub fn block(&mut self, pair: Pair<Rule>) -> Block {
        let span = self.span(&pair);
        let mut kind = None;
        let mut label = None;
        let mut members = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::ident => kind = Some(self.ident(p)),
                Rule::string => label = Some(self.string(p)),
                Rule::lbrace | Rule::rbrace => {}
                _ => members.push(self.member(p)),
            }
        }
        Block {
            kind: kind.expect("grammar: block has a kind"),
            label,
            members,
            span,
            recovered: false,
        }
    }

    pub fn member(&mut self, pair: Pair<Rule>) -> Member {
        match pair.as_rule() {
            Rule::attribute => {
                let span = self.span(&pair);
                let (key, value) = self.key_value(pair);
                Member::Attribute(Attribute { key, value, span })
            }
            Rule::block => Member::Block(self.block(pair)),
            Rule::expect => Member::Expect(self.expect(pair)),
            rule => unreachable!("grammar: {rule:?} is not a member"),
        }
    }

    fn key_value(&mut self, pair: Pair<Rule>) -> (Ident, Expr) {
        let mut inner = pair.into_inner().filter(|p| p.as_rule() != Rule::eq);
        let key = self.ident(inner.next().expect("grammar: key"));
        let value = self.expr(inner.next().expect("grammar: value"));
        (key, value)
    }

    pub fn block_header(&mut self, pair: Pair<Rule>) -> (Ident, Option<StringLit>) {
        let mut kind = None;
        let mut label = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::ident => kind = Some(self.ident(p)),
                Rule::string => label = Some(self.string(p)),
                _ => {}
            }
        }
        (kind.expect("grammar: block has a kind"), label)
    }

    pub(crate) fn ident(&self, pair: Pair<Rule>) -> Ident {
        Ident {
            name: pair.as_str().to_string(),
            span: self.span(&pair),
        }
    }

    pub(crate) fn string(&mut self, pair: Pair<Rule>) -> StringLit {
        let span = self.span(&pair);
        let raw = pair.into_inner().next().map_or("", |p| p.as_str());
        let value = unescape(raw).unwrap_or_else(|(at, len)| {
            let start = span.start as usize + 1 + at;
            let label = if raw[at..].starts_with("\\u") {
                "invalid Unicode escape"
            } else {
                "unknown escape"
            };
            self.diagnostics.push(
                Diagnostic::error(Code::E0105, "invalid escape in string")
                    .primary(Span::new(self.file, start..start + len), label)
                    .help(r#"valid escapes: \\ \" \n \t \r \u{XXXX}"#),
            );
            raw.to_string()
        });
        StringLit { value, span }
    }

    pub fn expression(&mut self, pair: Pair<Rule>) -> Expr {
        self.expr(pair)
    }

    pub(crate) fn expr(&mut self, pair: Pair<Rule>) -> Expr {
        debug_assert_eq!(pair.as_rule(), Rule::expr);
        let span = self.span(&pair);
        let mut parts = pair
            .into_inner()
            .filter(|p| !matches!(p.as_rule(), Rule::dotdot | Rule::kw_step));
        let start = self.primary(parts.next().expect("grammar: expression"));
        match parts.next() {
            None => start,
            Some(end) => {
                let end = self.primary(end);
                let step = parts.next().map(|p| Box::new(self.primary(p)));
                Expr {
                    kind: ExprKind::Range {
                        start: Box::new(start),
                        end: Box::new(end),
                        step,
                    },
                    span,
                }
            }
        }
    }

    pub(crate) fn primary(&mut self, pair: Pair<Rule>) -> Expr {
        let span = self.span(&pair);
        let kind = match pair.as_rule() {
            Rule::number => ExprKind::Number(pair.as_str().to_string()),
            Rule::quantity => {
                let text = pair.as_str();
                let pair_start = pair.as_span().start();
                let unit_start = pair
                    .into_inner()
                    .next()
                    .map_or(text.len(), |u| u.as_span().start() - pair_start);
                ExprKind::Quantity {
                    number: text[..unit_start].to_string(),
                    unit: text[unit_start..].to_string(),
                }
            }
            Rule::string => ExprKind::Str(self.string(pair).value),
            Rule::boolean => ExprKind::Bool(pair.as_str() == "true"),
            Rule::list => ExprKind::List(
                pair.into_inner()
                    .filter(|p| p.as_rule() == Rule::expr)
                    .map(|p| self.expr(p))
                    .collect(),
            ),
            Rule::record => ExprKind::Record(
                pair.into_inner()
                    .filter(|p| p.as_rule() == Rule::field)
                    .map(|p| {
                        let (name, value) = self.key_value(p);
                        Field { name, value }
                    })
                    .collect(),
            ),
            Rule::call => {
                let mut callee = None;
                let mut args = Vec::new();
                for p in pair.into_inner() {
                    match p.as_rule() {
                        Rule::callee => callee = Some(self.path(p)),
                        Rule::arg => args.push(self.arg(p)),
                        _ => {}
                    }
                }
                ExprKind::Call {
                    callee: callee.expect("grammar: call has a callee"),
                    args,
                }
            }
            Rule::path => ExprKind::Path(self.path(pair)),
            rule => unreachable!("grammar: {rule:?} is not a primary"),
        };
        Expr { kind, span }
    }

    pub(crate) fn arg(&mut self, pair: Pair<Rule>) -> Arg {
        let mut name = None;
        let mut value = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::ident => name = Some(self.ident(p)),
                Rule::expr => value = Some(self.expr(p)),
                _ => {}
            }
        }
        Arg {
            name,
            value: value.expect("grammar: argument has a value"),
        }
    }

    /// Paths are atomic in the grammar; split them into their segments here.
    pub(crate) fn path(&self, pair: Pair<Rule>) -> Path {
        let span = self.span(&pair);
        let mut segments = Vec::new();
        let mut at = span.start as usize;
        for name in pair.as_str().split('.') {
            segments.push(Ident {
                name: name.to_string(),
                span: Span::new(self.file, at..at + name.len()),
            });
            at += name.len() + 1;
        }
        Path { segments, span }
    }
}

fn exact_end(pair: &Pair<Rule>) -> usize {
    if matches!(pair.as_rule(), Rule::string | Rule::quantity) {
        return pair.as_span().end();
    }
    match pair.clone().into_inner().last() {
        Some(last) => exact_end(&last),
        None => pair.as_span().end(),
    }
}

/// Resolves escapes; on failure returns the byte offset and length of the bad escape.
pub(crate) fn unescape(raw: &str) -> Result<String, (usize, usize)> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, '\\')) => out.push('\\'),
            Some((_, '"')) => out.push('"'),
            Some((_, 'n')) => out.push('\n'),
            Some((_, 't')) => out.push('\t'),
            Some((_, 'r')) => out.push('\r'),
            Some((_, 'u')) => {
                let rest = &raw[i + 2..];
                let close = rest.find('}').filter(|_| rest.starts_with('{'));
                let decoded = close
                    .and_then(|end| u32::from_str_radix(&rest[1..end], 16).ok())
                    .and_then(char::from_u32);
                match (decoded, close) {
                    (Some(ch), Some(end)) => {
                        out.push(ch);
                        for _ in 0..=end {
                            chars.next();
                        }
                    }
                    // The whole `\u{…}` when it is closed, else just `\u`.
                    (None, Some(end)) => return Err((i, 2 + end + 1)),
                    _ => return Err((i, 2)),
                }
            }
            Some((_, other)) => return Err((i, 1 + other.len_utf8())),
            None => return Err((i, 1)),
        }
    }
    Ok(out)
}

/// The inverse of [`unescape`], used by the formatter.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}
