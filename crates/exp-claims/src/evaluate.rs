//! Each claim at each of its points, then its verdict over them: supported
//! iff supported at every point, refuted if refuted at any, else
//! inconclusive.

use exp_plan::claims::{Claim, ClaimKind, CmpOp, Direction, Stat, Term};
use exp_plan::Unit;
use exp_results::claims::{ClaimPoint, ClaimRecord, ClaimVerdict};
use exp_stats::bootstrap::Contrast;

use crate::compare::{self, across_repetitions, contrast, missing, point, threshold};
use crate::decide;
use crate::points;
use crate::values::{stat_name, Context};

const NO_VALUE: &str = "no counted trial has rows for it";

/// Claim `index` of the plan.
pub(crate) fn claim(ctx: &mut Context, index: usize, claim: &Claim) -> ClaimRecord {
    let points = match &on_timeline(&claim.kind, ctx.time_scale) {
        ClaimKind::Compare { left, op, right } => compare_terms(ctx, index, left, *op, right),
        ClaimKind::Within {
            left,
            tolerance_ratio,
            right,
        } => within(ctx, index, left, *tolerance_ratio, right),
        ClaimKind::Trend {
            stat,
            direction,
            parameter,
        } if ctx.only.is_none() => vec![trend(ctx, stat, *direction, parameter)],
        ClaimKind::Trend { .. } => Vec::new(),
    };
    ClaimRecord {
        text: claim.text.clone(),
        group: claim.group.clone(),
        verdict: ClaimVerdict::all(points.iter().map(|p| p.verdict)),
        left_out: ctx.counted.left_out.describe(),
        points,
    }
}

/// The claim with each `scaled(…)` constant multiplied by the run's time
/// scale (a window's length at `--time-scale 0.1` is a tenth); every other
/// constant as written.
pub(crate) fn on_timeline(kind: &ClaimKind, time_scale: f64) -> ClaimKind {
    let scale = |term: &mut Term| {
        if let Term::Constant { value, time_scaled, .. } = term {
            if *time_scaled {
                *value *= time_scale;
                *time_scaled = false;
            }
        }
    };
    let mut kind = kind.clone();
    match &mut kind {
        ClaimKind::Compare { left, right, .. } | ClaimKind::Within { left, right, .. } => {
            scale(left);
            scale(right);
        }
        ClaimKind::Trend { .. } => {}
    }
    kind
}

fn compare_terms(ctx: &mut Context, index: usize, left: &Term, op: CmpOp, right: &Term) -> Vec<ClaimPoint> {
    match (left, right) {
        (Term::Scaled { factor, stat }, Term::Constant { value, .. }) => {
            one_stat(ctx, stat, *factor, |i| threshold(op, *value)(i.0, i.1))
        }
        (Term::Constant { value, .. }, Term::Scaled { factor, stat }) => {
            let op = decide::flipped(op);
            one_stat(ctx, stat, *factor, |i| threshold(op, *value)(i.0, i.1))
        }
        (Term::Scaled { factor: fa, stat: a }, Term::Scaled { factor: fb, stat: b }) => {
            two_stats(ctx, index, (a, *fa), (b, *fb), Contrast::Difference, |l, h| {
                decide::against(op, l, h, 0.0)
            })
        }
        (Term::Constant { value: a, unit, .. }, Term::Constant { value: b, .. }) => {
            vec![constants(*a, *unit, threshold(op, *b))]
        }
    }
}

fn within(ctx: &mut Context, index: usize, left: &Term, tolerance: f64, right: &Term) -> Vec<ClaimPoint> {
    let band = |c: f64| (c * (1.0 - tolerance), c * (1.0 + tolerance));
    match (left, right) {
        // `c within t of s` is read as `s within t of c`.
        (Term::Scaled { factor, stat }, Term::Constant { value, .. })
        | (Term::Constant { value, .. }, Term::Scaled { factor, stat }) => {
            let (a, b) = band(*value);
            one_stat(ctx, stat, *factor, |i| decide::inside(i.0, i.1, a, b))
        }
        (Term::Scaled { factor: fa, stat: a }, Term::Scaled { factor: fb, stat: b }) => {
            let (lo, hi) = band(1.0);
            two_stats(ctx, index, (a, *fa), (b, *fb), Contrast::Ratio, |l, h| {
                decide::inside(l, h, lo, hi)
            })
        }
        (Term::Constant { value: a, unit, .. }, Term::Constant { value: b, .. }) => {
            let (lo, hi) = band(*b);
            vec![constants(*a, *unit, move |l, h| decide::inside(l, h, lo, hi))]
        }
    }
}

fn one_stat(
    ctx: &mut Context,
    stat: &Stat,
    factor: f64,
    verdict: impl Fn((f64, f64)) -> ClaimVerdict,
) -> Vec<ClaimPoint> {
    let frames = points::frames(ctx.plan, &[stat]);
    let mut out = Vec::with_capacity(frames.len());
    let only = ctx.only;
    for frame in frames.into_iter().filter(|f| only.is_none_or(|p| f.contains(&p))) {
        let p = frame[0];
        let label = points::label(ctx.plan, p);
        out.push(match across_repetitions(ctx, stat, factor, p) {
            Some(interval) => point(label, interval, |l, h| verdict((l, h))),
            None => missing(label, stat_name(stat), stat.unit, NO_VALUE),
        });
    }
    out
}

fn two_stats(
    ctx: &mut Context,
    index: usize,
    (a, fa): (&Stat, f64),
    (b, fb): (&Stat, f64),
    kind: Contrast,
    verdict: impl Fn(f64, f64) -> ClaimVerdict,
) -> Vec<ClaimPoint> {
    let frames = points::frames(ctx.plan, &[a, b]);
    let mut out = Vec::with_capacity(frames.len());
    let only = ctx.only;
    for (f, frame) in frames
        .iter()
        .enumerate()
        .filter(|(_, f)| only.is_none_or(|p| f.contains(&p)))
    {
        let (pa, pb) = (frame[0], frame[1]);
        let label = if pa == pb {
            points::label(ctx.plan, pa)
        } else {
            format!("{} vs {}", points::label(ctx.plan, pa), points::label(ctx.plan, pb))
        };
        let seed_label = format!("claims/{index}/{f}");
        out.push(match contrast(ctx, (a, fa, pa), (b, fb, pb), kind, &seed_label) {
            Some(interval) => point(label, interval, &verdict),
            None => missing(label, format!("{} vs {}", stat_name(a), stat_name(b)), a.unit, NO_VALUE),
        });
    }
    out
}

fn constants(value: f64, unit: Unit, verdict: impl Fn(f64, f64) -> ClaimVerdict) -> ClaimPoint {
    ClaimPoint {
        label: String::new(),
        verdict: verdict(value, value),
        quantity: "constant".to_string(),
        estimate: Some(value),
        low: None,
        high: None,
        unit,
        repetitions: 0,
        method: "constants: no measurement".to_string(),
        no_interval: true,
        note: None,
    }
}

/// Kendall's τ-b between the parameter's value and the statistic over every
/// counted trial (of the points its `at` selects), one-sided at 5 %.
fn trend(ctx: &mut Context, stat: &Stat, direction: Direction, parameter: &str) -> ClaimPoint {
    let frames = points::frames(ctx.plan, &[stat]);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for frame in frames {
        let p = frame[0];
        let Some(at) = points::parameter_number(ctx.plan, parameter, p) else {
            continue;
        };
        for (_, v) in ctx.sample(stat, p) {
            x.push(at);
            y.push(v);
        }
    }
    let label = "all points".to_string();
    let quantity = format!("Kendall's τ of {} with {parameter}", stat_name(stat));
    let Some(k) = exp_stats::kendall_tau(&x, &y) else {
        return missing(
            label,
            quantity,
            Unit::Count,
            "τ is undefined: fewer than 3 trials with values, or the parameter or statistic constant",
        );
    };
    let (p_claimed, p_opposite) = match direction {
        Direction::Increases => (k.p_increasing, k.p_decreasing),
        Direction::Decreases => (k.p_decreasing, k.p_increasing),
    };
    let verdict = if p_claimed < TREND_ALPHA {
        ClaimVerdict::Supported
    } else if p_opposite < TREND_ALPHA {
        ClaimVerdict::Refuted
    } else {
        ClaimVerdict::Inconclusive
    };
    ClaimPoint {
        label,
        verdict,
        quantity,
        estimate: Some(k.tau),
        low: None,
        high: None,
        unit: Unit::Count,
        repetitions: k.n as u32,
        method: format!(
            "Kendall's τ-b over {} trials, one-sided asymptotic test at {} (p = {p_claimed:.2e})",
            k.n,
            compare::percent(TREND_ALPHA)
        ),
        no_interval: false,
        note: None,
    }
}

/// The level of the trend test.
const TREND_ALPHA: f64 = 0.05;
