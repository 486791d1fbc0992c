//! Value collection per path and the categorical/numeric classification.

use hashbrown::HashTable;

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

/// Running numeric state of a path while every value so far is a number.
#[derive(Debug, Clone)]
pub(crate) struct NumericAcc {
    pub values: Vec<f64>,
    pub all_integer_text: bool,
    pub max_decimals: u32,
    pub exponent: bool,
}

/// Distinct values a path counts one by one before, while every value is a
/// number, further values are only appended (see [`ValueAcc::uncounted`]).
const COUNTED: usize = 64;

/// Values seen for one path.
#[derive(Debug, Clone, Default)]
pub(crate) struct ValueAcc {
    /// Distinct value → count (values cut to `MAX_VALUE_LEN` are in
    /// `truncated` instead).
    pub counts: Counts,
    pub truncated: Counts,
    /// Values of a path that already had [`COUNTED`] distinct values, all
    /// numbers: a timestamp or a measurement. They are appended, not looked
    /// up — with thousands of paths, a lookup is a cache miss or three —
    /// and counted only if the path turns out categorical after all.
    uncounted: Uncounted,
    /// `None` once a non-numeric value was seen (or before any value).
    pub numeric: Option<NumericAcc>,
    pub non_numeric: bool,
}

/// Distinct values with their counts and parsed numbers, so a repeated
/// value is hashed once and never parsed again. Unordered: the output sorts
/// rows by count and value.
///
/// The values live in one text per path and the table holds row numbers,
/// so a lookup touches a few adjacent places instead of a separately
/// allocated string per value.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    table: HashTable<usize>,
    rows: Vec<Row>,
    text: String,
    /// The row of the last value counted: runs of one value (a unit, a
    /// status) cost a comparison each, not a lookup.
    last: Option<usize>,
}

/// One distinct value: its place in the text, its count, and the value as
/// a number once parsed.
#[derive(Debug, Clone, Copy)]
struct Row {
    start: usize,
    end: usize,
    count: u64,
    number: Option<(f64, NumberFormat)>,
}

fn hash_of(value: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(value)
}

impl Counts {
    fn value(&self, i: usize) -> &str {
        self.rows
            .get(i)
            .and_then(|r| self.text.get(r.start..r.end))
            .unwrap_or_default()
    }

    /// Counts `n` occurrences of `value`; with `parse`, returns it as a
    /// number (parsed the first time only).
    #[inline]
    fn bump(&mut self, value: &str, n: u64, parse: bool) -> Option<(f64, NumberFormat)> {
        let i = match self.last {
            Some(i) if self.value(i) == value => i,
            _ => {
                let i = self.row_of(value);
                self.last = Some(i);
                i
            }
        };
        let row = self.rows.get_mut(i)?;
        row.count += n;
        if parse && row.number.is_none() {
            row.number = parse_number(value);
        }
        row.number
    }

    fn row_of(&mut self, value: &str) -> usize {
        let hash = hash_of(value);
        let Self { table, rows, text, .. } = self;
        let value_of = |i: usize| rows.get(i).and_then(|r| text.get(r.start..r.end)).unwrap_or_default();
        if let Some(&i) = table.find(hash, |&i| value_of(i) == value) {
            return i;
        }
        let i = rows.len();
        let start = text.len();
        text.push_str(value);
        rows.push(Row {
            start,
            end: text.len(),
            count: 0,
            number: None,
        });
        let value_of = |i: usize| rows.get(i).and_then(|r| text.get(r.start..r.end)).unwrap_or_default();
        table.insert_unique(hash, i, |&i| hash_of(value_of(i)));
        i
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Every distinct value with its count.
    pub fn into_rows(self) -> impl Iterator<Item = (Box<str>, u64)> {
        let text = self.text;
        self.rows
            .into_iter()
            .map(move |r| (text.get(r.start..r.end).unwrap_or_default().into(), r.count))
    }

    #[cfg(test)]
    fn count_of(&self, value: &str) -> Option<u64> {
        let i = (0..self.rows.len()).find(|&i| self.value(i) == value)?;
        self.rows.get(i).map(|r| r.count)
    }

    /// Adds the counts of `other`.
    pub fn merge(&mut self, other: Counts) {
        for (i, theirs) in other.rows.iter().enumerate() {
            let mine = self.row_of(other.value(i));
            if let Some(row) = self.rows.get_mut(mine) {
                row.count += theirs.count;
                row.number = row.number.or(theirs.number);
            }
        }
    }
}

/// Values appended as one text, each once.
#[derive(Debug, Clone, Default)]
struct Uncounted {
    text: String,
    /// Length of each value (at most [`MAX_VALUE_LEN`](crate::MAX_VALUE_LEN)).
    lens: Vec<u16>,
}

impl Uncounted {
    fn push(&mut self, value: &str) {
        self.text.push_str(value);
        self.lens.push(u16::try_from(value.len()).unwrap_or(u16::MAX));
    }

    fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    fn values(&self) -> impl Iterator<Item = &str> {
        self.lens.iter().scan(0usize, |start, &len| {
            let end = *start + usize::from(len);
            let value = self.text.get(*start..end).unwrap_or_default();
            *start = end;
            Some(value)
        })
    }
}

impl ValueAcc {
    #[inline]
    pub fn add(&mut self, value: &str, truncated: bool) {
        self.add_repeated(value, truncated, 1);
    }

    /// Adds `n` occurrences of `value`.
    #[inline]
    pub fn add_repeated(&mut self, value: &str, truncated: bool, n: u64) {
        if truncated {
            // A cut value is not a number we could trust.
            self.set_non_numeric();
            self.truncated.bump(value, n, false);
            return;
        }
        if self.non_numeric {
            self.counts.bump(value, n, false);
            return;
        }
        // Repeats (`n > 1`, from the collapse of `Auto`) are few: counted.
        let number = if self.counts.len() >= COUNTED && n == 1 {
            match parse_number(value) {
                Some(number) => {
                    self.uncounted.push(value);
                    Some(number)
                }
                None => {
                    self.set_non_numeric();
                    self.counts.bump(value, n, false);
                    return;
                }
            }
        } else {
            self.counts.bump(value, n, true)
        };
        match number {
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

    /// Counts the uncounted values: the path is not numeric after all.
    fn set_non_numeric(&mut self) {
        self.non_numeric = true;
        self.numeric = None;
        self.count_all();
    }

    fn count_all(&mut self) {
        let uncounted = std::mem::take(&mut self.uncounted);
        for value in uncounted.values() {
            self.counts.bump(value, 1, false);
        }
    }

    /// Appends the values of a later part of the corpus (the partial
    /// extraction of the next input or documents).
    pub fn merge(&mut self, other: ValueAcc) {
        if self.counts.len() + self.truncated.len() == 0 && self.uncounted.is_empty() {
            *self = other;
            return;
        }
        self.counts.merge(other.counts);
        self.truncated.merge(other.truncated);
        self.uncounted.text.push_str(&other.uncounted.text);
        self.uncounted.lens.extend(other.uncounted.lens);
        if self.non_numeric || other.non_numeric {
            self.set_non_numeric();
            return;
        }
        match (&mut self.numeric, other.numeric) {
            (Some(acc), Some(more)) => acc.merge(more),
            (None, more) => self.numeric = more,
            (Some(_), None) => {}
        }
    }

    /// Whether the path is numeric: every value a number, and more than
    /// `threshold` distinct ones.
    pub fn is_numeric(&mut self, threshold: usize) -> bool {
        if self.non_numeric || self.numeric.is_none() {
            return false;
        }
        if self.counts.len() <= threshold && !self.uncounted.is_empty() {
            // Not decided by the counted values alone.
            self.count_all();
        }
        self.distinct() > threshold
    }

    /// Distinct values (plain and truncated); the uncounted ones are known
    /// to add at least one.
    pub fn distinct(&self) -> usize {
        self.counts.len() + self.truncated.len() + usize::from(!self.uncounted.is_empty())
    }

    /// The counted values, all of them (for a categorical path).
    pub fn into_counts(mut self) -> (Counts, Counts) {
        self.count_all();
        (self.counts, self.truncated)
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

/// Sorts in `f64::total_cmp` order, as integers: the same order, several
/// times faster than comparing floats.
fn sort_floats(values: &mut [f64]) {
    // `total_cmp`'s key: flipping the magnitude bits of negative numbers
    // makes the signed integer order the total order (and is its own
    // inverse).
    let key = |bits: u64| bits ^ ((((bits as i64) >> 63) as u64) >> 1);
    let mut keys: Vec<i64> = values.iter().map(|v| key(v.to_bits()) as i64).collect();
    keys.sort_unstable();
    for (v, k) in values.iter_mut().zip(keys) {
        *v = f64::from_bits(key(k as u64));
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
        sort_floats(&mut self.values);
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

    #[test]
    fn many_numbers_then_a_word_count_everything() {
        let mut acc = ValueAcc::default();
        for i in 0..1000 {
            acc.add(&(i % 600).to_string(), false);
        }
        assert!(acc.is_numeric(30));
        assert_eq!(acc.numeric.as_ref().map(|n| n.values.len()), Some(1000));
        acc.add("n/a", false);
        assert!(!acc.is_numeric(30));
        let (counts, _) = acc.into_counts();
        assert_eq!(counts.len(), 601);
        assert_eq!(counts.count_of("599"), Some(1));
        assert_eq!(counts.count_of("0"), Some(2));
    }

    #[test]
    fn floats_sort_in_total_order() {
        let mut v = vec![3.5, -0.0, 0.0, -2.0, f64::INFINITY, 1e-300, -1e300, 2.0, -0.5];
        let mut want = v.clone();
        want.sort_by(f64::total_cmp);
        sort_floats(&mut v);
        assert_eq!(
            v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
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
