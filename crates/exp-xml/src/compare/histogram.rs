//! Fixed-bin histograms, so two corpora are always binned alike.
//!
//! Bins (lower bounds inclusive):
//! - element depth (document root = 1): 1, 2, …, 10, 11–15, 16–31, 32+;
//! - fan-out (child elements per element): 0, 1, 2, 3, 4, 5–7, 8–15, 16–31,
//!   32–63, 64+;
//! - document size (bytes of the canonical form, see the module docs of
//!   `compare`): <64, then powers of two 64–127, …, 512 KiB–1 MiB − 1, 1 MiB+.

use serde::Serialize;

/// Lower bounds of each bin; the last bin is open-ended.
#[derive(Debug, Clone)]
pub(crate) struct Bins {
    lower: Vec<u64>,
}

impl Bins {
    pub fn depth() -> Self {
        let mut lower: Vec<u64> = (1..=10).collect();
        lower.extend([11, 16, 32]);
        Self { lower }
    }

    pub fn fan_out() -> Self {
        Self {
            lower: vec![0, 1, 2, 3, 4, 5, 8, 16, 32, 64],
        }
    }

    pub fn document_size() -> Self {
        let mut lower = vec![0];
        lower.extend((6..=20).map(|p| 1u64 << p));
        Self { lower }
    }

    pub fn len(&self) -> usize {
        self.lower.len()
    }

    /// Index of the bin holding `value` (values below the first bound go to
    /// the first bin).
    pub fn index(&self, value: u64) -> usize {
        self.lower.partition_point(|&lo| lo <= value).saturating_sub(1)
    }

    /// `"3"`, `"5–7"` or `"64+"`.
    pub fn labels(&self) -> Vec<String> {
        self.lower
            .iter()
            .enumerate()
            .map(|(i, &lo)| match self.lower.get(i + 1) {
                None => format!("{lo}+"),
                Some(&next) if next == lo + 1 => lo.to_string(),
                Some(&next) => format!("{lo}–{}", next - 1),
            })
            .collect()
    }
}

/// Counts per bin while a corpus is read.
#[derive(Debug, Clone)]
pub(crate) struct Counter {
    bins: Bins,
    counts: Vec<u64>,
}

impl Counter {
    pub fn new(bins: Bins) -> Self {
        let counts = vec![0; bins.len()];
        Self { bins, counts }
    }

    pub fn add(&mut self, value: u64) {
        if let Some(c) = self.counts.get_mut(self.bins.index(value)) {
            *c += 1;
        }
    }
}

/// One histogram of both corpora, bin by bin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Histogram {
    /// Bin labels, e.g. `"5–7"`, `"64+"`.
    pub bins: Vec<String>,
    pub original: Vec<u64>,
    pub synthetic: Vec<u64>,
    /// Total variation between the two normalised histograms.
    pub total_variation: f64,
}

impl Histogram {
    pub(crate) fn side_by_side(original: &Counter, synthetic: &Counter) -> Self {
        let pairs: Vec<(u64, u64)> = original
            .counts
            .iter()
            .copied()
            .zip(synthetic.counts.iter().copied())
            .collect();
        Self {
            bins: original.bins.labels(),
            original: original.counts.clone(),
            synthetic: synthetic.counts.clone(),
            total_variation: super::freq::total_variation(&pairs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_and_labels() {
        let bins = Bins::fan_out();
        assert_eq!(bins.index(0), 0);
        assert_eq!(bins.index(4), 4);
        assert_eq!(bins.index(7), 5);
        assert_eq!(bins.index(1000), 9);
        assert_eq!(bins.labels()[5], "5–7");
        assert_eq!(bins.labels()[9], "64+");
        let size = Bins::document_size();
        assert_eq!(size.index(63), 0);
        assert_eq!(size.index(64), 1);
        assert_eq!(size.labels()[0], "0–63");
        assert_eq!(size.index(1 << 30), size.len() - 1);
        assert_eq!(Bins::depth().index(0), 0);
    }
}
