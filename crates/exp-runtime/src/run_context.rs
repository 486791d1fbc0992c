//! What a run is given and what its trials share: [`RunOptions`], the
//! [`RunContext`] the orchestrator (run.rs) hands to points.rs, trial.rs
//! and replacement.rs, and [`RunError`]. Apart from run.rs so that the
//! modules it calls read these without importing their caller.

use std::path::PathBuf;
use std::sync::Arc;

use exp_anomaly::Launcher;
use exp_plan::Plan;
use exp_results::{ResultsError, RunDir, Store};

use crate::cancel::Cancel;
use crate::events::Events;
use crate::preflight::PreflightIssue;
use crate::resume::ResumeError;
use crate::selection::TrialSelection;
use crate::shard::ShardSpec;
use crate::trials_table::TrialsTable;

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

/// The largest `--time-scale`: a thousand-fold stretch of the timeline is
/// already far past any use, and larger factors overflow the nanosecond clock.
pub const MAX_TIME_SCALE: f64 = 1000.0;

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
