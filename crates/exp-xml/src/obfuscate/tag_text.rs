//! Parsing and rewriting the canonical tag text of skeletons and paths
//! (`<name a="v" b>…</name>`, paths optionally ending in `@attr`).
//!
//! Values are escaped with `&amp;`, `&lt;`, `&quot;` (see `skeleton.rs`), so
//! a value always ends at the next `"`; names never contain ` `, `=`, `>`,
//! `"` or `@`. The callback sees names and *unescaped* values and returns
//! their replacement, which is escaped again.

use crate::XmlError;

/// What a string is in a tag text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Element name (opening or closing tag).
    Tag,
    /// Attribute name, also the `@attr` of an attribute pseudo path.
    Attribute,
    AttributeValue,
}

/// Rewrites `text`, replacing each name and value by `f(role, original)`.
pub(crate) fn rewrite(text: &str, f: &mut dyn FnMut(Role, &str) -> String) -> Result<String, XmlError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let bad = |what: &str| XmlError::Obfuscation(format!("malformed skeleton or path text ({what})"));
    while let Some(c) = rest.chars().next() {
        match c {
            '<' if rest.starts_with("</") => {
                let end = rest.find('>').ok_or_else(|| bad("unclosed end tag"))?;
                out.push_str("</");
                out.push_str(&f(Role::Tag, rest.get(2..end).unwrap_or_default()));
                out.push('>');
                rest = rest.get(end + 1..).unwrap_or_default();
            }
            '<' => {
                rest = rest.get(1..).unwrap_or_default();
                let end = rest.find([' ', '>']).ok_or_else(|| bad("unclosed tag"))?;
                out.push('<');
                out.push_str(&f(Role::Tag, rest.get(..end).unwrap_or_default()));
                rest = rest.get(end..).unwrap_or_default();
                while let Some(after) = rest.strip_prefix(' ') {
                    let end = after.find(['=', ' ', '>']).ok_or_else(|| bad("unclosed tag"))?;
                    out.push(' ');
                    out.push_str(&f(Role::Attribute, after.get(..end).unwrap_or_default()));
                    rest = after.get(end..).unwrap_or_default();
                    if let Some(quoted) = rest.strip_prefix("=\"") {
                        let end = quoted.find('"').ok_or_else(|| bad("unclosed attribute value"))?;
                        let value = unescape(quoted.get(..end).unwrap_or_default());
                        out.push_str("=\"");
                        push_escaped(&mut out, &f(Role::AttributeValue, &value));
                        out.push('"');
                        rest = quoted.get(end + 1..).unwrap_or_default();
                    }
                }
                rest = rest.strip_prefix('>').ok_or_else(|| bad("expected `>`"))?;
                out.push('>');
            }
            '@' => {
                out.push('@');
                out.push_str(&f(Role::Attribute, rest.get(1..).unwrap_or_default()));
                rest = "";
            }
            _ => return Err(bad("text outside a tag")),
        }
    }
    Ok(out)
}

/// Calls `f` on every name and (unescaped) value of `text`.
pub(crate) fn visit(text: &str, f: &mut dyn FnMut(Role, &str)) -> Result<(), XmlError> {
    rewrite(text, &mut |role, s| {
        f(role, s);
        String::new()
    })
    .map(drop)
}

fn unescape(value: &str) -> String {
    value.replace("&quot;", "\"").replace("&lt;", "<").replace("&amp;", "&")
}

fn push_escaped(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_names_and_unescaped_values() {
        let text = "<d><s id=\"a&quot;&amp;&lt;b\" ts></s></d>";
        let mut seen = Vec::new();
        visit(text, &mut |role, s| seen.push((role, s.to_owned()))).expect("parse");
        assert_eq!(
            seen,
            [
                (Role::Tag, "d".to_owned()),
                (Role::Tag, "s".to_owned()),
                (Role::Attribute, "id".to_owned()),
                (Role::AttributeValue, "a\"&<b".to_owned()),
                (Role::Attribute, "ts".to_owned()),
                (Role::Tag, "s".to_owned()),
                (Role::Tag, "d".to_owned()),
            ]
        );
        let upper = rewrite(text, &mut |_, s| s.to_uppercase()).expect("rewrite");
        assert_eq!(upper, "<D><S ID=\"A&quot;&amp;&lt;B\" TS></S></D>");
        let path = rewrite("<e><x k=\"v>w\">@ts", &mut |_, s| format!("{s}1")).expect("path");
        assert_eq!(path, "<e1><x1 k1=\"v>w1\">@ts1");
        assert!(rewrite("<a", &mut |_, s| s.to_owned()).is_err());
        assert!(rewrite("a>", &mut |_, s| s.to_owned()).is_err());
    }
}
