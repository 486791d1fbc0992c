//! A coarse lexical scan that knows only strings, comments and brackets. It
//! finds comments for the formatter and statement boundaries for error
//! recovery, and it never fails, whatever the input.

use std::ops::Range;

#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Byte ranges of every comment.
    pub comments: Vec<Range<usize>>,
    /// Byte offsets where a statement may start: the first token of a line that
    /// begins a name and does not continue an expression from the line before,
    /// either at bracket depth zero relative to the scanned range, or indented
    /// no deeper than the range's first statement (an unclosed bracket should
    /// not swallow the statements that follow it).
    pub statement_starts: Vec<usize>,
    /// For each `{` at depth zero, the offset of its matching `}` if any.
    pub brace_pairs: Vec<(usize, Option<usize>)>,
}

pub(crate) fn scan(source: &str, range: Range<usize>) -> Scan {
    let bytes = source.as_bytes();
    let mut out = Scan::default();
    let mut depth: i32 = 0;
    let mut open_braces: Vec<(usize, i32)> = Vec::new();
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
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            let end = source[i..range.end].find('\n').map_or(range.end, |n| i + n);
            out.comments.push(i..end);
            i = end;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let end = source[i + 2..range.end].find("*/").map_or(range.end, |n| i + 2 + n + 2);
            out.comments.push(i..end);
            i = end;
            continue;
        }
        let continues_expression = matches!(last_significant, b'=' | b',' | b'(' | b'[' | b'.');
        if line_start && !continues_expression && (c.is_ascii_alphabetic() || c == b'_') {
            let column = i - line_offset;
            let outdented = statement_column.is_some_and(|first| column <= first);
            if depth == 0 || outdented {
                statement_column.get_or_insert(column);
                out.statement_starts.push(i);
                depth = 0;
                open_braces.clear();
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
                i = (j + 1).min(range.end);
                continue;
            }
            b'{' => {
                if depth == 0 {
                    out.brace_pairs.push((i, None));
                }
                open_braces.push((i, depth));
                depth += 1;
            }
            b'(' | b'[' => depth += 1,
            b'}' => {
                depth -= 1;
                if let Some((_, d)) = open_braces.pop() {
                    if d == 0 {
                        if let Some(last) = out.brace_pairs.last_mut() {
                            last.1 = Some(i);
                        }
                    }
                }
            }
            b')' | b']' => depth -= 1,
            _ => {}
        }
        depth = depth.max(0);
        i += 1;
    }
    out
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
    fn a_value_on_the_next_line_is_not_a_statement() {
        let src = "a =\n  b\nc = 1\n";
        let s = scan(src, 0..src.len());
        assert_eq!(s.statement_starts, vec![0, 8]);
    }
}
