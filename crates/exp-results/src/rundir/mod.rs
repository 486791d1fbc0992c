//! The run directory: `runs/<experiment>/<run-id>/`, written under
//! `runs/<experiment>/.<run-id>.partial/` until the run ends.
//!
//! The temporary name keeps tools that glob `runs/*/*/` from reading a run
//! that is still going, and a run killed hard (SIGKILL, power loss) stays
//! recognisable as unfinished.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::check_component;
use crate::runner::RunnerLock;

mod attempts;
mod files;
mod journal;
mod reopen;

use crate::manifest::{PointRecord, TrialRecord};
use crate::{Manifest, ResultsError};
pub use attempts::AttemptFiles;
pub use files::create_dir_below;
use files::plan_json;
pub use files::plan_sha256;
pub(crate) use files::{sha256_hex, sync_dir, write_atomic};
use journal::{Change, Journal};
use reopen::DirId;
pub use reopen::{has_partial_name, locate_run};

/// The runner lock's file name in a run directory.
pub const LOCK_FILE: &str = "runner.lock";

/// Which writer of a run a [`RunDir`] is: the run's only runner, or shard
/// `K` of a run that several processes write at once (`--shard K/N`), each
/// with its own manifest fragment, lock, reserve and scratch space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Whole,
    Shard(u32),
}

impl Role {
    /// `manifest.json`, or `manifest-shard-<k>.json`.
    pub fn manifest_file(self) -> String {
        match self {
            Role::Whole => "manifest.json".into(),
            Role::Shard(k) => format!("manifest-shard-{k}.json"),
        }
    }

    /// `runner.lock`, or `runner-shard-<k>.lock`.
    pub fn lock_file(self) -> String {
        match self {
            Role::Whole => LOCK_FILE.into(),
            Role::Shard(k) => format!("runner-shard-{k}.lock"),
        }
    }

    /// Space kept free for the manifest, released when the disk is full.
    fn reserve_file(self) -> String {
        match self {
            Role::Whole => "manifest.reserve".into(),
            Role::Shard(k) => format!("manifest-shard-{k}.reserve"),
        }
    }

    fn scratch(self) -> PathBuf {
        match self {
            Role::Whole => PathBuf::from("scratch"),
            Role::Shard(k) => Path::new("scratch").join(format!("shard-{k}")),
        }
    }
}

pub struct RunDir {
    /// Where the run is being written (`.<run-id>.partial`).
    path: PathBuf,
    /// Where [`RunDir::finish`] moves it.
    final_path: PathBuf,
    /// Held while this process writes the run.
    lock: RunnerLock,
    role: Role,
    /// Trial and point records changed since the manifest was written whole.
    journal: Journal,
    /// The directory's identity, to notice it moved ([`RunDir::check_in_place`]).
    id: DirId,
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
        let lock = RunnerLock::acquire(&path.join(LOCK_FILE))?;
        let run = RunDir::new(path, final_path, lock, Role::Whole)?;
        let tables = run.tables_dir();
        fs::create_dir(&tables).map_err(ResultsError::io("create", &tables))?;
        run.reserve(0);
        Ok(run)
    }

    /// Creates (or joins) `<root>/<experiment>/<run-id>/` as shard `shard`
    /// of a run written by several processes, possibly on several hosts
    /// over a shared file system. There is no `.partial` name: the shards
    /// cannot agree on when to rename. Refused when this shard already has
    /// a manifest there (resume it instead), the run id belongs to a run
    /// that was not sharded, or the parts already there run another
    /// division, plan or options (`agreement`, parts.rs).
    pub fn create_shard(
        root: &Path,
        experiment: &str,
        run_id: &str,
        shard: u32,
        agreement: &crate::PartsAgreement,
    ) -> Result<RunDir, ResultsError> {
        check_component("run id", run_id)?;
        let path = root.join(experiment_dir_name(experiment)).join(run_id);
        let role = Role::Shard(shard);
        fs::create_dir_all(path.join("tables")).map_err(ResultsError::io("create", &path))?;
        // A `manifest.json` beside shard fragments is their merge (`expc
        // run --merge` before every shard ran), not a run of its own.
        let whole = path.join(Role::Whole.manifest_file());
        if whole.exists() && !has_fragments(&path) {
            return Err(ResultsError::RunExists { path: whole });
        }
        agreement.join(&path)?;
        let already = || ResultsError::PartExists {
            path: path.join(role.manifest_file()),
            part: agreement.part_flag(shard),
        };
        if path.join(role.manifest_file()).exists() {
            return Err(already());
        }
        let lock = RunnerLock::acquire(&path.join(role.lock_file()))?;
        // Checked again under the lock: another process may have just written it.
        if path.join(role.manifest_file()).exists() {
            return Err(already());
        }
        let run = RunDir::new(path.clone(), path, lock, role)?;
        run.reserve(0);
        Ok(run)
    }

    fn new(path: PathBuf, final_path: PathBuf, lock: RunnerLock, role: Role) -> Result<RunDir, ResultsError> {
        let journal = Journal::new(&path.join(role.manifest_file()));
        let id = DirId::of(&path).map_err(ResultsError::io("open", &path))?;
        Ok(RunDir {
            path,
            final_path,
            lock,
            role,
            journal,
            id,
        })
    }

    pub fn role(&self) -> Role {
        self.role
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
    /// as [`plan_sha256`]. A shard that finds the plan written by another
    /// shard checks it is the same plan instead.
    pub fn write_plan(&self, plan: &exp_plan::Plan) -> Result<String, ResultsError> {
        self.check_in_place()?;
        let bytes = plan_json(plan)?;
        let sha = sha256_hex(&bytes);
        let path = self.path.join("plan.json");
        if self.role != Role::Whole {
            if let Ok(existing) = fs::read(&path) {
                let found = sha256_hex(&existing);
                return if found == sha {
                    Ok(sha)
                } else {
                    Err(ResultsError::PlanMismatch {
                        path,
                        expected: sha,
                        found,
                    })
                };
            }
        }
        write_atomic(&path, &bytes)?;
        Ok(sha)
    }

    /// Writes `plan.json` again as [`RunDir::write_plan`] would when it is
    /// missing or holds another plan: a resume given the plan that started
    /// the run restores the run's record of it. Returns whether it wrote.
    pub fn restore_plan(&self, plan: &exp_plan::Plan) -> Result<bool, ResultsError> {
        let bytes = plan_json(plan)?;
        let path = self.path.join("plan.json");
        if fs::read(&path).is_ok_and(|found| found == bytes) {
            return Ok(false);
        }
        self.check_in_place()?;
        write_atomic(&path, &bytes)?;
        Ok(true)
    }

    /// Replaces `manifest.json` atomically: readers see the old or the new
    /// manifest, never a torn one; its journal starts again empty (and
    /// `manifest.journal_seq` says which lines the manifest includes). When
    /// the disk is full, the space kept free beside it is given up for it,
    /// so the manifest can still say how the run ended.
    pub fn write_manifest(&self, manifest: &mut Manifest) -> Result<(), ResultsError> {
        self.check_in_place()?;
        manifest.journal_seq = self.journal.seq_for_whole_write(manifest);
        let bytes = manifest.to_json().map_err(|source| ResultsError::Serialize {
            what: "manifest",
            source,
        })?;
        let path = self.path.join(self.role.manifest_file());
        match write_atomic(&path, &bytes) {
            Err(e) if e.is_disk_full() => {
                let _ = fs::remove_file(self.path.join(self.role.reserve_file()));
                write_atomic(&path, &bytes)?;
            }
            Ok(()) => self.reserve(bytes.len() as u64),
            Err(e) => return Err(e),
        }
        self.journal.written_whole(bytes.len() as u64);
        Ok(())
    }

    /// Records a trial's record as it is now, in the manifest's journal: a
    /// line appended and synced, whatever the manifest's size. A full disk
    /// is an error here; the space kept free is for the manifest's last
    /// whole write, which includes the record.
    pub fn record_trial(&self, record: &TrialRecord) -> Result<(), ResultsError> {
        self.check_in_place()?;
        let next_manifest = self.journal.append(Change::Trial(record))?;
        self.reserve(next_manifest);
        Ok(())
    }

    /// Records a point's record as it is now, as [`RunDir::record_trial`].
    pub fn record_point(&self, record: &PointRecord) -> Result<(), ResultsError> {
        self.check_in_place()?;
        let next_manifest = self.journal.append(Change::Point(record))?;
        self.reserve(next_manifest);
        Ok(())
    }

    /// Keeps `manifest.reserve` a quarter larger than the manifest (and at
    /// least 256 KiB, in steps of 256 KiB) so a full disk can still take the
    /// manifest's last rewrite: removing the reserve frees room for the new
    /// file, and the old one is freed by the rename. Best effort: a reserve
    /// that cannot grow now is grown next time.
    fn reserve(&self, manifest_bytes: u64) {
        let want = (manifest_bytes * 5 / 4 + (64 << 10)).next_multiple_of(256 << 10);
        let path = self.path.join(self.role.reserve_file());
        let have = fs::metadata(&path).map_or(0, |m| m.len());
        if have >= want {
            return;
        }
        let grown = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .and_then(|file| {
                // Allocated blocks (not a hole), so the space is taken, but
                // not written: a quarter-million-trial shard's reserve is
                // 74 MB, which took most of a second to write.
                exp_host::allocate(&file, want)?;
                file.sync_all()
            });
        if grown.is_err() {
            // Never leave a reserve that is only partly there to be mistaken for one.
            let _ = fs::remove_file(&path);
        }
    }

    /// `scratch/<name>/` inside the run (`scratch/shard-<k>/<name>/` for a
    /// shard), created if needed; [`RunDir::finish`] removes it.
    pub fn scratch_dir(&self, name: &str) -> Result<PathBuf, ResultsError> {
        check_component("scratch directory name", name)?;
        self.check_in_place()?;
        let dir = self.path.join(self.role.scratch()).join(name);
        create_dir_below(&self.path, &dir)?;
        Ok(dir)
    }

    /// Removes `scratch/`, the reserve and the lock file, and renames the
    /// run to its final name, which it returns. Called however the run
    /// ended; dropping a `RunDir` without calling this leaves the
    /// `.partial` directory, like a crash would.
    pub fn finish(self) -> Result<PathBuf, ResultsError> {
        self.check_in_place()?;
        let _ = fs::remove_file(self.path.join(self.role.reserve_file()));
        let scratch = self.path.join(self.role.scratch());
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
        if self.role != Role::Whole {
            // Other shards may still write here: nothing to rename.
            let _ = fs::remove_dir(self.path.join("scratch"));
            let _ = fs::remove_file(self.path.join(self.role.lock_file()));
            drop(self.lock);
            return Ok(self.final_path);
        }
        // rename(2) would silently replace an empty directory of that name.
        if self.final_path.exists() {
            return Err(ResultsError::RunExists { path: self.final_path });
        }
        fs::rename(&self.path, &self.final_path).map_err(ResultsError::io("rename", &self.path))?;
        if let Some(parent) = self.final_path.parent() {
            sync_dir(parent)?;
        }
        // The run is finished: no runner to look for. Removed while still
        // held, so no reader can mistake the moment in between for a crash.
        let _ = fs::remove_file(self.final_path.join(LOCK_FILE));
        drop(self.lock);
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

/// Whether `dir` holds shard fragments (`manifest-shard-<k>.json`).
fn has_fragments(dir: &Path) -> bool {
    fs::read_dir(dir).into_iter().flatten().flatten().any(|entry| {
        entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with("manifest-shard-") && n.ends_with(".json"))
    })
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
