//! Where markup ends: end tags, start tags (skipping `>` inside quoted
//! attribute values), processing instructions, comments, CDATA sections
//! and DOCTYPE declarations (skipping their internal subset unread).

use std::io::BufRead;

use memchr::{memchr3, memmem};

use super::words::{find_short, matches, scan};
use super::{Kind, LexError, Lexer};

impl<R: BufRead> Lexer<R> {
    /// Kind and end (exclusive) of the markup at `pos`; `None` after a
    /// refill (call again).
    pub(super) fn markup(&mut self) -> Result<Option<(Kind, usize)>, LexError> {
        let p = self.pos;
        let found = {
            let rest = &self.buf[p..];
            match rest.get(1) {
                None => None,
                Some(b'/') => find_short(b'>', rest).map(|i| (Kind::End, p + i + 1)),
                Some(b'?') => memmem::find(&rest[2..], b"?>").map(|i| (Kind::Other, p + 2 + i + 2)),
                Some(b'!') => match bang(rest) {
                    Bang::Comment => memmem::find(&rest[4..], b"-->").map(|i| (Kind::Other, p + 4 + i + 3)),
                    Bang::CData => memmem::find(&rest[9..], b"]]>").map(|i| (Kind::CData, p + 9 + i + 3)),
                    Bang::Doctype => doctype_end(rest).map(|i| (Kind::Other, p + i + 1)),
                    Bang::Unknown if self.eof || rest.len() >= 9 => {
                        return Err(LexError::Syntax("unknown `<!` markup".into()));
                    }
                    Bang::Unknown => None,
                },
                Some(_) => tag_end(rest).map(|i| (Kind::Start, p + i + 1)),
            }
        };
        if found.is_some() {
            return Ok(found);
        }
        if self.fill()? {
            return Ok(None);
        }
        let what = match self.buf.get(p + 1) {
            Some(b'!') => "comment, CDATA or DOCTYPE",
            Some(b'?') => "processing instruction",
            _ => "tag",
        };
        Err(LexError::Syntax(format!("unclosed {what} at the end of the input")))
    }
}

enum Bang {
    Comment,
    CData,
    Doctype,
    Unknown,
}

fn bang(rest: &[u8]) -> Bang {
    if rest.starts_with(b"<!--") {
        Bang::Comment
    } else if rest.starts_with(b"<![CDATA[") {
        Bang::CData
    } else if rest.len() >= 9 && rest[2..9].eq_ignore_ascii_case(b"DOCTYPE") {
        Bang::Doctype
    } else {
        Bang::Unknown
    }
}
/// Index of the `>` closing a start tag, skipping quoted attribute values.
fn tag_end(rest: &[u8]) -> Option<usize> {
    let mut i = 1;
    loop {
        let j = i + scan(
            rest.get(i..)?,
            |w| matches(w, b'>') | matches(w, b'"') | matches(w, b'\''),
            |tail| memchr3(b'>', b'"', b'\'', tail),
        )?;
        let quote = rest[j];
        if quote == b'>' {
            return Some(j);
        }
        i = j + 1 + find_short(quote, &rest[j + 1..])? + 1;
    }
}

/// Index of the `>` closing a DOCTYPE, skipping its internal subset
/// (`[...]`) and quoted literals; nothing in it is interpreted.
fn doctype_end(rest: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    for (i, &b) in rest.iter().enumerate().skip(9) {
        match (quote, b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'[') => depth += 1,
            (None, b']') => depth = depth.saturating_sub(1),
            (None, b'>') if depth == 0 => return Some(i),
            (None, _) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_scans_agree_with_byte_loops() {
        let alphabet = b"ab <>\"'\xC3\xA9=";
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for len in 0..120 {
            for _ in 0..200 {
                let hay: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        alphabet[(x % alphabet.len() as u64) as usize]
                    })
                    .collect();
                for byte in [b'<', b'>', b'"'] {
                    assert_eq!(find_short(byte, &hay), hay.iter().position(|&b| b == byte));
                }
                let naive = || {
                    let mut quote = None;
                    for (i, &b) in hay.iter().enumerate().skip(1) {
                        match (quote, b) {
                            (Some(q), b) if b == q => quote = None,
                            (Some(_), _) => {}
                            (None, b'"' | b'\'') => quote = Some(b),
                            (None, b'>') => return Some(i),
                            (None, _) => {}
                        }
                    }
                    None
                };
                assert_eq!(tag_end(&hay), naive(), "{:?}", String::from_utf8_lossy(&hay));
            }
        }
    }
}
