//! From an extraction to a synthesis set: every numeric path is fitted with
//! [`exp_stats::fit::select_sketched`] over all 13 families, in parallel.

use std::sync::atomic::{AtomicUsize, Ordering};

use exp_stats::fit::{select_sketched, Family, Fit};

use super::info::{CorpusTable, FittingSummary, SkippedRecord, SET_VERSION};
use super::{FitRecord, NumericPath, SetInfo, SynthesisSet};
use crate::{Config, Extraction, NumericSummary};

/// Default most points a fit's iterative likelihoods sum over; see
/// [`SetOptions::sketch_points`] and decision 0008.
pub const DEFAULT_SKETCH_POINTS: usize = 512;

/// How a set is made from an extraction.
#[derive(Debug, Clone)]
pub struct SetOptions {
    /// Fitting threads; 0 = the available parallelism.
    pub threads: usize,
    /// A path with more distinct values than this is fitted on a sketch of
    /// this many weighted points ([`exp_stats::fit::select_sketched`]): the
    /// closed-form estimators still see every value, the iterative ones
    /// (Weibull, Cauchy, Student t, F, negative binomial) sum their
    /// likelihoods over the sketch. 0 fits every distinct value.
    pub sketch_points: usize,
    /// Name of the root element that held the split documents, if known
    /// (written to `set.json` so generation can wrap documents alike).
    pub split_root: Option<String>,
}

impl Default for SetOptions {
    fn default() -> Self {
        Self {
            threads: 0,
            sketch_points: DEFAULT_SKETCH_POINTS,
            split_root: None,
        }
    }
}

impl SynthesisSet {
    /// Fits every numeric path and gathers the set. `config` must be the
    /// configuration the extraction ran with (it is recorded in `set.json`).
    /// Deterministic: the result does not depend on `options.threads`.
    pub fn from_extraction(extraction: Extraction, config: &Config, options: &SetOptions) -> SynthesisSet {
        let numeric = fit_all(&extraction.numeric, options);
        let corpus = CorpusTable::new(&extraction.summary, &extraction.structures, &extraction.paths);
        let info = SetInfo {
            version: SET_VERSION,
            split_at: config.split_at.clone(),
            split_root: options.split_root.clone(),
            obfuscated: false,
            corpus,
            attribute_policy: config.policy.into(),
            categorical_threshold: config.categorical_threshold,
            fitting: FittingSummary {
                sketch_points: options.sketch_points,
                sketched_paths: sketched_paths(&extraction.numeric, options.sketch_points),
                ..FittingSummary::of(&numeric)
            },
            skipped: extraction.summary.skipped.iter().map(SkippedRecord::from).collect(),
        };
        SynthesisSet {
            structures: extraction.structures,
            paths: extraction.paths,
            categorical: extraction.categorical,
            numeric,
            info,
        }
    }
}

/// Fits the paths on `options.threads` threads; each takes the next
/// unfitted path (large paths do not stall a fixed partition) and results
/// are put back in input order.
pub fn fit_all(summaries: &[NumericSummary], options: &SetOptions) -> Vec<NumericPath> {
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        n => n,
    }
    .clamp(1, summaries.len().max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, NumericPath)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(summary) = summaries.get(i) else { break };
                        done.push((i, fit_path(summary, options.sketch_points)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| match w.join() {
                Ok(done) => done,
                // A panicking fit is a bug in exp-stats; re-raise it here.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    results.sort_by_key(|&(i, _)| i);
    results.into_iter().map(|(_, p)| p).collect()
}

/// Fits one path; a path no family fits gets `fit: None`.
pub fn fit_path(summary: &NumericSummary, sketch_points: usize) -> NumericPath {
    let points = if sketch_points == 0 { usize::MAX } else { sketch_points };
    let (fit, runner_up) = match select_sketched(&summary.values, points, &Family::ALL) {
        Ok(selection) => (Some(record(&selection.best)), selection.runner_up.as_ref().map(record)),
        Err(_) => (None, None),
    };
    NumericPath {
        path: summary.path,
        fit,
        runner_up,
        n: summary.n,
        min: summary.min,
        max: summary.max,
        is_integer: summary.is_integer,
        decimals: summary.max_decimals,
        format: summary.format,
    }
}

/// How many paths have more distinct values than `sketch_points` (their
/// values are sorted, so equal values are neighbours).
fn sketched_paths(summaries: &[NumericSummary], sketch_points: usize) -> usize {
    if sketch_points == 0 {
        return 0;
    }
    let distinct = |values: &[f64]| 1 + values.windows(2).filter(|w| w[0] != w[1]).count();
    summaries
        .iter()
        .filter(|s| s.values.len() > sketch_points && distinct(&s.values) > sketch_points)
        .count()
}

fn record(fit: &Fit) -> FitRecord {
    FitRecord {
        family: fit.family,
        params: fit.params.iter().map(|&(name, v)| (name.to_owned(), v)).collect(),
        log_likelihood: fit.log_likelihood,
        aic: fit.aic,
    }
}
