//! `expc test --run`: each experiment's first trial (its first sweep point,
//! first repetition), shortened by `--time-scale`, must complete, and every
//! workload and the monitor must have written rows to the table that records
//! what it did. The claims' verdicts over that trial are reported.

use std::path::{Path, PathBuf};

use exp_plan::Plan;
use exp_results::claims::ClaimRecord;
use exp_results::manifest::RunStatus;
use exp_runtime::{RunError, RunOptions, TrialSelection};

/// Why the first trial failed; `interrupted` when Ctrl-C stopped it, and
/// with it the tests.
pub struct RunFailure {
    pub message: String,
    pub interrupted: bool,
}

impl From<String> for RunFailure {
    fn from(message: String) -> Self {
        RunFailure {
            message,
            interrupted: false,
        }
    }
}

/// Runs trial 0 of `plan` into a temporary folder, removed afterwards;
/// returns the claims' verdicts over it.
pub fn run_first_trial(spec: &Path, plan: &Plan, time_scale: f64) -> Result<Vec<ClaimRecord>, RunFailure> {
    let out = TempDir::new()?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the expc executable: {e}"))?;
    let options = RunOptions {
        out_root: out.0.clone(),
        trials: Some(TrialSelection::parse("0", plan.trial_count()).map_err(|e| e.to_string())?),
        time_scale,
        force: false,
        launcher: exp_anomaly::Launcher {
            program: exe,
            args: vec!["__anomaly-kernel".into()],
        },
        spec_dir: spec.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        shard: None,
        run_id: None,
        split: None,
        bounds: exp_results::validity::Bounds::default(),
        include_invalid: false,
    };
    let result = crate::run::drive(
        |events, cancel| async move { exp_runtime::run(plan, options, events, cancel).await },
        false,
        crate::serving::Serving::default(),
    )?;
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(RunError::Preflight(issues)) => {
            let problems: Vec<String> = issues.iter().map(|i| format!("  {}", i.diagnostic.message)).collect();
            return Err(format!("preflight failed:\n{}", problems.join("\n")).into());
        }
        Err(error) => return Err(error.to_string().into()),
    };
    let manifest = &outcome.manifest;
    if manifest.status != RunStatus::Complete {
        let why = manifest
            .trials
            .iter()
            .find_map(|t| t.error.clone())
            .or_else(|| manifest.error.clone())
            .unwrap_or_default();
        return Err(RunFailure {
            message: format!("the first trial ended {}: {why}", manifest.status.as_str()),
            interrupted: manifest.status == RunStatus::Interrupted,
        });
    }
    let mut expected: Vec<(String, &'static str)> = plan
        .workloads_at(0)
        .unwrap_or_default()
        .iter()
        .map(|w| (format!("workload `{}`", w.name), exp_runtime::activity_table(&w.config)))
        .collect();
    if plan.monitor.is_some() {
        expected.push(("the monitor".into(), exp_runtime::MONITOR_TABLE));
    }
    let empty: Vec<String> = expected
        .into_iter()
        .filter(|(_, table)| manifest.tables.get(*table).is_none_or(|t| t.rows == 0))
        .map(|(who, table)| format!("{who} wrote no rows to `{table}`"))
        .collect();
    if empty.is_empty() {
        Ok(manifest.claims.clone())
    } else {
        Err(format!(
            "the first trial (time scale {time_scale}) completed, but {}",
            empty.join(", ")
        )
        .into())
    }
}

/// A folder of its own under the system's temporary folder, removed when
/// dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, String> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("expc-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
