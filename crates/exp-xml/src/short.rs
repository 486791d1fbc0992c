//! Short byte strings compared and remembered without `memcmp`/`memcpy`
//! calls. Tag names and tags are mostly a few to a few dozen bytes, and a
//! library call per element cost more than the work itself (a sixth of the
//! extraction's time in a profile). Two overlapping fixed-size loads cover
//! every length from 4 to 8 (or 8 to 16) bytes exactly.

fn load4(s: &[u8], at: usize) -> u64 {
    s.get(at..at + 4)
        .and_then(|w| <[u8; 4]>::try_from(w).ok())
        .map_or(0, |w| u64::from(u32::from_le_bytes(w)))
}

fn load8(s: &[u8], at: usize) -> u64 {
    s.get(at..at + 8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
        .map_or(0, u64::from_le_bytes)
}

/// The whole content of a string of at most 16 bytes as two words (with
/// its length, exactly one string has a given key); `None` when longer.
#[inline]
pub(crate) fn key16(s: &[u8]) -> Option<(u64, u64)> {
    let n = s.len();
    Some(match n {
        0..=3 => (s.iter().fold(0, |k, &b| k << 8 | u64::from(b)), 0),
        4..=8 => (load4(s, 0), load4(s, n - 4)),
        9..=16 => (load8(s, 0), load8(s, n - 8)),
        _ => return None,
    })
}

/// The string of `len` bytes whose [`key16`] is `key`.
pub(crate) fn unkey16(len: usize, (a, b): (u64, u64)) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let word = match len {
        0..=3 => {
            for (i, byte) in out.iter_mut().enumerate() {
                *byte = (a >> (8 * (len - 1 - i))) as u8;
            }
            return out;
        }
        4..=8 => 4,
        _ => 8,
    };
    let (a, b) = (a.to_le_bytes(), b.to_le_bytes());
    for i in 0..word.min(len) {
        if let Some(x) = out.get_mut(i) {
            *x = a[i];
        }
        if let Some(x) = out.get_mut(len - word + i) {
            *x = b[i];
        }
    }
    out
}

/// `a == b`, inline up to 32 bytes.
#[inline]
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0..=16 => key16(a) == key16(b),
        17..=32 => {
            load8(a, 0) == load8(b, 0)
                && load8(a, 8) == load8(b, 8)
                && load8(a, n - 16) == load8(b, n - 16)
                && load8(a, n - 8) == load8(b, n - 8)
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agree_with_slice_equality() {
        let base: Vec<u8> = (1..=70u8).collect();
        for n in 0..70 {
            let a = &base[..n];
            assert!(same(a, a));
            assert!(!same(a, &base[..n + 1]));
            for i in 0..n {
                let mut b = a.to_vec();
                b[i] ^= 0x40;
                assert!(!same(a, &b), "{n} {i}");
                if n <= 16 {
                    assert_ne!(key16(a), key16(&b), "{n} {i}");
                }
            }
            if let Some(key) = key16(a) {
                assert_eq!(unkey16(n, key), a);
            }
        }
        // Short keys differ by length too (the caller compares lengths).
        assert_eq!(key16(b""), Some((0, 0)));
    }
}
