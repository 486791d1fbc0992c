//! The manifest's journal: `manifest.journal` (`manifest-shard-<k>.journal`
//! for a shard) beside the manifest, one JSON line for each change of a
//! trial or point record since the manifest was last written whole.
//!
//! A trial's start and end cost one short append, not a rewrite of a
//! manifest that lists a quarter of a million trials. The manifest is
//! written whole when the run starts and ends; each whole write records the
//! number of the last journal line it includes (`journal_seq`) before the
//! journal is emptied, so a crash between the two leaves lines that readers
//! skip. Readers ([`Manifest::read`], defined here: the manifest's type
//! knows nothing of the files it is kept in) apply the newer lines in order. A crash
//! can only tear the last line, which has no newline yet and is ignored;
//! any other line that cannot be applied is skipped with a warning, never
//! hiding the lines after it ([`replay`]).

use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::manifest::{Manifest, PointRecord, TrialRecord, MANIFEST_VERSION};
use crate::{ResultsError, Warning};

/// The journal beside the manifest at `manifest` (`manifest.json` →
/// `manifest.journal`).
pub(crate) fn journal_path(manifest: &Path) -> PathBuf {
    manifest.with_extension("journal")
}

/// One line as written.
#[derive(Serialize)]
struct LineRef<'a> {
    seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    trial: Option<&'a TrialRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    point: Option<&'a PointRecord>,
}

/// One line as read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    seq: u64,
    trial: Option<TrialRecord>,
    point: Option<PointRecord>,
}

/// A record that changed.
pub(crate) enum Change<'a> {
    Trial(&'a TrialRecord),
    Point(&'a PointRecord),
}

impl Manifest {
    /// Reads `manifest.json` with its journal's newer records applied;
    /// `path` may be the file or the run directory. Journal lines that
    /// cannot be applied are skipped and listed in `read_warnings`
    /// ([`replay`] says which).
    pub fn read(path: &Path) -> Result<Manifest, ResultsError> {
        let file = if path.is_dir() {
            path.join("manifest.json")
        } else {
            path.to_path_buf()
        };
        let bytes = std::fs::read(&file).map_err(ResultsError::io("read", &file))?;
        // Check the version before the shape, so a future manifest gets a
        // clear message instead of a missing-field error.
        #[derive(Deserialize)]
        struct Version {
            manifest_version: u32,
        }
        let version: Version = serde_json::from_slice(&bytes).map_err(|source| ResultsError::Json {
            action: "parse",
            path: file.clone(),
            source,
        })?;
        if version.manifest_version != MANIFEST_VERSION {
            return Err(ResultsError::UnsupportedManifest {
                path: file,
                version: version.manifest_version,
                supported: MANIFEST_VERSION,
            });
        }
        let mut manifest: Manifest = serde_json::from_slice(&bytes).map_err(|source| ResultsError::Json {
            action: "parse",
            path: file.clone(),
            source,
        })?;
        manifest.read_warnings = replay(&mut manifest, &file)?;
        Ok(manifest)
    }
}

/// The writing side, owned by the [`crate::RunDir`] that writes the manifest.
pub(crate) struct Journal {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The number of the last line written (or included in the manifest).
    seq: u64,
    /// Bytes of the manifest as last written whole.
    manifest_bytes: u64,
}

impl Journal {
    pub(crate) fn new(manifest: &Path) -> Journal {
        Journal {
            path: journal_path(manifest),
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding it cannot leave the state inconsistent in
        // a way that matters more than losing the journal.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Before a whole write of `manifest`: the line number it includes
    /// (lines read into it by [`replay`] count, so a resumed run goes on
    /// numbering after them).
    pub(crate) fn seq_for_whole_write(&self, manifest: &Manifest) -> u64 {
        let mut state = self.state();
        state.seq = state.seq.max(manifest.journal_seq);
        state.seq
    }

    /// After a whole write of `bytes`: every line is in the manifest, so
    /// the journal starts again empty.
    pub(crate) fn written_whole(&self, bytes: u64) {
        self.state().manifest_bytes = bytes;
        // Lines left here are older than the manifest, and skipped if the
        // removal fails: best effort.
        let _ = fs::remove_file(&self.path);
    }

    /// Appends one line for `change`, synced to disk. On failure (a full
    /// disk) the journal is cut back to its last whole line. Returns the
    /// size the manifest will have when written whole next, roughly.
    pub(crate) fn append(&self, change: Change<'_>) -> Result<u64, ResultsError> {
        let mut state = self.state();
        // Saturating: a hand-edited journal can hold any `seq`.
        let seq = state.seq.saturating_add(1);
        let (trial, point) = match change {
            Change::Trial(record) => (Some(record), None),
            Change::Point(record) => (None, Some(record)),
        };
        let mut line =
            serde_json::to_vec(&LineRef { seq, trial, point }).map_err(|source| ResultsError::Serialize {
                what: "manifest journal line",
                source,
            })?;
        line.push(b'\n');
        // Opened for each line, not held: a file open for writing would
        // keep the file system from being remounted read-only.
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(ResultsError::io("open", &self.path))?;
        let before = file.metadata().map_or(0, |m| m.len());
        if let Err(source) = file.write_all(&line).and_then(|()| file.sync_data()) {
            // A torn line would hide every line after it from readers.
            let _ = file.set_len(before);
            return Err(ResultsError::Io {
                action: "write",
                path: self.path.clone(),
                source,
            });
        }
        state.seq = seq;
        Ok(state.manifest_bytes + before + line.len() as u64)
    }
}

/// Applies the lines of the journal beside `manifest_path` newer than
/// `manifest.journal_seq` to `manifest`, in order, and returns the lines
/// it skipped. The rule (docs/running.md, "The run directory"): a line is
/// applied when it is a journal line about a trial (or point) the manifest
/// lists, with a `seq` above the manifest's and above every line applied
/// before it; a line at or below the manifest's `seq` is already in it and
/// skipped silently, as is the last line when it has no newline (an append a
/// crash cut short); any other line is skipped with a warning, and the
/// lines after it are still applied.
pub(crate) fn replay(manifest: &mut Manifest, manifest_path: &Path) -> Result<Vec<Warning>, ResultsError> {
    let path = journal_path(manifest_path);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ResultsError::Io {
                action: "read",
                path,
                source,
            })
        }
    };
    // The part after the last newline is a line being written, or torn.
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |end| end + 1);
    let in_manifest = manifest.journal_seq;
    let mut points: Option<BTreeSet<u32>> = None;
    let mut warnings = Vec::new();
    for (number, text) in bytes[..complete].split(|&b| b == b'\n').enumerate() {
        let skipped = |why: String| Warning::new(&path, format!("line {}: {why}; skipped", number + 1));
        if text.is_empty() {
            continue;
        }
        let line = match serde_json::from_slice::<Line>(text) {
            Ok(line) if line.seq <= in_manifest => continue,
            Ok(line) => line,
            Err(e) => {
                warnings.push(skipped(format!("not a journal line ({e})")));
                continue;
            }
        };
        if line.seq <= manifest.journal_seq {
            warnings.push(skipped(format!(
                "seq {} is not after the line before it (seq {})",
                line.seq, manifest.journal_seq
            )));
            continue;
        }
        if let Err(why) = check(&line, manifest, &mut points) {
            warnings.push(skipped(why.to_string()));
            continue;
        }
        manifest.journal_seq = line.seq;
        if let Some(record) = line.trial {
            upsert(&mut manifest.trials, record, |t| t.trial);
        }
        if let Some(record) = line.point {
            upsert(&mut manifest.points, record, |p| p.point);
        }
    }
    Ok(warnings)
}

/// Why `line` cannot be applied to `manifest`, if it cannot: it must
/// change one record, of a trial the manifest lists (with the same point,
/// repetition and seed) or of a point one of those trials belongs to.
fn check(line: &Line, manifest: &Manifest, points: &mut Option<BTreeSet<u32>>) -> Result<(), Inapplicable> {
    match (&line.trial, &line.point) {
        (Some(record), None) => {
            let listed = manifest
                .trials
                .binary_search_by_key(&record.trial, |t| t.trial)
                .ok()
                .map(|i| &manifest.trials[i]);
            match listed {
                Some(t) if (t.point, t.repetition, t.seed) == (record.point, record.repetition, record.seed) => Ok(()),
                Some(_) => Err(Inapplicable::OtherTrial(record.trial)),
                None => Err(Inapplicable::UnknownTrial(record.trial)),
            }
        }
        (None, Some(record)) => {
            let points = points.get_or_insert_with(|| manifest.trials.iter().map(|t| t.point).collect());
            if points.contains(&record.point) {
                Ok(())
            } else {
                Err(Inapplicable::UnknownPoint(record.point))
            }
        }
        _ => Err(Inapplicable::NotOneRecord),
    }
}

/// Why a journal line is skipped rather than applied ([`check`]).
#[derive(Debug, thiserror::Error)]
enum Inapplicable {
    #[error("trial {0} is not the manifest's (another point, repetition or seed)")]
    OtherTrial(u32),
    #[error("trial {0} is not one of the manifest's trials")]
    UnknownTrial(u32),
    #[error("point {0} has no trial in the manifest")]
    UnknownPoint(u32),
    #[error("a journal line changes one trial or one point")]
    NotOneRecord,
}

/// Replaces the record with `record`'s key in `list` (sorted by key), or
/// inserts it in its place.
fn upsert<T>(list: &mut Vec<T>, record: T, key: impl Fn(&T) -> u32) {
    match list.binary_search_by_key(&key(&record), key) {
        Ok(i) => list[i] = record,
        Err(i) => list.insert(i, record),
    }
}
