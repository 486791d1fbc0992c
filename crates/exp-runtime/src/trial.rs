//! One trial: every workload of its sweep point and the monitor on one
//! clock, until the trial's end, then its row of the `trials` table.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use exp_plan::{Point, Trial};
use exp_results::manifest::TrialStatus;
use exp_results::schemas::validity_schema;
use exp_results::validity::{Finding, Validity};
use exp_results::ResultsError;

use crate::audit;
use crate::cancel::{Cancel, Level};
use crate::clock::{unix_ns, TrialClock};
use crate::executor::{ExecError, Processes, Tables, WorkloadContext, WorkloadSummary};
use crate::fleet::cpu::CpuMeter;
use crate::monitor;
use crate::repeat::merge;
use crate::run_context::RunContext;
use crate::schedule::{intervals, scale};
use crate::trials_table::TrialRow;

pub(crate) struct TrialResult {
    pub status: TrialStatus,
    pub validity: Validity,
    pub error: Option<String>,
    pub metrics: BTreeMap<String, f64>,
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
}

pub(crate) async fn run_trial(
    ctx: &RunContext<'_>,
    trial: &Trial,
    point: &Point,
    start: TrialClock,
) -> Result<TrialResult, ResultsError> {
    let scale_factor = ctx.options.time_scale;
    let trial_end_ns = ctx.plan.experiment.duration_ns.map(|d| scale(d, scale_factor));
    let clock = start;
    let stop = Cancel::new();
    // Background tasks end with the trial however it ends: they hold the
    // store, which must be free to close when the run is done with it.
    let _forward = AbortOnDrop(tokio::spawn(forward_cancel(ctx.cancel.clone(), stop.clone())));
    let _store_watch = AbortOnDrop(tokio::spawn(stop_on_store_failure(ctx.store.clone(), stop.clone())));
    let tables = Tables {
        store: ctx.store.clone(),
        trial: trial.trial,
        // A shard's files are `part-<k>`, so shards never write the same file.
        shard: match ctx.run_dir.role() {
            exp_results::Role::Whole => 0,
            exp_results::Role::Shard(k) => k,
        },
    };
    let _progress = AbortOnDrop(tokio::spawn(report_progress(
        ctx.store.row_counts(),
        ctx.events.clone(),
        trial.trial,
        clock,
        trial_end_ns,
    )));
    let processes = Processes::default();
    let bounds = ctx.options.bounds;
    let cpu = CpuMeter::start();
    let sample_interval = Duration::from_nanos(point.monitor.as_ref().map_or(1_000_000_000, |m| m.interval_ns));

    let monitor = point.monitor.clone().map(|m| {
        let (stop, tables, processes) = (stop.clone(), tables.clone(), processes.clone());
        tokio::task::spawn_blocking(move || monitor::run(&m, clock, stop, tables, processes, &bounds))
    });
    let mut workloads = Vec::new();
    for workload in &point.workloads {
        let context = WorkloadContext {
            workload: workload.clone(),
            seed: trial.seeds.get(&workload.name).copied().unwrap_or(trial.seed),
            clock,
            intervals: intervals(&workload.window, trial_end_ns, scale_factor),
            trial_end_ns,
            time_scale: scale_factor,
            cancel: stop.clone(),
            tables: tables.clone(),
            processes: processes.clone(),
            scratch: ctx.run_dir.scratch_dir(&format!("trial-{}", trial.trial))?,
            sample_interval,
            launcher: ctx.launcher.clone(),
            run_dir: ctx.run_dir.path().to_path_buf(),
            split: ctx.options.split,
            bounds,
            brokers: ctx.brokers.clone(),
            live: ctx.events.live().workload(&workload.name, workload.config.kind()),
        };
        workloads.push(spawn_workload(context, stop.clone()));
    }
    let (summaries, mut errors) = join_workloads(workloads).await;
    // The trial lasts its full length even when workloads end earlier (the
    // healthy tail of an anomaly dataset is data too).
    if let (Some(end), true) = (trial_end_ns, errors.is_empty()) {
        stop.sleep_until_async(clock.at(end)).await;
    }
    stop.raise(Level::Stop);
    let mut monitor_finding = None;
    if let Some(handle) = monitor {
        match join_monitor(handle).await {
            Ok(finding) => monitor_finding = finding,
            Err(error) => errors.push(error.to_string()),
        }
    }
    let end_ns = clock.now_ns();
    let validity = audit::trial(&summaries, monitor_finding, cpu.read(), &bounds);

    let status = match (errors.is_empty(), ctx.cancel.is_cancelled()) {
        (false, _) => TrialStatus::Failed,
        (true, true) => TrialStatus::Interrupted,
        (true, false) => TrialStatus::Complete,
    };
    let error = (!errors.is_empty()).then(|| errors.join("; "));
    let contended = summaries
        .iter()
        .any(|(_, s)| s.metrics.get("contended").is_some_and(|v| *v > 0.0));
    let row = TrialRow {
        point: point.index,
        repetition: trial.repetition,
        seed: trial.seed,
        start_unix_ns: clock.start_unix_ns,
        end_unix_ns: clock.unix_ns_at(end_ns),
        status: status.as_str(),
        contended,
        validity: &validity,
        error: error.as_deref(),
    };
    record_trial(ctx, &tables, trial.trial, &row)?;

    Ok(TrialResult {
        status,
        validity,
        error,
        metrics: merge(&summaries),
        start_unix_ns: clock.start_unix_ns,
        end_unix_ns: unix_ns(SystemTime::now()),
    })
}

/// Starts one workload on its own task; one that fails stops its trial
/// (the others stop too).
fn spawn_workload(
    context: WorkloadContext,
    stop: Cancel,
) -> tokio::task::JoinHandle<(String, Result<WorkloadSummary, ExecError>)> {
    let name = context.workload.name.clone();
    let live = context.live.clone();
    tokio::spawn(async move {
        live.running.store(true, std::sync::atomic::Ordering::Relaxed);
        let result = crate::kinds::execute(context).await;
        live.running.store(false, std::sync::atomic::Ordering::Relaxed);
        if result.is_err() {
            stop.raise(Level::Stop);
        }
        (name, result)
    })
}

/// Waits for every workload: the summaries of those that ended well, and
/// what went wrong with the others.
async fn join_workloads(
    workloads: Vec<tokio::task::JoinHandle<(String, Result<WorkloadSummary, ExecError>)>>,
) -> (Vec<(String, WorkloadSummary)>, Vec<String>) {
    let mut summaries = Vec::new();
    let mut errors = Vec::new();
    for handle in workloads {
        match handle.await {
            Ok((name, Ok(summary))) => summaries.push((name, summary)),
            Ok((name, Err(error))) => errors.push(format!("{name}: {error}")),
            Err(join) => errors.push(format!("a workload thread panicked: {join}")),
        }
    }
    (summaries, errors)
}

/// What the monitor's audit found, or what went wrong with it.
async fn join_monitor(
    handle: tokio::task::JoinHandle<Result<Option<Finding>, ExecError>>,
) -> Result<Option<Finding>, MonitorFailure> {
    match handle.await {
        Ok(Ok(finding)) => Ok(finding),
        Ok(Err(error)) => Err(MonitorFailure::Failed(error)),
        Err(join) => Err(MonitorFailure::Panicked(join)),
    }
}

/// Why the monitor gave no audit; the trial records it among its errors.
#[derive(Debug, thiserror::Error)]
enum MonitorFailure {
    #[error("monitor: {0}")]
    Failed(ExecError),
    #[error("the monitor thread panicked: {0}")]
    Panicked(tokio::task::JoinError),
}

/// Writes the trial's row of the `trials` table and its findings to
/// `trial_validity` (no rows for a valid trial), and closes its files.
fn record_trial(ctx: &RunContext<'_>, tables: &Tables, trial: u32, row: &TrialRow) -> Result<(), ResultsError> {
    let schema = ctx.trials_table.schema();
    let mut batch = schema.batch();
    batch.push_row(ctx.trials_table.row(ctx.plan, row)?)?;
    tables.sink(schema).write(batch)?;
    if !row.validity.findings.is_empty() {
        let schema = validity_schema();
        let mut batch = schema.batch();
        for finding in &row.validity.findings {
            batch.push_row(schema.row([
                ("code", finding.code.as_str().into()),
                ("workload", finding.workload.as_deref().into()),
                ("verdict", finding.verdict.as_str().into()),
                ("message", finding.message.as_str().into()),
                ("measured", finding.measured.into()),
                ("bound", finding.bound.into()),
            ])?)?;
        }
        tables.sink(&schema).write(batch)?;
    }
    ctx.store.finish_trial(trial)
}

/// Passes the run's cancellation on to one trial, level by level.
async fn forward_cancel(run: Cancel, trial: Cancel) {
    run.reached(Level::Stop).await;
    trial.raise(Level::Stop);
    run.reached(Level::Kill).await;
    trial.raise(Level::Kill);
}

/// Stops the trial as soon as the table store fails (a full disk, a file
/// system gone read-only): what is measured after that could not be kept.
async fn stop_on_store_failure(store: std::sync::Arc<exp_results::Store>, trial: Cancel) {
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    loop {
        tick.tick().await;
        if store.failure().is_some() {
            trial.raise(Level::Stop);
            return;
        }
    }
}

/// Aborts its task when dropped (a dropped `JoinHandle` only detaches it).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sends [`Event::TrialProgress`] every second until aborted.
async fn report_progress(
    rows: exp_results::RowCounts,
    events: crate::events::Events,
    trial: u32,
    clock: TrialClock,
    planned_ns: Option<u64>,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    loop {
        tick.tick().await;
        events.send(crate::events::Event::TrialProgress {
            trial,
            elapsed_ns: clock.now_ns(),
            planned_ns,
            rows: rows.trial(trial),
        });
    }
}
