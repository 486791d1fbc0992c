//! A write cursor for the generation hot loop.
//!
//! A document is mostly short pieces: literal runs of a template and
//! values of a few to a few dozen bytes. `Vec::extend_from_slice` turns
//! each into a `memcpy` call of unknown length, which cost more than
//! the bytes moved (15 % of a profile on small event documents). The
//! cursor instead writes into a buffer kept [`PAD`] bytes longer than
//! what it has written, and copies pieces of up to `PAD` bytes as one
//! fixed-size copy from a source that is itself padded: the bytes past
//! the piece land beyond the cursor and are overwritten by the next piece
//! or cut off by [`Cursor::finish`]. No `unsafe`: the buffer is
//! zero-initialised when it grows.

/// Fixed copy size, and the slack kept after the cursor and after every
/// padded source.
pub(super) const PAD: usize = 32;

/// Bytes zero-filled beyond the need when the buffer grows, so growth
/// (one `resize`) happens about once per KiB written.
const GROW: usize = 1024;

pub(super) struct Cursor<'a> {
    buf: &'a mut Vec<u8>,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor appending to `buf` (after its current contents).
    pub fn append(buf: &'a mut Vec<u8>) -> Self {
        let pos = buf.len();
        Cursor { buf, pos }
    }

    /// Makes sure `n` bytes plus the slack fit after the cursor.
    #[inline]
    fn room(&mut self, n: usize) {
        if self.pos + n + PAD > self.buf.len() {
            self.grow(n);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        let want = self.pos + n + PAD + GROW;
        self.buf.resize(want.max(self.buf.len()), 0);
    }

    /// Appends `src[start..start + len]`; `src` must hold [`PAD`] bytes
    /// from `start` on (its padding), whatever `len`.
    #[inline]
    pub fn padded(&mut self, src: &[u8], start: usize, len: usize) {
        self.room(len);
        let pos = self.pos;
        if len <= PAD {
            // Array references: a copy of a constant size the compiler
            // inlines (slices of length PAD still became `memcpy` calls).
            if let (Some(d), Some(s)) = (
                self.buf
                    .get_mut(pos..pos + PAD)
                    .and_then(|d| <&mut [u8; PAD]>::try_from(d).ok()),
                src.get(start..start + PAD).and_then(|s| <&[u8; PAD]>::try_from(s).ok()),
            ) {
                *d = *s;
            }
        } else if let (Some(d), Some(s)) = (self.buf.get_mut(pos..pos + len), src.get(start..start + len)) {
            d.copy_from_slice(s);
        }
        self.pos += len;
    }

    /// Appends a piece of at most [`PAD`] bytes that `write` builds in
    /// place, in the slack after the cursor, returning its length. In
    /// place, not in a stack buffer copied after: a 16-byte load of bytes
    /// just stored one or two at a time cannot be forwarded from the
    /// store buffer and stalled every number (10 % of `Generator::write`).
    #[inline]
    pub fn in_place(&mut self, write: impl FnOnce(&mut [u8; PAD]) -> usize) {
        self.room(PAD);
        if let Some(d) = self
            .buf
            .get_mut(self.pos..self.pos + PAD)
            .and_then(|d| <&mut [u8; PAD]>::try_from(d).ok())
        {
            self.pos += write(d).min(PAD);
        }
    }

    /// Appends any bytes (the slow path: an exact-length copy).
    pub fn bytes(&mut self, src: &[u8]) {
        self.room(src.len());
        if let Some(d) = self.buf.get_mut(self.pos..self.pos + src.len()) {
            d.copy_from_slice(src);
        }
        self.pos += src.len();
    }

    #[inline]
    pub fn push(&mut self, b: u8) {
        self.room(1);
        if let Some(d) = self.buf.get_mut(self.pos) {
            *d = b;
        }
        self.pos += 1;
    }

    /// Cuts the buffer at the cursor: it then holds exactly what was written.
    pub fn finish(self) {
        self.buf.truncate(self.pos);
    }
}

/// `bytes` followed by [`PAD`] zero bytes, for [`Cursor::padded`].
pub(super) fn pad(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.resize(bytes.len() + PAD, 0);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_of_every_size_append_exactly() {
        let source: Vec<u8> = (0..200u8).collect();
        let padded = pad(source.clone());
        let mut out = b"head".to_vec();
        let mut expected = out.clone();
        let mut cursor = Cursor::append(&mut out);
        let mut at = 0;
        for len in [0, 1, 5, PAD - 1, PAD, PAD + 1, 70, 3] {
            cursor.padded(&padded, at, len);
            expected.extend_from_slice(&source[at..at + len]);
            at += len;
        }
        cursor.push(b'!');
        cursor.bytes(b"tail");
        cursor.in_place(|slot| {
            slot[..5].copy_from_slice(b"12345");
            3
        });
        cursor.finish();
        expected.extend_from_slice(b"!tail123");
        assert_eq!(out, expected);
    }
}
