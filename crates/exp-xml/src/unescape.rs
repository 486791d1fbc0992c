//! Entity and character references. Only the five predefined entities and
//! character references are resolved; any other `&name;` is never expanded
//! (billion-laughs and external-entity inputs stay inert).

/// A predefined entity or a character reference (`#65`, `#x41`); `None`
/// for anything else, including invalid code points and `&#0;`.
pub(crate) fn resolve(name: &[u8]) -> Option<char> {
    match name {
        b"amp" => Some('&'),
        b"lt" => Some('<'),
        b"gt" => Some('>'),
        b"apos" => Some('\''),
        b"quot" => Some('"'),
        [b'#', b'x', hex @ ..] => code_point(hex, 16),
        [b'#', dec @ ..] => code_point(dec, 10),
        _ => None,
    }
}

fn code_point(digits: &[u8], radix: u32) -> Option<char> {
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let text = std::str::from_utf8(digits).ok()?;
    let code = u32::from_str_radix(text, radix).ok()?;
    if code == 0 {
        return None;
    }
    char::from_u32(code)
}

/// Why raw text could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unescape {
    /// Not UTF-8.
    Utf8,
    /// `&` without a closing `;`.
    Unclosed,
    /// A well-formed reference that is not predefined nor a character
    /// reference (only reported by [`attribute_value`]).
    Unknown,
}

/// Appends text with references resolved; unknown references are kept
/// literally as `&name;`.
pub(crate) fn text(raw: &[u8], out: &mut String) -> Result<(), Unescape> {
    decode(raw, out, true)
}

/// Appends an attribute value with references resolved; fails on any
/// reference it cannot resolve (the caller then keeps the raw value).
pub(crate) fn attribute_value(raw: &[u8], out: &mut String) -> Result<(), Unescape> {
    decode(raw, out, false)
}

fn decode(raw: &[u8], out: &mut String, keep_unknown: bool) -> Result<(), Unescape> {
    let mut rest = raw;
    while let Some(amp) = memchr::memchr(b'&', rest) {
        out.push_str(std::str::from_utf8(&rest[..amp]).map_err(|_| Unescape::Utf8)?);
        let after = &rest[amp + 1..];
        let semi = memchr::memchr(b';', after).ok_or(Unescape::Unclosed)?;
        let name = &after[..semi];
        match resolve(name) {
            Some(c) => out.push(c),
            None if keep_unknown => {
                out.push('&');
                out.push_str(std::str::from_utf8(name).map_err(|_| Unescape::Utf8)?);
                out.push(';');
            }
            None => return Err(Unescape::Unknown),
        }
        rest = &after[semi + 1..];
    }
    out.push_str(std::str::from_utf8(rest).map_err(|_| Unescape::Utf8)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references() {
        let mut s = String::new();
        text(b"&lt;&#65;&#x42;&amp;&xxe;&#0;", &mut s).expect("decode");
        assert_eq!(s, "<AB&&xxe;&#0;");
        s.clear();
        assert_eq!(attribute_value(b"a&xxe;", &mut s), Err(Unescape::Unknown));
        assert_eq!(text(b"a & b", &mut s), Err(Unescape::Unclosed));
        assert_eq!(text(b"\xff", &mut s), Err(Unescape::Utf8));
    }
}
