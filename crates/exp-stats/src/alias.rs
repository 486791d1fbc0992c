//! Vose's alias method for the empirical family: O(1) draws from a discrete
//! distribution (M. D. Vose, "A linear algorithm for generating random
//! numbers with a given distribution", IEEE TSE 17(9), 1991).
//!
//! The n distinct values with counts cᵢ (of N) get probabilities pᵢ = cᵢ/N.
//! Scaled to qᵢ = n·pᵢ (mean 1), columns are filled by repeatedly pairing a
//! "small" column (q < 1) with a "large" one (q ≥ 1): the small column keeps
//! threshold q_s and aliases the large one, which gives away 1 − q_s. A draw
//! picks a column uniformly and keeps it with probability threshold, else
//! takes its alias, so P(value i) = (qᵢ-part kept + parts given away) / n = pᵢ.

use crate::rng::Rng;
use crate::sampler::error::SampleError;

#[derive(Debug, Clone)]
pub(crate) struct AliasTable {
    /// Distinct values, ascending.
    values: Vec<f64>,
    /// Cumulative counts: `cumulative[i]` = number of samples ≤ `values[i]`.
    cumulative: Vec<u64>,
    /// Probability of keeping column i rather than taking `alias[i]`.
    threshold: Vec<f64>,
    alias: Vec<u32>,
    mean: f64,
    variance: f64,
}

impl AliasTable {
    pub(crate) fn from_values(raw: &[f64]) -> Result<Self, SampleError> {
        if raw.is_empty() {
            return Err(SampleError::EmptyEmpirical);
        }
        if let Some((index, &value)) = raw.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(SampleError::NonFiniteEmpirical { index, value });
        }
        let mut sorted = raw.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mut values: Vec<f64> = Vec::new();
        let mut counts: Vec<u64> = Vec::new();
        for x in sorted {
            // total_cmp separates −0.0 and +0.0; `==` merges them, which is what a resample means.
            match (values.last(), counts.last_mut()) {
                (Some(&last), Some(count)) if last == x => *count += 1,
                _ => {
                    values.push(x);
                    counts.push(1);
                }
            }
        }
        let total = raw.len() as f64;
        let n = values.len();
        // Population moments of the resampling distribution (the values themselves).
        let mean = raw.iter().sum::<f64>() / total;
        let variance = raw.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / total;

        let (threshold, alias) =
            crate::alias_index::vose(counts.iter().map(|&c| c as f64 * n as f64 / total).collect());
        let cumulative = counts
            .iter()
            .scan(0u64, |acc, &c| {
                *acc += c;
                Some(*acc)
            })
            .collect();
        Ok(AliasTable {
            values,
            cumulative,
            threshold,
            alias,
            mean,
            variance,
        })
    }

    /// One draw from one 53-bit uniform: u·n = column + fraction, the column
    /// picks uniformly and the fraction (≥ 53 − log₂ n bits) decides
    /// column vs alias.
    #[inline]
    pub(crate) fn sample(&self, rng: &mut Rng) -> f64 {
        let scaled = rng.next_f64() * self.values.len() as f64;
        let column = scaled as usize; // < n because next_f64 < 1
        let fraction = scaled - column as f64;
        let index = match self.threshold.get(column) {
            Some(&t) if fraction < t => column,
            Some(_) => self.alias.get(column).map_or(column, |&a| a as usize),
            None => 0,
        };
        self.values.get(index).copied().unwrap_or(self.mean)
    }

    pub(crate) fn mean(&self) -> f64 {
        self.mean
    }

    pub(crate) fn variance(&self) -> f64 {
        self.variance
    }

    /// Fraction of the values ≤ x.
    pub(crate) fn cdf(&self, x: f64) -> f64 {
        let below = self.values.partition_point(|&v| v <= x);
        let total = self.cumulative.last().copied().unwrap_or(1) as f64;
        match below.checked_sub(1).and_then(|i| self.cumulative.get(i)) {
            Some(&c) => c as f64 / total,
            None => 0.0,
        }
    }

    /// (value, probability it is drawn) for every distinct value, ascending:
    /// what the table encodes, for tests.
    #[cfg(test)]
    fn encoded(&self) -> Vec<(f64, f64)> {
        let n = self.values.len() as f64;
        let mut p = vec![0.0; self.values.len()];
        for (i, (&t, &a)) in self.threshold.iter().zip(&self.alias).enumerate() {
            p[i] += t / n;
            p[a as usize] += (1.0 - t) / n;
        }
        self.values.iter().copied().zip(p).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_encodes_the_counts_exactly() {
        let raw = [5.0, 1.0, 1.0, 2.0, 5.0, 5.0, 5.0, 9.0, 1.0, 2.0];
        let table = AliasTable::from_values(&raw).unwrap();
        let expected = [(1.0, 0.3), (2.0, 0.2), (5.0, 0.4), (9.0, 0.1)];
        for ((v, p), (ev, ep)) in table.encoded().into_iter().zip(expected) {
            assert_eq!(v, ev);
            assert!((p - ep).abs() < 1e-12, "P({v}) = {p}, expected {ep}");
        }
        assert_eq!(table.cdf(0.5), 0.0);
        assert_eq!(table.cdf(1.0), 0.3);
        assert_eq!(table.cdf(4.9), 0.5);
        assert_eq!(table.cdf(9.0), 1.0);
        assert!((table.mean() - 3.6).abs() < 1e-12);
    }

    #[test]
    fn zero_signs_merge() {
        let table = AliasTable::from_values(&[-0.0, 0.0, 1.0]).unwrap();
        assert_eq!(table.values.len(), 2);
    }
}
