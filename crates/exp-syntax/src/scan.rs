//! A coarse lexical scan that knows only strings, comments and brackets. It
//! finds comments for the formatter and statement boundaries for error
//! recovery, and it never fails, whatever the input.

use std::ops::Range;

#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Byte ranges of every comment.
    pub comments: Vec<Range<usize>>,
    /// Byte ranges of every string literal, quotes included (an
    /// unterminated one up to its line's end).
    pub strings: Vec<Range<usize>>,
    /// Byte offsets where a statement may start: the first token of a line that
    /// begins a name and does not continue an expression from the line before,
    /// either at bracket depth zero relative to the scanned range, or indented
    /// no deeper than the range's first statement (an unclosed bracket should
    /// not swallow the statements that follow it). `let`, `import` and block
    /// headers (`name {`, `name "label"`) start a statement even after `=`,
    /// as they cannot continue an expression. At depth zero, a line that
    /// starts with anything that cannot continue the line before (a digit, a
    /// stray `}`, `@`, …) starts one too, so the garbage is reported on its own
    /// and the statement before it is kept.
    pub statement_starts: Vec<usize>,
    /// For each `{` at depth zero, the offset of its matching `}` if any.
    pub brace_pairs: Vec<(usize, Option<usize>)>,
    /// Offsets of the `{`, `[` and `(` of the last statement that are never
    /// closed, innermost last.
    pub unclosed: Vec<usize>,
}

pub(crate) fn scan(source: &str, range: Range<usize>) -> Scan {
    let out = scan_with(source, range.clone(), false);
    let unbalanced = !out.unclosed.is_empty() || out.brace_pairs.iter().any(|(_, close)| close.is_none());
    if unbalanced {
        // A bracket is never closed: read the indentation as the author
        // meant it, so that the block after an unclosed one is its sibling,
        // not its child (one error instead of a cascade). Balanced text is
        // never read this way, whatever its indentation.
        scan_with(source, range, true)
    } else {
        out
    }
}

/// [`scan`]; with `infer_closers`, a line that starts a name at or left of
/// the indentation of the line that opened a bracket closes that bracket.
#[allow(
    clippy::too_many_lines,
    reason = "a scanner: one loop over the bytes, one arm per token"
)]
fn scan_with(source: &str, range: Range<usize>, infer_closers: bool) -> Scan {
    let bytes = source.as_bytes();
    let mut out = Scan::default();
    let mut depth: i32 = 0;
    let mut open_braces: Vec<(usize, i32)> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    // The indentation of the line each entry of `open` was opened on.
    let mut open_indents: Vec<usize> = Vec::new();
    let mut line_indent = 0;
    let mut line_start = true;
    let mut line_offset = range.start;
    let mut statement_column: Option<usize> = None;
    let mut last_significant: u8 = b'\n';
    let mut i = range.start;
    while i < range.end {
        let c = bytes[i];
        match c {
            b'\n' => {
                line_start = true;
                i += 1;
                line_offset = i;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let next = if i + 1 < range.end { bytes[i + 1] } else { 0 };
        if c == b'/' && next == b'/' {
            let end = source[i..range.end].find('\n').map_or(range.end, |n| i + n);
            out.comments.push(i..end);
            i = end;
            continue;
        }
        if c == b'/' && next == b'*' {
            let end = source[i + 2..range.end].find("*/").map_or(range.end, |n| i + 2 + n + 2);
            out.comments.push(i..end);
            i = end;
            continue;
        }
        if line_start {
            let column = i - line_offset;
            line_indent = column;
            let outdented = statement_column.is_some_and(|first| column <= first);
            let continues_expression =
                matches!(last_significant, b'=' | b',' | b'(' | b'[' | b'.' | b'<' | b'>' | b'*');
            let role = line_role(source, i, range.end);
            if infer_closers && !continues_expression && matches!(role, Role::Name | Role::Declaration) {
                while open_indents.last().is_some_and(|&indent| indent >= column) {
                    open_indents.pop();
                    if let Some(at) = open.pop() {
                        if bytes[at] == b'{' {
                            open_braces.pop();
                        }
                    }
                    depth = (depth - 1).max(0);
                }
            }
            let starts = match role {
                Role::Declaration => depth == 0 || outdented,
                Role::Name => !continues_expression && (depth == 0 || outdented),
                Role::Continuation => false,
                Role::Closer => depth == 0,
                Role::Other => !continues_expression && depth == 0,
            };
            if starts {
                statement_column.get_or_insert(column);
                out.statement_starts.push(i);
                depth = 0;
                open_braces.clear();
                open.clear();
                open_indents.clear();
            }
        }
        line_start = false;
        last_significant = c;
        match c {
            b'"' => {
                // Strings never span lines; an unterminated one ends at the newline.
                let mut j = i + 1;
                while j < range.end && bytes[j] != b'"' && bytes[j] != b'\n' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                let end = if j < range.end && bytes[j] == b'"' {
                    j + 1
                } else {
                    j.min(range.end)
                };
                out.strings.push(i..end);
                // Past the closing quote, but not past the newline that ends an
                // unterminated string: the next line may start a statement.
                i = if j < range.end && bytes[j] == b'"' {
                    j + 1
                } else {
                    // `fleet "sensors {`: a line that ends in `{` opens a
                    // block even when its label's quote is missing.
                    let line = source[i..j.min(range.end)].trim_end_matches(WHITESPACE);
                    match line.len() > 1 && line.ends_with('{') {
                        true => i + line.len() - 1,
                        false => j.min(range.end),
                    }
                };
                continue;
            }
            b'{' => {
                if depth == 0 {
                    out.brace_pairs.push((i, None));
                }
                open_braces.push((i, depth));
                open.push(i);
                open_indents.push(line_indent);
                depth += 1;
            }
            b'(' | b'[' => {
                open.push(i);
                open_indents.push(line_indent);
                depth += 1;
            }
            b'}' => {
                open.pop();
                open_indents.pop();
                depth -= 1;
                if let Some((_, d)) = open_braces.pop() {
                    if d == 0 {
                        if let Some(last) = out.brace_pairs.last_mut() {
                            last.1 = Some(i);
                        }
                    }
                }
            }
            b')' | b']' => {
                open.pop();
                open_indents.pop();
                depth -= 1;
            }
            _ => {}
        }
        depth = depth.max(0);
        i += 1;
    }
    out.unclosed = open;
    out
}

/// The offset of the first `{`, `[` or `(` in `range` (outside strings and
/// comments) that opens more than `limit` levels, counted from the range's
/// start. Closers without an opener are ignored, as an unclosed opener
/// still counts: what matters is how deep anything would recurse.
pub(crate) fn too_deep(source: &str, range: Range<usize>, limit: usize) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut depth = 0usize;
    let mut i = range.start;
    while i < range.end {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = source[i..range.end].find('\n').map_or(range.end, |n| i + n);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = source[i + 2..range.end].find("*/").map_or(range.end, |n| i + 2 + n + 2);
                continue;
            }
            b'"' => {
                i += 1;
                while i < range.end && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'[' | b'(' => {
                depth += 1;
                if depth > limit {
                    return Some(i);
                }
            }
            b'}' | b']' | b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The end of the last token in `range`: trailing whitespace and comments
/// are not part of it. `range.start` when the range holds no token.
pub(crate) fn content_end(source: &str, range: Range<usize>) -> usize {
    let comments = scan(source, range.clone()).comments;
    let mut end = range.end;
    loop {
        end = range.start + source[range.start..end].trim_end_matches(WHITESPACE).len();
        match comments.iter().find(|c| c.end == end && c.start < end) {
            Some(comment) => end = comment.start,
            None => return end,
        }
    }
}

/// The start of the first token in `range`, after whitespace and comments.
/// `range.end` when the range holds no token.
pub(crate) fn content_start(source: &str, range: Range<usize>) -> usize {
    let comments = scan(source, range.clone()).comments;
    let mut start = range.start;
    loop {
        start = range.end - source[start..range.end].trim_start_matches(WHITESPACE).len();
        match comments.iter().find(|c| c.start == start && c.end > start) {
            Some(comment) => start = comment.end,
            None => return start,
        }
    }
}

/// The grammar's whitespace.
const WHITESPACE: [char; 4] = [' ', '\t', '\r', '\n'];

/// What the first token of a line says about where a statement starts.
enum Role {
    /// `let`, `import` or a block header: always a new statement.
    Declaration,
    /// Any other name: a new statement unless the line before goes on.
    Name,
    /// `as` or `step` (but not `step =`), `..`, a string, `{`: continues the
    /// line before (`import "x"` / `as x`, a range, a block header split in two).
    Continuation,
    /// `}`, `]` or `)`.
    Closer,
    /// Anything else.
    Other,
}

fn line_role(source: &str, at: usize, end: usize) -> Role {
    let rest = &source[at..end];
    let word_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let word = &rest[..word_len];
    let after = rest[word_len..].trim_start_matches([' ', '\t']);
    match word {
        "" => match rest.as_bytes().first() {
            Some(b'}' | b']' | b')') => Role::Closer,
            // `<`, `>` and `*` continue a claim broken over lines.
            Some(b'"' | b'{' | b'.' | b'<' | b'>' | b'*') => Role::Continuation,
            _ => Role::Other,
        },
        _ if word.as_bytes()[0].is_ascii_digit() => Role::Other,
        "let" | "import" => Role::Declaration,
        _ if after.starts_with(['"', '{']) => Role::Declaration,
        "as" | "step" | "within" | "of" | "with" | "increases" | "decreases" | "abort" | "during" | "before"
        | "after"
            if !after.starts_with('=') =>
        {
            Role::Continuation
        }
        _ => Role::Name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_comments_and_statements_but_not_inside_strings() {
        let src = "let a = \"// no\" // yes\nexperiment \"x\" {\n  b = 1\n}\n/* c */\n";
        let s = scan(src, 0..src.len());
        let comments: Vec<&str> = s.comments.iter().map(|r| &src[r.clone()]).collect();
        assert_eq!(comments, ["// yes", "/* c */"]);
        let starts: Vec<&str> = s.statement_starts.iter().map(|&i| &src[i..i + 3]).collect();
        assert_eq!(starts, ["let", "exp"]);
        assert_eq!(s.brace_pairs.len(), 1);
        assert!(s.brace_pairs[0].1.is_some());
    }

    #[test]
    fn an_unclosed_brace_is_closed_by_the_next_line_at_its_indentation() {
        let src = "x {\n  a {\n    b = 1\n  c {\n  }\n}\n";
        let s = scan(src, 0..src.len());
        // `x`'s brace pairs with the last `}`: `a` was closed by `c`'s line.
        assert_eq!(s.brace_pairs, [(2, Some(src.len() - 2))]);
        // Balanced text keeps its braces, however its members are indented.
        let src = "x {\n  a {\n  b = 1\n  }\n}\n";
        assert_eq!(scan(src, 0..src.len()).brace_pairs, [(2, Some(src.len() - 2))]);
        // A label without its closing quote still opens its block.
        let src = "x \"y {\n  a = 1\n}\n";
        assert_eq!(scan(src, 0..src.len()).brace_pairs, [(5, Some(src.len() - 2))]);
    }

    #[test]
    fn a_value_on_the_next_line_is_not_a_statement() {
        let src = "a =\n  b\nc = 1\n";
        let s = scan(src, 0..src.len());
        assert_eq!(s.statement_starts, vec![0, 8]);
    }

    fn starts(src: &str) -> Vec<&str> {
        let s = scan(src, 0..src.len());
        s.statement_starts
            .iter()
            .map(|&i| src[i..].split_whitespace().next().unwrap_or(""))
            .collect()
    }

    #[test]
    fn declarations_start_statements_even_after_an_operator() {
        assert_eq!(starts("a =\nlet b = 1\n"), ["a", "let"]);
        assert_eq!(starts("a = 1..\nimport \"x\"\n"), ["a", "import"]);
        assert_eq!(
            starts("a =\nfleet \"f\" {}\nb = [\ngroup {}\n"),
            ["a", "fleet", "b", "group"]
        );
    }

    #[test]
    fn continuation_lines_do_not_start_statements() {
        assert_eq!(
            starts("import \"x\"\n  as y\nlet r = 1..2\n  step 1\n"),
            ["import", "let"]
        );
        assert_eq!(starts("experiment\n  \"label\"\n{\n}\n"), ["experiment"]);
        assert_eq!(starts("r = 1\n  ..2\nstep = 3\n"), ["r", "step"]);
    }

    #[test]
    fn garbage_lines_start_statements_at_depth_zero_only() {
        assert_eq!(starts("let a = 1\n123\n}\n@x\nb = 2\n"), ["let", "123", "}", "@x", "b"]);
        assert_eq!(starts("a = [\n  1\n  2\n]\n"), ["a"]);
        assert_eq!(starts("a = 1 +\n-2\n"), ["a", "-2"]);
    }

    #[test]
    fn an_unterminated_string_ends_at_the_line_break() {
        assert_eq!(starts("a = \"open\nb = 1\n"), ["a", "b"]);
        assert_eq!(starts("a = \"esc\\\"\nb = 1\n"), ["a", "b"]);
    }

    #[test]
    fn reports_unclosed_brackets_innermost_last() {
        let src = "a = f([1, (2), {\n";
        assert_eq!(scan(src, 0..src.len()).unclosed, [5, 6, 15]);
        let src = "a = [1]\nb = (\n";
        assert_eq!(scan(src, 0..src.len()).unclosed, [12]);
    }

    #[test]
    fn finds_the_first_bracket_past_the_limit() {
        assert_eq!(too_deep("[[[]]]", 0..6, 3), None);
        assert_eq!(too_deep("[[[[]]]]", 0..8, 3), Some(3));
        assert_eq!(too_deep("a = f([{", 0..8, 2), Some(7));
        // Brackets in strings and comments do not count.
        assert_eq!(too_deep("\"[[[[\" // [[[[\n/* [[[[ */ [", 0..24, 1), None);
        // Closed levels are left again.
        assert_eq!(too_deep("[][][][]", 0..8, 1), None);
    }

    #[test]
    fn content_bounds_skip_whitespace_and_comments() {
        let src = " /* a */ // b\n x = 1 // c\n /* d */ \n";
        assert_eq!(content_start(src, 0..src.len()), 15);
        assert_eq!(content_end(src, 0..src.len()), 20);
        assert_eq!(content_start(src, 0..8), 8);
        assert_eq!(content_end(src, 0..8), 0);
    }
}
