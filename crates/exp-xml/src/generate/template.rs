//! Compiling a skeleton into a template: the skeleton's bytes with a slot
//! where each leaf's text goes (between its opening and closing tag) and
//! where each attribute written by name only gets its value (`b` becomes
//! `b="…"`). Filling is then a loop of literal copies and slot writes.
//!
//! Skeleton syntax (see `skeleton.rs`): opening tags `<name a="v" b>` with
//! values escaped (no raw `"` inside quotes), closing tags `</name>`,
//! nothing between tags. A path is the concatenation of the opening tags
//! from the root to the element, exactly as written; an attribute's pseudo
//! path is its element's path followed by `@name`.

use super::cursor::{self, Cursor};
use super::values::Context;
use crate::XmlError;

/// A compiled skeleton.
#[derive(Debug, Clone, Default)]
pub(super) struct Template {
    /// The literal bytes, then [`cursor::PAD`] bytes of padding.
    literal: Vec<u8>,
    literal_len: usize,
    /// (end of the literal run before the slot, value source index).
    slots: Vec<(usize, usize)>,
}

impl Template {
    /// Literal bytes, for size estimates.
    pub fn literal_len(&self) -> usize {
        self.literal_len
    }

    pub fn sources(&self) -> impl Iterator<Item = usize> + '_ {
        self.slots.iter().map(|&(_, s)| s)
    }

    /// Appends the document: literal runs with `fill(source, out)` between.
    #[inline]
    pub fn fill(&self, out: &mut Cursor, mut fill: impl FnMut(usize, &mut Cursor)) {
        let mut at = 0;
        for &(end, source) in &self.slots {
            out.padded(&self.literal, at, end - at);
            fill(source, out);
            at = end;
        }
        out.padded(&self.literal, at, self.literal_len - at);
    }
}

/// Compiles `skeleton`; `resolve(path text, context)` gives the source index
/// of a slot. A malformed skeleton is an [`XmlError::Config`].
pub(super) fn compile(
    skeleton: &str,
    resolve: impl FnMut(&str, Context) -> Result<usize, XmlError>,
) -> Result<Template, XmlError> {
    let mut t = literal_and_slots(skeleton, resolve)?;
    t.literal_len = t.literal.len();
    t.literal = cursor::pad(std::mem::take(&mut t.literal));
    Ok(t)
}

/// The template of `skeleton` before its literal is padded.
fn literal_and_slots(
    skeleton: &str,
    mut resolve: impl FnMut(&str, Context) -> Result<usize, XmlError>,
) -> Result<Template, XmlError> {
    let bad = |what: String| XmlError::Config(format!("malformed skeleton: {what}"));
    let b = skeleton.as_bytes();
    let mut t = Template::default();
    let mut path = String::new();
    // Per open element: (path length before it, element name).
    let mut open: Vec<(usize, &str)> = Vec::new();
    let mut leaf_candidate = false;
    let mut i = 0;
    let mut pending_attrs: Vec<(usize, &str)> = Vec::new();
    while i < b.len() {
        if b.get(i) != Some(&b'<') {
            return Err(bad(format!("text outside tags at byte {i}")));
        }
        let Some(end) = find(b, i, b'>') else {
            return Err(bad(format!("unterminated tag at byte {i}")));
        };
        if b.get(i + 1) == Some(&b'/') {
            let name = skeleton.get(i + 2..end).unwrap_or_default();
            let Some((mark, expected)) = open.pop() else {
                return Err(bad(format!("unmatched `</{name}>`")));
            };
            if name != expected {
                return Err(bad(format!("`</{name}>` closes `<{expected}>`")));
            }
            if leaf_candidate {
                let source = resolve(&path, Context::Text)?;
                t.slots.push((t.literal.len(), source));
            }
            t.literal.extend_from_slice(b.get(i..=end).unwrap_or_default());
            path.truncate(mark);
            leaf_candidate = false;
            i = end + 1;
            continue;
        }
        // Opening tag: `<name` then ` key="value"` or ` key`, then `>`.
        let mut j = i + 1;
        while !matches!(b.get(j), Some(b' ' | b'>') | None) {
            j += 1;
        }
        let name = skeleton.get(i + 1..j).unwrap_or_default();
        if name.is_empty() || name.contains('/') {
            return Err(bad(format!("bad element name at byte {i}")));
        }
        t.literal.extend_from_slice(b.get(i..j).unwrap_or_default());
        pending_attrs.clear();
        let mut tag_end = j;
        while b.get(j) == Some(&b' ') {
            let key_start = j + 1;
            let mut k = key_start;
            while !matches!(b.get(k), Some(b'=' | b' ' | b'>') | None) {
                k += 1;
            }
            let key = skeleton.get(key_start..k).unwrap_or_default();
            if key.is_empty() {
                return Err(bad(format!("empty attribute name at byte {j}")));
            }
            if b.get(k) == Some(&b'=') {
                // Kept value: copied as is (already escaped).
                if b.get(k + 1) != Some(&b'"') {
                    return Err(bad(format!("unquoted attribute value at byte {k}")));
                }
                let Some(close) = find(b, k + 2, b'"') else {
                    return Err(bad(format!("unterminated attribute value at byte {k}")));
                };
                t.literal.extend_from_slice(b.get(j..=close).unwrap_or_default());
                j = close + 1;
            } else {
                t.literal.push(b' ');
                t.literal.extend_from_slice(key.as_bytes());
                t.literal.extend_from_slice(b"=\"");
                // The pseudo path needs the whole tag: resolve below.
                pending_attrs.push((t.slots.len(), key));
                t.slots.push((t.literal.len(), usize::MAX));
                t.literal.push(b'"');
                j = k;
            }
            tag_end = j;
        }
        if b.get(tag_end) != Some(&b'>') {
            return Err(bad(format!("malformed tag at byte {i}")));
        }
        t.literal.push(b'>');
        open.push((path.len(), name));
        path.push_str(skeleton.get(i..=tag_end).unwrap_or_default());
        for &(slot, key) in &pending_attrs {
            let mark = path.len();
            path.push('@');
            path.push_str(key);
            let source = resolve(&path, Context::Attribute)?;
            path.truncate(mark);
            if let Some(s) = t.slots.get_mut(slot) {
                s.1 = source;
            }
        }
        leaf_candidate = true;
        i = tag_end + 1;
    }
    if let Some((_, name)) = open.last() {
        return Err(bad(format!("`<{name}>` is never closed")));
    }
    if t.literal.is_empty() {
        return Err(bad("empty skeleton".to_owned()));
    }
    Ok(t)
}

fn find(b: &[u8], from: usize, needle: u8) -> Option<usize> {
    b.get(from..)?.iter().position(|&c| c == needle).map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(skeleton: &str) -> (Vec<(String, Context)>, Template) {
        let mut seen = Vec::new();
        let t = compile(skeleton, |p, c| {
            seen.push((p.to_owned(), c));
            Ok(seen.len() - 1)
        })
        .expect("valid skeleton");
        (seen, t)
    }

    #[test]
    fn slots_for_leaves_and_unvalued_attributes() {
        let (seen, t) = paths("<e id=\"a>b\" ts><x></x><y k><z></z></y></e>");
        let expected = [
            ("<e id=\"a>b\" ts>@ts", Context::Attribute),
            ("<e id=\"a>b\" ts><x>", Context::Text),
            ("<e id=\"a>b\" ts><y k>@k", Context::Attribute),
            ("<e id=\"a>b\" ts><y k><z>", Context::Text),
        ];
        assert_eq!(seen.len(), expected.len());
        for ((p, c), (ep, ec)) in seen.iter().zip(expected) {
            assert_eq!((p.as_str(), *c), (ep, ec));
        }
        let mut out = Vec::new();
        let mut cursor = Cursor::append(&mut out);
        t.fill(&mut cursor, |s, o| o.bytes(format!("V{s}").as_bytes()));
        cursor.finish();
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "<e id=\"a>b\" ts=\"V0\"><x>V1</x><y k=\"V2\"><z>V3</z></y></e>"
        );
    }

    #[test]
    fn malformed_skeletons_are_rejected() {
        for bad in [
            "",
            "text",
            "<a>",
            "<a></b>",
            "</a>",
            "<a x=y></a>",
            "<a x=\"y></a>",
            "<a><b></a>",
        ] {
            let r = compile(bad, |_, _| Ok(0));
            assert!(matches!(r, Err(XmlError::Config(_))), "{bad:?} accepted");
        }
    }
}
