//! Per-path comparison of values: total variation for categorical paths,
//! the two-sample KS statistic for numeric ones. The original corpus decides
//! a path's kind (with the extraction's rule), for both sides.

use exp_stats::ks_two_sample;
use serde::Serialize;

use super::collect::{PathIndex, PathValues};
use super::freq::total_variation;
use crate::hash::{FastMap, FastSet};
use crate::XmlError;

/// How the values of a path present in both corpora compare.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathComparison {
    pub path: String,
    pub original_occurrences: u64,
    pub synthetic_occurrences: u64,
    #[serde(flatten)]
    pub metric: PathMetric,
    /// Both sides' values in a few numbers, for figures (not in the JSON,
    /// whose per-path part stays one metric per path).
    #[serde(skip)]
    pub shape: ValueShape,
}

/// Fractions at which [`ValueShape::Quantiles`] gives the values: 0, 5 %,
/// …, 100 %.
pub const SHAPE_QUANTILES: usize = 21;
/// Most frequent original values [`ValueShape::Shares`] keeps.
pub const SHAPE_VALUES: usize = 10;

/// A path's values on both sides, small enough to store per path.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueShape {
    /// A numeric path: each side's values at [`SHAPE_QUANTILES`] evenly
    /// spaced fractions from 0 to 1 (linear between ranks); empty for a
    /// side without numbers.
    Quantiles { original: Vec<f64>, synthetic: Vec<f64> },
    /// A categorical path: its [`SHAPE_VALUES`] most frequent original
    /// values and the share of the path's occurrences each has per side.
    Shares {
        values: Vec<String>,
        original: Vec<f64>,
        synthetic: Vec<f64>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PathMetric {
    /// Total variation between the value distributions; a leaf without text
    /// counts as one more value ("no value"), so a generator that drops
    /// values is seen.
    Categorical {
        total_variation: f64,
        original_distinct: usize,
        synthetic_distinct: usize,
        /// Synthetic values that never occur on this path in the original.
        synthetic_unseen: u64,
    },
    /// Two-sample KS over the numeric values; synthetic values that are not
    /// numbers are counted, not compared. With no synthetic number at all the
    /// statistic is 1 and the p-value 0.
    Numeric {
        ks_statistic: f64,
        p_value: f64,
        original_n: usize,
        synthetic_n: usize,
        synthetic_non_numeric: u64,
    },
}

/// A path found in one corpus only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OneSidedPath {
    pub path: String,
    pub occurrences: u64,
}

/// A path and the value of its metric, for the worst-paths lists.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathScore {
    pub path: String,
    pub value: f64,
}

/// Aggregates over the per-path comparisons.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathSummary {
    pub categorical_paths: usize,
    pub numeric_paths: usize,
    /// 0 when there is no categorical path in both corpora.
    pub max_total_variation: f64,
    pub mean_total_variation: f64,
    /// 0 when there is no numeric path in both corpora.
    pub max_ks: f64,
    pub mean_ks: f64,
    /// Highest total variation first (ties by path text).
    pub worst_categorical: Vec<PathScore>,
    /// Highest KS statistic first.
    pub worst_numeric: Vec<PathScore>,
}

/// All per-path results.
pub(crate) struct PathResults {
    pub compared: Vec<PathComparison>,
    pub summary: PathSummary,
    pub only_in_original: Vec<OneSidedPath>,
    pub only_in_synthetic: Vec<OneSidedPath>,
}

pub(crate) fn compare_paths(
    original: &PathIndex,
    synthetic: &PathIndex,
    threshold: usize,
    worst: usize,
) -> Result<PathResults, XmlError> {
    let synthetic_by_text: FastMap<&str, &PathValues> =
        synthetic.entries.iter().map(|e| (e.text.as_str(), e)).collect();
    let original_texts: FastSet<&str> = original.entries.iter().map(|e| e.text.as_str()).collect();
    let mut compared = Vec::new();
    let mut only_in_original = Vec::new();
    for o in &original.entries {
        let Some(s) = synthetic_by_text.get(o.text.as_str()) else {
            only_in_original.push(OneSidedPath {
                path: o.text.clone(),
                occurrences: o.occurrences,
            });
            continue;
        };
        let (metric, shape) = if o.is_numeric(threshold) {
            (numeric(o, s)?, quantiles(o, s))
        } else {
            (categorical(o, s), shares(o, s))
        };
        compared.push(PathComparison {
            path: o.text.clone(),
            original_occurrences: o.occurrences,
            synthetic_occurrences: s.occurrences,
            metric,
            shape,
        });
    }
    let mut only_in_synthetic: Vec<OneSidedPath> = synthetic
        .entries
        .iter()
        .filter(|e| !original_texts.contains(e.text.as_str()))
        .map(|e| OneSidedPath {
            path: e.text.clone(),
            occurrences: e.occurrences,
        })
        .collect();
    // Stable sorts: ties stay in first-seen order.
    only_in_original.sort_by_key(|p| std::cmp::Reverse(p.occurrences));
    only_in_synthetic.sort_by_key(|p| std::cmp::Reverse(p.occurrences));
    let summary = summarize(&compared, worst);
    Ok(PathResults {
        compared,
        summary,
        only_in_original,
        only_in_synthetic,
    })
}

fn categorical(o: &PathValues, s: &PathValues) -> PathMetric {
    let mut pairs: Vec<(u64, u64)> = o.values.paired(&s.values).collect();
    pairs.extend(o.truncated.paired(&s.truncated));
    pairs.push((
        o.occurrences.saturating_sub(o.valued()),
        s.occurrences.saturating_sub(s.valued()),
    ));
    let synthetic_unseen = s
        .values
        .iter()
        .filter(|(v, _)| !o.values.contains(v.as_str()))
        .chain(s.truncated.iter().filter(|(v, _)| !o.truncated.contains(v.as_str())))
        .map(|(_, n)| n)
        .sum();
    PathMetric::Categorical {
        total_variation: total_variation(&pairs),
        original_distinct: o.distinct(),
        synthetic_distinct: s.distinct(),
        synthetic_unseen,
    }
}

fn numeric(o: &PathValues, s: &PathValues) -> Result<PathMetric, XmlError> {
    let (ks_statistic, p_value) = if s.numbers.is_empty() {
        (1.0, 0.0)
    } else {
        let ks = ks_two_sample(&o.numbers, &s.numbers).map_err(|source| XmlError::CompareKs {
            path: o.text.clone(),
            source,
        })?;
        (ks.statistic, ks.p_value)
    };
    Ok(PathMetric::Numeric {
        ks_statistic,
        p_value,
        original_n: o.numbers.len(),
        synthetic_n: s.numbers.len(),
        synthetic_non_numeric: s.non_numeric,
    })
}

fn quantiles(o: &PathValues, s: &PathValues) -> ValueShape {
    let at = |numbers: &[f64]| -> Vec<f64> {
        let mut sorted: Vec<f64> = numbers.iter().copied().filter(|v| !v.is_nan()).collect();
        sorted.sort_unstable_by(f64::total_cmp);
        let q = |i: usize| i as f64 / (SHAPE_QUANTILES - 1) as f64;
        (0..SHAPE_QUANTILES)
            .filter_map(|i| exp_stats::percentile(&sorted, q(i)))
            .collect()
    };
    ValueShape::Quantiles {
        original: at(&o.numbers),
        synthetic: at(&s.numbers),
    }
}

fn shares(o: &PathValues, s: &PathValues) -> ValueShape {
    let mut top: Vec<(&String, u64)> = o.values.iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    top.truncate(SHAPE_VALUES);
    let share = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    ValueShape::Shares {
        values: top.iter().map(|(v, _)| (*v).clone()).collect(),
        original: top.iter().map(|(_, n)| share(*n, o.occurrences)).collect(),
        synthetic: top
            .iter()
            .map(|(v, _)| share(s.values.get(v.as_str()), s.occurrences))
            .collect(),
    }
}

fn summarize(compared: &[PathComparison], worst: usize) -> PathSummary {
    let mut tv = Vec::new();
    let mut ks = Vec::new();
    for c in compared {
        match c.metric {
            PathMetric::Categorical { total_variation, .. } => tv.push(score(c, total_variation)),
            PathMetric::Numeric { ks_statistic, .. } => ks.push(score(c, ks_statistic)),
        }
    }
    let stats = |v: &[PathScore]| {
        let max = v.iter().map(|s| s.value).fold(0.0, f64::max);
        let mean = if v.is_empty() {
            0.0
        } else {
            v.iter().map(|s| s.value).sum::<f64>() / v.len() as f64
        };
        (max, mean)
    };
    let (max_total_variation, mean_total_variation) = stats(&tv);
    let (max_ks, mean_ks) = stats(&ks);
    let (categorical_paths, numeric_paths) = (tv.len(), ks.len());
    PathSummary {
        categorical_paths,
        numeric_paths,
        max_total_variation,
        mean_total_variation,
        max_ks,
        mean_ks,
        worst_categorical: top(tv, worst),
        worst_numeric: top(ks, worst),
    }
}

fn score(c: &PathComparison, value: f64) -> PathScore {
    PathScore {
        path: c.path.clone(),
        value,
    }
}

fn top(mut scores: Vec<PathScore>, n: usize) -> Vec<PathScore> {
    scores.sort_by(|a, b| b.value.total_cmp(&a.value).then_with(|| a.path.cmp(&b.path)));
    scores.truncate(n);
    scores
}
