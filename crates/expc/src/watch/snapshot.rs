//! A run directory as the watch page reads it: only what is on disk, never
//! the run's lock (`exp_results::open_run_unlocked`), with the rows of
//! unfinished trials (the running one, or those a crash cut short: sealed
//! segments and checkpoints under `tables/.partial/`) counted as if their
//! trials had finished, so the report's figures show them.
//!
//! Files are read as they are at that moment; the runner renames new ones
//! into place and never writes a file that has its name, so a read never
//! waits for it nor sees half a file. Two races remain, each settled by
//! the next refresh: a file removed between the listing and its reading
//! (a trial's segments, once assembled into its final file) is left out
//! with a warning, and a checkpoint older than the newest segment beside
//! it (listed in the instant between a seal and the checkpoint's rewrite)
//! is left out, as its rows are in that segment.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use exp_results::{PartFile, RunView, Warning};

/// The run's view with unfinished trials' rows in its tables, and when
/// anything of it was last written.
pub struct Snapshot {
    pub view: RunView,
    /// The newest modification time among the manifest, journal and table files.
    pub last_write: Option<SystemTime>,
    /// The trials whose rows come from `tables/.partial/`.
    pub unfinished_trials: Vec<u32>,
    /// Size and modification time of every file read: equal fingerprints,
    /// equal pages.
    pub fingerprint: Vec<(PathBuf, u64, Option<SystemTime>)>,
}

/// Reads the run at `dir` (under either of its names: a run finished or
/// resumed since is found again).
pub fn read(dir: &Path) -> Result<Snapshot, String> {
    let dir = exp_results::locate_run(dir).map_err(|e| e.to_string())?;
    let mut view = exp_results::open_run_unlocked(&dir).map_err(|e| e.to_string())?;
    // A `.tmp` is the runner writing its next file, not a crash's remains.
    view.warnings.retain(|w| !w.path.to_string_lossy().ends_with(".tmp"));
    let mut unfinished_trials = Vec::new();
    for (table, files) in std::mem::take(&mut view.unfinished) {
        for (trial, parts) in files.trials {
            let finished = view.tables.get(&table).is_some_and(|t| t.trials.contains_key(&trial));
            if finished {
                // Its final file is in place: the segments are the same rows.
                continue;
            }
            if !unfinished_trials.contains(&trial) {
                unfinished_trials.push(trial);
            }
            let current = current_parts(parts);
            view.tables
                .entry(table.clone())
                .or_default()
                .trials
                .insert(trial, current);
        }
    }
    unfinished_trials.sort_unstable();
    let mut fingerprint = Vec::new();
    let mut record = |path: &Path| {
        let meta = std::fs::metadata(path).ok();
        fingerprint.push((
            path.to_path_buf(),
            meta.as_ref().map_or(0, std::fs::Metadata::len),
            meta.and_then(|m| m.modified().ok()),
        ));
    };
    for name in manifest_files(&dir) {
        record(&dir.join(name));
    }
    for files in view.tables.values() {
        for part in files.trials.values().flatten() {
            record(&part.path);
        }
    }
    let last_write = fingerprint.iter().filter_map(|(_, _, t)| *t).max();
    Ok(Snapshot {
        view,
        last_write,
        unfinished_trials,
        fingerprint,
    })
}

/// The manifest files a reader merges: the whole run's, or each shard's, and their journals.
fn manifest_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.starts_with("manifest") && (n.ends_with(".json") || n.ends_with(".journal")))
        .collect();
    names.sort();
    names
}

/// A trial's unfinished files without a checkpoint older than the newest
/// segment of its shard (its rows were sealed into that segment).
fn current_parts(parts: Vec<PartFile>) -> Vec<PartFile> {
    let modified = |p: &PartFile| std::fs::metadata(&p.path).and_then(|m| m.modified()).ok();
    let is_checkpoint = |p: &PartFile| p.path.to_string_lossy().ends_with(".open.parquet");
    let newest_segment = |shard: u32| {
        parts
            .iter()
            .filter(|p| p.shard == shard && !is_checkpoint(p))
            .filter_map(modified)
            .max()
    };
    parts
        .iter()
        .filter(|p| {
            !is_checkpoint(p)
                || match (modified(p), newest_segment(p.shard)) {
                    (Some(checkpoint), Some(segment)) => checkpoint >= segment,
                    _ => true,
                }
        })
        .cloned()
        .collect()
}

/// Warnings worth showing on the page (at most `limit`, and how many more).
pub fn shown_warnings(warnings: &[Warning], limit: usize) -> (Vec<String>, usize) {
    let shown = warnings.iter().take(limit).map(ToString::to_string).collect();
    (shown, warnings.len().saturating_sub(limit))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    #[test]
    fn a_checkpoint_older_than_a_segment_beside_it_is_left_out() {
        let dir = std::env::temp_dir().join(format!("expc-watch-parts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let now = SystemTime::now();
        let file = |name: &str, age_s: u64, shard: u32| {
            let path = dir.join(name);
            let f = std::fs::File::create(&path).unwrap();
            f.set_modified(now - Duration::from_secs(age_s)).unwrap();
            PartFile { shard, path }
        };
        // Shard 0: a segment sealed after its checkpoint was listed; shard 1: a checkpoint alone.
        let segment = file("part-0.000000.parquet", 1, 0);
        let stale = file("part-0.open.parquet", 2, 0);
        let alone = file("part-1.open.parquet", 5, 1);
        let kept = current_parts(vec![segment.clone(), stale, alone.clone()]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(kept, vec![segment, alone]);
    }
}
