//! Setting an earlier attempt at a trial aside before the trial runs again
//! (`expc run --resume`): its files move to `attempts/`, never deleted and
//! never overwritten; and counting what the finished tables hold afterwards.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::{create_dir_below, RunDir};
use crate::store::{parquet_rows, PARTIAL_DIR};
use crate::{ResultsError, Role, TableRecord};

/// Where [`RunDir::set_attempt_aside`] moved an attempt's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptFiles {
    /// The directory, relative to the run.
    pub dir: String,
    /// How many files and directories moved there.
    pub moved: usize,
}

/// One thing an attempt left: where it is, and where it goes relative to
/// the attempt's directory.
struct Place {
    from: PathBuf,
    to: PathBuf,
}

impl RunDir {
    /// Moves everything an earlier attempt at `trial` left (this writer's
    /// table files, finished or not, and the files workloads keep, each
    /// `<dir>/<workload>/trial-<n>/` for a `dir` of `kept_dirs`, which the
    /// runtime's kinds declare: `xml`) to
    /// `attempts/trial=<n>/attempt-<k>/`, so the trial can run again into
    /// empty places. `k` is `attempt`, or the next number whose directory
    /// holds no file of this writer's part (one an earlier resume filled
    /// and stopped before its manifest said so; other parts of a split run
    /// share the directory): attempts are never mixed, deleted or
    /// overwritten. Returns what moved, or `None` if there was nothing.
    pub fn set_attempt_aside(
        &self,
        trial: u32,
        attempt: usize,
        kept_dirs: &[&str],
    ) -> Result<Option<AttemptFiles>, ResultsError> {
        self.check_in_place()?;
        let places = self.attempt_places(trial, kept_dirs);
        if places.is_empty() {
            return Ok(None);
        }
        let dir_of = |k: usize| format!("attempts/trial={trial}/attempt-{k}");
        let prefix = self.part_prefix();
        let taken = |k: usize| {
            let dir = self.path().join(dir_of(k));
            holds_part(&dir, &prefix) || places.iter().any(|p| dir.join(&p.to).exists())
        };
        let mut k = attempt.max(1);
        while taken(k) {
            k += 1;
        }
        let relative = dir_of(k);
        let target = self.path().join(&relative);
        for place in &places {
            let to = target.join(&place.to);
            if let Some(parent) = to.parent() {
                create_dir_below(self.path(), parent)?;
            }
            fs::rename(&place.from, &to).map_err(ResultsError::io("move", &place.from))?;
        }
        self.tidy_trial(trial);
        Ok(Some(AttemptFiles {
            dir: relative,
            moved: places.len(),
        }))
    }

    /// The files of this writer's part (`part-<shard>`): other parts of a
    /// split run write the same trials, and theirs are not this attempt's.
    fn part_prefix(&self) -> String {
        match self.role() {
            Role::Whole => "part-0.".into(),
            Role::Shard(k) => format!("part-{k}."),
        }
    }

    /// What an attempt at `trial` left: its finished table files, its
    /// segments and checkpoints (less the `.tmp` writes a crash cut short,
    /// which are removed: their rows are in the file before them), the
    /// files its workloads kept below `kept_dirs`.
    fn attempt_places(&self, trial: u32, kept_dirs: &[&str]) -> Vec<Place> {
        let trial_dir = format!("trial={trial}");
        let prefix = self.part_prefix();
        let tables = self.tables_dir();
        let mut places = Vec::new();
        for (table, table_dir) in entries(&tables).filter(|(name, _)| name != PARTIAL_DIR) {
            let file = table_dir.join(&trial_dir).join(format!("{prefix}parquet"));
            if file.is_file() {
                places.push(Place {
                    to: Path::new("tables").join(&table).join(format!("{prefix}parquet")),
                    from: file,
                });
            }
        }
        for (table, table_dir) in entries(&tables.join(PARTIAL_DIR)) {
            for (name, from) in entries(&table_dir.join(&trial_dir)).filter(|(name, _)| name.starts_with(&prefix)) {
                if name.ends_with(".tmp") {
                    let _ = fs::remove_file(&from);
                } else {
                    places.push(Place {
                        to: Path::new("partial").join(&table).join(name),
                        from,
                    });
                }
            }
        }
        for kept in kept_dirs {
            for (workload, workload_dir) in entries(&self.path().join(kept)) {
                let from = workload_dir.join(format!("trial-{trial}"));
                if from.exists() {
                    places.push(Place {
                        to: Path::new(kept).join(workload),
                        from,
                    });
                }
            }
        }
        places
    }

    /// Removes the trial's table directories once empty (failing to is
    /// harmless: another part's files are still there).
    fn tidy_trial(&self, trial: u32) {
        let trial_dir = format!("trial={trial}");
        let tables = self.tables_dir();
        for (_, table_dir) in entries(&tables) {
            let _ = fs::remove_dir(table_dir.join(&trial_dir));
        }
        for (_, table_dir) in entries(&tables.join(PARTIAL_DIR)) {
            if fs::remove_dir(table_dir.join(&trial_dir)).is_ok() {
                let _ = fs::remove_dir(&table_dir);
            }
        }
    }

    /// Rows and files of this writer's finished table files, per table, as
    /// they are on disk (each file's rows from its footer); a file that
    /// cannot be read counts as a file without rows, and is named in the
    /// warnings.
    pub fn count_tables(&self) -> (BTreeMap<String, TableRecord>, Vec<String>) {
        self.count_table_files(None)
    }

    /// [`RunDir::count_tables`] of one trial's files only.
    pub fn count_trial_tables(&self, trial: u32) -> (BTreeMap<String, TableRecord>, Vec<String>) {
        self.count_table_files(Some(trial))
    }

    fn count_table_files(&self, trial: Option<u32>) -> (BTreeMap<String, TableRecord>, Vec<String>) {
        let name = format!("{}parquet", self.part_prefix());
        let only = trial.map(|t| format!("trial={t}"));
        let mut tables = BTreeMap::new();
        let mut warnings = Vec::new();
        for (table, table_dir) in entries(&self.tables_dir()).filter(|(name, _)| name != PARTIAL_DIR) {
            for (_, trial_dir) in entries(&table_dir).filter(|(dir, _)| only.as_ref().is_none_or(|o| o == dir)) {
                let file = trial_dir.join(&name);
                if !file.is_file() {
                    continue;
                }
                let record: &mut TableRecord = tables.entry(table.clone()).or_default();
                record.files += 1;
                match parquet_rows(&file) {
                    Ok(rows) => record.rows += rows,
                    Err(e) => warnings.push(format!("{e}: its rows are not counted")),
                }
            }
        }
        (tables, warnings)
    }
}

/// Whether a file named `<prefix>…` (this writer's part) is anywhere below `dir`.
fn holds_part(dir: &Path, prefix: &str) -> bool {
    entries(dir).any(|(name, path)| {
        name.starts_with(prefix) || (fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) && holds_part(&path, prefix))
    })
}

/// The entries of `dir` by name (none if it cannot be read).
fn entries(dir: &Path) -> impl Iterator<Item = (String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .collect();
    found.sort();
    found.into_iter()
}
