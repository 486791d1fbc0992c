//! Value collection per path and the categorical/numeric classification.

use crate::hash::FastMap;

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
    let value: f64 = text.parse().ok()?;
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

/// Running numeric state of a path while every value so far is a number.
#[derive(Debug, Clone)]
pub(crate) struct NumericAcc {
    pub values: Vec<f64>,
    pub all_integer_text: bool,
    pub max_decimals: u32,
    pub exponent: bool,
}

/// Values seen for one path.
#[derive(Debug, Clone, Default)]
pub(crate) struct ValueAcc {
    /// Distinct value → count (values cut to `MAX_VALUE_LEN` are in
    /// `truncated` instead), in first-seen order.
    pub counts: Counts,
    pub truncated: Counts,
    /// `None` once a non-numeric value was seen (or before any value).
    pub numeric: Option<NumericAcc>,
    pub non_numeric: bool,
}

/// Distinct values with their counts and parsed numbers, so a repeated
/// value is hashed once and never parsed again. Unordered: the output sorts
/// rows by count and value.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    pub rows: FastMap<Box<str>, Row>,
}

/// Count of one value, and the value as a number once parsed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    pub count: u64,
    number: Option<(f64, NumberFormat)>,
}

impl Counts {
    /// Counts `n` occurrences of `value`; with `parse`, returns it as a
    /// number (parsed the first time only).
    fn bump(&mut self, value: &str, n: u64, parse: bool) -> Option<(f64, NumberFormat)> {
        if let Some(row) = self.rows.get_mut(value) {
            row.count += n;
            if parse && row.number.is_none() {
                row.number = parse_number(value);
            }
            return row.number;
        }
        let number = if parse { parse_number(value) } else { None };
        self.rows.insert(value.into(), Row { count: n, number });
        number
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Adds the counts of `other`.
    pub fn merge(&mut self, other: Counts) {
        for (value, row) in other.rows {
            self.rows
                .entry(value)
                .and_modify(|mine| mine.count += row.count)
                .or_insert(row);
        }
    }
}

impl ValueAcc {
    pub fn add(&mut self, value: &str, truncated: bool) {
        self.add_repeated(value, truncated, 1);
    }

    /// Adds `n` occurrences of `value`.
    pub fn add_repeated(&mut self, value: &str, truncated: bool, n: u64) {
        if truncated {
            // A cut value is not a number we could trust.
            self.non_numeric = true;
            self.numeric = None;
            self.truncated.bump(value, n, false);
            return;
        }
        if self.non_numeric {
            self.counts.bump(value, n, false);
            return;
        }
        match self.counts.bump(value, n, true) {
            Some((v, format)) => {
                let acc = self.numeric.get_or_insert_with(NumericAcc::default);
                for _ in 0..n {
                    acc.push(v, format);
                }
            }
            None => {
                self.non_numeric = true;
                self.numeric = None;
            }
        }
    }

    /// Appends the values of a later part of the corpus (the partial
    /// extraction of the next input or documents).
    pub fn merge(&mut self, other: ValueAcc) {
        self.counts.merge(other.counts);
        self.truncated.merge(other.truncated);
        if self.non_numeric || other.non_numeric {
            self.non_numeric = true;
            self.numeric = None;
            return;
        }
        match (&mut self.numeric, other.numeric) {
            (Some(acc), Some(more)) => acc.merge(more),
            (None, more) => self.numeric = more,
            (Some(_), None) => {}
        }
    }

    /// Distinct values (plain and truncated).
    pub fn distinct(&self) -> usize {
        self.counts.len() + self.truncated.len()
    }
}

impl Default for NumericAcc {
    fn default() -> Self {
        Self {
            values: Vec::new(),
            all_integer_text: true,
            max_decimals: 0,
            exponent: false,
        }
    }
}

impl NumericAcc {
    fn push(&mut self, v: f64, format: NumberFormat) {
        self.values.push(v);
        match format {
            NumberFormat::Integer => {}
            NumberFormat::Fixed { decimals } => {
                self.all_integer_text = false;
                self.max_decimals = self.max_decimals.max(decimals);
            }
            NumberFormat::Exponent => {
                self.all_integer_text = false;
                self.exponent = true;
            }
        }
    }

    fn merge(&mut self, other: NumericAcc) {
        self.values.extend(other.values);
        self.all_integer_text &= other.all_integer_text;
        self.max_decimals = self.max_decimals.max(other.max_decimals);
        self.exponent |= other.exponent;
    }
}

/// Numeric summary of a path classified numeric.
#[derive(Debug, Clone, PartialEq)]
pub struct NumericSummary {
    pub path: crate::Md5Hash,
    pub n: u64,
    pub min: f64,
    pub max: f64,
    /// Every value was written as an integer.
    pub is_integer: bool,
    pub max_decimals: u32,
    pub format: NumberFormat,
    /// Every value, in ascending order (so that the summary does not
    /// depend on how the corpus was split among threads).
    pub values: Vec<f64>,
}

impl NumericAcc {
    pub fn summarize(mut self, path: crate::Md5Hash) -> NumericSummary {
        self.values.sort_unstable_by(f64::total_cmp);
        let (min, max) = self
            .values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let format = if self.exponent {
            NumberFormat::Exponent
        } else if self.all_integer_text {
            NumberFormat::Integer
        } else {
            NumberFormat::Fixed {
                decimals: self.max_decimals,
            }
        };
        NumericSummary {
            path,
            n: self.values.len() as u64,
            min,
            max,
            is_integer: self.all_integer_text,
            max_decimals: self.max_decimals,
            format,
            values: self.values,
        }
    }
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
    fn one_word_makes_a_path_non_numeric() {
        let mut acc = ValueAcc::default();
        acc.add("1", false);
        acc.add("2.5", false);
        assert!(acc.numeric.is_some());
        acc.add("n/a", false);
        assert!(acc.numeric.is_none() && acc.non_numeric);
        acc.add("3", false);
        assert!(acc.numeric.is_none());
        assert_eq!(acc.distinct(), 4);
    }
}
