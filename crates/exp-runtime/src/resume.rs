//! Preparing `expc run --resume`: the run directory is found by whatever
//! path names it and taken over (its runner lock first, so two resumes or a
//! live runner cannot collide), the plan is checked to be the one that
//! started the run, and every trial that did not complete is set to run
//! again, its earlier attempt recorded and its files moved aside (never
//! deleted). A complete run is left exactly as it is.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use exp_plan::Plan;
use exp_results::manifest::{AttemptRecord, Manifest, ResumeRecord, RunStatus, TrialRecord, TrialStatus};
use exp_results::{has_partial_name, locate_run, ResultsError, Role, RunDir};

use crate::selection::TrialSelection;

#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("{0}")]
    Results(#[from] ResultsError),
    /// The plan given beside `--resume` is not the run's.
    #[error(
        "the plan given is not the one that started the run in {dir}: its SHA-256 is {found}, the run's is \
         {expected} (give the spec or plan that started it, or none: the run's own plan.json is used)"
    )]
    PlanChanged {
        dir: PathBuf,
        expected: String,
        found: String,
    },
    /// The run's own `plan.json` is not the plan its manifest names.
    #[error(
        "the run's plan changed since it started: {path} has SHA-256 {found}, the run's manifest says {expected}; \
         put the run's plan back, or resume with the spec or plan that started it (`expc run --resume DIR SPEC`), \
         which writes plan.json again"
    )]
    RunPlanChanged {
        path: PathBuf,
        expected: String,
        found: String,
    },
    /// The run's own `plan.json` cannot be read as a plan.
    #[error(
        "cannot read the run's plan {path}: {why}; resume with the spec or plan that started the run \
         (`expc run --resume DIR SPEC`), which writes plan.json again"
    )]
    RunPlan { path: PathBuf, why: String },
    #[error("{dir}: the recorded `--trials {text}` does not fit the plan: {reason}")]
    Selection { dir: PathBuf, text: String, reason: String },
}

/// What a resume goes on with, as the run recorded it when it started.
pub struct ResumeOptions {
    /// The run directory, by its own absolute path ([`locate_run`]).
    pub dir: PathBuf,
    pub time_scale: f64,
    pub trials: Option<TrialSelection>,
    pub forced: bool,
    pub spec_dir: Option<PathBuf>,
    /// The audits' bounds the run started with.
    pub bounds: exp_results::validity::Bounds,
    /// The run (or shard) is complete: nothing to resume.
    pub complete: bool,
    /// What was found wrong and will be gone past (journal lines skipped, a
    /// `plan.json` to write again), for the user to see before it starts.
    pub warnings: Vec<String>,
}

/// Reads what a resume needs to know before anything is taken over: the
/// plan (`given`, the spec or plan file beside `--resume`, or else the
/// run's `plan.json`), checked against the manifest's hash, and the run's
/// options; for one shard of a sharded run (`role`), its fragment's.
/// Nothing is written.
pub fn load(dir: &Path, role: Role, given: Option<Plan>) -> Result<(Plan, ResumeOptions), ResumeError> {
    let dir = locate_run(dir)?;
    let manifest = Manifest::read(&dir.join(role.manifest_file()))?;
    let mut warnings: Vec<String> = manifest.read_warnings.iter().map(ToString::to_string).collect();
    let plan = match given {
        Some(plan) => {
            check_given_plan(&dir, &manifest, &plan)?;
            if run_plan(&dir, &manifest).is_err() {
                warnings.push(format!("{}: {}", dir.join("plan.json").display(), RESTORED));
            }
            plan
        }
        None => run_plan(&dir, &manifest)?,
    };
    let trials = manifest
        .options
        .trials_selected
        .as_deref()
        .map(|text| {
            TrialSelection::parse(text, plan.trial_count()).map_err(|e| ResumeError::Selection {
                dir: dir.clone(),
                text: text.to_string(),
                reason: e.to_string(),
            })
        })
        .transpose()?;
    let options = ResumeOptions {
        dir,
        time_scale: manifest.options.time_scale,
        trials,
        forced: manifest.options.forced,
        spec_dir: manifest.options.spec_dir.map(PathBuf::from),
        bounds: manifest.options.validity_bounds.unwrap_or_default(),
        complete: manifest.status == RunStatus::Complete,
        warnings,
    };
    Ok((plan, options))
}

const RESTORED: &str = "missing or not the run's plan: written again from the plan given";

/// The run's own `plan.json`, if it is the plan the manifest names.
fn run_plan(dir: &Path, manifest: &Manifest) -> Result<Plan, ResumeError> {
    let path = dir.join("plan.json");
    let unreadable = |why: String| ResumeError::RunPlan {
        path: path.clone(),
        why,
    };
    let bytes = std::fs::read(&path).map_err(|e| unreadable(e.to_string()))?;
    // A run made by an expc of another plan version is refused here, by name.
    let plan = Plan::from_json(&bytes).map_err(|e| unreadable(e.to_string()))?;
    let found = exp_results::plan_sha256(&plan)?;
    if found == manifest.plan_sha256 {
        Ok(plan)
    } else {
        Err(ResumeError::RunPlanChanged {
            path,
            expected: manifest.plan_sha256.clone(),
            found,
        })
    }
}

fn check_given_plan(dir: &Path, manifest: &Manifest, plan: &Plan) -> Result<(), ResumeError> {
    let found = exp_results::plan_sha256(plan)?;
    if found == manifest.plan_sha256 {
        Ok(())
    } else {
        Err(ResumeError::PlanChanged {
            dir: dir.to_path_buf(),
            expected: manifest.plan_sha256.clone(),
            found,
        })
    }
}

/// A complete run (or shard) has nothing to resume: its directory and
/// manifest are returned as they are, untouched. One whose runner stopped
/// between writing its manifest and renaming it is renamed (taken over
/// first). `None` for a run that is not complete.
pub(crate) fn finished(dir: &Path, role: Role) -> Result<Option<(PathBuf, Manifest)>, ResumeError> {
    let dir = locate_run(dir)?;
    let manifest = Manifest::read(&dir.join(role.manifest_file()))?;
    if manifest.status != RunStatus::Complete {
        return Ok(None);
    }
    if role != Role::Whole || !has_partial_name(&dir) {
        return Ok(Some((dir, manifest)));
    }
    let run_dir = RunDir::reopen(&dir)?;
    let manifest = Manifest::read(&run_dir.path().join(role.manifest_file()))?;
    if manifest.status != RunStatus::Complete {
        return Ok(None);
    }
    let run_dir = run_dir.finish()?;
    Ok(Some((run_dir, manifest)))
}

/// Takes the run over and returns it with a manifest ready to go on:
/// status `running`, complete trials kept (but those in `rerun`: a split
/// run's trials that another part did not complete), the rest `planned`
/// again with their earlier attempts set aside, the table counts those of
/// the files now in `tables/`.
pub(crate) fn prepare(
    dir: &Path,
    role: Role,
    plan: &Plan,
    selection: Option<&TrialSelection>,
    rerun: &BTreeSet<u32>,
) -> Result<(RunDir, Manifest), ResumeError> {
    let run_dir = match role {
        Role::Whole => RunDir::reopen(dir)?,
        Role::Shard(k) => RunDir::reopen_shard(dir, k)?,
    };
    let mut manifest = Manifest::read(&run_dir.path().join(role.manifest_file()))?;
    check_given_plan(run_dir.path(), &manifest, plan)?;
    let mut warnings: Vec<String> = manifest.read_warnings.drain(..).map(|w| w.to_string()).collect();
    if run_dir.restore_plan(plan)? {
        warnings.push(format!("plan.json: {RESTORED}"));
    }
    let previous_status = match manifest.status {
        // We hold the lock now, so whoever wrote `running` is gone.
        RunStatus::Running => RunStatus::Crashed,
        status => status,
    };
    manifest.status = RunStatus::Running;
    manifest.error = None;
    manifest.ended_at = None;
    manifest.ended_unix_ns = None;
    for record in &mut manifest.trials {
        let again = match record.status {
            TrialStatus::Complete => rerun.contains(&record.trial),
            TrialStatus::Skipped => selection.is_none_or(|s| s.contains(record.trial)),
            _ => true,
        };
        if again {
            set_aside(&run_dir, record)?;
        }
    }
    // The counts of a crashed run are as of its start; of any run, they
    // included the files just set aside.
    let (tables, unreadable) = run_dir.count_tables();
    manifest.tables = tables;
    warnings.extend(unreadable);
    manifest.resumes.push(ResumeRecord {
        at: exp_results::rfc3339(SystemTime::now()),
        previous_status,
        warnings,
    });
    Ok((run_dir, manifest))
}

/// Makes `record`'s trial ready to run again: whatever an earlier attempt
/// left on disk moves to `attempts/` and the attempt is recorded. A trial
/// never started (`planned`, or `skipped` by an interruption or a `repeat
/// until` rule) has no attempt, unless files of it are there: a journal
/// that lost the line of its start cannot make its rows be overwritten.
fn set_aside(run_dir: &RunDir, record: &mut TrialRecord) -> Result<(), ResumeError> {
    let status = match record.status {
        TrialStatus::Running => TrialStatus::Crashed,
        status => status,
    };
    let started = !matches!(status, TrialStatus::Planned | TrialStatus::Skipped);
    let moved = run_dir.set_attempt_aside(record.trial, record.attempts.len() + 1, crate::kinds::KEPT_OUTPUT_DIRS)?;
    if started || moved.is_some() {
        let error = match (started, record.error.take()) {
            (false, _) => Some(format!(
                "the manifest said `{}`, but files of this trial were on disk: they are this attempt's",
                status.as_str()
            )),
            (true, None) if status == TrialStatus::Complete => {
                Some("run again with the other parts of the split run, which did not complete it".into())
            }
            (true, error) => error,
        };
        record.attempts.push(AttemptRecord {
            status,
            started_at_unix_ns: record.started_at_unix_ns.take(),
            ended_at_unix_ns: record.ended_at_unix_ns.take(),
            error,
            files: moved.map(|m| m.dir),
            validity: None,
        });
        record.metrics.clear();
        record.validity = None;
    }
    record.status = TrialStatus::Planned;
    Ok(())
}
