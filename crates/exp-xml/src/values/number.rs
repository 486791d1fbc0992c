//! Numbers as written in data: parsing, and the text format to keep.

/// How numeric values are written, so generated values can look alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberFormat {
    /// `42`, `-7`
    Integer,
    /// `3.14`: the most decimals seen.
    Fixed { decimals: u32 },
    /// `1.5e-3`: at least one value used an exponent.
    Exponent,
}

/// Parses a decimal number as written in data (`[+-]digits[.digits][e[+-]digits]`).
/// Rejects what `f64::from_str` would also accept but data does not mean as
/// a number: `inf`, `NaN`, hex, empty strings.
pub(crate) fn parse_number(text: &str) -> Option<(f64, NumberFormat)> {
    let bytes = text.as_bytes();
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let int_start = i;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut digits = i - int_start;
    let mut decimals = 0u32;
    let mut fixed = false;
    if bytes.get(i) == Some(&b'.') {
        fixed = true;
        i += 1;
        let frac_start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        decimals = u32::try_from(i - frac_start).unwrap_or(u32::MAX);
        digits += i - frac_start;
    }
    if digits == 0 {
        return None;
    }
    let mut exponent = false;
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        exponent = true;
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == exp_start {
            return None;
        }
    }
    if i != bytes.len() {
        return None;
    }
    let value = match exact_quotient(bytes, exponent) {
        Some(v) => v,
        None => text.parse().ok()?,
    };
    if !value.is_finite() {
        return None;
    }
    let format = if exponent {
        NumberFormat::Exponent
    } else if fixed {
        NumberFormat::Fixed { decimals }
    } else {
        NumberFormat::Integer
    };
    Some((value, format))
}

/// The value of a short decimal without exponent as an integer mantissa
/// over a power of ten: both are exact in `f64` (at most 15 digits, at
/// most 22 decimals) and IEEE division rounds correctly, so this is the
/// same number `str::parse` gives, several times faster.
fn exact_quotient(bytes: &[u8], exponent: bool) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ];
    if exponent {
        return None;
    }
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, bytes),
    };
    let mut mantissa: u64 = 0;
    let mut count = 0usize;
    let mut decimals: Option<usize> = None;
    for &b in digits {
        if b == b'.' {
            decimals = Some(0);
            continue;
        }
        mantissa = mantissa * 10 + u64::from(b - b'0');
        count += 1;
        if let Some(d) = &mut decimals {
            *d += 1;
        }
        if count > 15 {
            return None;
        }
    }
    let value = mantissa as f64 / POW10.get(decimals.unwrap_or(0)).copied()?;
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_formats() {
        assert_eq!(parse_number("42"), Some((42.0, NumberFormat::Integer)));
        assert_eq!(
            parse_number("-0.250"),
            Some((-0.25, NumberFormat::Fixed { decimals: 3 }))
        );
        assert_eq!(parse_number("1.5e-3"), Some((0.0015, NumberFormat::Exponent)));
        assert_eq!(parse_number(".5"), Some((0.5, NumberFormat::Fixed { decimals: 1 })));
        for bad in ["", "-", ".", "inf", "NaN", "0x10", "1e", "1.2.3", "12a", " 1"] {
            assert_eq!(parse_number(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn fast_parse_agrees_with_str_parse() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 10_u64.pow(1 + (i % 15) as u32)).to_string();
            let cut = (x >> 40) as usize % (digits.len() + 1);
            let text = match i % 3 {
                0 => digits.clone(),
                1 => format!("{}.{}", &digits[..cut], &digits[cut..]),
                _ => format!("-{}.{}", &digits[..cut], &digits[cut..]),
            };
            let want: f64 = text.parse().expect("parses");
            let got = parse_number(&text).map(|(v, _)| v);
            assert_eq!(got.map(f64::to_bits), Some(want.to_bits()), "{text}");
        }
    }
}
