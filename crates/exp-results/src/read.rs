//! Opening a finished (or interrupted, or still `.partial`) run directory:
//! its manifest and the Parquet files of its tables.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::manifest::RunStatus;
use crate::runner::Runner;
use crate::store::PARTIAL_DIR;
use crate::warning::Warning;
use crate::{read_run, Manifest, ResultsError};

/// A run directory as found on disk.
#[derive(Debug, Clone)]
pub struct RunView {
    pub dir: PathBuf,
    /// The manifest as read, except that a run found `running` whose
    /// runner is gone says `crashed` (and so does its running trial).
    pub manifest: Manifest,
    /// The process writing the run, or the one that was, from its lock file.
    pub runner: Option<Runner>,
    /// Table name → its files.
    pub tables: BTreeMap<String, TableFiles>,
    /// Table name → what trials that did not finish (running, or cut short
    /// by a crash) have on disk so far: sealed segments and checkpoints
    /// under `tables/.partial/`, each a complete Parquet file.
    pub unfinished: BTreeMap<String, TableFiles>,
    /// Journal lines the manifest could not take, entries under `tables/`
    /// that are not part of the layout, and writes a crash cut short.
    pub warnings: Vec<Warning>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableFiles {
    /// Trial → its part files, by shard.
    pub trials: BTreeMap<u32, Vec<PartFile>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartFile {
    pub shard: u32,
    pub path: PathBuf,
}

/// Reads `dir/manifest.json` and lists `dir/tables/<table>/trial=<n>/part-<shard>.parquet`.
/// Fails only if the manifest cannot be read; problems with table files
/// become [`RunView::warnings`].
pub fn open_run(dir: &Path) -> Result<RunView, ResultsError> {
    open_run_with(dir, read_run)
}

/// As [`open_run`], without touching any runner's lock (a snapshot for a
/// reader that comes back every few seconds while the run goes on): a run
/// whose runner crashed still says `running`, its runner as its lock file
/// describes it.
pub fn open_run_unlocked(dir: &Path) -> Result<RunView, ResultsError> {
    open_run_with(dir, crate::shards::read_run_unlocked)
}

type ReadRun = fn(&Path) -> Result<(crate::Manifest, crate::Writers), ResultsError>;

fn open_run_with(dir: &Path, read_run: ReadRun) -> Result<RunView, ResultsError> {
    let (mut manifest, runners) = read_run(dir)?;
    // The runner of a whole run, or of the first shard found running or gone.
    let runner = runners
        .into_iter()
        .filter_map(|(_, runner)| runner)
        .find(|r| matches!(r, Runner::Running(_)) || manifest.status == RunStatus::Crashed);
    let mut view = RunView {
        dir: dir.to_path_buf(),
        // Journal lines the manifest could not take are shown with the rest.
        warnings: std::mem::take(&mut manifest.read_warnings),
        manifest,
        runner,
        tables: BTreeMap::new(),
        unfinished: BTreeMap::new(),
    };
    let tables_dir = dir.join("tables");
    let Some(entries) = list(&tables_dir, &mut view.warnings) else {
        return Ok(view);
    };
    for (name, path) in entries {
        if name == PARTIAL_DIR {
            unfinished(&path, &mut view);
            continue;
        }
        if !path.is_dir() {
            view.warnings.push(Warning::new(&path, "not a table directory"));
            continue;
        }
        let files = list_table(&path, &mut view.warnings);
        if !files.trials.is_empty() {
            view.tables.insert(name, files);
        }
    }
    Ok(view)
}

fn list_table(dir: &Path, warnings: &mut Vec<Warning>) -> TableFiles {
    let mut table = TableFiles::default();
    let Some(entries) = list(dir, warnings) else {
        return table;
    };
    for (name, path) in entries {
        let trial = name.strip_prefix("trial=").and_then(|n| n.parse::<u32>().ok());
        let Some(trial) = trial.filter(|_| path.is_dir()) else {
            warnings.push(Warning::new(&path, "not a `trial=<n>` directory"));
            continue;
        };
        let Some(files) = list(&path, warnings) else { continue };
        let mut parts = Vec::new();
        for (name, path) in files {
            if let Some(shard) = parse_part(&name) {
                parts.push(PartFile { shard, path });
            } else {
                warnings.push(Warning::new(&path, "not a `part-<shard>.parquet` file"));
            }
        }
        parts.sort_by_key(|p| p.shard);
        if !parts.is_empty() {
            table.trials.insert(trial, parts);
        }
    }
    table
}

/// `tables/.partial/<table>/trial=<n>/`: the segments and checkpoints of
/// trials that did not finish, and writes a crash cut short (`.tmp`).
fn unfinished(dir: &Path, view: &mut RunView) {
    let Some(tables) = list(dir, &mut view.warnings) else {
        return;
    };
    for (table, table_dir) in tables {
        let Some(trials) = list(&table_dir, &mut view.warnings) else {
            continue;
        };
        for (trial_name, trial_dir) in trials {
            let Some(trial) = trial_name.strip_prefix("trial=").and_then(|n| n.parse::<u32>().ok()) else {
                view.warnings
                    .push(Warning::new(&trial_dir, "not a `trial=<n>` directory"));
                continue;
            };
            let Some(files) = list(&trial_dir, &mut view.warnings) else {
                continue;
            };
            for (name, path) in files {
                match parse_segment(&name) {
                    Some(shard) => view
                        .unfinished
                        .entry(table.clone())
                        .or_default()
                        .trials
                        .entry(trial)
                        .or_default()
                        .push(PartFile { shard, path }),
                    None => view.warnings.push(Warning::new(
                        &path,
                        "incomplete write, cut short by a crash (not a Parquet file)",
                    )),
                }
            }
        }
    }
}

/// `part-<shard>.<seq>.parquet` or `part-<shard>.open.parquet`.
fn parse_segment(name: &str) -> Option<u32> {
    let (shard, rest) = name.strip_prefix("part-")?.strip_suffix(".parquet")?.split_once('.')?;
    (rest == "open" || (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))).then_some(())?;
    shard.parse().ok()
}

fn parse_part(name: &str) -> Option<u32> {
    name.strip_prefix("part-")?.strip_suffix(".parquet")?.parse().ok()
}

/// The entries of `dir` sorted by name, or `None` (with a warning) if it
/// cannot be read. Names that are not UTF-8 cannot be ours: warned about.
fn list(dir: &Path, warnings: &mut Vec<Warning>) -> Option<Vec<(String, PathBuf)>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            warnings.push(Warning::new(dir, format!("cannot list: {e}")));
            return None;
        }
    };
    let mut out = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => match entry.file_name().into_string() {
                Ok(name) => out.push((name, entry.path())),
                Err(_) => warnings.push(Warning::new(&entry.path(), "name is not UTF-8")),
            },
            Err(e) => warnings.push(Warning::new(dir, format!("cannot list: {e}"))),
        }
    }
    out.sort();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_names() {
        assert_eq!(parse_part("part-0.parquet"), Some(0));
        assert_eq!(parse_part("part-17.parquet"), Some(17));
        assert_eq!(parse_part("part-x.parquet"), None);
        assert_eq!(parse_part("part-1.parquet.partial"), None);
        assert_eq!(parse_segment("part-1.000003.parquet"), Some(1));
        assert_eq!(parse_segment("part-2.open.parquet"), Some(2));
        assert_eq!(parse_segment("part-2.open.parquet.tmp"), None);
        assert_eq!(parse_segment("part-2.parquet"), None);
    }
}
