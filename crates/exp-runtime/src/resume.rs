//! Preparing `expc run --resume`: the run directory is taken over (its
//! runner lock first, so two resumes or a live runner cannot collide), the
//! plan is checked to be the one that started the run, and every trial that
//! did not complete is set to run again, its earlier attempt recorded and
//! its files moved aside (never deleted).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use exp_plan::Plan;
use exp_results::manifest::{AttemptRecord, Manifest, ResumeRecord, RunStatus, TrialStatus};
use exp_results::{ResultsError, Role, RunDir};

use crate::selection::TrialSelection;

#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("{0}")]
    Results(#[from] ResultsError),
    #[error(
        "the plan is not the one that started the run in {dir}: its SHA-256 is {found}, the run's is {expected} \
         (resume with the run's own plan: `expc run --resume {dir}` alone)"
    )]
    PlanChanged {
        dir: PathBuf,
        expected: String,
        found: String,
    },
    #[error("cannot resume with {path}: {source}")]
    Plan {
        path: PathBuf,
        #[source]
        source: exp_plan::PlanError,
    },
    #[error("{dir}: the recorded `--trials {text}` does not fit the plan: {reason}")]
    Selection { dir: PathBuf, text: String, reason: String },
}

/// The run's own options, as recorded when it started.
pub struct ResumeOptions {
    pub time_scale: f64,
    pub trials: Option<TrialSelection>,
    pub forced: bool,
    pub spec_dir: Option<PathBuf>,
}

/// Reads what a resume needs to know before anything is taken over: the
/// run's plan (`plan.json`, checked against the manifest's hash) and its
/// options; for one shard of a sharded run (`role`), its fragment's.
/// Nothing is written.
pub fn load(dir: &Path, role: Role) -> Result<(Plan, ResumeOptions), ResumeError> {
    let manifest = Manifest::read(&dir.join(role.manifest_file()))?;
    let path = dir.join("plan.json");
    let bytes = std::fs::read(&path).map_err(|source| ResultsError::Io {
        action: "read",
        path: path.clone(),
        source,
    })?;
    // A run made by an expc of another plan version is refused here, by name.
    let plan = Plan::from_json(&bytes).map_err(|source| ResumeError::Plan { path, source })?;
    check_plan(dir, &manifest, &plan)?;
    let trials = manifest
        .options
        .trials_selected
        .as_deref()
        .map(|text| {
            TrialSelection::parse(text, plan.trial_count()).map_err(|e| ResumeError::Selection {
                dir: dir.to_path_buf(),
                text: text.to_string(),
                reason: e.to_string(),
            })
        })
        .transpose()?;
    Ok((
        plan,
        ResumeOptions {
            time_scale: manifest.options.time_scale,
            trials,
            forced: manifest.options.forced,
            spec_dir: manifest.options.spec_dir.map(PathBuf::from),
        },
    ))
}

fn check_plan(dir: &Path, manifest: &Manifest, plan: &Plan) -> Result<(), ResumeError> {
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

/// Takes the run over and returns it with a manifest ready to go on:
/// status `running`, complete trials kept (but those in `rerun`: a split
/// run's trials that another part did not complete), the rest `planned` again.
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
    check_plan(dir, &manifest, plan)?;
    let previous_status = match manifest.status {
        // We hold the lock now, so whoever wrote `running` is gone.
        RunStatus::Running => RunStatus::Crashed,
        status => status,
    };
    manifest.resumes.push(ResumeRecord {
        at: exp_results::rfc3339(SystemTime::now()),
        previous_status,
    });
    manifest.status = RunStatus::Running;
    manifest.error = None;
    manifest.ended_at = None;
    manifest.ended_unix_ns = None;
    for index in 0..manifest.trials.len() {
        let record = &manifest.trials[index];
        let status = match record.status {
            TrialStatus::Complete if !rerun.contains(&record.trial) => continue,
            TrialStatus::Skipped if selection.is_some_and(|s| !s.contains(record.trial)) => continue,
            // Skipped for a stop rule or an interruption, or never reached.
            TrialStatus::Skipped | TrialStatus::Planned => {
                manifest.trials[index].status = TrialStatus::Planned;
                continue;
            }
            TrialStatus::Running => TrialStatus::Crashed,
            status => status,
        };
        let attempt = record.attempts.len() + 1;
        let moved = run_dir.set_attempt_aside(record.trial, attempt)?;
        let files = moved.map(|moved| {
            // The run's table counts are of the files in `tables/`.
            for (table, moved) in moved.tables {
                if let Some(total) = manifest.tables.get_mut(&table) {
                    total.rows = total.rows.saturating_sub(moved.rows);
                    total.files = total.files.saturating_sub(moved.files);
                }
            }
            moved.dir
        });
        let record = &mut manifest.trials[index];
        let error = match status {
            TrialStatus::Complete => {
                Some("run again with the other parts of the split run, which did not complete it".into())
            }
            _ => record.error.take(),
        };
        record.attempts.push(AttemptRecord {
            status,
            started_at_unix_ns: record.started_at_unix_ns.take(),
            ended_at_unix_ns: record.ended_at_unix_ns.take(),
            error,
            files,
        });
        record.metrics.clear();
        record.status = TrialStatus::Planned;
    }
    Ok((run_dir, manifest))
}
