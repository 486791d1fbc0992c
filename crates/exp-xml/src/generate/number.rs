//! Writing generated numbers in a path's [`NumberFormat`] without the
//! `format!` machinery: the text is built in place in the output's slack
//! after the cursor (digits two at a time); integers and fixed
//! decimals go through an `i64` (fixed decimals as a scaled integer),
//! exponents as a 6-significant-digit mantissa. Values beyond the `i64`
//! range (rare: a path whose data reach 10¹⁸) fall back to `std::fmt`.

use super::cursor::{Cursor, PAD};
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

/// Two decimal digits per entry: "00", "01", …, "99".
const PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        table[2 * i] = b'0' + (i / 10) as u8;
        table[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    table
};

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
    /// The fast paths build the text (at most 21 bytes: sign, 19 digits,
    /// point) in place after the cursor ([`Cursor::in_place`]).
    #[inline]
    pub fn write(self, out: &mut Cursor, x: f64, min: f64, max: f64) {
        match self {
            // `x.round()` and `scaled.round()` are below `I64_SAFE` exactly
            // when `x` and `scaled` are: no fraction is left at 9·10¹⁸.
            Writer::Integer if x.abs() < I64_SAFE => out.in_place(|buf| write_i64(buf, round_to_i64(x))),
            Writer::Integer => out.bytes(format!("{:.0}", x.round()).as_bytes()),
            Writer::Fixed { decimals, scale } if (x * scale).abs() < I64_SAFE => {
                out.in_place(|buf| write_fixed(buf, round_to_i64(x * scale), decimals))
            }
            Writer::Fixed { decimals, .. } | Writer::WideFixed { decimals } => {
                out.bytes(format!("{x:.*}", decimals as usize).as_bytes())
            }
            Writer::Exponent => out.in_place(|buf| write_exponent(buf, x, min, max)),
        }
    }
}

/// `x.round()` (half away from zero) as an `i64`, for `|x| < I64_SAFE`,
/// without the libm call `f64::round` compiles to on baseline x86-64:
/// truncation is exact there, and so is `x − trunc(x)` (the fraction of a
/// double is a double).
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

/// Writes the decimal digits of `v` at `buf[at..]`; returns the end.
#[inline]
fn write_u64(buf: &mut [u8; PAD], at: usize, mut v: u64) -> usize {
    let digits = v.checked_ilog10().map_or(1, |l| l as usize + 1);
    let end = (at + digits).min(PAD);
    let mut i = end;
    while v >= 100 && i >= 2 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if v >= 10 && i >= 2 {
        let pair = v as usize * 2;
        buf[i - 2..i].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else if i >= 1 {
        buf[i - 1] = b'0' + v as u8;
    }
    end
}

/// Writes `v` at the start of `buf`; returns its length.
#[inline]
fn write_i64(buf: &mut [u8; PAD], v: i64) -> usize {
    let at = usize::from(v < 0);
    buf[0] = b'-';
    write_u64(buf, at, v.unsigned_abs())
}

/// Writes `scaled / 10^decimals` with exactly `decimals` decimals at the
/// start of `buf`; returns its length.
#[inline]
fn write_fixed(buf: &mut [u8; PAD], scaled: i64, decimals: u32) -> usize {
    let at = usize::from(scaled < 0);
    buf[0] = b'-';
    let magnitude = scaled.unsigned_abs();
    let unit = POW10[decimals as usize];
    // Constant divisors for the usual decimals: a multiply, not a `div`.
    let (whole, frac) = match decimals {
        1 => (magnitude / 10, magnitude % 10),
        2 => (magnitude / 100, magnitude % 100),
        3 => (magnitude / 1000, magnitude % 1000),
        _ => (magnitude / unit, magnitude % unit),
    };
    let point = write_u64(buf, at, whole);
    // The fraction with its leading zeros: `unit + frac` has one digit
    // more than `decimals` (a leading 1), which the point then covers.
    let end = write_u64(buf, point, unit + frac);
    buf[point] = b'.';
    end
}

/// Writes `x` as `d.ddddde±x` (trailing zeros of the mantissa dropped) at
/// the start of `buf`, rounding the mantissa towards the inside of
/// `[min, max]` when rounding to nearest would leave it; returns its length.
fn write_exponent(buf: &mut [u8; PAD], x: f64, min: f64, max: f64) -> usize {
    if x == 0.0 {
        buf[..3].copy_from_slice(b"0e0");
        return 3;
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
    let mut at = 0;
    if x < 0.0 {
        buf[0] = b'-';
        at = 1;
    }
    let unit = POW10[MANTISSA_DECIMALS as usize];
    at = write_u64(buf, at, m / unit);
    m %= unit;
    if m != 0 {
        let mut digits = MANTISSA_DECIMALS;
        while m.is_multiple_of(10) {
            m /= 10;
            digits -= 1;
        }
        // Leading zeros of the fraction (1.05 → m = 5 with 2 digits): the
        // digits of 10^digits + m, whose leading 1 the point overwrites.
        let point = at;
        at = write_u64(buf, point, POW10[digits as usize] + m);
        buf[point] = b'.';
    }
    buf[at] = b'e';
    let exponent = i64::from(exponent);
    at += 1;
    if exponent < 0 {
        buf[at] = b'-';
        at += 1;
    }
    write_u64(buf, at, exponent.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(format: NumberFormat, x: f64) -> String {
        written(Writer::new(format), x, f64::MIN, f64::MAX)
    }

    fn written(writer: Writer, x: f64, min: f64, max: f64) -> String {
        let mut out = Vec::new();
        let mut cursor = Cursor::append(&mut out);
        writer.write(&mut cursor, x, min, max);
        cursor.finish();
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
        assert_eq!(written(Writer::Exponent, 1.234_567, 0.0, 1.234_567), "1.23456e0");
    }
}
