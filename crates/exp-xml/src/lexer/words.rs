//! Word-at-a-time byte search for the short scans of the lexer: a few 8-byte
//! words are checked with bit tricks before handing over to `memchr`.

use memchr::memchr;

/// How far the word-at-a-time loops look before handing over to
/// `memchr`: most names, values and indentation are short, and a `memchr`
/// call costs more than scanning a few words.
const SHORT: usize = 32;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `word` equal to `byte`; exact for the
/// lowest such byte, which is all the callers use.
pub(super) fn matches(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Index of the first byte in `hay` for which `mask` (see [`matches`]) of
/// its 8-byte word is set, looking at most [`SHORT`] bytes a word at a
/// time; then `tail` takes over from the offset it is given.
pub(super) fn scan(hay: &[u8], mask: impl Fn(u64) -> u64, tail: impl Fn(&[u8]) -> Option<usize>) -> Option<usize> {
    let mut i = 0;
    while i < SHORT {
        let Some(Ok(word)) = hay.get(i..i + 8).map(<[u8; 8]>::try_from) else {
            break;
        };
        let m = mask(u64::from_le_bytes(word));
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    tail(hay.get(i..)?).map(|j| i + j)
}

/// Index of the first `byte` in `hay`.
pub(super) fn find_short(byte: u8, hay: &[u8]) -> Option<usize> {
    scan(hay, |w| matches(w, byte), |rest| memchr(byte, rest))
}
