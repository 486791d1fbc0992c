//! Canonical tag text and document skeletons.
//!
//! A skeleton is the document with every text value removed: opening tags
//! (attributes sorted by name, values kept or not per the attribute policy)
//! and closing tags, children in document order. It is built by appending
//! while walking the token list — no recursion, so depth is bounded by heap.

/// Appends the canonical opening tag `<name a="v" b>`: attribute `a` keeps
/// its value, `b` (value not part of the structure) is written by name only.
/// Values are re-escaped (`&`, `<`, `"`) so the text is unambiguous.
pub(crate) fn push_tag<'a>(out: &mut String, name: &str, attrs: impl Iterator<Item = (&'a str, Option<&'a str>)>) {
    out.push('<');
    out.push_str(name);
    for (key, value) in attrs {
        out.push(' ');
        out.push_str(key);
        if let Some(value) = value {
            out.push_str("=\"");
            push_escaped(out, value);
            out.push('"');
        }
    }
    out.push('>');
}

/// Splits a canonical tag written by [`push_tag`] into its name and its
/// attributes (name, value if kept — still escaped, see [`unescaped`]).
pub(crate) fn tag_parts(tag: &str) -> (&str, Vec<(&str, Option<&str>)>) {
    let inner = tag.strip_prefix('<').unwrap_or(tag);
    let inner = inner.strip_suffix('>').unwrap_or(inner);
    let (name, mut rest) = inner.split_once(' ').unwrap_or((inner, ""));
    let mut attrs = Vec::new();
    while !rest.is_empty() {
        let end = rest.find([' ', '=']).unwrap_or(rest.len());
        let (key, after) = rest.split_at(end);
        match after.strip_prefix("=\"") {
            // Escaped values hold no `"`.
            Some(value) => {
                let (value, after) = value.split_once('"').unwrap_or((value, ""));
                attrs.push((key, Some(value)));
                rest = after.strip_prefix(' ').unwrap_or(after);
            }
            None => {
                attrs.push((key, None));
                rest = after.strip_prefix(' ').unwrap_or(after);
            }
        }
    }
    (name, attrs)
}

/// Reverses the escaping of [`push_tag`].
pub(crate) fn unescaped(value: &str) -> std::borrow::Cow<'_, str> {
    if !value.contains('&') {
        return value.into();
    }
    value
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&amp;", "&")
        .into()
}

fn push_escaped(out: &mut String, value: &str) {
    if !value.bytes().any(|b| matches!(b, b'&' | b'<' | b'"')) {
        out.push_str(value);
        return;
    }
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

/// Skeleton of one document, built incrementally.
#[derive(Debug, Default)]
pub(crate) struct Skeleton {
    text: String,
    /// Names of the open elements, concatenated (a stack), for the closing
    /// tags; `marks` holds where each starts.
    names: String,
    marks: Vec<usize>,
}

impl Skeleton {
    /// Appends an opening tag already formatted by [`push_tag`]; `name` is
    /// its element name, for the closing tag.
    pub fn open(&mut self, tag: &str, name: &str) {
        self.text.push_str(tag);
        self.marks.push(self.names.len());
        self.names.push_str(name);
    }

    pub fn close(&mut self) {
        if let Some(mark) = self.marks.pop() {
            self.text.push_str("</");
            self.text.push_str(self.names.get(mark..).unwrap_or_default());
            self.text.push('>');
            self.names.truncate(mark);
        }
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.names.clear();
        self.marks.clear();
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_skeleton() {
        let mut tag = String::new();
        push_tag(&mut tag, "s", [("id", Some("a\"&<")), ("ts", None)].into_iter());
        assert_eq!(tag, "<s id=\"a&quot;&amp;&lt;\" ts>");
        let mut sk = Skeleton::default();
        sk.open("<d>", "d");
        sk.open(&tag, "s");
        sk.close();
        sk.close();
        assert_eq!(sk.as_str(), "<d><s id=\"a&quot;&amp;&lt;\" ts></s></d>");
        let (name, attrs) = tag_parts(&tag);
        assert_eq!((name, attrs.len()), ("s", 2));
        assert_eq!(attrs[0].0, "id");
        assert_eq!(attrs[0].1.map(unescaped).as_deref(), Some("a\"&<"));
        assert_eq!(attrs[1], ("ts", None));
        assert_eq!(tag_parts("<x>"), ("x", vec![]));
        let (_, spaced) = tag_parts("<x a=\"p q\" b c=\"\">");
        assert_eq!(spaced, [("a", Some("p q")), ("b", None), ("c", Some(""))]);
    }
}
