//! `abort`: a threshold on a running trial's rows violated beyond doubt,
//! that is, no rows the trial can still produce could bring it back. The
//! caller bounds how many rows a workload's trial can have at most
//! (`max_rows`); without a bound only what more rows cannot undo counts
//! (a `max` above a `<` bound, a `min` below a `>` bound, `loss == 0`
//! with a message lost, …).
//!
//! With at most N rows and b rows already on the wrong side of c: `pq < c`
//! is lost once b ≥ N − ⌊(N − 1)q⌋ (the rank the percentile starts from is
//! then ≥ c whatever comes), `pq > c` once b ≥ ⌈(N − 1)q⌉ + 1; a share
//! once the rows that can still meet it are too few; `mean < c` (values are
//! never negative) once the sum reaches c × N; a failure ratio once the
//! failures alone pass it.

use exp_plan::claims::{ClaimKind, CmpOp, Stat, StatFn, Term};
use exp_plan::Plan;
use exp_results::claims::{ClaimPoint, ClaimRecord, ClaimVerdict};
use exp_results::schemas::{CONNECTIONS_TABLE, MESSAGES_TABLE};
use exp_results::RunView;

use crate::rows;
use crate::values::stat_name;

/// A claim whose `abort` threshold the trial can no longer meet.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Its index in the plan's claims.
    pub claim: usize,
    pub text: String,
    /// Its grace: how long the violation must stand before the run stops.
    pub grace_ns: u64,
    /// What settled it (`12 of at most 600 rows of p99(…) at or above 25ms`).
    pub why: String,
}

/// The abort claims `trial` (running: its unfinished segments are read
/// too) has violated beyond doubt. `max_rows(stat)`: at most how many rows
/// the statistic's workload can have in this trial, if known.
pub fn violations(run: &RunView, plan: &Plan, trial: u32, max_rows: &dyn Fn(&Stat) -> Option<u64>) -> Vec<Violation> {
    let mut found = Vec::new();
    for (index, claim) in plan.claims.iter().enumerate() {
        let Some(abort) = &claim.abort else { continue };
        let kind = crate::evaluate::on_timeline(&claim.kind, run.manifest.options.time_scale);
        let Some((stat, op, bound)) = threshold(&kind) else {
            continue;
        };
        if !stat.points.is_empty() || stat.phase.is_some() {
            continue;
        }
        if let Ok(Some(why)) = lost(run, trial, stat, op, bound, max_rows(stat)) {
            found.push(Violation {
                claim: index,
                text: claim.text.clone(),
                grace_ns: abort.grace_ns,
                why,
            });
        }
    }
    found
}

/// The claim that aborted the run is refuted, whatever its complete trials
/// say: its violation was beyond doubt (`why`, the manifest's error).
pub(crate) fn refute(claims: &mut [ClaimRecord], aborted: &str, why: Option<&str>) {
    for claim in claims.iter_mut().filter(|c| c.text == aborted) {
        claim.verdict = ClaimVerdict::Refuted;
        claim.points.insert(
            0,
            ClaimPoint {
                label: "the aborted trial".into(),
                verdict: ClaimVerdict::Refuted,
                quantity: "rows so far".into(),
                estimate: None,
                low: None,
                high: None,
                unit: exp_plan::Unit::Count,
                repetitions: 0,
                method: "violated beyond doubt: no rows the trial could still produce bring it back".into(),
                no_interval: false,
                note: why.map(str::to_string),
            },
        );
    }
}

/// `stat op bound` of a threshold claim (the constant on either side, the
/// factor divided out).
fn threshold(kind: &ClaimKind) -> Option<(&Stat, CmpOp, f64)> {
    let ClaimKind::Compare { left, op, right } = kind else {
        return None;
    };
    let (factor, stat, op, c) = match (left, right) {
        (Term::Scaled { factor, stat }, Term::Constant { value, .. }) => (*factor, stat, *op, *value),
        (Term::Constant { value, .. }, Term::Scaled { factor, stat }) => {
            (*factor, stat, crate::decide::flipped(*op), *value)
        }
        _ => return None,
    };
    if factor <= 0.0 || !factor.is_finite() {
        return None;
    }
    Some((stat, op, c / factor))
}

fn lost(
    run: &RunView,
    trial: u32,
    stat: &Stat,
    op: CmpOp,
    c: f64,
    max_rows: Option<u64>,
) -> Result<Option<String>, exp_results::ResultsError> {
    let files = |table: &str| {
        let mut files = rows::files(run, table, trial);
        if let Some(parts) = run.unfinished.get(table).and_then(|t| t.trials.get(&trial)) {
            files.extend(parts.iter().map(|p| p.path.clone()));
        }
        files
    };
    let name = stat_name(stat);
    let of = max_rows.map_or(String::new(), |m| format!(" (of at most {m} rows)"));
    match &stat.function {
        StatFn::Loss | StatFn::Failures => {
            let (table, fleet) = match stat.function {
                StatFn::Loss => (MESSAGES_TABLE, true),
                _ => (CONNECTIONS_TABLE, false),
            };
            let (_, failed) = rows::failures(&files(table), fleet, &stat.workload, None)?;
            let violated = match op {
                CmpOp::Eq if c == 0.0 => failed > 0,
                CmpOp::Lt | CmpOp::Le | CmpOp::Eq => max_rows.is_some_and(|n| !op.holds(failed as f64 / n as f64, c)),
                CmpOp::Gt | CmpOp::Ge => false,
            };
            Ok(violated.then(|| format!("{failed} failed{of}: {name} {} {c} cannot hold", op.as_str())))
        }
        function => {
            let Some(metric) = rows::row_metric(&stat.kind, &stat.metric) else {
                return Ok(None);
            };
            let values = rows::values(&files(metric.table), &metric, &stat.workload, None)?;
            Ok(settled(function, op, c, &values, max_rows).then(|| {
                format!(
                    "{} rows so far{of}: {name} {} {c} cannot hold",
                    values.len(),
                    op.as_str()
                )
            }))
        }
    }
}

/// Whether rows `values` (of at most `max_rows`) settle `function(rows) op c` as false.
pub(crate) fn settled(function: &StatFn, op: CmpOp, c: f64, values: &[f64], max_rows: Option<u64>) -> bool {
    let below = matches!(op, CmpOp::Lt | CmpOp::Le);
    // Rows on the wrong side of c.
    let wrong = values.iter().filter(|&&v| !op.holds(v, c)).count() as u64;
    let n = max_rows.map(|n| n.max(values.len() as u64));
    match (function, n) {
        (StatFn::Max, _) if below => wrong > 0,
        (StatFn::Min, _) if !below && op != CmpOp::Eq => wrong > 0,
        (StatFn::Quantile { q }, Some(n)) => quantile_lost(*q, n, wrong, below, op),
        (StatFn::Median, Some(n)) => quantile_lost(0.5, n, wrong, below, op),
        (StatFn::Share { op: row_op, threshold }, Some(n)) => {
            let meeting = values.iter().filter(|&&v| row_op.holds(v, *threshold)).count() as u64;
            let best = (n - (values.len() as u64 - meeting)) as f64 / n as f64;
            let worst = meeting as f64 / n as f64;
            if below {
                !op.holds(worst, c)
            } else {
                !op.holds(best, c)
            }
        }
        (StatFn::Mean, Some(n)) if below && values.iter().all(|v| *v >= 0.0) => {
            !op.holds(values.iter().sum::<f64>() / n as f64, c)
        }
        _ => false,
    }
}

fn quantile_lost(q: f64, n: u64, wrong: u64, below: bool, op: CmpOp) -> bool {
    if n == 0 || op == CmpOp::Eq {
        return false;
    }
    let h = (n - 1) as f64 * q;
    if below {
        wrong >= n - h.floor() as u64
    } else {
        wrong > h.ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P99: StatFn = StatFn::Quantile { q: 0.99 };

    #[test]
    fn a_p99_bound_is_lost_once_more_than_the_top_percent_is_above_it() {
        // 1000 rows at most: p99 interpolates between ranks 989 and 990 (0-based), so 11 rows ≥ c settle it.
        let mut values = vec![1.0; 500];
        values.extend([30.0; 10]);
        assert!(!settled(&P99, CmpOp::Lt, 25.0, &values, Some(1000)));
        values.push(30.0);
        assert!(settled(&P99, CmpOp::Lt, 25.0, &values, Some(1000)));
        // Check against the percentile of the worst case: the rest all small.
        let mut full = values.clone();
        full.resize(1000, 0.0);
        full.sort_by(f64::total_cmp);
        assert!(exp_stats::percentile(&full, 0.99).unwrap() >= 25.0);
        // Without a bound on the rows, more rows could always bring it back.
        assert!(!settled(&P99, CmpOp::Lt, 25.0, &values, None));
    }

    #[test]
    fn what_more_rows_cannot_undo() {
        assert!(settled(&StatFn::Max, CmpOp::Lt, 25.0, &[1.0, 26.0], None));
        assert!(!settled(&StatFn::Max, CmpOp::Lt, 25.0, &[1.0, 24.0], None));
        assert!(settled(&StatFn::Min, CmpOp::Gt, 5.0, &[4.0], None));
        // share(x < 10) >= 75 % with 100 rows at most and 26 already above.
        let share = StatFn::Share {
            op: CmpOp::Lt,
            threshold: 10.0,
        };
        let mut values = vec![20.0; 26];
        assert!(settled(&share, CmpOp::Ge, 0.75, &values, Some(100)));
        values.pop();
        assert!(!settled(&share, CmpOp::Ge, 0.75, &values, Some(100)));
        assert!(settled(&StatFn::Mean, CmpOp::Lt, 1.0, &[50.0, 60.0], Some(100)));
        assert!(!settled(&StatFn::Mean, CmpOp::Lt, 2.0, &[50.0, 60.0], Some(100)));
    }
}
