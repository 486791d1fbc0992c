//! The summary records of `set.json`: corpus table, attribute policy,
//! fitting summary and skipped documents.

use exp_stats::fit::Family;
use serde::{Deserialize, Serialize};

use super::NumericPath;
use crate::{AttributePolicy, CorpusSummary, PathInfo, SkipReason, Skipped, Structure};

/// Format version of the set directory written by this crate.
pub const SET_VERSION: u32 = 2;

/// The corpus summary in the layout of the published corpus table: counts
/// of distinct tags, attributes, paths and structures, documents, and the
/// frequency statistics of structures and paths.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CorpusTable {
    pub unique_tags: usize,
    pub unique_attributes: usize,
    pub paths: usize,
    pub structures: usize,
    pub documents: u64,
    /// Documents per structure.
    pub structure_frequency: FrequencyStats,
    /// Occurrences (leaves or attribute occurrences) per path.
    pub path_frequency: FrequencyStats,
}

impl CorpusTable {
    pub fn new(summary: &CorpusSummary, structures: &[Structure], paths: &[PathInfo]) -> Self {
        Self {
            unique_tags: summary.unique_tags,
            unique_attributes: summary.unique_attributes,
            paths: summary.paths,
            structures: summary.structures,
            documents: summary.documents,
            structure_frequency: FrequencyStats::of(structures.iter().map(|s| s.count)),
            path_frequency: FrequencyStats::of(paths.iter().map(|p| p.occurrences)),
        }
    }
}

/// Max, min, mean and median of a list of frequencies (all 0 when empty).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct FrequencyStats {
    pub max: u64,
    pub min: u64,
    pub mean: f64,
    /// The middle value, or the mean of the two middle values.
    pub median: f64,
}

impl FrequencyStats {
    pub fn of(values: impl Iterator<Item = u64>) -> Self {
        let mut v: Vec<u64> = values.collect();
        if v.is_empty() {
            return Self::default();
        }
        v.sort_unstable();
        let n = v.len();
        let total: u128 = v.iter().map(|&x| u128::from(x)).sum();
        let mid = v.get(n / 2).copied().unwrap_or(0);
        let median = if n % 2 == 1 {
            mid as f64
        } else {
            let below = v.get(n / 2 - 1).copied().unwrap_or(0);
            (below as f64 + mid as f64) / 2.0
        };
        Self {
            max: v.last().copied().unwrap_or(0),
            min: v.first().copied().unwrap_or(0),
            mean: total as f64 / n as f64,
            median,
        }
    }
}

/// [`AttributePolicy`] as written in `set.json`:
/// `{"mode": "keep"}`, `{"mode": "names"}`, `{"mode": "auto", "max_distinct": K}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum PolicyRecord {
    Keep,
    Names,
    Auto { max_distinct: usize },
}

impl From<AttributePolicy> for PolicyRecord {
    fn from(policy: AttributePolicy) -> Self {
        match policy {
            AttributePolicy::Keep => PolicyRecord::Keep,
            AttributePolicy::Names => PolicyRecord::Names,
            AttributePolicy::Auto { max_distinct } => PolicyRecord::Auto { max_distinct },
        }
    }
}

impl From<PolicyRecord> for AttributePolicy {
    fn from(policy: PolicyRecord) -> Self {
        match policy {
            PolicyRecord::Keep => AttributePolicy::Keep,
            PolicyRecord::Names => AttributePolicy::Names,
            PolicyRecord::Auto { max_distinct } => AttributePolicy::Auto { max_distinct },
        }
    }
}

/// How the numeric paths were fitted and which families won.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FittingSummary {
    pub numeric_paths: usize,
    /// Paths no family could be fitted to (generation draws uniformly in
    /// `[min, max]`).
    pub without_fit: usize,
    /// Winning families with at least one path, most paths first (ties in
    /// [`Family::ALL`] order).
    pub families: Vec<FamilyCount>,
    /// Most points the iterative estimators of a fit summed over (0: every
    /// distinct value); see [`SetOptions::sketch_points`](super::SetOptions).
    #[serde(alias = "max_sample")]
    pub sketch_points: usize,
    /// Paths with more distinct values than `sketch_points`, fitted on a sketch.
    #[serde(alias = "subsampled_paths")]
    pub sketched_paths: usize,
}

/// Numeric paths a family won and their share of all numeric paths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyCount {
    pub family: Family,
    pub paths: usize,
    pub share: f64,
}

impl FittingSummary {
    /// Counts winners; the sketch fields are left at 0 for the caller.
    pub fn of(numeric: &[NumericPath]) -> Self {
        let total = numeric.len();
        let families = Family::ALL
            .into_iter()
            .map(|family| {
                let paths = numeric
                    .iter()
                    .filter(|p| p.fit.as_ref().is_some_and(|f| f.family == family))
                    .count();
                FamilyCount {
                    family,
                    paths,
                    share: if total == 0 { 0.0 } else { paths as f64 / total as f64 },
                }
            })
            .filter(|c| c.paths > 0);
        let mut families: Vec<FamilyCount> = families.collect();
        // Stable: ties stay in `Family::ALL` order.
        families.sort_by_key(|c| std::cmp::Reverse(c.paths));
        Self {
            numeric_paths: total,
            without_fit: numeric.iter().filter(|p| p.fit.is_none()).count(),
            families,
            sketch_points: 0,
            sketched_paths: 0,
        }
    }
}

/// Why a document was skipped, as written in `set.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipKind {
    Malformed,
    Truncated,
    Io,
}

/// A skipped (malformed) document: input, byte position and reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedRecord {
    /// Input name (file path); replaced like every other string in an
    /// obfuscated set.
    pub input: String,
    pub position: u64,
    pub kind: SkipKind,
    /// The parser's message. Left out (`None`) in an obfuscated set: it may
    /// quote tag names.
    pub detail: Option<String>,
}

impl From<&Skipped> for SkippedRecord {
    fn from(s: &Skipped) -> Self {
        let (kind, detail) = match &s.reason {
            SkipReason::Malformed(m) | SkipReason::Encoding(m) => (SkipKind::Malformed, Some(m.clone())),
            SkipReason::Truncated => (SkipKind::Truncated, None),
            SkipReason::Io(m) => (SkipKind::Io, Some(m.clone())),
        };
        Self {
            input: s.input.clone(),
            position: s.position,
            kind,
            detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequency_stats() {
        let s = FrequencyStats::of([5u64, 1, 3, 7].into_iter());
        assert_eq!((s.max, s.min, s.mean, s.median), (7, 1, 4.0, 4.0));
        let s = FrequencyStats::of([2u64, 9, 4].into_iter());
        assert_eq!((s.max, s.min, s.median), (9, 2, 4.0));
        assert_eq!(FrequencyStats::of(std::iter::empty()), FrequencyStats::default());
    }

    #[test]
    fn policy_json() {
        let json = serde_json::to_string(&PolicyRecord::Auto { max_distinct: 5 }).expect("json");
        assert_eq!(json, r#"{"mode":"auto","max_distinct":5}"#);
        assert_eq!(
            AttributePolicy::from(PolicyRecord::from(AttributePolicy::Names)),
            AttributePolicy::Names
        );
    }
}
