//! Thresholds and comparisons at each point: a statistic against a
//! constant by its interval across repetitions (exp_stats::center: median
//! with its order-statistic interval where the repetitions allow one, else
//! mean with a t interval cut to the statistic's range), two statistics by
//! a seeded percentile bootstrap of the difference (or, for `within`, the
//! ratio) of their means, paired by trial when both are read at the same
//! point.

use exp_plan::claims::{CmpOp, Stat, StatFn};
use exp_plan::Unit;
use exp_results::claims::{ClaimPoint, ClaimVerdict};
use exp_stats::bootstrap::{self, Contrast, RESAMPLES};
use exp_stats::{Bounds, Rng};

use crate::decide;
use crate::values::stat_name;
use crate::values::Context;
use crate::CONFIDENCE;

/// What a side of a comparison is decided by, before the verdict.
pub(crate) struct Interval {
    pub quantity: String,
    pub estimate: f64,
    /// `None`: a single value, no interval.
    pub range: Option<(f64, f64)>,
    pub repetitions: u32,
    pub method: String,
    pub unit: Unit,
}

/// A point without a value: inconclusive, saying why.
pub(crate) fn missing(label: String, quantity: String, unit: Unit, note: &str) -> ClaimPoint {
    ClaimPoint {
        label,
        verdict: ClaimVerdict::Inconclusive,
        quantity,
        estimate: None,
        low: None,
        high: None,
        unit,
        repetitions: 0,
        method: String::new(),
        no_interval: false,
        note: Some(note.to_string()),
    }
}

/// The point from an interval and the verdict on it.
pub(crate) fn point(label: String, interval: Interval, verdict: impl Fn(f64, f64) -> ClaimVerdict) -> ClaimPoint {
    let (low, high) = interval.range.unwrap_or((interval.estimate, interval.estimate));
    ClaimPoint {
        label,
        verdict: verdict(low, high),
        quantity: interval.quantity,
        estimate: Some(interval.estimate),
        low: interval.range.map(|r| r.0),
        high: interval.range.map(|r| r.1),
        unit: interval.unit,
        repetitions: interval.repetitions,
        method: interval.method,
        no_interval: interval.range.is_none(),
        note: None,
    }
}

/// `factor × stat` at `point` across its counted repetitions.
pub(crate) fn across_repetitions(ctx: &mut Context, stat: &Stat, factor: f64, point: u32) -> Option<Interval> {
    let values: Vec<f64> = ctx.sample(stat, point).into_iter().map(|(_, v)| v * factor).collect();
    let n = values.len();
    let median = exp_stats::median_has_interval(n, CONFIDENCE);
    let (statistic, estimate) = exp_stats::center(&values, CONFIDENCE, bounds(stat, factor), median)?;
    let quantity = scaled(factor, &stat_name(stat));
    let range = estimate.interval().filter(|_| n >= 2);
    let method = match range {
        Some(_) => format!(
            "{statistic} of {n} repetitions, {} at {}",
            estimate.method.name(),
            percent(CONFIDENCE)
        ),
        None => "one repetition: its value, no interval".to_string(),
    };
    Some(Interval {
        quantity,
        estimate: estimate.value,
        range,
        repetitions: n as u32,
        method,
        unit: stat.unit,
    })
}

/// `fa × a − fb × b` (or `/` for a ratio) at points `pa` and `pb`, by a
/// bootstrap paired by trial when the points are the same.
pub(crate) fn contrast(
    ctx: &mut Context,
    (a, fa, pa): (&Stat, f64, u32),
    (b, fb, pb): (&Stat, f64, u32),
    contrast: Contrast,
    seed_label: &str,
) -> Option<Interval> {
    let sa = ctx.sample(a, pa);
    let sb = ctx.sample(b, pb);
    let paired = pa == pb;
    let (xa, xb): (Vec<f64>, Vec<f64>) = if paired {
        sa.iter()
            .filter_map(|(t, va)| sb.iter().find(|(u, _)| u == t).map(|(_, vb)| (va * fa, vb * fb)))
            .unzip()
    } else {
        (
            sa.iter().map(|(_, v)| v * fa).collect(),
            sb.iter().map(|(_, v)| v * fb).collect(),
        )
    };
    if xa.is_empty() || xb.is_empty() {
        return None;
    }
    let (name, unit) = match contrast {
        Contrast::Difference => ("difference", a.unit),
        Contrast::Ratio => ("ratio", Unit::Count),
    };
    let op = if contrast == Contrast::Ratio { " / " } else { " − " };
    let quantity = format!("{}{op}{}", scaled(fa, &stat_name(a)), scaled(fb, &stat_name(b)));
    let mut rng = Rng::new(ctx.seed).fork(seed_label);
    let boot = if paired {
        bootstrap::paired(&xa, &xb, contrast, CONFIDENCE, RESAMPLES, &mut rng)
    } else {
        bootstrap::unpaired(&xa, &xb, contrast, CONFIDENCE, RESAMPLES, &mut rng)
    };
    let repetitions = xa.len().min(xb.len()) as u32;
    if let Some(boot) = boot {
        let kind = if paired { "paired" } else { "unpaired" };
        return Some(Interval {
            quantity,
            estimate: boot.value,
            range: Some((boot.low, boot.high)),
            repetitions,
            method: format!(
                "{kind} percentile bootstrap of the {name} of means ({RESAMPLES} resamples, seeded by the plan) at {}",
                percent(CONFIDENCE)
            ),
            unit,
        });
    }
    // One repetition on a side (or a zero denominator): the means' contrast, no interval.
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let value = match contrast {
        Contrast::Difference => mean(&xa) - mean(&xb),
        Contrast::Ratio => mean(&xa) / mean(&xb),
    };
    value.is_finite().then(|| Interval {
        quantity,
        estimate: value,
        range: None,
        repetitions,
        method: "one repetition: the values' contrast, no interval".to_string(),
        unit,
    })
}

/// Verdict of `x op c` on [low, high].
pub(crate) fn threshold(op: CmpOp, c: f64) -> impl Fn(f64, f64) -> ClaimVerdict {
    move |low, high| decide::against(op, low, high, c)
}

/// The range a statistic scaled by `factor` can take, to cut a t interval:
/// the spread statistics have their own (a coefficient of variation may
/// pass 100 %, the largest row over the smallest is at least 1), the others
/// their unit's.
fn bounds(stat: &Stat, factor: f64) -> Bounds {
    let base = match (&stat.function, stat.unit) {
        (StatFn::Cv | StatFn::Stddev | StatFn::Range, _) => Bounds::NON_NEGATIVE,
        (StatFn::MaxOverMin, _) => Bounds {
            low: 1.0,
            high: f64::INFINITY,
        },
        (_, Unit::Ratio) => Bounds::RATIO,
        (_, Unit::Count) => Bounds::ANY,
        (_, Unit::Ns | Unit::Bytes | Unit::BitPerS | Unit::PerS) => Bounds::NON_NEGATIVE,
    };
    if factor > 0.0 {
        Bounds {
            low: base.low * factor,
            high: base.high * factor,
        }
    } else {
        Bounds::ANY
    }
}

fn scaled(factor: f64, name: &str) -> String {
    if factor == 1.0 {
        name.to_string()
    } else {
        format!("{factor} × {name}")
    }
}

pub(crate) fn percent(confidence: f64) -> String {
    format!("{} %", confidence * 100.0)
}
