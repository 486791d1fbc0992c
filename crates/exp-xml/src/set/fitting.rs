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
    /// likelihoods over the sketch while iterating, and over every value
    /// once at the end (to rank all families on the same data). 0 fits
    /// every distinct value.
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
        let (numeric, sketched_paths) = fit_all(&extraction.numeric, options);
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
                sketched_paths,
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
/// are put back in input order. Also returns how many paths were fitted on
/// a sketch.
pub fn fit_all(summaries: &[NumericSummary], options: &SetOptions) -> (Vec<NumericPath>, usize) {
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        n => n,
    }
    .clamp(1, summaries.len().max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, (NumericPath, bool))> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(summary) = summaries.get(i) else { break };
                        done.push((i, fit_one(summary, options.sketch_points)));
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
    let sketched = results.iter().filter(|(_, (_, sketched))| *sketched).count();
    (results.into_iter().map(|(_, (p, _))| p).collect(), sketched)
}

/// Fits one path; a path no family fits gets `fit: None`.
pub fn fit_path(summary: &NumericSummary, sketch_points: usize) -> NumericPath {
    fit_one(summary, sketch_points).0
}

/// [`fit_path`], and whether the fit summed over a sketch.
fn fit_one(summary: &NumericSummary, sketch_points: usize) -> (NumericPath, bool) {
    let points = if sketch_points == 0 { usize::MAX } else { sketch_points };
    let selection = select_sketched(&summary.values, points, &Family::ALL).ok();
    let fit = selection.as_ref().map(|s| record(&s.best));
    let runner_up = selection.as_ref().and_then(|s| s.runner_up.as_ref()).map(record);
    let path = NumericPath {
        path: summary.path,
        fit,
        runner_up,
        n: summary.n,
        min: summary.min,
        max: summary.max,
        is_integer: summary.is_integer,
        decimals: summary.max_decimals,
        format: summary.format,
    };
    (path, selection.is_some_and(|s| s.sketched))
}

fn record(fit: &Fit) -> FitRecord {
    FitRecord {
        family: fit.family,
        params: fit.params.iter().map(|&(name, v)| (name.to_owned(), v)).collect(),
        log_likelihood: fit.log_likelihood,
        aic: fit.aic,
    }
}
