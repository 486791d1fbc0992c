//! A public weighted index table by Vose's alias method: O(1) draws of an
//! index i with probability wᵢ / Σw (M. D. Vose, "A linear algorithm for
//! generating random numbers with a given distribution", IEEE TSE 17(9),
//! 1991). The crate's private `AliasTable` resamples `f64` values; this one
//! picks indices, so callers can weight anything (skeletons, strings).
//!
//! Construction scales the weights to qᵢ = n·wᵢ/Σw (mean 1) and pairs each
//! "small" column (q < 1) with a "large" one (q ≥ 1): the small column keeps
//! threshold q_s and aliases the large one, which gives away 1 − q_s.
//!
//! A draw uses one 64-bit word x: `x · n = column · 2⁶⁴ + fraction` (a
//! 128-bit product), so the high word picks the column uniformly (Lemire)
//! and the low word, uniform on [0, 2⁶⁴), is compared with the column's
//! threshold stored as a 64-bit fixed-point fraction — integer-only.

use crate::rng::Rng;

/// Why an alias table could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AliasError {
    #[error("no weights")]
    Empty,
    #[error("weight #{index} is negative or not finite ({value})")]
    BadWeight { index: usize, value: f64 },
    #[error("all weights are zero")]
    ZeroTotal,
    #[error("too many weights ({0}); at most 2³² − 1")]
    TooMany(usize),
}

/// Draws indices `0..len` with probability proportional to their weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasIndex {
    /// Per column: (threshold as a fraction of 2⁶⁴, alias). A column whose
    /// threshold is 2⁶⁴ − 1 aliases itself, so the 2⁻⁶⁴ miss is harmless.
    columns: Vec<(u64, u32)>,
}

/// 2⁶⁴ as f64, to convert a probability to a 64-bit fixed-point threshold.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// Vose's pairing of columns scaled to mean 1 (`scaled.len()` ≤ 2³² − 1):
/// each column's threshold (the probability it keeps itself) and alias.
/// Columns left in either list by rounding have q ≈ 1 and keep themselves
/// (threshold 1, alias = self), as initialised.
pub(crate) fn vose(mut scaled: Vec<f64>) -> (Vec<f64>, Vec<u32>) {
    let n = scaled.len();
    let mut threshold = vec![1.0f64; n];
    let mut alias: Vec<u32> = (0..n as u32).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < 1.0);
    while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
        threshold[s] = scaled[s];
        alias[s] = l as u32;
        scaled[l] -= 1.0 - scaled[s];
        if scaled[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    (threshold, alias)
}

impl AliasIndex {
    /// A table over `weights` (finite, ≥ 0, not all zero).
    pub fn new(weights: &[f64]) -> Result<Self, AliasError> {
        if weights.is_empty() {
            return Err(AliasError::Empty);
        }
        let n = weights.len();
        if u32::try_from(n).is_err() {
            return Err(AliasError::TooMany(n));
        }
        if let Some((index, &value)) = weights.iter().enumerate().find(|(_, w)| !(w.is_finite() && **w >= 0.0)) {
            return Err(AliasError::BadWeight { index, value });
        }
        let total: f64 = weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return Err(AliasError::ZeroTotal);
        }
        let (threshold, alias) = vose(weights.iter().map(|w| w * n as f64 / total).collect());
        let columns = threshold
            .iter()
            .zip(alias)
            .map(|(&t, a)| {
                // `as` saturates: t = 1 → u64::MAX.
                ((t * TWO_POW_64) as u64, a)
            })
            .collect();
        Ok(AliasIndex { columns })
    }

    /// A table over integer counts (not all zero).
    pub fn from_counts(counts: &[u64]) -> Result<Self, AliasError> {
        let weights: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
        Self::new(&weights)
    }

    /// Number of indices.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Always false: a table has at least one index.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Per column: (threshold as a fraction of 2⁶⁴, alias). [`sample`]
    /// draws `x = next_u64()`, takes column `⌊x·len / 2⁶⁴⌋` and keeps it
    /// when `x·len mod 2⁶⁴` is below its threshold, else takes its alias:
    /// for callers that lay the columns out beside their own data (one
    /// memory access per draw instead of a table, then their data) and
    /// must draw exactly as [`sample`] does.
    ///
    /// [`sample`]: AliasIndex::sample
    pub fn columns(&self) -> &[(u64, u32)] {
        &self.columns
    }

    /// One index, from one 64-bit draw.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let product = u128::from(rng.next_u64()) * self.columns.len() as u128;
        let column = (product >> 64) as usize;
        let fraction = product as u64;
        match self.columns.get(column) {
            Some(&(threshold, _)) if fraction < threshold => column,
            Some(&(_, alias)) => alias as usize,
            None => 0,
        }
    }

    /// The probability of each index that the table encodes (for tests and
    /// diagnostics): (threshold + what other columns give away) / n.
    pub fn probabilities(&self) -> Vec<f64> {
        let n = self.columns.len() as f64;
        let mut p = vec![0.0; self.columns.len()];
        for (i, &(t, a)) in self.columns.iter().enumerate() {
            let keep = t as f64 / TWO_POW_64;
            if let Some(pi) = p.get_mut(i) {
                *pi += keep / n;
            }
            if let Some(pa) = p.get_mut(a as usize) {
                *pa += (1.0 - keep) / n;
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_weights_exactly() {
        let table = AliasIndex::from_counts(&[3, 0, 2, 4, 1]).expect("valid counts");
        let expected = [0.3, 0.0, 0.2, 0.4, 0.1];
        for (p, e) in table.probabilities().iter().zip(expected) {
            assert!((p - e).abs() < 1e-12, "{p} vs {e}");
        }
        assert_eq!(table.len(), 5);
    }

    #[test]
    fn draws_match_weights() {
        let weights = [5.0, 1.0, 0.0, 10.0, 0.5];
        let table = AliasIndex::new(&weights).expect("valid weights");
        let mut rng = Rng::new(7);
        let n = 200_000;
        let mut counts = [0u64; 5];
        for _ in 0..n {
            counts[table.sample(&mut rng)] += 1;
        }
        let total: f64 = weights.iter().sum();
        assert_eq!(counts[2], 0, "zero weight never drawn");
        // Chi-squared over the 4 non-zero cells, 3 degrees of freedom: the
        // 0.999 quantile is 16.27.
        let chi2: f64 = weights
            .iter()
            .zip(counts)
            .filter(|(w, _)| **w > 0.0)
            .map(|(w, c)| {
                let e = w / total * n as f64;
                (c as f64 - e).powi(2) / e
            })
            .sum();
        assert!(chi2 < 16.27, "chi2 = {chi2}, counts {counts:?}");
    }

    #[test]
    fn single_weight_and_errors() {
        let one = AliasIndex::new(&[2.0]).expect("one weight");
        let mut rng = Rng::new(1);
        assert!((0..100).all(|_| one.sample(&mut rng) == 0));
        assert_eq!(AliasIndex::new(&[]), Err(AliasError::Empty));
        assert_eq!(AliasIndex::new(&[0.0, 0.0]), Err(AliasError::ZeroTotal));
        assert!(matches!(
            AliasIndex::new(&[1.0, f64::NAN]),
            Err(AliasError::BadWeight { index: 1, .. })
        ));
        assert!(matches!(
            AliasIndex::new(&[-1.0, 2.0]),
            Err(AliasError::BadWeight { index: 0, .. })
        ));
    }
}
