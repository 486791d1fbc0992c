//! Where a run of text ends: at the next `<`, found with one scan that also
//! tells whether a reference (`&`) comes first. Text longer than
//! [`TEXT_PIECE`] without a `<` is handed out in pieces, each cut before a
//! reference that may continue in the next piece and at a UTF-8 character
//! boundary.

use std::io::BufRead;

use memchr::{memchr, memchr2};

use super::words::{find_short, matches, scan};
use super::{LexError, Lexer};

/// Text longer than this without a `<` is handed out in pieces.
const TEXT_PIECE: usize = 64 * 1024;

impl<R: BufRead> Lexer<R> {
    /// End of the text starting at `pos`, or `None` after a refill (call
    /// again).
    pub(super) fn text_end(&mut self) -> Result<Option<usize>, LexError> {
        let rest = &self.buf[self.pos..];
        // One scan finds the end and whether a reference comes before it.
        let first = scan(
            rest,
            |w| matches(w, b'<') | matches(w, b'&'),
            |t| memchr2(b'<', b'&', t),
        );
        self.text_plain = first.is_none_or(|i| rest[i] == b'<');
        let end = match first {
            Some(i) if rest[i] == b'&' => find_short(b'<', &rest[i..]).map(|j| i + j),
            found => found,
        };
        if let Some(i) = end {
            return Ok(Some(self.pos + i));
        }
        if self.buf.len() - self.pos <= TEXT_PIECE {
            if self.fill()? {
                return Ok(None);
            }
            return Ok(Some(self.buf.len()));
        }
        let rest = &self.buf[self.pos..];
        // A long piece: cut before a reference that may continue in the
        // next piece, and at a character boundary.
        let mut cut = rest.len();
        if let Some(amp) = memchr::memrchr(b'&', rest) {
            if memchr(b';', &rest[amp..]).is_none() && amp > 0 {
                cut = amp;
            }
        }
        // Step back over a character whose bytes may continue in the next
        // piece.
        let mut lead = cut.saturating_sub(1);
        while lead > 0 && rest[lead] & 0xC0 == 0x80 {
            lead -= 1;
        }
        let width = match rest[lead] {
            b if b >= 0xF0 => 4,
            b if b >= 0xE0 => 3,
            b if b >= 0xC0 => 2,
            _ => 1,
        };
        if lead > 0 && lead + width > cut {
            cut = lead;
        }
        Ok(Some(self.pos + cut.max(1)))
    }
}
