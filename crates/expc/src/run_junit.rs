//! `expc run --junit FILE`: the claims' verdicts written when a run ends,
//! as `expc report RUN_DIR --junit FILE` writes them (apart from claims.rs,
//! which report.rs uses, so that neither imports the other).

use std::path::Path;

/// `--junit FILE`: where the verdicts go when the run ends.
pub struct Junit<'a> {
    path: Option<&'a Path>,
    include_invalid: bool,
}

impl<'a> Junit<'a> {
    pub fn new(path: Option<&'a Path>, include_invalid: bool) -> Self {
        Junit { path, include_invalid }
    }

    /// Writes the file for the run that ended in `dir`; `false` (said why)
    /// when it could not be written, so the run does not exit 0.
    pub fn write(&self, dir: &Path, manifest: &exp_results::Manifest) -> bool {
        let Some(path) = self.path else { return true };
        if manifest.shard.is_some() || manifest.split.is_some() {
            errln!(
                "--junit {}: not written: a shard or split part alone does not judge the claims; \
                 after the merge, `expc report {} --check --junit {}`",
                path.display(),
                dir.display(),
                path.display()
            );
            return true;
        }
        match crate::report::write_run_junit(dir, path, self.include_invalid) {
            Ok(()) => true,
            Err(e) => {
                errln!("error: --junit: {e}");
                false
            }
        }
    }
}

/// `--junit FILE` refused before the run when it can never be written (a
/// directory): the run would otherwise end with nowhere to write it.
pub fn check_junit(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(format!(
            "--junit {}: it is a directory; the JUnit output is a file",
            path.display()
        )),
        _ => Ok(()),
    }
}
