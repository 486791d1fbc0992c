//! Checks shared by the snapshot and property tests.

// Each test crate uses its own subset of these helpers.
#![allow(dead_code)]

use exp_diagnostics::{Code, Diagnostic, FileId, Span};
use exp_syntax::ast::*;

/// Parses, asserting there is no diagnostic.
pub fn parse_clean(source: &str) -> Module {
    let (module, diagnostics) = exp_syntax::parse(FileId(0), source);
    assert!(
        diagnostics.is_empty(),
        "unexpected diagnostics for:\n{source}\n{diagnostics:#?}"
    );
    module
}

/// `formatted` (the formatting of `source`) parses cleanly to the same tree,
/// is a fixed point of the formatter, and keeps every comment of `source`.
pub fn assert_format_round_trip(source: &str, formatted: &str) {
    let original = parse_clean(source);
    let reparsed = parse_clean(formatted);
    assert_eq!(
        exp_syntax::dump(&original),
        exp_syntax::dump(&reparsed),
        "formatting changed the tree of:\n{source}\nformatted:\n{formatted}"
    );
    assert_eq!(
        exp_syntax::format(&reparsed, formatted),
        formatted,
        "formatting is not idempotent for:\n{source}"
    );
    for comment in &original.comments {
        assert!(
            formatted.contains(comment.text.trim_end()),
            "comment {:?} lost when formatting:\n{source}\nformatted:\n{formatted}",
            comment.text
        );
    }
    assert_eq!(
        original.comments.len(),
        reparsed.comments.len(),
        "comment count changed when formatting:\n{source}\nformatted:\n{formatted}"
    );
}

/// Every label of every diagnostic lies inside the source on character
/// boundaries, every diagnostic has a primary label, and labels do not take
/// in the whitespace around a token (an escape such as `\ ` may end in one).
pub fn assert_diagnostic_spans_are_sane(diagnostics: &[Diagnostic], source: &str) {
    for diagnostic in diagnostics {
        assert!(
            diagnostic.primary_span().is_some(),
            "{diagnostic:?} has no primary label"
        );
        for label in &diagnostic.labels {
            let text = text_of(label.span, source);
            if diagnostic.code == Code::E0105 {
                continue;
            }
            assert_eq!(
                trim(text),
                text,
                "label of {:?} has surrounding whitespace",
                diagnostic.message
            );
        }
    }
}

/// Every span of the tree covers its node exactly: inside the source, no
/// leading or trailing whitespace, not ending in a comment, and names and
/// literals span exactly their text.
pub fn assert_spans_are_tight(module: &Module, source: &str) {
    let checker = Checker {
        source,
        comments: &module.comments,
    };
    for item in &module.items {
        checker.span(item.span());
        match item {
            Item::Import(import) => {
                checker.string(&import.path);
                if let Some(alias) = &import.alias {
                    checker.ident(alias);
                }
            }
            Item::Let(l) => {
                checker.ident(&l.name);
                checker.expr(&l.value);
            }
            Item::Block(block) => checker.block(block),
        }
    }
}

/// Trims the grammar's whitespace (not all of Unicode's).
fn trim(text: &str) -> &str {
    text.trim_matches([' ', '\t', '\r', '\n'])
}

fn text_of(span: Span, source: &str) -> &str {
    assert!(span.start <= span.end, "backwards span {span:?}");
    source
        .get(span.range())
        .unwrap_or_else(|| panic!("span {span:?} is outside the source or not on a character boundary"))
}

struct Checker<'a> {
    source: &'a str,
    comments: &'a [Comment],
}

impl Checker<'_> {
    fn span(&self, span: Span) -> &str {
        let text = text_of(span, self.source);
        assert!(!text.is_empty(), "empty span {span:?}");
        assert_eq!(trim(text), text, "span {span:?} has surrounding whitespace: {text:?}");
        let ends_in_comment = self
            .comments
            .iter()
            .any(|c| c.span.end == span.end || c.span.start == span.start);
        assert!(
            !ends_in_comment,
            "span {span:?} starts or ends with a comment: {text:?}"
        );
        text
    }

    fn ident(&self, ident: &Ident) {
        assert_eq!(self.span(ident.span), ident.name);
    }

    fn string(&self, string: &StringLit) {
        let text = self.span(string.span);
        assert!(
            text.len() >= 2 && text.starts_with('"') && text.ends_with('"'),
            "string span {text:?}"
        );
    }

    fn block(&self, block: &Block) {
        let text = self.span(block.span);
        assert!(text.starts_with(&block.kind.name), "block span {text:?}");
        self.ident(&block.kind);
        if let Some(label) = &block.label {
            self.string(label);
        }
        for member in &block.members {
            self.span(member.span());
            match member {
                Member::Attribute(attribute) => {
                    self.ident(&attribute.key);
                    self.expr(&attribute.value);
                }
                Member::Block(inner) => self.block(inner),
                Member::Expect(expect) => self.expect(expect),
            }
        }
    }

    fn expect(&self, expect: &Expect) {
        let text = self.span(expect.span);
        assert!(text.starts_with("expect"), "expect span {text:?}");
        self.ident(&expect.keyword);
        if let Some(label) = &expect.label {
            self.string(label);
        }
        for claim in &expect.claims {
            self.span(claim.span);
            match &claim.form {
                ClaimForm::Compare { left, op, right } => {
                    self.term(left);
                    assert_eq!(self.span(op.span), op.text);
                    self.term(right);
                }
                ClaimForm::Within { left, tolerance, right } => {
                    self.term(left);
                    self.expr(tolerance);
                    self.term(right);
                }
                ClaimForm::Trend {
                    stat,
                    direction,
                    parameter,
                } => {
                    self.stat(stat);
                    self.ident(direction);
                    self.ident(parameter);
                }
            }
            if let Some(abort) = &claim.abort {
                assert!(self.span(abort.span).starts_with("abort"));
            }
        }
    }

    fn term(&self, term: &Term) {
        self.span(term.span());
        match term {
            Term::Stat { factor, stat, .. } => {
                if let Some(factor) = factor {
                    self.expr(factor);
                }
                self.stat(stat);
            }
            Term::Constant(expr) => self.expr(expr),
            Term::TimeScaled { value, span } => {
                assert!(self.span(*span).starts_with("scaled("));
                self.expr(value);
            }
        }
    }

    fn stat(&self, stat: &Stat) {
        assert!(self.span(stat.span).ends_with(')'));
        self.ident(&stat.function);
        self.span(stat.metric.span);
        for segment in &stat.metric.segments {
            let text = self.span(segment.span);
            assert!(text == segment.name || text.starts_with('"'), "metric part {text:?}");
        }
        if let Some((op, value)) = &stat.condition {
            assert_eq!(self.span(op.span), op.text);
            self.expr(value);
        }
        if let Some((relation, anomaly)) = &stat.phase {
            self.ident(relation);
            let text = self.span(anomaly.span);
            assert!(text == anomaly.name || text.starts_with('"'), "phase {text:?}");
        }
        for (name, value) in &stat.points {
            self.ident(name);
            self.expr(value);
        }
    }

    fn path(&self, path: &Path) {
        assert_eq!(self.span(path.span), path.dotted());
        for segment in &path.segments {
            self.ident(segment);
        }
    }

    fn expr(&self, expr: &Expr) {
        let text = self.span(expr.span);
        match &expr.kind {
            ExprKind::Number(number) => assert_eq!(text, number),
            ExprKind::Quantity { number, unit } => assert_eq!(text, format!("{number}{unit}")),
            ExprKind::Str(_) => assert!(text.starts_with('"') && text.ends_with('"'), "string {text:?}"),
            ExprKind::Bool(b) => assert_eq!(text, b.to_string()),
            ExprKind::List(items) => {
                assert!(text.starts_with('[') && text.ends_with(']'), "list {text:?}");
                items.iter().for_each(|e| self.expr(e));
            }
            ExprKind::Record(fields) => {
                assert!(text.starts_with('{') && text.ends_with('}'), "record {text:?}");
                for field in fields {
                    self.ident(&field.name);
                    self.expr(&field.value);
                }
            }
            ExprKind::Call { callee, args } => {
                assert!(text.ends_with(')'), "call {text:?}");
                self.path(callee);
                for arg in args {
                    if let Some(name) = &arg.name {
                        self.ident(name);
                    }
                    self.expr(&arg.value);
                }
            }
            ExprKind::Path(path) => self.path(path),
            ExprKind::Range { start, end, step } => {
                self.expr(start);
                self.expr(end);
                if let Some(step) = step {
                    self.expr(step);
                }
            }
        }
    }
}
