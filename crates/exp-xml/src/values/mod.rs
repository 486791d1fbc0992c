//! Value collection per path and the categorical/numeric classification.

mod counts;
mod number;

pub(crate) use counts::Counts;
pub(crate) use number::parse_number;
pub use number::NumberFormat;

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
    /// `threshold` distinct ones or count data a discrete family fits
    /// better than the table of its values ([`counts_are_numeric`]).
    pub fn is_numeric(&mut self, threshold: usize) -> bool {
        if self.non_numeric || self.numeric.is_none() {
            return false;
        }
        if self.counts.len() <= threshold && !self.uncounted.is_empty() {
            // Not decided by the counted values alone.
            self.count_all();
        }
        // A truncated value made the path non-numeric already.
        self.distinct() > threshold || counts_are_numeric(self.counts.rows())
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

/// The count-data rule: values that are all non-negative integers written
/// plainly (digits only, no leading zero), at least [`COUNT_MIN_VALUES`] of
/// them and [`COUNT_VALUES_PER_DISTINCT`] per distinct value, are numeric
/// when the best of the Poisson, geometric and negative binomial fits has a
/// lower AIC than the categorical distribution of the values, whose
/// d − 1 free probabilities reproduce the sample exactly (and with it its
/// noise). Codes written as `007`, flags with two values and
/// small samples stay categorical.
pub(crate) fn counts_are_numeric<'a>(rows: impl IntoIterator<Item = (&'a str, u64)>) -> bool {
    use exp_stats::fit::{select_table, Family};
    let mut table = Vec::new();
    for (text, count) in rows {
        // Digits only, no leading zero, and few enough to be exact in f64.
        let plain = (1..=15).contains(&text.len())
            && text.bytes().all(|b| b.is_ascii_digit())
            && (text == "0" || !text.starts_with('0'));
        match text.parse::<u64>() {
            Ok(k) if plain => table.push((k as f64, count)),
            _ => return false,
        }
    }
    let n: u64 = table.iter().map(|e| e.1).sum();
    let distinct = table.len() as u64;
    if distinct < 2 || n < COUNT_MIN_VALUES || n < COUNT_VALUES_PER_DISTINCT * distinct {
        return false;
    }
    let nf = n as f64;
    let categorical_ll: f64 = table.iter().map(|&(_, c)| c as f64 * (c as f64 / nf).ln()).sum();
    let categorical_aic = 2.0 * (distinct - 1) as f64 - 2.0 * categorical_ll;
    let discrete = [Family::Poisson, Family::Geometric, Family::NegativeBinomial];
    select_table(&table, &discrete).is_ok_and(|s| s.best.aic < categorical_aic)
}

/// Fewest values count data needs to compete as numeric.
pub(crate) const COUNT_MIN_VALUES: u64 = 100;
/// Fewest values per distinct value count data needs to compete as numeric.
pub(crate) const COUNT_VALUES_PER_DISTINCT: u64 = 10;

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
