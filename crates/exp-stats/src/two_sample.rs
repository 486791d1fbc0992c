//! Two runs (or two points) of one metric compared: Welch's t-test for a
//! difference, two one-sided tests (TOST) for equivalence within a margin,
//! and the verdict `expc report A B` gives from both.
//!
//! The difference is `other − baseline`; the margin is relative to the
//! baseline's mean (± 5 % by default). The verdict at level α:
//!
//! - `equivalent`: TOST rejects both "the difference is ≤ −margin" and
//!   "≥ +margin" (p < α): the (1 − 2α) interval of the difference lies
//!   inside the margin;
//! - `different`: not equivalent, and Welch's test rejects "no difference"
//!   (p < α);
//! - `inconclusive`: neither (too few or too noisy repetitions to say).
//!
//! The same numbers as SciPy's `ttest_ind(other, baseline, equal_var=False)`
//! and statsmodels' `ttost_ind(other, baseline, -m, m, usevar='unequal')`.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Welch's t-test of `other` against `baseline`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// mean(other) − mean(baseline).
    pub difference: f64,
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value of "no difference".
    pub p: f64,
}

/// What a comparison concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Equivalent,
    Different,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Equivalent => "equivalent",
            Verdict::Different => "different",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// A comparison of one metric between two sets of repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    pub welch: Welch,
    /// The equivalence margin, absolute (margin ratio × |mean(baseline)|).
    pub margin: f64,
    /// TOST's p-value: the larger of the two one-sided tests'.
    pub equivalence_p: f64,
    pub verdict: Verdict,
}

/// Mean, variance of the mean (s²/n) and n of a sample.
struct Moments {
    mean: f64,
    var_of_mean: f64,
    n: f64,
}

fn moments(x: &[f64]) -> Option<Moments> {
    if x.len() < 2 || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    Some(Moments {
        mean,
        var_of_mean: var / n,
        n,
    })
}

/// The standard error of the difference and its Welch–Satterthwaite
/// degrees of freedom; `None` when both samples have no variance.
fn welch_se_df(a: &Moments, b: &Moments) -> Option<(f64, f64)> {
    let se2 = a.var_of_mean + b.var_of_mean;
    if se2 <= 0.0 || !se2.is_finite() {
        return None;
    }
    let df = se2 * se2 / (a.var_of_mean.powi(2) / (a.n - 1.0) + b.var_of_mean.powi(2) / (b.n - 1.0));
    Some((se2.sqrt(), df))
}

/// Welch's t-test; `None` for fewer than 2 values on a side, a non-finite
/// value, or no variance at all.
pub fn welch(baseline: &[f64], other: &[f64]) -> Option<Welch> {
    let (a, b) = (moments(baseline)?, moments(other)?);
    let (se, df) = welch_se_df(&a, &b)?;
    let difference = b.mean - a.mean;
    let t = difference / se;
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(Welch {
        difference,
        t,
        df,
        p: 2.0 * dist.sf(t.abs()),
    })
}

/// Welch's test and TOST at level `alpha` with a margin of `margin_ratio` ×
/// |mean(baseline)|, and the verdict of the module docs.
pub fn compare(baseline: &[f64], other: &[f64], margin_ratio: f64, alpha: f64) -> Option<Comparison> {
    let welch = welch(baseline, other)?;
    let (a, b) = (moments(baseline)?, moments(other)?);
    let (se, df) = welch_se_df(&a, &b)?;
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let margin = margin_ratio * a.mean.abs();
    // H0: difference ≤ −margin, against "larger"; H0: difference ≥ margin, against "smaller".
    let p_lower = dist.sf((welch.difference + margin) / se);
    let p_upper = dist.cdf((welch.difference - margin) / se);
    let equivalence_p = p_lower.max(p_upper);
    let verdict = if equivalence_p < alpha {
        Verdict::Equivalent
    } else if welch.p < alpha {
        Verdict::Different
    } else {
        Verdict::Inconclusive
    };
    Some(Comparison {
        welch,
        margin,
        equivalence_p,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
    }

    /// Reference values: SciPy 1.17.1 `ttest_ind(b, a, equal_var=False)`
    /// and statsmodels 0.15.0 `ttost_ind(b, a, -m, m, usevar='unequal')`
    /// with m = 0.05 · |mean(a)|.
    /// (baseline, other, TOST p, Welch p, t, df, verdict).
    type Case = (&'static [f64], &'static [f64], f64, f64, f64, f64, Verdict);

    #[test]
    fn welch_and_tost_equal_scipy_and_statsmodels() {
        #[rustfmt::skip]
        let cases: [Case; 4] = [
            (&[10.1, 9.8, 10.3, 10.0, 9.9, 10.2], &[10.0, 10.1, 9.9, 10.2, 10.0, 9.8],
             0.0004922928576471991, 0.6137087698530571, -0.5222329678670833, 9.3076923076923, Verdict::Equivalent),
            (&[10.1, 9.8, 10.3, 10.0, 9.9, 10.2], &[11.0, 11.2, 10.9, 11.1, 11.3, 10.8],
             0.999514387111333, 3.206553153860306e-06, 9.258200997725524, 10.0, Verdict::Different),
            (&[5.0, 7.0, 6.0], &[5.5, 8.0, 6.5, 9.0],
             0.8140372913666714, 0.25360760259634535, 1.2909944487358056, 4.959183673469388, Verdict::Inconclusive),
            (&[100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1], &[100.3, 100.9, 99.6, 100.4, 99.9, 100.0, 100.6, 99.7],
             7.446462264183508e-11, 0.5548562276446385, 0.606222266558278, 12.936407794262307, Verdict::Equivalent),
        ];
        for (a, b, tost_p, welch_p, t, df, verdict) in cases {
            let c = compare(a, b, 0.05, 0.05).unwrap();
            assert!(close(c.equivalence_p, tost_p), "{} against {tost_p}", c.equivalence_p);
            assert!(close(c.welch.p, welch_p), "{} against {welch_p}", c.welch.p);
            assert!(close(c.welch.t, t) && close(c.welch.df, df));
            assert_eq!(c.verdict, verdict);
        }
    }

    #[test]
    fn too_few_or_constant_values_give_no_test() {
        assert_eq!(welch(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(welch(&[1.0, 1.0], &[1.0, 1.0]), None);
        assert_eq!(welch(&[1.0, f64::NAN], &[1.0, 2.0]), None);
    }
}
