//! Which files `expc test` tests: the specs under the paths it is given, and
//! the snapshots whose spec is gone.

use std::path::{Path, PathBuf};

/// Where a spec's plan snapshot lives: `DIR/__snapshots__/NAME.plan.json`
/// for `DIR/NAME.exp`.
pub const SNAPSHOT_DIR: &str = "__snapshots__";
const SNAPSHOT_SUFFIX: &str = ".plan.json";

pub fn snapshot_path(spec: &Path) -> PathBuf {
    let stem = spec
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = spec.parent().unwrap_or(Path::new(""));
    dir.join(SNAPSHOT_DIR).join(format!("{stem}{SNAPSHOT_SUFFIX}"))
}

/// What the paths name.
#[derive(Default)]
pub struct Library {
    /// Every `.exp` file, sorted.
    pub specs: Vec<PathBuf>,
    /// Every snapshot in a searched folder, sorted.
    pub snapshots: Vec<PathBuf>,
}

/// Finds the specs under `paths`: a file is taken as it is, a folder is
/// searched recursively for `*.exp`, skipping hidden folders, `target`,
/// `node_modules` and symbolic links to folders (no cycles).
pub fn discover(paths: &[PathBuf]) -> Result<Library, String> {
    let mut library = Library::default();
    for path in paths {
        let metadata = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if metadata.is_dir() {
            walk(path, &mut library)?;
        } else {
            library.specs.push(path.clone());
        }
    }
    library.specs.sort();
    library.specs.dedup();
    library.snapshots.sort();
    library.snapshots.dedup();
    Ok(library)
}

fn walk(dir: &Path, library: &mut Library) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let path = clean(&entry.path());
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if kind.is_dir() {
            if name == SNAPSHOT_DIR {
                snapshots_in(&path, library)?;
            } else if !name.starts_with('.') && name != "target" && name != "node_modules" {
                walk(&path, library)?;
            }
        } else if name.ends_with(".exp") && !name.starts_with('.') {
            library.specs.push(path);
        }
    }
    Ok(())
}

fn snapshots_in(dir: &Path, library: &mut Library) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().ends_with(SNAPSHOT_SUFFIX) {
            library.snapshots.push(clean(&entry.path()));
        }
    }
    Ok(())
}

/// `./specs/a.exp` → `specs/a.exp`: names as a user writes them.
fn clean(path: &Path) -> PathBuf {
    path.strip_prefix(".")
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

/// The spec a snapshot belongs to: `DIR/NAME.exp` for
/// `DIR/__snapshots__/NAME.plan.json`.
pub fn spec_of(snapshot: &Path) -> Option<PathBuf> {
    let name = snapshot.file_name()?.to_string_lossy();
    let stem = name.strip_suffix(SNAPSHOT_SUFFIX)?;
    Some(snapshot.parent()?.parent()?.join(format!("{stem}.exp")))
}
