//! The orchestrator: preflight, the run directory and the store, and a
//! manifest that always says where the run stands. [`run`] starts a run;
//! [`resume`] goes on with one (resume.rs prepares it); the trials
//! themselves run point by point in points.rs. What a run is given and
//! what its trials share are run_context.rs's, so points.rs and trial.rs
//! never import this file back.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use exp_plan::Plan;
use exp_results::manifest::{Manifest, RunStatus, ShardOf, TrialStatus};
use exp_results::{PartMode, PartsAgreement, ResultsError, Role, RunDir, Store, StoreOptions};

use crate::cancel::Cancel;
use crate::events::{Event, Events};
use crate::kinds;
use crate::points::run_points;
use crate::preflight::{preflight, PreflightInput};
use crate::resume::{finished, prepare};
use crate::run_context::{RunContext, RunError, RunOptions, MAX_TIME_SCALE};
use crate::shard::{shard_trials, ShardSpec};
use crate::trials_table::TrialsTable;

#[derive(Debug)]
pub struct RunOutcome {
    pub run_dir: PathBuf,
    pub manifest: Manifest,
}

/// Starts a new run of `plan` in a new run directory.
pub async fn run(plan: &Plan, options: RunOptions, events: Events, cancel: Cancel) -> Result<RunOutcome, RunError> {
    check_options(plan, &options)?;
    kinds::prepare_for_plan(plan);
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
        if let Some((run_dir, manifest)) = finished(dir, role)? {
            return Ok(RunOutcome { run_dir, manifest });
        }
    }
    check_options(plan, &options)?;
    kinds::prepare_for_plan(plan);
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
