//! Syntax of the exp language: parsing (pest, grammar in `grammar/exp.pest`),
//! the AST, error recovery and the formatter.
//!
//! [`parse`] never fails and never panics: it returns the AST of everything it
//! could read plus one diagnostic per syntax error. After an error it recovers
//! at the next top-level item or block member, so one pass reports them all.

pub mod ast;
mod bidi;
mod builder;
mod claim_text;
mod claims;
mod dump;
mod flat;
mod format;
mod parser;
mod scan;
pub mod units;

pub use builder::escape;
pub use claim_text::{claim_text, label as claim_label};
pub use dump::dump;
pub use format::format;

use std::ops::Range;

use ast::{Block, Comment, Expect, Item, Member, Module};
use exp_diagnostics::limits::{MAX_DIAGNOSTICS, MAX_NESTING};
use exp_diagnostics::{Code, Diagnostic, FileId, Span};
use pest::Parser as _;

use builder::Builder;
use parser::{ExpParser, Rule};

/// Parses one file. Diagnostics are sorted by position.
///
/// Brackets nested deeper than [`MAX_NESTING`] are reported (E0106) and
/// their statement skipped before pest sees them, so no pass over the AST
/// recurses deeper than that; after [`MAX_DIAGNOSTICS`] syntax errors the
/// rest of the file is skipped (E0107).
pub fn parse(file: FileId, source: &str) -> (Module, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let whole = if scan::too_deep(source, 0..source.len(), MAX_NESTING).is_some() {
        None
    } else {
        ExpParser::parse(Rule::file, source).ok()
    };
    let items = match whole {
        Some(mut pairs) => {
            let file_pair = pairs.next().expect("grammar: file");
            let mut builder = Builder {
                file,
                offset: 0,
                diagnostics: &mut diagnostics,
            };
            file_pair
                .into_inner()
                .filter(|p| p.as_rule() != Rule::EOI)
                .map(|p| builder.item(p))
                .collect()
        }
        None => Recovery {
            file,
            source,
            diagnostics: &mut diagnostics,
            stopped: false,
        }
        .items(0..source.len()),
    };
    let scan = scan::scan(source, 0..source.len());
    diagnostics.extend(bidi::check(file, source, &scan.comments, &scan.strings));
    let comments = scan
        .comments
        .into_iter()
        .map(|r| Comment {
            text: source[r.clone()].to_string(),
            span: Span::new(file, r),
        })
        .collect();
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| s.start));
    // A comment left open ends both the block around it and the file: one
    // report is enough.
    diagnostics.dedup_by(|later, earlier| {
        later.code == earlier.code && later.message == earlier.message && later.primary_span() == earlier.primary_span()
    });
    (Module { items, comments }, diagnostics)
}

/// Parses a lone expression (registry defaults, command-line overrides).
pub fn parse_expr(file: FileId, source: &str) -> Result<ast::Expr, Diagnostic> {
    if let Some(at) = scan::too_deep(source, 0..source.len(), MAX_NESTING) {
        return Err(too_deep(file, at));
    }
    match ExpParser::parse(Rule::expr_only, source) {
        Ok(mut pairs) => {
            let mut diagnostics = Vec::new();
            let pair = pairs
                .next()
                .and_then(|p| p.into_inner().next())
                .expect("grammar: expr_only holds an expression");
            let expr = Builder {
                file,
                offset: 0,
                diagnostics: &mut diagnostics,
            }
            .expression(pair);
            match diagnostics.into_iter().next() {
                Some(d) => Err(d),
                None => Ok(expr),
            }
        }
        Err(error) => Err(parser::syntax_error(&error, file, source, 0)),
    }
}

/// E0106 at the bracket that opens one level too many.
fn too_deep(file: FileId, at: usize) -> Diagnostic {
    Diagnostic::error(Code::E0106, format!("brackets nest deeper than {MAX_NESTING} levels"))
        .primary(Span::new(file, at..at + 1), format!("level {}", MAX_NESTING + 1))
        .note("the statement holding it is skipped")
        .help("flatten the value, or name inner parts with `let`")
}

/// Re-parses a file statement by statement after the whole-file parse failed
/// (or was not tried: the file nests too deep).
struct Recovery<'a> {
    file: FileId,
    source: &'a str,
    diagnostics: &'a mut Vec<Diagnostic>,
    /// Too many syntax errors: the rest of the file is skipped.
    stopped: bool,
}

impl Recovery<'_> {
    fn chunks(&mut self, range: Range<usize>) -> Vec<Range<usize>> {
        let scan = scan::scan(self.source, range.clone());
        let mut starts = scan.statement_starts;
        // A comment left open swallows the rest of the range: it gets a chunk
        // of its own, so the statement before it is kept.
        if let Some(last) = scan.comments.last() {
            let text = &self.source[last.clone()];
            if text.starts_with("/*") && (text.len() < 4 || !text.ends_with("*/")) {
                let at = starts.partition_point(|&s| s < last.start);
                starts.insert(at, last.start);
            }
        }
        let mut chunks = Vec::new();
        // Text before the first statement is garbage unless it is blank.
        let first = starts.first().copied().unwrap_or(range.end);
        if !self.is_blank(range.start..first) {
            chunks.push(range.start..first);
        }
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(range.end);
            chunks.push(start..end);
        }
        chunks
    }

    /// Only whitespace and comments.
    fn is_blank(&self, range: Range<usize>) -> bool {
        scan::content_start(self.source, range.clone()) == range.end
    }

    /// Reports invisible characters (a byte order mark, a zero-width space)
    /// at the start of `chunk` and returns the chunk after them, so the
    /// statement they precede is still read; `None` when only comments and
    /// blanks follow them.
    fn skip_invisible(&mut self, mut chunk: Range<usize>, expected: &str) -> Option<Range<usize>> {
        let start = chunk.start;
        while let Some(c) = self.source[chunk.clone()].chars().next() {
            if !parser::lookalike(c).is_some_and(|(_, help)| help.starts_with("delete")) {
                break;
            }
            let diagnostic = parser::unexpected_at(self.file, self.source, chunk.start, chunk.start, expected);
            self.diagnostics.push(diagnostic);
            chunk.start += c.len_utf8();
        }
        (chunk.start == start || !self.is_blank(chunk.clone())).then_some(chunk)
    }

    fn items(&mut self, range: Range<usize>) -> Vec<Item> {
        let mut items = Vec::new();
        for chunk in self.chunks(range) {
            if self.stop_at(chunk.start) {
                break;
            }
            let Some(chunk) = self.skip_invisible(chunk, "`import`, `let` or a block") else {
                continue;
            };
            if let Some(at) = scan::too_deep(self.source, chunk.clone(), MAX_NESTING) {
                match self.block(chunk.clone(), true, 0) {
                    Some(block) => items.push(Item::Block(block)),
                    None => self.diagnostics.push(too_deep(self.file, at)),
                }
                continue;
            }
            let text = &self.source[chunk.clone()];
            match ExpParser::parse(Rule::item_only, text) {
                Ok(mut pairs) => {
                    let pair = pairs
                        .next()
                        .and_then(|p| p.into_inner().next())
                        .expect("grammar: item_only holds an item");
                    items.push(self.builder(chunk.start).item(pair));
                }
                Err(_) if self.top_level_expect(chunk.clone()) => {}
                Err(error) => match self.block(chunk.clone(), true, 0) {
                    Some(block) => items.push(Item::Block(block)),
                    None if self.top_level_property(chunk.clone()) => {}
                    None => self.report(&error, chunk.clone()),
                },
            }
        }
        items
    }

    /// Reports an `expect` block outside the experiment (its claims are
    /// still read, so their syntax errors show too).
    fn top_level_expect(&mut self, chunk: Range<usize>) -> bool {
        let Some(expect) = self.expect(chunk) else {
            return false;
        };
        self.diagnostics.push(
            Diagnostic::error(Code::E1112, "`expect` outside the experiment")
                .primary(expect.keyword.span, "claims belong in the experiment")
                .help("move the block into `experiment \"…\" { … }`"),
        );
        true
    }

    /// Reports a property outside any block, the one mistake for which the
    /// generic "expected …" message would mislead.
    fn top_level_property(&mut self, chunk: Range<usize>) -> bool {
        let text = &self.source[chunk.clone()];
        let Some(key) = ExpParser::parse(Rule::member_only, text)
            .ok()
            .and_then(|mut pairs| pairs.next()?.into_inner().next())
            .filter(|pair| pair.as_rule() == Rule::attribute)
            .and_then(|pair| pair.into_inner().next())
        else {
            return false;
        };
        let span = Span::new(
            self.file,
            chunk.start + key.as_span().start()..chunk.start + key.as_span().end(),
        );
        self.diagnostics.push(
            Diagnostic::error(Code::E0101, format!("property `{}` outside of a block", key.as_str()))
                .primary(span, "properties belong inside a block")
                .help(format!(
                    "move it into a block, or name a value with `let {} = …`",
                    key.as_str()
                )),
        );
        true
    }

    /// Members of a block whose body starts `depth` levels deep.
    fn members(&mut self, range: Range<usize>, depth: usize) -> Vec<Member> {
        let mut members = Vec::new();
        for chunk in self.chunks(range) {
            if self.stop_at(chunk.start) {
                break;
            }
            let Some(chunk) = self.skip_invisible(chunk, "a property or block") else {
                continue;
            };
            // A member nesting too deep is skipped whole, as E0106 says: its
            // blocks, recovered, only reported what their nesting caused
            // (40 nested `monitor {}` gave "`monitor` is not allowed in
            // `monitor`" first). A top-level block is still read member by
            // member, so the rest of an experiment is checked.
            if let Some(at) = scan::too_deep(self.source, chunk.clone(), MAX_NESTING - depth) {
                self.diagnostics.push(too_deep(self.file, at));
                continue;
            }
            let text = &self.source[chunk.clone()];
            match ExpParser::parse(Rule::member_only, text) {
                Ok(mut pairs) => {
                    let pair = pairs
                        .next()
                        .and_then(|p| p.into_inner().next())
                        .expect("grammar: member_only holds a member");
                    members.push(self.builder(chunk.start).member(pair));
                }
                Err(error) => {
                    if let Some(expect) = self.expect(chunk.clone()) {
                        members.push(Member::Expect(expect));
                    } else if let Some(block) = self.block(chunk.clone(), false, depth) {
                        members.push(Member::Block(block));
                    } else {
                        self.report(&error, chunk.clone());
                    }
                }
            }
        }
        members
    }

    /// Recovers a block whose header parses, `depth` levels deep: its members
    /// are recovered one by one. Returns `None` when the chunk is not a block
    /// at all, or when its body would lie past the nesting limit.
    fn block(&mut self, chunk: Range<usize>, top_level: bool, depth: usize) -> Option<Block> {
        if depth + 1 >= MAX_NESTING {
            return None;
        }
        let text = &self.source[chunk.clone()];
        let header = ExpParser::parse(Rule::block_open, text).ok()?.next()?;
        let header_end = chunk.start + header.as_span().end();
        let (kind, label) = self.builder(chunk.start).block_header(header);
        let scan = scan::scan(self.source, chunk.clone());
        let (open, close) = *scan.brace_pairs.first()?;
        if open + 1 != header_end {
            return None;
        }
        let body_end = close.unwrap_or(chunk.end);
        let before = self.diagnostics.len();
        let members = self.members(header_end..body_end, depth + 1);
        let end = self.close_block(chunk.clone(), open, close, top_level);
        Some(Block {
            kind,
            label,
            members,
            span: Span::new(self.file, chunk.start..end),
            recovered: self.diagnostics.len() > before,
        })
    }

    /// Reports a block never closed, or text after its `}` on the same
    /// line; returns where the block ends.
    fn close_block(&mut self, chunk: Range<usize>, open: usize, close: Option<usize>, top_level: bool) -> usize {
        match close {
            None => {
                let span = Span::new(self.file, open..open + 1);
                self.diagnostics.push(
                    parser::unexpected_at(self.file, self.source, chunk.start, chunk.end, "`}`")
                        .secondary(span, "this block is never closed"),
                );
            }
            Some(close) => {
                let at = scan::content_start(self.source, close + 1..chunk.end);
                if at < chunk.end {
                    self.diagnostics.push(self.after_block(close, at, top_level));
                }
            }
        }
        // An unclosed block ends with its last token, not with the blank
        // lines and comments before the next statement.
        close.map_or_else(|| scan::content_end(self.source, chunk), |close| close + 1)
    }

    /// Recovers an `expect` block whose header parses: its claims one by
    /// one, so one bad claim does not hide the others. `None` when the
    /// chunk is not an `expect` block.
    fn expect(&mut self, chunk: Range<usize>) -> Option<Expect> {
        let text = &self.source[chunk.clone()];
        let header = ExpParser::parse(Rule::expect_open, text).ok()?.next()?;
        let header_end = chunk.start + header.as_span().end();
        let (keyword, label) = self.builder(chunk.start).expect_header(header);
        let scan = scan::scan(self.source, chunk.clone());
        let (open, close) = *scan.brace_pairs.first()?;
        if open + 1 != header_end {
            return None;
        }
        let before = self.diagnostics.len();
        let mut claims = Vec::new();
        for claim in self.chunks(header_end..close.unwrap_or(chunk.end)) {
            if self.stop_at(claim.start) {
                break;
            }
            let Some(claim) = self.skip_invisible(claim, "a claim") else {
                continue;
            };
            match ExpParser::parse(Rule::claim_only, &self.source[claim.clone()]) {
                Ok(mut pairs) => {
                    let pair = pairs
                        .next()
                        .and_then(|p| p.into_inner().next())
                        .expect("grammar: claim_only holds a claim");
                    claims.push(self.builder(claim.start).claim(pair));
                }
                Err(error) => self.report(&error, claim),
            }
        }
        let end = self.close_block(chunk.clone(), open, close, false);
        Some(Expect {
            keyword,
            label,
            claims,
            span: Span::new(self.file, chunk.start..end),
            recovered: self.diagnostics.len() > before,
        })
    }

    /// After [`MAX_DIAGNOSTICS`] syntax errors, stops at `at` with E0107.
    fn stop_at(&mut self, at: usize) -> bool {
        if !self.stopped && self.diagnostics.len() >= MAX_DIAGNOSTICS {
            self.stopped = true;
            self.diagnostics.push(
                Diagnostic::error(
                    Code::E0107,
                    format!("more than {MAX_DIAGNOSTICS} syntax errors: parsing stopped"),
                )
                .primary(Span::new(self.file, at..at), "nothing from here on is read")
                .help("fix the first errors and check again; is this an exp spec?"),
            );
        }
        self.stopped
    }

    fn builder(&mut self, offset: usize) -> Builder<'_> {
        Builder {
            file: self.file,
            offset,
            diagnostics: self.diagnostics,
        }
    }

    /// Text after a block's closing brace, on the same line.
    fn after_block(&self, close: usize, at: usize, top_level: bool) -> Diagnostic {
        if self.source[at..].starts_with('}') {
            return Diagnostic::error(Code::E0101, "unexpected `}`")
                .primary(Span::new(self.file, at..at + 1), "this `}` closes no block")
                .secondary(Span::new(self.file, close..close + 1), "the block ends here");
        }
        let expected = if top_level {
            "`import`, `let` or a block"
        } else {
            "a property or block"
        };
        parser::unexpected_at(self.file, self.source, at, at, expected)
    }

    fn report(&mut self, error: &pest::error::Error<Rule>, chunk: Range<usize>) {
        let diagnostic = parser::syntax_error_in(error, self.file, self.source, chunk);
        self.diagnostics.push(diagnostic);
    }
}
