//! Removing what an instance leaves on disk, after its child has ended.

use std::path::{Path, PathBuf};

/// Removes everything inside the scratch directory (which stays), and the
/// child's own directory inside a user-given `dir`.
pub(crate) fn clean_up(scratch_dir: &Path, work_dir: Option<&Path>) -> Result<(), (PathBuf, std::io::Error)> {
    if let Some(work_dir) = work_dir.filter(|dir| !dir.starts_with(scratch_dir)) {
        remove(work_dir)?;
    }
    let entries = match std::fs::read_dir(scratch_dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err((scratch_dir.to_path_buf(), error)),
    };
    for entry in entries {
        let entry = entry.map_err(|error| (scratch_dir.to_path_buf(), error))?;
        remove(&entry.path())?;
    }
    Ok(())
}

fn remove(path: &Path) -> Result<(), (PathBuf, std::io::Error)> {
    // symlink_metadata: a symlink is removed itself, never followed.
    let result = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(error) => Err(error),
    };
    match result {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err((path.to_path_buf(), error)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleanup_empties_the_scratch_dir_and_removes_the_work_dir() {
        let root = std::env::temp_dir().join(format!("exp-anomaly-cleanup-{}", std::process::id()));
        let scratch = root.join("scratch");
        let user_dir = root.join("user");
        let work = user_dir.join("expc-anomaly-1");
        std::fs::create_dir_all(scratch.join("sub/deeper")).unwrap();
        std::fs::write(scratch.join("a"), b"x").unwrap();
        std::fs::write(scratch.join("sub/deeper/b"), b"x").unwrap();
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("m0-1"), b"x").unwrap();
        std::fs::write(user_dir.join("keep"), b"mine").unwrap();

        clean_up(&scratch, Some(&work)).unwrap();
        assert!(scratch.is_dir());
        assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
        assert!(!work.exists());
        assert!(
            user_dir.join("keep").exists(),
            "files next to the work dir are the user's"
        );
        // Twice is fine, and a missing scratch dir too.
        clean_up(&scratch, Some(&work)).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        clean_up(&scratch, None).unwrap();
    }
}
