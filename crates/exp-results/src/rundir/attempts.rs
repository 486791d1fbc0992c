//! Setting an earlier attempt at a trial aside before the trial runs again
//! (`expc run --resume`): its files move to `attempts/`, never deleted.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::RunDir;
use crate::{ResultsError, TableRecord};

/// Where [`RunDir::set_attempt_aside`] moved an attempt's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptFiles {
    /// The directory, relative to the run.
    pub dir: String,
    /// Rows and files of the finished tables among them, per table.
    pub tables: BTreeMap<String, TableRecord>,
}

impl RunDir {
    /// Moves everything an earlier attempt at `trial` left (its table files,
    /// finished or not, and its XML output) to `attempts/trial=<n>/attempt-<k>/`,
    /// so the trial can run again into empty places and nothing measured is
    /// deleted. Returns what moved, or `None` if there was nothing.
    pub fn set_attempt_aside(&self, trial: u32, attempt: usize) -> Result<Option<AttemptFiles>, ResultsError> {
        let relative = format!("attempts/trial={trial}/attempt-{attempt}");
        let target = self.path().join(&relative);
        let mut moved = BTreeMap::new();
        let mut any = false;
        for (from, to, finished) in self.attempt_places(trial, &target) {
            if !from.exists() {
                continue;
            }
            if !finished {
                remove_cut_writes(&from);
            }
            if finished {
                let table = to
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let record: &mut TableRecord = moved.entry(table).or_default();
                for file in fs::read_dir(&from).map_err(ResultsError::io("list", &from))?.flatten() {
                    record.rows += crate::store::parquet_rows(&file.path())?;
                    record.files += 1;
                }
            }
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(ResultsError::io("create", parent))?;
            }
            fs::rename(&from, &to).map_err(ResultsError::io("move", &from))?;
            any = true;
        }
        Ok(any.then_some(AttemptFiles {
            dir: relative,
            tables: moved,
        }))
    }

    /// (where a trial's files are, where an attempt's copy goes, whether
    /// they are finished table files).
    fn attempt_places(&self, trial: u32, target: &Path) -> Vec<(PathBuf, PathBuf, bool)> {
        let trial_dir = format!("trial={trial}");
        let mut places = Vec::new();
        let tables = self.tables_dir();
        for (root, kind, finished) in [
            (tables.clone(), "tables", true),
            (tables.join(crate::store::PARTIAL_DIR), "partial", false),
        ] {
            let Ok(entries) = fs::read_dir(&root) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if name == crate::store::PARTIAL_DIR {
                    continue;
                }
                places.push((entry.path().join(&trial_dir), target.join(kind).join(&name), finished));
            }
        }
        if let Ok(workloads) = fs::read_dir(self.path().join("xml")) {
            for entry in workloads.flatten() {
                places.push((
                    entry.path().join(format!("trial-{trial}")),
                    target.join("xml").join(entry.file_name()),
                    false,
                ));
            }
        }
        places
    }
}

/// Removes the `.tmp` files a crash left in `dir`: writes it cut short,
/// never data (their rows are in the checkpoint or segment before them).
fn remove_cut_writes(dir: &Path) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().extension().is_some_and(|e| e == "tmp") {
            let _ = fs::remove_file(entry.path());
        }
    }
}
