//! The orchestrator: trials in plan order, one shared clock per trial,
//! `repeat until` after each repetition, and a manifest that always says
//! where the run stands.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use exp_anomaly::Launcher;
use exp_plan::{Plan, Point, Trial, WorkloadConfig};
use exp_results::manifest::{Manifest, PointRecord, RunStatus, TrialRecord, TrialStatus};
use exp_results::{ResultsError, RunDir, Store, StoreOptions};

use crate::cancel::{Cancel, Level};
use crate::clock::{unix_ns, TrialClock};
use crate::events::{Event, Events};
use crate::executor::{ExecError, Processes, Tables, WorkloadContext, WorkloadSummary};
use crate::preflight::{preflight, PreflightInput, PreflightIssue};
use crate::repeat::{merge, stop_rule_met};
use crate::schedule::{intervals, scale};
use crate::selection::TrialSelection;
use crate::trials::{sweep_label, TrialRow, TrialsTable};
use crate::{anomaly, fleet, monitor};

pub struct RunOptions {
    /// Run directories go to `<out_root>/<experiment>/<run-id>/`.
    pub out_root: PathBuf,
    pub trials: Option<TrialSelection>,
    /// Multiplies every time on the plan's timeline (trial length, windows,
    /// pauses); intensities and sampling intervals are kept.
    pub time_scale: f64,
    pub force: bool,
    /// How to start anomaly child processes (expc re-executing itself).
    pub launcher: Launcher,
    /// Directory relative paths in the spec are resolved against.
    pub spec_dir: PathBuf,
}

#[derive(Debug)]
pub struct RunOutcome {
    pub run_dir: PathBuf,
    pub manifest: Manifest,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("preflight failed with {} problem(s)", .0.len())]
    Preflight(Vec<PreflightIssue>),
    #[error("{0}")]
    Results(#[from] ResultsError),
    #[error("--time-scale must be positive and finite, not {0}")]
    TimeScale(f64),
}

/// Everything the trials of one run share.
struct RunContext<'a> {
    plan: &'a Plan,
    options: &'a RunOptions,
    events: &'a Events,
    cancel: &'a Cancel,
    store: Arc<Store>,
    run_dir: &'a RunDir,
    trials_table: TrialsTable,
    launcher: Arc<Launcher>,
}

struct TrialResult {
    status: TrialStatus,
    error: Option<String>,
    metrics: BTreeMap<String, f64>,
    start_unix_ns: u64,
    end_unix_ns: u64,
}

pub async fn run(plan: &Plan, options: RunOptions, events: Events, cancel: Cancel) -> Result<RunOutcome, RunError> {
    if !(options.time_scale.is_finite() && options.time_scale > 0.0) {
        return Err(RunError::TimeScale(options.time_scale));
    }
    let issues = preflight(&PreflightInput {
        plan,
        out_root: &options.out_root,
        force: options.force,
        spec_dir: &options.spec_dir,
    });
    if !issues.is_empty() {
        return Err(RunError::Preflight(issues));
    }

    fleet::size_for_plan(plan);
    let started = SystemTime::now();
    let plan_sha256 = exp_results::plan_sha256(plan)?;
    let run_id = exp_results::new_run_id(started, &plan_sha256);
    let run_dir = RunDir::create(&options.out_root, &plan.experiment.name, &run_id)?;
    run_dir.write_plan(plan)?;
    let mut manifest = Manifest::new(plan, &run_id, &plan_sha256, started, exp_host::facts());
    manifest.options.time_scale = options.time_scale;
    manifest.options.trials_selected = options.trials.as_ref().map(|t| t.text().to_string());
    manifest.options.forced = options.force;
    for record in &mut manifest.trials {
        if options.trials.as_ref().is_some_and(|s| !s.contains(record.trial)) {
            record.status = TrialStatus::Skipped;
        }
    }
    run_dir.write_manifest(&manifest)?;
    let store = Arc::new(Store::open(run_dir.tables_dir(), StoreOptions::default())?);

    let selected = manifest
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Planned)
        .count() as u32;
    events.send(Event::RunStarted {
        run_dir: run_dir.path().to_path_buf(),
        trials: selected,
    });
    let context = RunContext {
        plan,
        options: &options,
        events: &events,
        cancel: &cancel,
        store,
        run_dir: &run_dir,
        trials_table: TrialsTable::new(plan),
        launcher: Arc::new(options.launcher.clone()),
    };
    let failure = run_points(&context, &mut manifest, selected).await.err();

    // Whatever happened, finish the tables and say how the run ended.
    let RunContext { store, .. } = context;
    let closed = match Arc::try_unwrap(store) {
        Ok(store) => store.close().map(Some),
        Err(_) => Ok(None),
    };
    if let Ok(Some(summary)) = &closed {
        manifest.record_tables(summary);
    }
    manifest.status = if let Some(error) = failure
        .as_ref()
        .map(ToString::to_string)
        .or_else(|| closed.as_ref().err().map(ToString::to_string))
    {
        manifest.error = Some(error);
        RunStatus::Failed
    } else if cancel.is_cancelled() {
        RunStatus::Interrupted
    } else if manifest.trials.iter().any(|t| t.status == TrialStatus::Failed) {
        RunStatus::Failed
    } else {
        RunStatus::Complete
    };
    manifest.finish(SystemTime::now());
    run_dir.write_manifest(&manifest)?;
    let run_dir = run_dir.finish()?;
    Ok(RunOutcome { run_dir, manifest })
}

/// Runs every selected trial, point by point; an `Err` is a failure of the
/// run itself (the results store broke), not of a trial.
async fn run_points(ctx: &RunContext<'_>, manifest: &mut Manifest, total: u32) -> Result<(), ResultsError> {
    let mut ordinal = 0;
    let mut first = true;
    for point in &ctx.plan.points {
        let trials: Vec<&Trial> = ctx.plan.trials.iter().filter(|t| t.point == point.index).collect();
        let mut values = Vec::new();
        let mut stop_reason = None;
        let mut ran = 0;
        for trial in trials {
            let index = trial.trial as usize;
            if manifest.trials[index].status != TrialStatus::Planned {
                continue;
            }
            if ctx.cancel.is_cancelled() || stop_reason.is_some() {
                manifest.trials[index].status = TrialStatus::Skipped;
                continue;
            }
            if !first {
                let pause = scale(ctx.plan.experiment.pause_ns, ctx.options.time_scale);
                if pause > 0 {
                    ctx.events.send(Event::Pause { ns: pause });
                    if !ctx
                        .cancel
                        .sleep_until_async(Instant::now() + Duration::from_nanos(pause))
                        .await
                    {
                        manifest.trials[index].status = TrialStatus::Skipped;
                        continue;
                    }
                }
            }
            first = false;
            ordinal += 1;
            manifest.trials[index].status = TrialStatus::Running;
            ctx.run_dir.write_manifest(manifest)?;
            ctx.events.send(Event::TrialStarted {
                trial: trial.trial,
                ordinal,
                total,
                point: point.index,
                repetition: trial.repetition,
                sweep: sweep_label(point),
                planned_ns: ctx
                    .plan
                    .experiment
                    .duration_ns
                    .map(|d| scale(d, ctx.options.time_scale)),
            });
            let result = run_trial(ctx, trial, point).await?;
            ran += 1;
            ctx.events.send(Event::TrialFinished {
                trial: trial.trial,
                status: result.status.as_str().to_string(),
                elapsed_ns: result.end_unix_ns.saturating_sub(result.start_unix_ns),
                error: result.error.clone(),
            });
            if let Some(rule) = &ctx.plan.repeat.stop {
                if let Some(value) = result.metrics.get(&rule.metric) {
                    values.push(*value);
                }
                stop_reason = stop_rule_met(rule, &values);
            }
            let record: &mut TrialRecord = &mut manifest.trials[index];
            record.status = result.status;
            record.error = result.error;
            record.metrics = result.metrics;
            record.started_at_unix_ns = Some(result.start_unix_ns);
            record.ended_at_unix_ns = Some(result.end_unix_ns);
            ctx.run_dir.write_manifest(manifest)?;
        }
        if let Some(rule) = &ctx.plan.repeat.stop {
            let reason = stop_reason.clone().unwrap_or_else(|| {
                if ctx.cancel.is_cancelled() {
                    "interrupted".to_string()
                } else {
                    format!(
                        "reached the maximum of {} repetitions without meeting the rule on `{}`",
                        ran, rule.metric
                    )
                }
            });
            ctx.events.send(Event::RepeatStopped {
                point: point.index,
                repetitions: ran,
                reason: reason.clone(),
            });
            manifest.points.push(PointRecord {
                point: point.index,
                repetitions_run: ran,
                stop_reason: Some(reason),
            });
        } else {
            manifest.points.push(PointRecord {
                point: point.index,
                repetitions_run: ran,
                stop_reason: None,
            });
        }
    }
    Ok(())
}

async fn run_trial(ctx: &RunContext<'_>, trial: &Trial, point: &Point) -> Result<TrialResult, ResultsError> {
    let scale_factor = ctx.options.time_scale;
    let trial_end_ns = ctx.plan.experiment.duration_ns.map(|d| scale(d, scale_factor));
    let clock = TrialClock::start_now();
    let stop = Cancel::new();
    let forward = tokio::spawn(forward_cancel(ctx.cancel.clone(), stop.clone()));
    let tables = Tables {
        store: ctx.store.clone(),
        trial: trial.trial,
        shard: 0,
    };
    let processes = Processes::default();
    let sample_interval = Duration::from_nanos(point.monitor.as_ref().map_or(1_000_000_000, |m| m.interval_ns));

    let monitor = point.monitor.clone().map(|m| {
        let (stop, tables, processes) = (stop.clone(), tables.clone(), processes.clone());
        tokio::task::spawn_blocking(move || monitor::run(&m, clock, stop, tables, processes))
    });
    let mut workloads = Vec::new();
    for workload in &point.workloads {
        let context = WorkloadContext {
            workload: workload.clone(),
            seed: trial.seeds.get(&workload.name).copied().unwrap_or(trial.seed),
            clock,
            intervals: intervals(&workload.window, trial_end_ns, scale_factor),
            trial_end_ns,
            cancel: stop.clone(),
            tables: tables.clone(),
            processes: processes.clone(),
            scratch: ctx.run_dir.scratch_dir(&format!("trial-{}", trial.trial))?,
            sample_interval,
            launcher: ctx.launcher.clone(),
            run_dir: ctx.run_dir.path().to_path_buf(),
        };
        let name = workload.name.clone();
        let stop = stop.clone();
        workloads.push(tokio::spawn(async move {
            let result = execute(context).await;
            if result.is_err() {
                // One failed workload ends its trial: the others stop too.
                stop.raise(Level::Stop);
            }
            (name, result)
        }));
    }

    let mut errors = Vec::new();
    let mut summaries: Vec<(String, WorkloadSummary)> = Vec::new();
    for handle in workloads {
        match handle.await {
            Ok((name, Ok(summary))) => summaries.push((name, summary)),
            Ok((name, Err(error))) => errors.push(format!("{name}: {error}")),
            Err(join) => errors.push(format!("a workload thread panicked: {join}")),
        }
    }
    // The trial lasts its full length even when workloads end earlier (the
    // healthy tail of an anomaly dataset is data too).
    if let (Some(end), true) = (trial_end_ns, errors.is_empty()) {
        stop.sleep_until_async(clock.at(end)).await;
    }
    stop.raise(Level::Stop);
    if let Some(handle) = monitor {
        match handle.await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => errors.push(format!("monitor: {error}")),
            Err(join) => errors.push(format!("the monitor thread panicked: {join}")),
        }
    }
    forward.abort();
    let end_ns = clock.now_ns();

    let status = if !errors.is_empty() {
        TrialStatus::Failed
    } else if ctx.cancel.is_cancelled() {
        TrialStatus::Interrupted
    } else {
        TrialStatus::Complete
    };
    let error = (!errors.is_empty()).then(|| errors.join("; "));
    let contended = summaries
        .iter()
        .any(|(_, s)| s.metrics.get("contended").is_some_and(|v| *v > 0.0));
    let row = ctx.trials_table.row(&TrialRow {
        point,
        repetition: trial.repetition,
        seed: trial.seed,
        start_unix_ns: clock.start_unix_ns,
        end_unix_ns: clock.unix_ns_at(end_ns),
        status: status.as_str(),
        contended,
        error: error.as_deref(),
    });
    let mut batch = ctx.trials_table.schema().batch();
    batch.push_row(row)?;
    tables.sink(ctx.trials_table.schema()).write(batch)?;
    ctx.store.finish_trial(trial.trial)?;

    Ok(TrialResult {
        status,
        error,
        metrics: merge(&summaries),
        start_unix_ns: clock.start_unix_ns,
        end_unix_ns: unix_ns(SystemTime::now()),
    })
}

/// Runs one workload with its kind's executor: anomalies supervise a child
/// process on a blocking thread, fleets are async tasks.
async fn execute(context: WorkloadContext) -> Result<WorkloadSummary, ExecError> {
    match context.workload.config.clone() {
        WorkloadConfig::Anomaly(a) => tokio::task::spawn_blocking(move || anomaly::run(context, &a))
            .await
            .unwrap_or_else(|join| Err(ExecError::Failed(format!("the anomaly thread panicked: {join}")))),
        WorkloadConfig::Fleet(f) => fleet::run(context, *f).await,
        WorkloadConfig::Xml(x) => tokio::task::spawn_blocking(move || {
            let out = context
                .run_dir
                .join("xml")
                .join(crate::xml::dir_name(&context.workload.name))
                .join(format!("trial-{}", context.tables.trial));
            crate::xml::run(&context, &x, &out)
        })
        .await
        .unwrap_or_else(|join| Err(ExecError::Failed(format!("the xml thread panicked: {join}")))),
        WorkloadConfig::Traffic(t) => crate::traffic::run(context, *t).await,
    }
}

/// Passes the run's cancellation on to one trial, level by level.
async fn forward_cancel(run: Cancel, trial: Cancel) {
    run.reached(Level::Stop).await;
    trial.raise(Level::Stop);
    run.reached(Level::Kill).await;
    trial.raise(Level::Kill);
}
