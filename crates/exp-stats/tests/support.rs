//! Property: for any valid parameters, every draw is finite and inside the family's support.
#![allow(clippy::unwrap_used)]

use exp_plan::{Dist, DistValue, Unit};
use exp_stats::{Rng, Sampler};
use proptest::prelude::*;

/// Positive parameters over many orders of magnitude (1e-3 … 1e12).
fn positive() -> impl Strategy<Value = f64> {
    (-3.0f64..12.0).prop_map(|e| 10f64.powf(e))
}

/// Shapes over 1e-3 … 1e3, covering overflow (tiny Pareto shape) and underflow (tiny gamma shape).
fn shape() -> impl Strategy<Value = f64> {
    (-3.0f64..3.0).prop_map(|e| 10f64.powf(e))
}

fn dist() -> impl Strategy<Value = Dist> {
    prop_oneof![
        (-1e12f64..1e12).prop_map(|value| Dist::Constant { value }),
        (-1e12f64..1e12, 0.0f64..1e12).prop_map(|(min, w)| Dist::Uniform { min, max: min + w }),
        (-1e12f64..1e12, 0.0f64..1e12).prop_map(|(mean, sd)| Dist::Normal { mean, sd }),
        (shape(), positive(), -1e9f64..1e9).prop_map(|(shape, scale, location)| Dist::Lognormal {
            shape,
            scale,
            location
        }),
        positive().prop_map(|mean| Dist::Exponential { mean }),
        (shape(), positive()).prop_map(|(shape, scale)| Dist::Pareto { shape, scale }),
        (shape(), positive()).prop_map(|(shape, scale)| Dist::Weibull { shape, scale }),
        (shape(), positive()).prop_map(|(shape, scale)| Dist::Gamma { shape, scale }),
        prop_oneof![0.0f64..20.0, positive()].prop_map(|mean| Dist::Poisson { mean }),
        (-12.0f64..0.0).prop_map(|e| Dist::Geometric { p: 10f64.powf(e) }),
        prop::collection::vec(-1e9f64..1e9, 1..50).prop_map(|values| Dist::Empirical {
            file: "p".into(),
            sha256: String::new(),
            values
        }),
    ]
}

fn in_support(dist: &Dist, x: f64) -> bool {
    let integer = x.fract() == 0.0 && x >= 0.0;
    match dist {
        Dist::Constant { value } => x == *value,
        Dist::Uniform { min, max } => *min <= x && x <= *max,
        Dist::Normal { .. } => true,
        // exp(shape·Z) may underflow to 0, giving exactly `location`.
        Dist::Lognormal { location, .. } => x >= *location,
        Dist::Exponential { .. } | Dist::Weibull { .. } | Dist::Gamma { .. } => x >= 0.0,
        Dist::Pareto { scale, .. } => x >= *scale,
        Dist::Poisson { .. } | Dist::Geometric { .. } => integer,
        Dist::Empirical { values, .. } => values.contains(&x),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn samples_are_finite_and_in_support(dist in dist(), seed in any::<u64>()) {
        let s = Sampler::new(&DistValue { unit: Unit::Count, dist: dist.clone() }).unwrap();
        let mut rng = Rng::new(seed);
        for _ in 0..64 {
            let x = s.sample(&mut rng);
            prop_assert!(x.is_finite(), "{dist:?} gave {x}");
            prop_assert!(in_support(&dist, x), "{dist:?} gave {x} outside its support");
            let c = s.cdf(x);
            prop_assert!((0.0..=1.0).contains(&c), "{dist:?}: cdf({x}) = {c}");
        }
        if let Some(mean) = s.mean() {
            prop_assert!(!mean.is_nan());
        }
    }
}
