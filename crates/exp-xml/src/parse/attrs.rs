//! Opening tags: attributes parsed, resolved and sorted into the document.

use super::{Document, Span, State, Token};
use crate::unescape;

impl State {
    /// Pushes an opening tag, attributes sorted by name. Attribute values
    /// with unknown entities are kept raw rather than expanded.
    pub(super) fn push_open(&mut self, name: &str, raw: &[u8]) -> Result<(), String> {
        let from = self.doc.attrs.len();
        // Usually the attribute text is UTF-8 without references: it is
        // then copied (and checked) once, and names and values are spans of
        // that copy instead of being checked and copied one by one.
        let copied = match std::str::from_utf8(raw) {
            Ok(text) if memchr::memchr(b'&', raw).is_none() => {
                let base = self.doc.text.len();
                self.doc.text.push_str(text);
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
            let bad = |what: &str| format!("attribute in <{name}>: {what}");
            let after = after.trim_ascii_start();
            let after = after.strip_prefix(b"=").ok_or_else(|| bad("no `=` after the name"))?;
            let after = after.trim_ascii_start();
            let quote = match after.first() {
                Some(&q @ (b'"' | b'\'')) => q,
                _ => return Err(bad("value not quoted")),
            };
            let len = memchr::memchr(quote, &after[1..]).ok_or_else(|| bad("unclosed value"))?;
            let value = &after[1..=len];
            let value_at = offset(after) + 1;
            rest = &after[len + 2..];
            if rest.first().is_some_and(|b| !b.is_ascii_whitespace()) {
                return Err(bad("no space after a value"));
            }
            rest = rest.trim_ascii_start();
            if key.is_empty() {
                return Err(bad("empty name"));
            }
            let spans = match copied {
                Some(base) => (
                    Span {
                        start: base + key_at,
                        end: base + key_at + key.len(),
                    },
                    Span {
                        start: base + value_at,
                        end: base + value_at + value.len(),
                    },
                ),
                None => {
                    let key = std::str::from_utf8(key).map_err(|err| bad(&format!("name: {err}")))?;
                    (self.doc.push_str(key), self.push_attribute_value(value))
                }
            };
            self.doc.attrs.push(spans);
        }
        let name = self.doc.push_str(name);
        let Document { text, attrs, .. } = &mut self.doc;
        if let Some(list) = attrs.get_mut(from..) {
            let key = |span: Span| text.get(span.start..span.end);
            if list.len() > 1 {
                list.sort_by(|a, b| key(a.0).cmp(&key(b.0)));
                if list.windows(2).any(|w| key(w[0].0) == key(w[1].0)) {
                    return Err(format!(
                        "duplicate attribute in <{name}>",
                        name = key(name).unwrap_or("")
                    ));
                }
            }
        }
        let to = self.doc.attrs.len();
        self.doc.tokens.push(Token::Open {
            name,
            attrs: (from, to),
        });
        Ok(())
    }

    /// Appends a value with references resolved, or raw (lossy UTF-8) when
    /// it holds an unknown entity or a broken reference.
    fn push_attribute_value(&mut self, raw: &[u8]) -> Span {
        let start = self.doc.text.len();
        if unescape::attribute_value(raw, &mut self.doc.text).is_err() {
            self.doc.text.truncate(start);
            self.doc.text.push_str(&String::from_utf8_lossy(raw));
        }
        Span {
            start,
            end: self.doc.text.len(),
        }
    }
}
