//! Who is writing a run: `runner.lock` (or `runner-<shard>.lock` for one
//! shard of a run) in the run directory, held with an exclusive `flock` by
//! the process that writes the run for as long as it runs, and holding that
//! process's pid, host and start time.
//!
//! The kernel drops the lock when its process dies, however it dies, so a
//! reader that can take the lock knows the runner is gone: a run whose
//! manifest still says `running` behind a free lock crashed. This works
//! across hosts on file systems with working locks (local ones, NFSv4,
//! Lustre with `flock`).

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ResultsError;

/// What a runner writes into its lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunnerInfo {
    pub pid: u32,
    pub host: String,
    pub started_unix_ns: u64,
}

impl RunnerInfo {
    /// This process, now.
    pub fn this_process() -> RunnerInfo {
        RunnerInfo {
            pid: std::process::id(),
            host: exp_host::hostname(),
            started_unix_ns: crate::unix_ns(std::time::SystemTime::now()),
        }
    }
}

impl std::fmt::Display for RunnerInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on {}, started {}",
            self.pid,
            if self.host.is_empty() {
                "an unnamed host"
            } else {
                &self.host
            },
            crate::rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_nanos(self.started_unix_ns))
        )
    }
}

/// A held runner lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct RunnerLock {
    _file: File,
    path: PathBuf,
}

impl RunnerLock {
    /// Takes the lock at `path` for this process, or says who holds it.
    /// The descriptor that holds the lock is read-only, so the run's file
    /// system can still be remounted read-only under a running run (which
    /// then fails cleanly rather than blocking the remount).
    pub fn acquire(path: &Path) -> Result<RunnerLock, ResultsError> {
        File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(ResultsError::io("create", path))?;
        let mut file = File::open(path).map_err(ResultsError::io("open", path))?;
        match try_lock_past_readers(&file) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(ResultsError::RunLocked {
                    path: path.to_path_buf(),
                    holder: read_info(&mut file).map(|i| i.to_string()).unwrap_or_default(),
                })
            }
            Err(TryLockError::Error(source)) => {
                return Err(ResultsError::Io {
                    action: "lock",
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
        let info = serde_json::to_vec(&RunnerInfo::this_process()).map_err(|source| ResultsError::Serialize {
            what: "runner lock",
            source,
        })?;
        File::options()
            .write(true)
            .truncate(true)
            .open(path)
            .and_then(|mut writer| writer.write_all(&info))
            .map_err(ResultsError::io("write", path))?;
        Ok(RunnerLock {
            _file: file,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Readers ([`probe`]) hold a shared lock for an instant: a runner that
/// meets one tries again for up to half a second before taking the lock
/// for held by another runner.
fn try_lock_past_readers(file: &File) -> Result<(), TryLockError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    loop {
        match file.try_lock() {
            Err(TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            result => return result,
        }
    }
}

/// Whether the runner that wrote a lock file is still there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// The lock is held: the runner (as it described itself) is running.
    Running(RunnerInfo),
    /// The lock is free: the runner ended without finishing the run.
    Gone(RunnerInfo),
}

/// Probes the lock file at `path`; `None` if there is none (a finished run
/// removes it) or it cannot be opened.
/// A lock file without a description is a runner between creating and
/// describing it (it locks first): running, not gone.
pub fn probe(path: &Path) -> Option<Runner> {
    let mut file = File::open(path).ok()?;
    let Some(info) = read_info(&mut file) else {
        return Some(Runner::Running(RunnerInfo {
            pid: 0,
            host: String::new(),
            started_unix_ns: 0,
        }));
    };
    match file.try_lock_shared() {
        Ok(()) => Some(Runner::Gone(info)),
        Err(TryLockError::WouldBlock) => Some(Runner::Running(info)),
        Err(TryLockError::Error(_)) => None,
    }
}

/// What the lock file at `path` says of its runner, without touching the
/// lock: `Running` with its description whenever there is a lock file,
/// whether or not its runner is still alive. For readers that must never
/// take a run's lock, not even for an instant (`expc watch`).
pub fn describe(path: &Path) -> Option<Runner> {
    let mut file = File::open(path).ok()?;
    Some(Runner::Running(read_info(&mut file).unwrap_or(RunnerInfo {
        pid: 0,
        host: String::new(),
        started_unix_ns: 0,
    })))
}

fn read_info(file: &mut File) -> Option<RunnerInfo> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}
