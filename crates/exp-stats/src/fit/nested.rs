//! The rule for nested families: a family that has a simpler candidate as a
//! special case (a Weibull or gamma of shape 1 is an exponential) always
//! fits at least as well, and AIC's penalty of 2 per parameter still lets
//! it win on about 16 % of samples drawn from the simpler family
//! (P(χ²₁ > 2)). So the larger family is chosen only when it beats the
//! simpler one by more than a likelihood-ratio test at 5 % allows:
//!
//! ```text
//! 2 (ln L̂_larger − ln L̂_simpler) > 3.841   (the 95 % point of χ² with 1 degree of freedom)
//! ```
//!
//! Every pair differs by one parameter. Where the simpler family lies on
//! the boundary (normal: Student t with df → ∞; Poisson: negative binomial
//! with r → ∞) the test is conservative (about 2.5 %), which errs towards
//! the simpler family, as intended.

use super::{Family, Fit};

/// The 95 % point of χ² with one degree of freedom.
pub const NESTED_LR_CRITICAL: f64 = 3.841_458_820_694_124;

/// Each family and the simpler candidates it contains as special cases.
pub const NESTED: [(Family, &[Family]); 4] = [
    (Family::Weibull, &[Family::Exponential]),
    (Family::Gamma, &[Family::Exponential, Family::ChiSquared]),
    (Family::StudentT, &[Family::Normal, Family::Cauchy]),
    (Family::NegativeBinomial, &[Family::Poisson, Family::Geometric]),
];

/// The simpler families `family` contains.
pub fn simpler_than(family: Family) -> &'static [Family] {
    NESTED
        .iter()
        .find(|(larger, _)| *larger == family)
        .map_or(&[], |(_, simpler)| simpler)
}

/// Index in `ranked` (ascending AIC) of the fit to choose: the first,
/// unless a simpler family it nests was fitted and the first does not beat
/// it by the rule above; then that simpler fit (the lowest AIC of those),
/// itself checked again.
pub(crate) fn choose(ranked: &[&Fit]) -> Option<usize> {
    if ranked.is_empty() {
        return None;
    }
    let mut chosen = 0;
    // Each step moves to a family with fewer parameters: at most 3 steps.
    for _ in 0..ranked.len() {
        let best = ranked[chosen];
        let kept = ranked.iter().position(|fit| {
            simpler_than(best.family).contains(&fit.family)
                && 2.0 * (best.log_likelihood - fit.log_likelihood) <= NESTED_LR_CRITICAL
        });
        match kept {
            Some(simpler) => chosen = simpler,
            None => break,
        }
    }
    Some(chosen)
}
