//! `--out` (of `expc run` and `expc slurm`): where run directories go,
//! checked before anything starts. A dangling symbolic link or a file on
//! the way used to fail deep in the run with the system's "File exists".

use std::io::ErrorKind;
use std::path::Path;

/// Why `parent` (`<out>/<experiment>`, the directory run directories are
/// made in) cannot be a directory; `Ok` when it is one or can be made
/// (nothing is created). The deepest part of the path that exists decides.
pub fn check(out: &Path, parent: &Path) -> Result<(), String> {
    for existing in parent.ancestors().filter(|p| !p.as_os_str().is_empty()) {
        let meta = match std::fs::symlink_metadata(existing) {
            Ok(meta) => meta,
            // Not there, or under a file: the parent decides.
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => continue,
            Err(e) => {
                return Err(format!(
                    "--out {}: cannot use {}: {e}",
                    out.display(),
                    existing.display()
                ))
            }
        };
        let what = if meta.file_type().is_symlink() {
            let target = std::fs::read_link(existing).map_or_else(|_| "?".into(), |t| t.display().to_string());
            match std::fs::metadata(existing) {
                Ok(target_meta) if target_meta.is_dir() => return Ok(()),
                Ok(_) => format!("a symbolic link to {target}, which is not a directory"),
                Err(_) => format!("a symbolic link to {target}, which does not exist: create it, or remove the link"),
            }
        } else if meta.is_dir() {
            return Ok(());
        } else if meta.is_file() {
            "a file, not a directory".to_string()
        } else {
            "not a directory".to_string()
        };
        return Err(match existing == out {
            true => format!("--out {} is {what}", out.display()),
            false => format!("--out {}: {} is {what}", out.display(), existing.display()),
        });
    }
    Ok(())
}
