//! A log-bucketed histogram of non-negative values: bounded memory, any
//! number of values, quantiles within a fixed relative error. Figures of
//! tens of millions of latencies are drawn from it, not from the values.

/// Buckets per factor of two: adjacent bucket bounds differ by 2^(1/64),
/// about 1.1 %, so a quantile read back is within 0.55 % of the value.
const PER_OCTAVE: f64 = 64.0;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogHistogram {
    /// Values below 1 (zero, for integer ns).
    zeros: u64,
    /// Count per bucket index i ≥ 0: values in [2^(i/64), 2^((i+1)/64)).
    counts: Vec<u64>,
    total: u64,
}

impl LogHistogram {
    pub fn add(&mut self, value: f64) {
        if value.is_nan() || value < 0.0 {
            return;
        }
        self.total += 1;
        if value < 1.0 {
            self.zeros += 1;
            return;
        }
        // At most 64 × 1024 buckets for any finite f64.
        let i = (value.log2() * PER_OCTAVE) as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
    }

    pub fn merge(&mut self, other: &LogHistogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.zeros += other.zeros;
        self.total += other.total;
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
                return Some(middle(i));
            }
        }
        None
    }

    /// The empirical CDF at each occupied bucket's upper bound:
    /// (value, fraction of values at or below it).
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        if self.total == 0 {
            return out;
        }
        let n = self.total as f64;
        let mut seen = self.zeros;
        for (i, &c) in self.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            seen += c;
            out.push((upper(i), seen as f64 / n));
        }
        out
    }
}

fn upper(i: usize) -> f64 {
    ((i + 1) as f64 / PER_OCTAVE).exp2()
}

fn middle(i: usize) -> f64 {
    ((i as f64 + 0.5) / PER_OCTAVE).exp2()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_the_relative_error() {
        let mut h = LogHistogram::default();
        for v in 1..=100_000u32 {
            h.add(f64::from(v));
        }
        for q in [0.01, 0.5, 0.9, 0.99, 0.999] {
            let exact = q * 99_999.0 + 1.0;
            let got = h.quantile(q).unwrap();
            assert!((got / exact - 1.0).abs() < 0.006, "q {q}: {got} vs {exact}");
        }
        let cdf = h.cdf();
        assert_eq!(cdf.last().unwrap().1, 1.0);
        assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    }

    #[test]
    fn zeros_negatives_and_merging() {
        let mut a = LogHistogram::default();
        a.add(0.0);
        a.add(-5.0);
        a.add(f64::NAN);
        let mut b = LogHistogram::default();
        b.add(1e9);
        a.merge(&b);
        assert_eq!(a.len(), 2);
        assert_eq!(a.quantile(0.0), Some(0.0));
        assert!((a.quantile(1.0).unwrap() / 1e9 - 1.0).abs() < 0.006);
    }
}
