//! Text between tags: references resolved (or the document marked
//! malformed), indentation skipped, the value cut at [`MAX_VALUE_LEN`]
//! bytes, and the pieces handed to the sink until the next tag ends the
//! text.

use super::State;
use crate::parse::{Sink, MAX_VALUE_LEN};
use crate::unescape::{self, Unescape};

impl State {
    /// Text with references (`plain`: known to have none); once the value
    /// is cut at [`MAX_VALUE_LEN`] the rest of it is not even decoded.
    #[inline]
    pub(super) fn push_raw_text<S: Sink>(&mut self, sink: &mut S, raw: &[u8], plain: bool, end: u64) {
        if !self.in_doc() || self.truncated {
            return;
        }
        if self.text_len == 0 && raw.iter().all(u8::is_ascii_whitespace) {
            // Indentation between tags: trimmed anyway.
            self.skipped_space += raw.len();
            return;
        }
        let result = if plain || memchr::memchr(b'&', raw).is_none() {
            match std::str::from_utf8(raw) {
                Ok(s) => {
                    self.push_text(sink, s);
                    Ok(())
                }
                Err(_) => Err(Unescape::Utf8),
            }
        } else {
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            let result = unescape::text(raw, &mut scratch);
            if result.is_ok() {
                self.push_text(sink, &scratch);
            }
            self.scratch = scratch;
            result
        };
        match result {
            Ok(()) => {}
            Err(Unescape::Utf8) => self.mark_bad("text: invalid UTF-8".into(), end),
            Err(_) => self.mark_bad("text: `&` without a closing `;`".into(), end),
        }
    }

    #[inline]
    pub(super) fn push_text<S: Sink>(&mut self, sink: &mut S, s: &str) {
        if !self.in_doc() || self.truncated {
            return;
        }
        let room = MAX_VALUE_LEN.saturating_sub(self.skipped_space + self.text_len);
        let mut cut = s.len().min(room);
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        self.truncated = cut < s.len();
        let piece = s.get(..cut).unwrap_or_default();
        if !piece.is_empty() {
            sink.text(piece);
            self.text_len += piece.len();
        }
    }

    #[inline]
    pub(super) fn flush_text<S: Sink>(&mut self, sink: &mut S) {
        if self.text_len > 0 {
            sink.end_text(self.truncated);
        }
        self.text_len = 0;
        self.skipped_space = 0;
        self.truncated = false;
    }
}
