//! Every fit of a sketched sample scored on the same data.
//!
//! On a sketch ([`select_sketched`](super::select_sketched)) the iterative
//! estimators (Weibull, Cauchy, Student t, F, negative binomial) sum their
//! likelihoods over the sketch's weighted points, while the closed forms use
//! the exact statistics of the data: two different data sets, so their
//! AICs do not compare. Measured on exponential data (n = 2000, a 512-point
//! sketch): the Weibull's sketch ln L̂ exceeded its exact value by about
//! 1.2, enough to win with shape 1.01 on 12 seeds of 12. So, after the
//! iterations (each O(points)), every iterative fit is scored once more on
//! the data's distinct values, O(distinct) per family.

use statrs::distribution::{Cauchy, Continuous, Discrete, FisherSnedecor, NegativeBinomial, StudentsT, Weibull};

use super::{Family, Fit};

/// The families whose reported log-likelihood on a sketch is the sketch's.
pub(crate) fn is_iterative(family: Family) -> bool {
    matches!(
        family,
        Family::Weibull | Family::Cauchy | Family::StudentT | Family::F | Family::NegativeBinomial
    )
}

/// `fit` with its log-likelihood (and AIC) summed over `distinct` (values
/// ascending with their counts: the data), when it is an iterative family's
/// and that sum is finite; otherwise `fit` as it is.
pub(crate) fn on_data(fit: Fit, distinct: &[(f64, f64)]) -> Fit {
    if !is_iterative(fit.family) {
        return fit;
    }
    match log_likelihood(&fit, distinct) {
        Some(ll) if ll.is_finite() => Fit::new(fit.family, fit.params, ll, fit.n),
        _ => fit,
    }
}

fn log_likelihood(fit: &Fit, distinct: &[(f64, f64)]) -> Option<f64> {
    let p = |i: usize| fit.params.get(i).map(|&(_, v)| v);
    let density = |d: &dyn Continuous<f64, f64>| distinct.iter().map(|&(x, c)| c * d.ln_pdf(x)).sum::<f64>();
    Some(match fit.family {
        Family::Weibull => density(&Weibull::new(p(0)?, p(1)?).ok()?),
        Family::Cauchy => density(&Cauchy::new(p(0)?, p(1)?).ok()?),
        Family::StudentT => density(&StudentsT::new(p(0)?, p(1)?, p(2)?).ok()?),
        Family::F => {
            FisherSnedecor::new(p(0)?, p(1)?).ok()?; // the parameters' check
            let ln_pdf = super::heavy::f_ln_pdf(p(0)?, p(1)?);
            distinct.iter().map(|&(x, c)| c * ln_pdf(x)).sum()
        }
        Family::NegativeBinomial => {
            let d = NegativeBinomial::new(p(0)?, p(1)?).ok()?;
            distinct.iter().map(|&(k, c)| c * d.ln_pmf(k as u64)).sum()
        }
        _ => return None,
    })
}
