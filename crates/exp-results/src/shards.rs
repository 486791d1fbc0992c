//! A run as readers see it: its manifest and who writes (or wrote) it.
//!
//! A run written by one process has `manifest.json` and `runner.lock`; a
//! run written in shards (`expc run --shard K/N`) has one fragment and one
//! lock per shard, `manifest-shard-<k>.json` and `runner-shard-<k>.lock`,
//! which readers merge into one manifest — the fragments are the truth,
//! even where `expc run --merge` has also written a `manifest.json`. A
//! writer whose manifest says `running` behind a free lock crashed.
//!
//! A run split across hosts (`expc run --split K/N`) is written the same
//! way, but every part ran every trial (its share of the workloads): the
//! merged manifest has each trial once, with the worst of its parts'
//! statuses, the earliest start and the latest end.

use std::collections::BTreeMap;
use std::path::Path;

use crate::manifest::{Manifest, PointRecord, RunStatus, ShardState, TrialRecord, TrialStatus};
use crate::runner::{describe, probe, Runner};
use crate::{ResultsError, Role};

/// Each writer of a run (the whole run, or a shard) with the state its
/// lock file shows (`None`: no lock file).
pub type Writers = Vec<(Role, Option<Runner>)>;

/// Reads the run in `dir`: its manifest (fragments merged) with crashed
/// writers marked `crashed`, and each writer's state from its lock file.
pub fn read_run(dir: &Path) -> Result<(Manifest, Writers), ResultsError> {
    read_run_with(dir, probe)
}

/// As [`read_run`], without touching any runner's lock: each writer as its
/// lock file describes it ([`crate::runner::describe`]), so a run whose
/// runner crashed still says `running`.
pub fn read_run_unlocked(dir: &Path) -> Result<(Manifest, Writers), ResultsError> {
    read_run_with(dir, describe)
}

fn read_run_with(dir: &Path, probe: fn(&Path) -> Option<Runner>) -> Result<(Manifest, Writers), ResultsError> {
    let fragments = fragments(dir)?;
    if fragments.is_empty() {
        let mut manifest = Manifest::read(&dir.join(Role::Whole.manifest_file()))?;
        let runner = probe(&dir.join(Role::Whole.lock_file()));
        mark_crashed(&mut manifest, runner.as_ref());
        return Ok((manifest, vec![(Role::Whole, runner)]));
    }
    let mut parts = Vec::with_capacity(fragments.len());
    let mut runners = Vec::with_capacity(fragments.len());
    for (shard, mut manifest) in fragments {
        let role = Role::Shard(shard);
        let runner = probe(&dir.join(role.lock_file()));
        mark_crashed(&mut manifest, runner.as_ref());
        runners.push((role, runner));
        parts.push(manifest);
    }
    Ok((merge(parts), runners))
}

/// Writes the merged manifest of the sharded run in `dir` as its
/// `manifest.json` (atomically), for tools that read only that file, and
/// returns it. `None` if `dir` has no shard fragments.
pub fn write_merged(dir: &Path) -> Result<Option<Manifest>, ResultsError> {
    let (manifest, _) = read_run(dir)?;
    if manifest.shards.is_empty() {
        return Ok(None);
    }
    let bytes = manifest.to_json().map_err(|source| ResultsError::Serialize {
        what: "manifest",
        source,
    })?;
    crate::rundir::write_atomic(&dir.join(Role::Whole.manifest_file()), &bytes)?;
    Ok(Some(manifest))
}

/// `manifest-shard-<k>.json` of `dir`, by shard.
fn fragments(dir: &Path) -> Result<BTreeMap<u32, Manifest>, ResultsError> {
    let mut found = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(ResultsError::io("list", dir))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let shard = name
            .to_str()
            .and_then(|n| n.strip_prefix("manifest-shard-"))
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|k| k.parse::<u32>().ok());
        if let Some(shard) = shard {
            found.insert(shard, Manifest::read(&entry.path())?);
        }
    }
    Ok(found)
}

/// A manifest that says `running` while nobody holds its lock: crashed.
fn mark_crashed(manifest: &mut Manifest, runner: Option<&Runner>) {
    if manifest.status == RunStatus::Running && matches!(runner, Some(Runner::Gone(_))) {
        manifest.status = RunStatus::Crashed;
        for trial in &mut manifest.trials {
            if trial.status == TrialStatus::Running {
                trial.status = TrialStatus::Crashed;
            }
        }
    }
}

/// One manifest from the shards' fragments (in shard order, at least one):
/// the first fragment's run facts, every trial and point, the tables
/// summed, and a status that says what the shards found say together.
pub fn merge(parts: Vec<Manifest>) -> Manifest {
    let count = parts
        .iter()
        .filter_map(|m| m.shard.or(m.split).map(|s| s.count))
        .max()
        .unwrap_or(1);
    let split = parts.iter().any(|m| m.split.is_some());
    let shards: Vec<ShardState> = parts
        .iter()
        .map(|m| ShardState {
            index: m.shard.or(m.split).map_or(0, |s| s.index),
            host: m.host.hostname.clone(),
            status: m.status,
            trials: m.trials.len() as u32,
        })
        .collect();
    let disagreements = disagreements(&parts);
    let status = if disagreements.is_empty() {
        merged_status(&shards, count)
    } else {
        RunStatus::Failed
    };
    let mut parts = parts.into_iter();
    let Some(mut merged) = parts.next() else {
        unreachable!("merge is called with at least one fragment")
    };
    let mut points: BTreeMap<u32, PointRecord> = BTreeMap::new();
    let mut add_points = |list: Vec<PointRecord>| {
        for point in list {
            // A split run's parts ran the same repetitions, shards their own.
            points
                .entry(point.point)
                .and_modify(|p| {
                    p.repetitions_run = if split {
                        p.repetitions_run.max(point.repetitions_run)
                    } else {
                        p.repetitions_run + point.repetitions_run
                    }
                })
                .or_insert(point);
        }
    };
    add_points(std::mem::take(&mut merged.points));
    // The merge has no journal: its fragments' are read into it.
    merged.journal_seq = 0;
    let mut errors: Vec<String> = disagreements;
    errors.extend(merged.error.take());
    for part in parts {
        add_points(part.points);
        errors.extend(part.error);
        for (table, record) in part.tables {
            let total = merged.tables.entry(table).or_default();
            total.rows += record.rows;
            total.files += record.files;
        }
        merged.trials.extend(part.trials);
        merged.resumes.extend(part.resumes);
        merged.brokers.extend(part.brokers);
        merged.read_warnings.extend(part.read_warnings);
        merged.started_unix_ns = merged.started_unix_ns.min(part.started_unix_ns);
        merged.ended_unix_ns = merged.ended_unix_ns.zip(part.ended_unix_ns).map(|(a, b)| a.max(b));
    }
    merged.trials.sort_by_key(|t| t.trial);
    merged.trials.dedup_by(|later, kept| {
        if later.trial != kept.trial {
            return false;
        }
        fold_part(kept, later);
        true
    });
    merged.points = points.into_values().collect();
    merged.error = (!errors.is_empty()).then(|| errors.join("; "));
    if status != RunStatus::Complete {
        merged.ended_unix_ns = None;
    }
    let at = |ns: u64| crate::rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns));
    merged.ended_at = merged.ended_unix_ns.map(at);
    merged.started_at = at(merged.started_unix_ns);
    merged.status = status;
    merged.shard = None;
    merged.split = None;
    merged.shards = shards;
    merged
}

/// What the fragments say differently of the run they belong to (parts of
/// one run agree since parts.rs; runs from before may not): a merge of
/// parts that ran different plans, divisions or time scales is not one run.
fn disagreements(parts: &[Manifest]) -> Vec<String> {
    let facts: Vec<[(&str, String); 4]> = parts.iter().map(agreed_facts).collect();
    let Some(first) = facts.first() else {
        return Vec::new();
    };
    (0..first.len())
        .filter(|&i| facts.iter().any(|f| f[i].1 != first[i].1))
        .map(|i| {
            let values: Vec<String> = parts
                .iter()
                .zip(&facts)
                .map(|(m, f)| format!("{} {}", part_name(m), f[i].1))
                .collect();
            format!("the parts disagree on {}: {}", first[i].0, values.join(", "))
        })
        .collect()
}

/// What the parts of one run must share, each as (what, value).
fn agreed_facts(m: &Manifest) -> [(&'static str, String); 4] {
    let division = match (m.shard, m.split) {
        (Some(s), _) => format!("--shard K/{}", s.count),
        (_, Some(s)) => format!("--split K/{}", s.count),
        _ => "whole".to_string(),
    };
    [
        ("how the run is divided", division),
        ("plan SHA-256", m.plan_sha256.clone()),
        ("--time-scale", m.options.time_scale.to_string()),
        ("--trials", m.options.trials_selected.clone().unwrap_or_default()),
    ]
}

fn part_name(m: &Manifest) -> String {
    m.shard.or(m.split).map_or_else(
        || "the whole run".to_string(),
        |s| format!("part {}/{}", s.index, s.count),
    )
}

/// One trial as two parts of a split run ran it: the worse status (with its
/// error), the earlier start, the later end, every part's audit findings
/// (the worst verdict); metrics are the first part's.
fn fold_part(kept: &mut TrialRecord, other: &TrialRecord) {
    kept.validity = match (kept.validity.take(), &other.validity) {
        (Some(a), Some(b)) => Some(crate::validity::Validity::of(
            a.findings.into_iter().chain(b.findings.clone()),
        )),
        (a, b) => a.or_else(|| b.clone()),
    };
    if severity(other.status) > severity(kept.status) {
        kept.status = other.status;
        kept.error.clone_from(&other.error);
    }
    kept.started_at_unix_ns = match (kept.started_at_unix_ns, other.started_at_unix_ns) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    kept.ended_at_unix_ns = kept.ended_at_unix_ns.zip(other.ended_at_unix_ns).map(|(a, b)| a.max(b));
}

/// How bad a trial's status is, for the worst of several parts.
fn severity(status: TrialStatus) -> u8 {
    match status {
        TrialStatus::Complete => 0,
        TrialStatus::Skipped => 1,
        TrialStatus::Planned => 2,
        TrialStatus::Running => 3,
        TrialStatus::Interrupted => 4,
        TrialStatus::Crashed => 5,
        TrialStatus::Failed => 6,
    }
}

/// Running while any shard runs; incomplete while shards are missing;
/// otherwise the worst of the shards' endings.
fn merged_status(shards: &[ShardState], count: u32) -> RunStatus {
    let any = |status| shards.iter().any(|s| s.status == status);
    if any(RunStatus::Running) {
        RunStatus::Running
    } else if (shards.len() as u32) < count {
        RunStatus::Incomplete
    } else if any(RunStatus::Failed) {
        RunStatus::Failed
    } else if any(RunStatus::Crashed) {
        RunStatus::Crashed
    } else if any(RunStatus::Interrupted) {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    }
}
