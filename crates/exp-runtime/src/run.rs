//! The orchestrator: options, preflight, the run directory and the store,
//! and a manifest that always says where the run stands. [`run`] starts a
//! run; [`resume`] goes on with one (resume.rs prepares it); the trials
//! themselves run point by point in points.rs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use exp_anomaly::Launcher;
use exp_plan::Plan;
use exp_results::manifest::{Manifest, RunStatus, ShardOf, TrialStatus};
use exp_results::{PartMode, PartsAgreement, ResultsError, Role, RunDir, Store, StoreOptions};

use crate::cancel::Cancel;
use crate::events::{Event, Events};
use crate::fleet;
use crate::points::run_points;
use crate::preflight::{preflight, PreflightInput, PreflightIssue};
use crate::resume::{finished, prepare, ResumeError};
use crate::selection::TrialSelection;
use crate::shard::{shard_trials, ShardSpec};
use crate::trials::TrialsTable;

#[derive(Clone)]
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
    /// Run only this shard's trials, into the shared run directory of
    /// `run_id` (shard.rs); every shard of a run gets the same options.
    pub shard: Option<ShardSpec>,
    /// The run's id instead of one made from the time and the plan's hash;
    /// required with `shard` and `split`, so that every process finds the
    /// same directory.
    pub run_id: Option<String>,
    /// Run part K of N of every trial's workloads, starting each trial with
    /// the other parts (split.rs).
    pub split: Option<ShardSpec>,
    /// The bounds each trial's audit holds it to (`exp_results::validity`).
    pub bounds: exp_results::validity::Bounds,
    /// `repeat until` counts trials an audit found invalid too
    /// (`--include-invalid`; by default it leaves them out).
    pub include_invalid: bool,
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
    #[error("--time-scale must be a number above 0 and at most {MAX_TIME_SCALE}, not {}", shown(*.0))]
    TimeScale(f64),
    #[error("{0}")]
    Resume(#[from] ResumeError),
    #[error("--shard needs --run-id: every shard of a run must name the same run directory")]
    ShardWithoutRunId,
    #[error("--split needs --run-id: every part of a split run must name the same run directory")]
    SplitWithoutRunId,
    #[error("--shard and --split cannot be combined: a process runs either some trials or part of every trial")]
    ShardAndSplit,
    #[error(
        "--split cannot run a plan with `repeat until`: each part would decide on its own share of the \
         metrics; give `repeat` a fixed count"
    )]
    SplitWithRepeatUntil,
    #[error("{0}")]
    Split(#[from] crate::split::SplitError),
    #[error("{dir} was written by `{ran}`: resume that part with it, not with `{asked}`")]
    ResumedAsAnotherPart { dir: PathBuf, asked: String, ran: String },
    /// The run ended (failed, most likely for the same reason) and the
    /// manifest could not record it: both are said.
    #[error("{outcome}; the manifest could not record this: {source}")]
    Unrecorded {
        outcome: String,
        #[source]
        source: ResultsError,
    },
}

/// A factor as the user would write it (`1e300`, not 301 digits).
fn shown(x: f64) -> String {
    if x.is_finite() && (x.abs() >= 1e6 || (x != 0.0 && x.abs() < 1e-3)) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

/// Everything the trials of one run share.
pub(crate) struct RunContext<'a> {
    pub plan: &'a Plan,
    pub options: &'a RunOptions,
    pub events: &'a Events,
    pub cancel: &'a Cancel,
    pub store: Arc<Store>,
    pub run_dir: &'a RunDir,
    pub trials_table: TrialsTable,
    pub launcher: Arc<Launcher>,
    /// The versions of the brokers the fleets published to (the manifest's `brokers`).
    pub brokers: crate::fleet::BrokerVersions,
}

/// Starts a new run of `plan` in a new run directory.
pub async fn run(plan: &Plan, options: RunOptions, events: Events, cancel: Cancel) -> Result<RunOutcome, RunError> {
    check_options(plan, &options)?;
    fleet::size_for_plan(plan);
    let started = SystemTime::now();
    let plan_sha256 = exp_results::plan_sha256(plan)?;
    let experiment = &plan.experiment.name;
    let part = options.shard.or(options.split);
    let (run_dir, run_id) = match (part, &options.run_id) {
        (Some(_), None) if options.split.is_some() => return Err(RunError::SplitWithoutRunId),
        (Some(_), None) => return Err(RunError::ShardWithoutRunId),
        (Some(part), Some(id)) => {
            let agreement = parts_agreement(&options, part, &plan_sha256);
            let dir = RunDir::create_shard(&options.out_root, experiment, id, part.index, &agreement)?;
            (dir, id.clone())
        }
        (None, Some(id)) => (RunDir::create(&options.out_root, experiment, id)?, id.clone()),
        (None, None) => create_run_dir(&options.out_root, experiment, started, &plan_sha256)?,
    };
    run_dir.write_plan(plan)?;
    // The manifest lists the trials this run is to run, not the whole plan.
    let trials: Box<dyn Iterator<Item = u32>> = match (options.shard, &options.trials) {
        (Some(shard), selection) => Box::new(shard_trials(plan, selection.as_ref(), shard).into_iter()),
        (None, Some(selection)) => Box::new(selection.iter()),
        (None, None) => Box::new(plan.trial_indices()),
    };
    let mut manifest = Manifest::new(plan, trials, &run_id, &plan_sha256, started, exp_host::facts());
    manifest.build.c_compiler = Some(exp_anomaly::KERNEL_COMPILER.to_string());
    manifest.build.c_flags = Some(exp_anomaly::KERNEL_FLAGS.to_string());
    let of = |s: ShardSpec| ShardOf {
        index: s.index,
        count: s.count,
    };
    manifest.shard = options.shard.map(of);
    manifest.split = options.split.map(of);
    manifest.options.time_scale = options.time_scale;
    manifest.options.trials_selected = options.trials.as_ref().map(|t| t.text().to_string());
    manifest.options.forced = options.force;
    manifest.options.validity_bounds =
        (options.bounds != exp_results::validity::Bounds::default()).then_some(options.bounds);
    manifest.options.spec_dir = std::path::absolute(&options.spec_dir)
        .ok()
        .map(|d| d.to_string_lossy().into_owned());
    drive(plan, &options, run_dir, manifest, events, cancel).await
}

/// What this shard or split part must share with the run's other parts.
fn parts_agreement(options: &RunOptions, part: ShardSpec, plan_sha256: &str) -> PartsAgreement {
    PartsAgreement {
        mode: if options.split.is_some() {
            PartMode::Split
        } else {
            PartMode::Shards
        },
        count: part.count,
        plan_sha256: plan_sha256.to_string(),
        time_scale: options.time_scale,
        trials_selected: options.trials.as_ref().map(|t| t.text().to_string()),
    }
}

/// Goes on with the run in `dir`: its complete trials are kept, the others
/// (interrupted, failed, crashed, never started) run again; a complete run
/// is returned untouched. `plan` must be the plan that started it;
/// `options` are the run's own (see resume.rs).
pub async fn resume(
    dir: &Path,
    plan: &Plan,
    options: RunOptions,
    events: Events,
    cancel: Cancel,
) -> Result<RunOutcome, RunError> {
    let role = options
        .shard
        .or(options.split)
        .map_or(Role::Whole, |s| Role::Shard(s.index));
    let rerun = match options.shard.or(options.split) {
        Some(part) => {
            let located = exp_results::locate_run(dir)?;
            let agreement = parts_agreement(&options, part, &exp_results::plan_sha256(plan)?);
            check_resumed_part(&located, &agreement, part)?;
            match options.split {
                Some(_) => unfinished_elsewhere(&located)?,
                None => BTreeSet::new(),
            }
        }
        None => BTreeSet::new(),
    };
    // Before preflight: a complete run needs nothing of this machine (nor
    // a complete split part whose trials every other part completed).
    if rerun.is_empty() {
        if let Some(outcome) = finished(dir, role)? {
            return Ok(outcome);
        }
    }
    check_options(plan, &options)?;
    fleet::size_for_plan(plan);
    let (run_dir, manifest) = prepare(dir, role, plan, options.trials.as_ref(), &rerun)?;
    drive(plan, &options, run_dir, manifest, events, cancel).await
}

/// The trials of a split run that some part did not complete. Every part
/// runs such a trial again, its own share included: the parts of a trial
/// run together (they meet at its start), and a share run without the
/// others is not the trial the plan describes.
fn unfinished_elsewhere(dir: &Path) -> Result<BTreeSet<u32>, RunError> {
    let (merged, _) = exp_results::read_run(dir)?;
    Ok(merged
        .trials
        .iter()
        .filter(|t| t.status != TrialStatus::Complete)
        .map(|t| t.trial)
        .collect())
}

/// A shard or split part resumes only as the part it was: the same K/N,
/// shard or split, and in agreement with the run's other parts.
fn check_resumed_part(dir: &Path, agreement: &PartsAgreement, part: ShardSpec) -> Result<(), RunError> {
    let fragment = Manifest::read(&dir.join(Role::Shard(part.index).manifest_file()))?;
    let (was, flag) = match agreement.mode {
        PartMode::Split => (fragment.split, "--split"),
        PartMode::Shards => (fragment.shard, "--shard"),
    };
    let recorded = was.map(|s| ShardSpec {
        index: s.index,
        count: s.count,
    });
    if recorded != Some(part) {
        let ran = match (fragment.shard, fragment.split) {
            (Some(s), _) => format!("--shard {}/{}", s.index, s.count),
            (_, Some(s)) => format!("--split {}/{}", s.index, s.count),
            _ => "whole".to_string(),
        };
        return Err(RunError::ResumedAsAnotherPart {
            dir: dir.to_path_buf(),
            asked: format!("{flag} {part}"),
            ran,
        });
    }
    // Runs from before parts were recorded get their record now.
    Ok(agreement.join(dir)?)
}

/// The largest `--time-scale`: a thousand-fold stretch of the timeline is
/// already far past any use, and larger factors overflow the nanosecond clock.
pub const MAX_TIME_SCALE: f64 = 1000.0;

/// `--time-scale` must be finite, positive and at most [`MAX_TIME_SCALE`].
pub fn check_time_scale(time_scale: f64) -> Result<(), RunError> {
    if time_scale.is_finite() && time_scale > 0.0 && time_scale <= MAX_TIME_SCALE {
        Ok(())
    } else {
        Err(RunError::TimeScale(time_scale))
    }
}

fn check_options(plan: &Plan, options: &RunOptions) -> Result<(), RunError> {
    check_time_scale(options.time_scale)?;
    if options.split.is_some() {
        if options.shard.is_some() {
            return Err(RunError::ShardAndSplit);
        }
        if plan.repeat.stop.is_some() {
            return Err(RunError::SplitWithRepeatUntil);
        }
    }
    let issues = preflight(&PreflightInput {
        plan,
        out_root: &options.out_root,
        force: options.force,
        spec_dir: &options.spec_dir,
    });
    if issues.is_empty() {
        Ok(())
    } else {
        Err(RunError::Preflight(issues))
    }
}

/// A new run directory. Two runs of one plan started within the same
/// second would get the same id; the second gets `-2` (then `-3`, …).
fn create_run_dir(
    out_root: &Path,
    experiment: &str,
    started: SystemTime,
    plan_sha256: &str,
) -> Result<(RunDir, String), ResultsError> {
    let base = exp_results::new_run_id(started, plan_sha256);
    let mut run_id = base.clone();
    for n in 2.. {
        match RunDir::create(out_root, experiment, &run_id) {
            Ok(dir) => return Ok((dir, run_id)),
            Err(ResultsError::RunExists { .. }) if n < 1000 => run_id = format!("{base}-{n}"),
            Err(e) => return Err(e),
        }
    }
    unreachable!("the loop returns")
}

/// Runs the trials still to run, then finishes the tables and says in the
/// manifest how the run ended, whatever happened.
async fn drive(
    plan: &Plan,
    options: &RunOptions,
    run_dir: RunDir,
    mut manifest: Manifest,
    events: Events,
    cancel: Cancel,
) -> Result<RunOutcome, RunError> {
    run_dir.write_manifest(&mut manifest)?;
    let store_options = StoreOptions {
        // A split run's parts write the same tables: each row says whose it is.
        host_column: manifest.split.map(|_| manifest.host.hostname.clone()),
        checkpoint: if crate::abort::any(plan) {
            crate::abort::CHECKPOINT
        } else {
            StoreOptions::default().checkpoint
        },
        ..StoreOptions::default()
    };
    let store = Arc::new(Store::open(run_dir.tables_dir(), store_options)?);
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
        options,
        events: &events,
        cancel: &cancel,
        store,
        run_dir: &run_dir,
        trials_table: TrialsTable::new(plan),
        launcher: Arc::new(options.launcher.clone()),
        brokers: crate::fleet::BrokerVersions::default(),
    };
    // A part of a sharded or split run sees only its own rows: it neither aborts nor judges.
    let whole = manifest.shard.is_none() && manifest.split.is_none();
    let watch = whole
        .then(|| crate::abort::watch(plan, run_dir.path().to_path_buf(), options.time_scale, cancel.clone()))
        .flatten();
    let failure = run_points(&context, &mut manifest, selected).await.err();
    if let Some((claim, why)) = watch.and_then(crate::abort::Watch::finish) {
        manifest.error = Some(format!("aborted by claim `{claim}`: {why}"));
        manifest.aborted_by = Some(claim);
    }

    let RunContext { store, brokers, .. } = context;
    manifest.brokers.extend(brokers.take());
    // Even when the store failed, the manifest lists the files that are there.
    let closed = match sole_owner(store).await {
        Ok(store) => {
            let (summary, result) = store.close_with_summary();
            manifest.record_tables(&summary);
            result
        }
        Err(_) => Ok(()),
    };
    manifest.claims = crate::claims::verdicts(plan, run_dir.path(), &manifest, options.include_invalid);
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
    if let Err(source) = run_dir.write_manifest(&mut manifest) {
        if matches!(source, ResultsError::RunDirMoved { .. }) {
            // The cause of whatever else failed: said alone.
            return Err(source.into());
        }
        let outcome = match &manifest.error {
            Some(error) => format!("the run failed: {error}"),
            None => format!("the run ended {}", manifest.status.as_str()),
        };
        return Err(RunError::Unrecorded { outcome, source });
    }
    let run_dir = run_dir.finish()?;
    Ok(RunOutcome { run_dir, manifest })
}

/// The store once the trials' tasks have let go of it: an aborted task
/// drops its handle on the runtime's own time, so this waits a little
/// (at most 5 s) rather than leave the store open behind a finished run.
async fn sole_owner(mut store: Arc<Store>) -> Result<Store, Arc<Store>> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match Arc::try_unwrap(store) {
            Ok(store) => return Ok(store),
            Err(shared) if Instant::now() < deadline => {
                store = shared;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(shared) => return Err(shared),
        }
    }
}
