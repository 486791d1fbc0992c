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
        for (from, to, place) in self.attempt_places(trial, &target) {
            if !from.exists() {
                continue;
            }
            if place == Place::Xml {
                // Shared by a split trial's parts, which all run it again.
                if let Some(parent) = to.parent() {
                    fs::create_dir_all(parent).map_err(ResultsError::io("create", parent))?;
                }
                fs::rename(&from, &to).map_err(ResultsError::io("move", &from))?;
                any = true;
                continue;
            }
            // Only this writer's files: the other shards' or parts' stay.
            let mut files: Vec<PathBuf> = fs::read_dir(&from)
                .map_err(ResultsError::io("list", &from))?
                .flatten()
                .filter(|f| self.writes(&f.file_name().to_string_lossy()))
                .map(|f| f.path())
                .collect();
            if place == Place::Partial {
                files.retain(|file| !remove_cut_write(file));
            }
            if files.is_empty() {
                let _ = fs::remove_dir(&from);
                continue;
            }
            if place == Place::Finished {
                let table = to
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let record: &mut TableRecord = moved.entry(table).or_default();
                for file in &files {
                    record.rows += crate::store::parquet_rows(file)?;
                    record.files += 1;
                }
            }
            fs::create_dir_all(&to).map_err(ResultsError::io("create", &to))?;
            for file in &files {
                let name = file.file_name().unwrap_or_default();
                fs::rename(file, to.join(name)).map_err(ResultsError::io("move", file))?;
            }
            // Gone once empty; another writer's files may keep it.
            let _ = fs::remove_dir(&from);
            any = true;
        }
        Ok(any.then_some(AttemptFiles {
            dir: relative,
            tables: moved,
        }))
    }

    /// Whether a table file of a trial is this writer's: a shard's or split
    /// part's are `part-<k>.*`; a run written whole has them all.
    fn writes(&self, file_name: &str) -> bool {
        match self.role {
            super::Role::Whole => true,
            super::Role::Shard(k) => file_name.starts_with(&format!("part-{k}.")),
        }
    }

    /// (where a trial's files are, where an attempt's copy goes, what they are).
    fn attempt_places(&self, trial: u32, target: &Path) -> Vec<(PathBuf, PathBuf, Place)> {
        let trial_dir = format!("trial={trial}");
        let mut places = Vec::new();
        let tables = self.tables_dir();
        for (root, kind, place) in [
            (tables.clone(), "tables", Place::Finished),
            (tables.join(crate::store::PARTIAL_DIR), "partial", Place::Partial),
        ] {
            let Ok(entries) = fs::read_dir(&root) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if name == crate::store::PARTIAL_DIR {
                    continue;
                }
                places.push((entry.path().join(&trial_dir), target.join(kind).join(&name), place));
            }
        }
        if let Ok(workloads) = fs::read_dir(self.path().join("xml")) {
            for entry in workloads.flatten() {
                places.push((
                    entry.path().join(format!("trial-{trial}")),
                    target.join("xml").join(entry.file_name()),
                    Place::Xml,
                ));
            }
        }
        places
    }
}

/// What a trial's files in one place are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// `tables/<table>/trial=<n>/`: finished table files.
    Finished,
    /// `tables/.partial/<table>/trial=<n>/`: segments and checkpoints.
    Partial,
    /// `xml/<workload>/trial-<n>/`: an xml workload's set and documents.
    Xml,
}

/// Removes `file` if it is a `.tmp` a crash left: a write cut short, never
/// data (its rows are in the checkpoint or segment before it).
fn remove_cut_write(file: &Path) -> bool {
    file.extension().is_some_and(|e| e == "tmp") && fs::remove_file(file).is_ok()
}
