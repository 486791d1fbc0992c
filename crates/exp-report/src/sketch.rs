//! A log-bucketed histogram of non-negative values: bounded memory, any
//! number of values, quantiles within a fixed relative error. Figures of
//! tens of millions of latencies are drawn from it, not from the values.

/// Buckets per factor of two of [`LogHistogram::default`]: bounds 0.27 %
/// apart, finer than a pixel on any axis spanning more than 30 %.
const FINE: u32 = 256;
/// Buckets per factor of two of [`LogHistogram::coarse`]: 4.4 % apart,
/// for the many small histograms of a time series.
const COARSE: u32 = 16;

#[derive(Debug, Clone, PartialEq)]
pub struct LogHistogram {
    per_octave: u32,
    /// Values below 1 (zero, for integer ns).
    zeros: u64,
    /// Bucket index of `counts[0]`: bucket i holds [2^(i/p), 2^((i+1)/p)).
    first: usize,
    counts: Vec<u64>,
    total: u64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram::with_buckets_per_octave(FINE)
    }
}

impl LogHistogram {
    pub fn coarse() -> Self {
        LogHistogram::with_buckets_per_octave(COARSE)
    }

    fn with_buckets_per_octave(per_octave: u32) -> Self {
        LogHistogram {
            per_octave,
            zeros: 0,
            first: 0,
            counts: Vec::new(),
            total: 0,
        }
    }

    pub fn add(&mut self, value: f64) {
        if value.is_nan() || value < 0.0 {
            return;
        }
        self.total += 1;
        if value < 1.0 {
            self.zeros += 1;
            return;
        }
        // At most 1024 octaves for any finite f64.
        let i = (value.log2() * f64::from(self.per_octave)) as usize;
        if self.counts.is_empty() {
            self.first = i;
        } else if i < self.first {
            let grow = self.first - i;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = i;
        }
        let at = i - self.first;
        if at >= self.counts.len() {
            self.counts.resize(at + 1, 0);
        }
        self.counts[at] += 1;
    }

    /// Adds `other`'s values (of the same resolution) to these.
    pub fn merge(&mut self, other: &LogHistogram) {
        debug_assert_eq!(self.per_octave, other.per_octave);
        self.zeros += other.zeros;
        self.total += other.total;
        if other.counts.is_empty() {
            return;
        }
        if self.counts.is_empty() {
            self.first = other.first;
            self.counts = other.counts.clone();
            return;
        }
        if other.first < self.first {
            let grow = self.first - other.first;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = other.first;
        }
        let offset = other.first - self.first;
        if offset + other.counts.len() > self.counts.len() {
            self.counts.resize(offset + other.counts.len(), 0);
        }
        for (mine, theirs) in self.counts[offset..].iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The value at fraction `q` of the values (0 ≤ q ≤ 1): the middle of
    /// its bucket on the log scale.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let rank = (q.clamp(0.0, 1.0) * (self.total - 1) as f64).round() as u64;
        if rank < self.zeros {
            return Some(0.0);
        }
        let mut seen = self.zeros;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                return Some(self.bound(self.first + i, 0.5));
            }
        }
        None
    }

    /// The empirical CDF at each occupied bucket's upper bound:
    /// (value, fraction of values at or below it).
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let n = self.total as f64;
        let mut out = Vec::new();
        let mut seen = self.zeros;
        for (i, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                seen += c;
                out.push((self.bound(self.first + i, 1.0), seen as f64 / n));
            }
        }
        out
    }

    /// 2^((i + at) / per_octave): bucket i's lower bound at 0, its upper at 1.
    fn bound(&self, i: usize, at: f64) -> f64 {
        ((i as f64 + at) / f64::from(self.per_octave)).exp2()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_the_relative_error() {
        for (mut h, error) in [(LogHistogram::default(), 0.0014), (LogHistogram::coarse(), 0.022)] {
            for v in (1..=100_000u32).rev() {
                h.add(f64::from(v));
            }
            for q in [0.01, 0.5, 0.9, 0.99, 0.999] {
                let exact = q * 99_999.0 + 1.0;
                let got = h.quantile(q).unwrap();
                assert!((got / exact - 1.0).abs() < error, "q {q}: {got} vs {exact}");
            }
            let cdf = h.cdf();
            assert_eq!(cdf.last().unwrap().1, 1.0);
            assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        }
    }

    #[test]
    fn merged_histograms_are_the_histogram_of_both() {
        let (mut a, mut b, mut both) = (
            LogHistogram::default(),
            LogHistogram::default(),
            LogHistogram::default(),
        );
        for v in [5.0, 1e6, 0.0, 3e3] {
            a.add(v);
            both.add(v);
        }
        for v in [1.0, 7e9, 4e3] {
            b.add(v);
            both.add(v);
        }
        let mut empty = LogHistogram::default();
        empty.merge(&a);
        empty.merge(&b);
        a.merge(&b);
        assert_eq!(a.cdf(), both.cdf());
        assert_eq!(empty.cdf(), both.cdf());
        assert_eq!(a.len(), 7);
    }

    #[test]
    fn zeros_and_values_that_are_not_counted() {
        let mut h = LogHistogram::default();
        h.add(1e9);
        h.add(0.0);
        h.add(-5.0);
        h.add(f64::NAN);
        h.add(1e3);
        assert_eq!(h.len(), 3);
        assert_eq!(h.quantile(0.0), Some(0.0));
        assert!((h.quantile(0.5).unwrap() / 1e3 - 1.0).abs() < 0.0014);
        assert!((h.quantile(1.0).unwrap() / 1e9 - 1.0).abs() < 0.0014);
        assert_eq!(h.cdf()[0].1, 2.0 / 3.0, "zeros count below the first bucket");
    }
}
