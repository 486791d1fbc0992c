//! `manifest.json`: what ran, where, and how it ended.
//!
//! A plain data struct the runtime fills and rewrites (atomically, through
//! [`crate::RunDir::write_manifest`]) as the run progresses. Field order here
//! is the order in the file; maps are `BTreeMap`s so the output is stable.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

pub use crate::run_status::RunStatus;
pub use crate::times::{new_run_id, rfc3339, unix_ns};
use crate::BuildRecord;

/// Bumped whenever the meaning or shape of the manifest changes incompatibly.
pub const MANIFEST_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub manifest_version: u32,
    pub expc_version: String,
    /// How that expc was built; empty in manifests from before it was recorded.
    #[serde(default)]
    pub build: BuildRecord,
    pub experiment: String,
    pub run_id: String,
    pub status: RunStatus,
    pub error: Option<String>,
    /// RFC 3339, UTC (see [`rfc3339`]).
    pub started_at: String,
    pub ended_at: Option<String>,
    pub started_unix_ns: u64,
    pub ended_unix_ns: Option<u64>,
    /// The spec the plan was compiled from; `None` when a plan file was run.
    pub spec: Option<SpecRecord>,
    /// SHA-256 of `plan.json`'s bytes, as returned by [`crate::RunDir::write_plan`].
    pub plan_sha256: String,
    pub seed: u64,
    pub host: exp_host::HostFacts,
    /// The MQTT brokers the run's fleets published to, by URL (`embedded`
    /// for expc's own), each with the version it reported: Mosquitto's
    /// `$SYS/broker/version`, read once per run when a fleet connects;
    /// `unknown` and why when the broker published none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub brokers: BTreeMap<String, String>,
    pub options: OptionsRecord,
    /// The trials this run runs (every trial of the plan, or the `--trials`
    /// selection), in trial order.
    pub trials: Vec<TrialRecord>,
    /// Each point with trials in this run, once its trials are done.
    pub points: Vec<PointRecord>,
    /// Table name → what the store wrote.
    pub tables: BTreeMap<String, TableRecord>,
    /// When `expc run --resume` took the run over, oldest first, and what
    /// the run was before (`crashed`, `interrupted`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumes: Vec<ResumeRecord>,
    /// In a shard's manifest fragment: which shard of how many it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardOf>,
    /// In a split run's fragment (`--split K/N`): which part of every
    /// trial's workloads this process ran. Written as a shard's fragment
    /// (`manifest-shard-<k>.json`); every part lists every trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<ShardOf>,
    /// In a sharded run's merged manifest: every shard found, with its host
    /// and status.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardState>,
    /// The last line of the manifest's journal (`manifest.journal`) this
    /// manifest includes: trial and point records change through the
    /// journal between whole writes (rundir/journal.rs).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub journal_seq: u64,
    /// The verdicts of the plan's claims (exp-claims), once the run ended;
    /// absent for a plan without claims.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<crate::claims::ClaimRecord>,
    /// The claim whose `abort` threshold stopped the run, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted_by: Option<String>,
    /// What [`Manifest::read`] skipped: journal lines that are not journal
    /// lines, or name a trial or point this manifest does not list. Never
    /// written; a manifest built or written whole has none.
    #[serde(skip)]
    pub read_warnings: Vec<crate::Warning>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `--shard K/N`: shard `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardOf {
    pub index: u32,
    pub count: u32,
}

/// One shard of a sharded run, as its fragment says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardState {
    pub index: u32,
    pub host: String,
    pub status: RunStatus,
    pub trials: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumeRecord {
    /// RFC 3339, UTC.
    pub at: String,
    /// The run's status when it was resumed.
    pub previous_status: RunStatus,
    /// What the resume found wrong and went past: journal lines it skipped
    /// (the journal is gone once the manifest is written whole, so this is
    /// their only record), a `plan.json` it wrote again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecRecord {
    pub root: String,
    pub sha256: String,
}

/// The options a run was started with, as the manifest records them
/// (`options`; exp-runtime's `RunOptions` are the ones it runs with).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionsRecord {
    pub time_scale: f64,
    /// The `--trials` selection as given, if any.
    pub trials_selected: Option<String>,
    pub forced: bool,
    /// The directory relative paths of the spec were resolved against
    /// (absolute), so a resumed run finds the same files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_dir: Option<String>,
    /// `expc run --validity-bound`s (none: the defaults), kept on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity_bounds: Option<crate::validity::Bounds>,
}

impl Default for OptionsRecord {
    fn default() -> Self {
        OptionsRecord {
            time_scale: 1.0,
            trials_selected: None,
            forced: false,
            spec_dir: None,
            validity_bounds: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    pub trial: u32,
    pub point: u32,
    pub repetition: u32,
    pub seed: u64,
    /// Sweep parameter → its label at this trial's point.
    pub sweep: BTreeMap<String, String>,
    pub status: TrialStatus,
    pub started_at_unix_ns: Option<u64>,
    pub ended_at_unix_ns: Option<u64>,
    pub error: Option<String>,
    pub metrics: BTreeMap<String, f64>,
    /// Earlier attempts at this trial, oldest first (`expc run --resume`
    /// runs again what did not complete); the record itself is the latest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<AttemptRecord>,
    /// Whether its measurements can be believed (validity.rs); `None` for a
    /// trial not audited (not run yet, or a run from before audits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity: Option<crate::validity::Validity>,
}

impl crate::validity::Audited for TrialRecord {
    fn validity(&self) -> Option<&crate::validity::Validity> {
        self.validity.as_ref()
    }
}

/// How an earlier attempt at a trial ended, and where its files went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    pub status: TrialStatus,
    pub started_at_unix_ns: Option<u64>,
    pub ended_at_unix_ns: Option<u64>,
    pub error: Option<String>,
    /// The run-relative directory its table files were moved to (none if it wrote none).
    pub files: Option<String>,
    /// Its audit, for an attempt `repeat until` replaced because it was
    /// invalid (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity: Option<crate::validity::Validity>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    Planned,
    Running,
    Complete,
    Skipped,
    Interrupted,
    Failed,
    /// Running when its runner died (see [`RunStatus::Crashed`]).
    Crashed,
}

impl TrialStatus {
    /// The name used in `manifest.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            TrialStatus::Planned => "planned",
            TrialStatus::Running => "running",
            TrialStatus::Complete => "complete",
            TrialStatus::Skipped => "skipped",
            TrialStatus::Interrupted => "interrupted",
            TrialStatus::Failed => "failed",
            TrialStatus::Crashed => "crashed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointRecord {
    pub point: u32,
    pub repetitions_run: u32,
    /// Why repetitions stopped (`repeat until` met, maximum reached, …).
    pub stop_reason: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRecord {
    pub rows: u64,
    pub files: u64,
}

impl Manifest {
    /// The manifest at the start of a run: status `running`, a `planned`
    /// record with its sweep labels for each of `trials` (the trials this run
    /// is to run, ascending; trials of the plan not among them get no record,
    /// and indices the plan does not have are left out), no points or tables
    /// yet, default options (time scale 1, no selection, not forced). Costs
    /// what `trials` holds, not what the plan holds.
    pub fn new(
        plan: &exp_plan::Plan,
        trials: impl IntoIterator<Item = u32>,
        run_id: &str,
        plan_sha256: &str,
        started: SystemTime,
        host: exp_host::HostFacts,
    ) -> Manifest {
        // Every trial of a point has the same labels: built once per point.
        let mut labels: Option<(u32, BTreeMap<String, String>)> = None;
        let trials = trials
            .into_iter()
            .filter_map(|index| plan.trial(index))
            .map(|t| {
                let sweep = match &labels {
                    Some((point, sweep)) if *point == t.point => sweep.clone(),
                    _ => {
                        let sweep: BTreeMap<String, String> = plan
                            .values_at(t.point)
                            .unwrap_or_default()
                            .into_iter()
                            .map(|(p, v)| (p.name.clone(), v.label.clone()))
                            .collect();
                        labels = Some((t.point, sweep.clone()));
                        sweep
                    }
                };
                TrialRecord {
                    trial: t.trial,
                    point: t.point,
                    repetition: t.repetition,
                    seed: t.seed,
                    sweep,
                    status: TrialStatus::Planned,
                    started_at_unix_ns: None,
                    ended_at_unix_ns: None,
                    error: None,
                    metrics: BTreeMap::new(),
                    attempts: Vec::new(),
                    validity: None,
                }
            })
            .collect();
        Manifest {
            manifest_version: MANIFEST_VERSION,
            // The workspace shares one version, so this crate's is expc's.
            expc_version: env!("CARGO_PKG_VERSION").to_string(),
            build: BuildRecord::of_this_expc(),
            experiment: plan.experiment.name.clone(),
            run_id: run_id.to_string(),
            status: RunStatus::Running,
            error: None,
            started_at: rfc3339(started),
            ended_at: None,
            started_unix_ns: unix_ns(started),
            ended_unix_ns: None,
            spec: Some(SpecRecord {
                root: plan.source.root.clone(),
                sha256: plan.source.sha256.clone(),
            }),
            plan_sha256: plan_sha256.to_string(),
            seed: plan.experiment.seed,
            host,
            brokers: BTreeMap::new(),
            options: OptionsRecord::default(),
            trials,
            points: Vec::new(),
            tables: BTreeMap::new(),
            resumes: Vec::new(),
            shard: None,
            split: None,
            shards: Vec::new(),
            journal_seq: 0,
            claims: Vec::new(),
            aborted_by: None,
            read_warnings: Vec::new(),
        }
    }

    /// Sets the end time (the status is the caller's to set).
    pub fn finish(&mut self, ended: SystemTime) {
        self.ended_at = Some(rfc3339(ended));
        self.ended_unix_ns = Some(unix_ns(ended));
    }

    /// The pretty JSON written to `manifest.json`, with a final newline.
    /// The manifest as written: indented, a trial (and a point) per line
    /// (json_lines.rs): a third of its pretty size for a million trials.
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        crate::json_lines::to_vec(self)
    }
}
