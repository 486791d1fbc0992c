//! The pest binding and the translation of pest errors into diagnostics that
//! speak of the language, not of grammar rules.

use std::ops::Range;

use exp_diagnostics::{Code, Diagnostic, FileId, Span};
use pest::error::{ErrorVariant, InputLocation};
use pest_derive::Parser;

use crate::scan;

#[derive(Parser)]
#[grammar = "../../../grammar/exp.pest"]
pub(crate) struct ExpParser;

/// What a rule means to a user, for "expected …" messages.
fn describe(rule: Rule) -> &'static str {
    match rule {
        Rule::eq => "`=`",
        Rule::comma => "`,`",
        Rule::dotdot => "`..`",
        Rule::lbrace => "`{`",
        Rule::rbrace => "`}`",
        Rule::lbracket => "`[`",
        Rule::rbracket => "`]`",
        Rule::lparen => "`(`",
        Rule::rparen => "`)`",
        Rule::kw_as => "`as`",
        Rule::kw_step => "`step`",
        Rule::string => "a string",
        Rule::metric | Rule::metric_name => "a metric",
        Rule::ident => "a name",
        Rule::unit => "a unit",
        Rule::attribute | Rule::field => "a property",
        Rule::block => "a block",
        Rule::member_only => "a property or block",
        Rule::import | Rule::let_item | Rule::kw_import | Rule::kw_let | Rule::item_only | Rule::file => {
            "`import`, `let` or a block"
        }
        Rule::arg => "an argument",
        Rule::cmp_op => "a comparison (`<`, `<=`, `>`, `>=`, `==`)",
        Rule::kw_within => "`within`",
        Rule::kw_of => "`of`",
        Rule::kw_with => "`with`",
        Rule::kw_at => "`at`",
        Rule::kw_abort => "`abort`",
        Rule::kw_scaled | Rule::scaled => "`scaled(…)`",
        Rule::direction => "`increases with`, `decreases with`",
        Rule::phase_word => "`during`, `before` or `after`",
        Rule::star => "`*`",
        Rule::stat | Rule::stat_fn => "a statistic such as `p99(…)`",
        Rule::term => "a statistic or a number",
        Rule::claim | Rule::claim_only | Rule::comparison | Rule::within | Rule::trend => "a claim",
        // Recovery parses statements one by one, so "end of input" is the end
        // of the statement.
        Rule::EOI => "the end of the statement",
        _ => "a value",
    }
}

/// Order of alternatives in messages: punctuation first, then words.
fn rank(rule: Rule) -> u8 {
    match rule {
        Rule::eq => 0,
        Rule::comma | Rule::rbracket | Rule::rparen | Rule::rbrace => 1,
        Rule::lbrace => 3,
        Rule::string => 2,
        _ => 4,
    }
}

/// The words for what the parser expected, e.g. "`,` or `]`".
fn expected_words(positives: &[Rule]) -> String {
    let mut rules = positives.to_vec();
    // A range or a unit could always continue a number; only worth saying
    // when it is the sole way on.
    if rules.len() > 1 {
        rules.retain(|r| !matches!(r, Rule::dotdot | Rule::kw_step | Rule::unit));
    }
    // Where any value may come, a string, `[` or `{` is just one kind of value.
    let value_start = |r: &Rule| {
        matches!(
            r,
            Rule::expr | Rule::callee | Rule::path | Rule::number | Rule::quantity | Rule::boolean
        )
    };
    if rules.iter().any(value_start) {
        rules.retain(|r| !matches!(r, Rule::string | Rule::lbrace | Rule::lbracket));
    }
    rules.sort_by_key(|r| rank(*r));
    let mut words: Vec<&str> = Vec::new();
    for rule in rules {
        let word = describe(rule);
        if !words.contains(&word) {
            words.push(word);
        }
    }
    join_alternatives(&words)
}

/// Turns a pest error into an E0101 diagnostic. `offset` places a sub-parse
/// (recovery parses items one by one) back into the whole file.
pub(crate) fn syntax_error(error: &pest::error::Error<Rule>, file: FileId, source: &str, offset: usize) -> Diagnostic {
    syntax_error_in(error, file, source, offset..source.len())
}

/// Like [`syntax_error`] for a sub-parse of the text `chunk` of `source`.
pub(crate) fn syntax_error_in(
    error: &pest::error::Error<Rule>,
    file: FileId,
    source: &str,
    chunk: Range<usize>,
) -> Diagnostic {
    let position = chunk.start
        + match error.location {
            InputLocation::Pos(p) => p,
            InputLocation::Span((start, _)) => start,
        };
    let expected = match &error.variant {
        ErrorVariant::ParsingError { positives, .. } => expected_words(positives),
        ErrorVariant::CustomError { message } => message.clone(),
    };
    let diagnostic = unexpected_at(file, source, chunk.start, position, &expected);
    // Point at a bracket the statement never closes.
    let unclosed = scan::scan(source, chunk).unclosed;
    let opener = unclosed.iter().rev().find(|&&at| at < position);
    match opener.map(|&at| (at, source.as_bytes()[at])) {
        Some((at, open @ (b'[' | b'(' | b'{'))) if expected.contains(closer(open)) => {
            let open = char::from(open);
            diagnostic.secondary(Span::new(file, at..at + 1), format!("unclosed `{open}`"))
        }
        _ => diagnostic,
    }
}

fn closer(open: u8) -> &'static str {
    match open {
        b'[' => "`]`",
        b'(' => "`)`",
        _ => "`}`",
    }
}

/// "expected X, found Y" at `position`, with hints for the common slips.
/// `from` is where the statement being parsed starts.
pub(crate) fn unexpected_at(file: FileId, source: &str, from: usize, position: usize, expected: &str) -> Diagnostic {
    let rest = source.get(position..).unwrap_or("");
    if rest.starts_with('"') && !closes_on_same_line(rest) {
        let line = &rest[..rest.find(['\r', '\n']).unwrap_or(rest.len())];
        let end = position + line.trim_end_matches([' ', '\t']).len();
        return Diagnostic::error(Code::E0102, "unterminated string")
            .primary(Span::new(file, position..end), "this string is not closed")
            .help("strings end with `\"` on the same line");
    }
    if rest.starts_with("/*") && !rest.contains("*/") {
        return Diagnostic::error(Code::E0102, "unterminated comment")
            .primary(Span::new(file, position..position + 2), "this comment is never closed")
            .help("close it with `*/`");
    }
    let found = token_at(rest);
    let lookalike = found.chars().next().and_then(lookalike);
    let found_words = match lookalike {
        _ if found.is_empty() => "end of file".to_string(),
        Some((name, _)) => format!("U+{:04X} {name}", u32::from(found.chars().next().unwrap_or(' '))),
        None => format!("`{found}`"),
    };
    // When the statement breaks off at the end of a line, what is missing
    // belongs right after its last token, not on the line that follows.
    let last_end = scan::content_end(source, from.min(position)..position);
    let span = if last_end > from && source[last_end..position].contains('\n') {
        Span::new(file, last_end..last_end)
    } else {
        Span::new(file, position..position + found.len())
    };
    let mut diagnostic = Diagnostic::error(Code::E0101, format!("expected {expected}, found {found_words}"))
        .primary(span, format!("expected {expected}"));
    if let Some((_, instead)) = lookalike {
        diagnostic = diagnostic.help(instead);
    } else if let Some(hint) = hint_for(source, position, found, expected) {
        diagnostic = diagnostic.help(hint);
    }
    diagnostic
}

/// A character that is invisible or looks like the ASCII one the grammar
/// needs (text pasted from a word processor or a web page): its Unicode name
/// and what to do instead.
pub(crate) fn lookalike(c: char) -> Option<(&'static str, &'static str)> {
    if let Some(name) = exp_diagnostics::bidi_name(c) {
        return Some((name, "delete it: it is invisible and reorders the text around it"));
    }
    Some(match c {
        '\u{00A0}' => ("NO-BREAK SPACE", "replace it with a plain space"),
        '\u{2009}' => ("THIN SPACE", "replace it with a plain space"),
        '\u{202F}' => ("NARROW NO-BREAK SPACE", "replace it with a plain space"),
        '\u{3000}' => ("IDEOGRAPHIC SPACE", "replace it with a plain space"),
        '\u{200B}' => ("ZERO WIDTH SPACE", "delete it: it is invisible"),
        '\u{200C}' => ("ZERO WIDTH NON-JOINER", "delete it: it is invisible"),
        '\u{200D}' => ("ZERO WIDTH JOINER", "delete it: it is invisible"),
        '\u{2060}' => ("WORD JOINER", "delete it: it is invisible"),
        '\u{FEFF}' => (
            "BYTE ORDER MARK",
            "delete it: save the file as UTF-8 without a byte order mark",
        ),
        '\u{2028}' => ("LINE SEPARATOR", "replace it with a newline"),
        '\u{201C}' => ("LEFT DOUBLE QUOTATION MARK", "replace it with `\"`"),
        '\u{201D}' => ("RIGHT DOUBLE QUOTATION MARK", "replace it with `\"`"),
        '\u{201E}' => ("DOUBLE LOW-9 QUOTATION MARK", "replace it with `\"`"),
        '\u{2018}' => (
            "LEFT SINGLE QUOTATION MARK",
            "replace it with `\"`: strings use double quotes",
        ),
        '\u{2019}' => (
            "RIGHT SINGLE QUOTATION MARK",
            "replace it with `\"`: strings use double quotes",
        ),
        '\u{2013}' => ("EN DASH", "replace it with `-`"),
        '\u{2014}' => ("EM DASH", "replace it with `-`"),
        '\u{2212}' => ("MINUS SIGN", "replace it with `-`"),
        '\u{FF1D}' => ("FULLWIDTH EQUALS SIGN", "replace it with `=`"),
        _ => return None,
    })
}

fn closes_on_same_line(rest: &str) -> bool {
    let line = &rest[1..rest[1..].find('\n').map_or(rest.len(), |i| i + 1)];
    let mut escaped = false;
    for c in line.chars() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => return true,
            _ => {}
        }
    }
    false
}

/// The word or single character at the start of `rest`.
fn token_at(rest: &str) -> &str {
    let word_len = rest
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '.'))
        .map_or(rest.len(), |(i, _)| i);
    if word_len > 0 {
        &rest[..word_len]
    } else {
        rest.chars().next().map_or("", |c| &rest[..c.len_utf8()])
    }
}

const KEYWORDS: [&str; 5] = ["import", "let", "as", "true", "false"];

fn hint_for(source: &str, position: usize, found: &str, expected: &str) -> Option<String> {
    let before = source.get(..position)?.trim_end_matches([' ', '\t']);
    let previous_word: &str = before
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
        .next()
        .unwrap_or("");
    let separated = before.len() < position;
    // `10 ms`, `1.5 Gbit/s`: the unit may go on with `/s`.
    let rest = source.get(position + found.len()..).unwrap_or("");
    let per = rest.strip_prefix('/').map_or(0, |r| {
        1 + r.len() - r.trim_start_matches(|c: char| c.is_ascii_alphabetic()).len()
    });
    let unit = source.get(position..position + found.len() + per).unwrap_or(found);
    let after_number = separated && previous_word.parse::<f64>().is_ok();
    if after_number && crate::units::is_unit(unit) {
        return Some(format!(
            "write the unit directly after the number: `{previous_word}{unit}`"
        ));
    }
    // `10 secs`: a unit spelled out, and apart.
    let word = unit.starts_with(|c: char| c.is_ascii_alphabetic());
    if let Some(known) = crate::units::suggest(unit).filter(|_| after_number && word) {
        return Some(format!(
            "units are written short, directly after the number: `{previous_word}{known}`"
        ));
    }
    if KEYWORDS.contains(&found) && (expected.contains("a name") || expected.contains("a property")) {
        return Some(format!("`{found}` is a keyword and cannot be used as a name"));
    }
    if previous_word == "import" && expected.starts_with("a string") && !found.is_empty() {
        return Some("the module path is a string: `import \"std/iot\"`".into());
    }
    if found == "-" {
        return dash_hint(previous_word, separated, rest);
    }
    match found {
        "=" if expected.contains("comparison") => Some("equality is written `==`".into()),
        ":" => Some("properties are set with `=`, not `:`".into()),
        ";" => Some("no `;` is needed: put each property on its own line".into()),
        "'" => Some("strings use double quotes: \"text\"".into()),
        _ => None,
    }
}

/// `per-connection`: names are joined with `_`; `1s - 17s`: a range is
/// `1s..17s`. `rest` follows the `-`.
fn dash_hint(previous_word: &str, separated: bool, rest: &str) -> Option<String> {
    let word = |s: &str| -> usize {
        s.len()
            - s.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
                .len()
    };
    let starts_name = |s: &str| s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    if !separated && starts_name(previous_word) && starts_name(rest) {
        // Every `-`-joined part: `round-robin-by-device`.
        let mut name = previous_word.to_string();
        let mut tail = rest;
        while starts_name(tail) {
            name.push('_');
            name.push_str(&tail[..word(tail)]);
            tail = &tail[word(tail)..];
            match tail.strip_prefix('-') {
                Some(after) => tail = after,
                None => break,
            }
        }
        return Some(format!("names are joined with `_`, not `-`: `{name}`"));
    }
    let next = rest.trim_start_matches([' ', '\t']);
    let value = |s: &str| s.starts_with(|c: char| c.is_ascii_digit());
    if value(previous_word) && value(next) {
        let end = &next[..next.len()
            - next
                .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '.' || c == '/')
                .len()];
        return Some(format!("a range is written with `..`: `{previous_word}..{end}`"));
    }
    None
}

fn join_alternatives(words: &[&str]) -> String {
    match words {
        [] => "something else".into(),
        [one] => (*one).into(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
