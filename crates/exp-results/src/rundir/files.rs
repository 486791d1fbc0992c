//! Writing a run's small files so that readers never see a torn one.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::ResultsError;

/// The SHA-256 (hex) of the `plan.json` that [`RunDir::write_plan`] writes,
/// for naming the run ([`crate::new_run_id`]) before its directory exists.
pub fn plan_sha256(plan: &exp_plan::Plan) -> Result<String, ResultsError> {
    Ok(sha256_hex(&plan_json(plan)?))
}

pub(super) fn plan_json(plan: &exp_plan::Plan) -> Result<Vec<u8>, ResultsError> {
    let mut bytes =
        serde_json::to_vec_pretty(plan).map_err(|source| ResultsError::Serialize { what: "plan", source })?;
    bytes.push(b'\n');
    Ok(bytes)
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Write to `<path>.tmp`, fsync, rename over `path`, fsync the directory.
/// A failed write removes the `.tmp`: no empty or torn file is left.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    // The pid in the name: shards of one run may write the same file at once.
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp_name);
    let written = (|| {
        let mut file = fs::File::create(&tmp).map_err(ResultsError::io("create", &tmp))?;
        file.write_all(bytes).map_err(ResultsError::io("write", &tmp))?;
        file.sync_all().map_err(ResultsError::io("sync", &tmp))?;
        drop(file);
        fs::rename(&tmp, path).map_err(ResultsError::io("rename", &tmp))
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    if let Some(parent) = path.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

/// Makes a rename in `dir` durable. Only Unix can open a directory for this.
/// `dir` may be empty: the parent of a bare file name is the working
/// directory.
#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> Result<(), ResultsError> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(ResultsError::io("sync", dir))
}

#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> Result<(), ResultsError> {
    Ok(())
}

/// Creates `dir` and its missing parents below `root`, which must exist:
/// never `root` or anything above it (`create_dir_all` would), so a run
/// directory moved or removed while it is written is not made again at its
/// old path, and the write fails instead. `dir` must be inside `root`.
pub fn create_dir_below(root: &Path, dir: &Path) -> Result<(), ResultsError> {
    if dir.is_dir() {
        return Ok(());
    }
    let relative = dir.strip_prefix(root).map_err(|_| ResultsError::Io {
        action: "create",
        path: dir.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("not inside {}", root.display()),
        ),
    })?;
    let mut path = root.to_path_buf();
    for component in relative.components() {
        path.push(component);
        match fs::create_dir(&path) {
            Ok(()) => {}
            // Made by another writer (a shard) in between.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => {}
            Err(source) => {
                return Err(ResultsError::Io {
                    action: "create",
                    path,
                    source,
                })
            }
        }
    }
    Ok(())
}
