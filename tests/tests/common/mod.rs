//! Helpers shared by the workspace-level tests.

use std::path::{Path, PathBuf};

/// The repository root (the workspace folder).
pub fn repo_root() -> PathBuf {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.parent().expect("the tests crate lives inside the workspace");
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

/// `path` relative to the repository root, with `/` separators, as a user
/// in the repository root would write it on the command line.
pub fn relative(path: &Path) -> String {
    let root = repo_root();
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let relative = path.strip_prefix(&root).expect("the file lies inside the repository");
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Resolves the repository-relative paths the compiler asks for against the
/// repository root, so tests need not change the process-wide current
/// directory (tests run on parallel threads) and plans record the same
/// relative paths `expc` run from the repository root would.
pub struct RepoLoader {
    root: PathBuf,
}

impl RepoLoader {
    pub fn new() -> Self {
        RepoLoader { root: repo_root() }
    }
}

impl exp_check::Loader for RepoLoader {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(self.root.join(path))
    }
}
