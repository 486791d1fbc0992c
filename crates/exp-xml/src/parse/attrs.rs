//! The attributes of an opening tag: parsed, references resolved (never
//! expanded), sorted by name and checked for duplicates.

use super::{AttributeProblem, TagError, TextRange};
use crate::unescape;

/// Parses the raw attributes of an opening tag `<name raw>`: strings go to
/// the arena `text`, their ranges to `out`, sorted by name. Values have
/// references resolved, or are kept raw (lossy UTF-8) when they hold an
/// unknown entity or a broken reference — never expanded. On `Err`, `out`
/// is as it was.
pub(crate) fn parse_attributes(
    name: &str,
    raw: &[u8],
    text: &mut String,
    out: &mut Vec<(TextRange, TextRange)>,
) -> Result<(), TagError> {
    let from = out.len();
    let result = push_attributes(name, raw, text, out);
    if result.is_err() {
        out.truncate(from);
    }
    result
}

fn push_attributes(
    name: &str,
    raw: &[u8],
    text: &mut String,
    out: &mut Vec<(TextRange, TextRange)>,
) -> Result<(), TagError> {
    let from = out.len();
    // Usually the attribute text is UTF-8 without references: it is then
    // copied (and checked) once, and names and values are ranges of that
    // copy instead of being checked and copied one by one.
    let copied = match std::str::from_utf8(raw) {
        Ok(raw_text) if memchr::memchr(b'&', raw).is_none() => {
            let base = text.len();
            text.push_str(raw_text);
            Some(base)
        }
        _ => None,
    };
    // Offset in `raw` of one of its suffixes.
    let offset = |suffix: &[u8]| raw.len() - suffix.len();
    let mut rest = raw.trim_ascii_start();
    while !rest.is_empty() {
        let key_len = rest
            .iter()
            .position(|&b| b == b'=' || b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let (key, after) = rest.split_at(key_len);
        let key_at = offset(rest);
        let bad = |problem| TagError::Attribute {
            element: name.to_owned(),
            problem,
        };
        let after = after.trim_ascii_start();
        let after = after
            .strip_prefix(b"=")
            .ok_or_else(|| bad(AttributeProblem::NoEquals))?;
        let after = after.trim_ascii_start();
        let quote = match after.first() {
            Some(&q @ (b'"' | b'\'')) => q,
            _ => return Err(bad(AttributeProblem::NotQuoted)),
        };
        let len = memchr::memchr(quote, &after[1..]).ok_or_else(|| bad(AttributeProblem::Unclosed))?;
        let value = &after[1..=len];
        let value_at = offset(after) + 1;
        rest = &after[len + 2..];
        if rest.first().is_some_and(|b| !b.is_ascii_whitespace()) {
            return Err(bad(AttributeProblem::NoSpaceAfterValue));
        }
        rest = rest.trim_ascii_start();
        if key.is_empty() {
            return Err(bad(AttributeProblem::EmptyName));
        }
        let ranges = match copied {
            Some(base) => (
                TextRange {
                    start: base + key_at,
                    end: base + key_at + key.len(),
                },
                TextRange {
                    start: base + value_at,
                    end: base + value_at + value.len(),
                },
            ),
            None => {
                let key = std::str::from_utf8(key).map_err(|err| bad(AttributeProblem::NameNotUtf8(err)))?;
                (push_str(text, key), push_attribute_value(text, value))
            }
        };
        out.push(ranges);
    }
    if let Some(list) = out.get_mut(from..) {
        let key = |range: TextRange| text.get(range.start..range.end);
        if list.len() > 1 {
            list.sort_by(|a, b| key(a.0).cmp(&key(b.0)));
            if list.windows(2).any(|w| key(w[0].0) == key(w[1].0)) {
                return Err(TagError::DuplicateAttribute {
                    element: name.to_owned(),
                });
            }
        }
    }
    Ok(())
}

fn push_str(text: &mut String, s: &str) -> TextRange {
    let start = text.len();
    text.push_str(s);
    TextRange { start, end: text.len() }
}

/// Appends a value with references resolved, or raw (lossy UTF-8) when it
/// holds an unknown entity or a broken reference.
fn push_attribute_value(text: &mut String, raw: &[u8]) -> TextRange {
    let start = text.len();
    if unescape::attribute_value(raw, text).is_err() {
        text.truncate(start);
        text.push_str(&String::from_utf8_lossy(raw));
    }
    TextRange { start, end: text.len() }
}
