//! Maximum-likelihood fitting of parametric families and model selection by
//! AIC.
//!
//! [`fit`] estimates the parameters of one [`Family`] from a sample;
//! [`select`] fits a list of candidates and ranks them by Akaike's
//! information criterion
//!
//! ```text
//! AIC = 2k − 2 ln L̂        (k = number of fitted parameters, L̂ = maximised likelihood)
//! ```
//!
//! Estimators use closed forms where they exist and bounded, safeguarded
//! iterations otherwise (see each family's module). They work on a
//! sample of exact statistics and weighted points (the distinct values,
//! or with [`select_sketched`] a sketch of them), so an iteration is O(1)
//! or O(points). On exact points the reported log-likelihood is recomputed
//! once with statrs' `ln_pdf`/`ln_pmf`, so the density definitions are
//! statrs', not ours; on a sketch it is ours, from the exact statistics
//! where the family has them.
//!
//! The smallest AIC wins, except against a simpler family it nests: the
//! larger family must then also pass a likelihood-ratio test at 5 %
//! (`nested.rs`). On a sketch every fit is scored on the same data before
//! the ranking (`rescore.rs`).
//!
//! Everything is deterministic: no randomness, fixed starting points, fixed
//! iteration limits, ties in AIC broken by candidate order.

mod continuous;
#[cfg(test)]
mod derivative_tests;
mod discrete;
mod discretize;
mod draw;
mod gaps;
mod heavy;
mod nested;
mod newton;
mod optimize;
mod rescore;
mod sample;
#[cfg(test)]
mod tests;

use std::fmt;

pub use draw::{param_names, DrawError, FittedSampler};
pub use nested::{simpler_than, NESTED, NESTED_LR_CRITICAL};
use sample::Sample;

/// A parametric family that [`fit`] can estimate.
///
/// Parameterisations (and the names in [`Fit::params`]):
///
/// | family | params | support |
/// |---|---|---|
/// | `Beta` | `alpha`, `beta` | 0 < x < 1 |
/// | `Cauchy` | `location`, `scale` | ℝ |
/// | `ChiSquared` | `df` (standard one-parameter family, no location/scale) | x > 0 |
/// | `Exponential` | `rate` | x ≥ 0 |
/// | `F` | `d1`, `d2` | x > 0 |
/// | `Gamma` | `shape`, `rate` | x > 0 |
/// | `Geometric` | `p` — failures before the first success | x ∈ {0, 1, …} |
/// | `LogNormal` | `mu`, `sigma` (of ln x) | x > 0 |
/// | `NegativeBinomial` | `r`, `p` — failures before the r-th success | x ∈ {0, 1, …} |
/// | `Normal` | `mean`, `sd` | ℝ |
/// | `Poisson` | `lambda` | x ∈ {0, 1, …} |
/// | `StudentT` | `location`, `scale`, `df` | ℝ |
/// | `Weibull` | `shape`, `scale` | x > 0 |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Beta,
    Cauchy,
    ChiSquared,
    Exponential,
    F,
    Gamma,
    Geometric,
    LogNormal,
    NegativeBinomial,
    Normal,
    Poisson,
    StudentT,
    Weibull,
}

impl Family {
    /// Every family, in a fixed (alphabetical) order.
    pub const ALL: [Family; 13] = [
        Family::Beta,
        Family::Cauchy,
        Family::ChiSquared,
        Family::Exponential,
        Family::F,
        Family::Gamma,
        Family::Geometric,
        Family::LogNormal,
        Family::NegativeBinomial,
        Family::Normal,
        Family::Poisson,
        Family::StudentT,
        Family::Weibull,
    ];

    /// True for the families over the non-negative integers.
    pub fn is_discrete(self) -> bool {
        matches!(self, Family::Geometric | Family::NegativeBinomial | Family::Poisson)
    }

    /// Number of free parameters, the k of AIC.
    pub fn n_params(self) -> usize {
        match self {
            Family::ChiSquared | Family::Exponential | Family::Geometric | Family::Poisson => 1,
            Family::StudentT => 3,
            _ => 2,
        }
    }

    /// The snake_case name, identical to the serde representation.
    pub fn name(self) -> &'static str {
        match self {
            Family::Beta => "beta",
            Family::Cauchy => "cauchy",
            Family::ChiSquared => "chi_squared",
            Family::Exponential => "exponential",
            Family::F => "f",
            Family::Gamma => "gamma",
            Family::Geometric => "geometric",
            Family::LogNormal => "log_normal",
            Family::NegativeBinomial => "negative_binomial",
            Family::Normal => "normal",
            Family::Poisson => "poisson",
            Family::StudentT => "student_t",
            Family::Weibull => "weibull",
        }
    }

    /// The family with this [`name`](Family::name), if any.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fitted distribution: maximum-likelihood parameters and the fit quality.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub family: Family,
    /// Named parameters in the order of the table on [`Family`].
    pub params: Vec<(&'static str, f64)>,
    /// ln L̂ = Σ ln f(xᵢ; θ̂).
    pub log_likelihood: f64,
    /// 2k − 2 ln L̂.
    pub aic: f64,
    /// Number of values fitted.
    pub n: usize,
}

impl Fit {
    /// The parameter called `name`, if this family has one.
    pub fn param(&self, name: &str) -> Option<f64> {
        self.params.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }

    fn new(family: Family, params: Vec<(&'static str, f64)>, log_likelihood: f64, n: usize) -> Fit {
        let aic = 2.0 * family.n_params() as f64 - 2.0 * log_likelihood;
        Fit {
            family,
            params,
            log_likelihood,
            aic,
            n,
        }
    }
}

/// Why a family could not be fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// A value lies outside the family's support (or is not finite).
    #[error("{family}: {reason}")]
    Domain { family: Family, reason: &'static str },
    /// Fewer values than the family needs (`needed` = parameters + 1).
    #[error("too few values: need {needed}, got {got}")]
    TooFewValues { needed: usize, got: usize },
    /// The iteration did not converge within its bound, or the likelihood has
    /// no finite maximiser (negative binomial on data with variance ≤ mean).
    #[error("{family}: maximum-likelihood fit did not converge")]
    NoConvergence { family: Family },
    /// All values are equal: no family with a spread parameter has a MLE.
    #[error("all values are equal")]
    Degenerate,
    /// [`select`] found no candidate that could be fitted.
    #[error("no candidate family could be fitted")]
    NoCandidate,
}

/// Fits `family` to `data` by maximum likelihood.
pub fn fit(family: Family, data: &[f64]) -> Result<Fit, FitError> {
    let sample = Sample::new(data)?;
    fit_sample(family, &sample)
}

fn fit_sample(family: Family, s: &Sample) -> Result<Fit, FitError> {
    let needed = family.n_params() + 1;
    if s.n < needed {
        return Err(FitError::TooFewValues { needed, got: s.n });
    }
    match family {
        Family::Normal => continuous::normal(s),
        Family::Exponential => continuous::exponential(s),
        Family::LogNormal => continuous::log_normal(s),
        Family::Gamma => continuous::gamma(s),
        Family::ChiSquared => continuous::chi_squared(s),
        Family::Weibull => continuous::weibull(s),
        Family::Beta => continuous::beta(s),
        Family::Cauchy => heavy::cauchy(s),
        Family::StudentT => heavy::student_t(s),
        Family::F => heavy::f(s),
        Family::Poisson => discrete::poisson(s),
        Family::Geometric => discrete::geometric(s),
        Family::NegativeBinomial => discrete::negative_binomial(s),
    }
}

/// The result of [`select`].
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The chosen fit: the smallest AIC, unless it nests a simpler family
    /// that it does not beat by [`NESTED_LR_CRITICAL`] (then that one).
    pub best: Fit,
    /// The fit with the smallest AIC other than `best`, if more than one
    /// family fitted.
    pub runner_up: Option<Fit>,
    /// Every candidate in the order given, with its fit or why it failed.
    pub tried: Vec<(Family, Result<Fit, FitError>)>,
    /// The iterative likelihoods were summed over a sketch, not the data
    /// (only [`select_sketched`], on more distinct values than its points).
    pub sketched: bool,
}

impl Selection {
    /// How many candidates were skipped because the data lie outside their
    /// support (e.g. discrete families on non-integer data).
    pub fn domain_failures(&self) -> usize {
        self.tried
            .iter()
            .filter(|(_, r)| matches!(r, Err(FitError::Domain { .. })))
            .count()
    }
}

/// A continuous fit on integer data with its likelihood replaced by the
/// discretized one (see [`discretize`]); discrete fits are returned as they are.
fn on_mass_scale(fit: Fit, table: &[(f64, f64)]) -> Fit {
    match discretize::log_likelihood(&fit, table) {
        Some(ll) => Fit::new(fit.family, fit.params, ll, fit.n),
        None => fit,
    }
}

/// Fits every family in `candidates` and ranks the successful fits by AIC.
///
/// Families whose support does not contain the data are skipped (recorded in
/// [`Selection::tried`] as [`FitError::Domain`]); so are families whose fit
/// fails for other reasons. Ties in AIC go to the earlier candidate.
///
/// Densities and probability masses are not on a common scale, so when every
/// value is an integer the continuous fits (parameters still by maximum
/// likelihood on the values) are scored by the mass they put on
/// [k − ½, k + ½) around each value k, as if the data were rounded: their
/// log-likelihood and AIC in the result are those discretized ones, and all
/// families are ranked together. On integers spread wider than
/// `discretize::SMOOTH_SD` the density at k already is that mass (see there).
/// Errors: [`FitError::TooFewValues`] for an empty sample,
/// [`FitError::Degenerate`] when all values are equal,
/// [`FitError::NoCandidate`] when nothing could be fitted.
pub fn select(data: &[f64], candidates: &[Family]) -> Result<Selection, FitError> {
    select_sample(&Sample::new(data)?, candidates)
}

/// [`select`] on ascending `sorted` data, with the likelihoods of the
/// iterative estimators (Weibull, Cauchy, Student t, F, negative binomial)
/// summed over a sketch of at most `max_points` weighted points when the
/// data have more distinct values than that; the closed-form estimators
/// still use the exact statistics of all the data. The sketch is described
/// in the `sample` module: it cuts the sorted data into bins that are
/// narrow at the tails and wide in the middle, so its cost is O(points)
/// per likelihood evaluation instead of O(n).
///
/// The iterative families' parameters come from the sketch; every
/// [`Fit::log_likelihood`] is then summed over the data, so that the
/// families are ranked on the same data (`rescore.rs`). With `max_points`
/// at least the number of distinct values this is exactly [`select`].
pub fn select_sketched(sorted: &[f64], max_points: usize, candidates: &[Family]) -> Result<Selection, FitError> {
    select_sample(&Sample::sketched(sorted, max_points)?, candidates)
}

/// [`select`] on data given as distinct values with their counts (count
/// data as a frequency table), exactly.
pub fn select_table(table: &[(f64, u64)], candidates: &[Family]) -> Result<Selection, FitError> {
    select_sample(&Sample::from_table(table)?, candidates)
}

fn select_sample(sample: &Sample, candidates: &[Family]) -> Result<Selection, FitError> {
    let tried: Vec<(Family, Result<Fit, FitError>)> = candidates
        .iter()
        .map(|&family| (family, fit_sample(family, sample)))
        .collect();
    let tried: Vec<(Family, Result<Fit, FitError>)> = if sample.integer && sample.var.sqrt() < discretize::SMOOTH_SD {
        tried
            .into_iter()
            .map(|(family, result)| (family, result.map(|fit| on_mass_scale(fit, &sample.points))))
            .collect()
    } else {
        tried
    };
    let tried: Vec<(Family, Result<Fit, FitError>)> = match &sample.exact_table {
        Some(table) => tried
            .into_iter()
            .map(|(family, result)| (family, result.map(|fit| rescore::on_data(fit, table))))
            .collect(),
        None => tried,
    };
    let mut ranked: Vec<&Fit> = tried.iter().filter_map(|(_, r)| r.as_ref().ok()).collect();
    // Stable: the earlier candidate stays first on ties, deterministic in the candidate order.
    ranked.sort_by(|a, b| a.aic.total_cmp(&b.aic));
    let chosen = nested::choose(&ranked).ok_or(FitError::NoCandidate)?;
    let best = ranked[chosen].clone();
    let runner_up = ranked
        .iter()
        .enumerate()
        .find(|&(i, _)| i != chosen)
        .map(|(_, &fit)| fit.clone());
    Ok(Selection {
        best,
        runner_up,
        tried,
        sketched: !sample.exact,
    })
}
