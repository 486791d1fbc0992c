//! The trials of a run in the plan's run order (`Plan::run_order`: point by
//! point, or round by round when interleaved): the pause before each trial,
//! the manifest record after it, and `repeat until` after each repetition
//! of a point, wherever its repetitions fall in the order.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant, SystemTime};

use exp_plan::Point;
use exp_results::manifest::{Manifest, PointRecord, TrialRecord, TrialStatus};

use crate::clock::TrialClock;
use crate::events::Event;
use crate::repeat::stop_rule_met;
use crate::replacement;
use crate::run_context::{RunContext, RunError};
use crate::schedule::scale;
use crate::split::{common_start, SplitError};
use crate::trial::run_trial;

/// Runs every trial of the manifest still `planned`, in run order; an
/// `Err` is a failure of the run itself (the results store broke), not of a
/// trial. Complete trials (of a resumed run) count towards `repeat until` as
/// if just run, at their place in the order.
pub(crate) async fn run_points(ctx: &RunContext<'_>, manifest: &mut Manifest, total: u32) -> Result<(), RunError> {
    let mut progress = Progress { ordinal: 0, total };
    manifest.points.clear();
    let position: HashMap<u32, usize> = manifest.trials.iter().enumerate().map(|(i, t)| (t.trial, i)).collect();
    let mut reached = vec![false; manifest.trials.len()];
    let sequence: Vec<usize> = ctx
        .plan
        .run_order()
        .into_iter()
        .filter_map(|trial| position.get(&trial).copied())
        .inspect(|&i| reached[i] = true)
        .collect();
    // A record the plan's order does not reach (a manifest of another plan) fails, unrun.
    for (record, _) in manifest.trials.iter_mut().zip(reached).filter(|(_, reached)| !reached) {
        if record.status == TrialStatus::Planned {
            record.status = TrialStatus::Failed;
            record.error = Some(format!("trial {} is not in the plan", record.trial));
        }
    }
    let mut points: BTreeMap<u32, PointRun> = BTreeMap::new();
    let mut current: Option<Point> = None;
    for index in sequence {
        let point_index = manifest.trials[index].point;
        if current.as_ref().is_none_or(|p| p.index != point_index) {
            current = ctx.plan.point(point_index);
        }
        let Some(point) = &current else {
            let record = &mut manifest.trials[index];
            record.status = TrialStatus::Failed;
            record.error = Some(format!(
                "trial {} (point {point_index}) is not in the plan",
                record.trial
            ));
            continue;
        };
        let ran = points.entry(point_index).or_default();
        let met_before = ran.stop_reason.is_some();
        ran.replaced += replacement::replaced_before(&manifest.trials[index]);
        run_one(ctx, manifest, index, point, ran, &mut progress).await?;
        while replacement::due(ctx, &manifest.trials[index], ran.stop_reason.is_some(), ran.replaced) {
            replacement::set_aside(ctx, &mut manifest.trials[index])?;
            // The invalid attempt is not a repetition that stands.
            ran.count = ran.count.saturating_sub(1);
            ran.replaced += 1;
            progress.total += 1;
            run_one(ctx, manifest, index, point, ran, &mut progress).await?;
        }
        if !met_before && ran.stop_reason.is_some() {
            finish_point(ctx, manifest, point_index, ran)?;
        }
    }
    for (&point, ran) in &mut points {
        if !ran.recorded {
            finish_point(ctx, manifest, point, ran)?;
        }
    }
    manifest.points.sort_by_key(|p| p.point);
    Ok(())
}

/// Says how a point's repetitions ended (`repeat until`) and records it.
fn finish_point(ctx: &RunContext<'_>, manifest: &mut Manifest, index: u32, ran: &mut PointRun) -> Result<(), RunError> {
    let decides = ctx.plan.repeat.until_decided.is_some();
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
    // `until_decided` (without `repeat until`): decided, or not within the maximum.
    let stop_reason = stop_reason.or_else(|| {
        decides.then(|| {
            ran.stop_reason
                .clone()
                .unwrap_or_else(|| format!("reached the maximum of {} repetitions with claims undecided", ran.count))
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
    ran.recorded = true;
    Ok(())
}

/// Trials started so far in this run, for the progress events.
struct Progress {
    ordinal: u32,
    total: u32,
}

/// What ran of one point so far.
#[derive(Default)]
struct PointRun {
    count: u32,
    /// The stop rule's metric of each repetition, in run order.
    values: Vec<f64>,
    /// Set when `repeat until` was met.
    stop_reason: Option<String>,
    /// Its `PointRecord` is written.
    recorded: bool,
    /// Invalid repetitions replaced (`replacement.rs`), against its budget.
    replaced: u32,
}

/// Runs the trial of manifest record `index` if it is still planned (a
/// complete one of a resumed run only counts), with the pause before it
/// unless it is the run's first, and `repeat until` after it.
async fn run_one(
    ctx: &RunContext<'_>,
    manifest: &mut Manifest,
    index: usize,
    point: &Point,
    ran: &mut PointRun,
    progress: &mut Progress,
) -> Result<(), RunError> {
    let status = manifest.trials[index].status;
    if status == TrialStatus::Complete {
        ran.count += 1;
        record_stop_value(ctx, &manifest.trials[index], ran);
        until_decided(ctx, manifest, point.index, ran);
        return Ok(());
    }
    if status != TrialStatus::Planned {
        return Ok(());
    }
    let trial = ctx.plan.trial(manifest.trials[index].trial);
    let Some(trial) = trial.filter(|_| !ctx.cancel.is_cancelled() && ran.stop_reason.is_none()) else {
        manifest.trials[index].status = TrialStatus::Skipped;
        return Ok(());
    };
    if progress.ordinal > 0 && !pause(ctx).await {
        manifest.trials[index].status = TrialStatus::Skipped;
        return Ok(());
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
                    return Ok(());
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
        validity: result.validity.clone(),
    });
    let record: &mut TrialRecord = &mut manifest.trials[index];
    record.status = result.status;
    record.error = result.error;
    record.metrics = result.metrics;
    record.validity = Some(result.validity);
    record.started_at_unix_ns = Some(result.start_unix_ns);
    record.ended_at_unix_ns = Some(result.end_unix_ns);
    record_stop_value(ctx, &manifest.trials[index], ran);
    ctx.run_dir.record_trial(&manifest.trials[index])?;
    until_decided(ctx, manifest, point.index, ran);
    Ok(())
}

/// `repeat = until_decided(…)`: stops the point once its claims are decided.
fn until_decided(ctx: &RunContext<'_>, manifest: &Manifest, point: u32, ran: &mut PointRun) {
    if ran.stop_reason.is_none() {
        let dir = ctx.run_dir.path();
        ran.stop_reason =
            crate::claims::until_decided(ctx.plan, dir, manifest, ctx.options.include_invalid, point, ran.count);
    }
}
/// Adds a finished trial's stop-rule metric and says whether the rule is met.
/// An invalid trial's value is left out unless `--include-invalid`.
fn record_stop_value(ctx: &RunContext<'_>, record: &TrialRecord, ran: &mut PointRun) {
    let counted = exp_results::validity::counts(record, ctx.options.include_invalid);
    if let Some(rule) = &ctx.plan.repeat.stop {
        if let Some(value) = record.metrics.get(&rule.metric).filter(|_| counted) {
            ran.values.push(*value);
        }
        ran.stop_reason = stop_rule_met(rule, &ran.values);
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
