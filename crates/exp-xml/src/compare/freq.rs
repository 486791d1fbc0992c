//! Frequency tables and the distances between two of them.
//!
//! Tables hash with the crate's fixed-seed hasher, so iterating one visits
//! its keys in the same order on every run with the same input: the sums
//! below, and so the divergences, are bit-for-bit reproducible.

use std::borrow::Borrow;
use std::hash::Hash;

use crate::hash::FastMap;

/// Counts per key.
#[derive(Debug, Clone)]
pub(crate) struct FreqTable<K> {
    counts: FastMap<K, u64>,
}

impl<K> Default for FreqTable<K> {
    fn default() -> Self {
        Self {
            counts: FastMap::default(),
        }
    }
}

impl<K: Hash + Eq> FreqTable<K> {
    /// Adds `n` to `key`, allocating the owned key only when it is new.
    pub fn add<Q>(&mut self, key: &Q, n: u64)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(count) = self.counts.get_mut(key) {
            *count += n;
        } else {
            self.counts.insert(key.to_owned(), n);
        }
    }

    pub fn get<Q>(&self, key: &Q) -> u64
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.counts.get(key).copied().unwrap_or(0)
    }

    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.counts.contains_key(key)
    }

    /// Distinct keys.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&K, u64)> {
        self.counts.iter().map(|(k, &n)| (k, n))
    }

    /// Keys present in both tables.
    pub fn shared(&self, other: &Self) -> usize {
        self.counts.keys().filter(|k| other.counts.contains_key(*k)).count()
    }

    /// Count pairs over the union of keys: `self`'s keys, then the keys
    /// only `other` has.
    pub fn paired<'a>(&'a self, other: &'a Self) -> impl Iterator<Item = (u64, u64)> + 'a {
        let left = self.counts.iter().map(|(k, &n)| (n, other.get(k)));
        let right = other
            .counts
            .iter()
            .filter(|(k, _)| !self.counts.contains_key(*k))
            .map(|(_, &n)| (0, n));
        left.chain(right)
    }
}

/// Jensen–Shannon divergence, base 2, of two distributions given as paired
/// counts: 0 for equal distributions, 1 for disjoint supports. Two empty
/// distributions are equal (0); an empty one against a non-empty one is as
/// far apart as possible (1).
pub(crate) fn jensen_shannon(pairs: &[(u64, u64)]) -> f64 {
    let (total_p, total_q) = pairs.iter().fold((0u64, 0u64), |(a, b), &(p, q)| (a + p, b + q));
    match (total_p, total_q) {
        (0, 0) => return 0.0,
        (0, _) | (_, 0) => return 1.0,
        _ => {}
    }
    let (tp, tq) = (total_p as f64, total_q as f64);
    let mut sum = 0.0;
    for &(p, q) in pairs {
        let (p, q) = (p as f64 / tp, q as f64 / tq);
        let m = 0.5 * (p + q);
        if p > 0.0 {
            sum += 0.5 * p * (p / m).log2();
        }
        if q > 0.0 {
            sum += 0.5 * q * (q / m).log2();
        }
    }
    sum.clamp(0.0, 1.0)
}

/// Total variation distance `½ Σ |p − q|`, in [0, 1], with the same
/// conventions for empty distributions as [`jensen_shannon`].
pub(crate) fn total_variation(pairs: &[(u64, u64)]) -> f64 {
    let (total_p, total_q) = pairs.iter().fold((0u64, 0u64), |(a, b), &(p, q)| (a + p, b + q));
    match (total_p, total_q) {
        (0, 0) => return 0.0,
        (0, _) | (_, 0) => return 1.0,
        _ => {}
    }
    let (tp, tq) = (total_p as f64, total_q as f64);
    let sum: f64 = pairs.iter().map(|&(p, q)| (p as f64 / tp - q as f64 / tq).abs()).sum();
    (0.5 * sum).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_counts_and_pairs_the_union() {
        let mut a: FreqTable<String> = FreqTable::default();
        a.add("x", 2);
        a.add("y", 1);
        a.add("x", 1);
        let mut b: FreqTable<String> = FreqTable::default();
        b.add("z", 5);
        b.add("x", 1);
        assert_eq!(a.get("x"), 3);
        assert_eq!(a.total(), 4);
        assert_eq!(a.shared(&b), 1);
        let mut pairs: Vec<_> = a.paired(&b).collect();
        pairs.sort_unstable();
        assert_eq!(pairs, vec![(0, 5), (1, 0), (3, 1)]);
    }

    #[test]
    fn divergences_of_simple_cases() {
        let same = [(1u64, 2u64), (3, 6)];
        assert_eq!(jensen_shannon(&same), 0.0);
        assert_eq!(total_variation(&same), 0.0);
        let disjoint = [(1u64, 0u64), (0, 4)];
        assert!((jensen_shannon(&disjoint) - 1.0).abs() < 1e-12);
        assert_eq!(total_variation(&disjoint), 1.0);
        assert_eq!(jensen_shannon(&[]), 0.0);
        assert_eq!(jensen_shannon(&[(0, 1)]), 1.0);
    }
}
