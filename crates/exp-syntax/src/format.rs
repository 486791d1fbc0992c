//! The canonical formatter (`expc fmt`).
//!
//! Style: two-space indents, one statement per line, `=` aligned within a run
//! of consecutive one-line properties, at most one blank line kept between
//! statements, lists and calls broken one element per line when a line would
//! pass 100 columns, a claim broken before its comparison and `abort` when
//! it would. Every comment is kept: comments between statements stay in
//! place, a comment at the end of a line stays there, and a comment inside an
//! expression is moved to its own line before the statement.

use crate::ast::*;
use crate::escape;
use crate::flat::flat;

const WIDTH: usize = 100;

/// Formats a parsed module. `source` is the text it was parsed from (used to
/// keep blank lines and comments).
pub fn format(module: &Module, source: &str) -> String {
    let mut printer = Printer {
        source,
        comments: &module.comments,
        next_comment: 0,
        out: String::new(),
        last_end: 0,
    };
    let statements: Vec<Statement> = module.items.iter().map(Statement::Item).collect();
    printer.statements(&statements, 0);
    printer.comments_before(usize::MAX, 0);
    let mut out = printer.out;
    while out.ends_with("\n\n") {
        out.pop();
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

enum Statement<'a> {
    Item(&'a Item),
    Member(&'a Member),
}

impl Statement<'_> {
    fn span(&self) -> exp_diagnostics::Span {
        match self {
            Statement::Item(i) => i.span(),
            Statement::Member(m) => m.span(),
        }
    }

    fn block(&self) -> Option<&Block> {
        match self {
            Statement::Item(Item::Block(b)) | Statement::Member(Member::Block(b)) => Some(b),
            _ => None,
        }
    }

    /// `key = ` prefix and value of a one-line key/value statement.
    fn key_value(&self) -> Option<(String, &Expr)> {
        match self {
            Statement::Member(Member::Attribute(a)) => Some((a.key.name.clone(), &a.value)),
            _ => None,
        }
    }
}

struct Printer<'a> {
    source: &'a str,
    comments: &'a [Comment],
    next_comment: usize,
    out: String,
    /// End offset in the source of the last thing printed.
    last_end: usize,
}

impl Printer<'_> {
    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    /// Keeps one blank line where the source had at least one.
    fn blank_line_before(&mut self, start: usize) {
        let gap = self.source.get(self.last_end..start).unwrap_or("");
        let at_container_start = self.out.is_empty() || self.out.ends_with("{\n");
        if !at_container_start && gap.matches('\n').count() >= 2 {
            self.out.push('\n');
        }
    }

    /// Prints every not yet printed comment that starts before `offset`, each
    /// on its own line.
    fn comments_before(&mut self, offset: usize, depth: usize) {
        self.comments_hoisted_before(offset, usize::MAX, depth);
    }

    /// Like [`Self::comments_before`], for comments moved out of a statement
    /// starting at `statement_start`: a blank line is kept only where the
    /// source had one before the statement, not where it had line breaks
    /// inside it.
    fn comments_hoisted_before(&mut self, offset: usize, statement_start: usize, depth: usize) {
        while let Some(comment) = self.comments.get(self.next_comment) {
            if comment.span.start as usize >= offset {
                break;
            }
            self.blank_line_before((comment.span.start as usize).min(statement_start));
            self.indent(depth);
            self.out.push_str(comment.text.trim_end());
            self.out.push('\n');
            self.last_end = comment.span.end as usize;
            self.next_comment += 1;
        }
    }

    /// Appends a comment that follows `end` on its source line, with nothing
    /// but spaces between.
    fn trailing_comment(&mut self, end: usize) {
        if let Some(comment) = self.comments.get(self.next_comment) {
            let start = comment.span.start as usize;
            let between = self.source.get(end..start).unwrap_or("\n");
            // Only spaces between: in `a = 1 b = 2 // c` the comment is b's.
            let same_line = between.trim_matches([' ', '\t']).is_empty();
            if start >= end && same_line && !comment.text.contains('\n') {
                self.out.push(' ');
                self.out.push_str(comment.text.trim_end());
                self.last_end = comment.span.end as usize;
                self.next_comment += 1;
            }
        }
    }

    fn statements(&mut self, statements: &[Statement], depth: usize) {
        let widths = self.alignment(statements);
        for (statement, width) in statements.iter().zip(widths) {
            let span = statement.span();
            if let Some(block) = statement.block() {
                self.comments_before(span.start as usize, depth);
                self.blank_line_before(span.start as usize);
                self.block(block, depth);
                continue;
            }
            if let Statement::Member(Member::Expect(expect)) = statement {
                self.comments_before(span.start as usize, depth);
                self.blank_line_before(span.start as usize);
                self.expect(expect, depth);
                continue;
            }
            // Comments inside a one-statement expression move before it.
            self.comments_hoisted_before(span.end as usize, span.start as usize, depth);
            self.blank_line_before(span.start as usize);
            self.indent(depth);
            let line = match statement {
                Statement::Item(Item::Import(i)) => match &i.alias {
                    Some(alias) => {
                        format!("import \"{}\" as {}", escape(&i.path.value), alias.name)
                    }
                    None => format!("import \"{}\"", escape(&i.path.value)),
                },
                Statement::Item(Item::Let(l)) => {
                    let prefix = format!("let {} = ", l.name.name);
                    let value = expr(&l.value, depth, prefix.len());
                    prefix + &value
                }
                _ => {
                    let (key, value) = statement.key_value().expect("attribute");
                    let prefix = format!("{key:width$} = ");
                    let value = expr(value, depth, prefix.len());
                    prefix + &value
                }
            };
            self.out.push_str(&line);
            self.last_end = span.end as usize;
            self.trailing_comment(span.end as usize);
            self.out.push('\n');
        }
    }

    /// The key width of each statement: the longest key in its run of
    /// consecutive one-line properties.
    fn alignment(&self, statements: &[Statement]) -> Vec<usize> {
        let mut widths = vec![0; statements.len()];
        let mut run_start = 0;
        for i in 0..=statements.len() {
            let joins_run = i < statements.len() && i > run_start && self.adjacent(&statements[i - 1], &statements[i]);
            let alignable = |s: &Statement| {
                s.key_value()
                    .is_some_and(|(key, value)| !expr(value, 0, key.len() + 3).contains('\n'))
            };
            if i == statements.len() || !joins_run || !alignable(&statements[i]) || !alignable(&statements[i - 1]) {
                let run = &statements[run_start..i];
                let width = run.iter().filter_map(|s| s.key_value()).map(|(k, _)| k.len()).max();
                if run.iter().all(alignable) {
                    for w in &mut widths[run_start..i] {
                        *w = width.unwrap_or(0);
                    }
                }
                run_start = i;
            }
        }
        widths
    }

    /// No blank line and no comment between two statements, and no comment
    /// inside the second (it would be moved between them).
    fn adjacent(&self, a: &Statement, b: &Statement) -> bool {
        let (a_end, b_start, b_end) = (a.span().end, b.span().start, b.span().end);
        let between = self.source.get(a_end as usize..b_start as usize).unwrap_or("");
        // Comments are in source order: look at the first one after `a`.
        let first_after = self.comments.partition_point(|c| c.span.start < a_end);
        let commented = self.comments.get(first_after).is_some_and(|c| c.span.start < b_end);
        between.matches('\n').count() <= 1 && between.trim().is_empty() && !commented
    }

    fn block(&mut self, block: &Block, depth: usize) {
        let members: Vec<Statement> = block.members.iter().map(Statement::Member).collect();
        let head = (block.kind.name.as_str(), block.kind.span.end, block.label.as_ref());
        self.braced(depth, head, block.span.end as usize, members.is_empty(), |p| {
            p.statements(&members, depth + 1)
        });
    }

    /// `name "label" {`, the body, `}`, or `name "label" {}` when there is
    /// neither body nor comment; then the trailing comment.
    fn braced(
        &mut self,
        depth: usize,
        (name, name_end, label): (&str, u32, Option<&StringLit>),
        end: usize,
        empty: bool,
        body: impl FnOnce(&mut Self),
    ) {
        self.indent(depth);
        self.out.push_str(name);
        if let Some(label) = label {
            self.out.push_str(&format!(" \"{}\"", escape(&label.value)));
        }
        let has_comments = self
            .comments
            .get(self.next_comment)
            .is_some_and(|c| (c.span.start as usize) < end);
        if empty && !has_comments {
            self.out.push_str(" {}");
        } else {
            self.out.push_str(" {\n");
            self.last_end = label.map_or(name_end, |l| l.span.end) as usize;
            body(self);
            self.comments_before(end, depth + 1);
            self.indent(depth);
            self.out.push('}');
        }
        self.last_end = end;
        self.trailing_comment(end);
        self.out.push('\n');
    }
}

impl Printer<'_> {
    /// `expect "label" {` and one claim per line; comments inside a claim
    /// move before it.
    fn expect(&mut self, expect: &Expect, depth: usize) {
        let head = ("expect", expect.keyword.span.end, expect.label.as_ref());
        self.braced(depth, head, expect.span.end as usize, expect.claims.is_empty(), |p| {
            for claim in &expect.claims {
                let (start, claim_end) = (claim.span.start as usize, claim.span.end as usize);
                p.comments_hoisted_before(claim_end, start, depth + 1);
                p.blank_line_before(start);
                p.indent(depth + 1);
                p.claim(claim, depth + 1);
                p.last_end = claim_end;
                p.trailing_comment(claim_end);
                p.out.push('\n');
            }
        });
    }
}

impl Printer<'_> {
    /// A claim on one line when it fits, else broken before its comparison
    /// (`<`, `within`, `increases with`) and before `abort`, as few lines
    /// as fit, each continuation one level deeper. The pieces come from the
    /// canonical text, so formatting again gives the same lines.
    fn claim(&mut self, claim: &Claim, depth: usize) {
        let mut column = depth * 2;
        for (i, piece) in crate::claim_text::claim_pieces(claim).into_iter().enumerate() {
            let width = piece.chars().count();
            if i > 0 && column + 1 + width <= WIDTH {
                self.out.push(' ');
                column += 1;
            } else if i > 0 {
                self.out.push('\n');
                self.indent(depth + 1);
                column = (depth + 1) * 2;
            }
            self.out.push_str(&piece);
            column += width;
        }
    }
}

/// Renders an expression flat when it fits in the line, else broken.
/// `column` is where the expression starts after the indent.
fn expr(e: &Expr, depth: usize, column: usize) -> String {
    let flat = flat(e);
    if depth * 2 + column + flat.len() <= WIDTH || !breakable(e) {
        return flat;
    }
    let inner = "  ".repeat(depth + 1);
    let close = "  ".repeat(depth);
    let lines = |open: &str, parts: Vec<String>, end: &str| {
        let mut s = String::from(open);
        s.push('\n');
        for part in parts {
            s.push_str(&inner);
            s.push_str(&part);
            s.push_str(",\n");
        }
        s.push_str(&close);
        s.push_str(end);
        s
    };
    match &e.kind {
        ExprKind::List(items) => lines("[", items.iter().map(|i| expr(i, depth + 1, 0)).collect(), "]"),
        ExprKind::Record(fields) => lines(
            "{",
            fields
                .iter()
                .map(|f| format!("{} = {}", f.name.name, expr(&f.value, depth + 1, f.name.name.len() + 3)))
                .collect(),
            "}",
        ),
        ExprKind::Call { callee, args } => lines(
            &format!("{}(", callee.dotted()),
            args.iter().map(|a| arg(a, depth + 1)).collect(),
            ")",
        ),
        _ => flat,
    }
}

fn breakable(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::List(items) => !items.is_empty(),
        ExprKind::Record(fields) => !fields.is_empty(),
        ExprKind::Call { args, .. } => !args.is_empty(),
        _ => false,
    }
}

fn arg(a: &Arg, depth: usize) -> String {
    match &a.name {
        Some(name) => format!("{} = {}", name.name, expr(&a.value, depth, name.name.len() + 3)),
        None => expr(&a.value, depth, 0),
    }
}
