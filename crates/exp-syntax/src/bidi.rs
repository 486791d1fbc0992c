//! Bidirectional control characters in comments and strings (E0108). They
//! are invisible and reorder how the text around them is displayed, so a
//! spec can read differently from what it says (Trojan Source,
//! CVE-2021-42574). Outside comments and strings the grammar refuses them
//! anyway (E0101 names them, as every invisible character).

use std::ops::Range;

use exp_diagnostics::{bidi_name, Code, Diagnostic, FileId, Span};

/// One E0108 per bidirectional control inside `comments` or `strings`.
pub(crate) fn check(file: FileId, source: &str, comments: &[Range<usize>], strings: &[Range<usize>]) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let regions = comments.iter().map(|r| (r, true)).chain(strings.iter().map(|r| (r, false)));
    for (range, comment) in regions {
        let Some(text) = source.get(range.clone()) else { continue };
        for (offset, c) in text.char_indices() {
            let Some(name) = bidi_name(c) else { continue };
            let at = range.start + offset;
            let (place, help) = if comment {
                ("comment", "delete it".to_string())
            } else {
                (
                    "string",
                    format!("delete it, or write it as the escape `\\u{{{:04X}}}` to keep it visible", u32::from(c)),
                )
            };
            found.push(
                Diagnostic::error(
                    Code::E0108,
                    format!("bidirectional control character U+{:04X} {name} in a {place}", u32::from(c)),
                )
                .primary(Span::new(file, at..at + c.len_utf8()), "reorders how the text around it is shown")
                .help(help),
            );
        }
    }
    found
}
