//! The trials of a run, point by point: the pause before each trial, the
//! manifest record after it, and `repeat until` after each repetition.

use std::time::{Duration, Instant, SystemTime};

use exp_plan::Point;
use exp_results::manifest::{Manifest, PointRecord, TrialRecord, TrialStatus};

use crate::clock::TrialClock;
use crate::events::Event;
use crate::repeat::stop_rule_met;
use crate::run::{RunContext, RunError};
use crate::schedule::scale;
use crate::split::{common_start, SplitError};
use crate::trial::run_trial;

/// Runs every trial of the manifest still `planned`, point by point; an
/// `Err` is a failure of the run itself (the results store broke), not of a
/// trial. Complete trials (of a resumed run) count towards `repeat until` as
/// if just run.
pub(crate) async fn run_points(ctx: &RunContext<'_>, manifest: &mut Manifest, total: u32) -> Result<(), RunError> {
    let mut progress = Progress { ordinal: 0, total };
    manifest.points.clear();
    let mut start = 0;
    // The records are in trial order, so each point's trials are consecutive.
    while let Some(first) = manifest.trials.get(start) {
        let index = first.point;
        let end = start + manifest.trials[start..].iter().take_while(|t| t.point == index).count();
        let Some(point) = ctx.plan.point(index) else {
            for record in &mut manifest.trials[start..end] {
                record.status = TrialStatus::Failed;
                record.error = Some(format!("point {index} is not in the plan"));
            }
            start = end;
            continue;
        };
        let ran = run_point(ctx, manifest, start..end, &point, &mut progress).await?;
        start = end;
        let stop_reason = ctx.plan.repeat.stop.as_ref().map(|rule| {
            ran.stop_reason.clone().unwrap_or_else(|| {
                if ctx.cancel.is_cancelled() {
                    "interrupted".to_string()
                } else {
                    format!(
                        "reached the maximum of {} repetitions without meeting the rule on `{}`",
                        ran.count, rule.metric
                    )
                }
            })
        });
        if let Some(reason) = &stop_reason {
            ctx.events.send(Event::RepeatStopped {
                point: index,
                repetitions: ran.count,
                reason: reason.clone(),
            });
        }
        let record = PointRecord {
            point: index,
            repetitions_run: ran.count,
            stop_reason,
        };
        ctx.run_dir.record_point(&record)?;
        manifest.points.push(record);
    }
    Ok(())
}

/// Trials started so far in this run, for the progress events.
struct Progress {
    ordinal: u32,
    total: u32,
}

/// What ran of one point.
struct PointRun {
    count: u32,
    /// Set when `repeat until` was met.
    stop_reason: Option<String>,
}

/// Runs the trials of one point (the manifest records in `records`), with
/// the pause before each but the run's first and `repeat until` after each.
async fn run_point(
    ctx: &RunContext<'_>,
    manifest: &mut Manifest,
    records: std::ops::Range<usize>,
    point: &Point,
    progress: &mut Progress,
) -> Result<PointRun, RunError> {
    let mut values = Vec::new();
    let mut ran = PointRun {
        count: 0,
        stop_reason: None,
    };
    for index in records {
        let status = manifest.trials[index].status;
        if status == TrialStatus::Complete {
            ran.count += 1;
            record_stop_value(ctx, &manifest.trials[index], &mut values, &mut ran.stop_reason);
            continue;
        }
        if status != TrialStatus::Planned {
            continue;
        }
        let trial = ctx.plan.trial(manifest.trials[index].trial);
        let Some(trial) = trial.filter(|_| !ctx.cancel.is_cancelled() && ran.stop_reason.is_none()) else {
            manifest.trials[index].status = TrialStatus::Skipped;
            continue;
        };
        if progress.ordinal > 0 && !pause(ctx).await {
            manifest.trials[index].status = TrialStatus::Skipped;
            continue;
        }
        progress.ordinal += 1;
        let clock = match ctx.options.split {
            None => TrialClock::start_now(),
            Some(split) => {
                // Keyed by the trial's attempt: parts resumed a different
                // number of times still meet, as every part runs a split
                // trial again when any part did not complete it.
                let generation = manifest.trials[index].attempts.len();
                match common_start(
                    ctx.run_dir.path(),
                    generation,
                    trial.trial,
                    split,
                    ctx.cancel,
                    ctx.events,
                )
                .await
                {
                    Ok(clock) => clock,
                    Err(SplitError::Cancelled { .. }) => {
                        manifest.trials[index].status = TrialStatus::Skipped;
                        continue;
                    }
                    Err(error) => {
                        let record = &mut manifest.trials[index];
                        record.status = TrialStatus::Failed;
                        record.error = Some(error.to_string());
                        return Err(error.into());
                    }
                }
            }
        };
        let record = &mut manifest.trials[index];
        record.status = TrialStatus::Running;
        record.started_at_unix_ns = Some(clock.start_unix_ns);
        ctx.run_dir.record_trial(record)?;
        ctx.events.send(Event::TrialStarted {
            trial: trial.trial,
            ordinal: progress.ordinal,
            total: progress.total,
            point: point.index,
            repetition: trial.repetition,
            sweep: ctx.plan.sweep_label(point.index),
            planned_ns: ctx
                .plan
                .experiment
                .duration_ns
                .map(|d| scale(d, ctx.options.time_scale)),
        });
        let result = match run_trial(ctx, &trial, point, clock).await {
            Ok(result) => result,
            Err(error) => {
                // The store failed: the trial failed with it, and the run stops.
                let record = &mut manifest.trials[index];
                record.status = TrialStatus::Failed;
                record.error = Some(error.to_string());
                record.ended_at_unix_ns = Some(exp_results::unix_ns(SystemTime::now()));
                return Err(error.into());
            }
        };
        ran.count += 1;
        ctx.events.send(Event::TrialFinished {
            trial: trial.trial,
            status: result.status.as_str().to_string(),
            elapsed_ns: result.end_unix_ns.saturating_sub(result.start_unix_ns),
            error: result.error.clone(),
        });
        let record: &mut TrialRecord = &mut manifest.trials[index];
        record.status = result.status;
        record.error = result.error;
        record.metrics = result.metrics;
        record.validity = Some(result.validity);
        record.started_at_unix_ns = Some(result.start_unix_ns);
        record.ended_at_unix_ns = Some(result.end_unix_ns);
        record_stop_value(ctx, &manifest.trials[index], &mut values, &mut ran.stop_reason);
        ctx.run_dir.record_trial(&manifest.trials[index])?;
    }
    Ok(ran)
}

/// Adds a finished trial's stop-rule metric and says whether the rule is met.
/// An invalid trial's value is left out unless `--include-invalid`.
fn record_stop_value(
    ctx: &RunContext<'_>,
    record: &TrialRecord,
    values: &mut Vec<f64>,
    stop_reason: &mut Option<String>,
) {
    let counted = exp_results::validity::counts(record, ctx.options.include_invalid);
    if let Some(rule) = &ctx.plan.repeat.stop {
        if let Some(value) = record.metrics.get(&rule.metric).filter(|_| counted) {
            values.push(*value);
        }
        *stop_reason = stop_rule_met(rule, values);
    }
}

/// The experiment's pause before a trial; `false` if cancelled meanwhile.
async fn pause(ctx: &RunContext<'_>) -> bool {
    let pause = scale(ctx.plan.experiment.pause_ns, ctx.options.time_scale);
    if pause == 0 {
        return true;
    }
    ctx.events.send(Event::Pause { ns: pause });
    ctx.cancel
        .sleep_until_async(Instant::now() + Duration::from_nanos(pause))
        .await
}
