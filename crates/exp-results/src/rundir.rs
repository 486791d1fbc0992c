//! The run directory: `runs/<experiment>/<run-id>/`, written under
//! `runs/<experiment>/.<run-id>.partial/` until the run ends.
//!
//! The temporary name keeps tools that glob `runs/*/*/` from reading a run
//! that is still going, and a run killed hard (SIGKILL, power loss) stays
//! recognisable as unfinished.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::check_component;
use crate::{Manifest, ResultsError};

pub struct RunDir {
    /// Where the run is being written (`.<run-id>.partial`).
    path: PathBuf,
    /// Where [`RunDir::finish`] moves it.
    final_path: PathBuf,
}

impl RunDir {
    /// Creates `<root>/<experiment>/.<run-id>.partial/` with its `tables/`.
    /// Refuses when a run with this id exists, finished or not. `experiment`
    /// is made file-system safe with [`experiment_dir_name`]; `run_id` must
    /// already be safe (letters, digits, `_`, `-`, `.`).
    pub fn create(root: &Path, experiment: &str, run_id: &str) -> Result<RunDir, ResultsError> {
        check_component("run id", run_id)?;
        let parent = root.join(experiment_dir_name(experiment));
        fs::create_dir_all(&parent).map_err(ResultsError::io("create", &parent))?;
        let final_path = parent.join(run_id);
        let path = parent.join(format!(".{run_id}.partial"));
        if final_path.exists() {
            return Err(ResultsError::RunExists { path: final_path });
        }
        // `create_dir` (not `_all`) fails if the directory exists, so two
        // processes cannot both claim the same run id.
        fs::create_dir(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::AlreadyExists => ResultsError::RunExists { path: path.clone() },
            _ => ResultsError::Io {
                action: "create",
                path: path.clone(),
                source,
            },
        })?;
        let run = RunDir { path, final_path };
        let tables = run.tables_dir();
        fs::create_dir(&tables).map_err(ResultsError::io("create", &tables))?;
        Ok(run)
    }

    /// The directory as it is now (the temporary name until [`RunDir::finish`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the run will be once finished.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    pub fn tables_dir(&self) -> PathBuf {
        self.path.join("tables")
    }

    /// Writes `plan.json` exactly as `expc plan` prints it (pretty JSON and a
    /// final newline) and returns the SHA-256 of those bytes in hex, the same
    /// as [`plan_sha256`].
    pub fn write_plan(&self, plan: &exp_plan::Plan) -> Result<String, ResultsError> {
        let bytes = plan_json(plan)?;
        write_atomic(&self.path.join("plan.json"), &bytes)?;
        Ok(sha256_hex(&bytes))
    }

    /// Replaces `manifest.json` atomically: readers see the old or the new
    /// manifest, never a torn one.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), ResultsError> {
        let bytes = manifest.to_json().map_err(|source| ResultsError::Serialize {
            what: "manifest",
            source,
        })?;
        write_atomic(&self.path.join("manifest.json"), &bytes)
    }

    /// `scratch/<name>/` inside the run, created if needed; [`RunDir::finish`]
    /// removes all of `scratch/`.
    pub fn scratch_dir(&self, name: &str) -> Result<PathBuf, ResultsError> {
        check_component("scratch directory name", name)?;
        let dir = self.path.join("scratch").join(name);
        fs::create_dir_all(&dir).map_err(ResultsError::io("create", &dir))?;
        Ok(dir)
    }

    /// Removes `scratch/` and renames the run to its final name, which it
    /// returns. Called however the run ended; dropping a `RunDir` without
    /// calling this leaves the `.partial` directory, like a crash would.
    pub fn finish(self) -> Result<PathBuf, ResultsError> {
        let scratch = self.path.join("scratch");
        match fs::remove_dir_all(&scratch) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(ResultsError::Io {
                    action: "remove",
                    path: scratch,
                    source,
                })
            }
        }
        // rename(2) would silently replace an empty directory of that name.
        if self.final_path.exists() {
            return Err(ResultsError::RunExists { path: self.final_path });
        }
        fs::rename(&self.path, &self.final_path).map_err(ResultsError::io("rename", &self.path))?;
        if let Some(parent) = self.final_path.parent() {
            sync_dir(parent)?;
        }
        Ok(self.final_path)
    }
}

/// The experiment name as a directory name: ASCII letters, digits, `_`, `-`
/// and `.` are kept, anything else becomes `_`; a leading `.` becomes `_` (no
/// hidden or `..` directories); at most 100 bytes; `experiment` if empty.
pub fn experiment_dir_name(experiment: &str) -> String {
    let mut name: String = experiment
        .chars()
        .enumerate()
        .map(|(i, c)| match c {
            '.' if i == 0 => '_',
            c if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') => c,
            _ => '_',
        })
        .take(100)
        .collect();
    if name.is_empty() {
        name.push_str("experiment");
    }
    name
}

/// The SHA-256 (hex) of the `plan.json` that [`RunDir::write_plan`] writes,
/// for naming the run ([`crate::new_run_id`]) before its directory exists.
pub fn plan_sha256(plan: &exp_plan::Plan) -> Result<String, ResultsError> {
    Ok(sha256_hex(&plan_json(plan)?))
}

fn plan_json(plan: &exp_plan::Plan) -> Result<Vec<u8>, ResultsError> {
    let mut bytes =
        serde_json::to_vec_pretty(plan).map_err(|source| ResultsError::Serialize { what: "plan", source })?;
    bytes.push(b'\n');
    Ok(bytes)
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Write to `<path>.tmp`, fsync, rename over `path`, fsync the directory.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    let mut file = fs::File::create(&tmp).map_err(ResultsError::io("create", &tmp))?;
    file.write_all(bytes).map_err(ResultsError::io("write", &tmp))?;
    file.sync_all().map_err(ResultsError::io("sync", &tmp))?;
    drop(file);
    fs::rename(&tmp, path).map_err(ResultsError::io("rename", &tmp))?;
    if let Some(parent) = path.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

/// Makes a rename in `dir` durable. Only Unix can open a directory for this.
#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> Result<(), ResultsError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(ResultsError::io("sync", dir))
}

#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> Result<(), ResultsError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn experiment_names_are_sanitised() {
        assert_eq!(experiment_dir_name("mqtt-fleet_1.v2"), "mqtt-fleet_1.v2");
        assert_eq!(experiment_dir_name("a/b c"), "a_b_c");
        assert_eq!(experiment_dir_name(".."), "_.");
        assert_eq!(experiment_dir_name(".hidden"), "_hidden");
        assert_eq!(experiment_dir_name(""), "experiment");
        assert_eq!(experiment_dir_name("größe"), "gr__e");
        assert_eq!(experiment_dir_name(&"x".repeat(300)).len(), 100);
    }

    #[test]
    fn sha256_is_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
