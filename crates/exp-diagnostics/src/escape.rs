//! Bidirectional control characters never reach a terminal raw from a
//! diagnostic: they are invisible and reorder the rest of the line they
//! are on, so a quoted source line could read differently from what the
//! file holds (Trojan Source, CVE-2021-42574). Diagnostics name them
//! ([`bidi_name`]) and show them escaped, `\u{202E}`, in their messages
//! ([`escape_bidi`]) and in the source lines they quote ([`Escaped`]: the
//! text as shown, and the mapping of byte offsets between the two).

use std::borrow::Cow;

/// The Unicode name of a bidirectional control character, `None` for any
/// other character.
pub fn bidi_name(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{061C}' => "ARABIC LETTER MARK",
        '\u{200E}' => "LEFT-TO-RIGHT MARK",
        '\u{200F}' => "RIGHT-TO-LEFT MARK",
        '\u{202A}' => "LEFT-TO-RIGHT EMBEDDING",
        '\u{202B}' => "RIGHT-TO-LEFT EMBEDDING",
        '\u{202C}' => "POP DIRECTIONAL FORMATTING",
        '\u{202D}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{202E}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        _ => return None,
    })
}

/// `\u{202E}`: how a diagnostic shows a bidirectional control.
fn escape(c: char) -> String {
    format!("\\u{{{:04X}}}", u32::from(c))
}

/// `text` with every bidirectional control escaped.
pub fn escape_bidi(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| bidi_name(c).is_some()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match bidi_name(c) {
            Some(_) => out.push_str(&escape(c)),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Byte offsets of the bidirectional controls in `text`, ascending. Every
/// one is encoded starting with byte 0xE2 (U+200E…U+2069) or 0xD8
/// (U+061C), so only those bytes are decoded.
pub(crate) fn bidi_offsets(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len())
        .filter(|&i| matches!(bytes[i], 0xE2 | 0xD8))
        .filter(|&i| {
            text.get(i..)
                .and_then(|s| s.chars().next())
                .and_then(bidi_name)
                .is_some()
        })
        .collect()
}

/// A file's text as a diagnostic shows it: each bidirectional control
/// escaped. Offsets map both ways; columns stay those of the file.
#[derive(Debug, Clone)]
pub(crate) struct Escaped {
    pub text: String,
    /// Per escaped character: its offset in the file, its length there,
    /// its offset in `text` and the length of its escape.
    marks: Vec<Mark>,
}

#[derive(Debug, Clone, Copy)]
struct Mark {
    original: usize,
    original_len: usize,
    shown: usize,
    shown_len: usize,
}

impl Escaped {
    /// `None` when `offsets` (from [`bidi_offsets`]) is empty.
    pub fn new(original: &str, offsets: &[usize]) -> Option<Escaped> {
        if offsets.is_empty() {
            return None;
        }
        let mut text = String::with_capacity(original.len() + offsets.len() * 6);
        let mut marks = Vec::with_capacity(offsets.len());
        let mut copied = 0;
        for &at in offsets {
            let c = original[at..].chars().next()?;
            text.push_str(&original[copied..at]);
            let escaped = escape(c);
            marks.push(Mark {
                original: at,
                original_len: c.len_utf8(),
                shown: text.len(),
                shown_len: escaped.len(),
            });
            text.push_str(&escaped);
            copied = at + c.len_utf8();
        }
        text.push_str(&original[copied..]);
        Some(Escaped { text, marks })
    }

    /// The offset in `text` of a character boundary `at` of the file.
    pub fn shown(&self, at: usize) -> usize {
        match self.marks.partition_point(|m| m.original < at).checked_sub(1) {
            Some(i) => {
                let m = self.marks[i];
                m.shown + m.shown_len + at.saturating_sub(m.original + m.original_len)
            }
            None => at,
        }
    }

    /// The offset in the file of `at` in `text` (inside an escape: the
    /// escaped character's).
    pub fn original(&self, at: usize) -> usize {
        match self.marks.partition_point(|m| m.shown <= at).checked_sub(1) {
            Some(i) => {
                let m = self.marks[i];
                if at < m.shown + m.shown_len {
                    m.original
                } else {
                    m.original + m.original_len + (at - m.shown - m.shown_len)
                }
            }
            None => at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_named_and_escaped() {
        assert_eq!(bidi_name('\u{202E}'), Some("RIGHT-TO-LEFT OVERRIDE"));
        assert_eq!(bidi_name('a'), None);
        assert_eq!(bidi_name('\u{200B}'), None);
        assert_eq!(escape_bidi("a\u{202E}b\u{061C}"), "a\\u{202E}b\\u{061C}");
        assert!(matches!(escape_bidi("plain é"), Cow::Borrowed(_)));
    }

    #[test]
    fn offsets_map_both_ways() {
        let text = "ab\u{202E}cd\u{061C}é\u{2066}";
        let offsets = bidi_offsets(text);
        assert_eq!(offsets, vec![2, 7, 11]);
        let escaped = Escaped::new(text, &offsets).unwrap();
        assert_eq!(escaped.text, "ab\\u{202E}cd\\u{061C}é\\u{2066}");
        for (original, shown) in [(0, 0), (2, 2), (5, 10), (7, 12), (9, 20), (11, 22), (14, 30)] {
            assert_eq!(escaped.shown(original), shown, "shown({original})");
            assert_eq!(escaped.original(shown), original, "original({shown})");
        }
        assert_eq!(escaped.original(5), 2, "inside an escape");
        assert!(Escaped::new("plain", &bidi_offsets("plain")).is_none());
    }
}
