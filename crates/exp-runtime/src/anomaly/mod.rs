//! The anomaly executor: one supervised child process per activation of an
//! anomaly window, sampled from the OS while it runs, with the ground truth
//! (planned and actual start/end) in `anomaly_timeline`.
//!
//! Runs on a blocking thread of its own: the child is started and reaped on
//! that thread, which outlives it, as PR_SET_PDEATHSIG requires. Its
//! checks before a run are `check.rs`.

pub(crate) mod check;

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use exp_anomaly::{Counters, ExitKind, InstanceConfig, Outcome};
use exp_plan::{Anomaly, AnomalyParams};
use exp_results::{Cell, DType, Schema, TableSink};

use crate::cancel::Level;
use crate::executor::{ExecError, WorkloadContext, WorkloadSummary};

/// How long a child gets to stop after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(1);

/// The ground truth: one row per phase change of every anomaly.
pub const TIMELINE_TABLE: &str = exp_results::schemas::TIMELINE_TABLE;

pub use exp_results::schemas::timeline_schema;

pub fn samples_schema() -> Schema {
    Schema::new("anomaly_samples")
        .column("t_ns", DType::Ns)
        .column("instance", DType::Str)
        .column("activation", DType::U64)
        .column("pid", DType::U64)
        .column("interval_ns", DType::Ns)
        .column("cpu_time_ns", DType::Ns)
        .column("achieved_utilization_pct", DType::F64)
        .column("rss_bytes", DType::U64)
        .column("iterations", DType::U64)
        .column("bytes", DType::U64)
        .column("files", DType::U64)
}

/// Totals over all activations, for the summary metrics.
#[derive(Default)]
struct Totals {
    cpu_ns: u64,
    core_wall_ns: u64,
    counters: Counters,
    findings: Vec<exp_results::validity::Finding>,
}

pub fn run(ctx: WorkloadContext, anomaly: &Anomaly) -> Result<WorkloadSummary, ExecError> {
    let timeline = ctx.tables.sink(&timeline_schema());
    let samples = ctx.tables.sink(&samples_schema());
    let mut totals = Totals::default();
    let mut failure = None;
    for (activation, interval) in ctx.intervals.iter().enumerate() {
        if !ctx.cancel.sleep_until(ctx.clock.at(interval.start_ns)) {
            break;
        }
        let end_ns = interval.end_ns.or(ctx.trial_end_ns);
        match activate(
            &ctx,
            anomaly,
            activation as u64,
            interval.start_ns,
            end_ns,
            &samples,
            &mut totals,
        )? {
            Activation { row, error: None } => timeline.write(one_row(&timeline_schema(), row)?)?,
            Activation {
                row,
                error: Some(error),
            } => {
                timeline.write(one_row(&timeline_schema(), row)?)?;
                failure = Some(error);
                break;
            }
        }
    }
    if let Some(error) = failure {
        return Err(ExecError::step("anomaly", &ctx.workload.name, "activation", error));
    }
    let mut summary = WorkloadSummary::default();
    if totals.core_wall_ns > 0 {
        summary.metrics.insert(
            "achieved_utilization".into(),
            totals.cpu_ns as f64 / totals.core_wall_ns as f64,
        );
    }
    summary
        .metrics
        .insert("bytes_touched".into(), totals.counters.bytes as f64);
    summary
        .metrics
        .insert("operations".into(), totals.counters.iterations as f64);
    summary.findings = totals.findings;
    summary.child_cpu_ns = totals.cpu_ns;
    Ok(summary)
}

/// This process's CPU since `since_ns` (its CPU clock then) over
/// `active_ns` of wall time, as a share of the machine's cores (the
/// anomaly's child is another process and not in it).
fn own_cpu_share(since_ns: Option<u64>, active_ns: u64) -> f64 {
    let used_ns = exp_host::process_cpu_ns()
        .zip(since_ns)
        .map_or(0, |(now, then)| now.saturating_sub(then));
    let cores = exp_host::online_cpus().len().max(1) as f64;
    used_ns as f64 / (active_ns.max(1) as f64 * cores)
}

struct Activation {
    /// Its `anomaly_timeline` row, by column name.
    row: Vec<(&'static str, Cell)>,
    error: Option<String>,
}

/// One activation: the child from its planned start until its planned end
/// (or the trial's stop), sampled every `sample_interval`.
fn activate(
    ctx: &WorkloadContext,
    anomaly: &Anomaly,
    activation: u64,
    planned_start_ns: u64,
    planned_end_ns: Option<u64>,
    samples: &TableSink,
    totals: &mut Totals,
) -> Result<Activation, ExecError> {
    let name = &ctx.workload.name;
    // Without an end the child runs until the trial stops it.
    let end = planned_end_ns.map(|ns| ctx.clock.at(ns));
    let run_for = end.map_or(Duration::from_secs(365 * 24 * 3600), |e| {
        e.saturating_duration_since(Instant::now())
    });
    let config = InstanceConfig {
        instance: name.clone(),
        anomaly: anomaly.clone(),
        seed: ctx.seed.wrapping_add(activation.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        scratch_dir: ctx.scratch.join(format!("{name}-{activation}")),
        run_for,
    };
    // Made here, below the run directory, so that the child's own
    // `create_dir_all` never makes a run moved away again at its old path.
    exp_results::create_dir_below(&ctx.run_dir, &config.scratch_dir)
        .map_err(|e| ExecError::step("anomaly", name, "scratch directory", e.to_string()))?;
    let actual_start_ns = ctx.clock.now_ns();
    let own_cpu_ns = exp_host::process_cpu_ns();
    let instance = exp_anomaly::spawn(&ctx.launcher, &config)?;
    let pid = instance.pid();
    ctx.processes.add(name, pid);
    ctx.live.activations_started.fetch_add(1, Relaxed);
    let supervised = supervise(ctx, anomaly, activation, instance, end, samples);
    ctx.live.activations_ended.fetch_add(1, Relaxed);
    ctx.processes.remove(pid);
    let (outcome, peak_rss) = supervised?;
    let actual_end_ns = ctx.clock.now_ns();
    let active_ns = actual_end_ns.saturating_sub(actual_start_ns);
    totals.cpu_ns += outcome.cpu_time_ns;
    totals.core_wall_ns += active_ns * anomaly.cores.len().max(1) as u64;
    totals.counters.iterations += outcome.counters.iterations;
    totals.counters.bytes += outcome.counters.bytes;
    totals.counters.files += outcome.counters.files;
    let (status, error) = status(&outcome);
    let achieved = utilization_pct(outcome.cpu_time_ns, active_ns, anomaly.cores.len());
    let audited = crate::audit::activation(
        &crate::audit::ActivationWork {
            activation,
            params: &anomaly.params,
            counters: &outcome.counters,
            active_ns,
            achieved_utilization: achieved / 100.0,
            own_cpu_share: own_cpu_share(own_cpu_ns, active_ns),
        },
        &ctx.bounds,
    );
    let ground_truth = audited.as_ref().is_none_or(|f| f.code != "V0301");
    totals.findings.extend(audited);
    let row = vec![
        ("instance", name.as_str().into()),
        ("activation", activation.into()),
        ("kind", anomaly.params.kind().into()),
        (
            "parameters",
            serde_json::to_string(&anomaly.params).unwrap_or_default().into(),
        ),
        (
            "cores",
            anomaly
                .cores
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
                .into(),
        ),
        ("target_utilization_pct", target_utilization_pct(&anomaly.params)),
        ("planned_start_ns", planned_start_ns.into()),
        ("planned_end_ns", planned_end_ns.into()),
        ("actual_start_ns", actual_start_ns.into()),
        ("actual_end_ns", actual_end_ns.into()),
        ("status", status.into()),
        ("error", error.clone().into()),
        ("pid", u64::from(pid).into()),
        ("cpu_time_ns", outcome.cpu_time_ns.into()),
        ("achieved_utilization_pct", achieved.into()),
        ("peak_rss_bytes", peak_rss.into()),
        ("iterations", outcome.counters.iterations.into()),
        ("bytes", outcome.counters.bytes.into()),
        ("files", outcome.counters.files.into()),
        ("ground_truth", ground_truth.into()),
    ];
    Ok(Activation { row, error })
}

/// Samples the child (ended and reaped when this returns, however it
/// returns) until it ends, its window ends or the trial stops it
/// (gracefully, or at once on a second Ctrl-C); returns how it ended and its
/// peak resident memory.
fn supervise(
    ctx: &WorkloadContext,
    anomaly: &Anomaly,
    activation: u64,
    mut instance: exp_anomaly::Instance,
    end: Option<Instant>,
    samples: &TableSink,
) -> Result<(Outcome, u64), ExecError> {
    let pid = instance.pid();
    let mut last = (Instant::now(), 0u64);
    let mut peak_rss = 0;
    let mut next = Instant::now() + ctx.sample_interval;
    loop {
        let deadline = end.map_or(next, |e| e.min(next));
        let on_time = ctx.cancel.sleep_until(deadline);
        if let Ok(sample) = instance.sample() {
            let now = Instant::now();
            let interval = now.duration_since(last.0).as_nanos() as u64;
            let cpu = sample.cpu_time_ns.saturating_sub(last.1);
            peak_rss = peak_rss.max(sample.rss_bytes);
            let achieved_pct = utilization_pct(cpu, interval, anomaly.cores.len());
            ctx.live.set_achieved_utilization(achieved_pct / 100.0);
            let row = vec![
                ("t_ns", ctx.clock.now_ns().into()),
                ("instance", ctx.workload.name.as_str().into()),
                ("activation", activation.into()),
                ("pid", u64::from(pid).into()),
                ("interval_ns", interval.into()),
                ("cpu_time_ns", cpu.into()),
                ("achieved_utilization_pct", achieved_pct.into()),
                ("rss_bytes", sample.rss_bytes.into()),
                ("iterations", sample.counters.iterations.into()),
                ("bytes", sample.counters.bytes.into()),
                ("files", sample.counters.files.into()),
            ];
            samples.write(one_row(&samples_schema(), row)?)?;
            last = (now, sample.cpu_time_ns);
        }
        if let Some(outcome) = instance.try_wait()? {
            return Ok((outcome, peak_rss));
        }
        let ended = end.is_some_and(|e| Instant::now() >= e);
        if !on_time || ended {
            let outcome = if ctx.cancel.level() == Level::Kill {
                instance.kill()?
            } else {
                instance.stop(GRACE)?
            };
            return Ok((outcome, peak_rss));
        }
        if Instant::now() >= next {
            next += ctx.sample_interval;
        }
    }
}

/// The utilization a `cpuoccupy` anomaly aims at; other kinds have none.
fn target_utilization_pct(params: &AnomalyParams) -> Cell {
    match params {
        AnomalyParams::Cpuoccupy { utilization_ratio } => Cell::F64(utilization_ratio * 100.0),
        _ => Cell::Null,
    }
}

fn status(outcome: &Outcome) -> (&'static str, Option<String>) {
    match &outcome.status {
        ExitKind::Finished => ("finished", None),
        ExitKind::Stopped => ("stopped", None),
        ExitKind::Killed => ("killed", None),
        ExitKind::Failed(failure) => ("failed", Some(failure.to_string())),
    }
}

/// CPU time as a percentage of the wall time of the pinned cores.
fn utilization_pct(cpu_ns: u64, wall_ns: u64, cores: usize) -> f64 {
    if wall_ns == 0 {
        return 0.0;
    }
    cpu_ns as f64 / (wall_ns as f64 * cores.max(1) as f64) * 100.0
}

/// A batch of one row given by column name.
fn one_row(schema: &Schema, row: Vec<(&'static str, Cell)>) -> Result<exp_results::Batch, ExecError> {
    let mut batch = schema.batch();
    batch.push_row(schema.row(row)?)?;
    Ok(batch)
}
