//! The generation draws have the distributions of exp-stats' samplers
//! (generator version 1): one-sample KS tests against the analytic CDF and
//! two-sample KS tests against the old sampler's own draws, on large
//! samples with fixed seeds (so they cannot flake; a wrong table, wedge or
//! tail shifts D far beyond the bound at these sizes).

use exp_plan::{Dist, DistValue, Unit};
use exp_stats::fit::Family;
use exp_stats::{ks_one_sample, ks_two_sample, FittedSampler, Rng, Sampler};

use super::FamilyDraw;
use crate::generate::ziggurat::{standard_exponential, standard_normal};

const N: usize = 200_000;
/// Smallest p-value accepted: a correct sampler falls below it once in a
/// thousand seeds, and these seeds were not chosen.
const ALPHA: f64 = 1e-3;

fn analytic(dist: Dist) -> Sampler {
    Sampler::new(&DistValue {
        unit: Unit::Count,
        dist,
    })
    .expect("valid parameters")
}

fn draws(n: usize, seed: u64, mut draw: impl FnMut(&mut Rng) -> f64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| draw(&mut rng)).collect()
}

/// KS against the analytic CDF and against version 1's sampler.
fn same_distribution(family: Family, params: &[(&str, f64)], cdf: Dist) {
    let params: Vec<(String, f64)> = params.iter().map(|&(n, v)| (n.to_owned(), v)).collect();
    let old = FittedSampler::from_named(family, &params).expect("valid parameters");
    let new = FamilyDraw::new(old.clone(), &params);
    assert!(!matches!(new, FamilyDraw::Other(_)), "{family} has a generation draw");
    let fresh = draws(N, 11, |rng| new.sample(rng));
    let one = ks_one_sample(&fresh, &analytic(cdf)).expect("finite draws");
    assert!(one.p_value > ALPHA, "{family}: KS vs the CDF {one:?}");
    let before = draws(N, 12, |rng| old.sample(rng));
    let two = ks_two_sample(&fresh, &before).expect("finite draws");
    assert!(two.p_value > ALPHA, "{family}: KS vs version 1 {two:?}");
}

#[test]
fn normal_and_log_normal() {
    same_distribution(
        Family::Normal,
        &[("mean", 21.5), ("sd", 2.5)],
        Dist::Normal { mean: 21.5, sd: 2.5 },
    );
    same_distribution(
        Family::LogNormal,
        &[("mu", 1.2), ("sigma", 0.6)],
        Dist::Lognormal {
            shape: 0.6,
            scale: 1.2f64.exp(),
            location: 0.0,
        },
    );
}

#[test]
fn exponential_and_weibull() {
    same_distribution(Family::Exponential, &[("rate", 0.25)], Dist::Exponential { mean: 4.0 });
    same_distribution(
        Family::Weibull,
        &[("shape", 1.7), ("scale", 3.0)],
        Dist::Weibull { shape: 1.7, scale: 3.0 },
    );
}

#[test]
fn gamma_above_and_below_shape_one() {
    same_distribution(
        Family::Gamma,
        &[("shape", 3.5), ("rate", 0.5)],
        Dist::Gamma { shape: 3.5, scale: 2.0 },
    );
    same_distribution(
        Family::Gamma,
        &[("shape", 0.4), ("rate", 2.0)],
        Dist::Gamma { shape: 0.4, scale: 0.5 },
    );
}

#[test]
fn other_families_draw_through_exp_stats() {
    let params = vec![("location".to_owned(), 0.0), ("scale".to_owned(), 1.0)];
    let old = FittedSampler::from_named(Family::Cauchy, &params).expect("valid parameters");
    let new = FamilyDraw::new(old.clone(), &params);
    let (mut a, mut b) = (Rng::new(5), Rng::new(5));
    for _ in 0..100 {
        assert_eq!(new.sample(&mut a).to_bits(), old.sample(&mut b).to_bits());
    }
}

/// The ziggurat's rare branches: the tails beyond R (block 0) hold the
/// right mass, and within them the right shape.
#[test]
fn ziggurat_tails() {
    let n = 4_000_000;
    let r = 3.442_619_855_899;
    let z = draws(n, 21, standard_normal);
    let beyond: Vec<f64> = z.iter().filter(|v| v.abs() > r).map(|v| v.abs() - r).collect();
    // P(|Z| > R) = erfc(R / √2) = 5.7571e-4 (two-sided); binomial sd ≈ 48.
    let expected = 5.7571e-4 * n as f64;
    assert!(
        (beyond.len() as f64 - expected).abs() < 5.0 * expected.sqrt(),
        "{} beyond R",
        beyond.len()
    );
    // Beyond R the excess has density ∝ e^(−(R + y)²/2); its CDF is
    // 1 − erfc((R + y)/√2) / erfc(R/√2), through the normal sampler's CDF.
    let normal = analytic(Dist::Normal { mean: 0.0, sd: 1.0 });
    let tail_mass = 1.0 - normal.cdf(r);
    let ks = exp_stats::ks_one_sample_with(&beyond, |y| 1.0 - (1.0 - normal.cdf(r + y)) / tail_mass).expect("finite");
    assert!(ks.p_value > ALPHA, "normal tail {ks:?}");

    let e = draws(n, 22, standard_exponential);
    let r = 7.697_117_470_131_05;
    let beyond: Vec<f64> = e.iter().filter(|&&v| v > r).map(|v| v - r).collect();
    // P(E > R) = e^(−R) = 4.5381e-4.
    let expected = (-r).exp() * n as f64;
    assert!(
        (beyond.len() as f64 - expected).abs() < 5.0 * expected.sqrt(),
        "{} beyond R",
        beyond.len()
    );
    let ks = exp_stats::ks_one_sample_with(&beyond, |y| -(-y).exp_m1()).expect("finite");
    assert!(ks.p_value > ALPHA, "exponential tail {ks:?}");
}
