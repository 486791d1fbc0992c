//! A synthesis set: what generation needs from a corpus, and what
//! `expc xml extract` writes to a set directory (Parquet tables plus
//! `set.json`).
//!
//! The tables mirror [`Extraction`](crate::Extraction) except that numeric
//! paths carry a fitted distribution instead of their raw values, so a set
//! can be shared (optionally obfuscated) without the corpus.

mod columns;
mod dir;
mod fitting;
mod info;

pub use dir::{read_set, write_set, SET_FILES};
pub use fitting::{fit_all, fit_path, SetOptions, DEFAULT_SKETCH_POINTS};
pub use info::{
    CorpusTable, FamilyCount, FittingSummary, FrequencyStats, PolicyRecord, SkipKind, SkippedRecord, SET_VERSION,
};

use exp_stats::fit::Family;

use crate::{CategoricalCount, Md5Hash, NumberFormat, PathInfo, Structure};

/// Everything generation needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthesisSet {
    /// By frequency, most frequent first.
    pub structures: Vec<Structure>,
    pub paths: Vec<PathInfo>,
    /// Grouped by path, most frequent value first.
    pub categorical: Vec<CategoricalCount>,
    pub numeric: Vec<NumericPath>,
    pub info: SetInfo,
}

/// A numeric path: its fitted family and what generated values must respect.
#[derive(Debug, Clone, PartialEq)]
pub struct NumericPath {
    pub path: Md5Hash,
    /// The family [`exp_stats::fit::select`] chooses (the smallest AIC, a
    /// nested family's extra parameter only past its likelihood-ratio
    /// test); `None` when no family could be
    /// fitted (generation then draws uniformly from `[min, max]`).
    pub fit: Option<FitRecord>,
    pub runner_up: Option<FitRecord>,
    /// Values the fit saw.
    pub n: u64,
    pub min: f64,
    pub max: f64,
    /// Every value was written as an integer.
    pub is_integer: bool,
    /// The most decimals seen.
    pub decimals: u32,
    pub format: NumberFormat,
}

/// A fitted family with its parameters in [`Family`]'s documented order.
#[derive(Debug, Clone, PartialEq)]
pub struct FitRecord {
    pub family: Family,
    pub params: Vec<(String, f64)>,
    pub log_likelihood: f64,
    pub aic: f64,
}

/// The `set.json` side of a set: corpus summary and how the set was made.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SetInfo {
    /// Format version of the set directory.
    pub version: u32,
    /// Element the documents were split at (`--split-at`), if any, and the
    /// name of the root element that held them, so generated documents can
    /// be wrapped the same way when several go to one file.
    pub split_at: Option<String>,
    pub split_root: Option<String>,
    /// True when every string of the set was replaced (`--obfuscate`).
    pub obfuscated: bool,
    /// The corpus summary, in the layout of the published corpus table.
    pub corpus: CorpusTable,
    /// How attribute values were treated (with K for `auto`).
    pub attribute_policy: PolicyRecord,
    /// Paths with at most this many distinct values are categorical, unless
    /// they are count data a discrete family fits better.
    pub categorical_threshold: usize,
    /// Share of numeric paths per winning family.
    pub fitting: FittingSummary,
    /// Malformed documents left out of the extraction.
    pub skipped: Vec<SkippedRecord>,
}

impl Default for SetInfo {
    fn default() -> Self {
        Self {
            version: SET_VERSION,
            split_at: None,
            split_root: None,
            obfuscated: false,
            corpus: CorpusTable::default(),
            attribute_policy: PolicyRecord::Keep,
            categorical_threshold: crate::DEFAULT_CATEGORICAL_THRESHOLD,
            fitting: FittingSummary::default(),
            skipped: Vec::new(),
        }
    }
}
