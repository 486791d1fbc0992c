//! Bidirectional control characters in comments and strings (E0108). They
//! are invisible and reorder how the text around them is displayed, so a
//! spec can read differently from what it says (Trojan Source,
//! CVE-2021-42574). Outside comments and strings the grammar refuses them
//! anyway (E0101 names them, as every invisible character).

use std::ops::Range;

use exp_diagnostics::limits::{group, MAX_DIAGNOSTICS};
use exp_diagnostics::{bidi_name, Code, Diagnostic, FileId, Span};

/// One E0108 per bidirectional control inside `comments` or `strings`, at
/// most [`MAX_DIAGNOSTICS`]: the last then counts the rest (a million of
/// them made a million diagnostics, 800 MB and 47 s).
pub(crate) fn check(
    file: FileId,
    source: &str,
    comments: &[Range<usize>],
    strings: &[Range<usize>],
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let mut more = 0u64;
    // In source order, so the first ones reported are the first in the file.
    let mut regions: Vec<(&Range<usize>, bool)> = comments
        .iter()
        .map(|r| (r, true))
        .chain(strings.iter().map(|r| (r, false)))
        .collect();
    regions.sort_by_key(|(range, _)| range.start);
    for (range, comment) in regions {
        let Some(text) = source.get(range.clone()) else {
            continue;
        };
        for (offset, c) in text.char_indices() {
            let Some(name) = bidi_name(c) else { continue };
            if found.len() == MAX_DIAGNOSTICS {
                more += 1;
                continue;
            }
            let at = range.start + offset;
            let (place, help) = if comment {
                ("comment", "delete it".to_string())
            } else {
                (
                    "string",
                    format!(
                        "delete it, or write it as the escape `\\u{{{:04X}}}` to keep it visible",
                        u32::from(c)
                    ),
                )
            };
            found.push(
                Diagnostic::error(
                    Code::E0108,
                    format!(
                        "bidirectional control character U+{:04X} {name} in a {place}",
                        u32::from(c)
                    ),
                )
                .primary(
                    Span::new(file, at..at + c.len_utf8()),
                    "reorders how the text around it is shown",
                )
                .help(help),
            );
        }
    }
    if let Some(last) = found.pop() {
        let last = match more {
            0 => last,
            n => last.note(format!("and {} more in this file, not shown", group(n))),
        };
        found.push(last);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_in_comments_and_strings_are_reported_at_most_a_hundred_times() {
        let source = format!("// a\u{202E}b\nlet x = \"\u{2066}\"\n// {}\n", "\u{200F}".repeat(150));
        let comments = [0..8, 23..source.len() - 1];
        let strings = [std::ops::Range { start: 17, end: 22 }];
        let found = check(FileId(0), &source, &comments, &strings);
        assert_eq!(found.len(), MAX_DIAGNOSTICS);
        assert!(found[0].message.contains("U+202E RIGHT-TO-LEFT OVERRIDE in a comment"));
        assert!(found[1].message.contains("U+2066 LEFT-TO-RIGHT ISOLATE in a string"));
        assert_eq!(found[99].notes, vec!["and 52 more in this file, not shown".to_string()]);
    }
}
