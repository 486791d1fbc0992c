//! Writing generated numbers in a path's [`NumberFormat`] without the
//! `format!` machinery: integers through a 20-byte stack buffer, fixed
//! decimals as a scaled integer, exponents as a 6-significant-digit
//! mantissa. Values beyond the `i64` range (rare: a path whose data reach
//! 10¹⁸) fall back to `std::fmt`.

use std::io::Write;

use crate::NumberFormat;

/// Powers of ten that fit in a `u64`.
const POW10: [u64; 20] = {
    let mut table = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// Scaled values must stay below this to go through `i64` exactly.
const I64_SAFE: f64 = 9.0e18;

/// Significant digits after the first of an exponent mantissa.
const MANTISSA_DECIMALS: u32 = 5;

/// A number format compiled for writing.
#[derive(Debug, Clone, Copy)]
pub(super) enum Writer {
    Integer,
    /// `decimals` ≤ 18 so `10^decimals` is exact.
    Fixed {
        decimals: u32,
        scale: f64,
    },
    /// More decimals than an `i64` can carry: written by `std::fmt`.
    WideFixed {
        decimals: u32,
    },
    Exponent,
}

impl Writer {
    pub fn new(format: NumberFormat) -> Self {
        match format {
            NumberFormat::Integer => Writer::Integer,
            NumberFormat::Fixed { decimals: 0 } => Writer::Integer,
            NumberFormat::Fixed { decimals } if decimals <= 18 => Writer::Fixed {
                decimals,
                scale: POW10[decimals as usize] as f64,
            },
            NumberFormat::Fixed { decimals } => Writer::WideFixed { decimals },
            NumberFormat::Exponent => Writer::Exponent,
        }
    }

    /// Writes `x` (finite, already clamped to `[min, max]`); the written
    /// text, read back, also lies in `[min, max]` when both bounds are
    /// representable in this format (they are: they were written in it).
    #[inline]
    pub fn write(self, out: &mut Vec<u8>, x: f64, min: f64, max: f64) {
        match self {
            // `x.round()` is below `I64_SAFE` exactly when `x` is: no
            // fraction is left at 9·10¹⁸.
            Writer::Integer if x.abs() < I64_SAFE => write_i64(out, round_to_i64(x)),
            Writer::Integer => {
                let _ = write!(out, "{:.0}", x.round());
            }
            Writer::Fixed { decimals, scale } => {
                let scaled = x * scale;
                if scaled.abs() < I64_SAFE {
                    write_fixed(out, round_to_i64(scaled), decimals);
                } else {
                    let _ = write!(out, "{x:.*}", decimals as usize);
                }
            }
            Writer::WideFixed { decimals } => {
                let _ = write!(out, "{x:.*}", decimals as usize);
            }
            Writer::Exponent => write_exponent(out, x, min, max),
        }
    }
}

/// `x.round()` (half away from zero) as an `i64`, for `|x| < I64_SAFE`,
/// without the libm call `f64::round` compiles to on baseline x86-64:
/// truncation is exact there, and so is `x − trunc(x)`.
#[inline]
fn round_to_i64(x: f64) -> i64 {
    let t = x as i64;
    let fraction = x - t as f64;
    if fraction >= 0.5 {
        t + 1
    } else if fraction <= -0.5 {
        t - 1
    } else {
        t
    }
}

/// Appends the decimal digits of `v`.
#[inline]
pub(super) fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
}

#[inline]
fn write_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `scaled / 10^decimals` with exactly `decimals` decimals.
#[inline]
fn write_fixed(out: &mut Vec<u8>, scaled: i64, decimals: u32) {
    if scaled < 0 {
        out.push(b'-');
    }
    let magnitude = scaled.unsigned_abs();
    // Constant divisors for the usual decimals: a multiply, not a `div`.
    let (whole, mut frac) = match decimals {
        1 => (magnitude / 10, magnitude % 10),
        2 => (magnitude / 100, magnitude % 100),
        3 => (magnitude / 1000, magnitude % 1000),
        _ => {
            let unit = POW10[decimals as usize];
            (magnitude / unit, magnitude % unit)
        }
    };
    write_u64(out, whole);
    out.push(b'.');
    let mut buf = [b'0'; 20];
    let mut i = decimals as usize;
    while i > 0 {
        i -= 1;
        buf[i] = b'0' + (frac % 10) as u8;
        frac /= 10;
    }
    out.extend_from_slice(&buf[..decimals as usize]);
}

/// Appends `x` as `d.ddddde±x` (trailing zeros of the mantissa dropped),
/// rounding the mantissa towards the inside of `[min, max]` when rounding
/// to nearest would leave it.
fn write_exponent(out: &mut Vec<u8>, x: f64, min: f64, max: f64) {
    if x == 0.0 {
        out.extend_from_slice(b"0e0");
        return;
    }
    let magnitude = x.abs();
    let mut exponent = magnitude.log10().floor() as i32;
    let unit = POW10[MANTISSA_DECIMALS as usize] as f64;
    let value_of = |m: f64, e: i32| -> f64 {
        let shift = e - MANTISSA_DECIMALS as i32;
        if shift >= 0 {
            m * 10f64.powi(shift)
        } else {
            m / 10f64.powi(-shift)
        }
    };
    let mut mantissa = (magnitude / 10f64.powi(exponent) * unit).round();
    // log10 can be off by one near powers of ten; renormalise to [1, 10).
    if mantissa >= 10.0 * unit {
        exponent += 1;
        mantissa = (magnitude / 10f64.powi(exponent) * unit).round();
    } else if mantissa < unit {
        exponent -= 1;
        mantissa = (magnitude / 10f64.powi(exponent) * unit).round();
    }
    let signed = |m: f64| {
        if x < 0.0 {
            -value_of(m, exponent)
        } else {
            value_of(m, exponent)
        }
    };
    if signed(mantissa) > max {
        mantissa = if x < 0.0 { mantissa + 1.0 } else { mantissa - 1.0 };
    } else if signed(mantissa) < min {
        mantissa = if x < 0.0 { mantissa - 1.0 } else { mantissa + 1.0 };
    }
    let mut m = mantissa.clamp(0.0, 10.0 * unit - 1.0) as u64;
    if x < 0.0 {
        out.push(b'-');
    }
    let unit = POW10[MANTISSA_DECIMALS as usize];
    write_u64(out, m / unit);
    m %= unit;
    if m != 0 {
        let mut digits = MANTISSA_DECIMALS;
        while m.is_multiple_of(10) {
            m /= 10;
            digits -= 1;
        }
        out.push(b'.');
        let start = out.len();
        write_u64(out, m);
        // Leading zeros of the fraction (1.05 → m = 5 with 2 digits).
        let written = out.len() - start;
        let pad = digits as usize - written.min(digits as usize);
        out.splice(start..start, std::iter::repeat_n(b'0', pad));
    }
    out.push(b'e');
    write_i64(out, i64::from(exponent));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(format: NumberFormat, x: f64) -> String {
        let mut out = Vec::new();
        Writer::new(format).write(&mut out, x, f64::MIN, f64::MAX);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn integers_and_fixed() {
        assert_eq!(text(NumberFormat::Integer, 0.0), "0");
        assert_eq!(text(NumberFormat::Integer, -41.6), "-42");
        assert_eq!(text(NumberFormat::Integer, -0.3), "0");
        assert_eq!(text(NumberFormat::Integer, 1.0e6), "1000000");
        assert_eq!(text(NumberFormat::Integer, 1.0e20), "100000000000000000000");
        let f2 = NumberFormat::Fixed { decimals: 2 };
        assert_eq!(text(f2, 3.456), "3.46");
        assert_eq!(text(f2, -0.001), "0.00");
        assert_eq!(text(f2, -1.005), "-1.00");
        assert_eq!(text(f2, 12.3), "12.30");
        assert_eq!(text(f2, -7.0), "-7.00");
        assert_eq!(text(NumberFormat::Fixed { decimals: 3 }, 0.05), "0.050");
        assert_eq!(text(NumberFormat::Fixed { decimals: 0 }, 2.6), "3");
        assert_eq!(text(f2, 1.0e19), "10000000000000000000.00");
    }

    #[test]
    fn rounding_matches_f64_round() {
        for x in [
            0.5,
            -0.5,
            1.5,
            -2.5,
            0.499_999_999_999_999_94,
            2.0f64.powi(52) + 1.0,
            -7.000_000_1,
            8.9e18,
        ] {
            assert_eq!(round_to_i64(x), x.round() as i64, "{x}");
        }
    }

    #[test]
    fn exponents() {
        assert_eq!(text(NumberFormat::Exponent, 0.0015), "1.5e-3");
        assert_eq!(text(NumberFormat::Exponent, 1000.0), "1e3");
        assert_eq!(text(NumberFormat::Exponent, -1.05e-7), "-1.05e-7");
        assert_eq!(text(NumberFormat::Exponent, 9.999_999), "1e1");
        assert_eq!(text(NumberFormat::Exponent, 0.0), "0e0");
        // Rounding that would leave [min, max] goes inwards.
        let mut out = Vec::new();
        Writer::Exponent.write(&mut out, 1.234_567, 0.0, 1.234_567);
        assert_eq!(out, b"1.23456e0");
    }
}
