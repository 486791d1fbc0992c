//! Finding a run directory again and taking it over (`expc run --resume`),
//! and noticing that it is no longer where its runner writes it.
//!
//! A run is named by whatever path the user has for it: relative or
//! absolute, `.`, `NAME/`, a symlink, its final name or its `.partial` one.
//! [`locate_run`] makes that the directory's own absolute path, so renaming
//! it moves the directory (never the symlink) and its parent is never the
//! empty path of a bare name.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{sync_dir, RunDir, LOCK_FILE};
use crate::error::check_component;
use crate::runner::RunnerLock;
use crate::{ResultsError, Role};

/// A directory's identity (device and inode): the same directory under
/// any name, and another one made at its old name is not it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DirId {
    dev: u64,
    ino: u64,
}

impl DirId {
    pub(super) fn of(path: &Path) -> std::io::Result<DirId> {
        let meta = fs::metadata(path)?;
        Ok(DirId {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
}

/// The absolute path, without symlinks, `.` or `..`, of the run directory
/// `dir` names. When `dir` does not exist, the run under its other name
/// (`.<id>.partial` for `<id>`, and back): it was renamed since its path
/// was given (a runner finished it, or a resume took it over).
pub fn locate_run(dir: &Path) -> Result<PathBuf, ResultsError> {
    let not_found = match fs::canonicalize(dir) {
        Ok(path) => return Ok(path),
        Err(e) => e,
    };
    let other = dir.file_name().and_then(|n| n.to_str()).map(|name| {
        match name.strip_prefix('.').and_then(|n| n.strip_suffix(".partial")) {
            Some(id) => id.to_string(),
            None => format!(".{name}.partial"),
        }
    });
    other
        .and_then(|other| fs::canonicalize(dir.with_file_name(other)).ok())
        .ok_or_else(|| ResultsError::Io {
            action: "find the run",
            path: dir.to_path_buf(),
            source: not_found,
        })
}

/// Whether `dir` (as [`locate_run`] returns it) has the `.<id>.partial`
/// name of a run that has not finished.
pub fn has_partial_name(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') && n.ends_with(".partial"))
}

impl RunDir {
    /// Takes over shard `shard` of the sharded run in `dir` to go on with it.
    pub fn reopen_shard(dir: &Path, shard: u32) -> Result<RunDir, ResultsError> {
        let dir = locate_run(dir)?;
        let role = Role::Shard(shard);
        if !dir.join(role.manifest_file()).is_file() {
            return Err(ResultsError::NotARun {
                path: dir.join(role.manifest_file()),
            });
        }
        let lock = RunnerLock::acquire(&dir.join(role.lock_file()))?;
        let run = RunDir::new(dir.clone(), dir, lock, role)?;
        run.reserve(0);
        Ok(run)
    }

    /// Takes over an existing run directory (`<run-id>` or
    /// `.<run-id>.partial`, by any path: [`locate_run`]) to go on writing
    /// it: takes its runner lock (refused while another process holds it)
    /// and moves a finished run back to its `.partial` name until
    /// [`RunDir::finish`].
    pub fn reopen(dir: &Path) -> Result<RunDir, ResultsError> {
        let dir = locate_run(dir)?;
        let not_a_run = || ResultsError::NotARun { path: dir.clone() };
        let name = dir.file_name().and_then(|n| n.to_str()).ok_or_else(not_a_run)?;
        let run_id = name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(".partial"))
            .unwrap_or(name);
        check_component("run id", run_id)?;
        let parent = dir.parent().ok_or_else(not_a_run)?;
        let path = parent.join(format!(".{run_id}.partial"));
        let final_path = parent.join(run_id);
        if !dir.join("manifest.json").is_file() {
            return Err(not_a_run());
        }
        // Locked before it is renamed, so two resumes cannot both move it.
        let lock = RunnerLock::acquire(&dir.join(LOCK_FILE))?;
        if dir != path {
            if path.exists() {
                return Err(ResultsError::RunExists { path });
            }
            fs::rename(&dir, &path).map_err(ResultsError::io("rename", &dir))?;
            sync_dir(parent)?;
        }
        let run = RunDir::new(path, final_path, lock, Role::Whole)?;
        run.reserve(0);
        Ok(run)
    }

    /// Fails with [`ResultsError::RunDirMoved`] when the run's directory is
    /// no longer at [`RunDir::path`] (moved, removed, or another one made
    /// there): every write into the run checks this first.
    pub fn check_in_place(&self) -> Result<(), ResultsError> {
        match DirId::of(&self.path) {
            Ok(id) if id == self.id => Ok(()),
            _ => Err(ResultsError::RunDirMoved {
                path: self.path.clone(),
            }),
        }
    }
}
