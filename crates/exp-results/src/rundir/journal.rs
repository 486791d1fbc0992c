//! The manifest's journal: `manifest.journal` (`manifest-shard-<k>.journal`
//! for a shard) beside the manifest, one JSON line for each change of a
//! trial or point record since the manifest was last written whole.
//!
//! A trial's start and end cost one short append, not a rewrite of a
//! manifest that lists a quarter of a million trials. The manifest is
//! written whole when the run starts and ends; each whole write records the
//! number of the last journal line it includes (`journal_seq`) before the
//! journal is emptied, so a crash between the two leaves lines that readers
//! skip. Readers ([`Manifest::read`]) apply the newer lines in order. A crash
//! can only tear the last line, which has no newline yet and is ignored.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::manifest::{Manifest, PointRecord, TrialRecord};
use crate::ResultsError;

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
        let seq = state.seq + 1;
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
/// `manifest.journal_seq` to `manifest`, in order, up to the first line
/// that is torn or not a journal line.
pub(crate) fn replay(manifest: &mut Manifest, manifest_path: &Path) -> Result<(), ResultsError> {
    let path = journal_path(manifest_path);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
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
    for text in bytes[..complete].split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(line) = serde_json::from_slice::<Line>(text) else {
            break;
        };
        if line.seq <= manifest.journal_seq {
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
    Ok(())
}

/// Replaces the record with `record`'s key in `list` (sorted by key), or
/// inserts it in its place.
fn upsert<T>(list: &mut Vec<T>, record: T, key: impl Fn(&T) -> u32) {
    match list.binary_search_by_key(&key(&record), key) {
        Ok(i) => list[i] = record,
        Err(i) => list.insert(i, record),
    }
}
