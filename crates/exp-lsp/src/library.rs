//! Files the server shows that are not the user's: the stdlib modules (which
//! live inside the `expc` binary) and the `expc explain` texts. An editor can
//! only open what has a URI, so both are written once, read-only, to a folder
//! named after their content; "go to definition" into `std/pareto` opens the
//! exact text the compiler uses.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use exp_check::STDLIB;
use exp_diagnostics::Code;
use lsp_types::Uri;

pub struct Library {
    /// `None` when the folder could not be written: features that need these
    /// files then do without them.
    dir: Option<PathBuf>,
}

impl Library {
    /// Writes the stdlib and the explanations under `cache` (if not already
    /// there) and returns where they are.
    pub fn materialise(cache: &Path) -> Library {
        let dir = cache.join(format!("{}-{:016x}", env!("CARGO_PKG_VERSION"), content_hash()));
        let dir = write_all(&dir).ok().map(|()| dir);
        Library { dir }
    }

    /// A library that writes nothing (tests of features that do not need it).
    pub fn none() -> Library {
        Library { dir: None }
    }

    pub fn stdlib_path(&self, module: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        STDLIB
            .iter()
            .any(|(name, _)| *name == module)
            .then(|| dir.join("std").join(format!("{module}.exp")))
    }

    /// The file of `expc explain CODE`, for the link on a diagnostic's code.
    pub fn explanation_uri(&self, code: Code) -> Option<Uri> {
        let path = self.dir.as_ref()?.join("explain").join(format!("{}.md", code.as_str()));
        crate::uri::from_path(&path)
    }

    /// The file a name in the compiler's source map stands for: a path, or
    /// `std/NAME.exp` for a stdlib module. Registry defaults (`<default …>`)
    /// are no file.
    pub fn file_of_source(&self, name: &str) -> Option<PathBuf> {
        if let Some(module) = name.strip_prefix("std/").and_then(|m| m.strip_suffix(".exp")) {
            return self.stdlib_path(module);
        }
        name.starts_with('/').then(|| PathBuf::from(name))
    }
}

/// What an `import` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportTarget {
    Std { module: &'static str, text: &'static str },
    File(PathBuf),
}

/// Resolves an import's path as the compiler does (`std/NAME`, or `./`, `../`
/// relative to the importing file's folder, normalised lexically).
pub fn resolve_import(importer: &Path, target: &str) -> Option<ImportTarget> {
    if let Some(module) = target.strip_prefix("std/") {
        return STDLIB
            .iter()
            .find(|(name, _)| *name == module)
            .map(|(module, text)| ImportTarget::Std { module, text });
    }
    if target.starts_with("./") || target.starts_with("../") {
        return Some(ImportTarget::File(normalize(&importer.parent()?.join(target))));
    }
    None
}

// The compiler's own: an import's alias without `as`, and the lexical
// path normalisation its loader keys files by.
pub use exp_check::{normalize_path as normalize, stem_alias as default_alias};

fn files() -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = STDLIB
        .iter()
        .map(|(name, text)| (Path::new("std").join(format!("{name}.exp")), (*text).to_string()))
        .collect();
    for code in Code::ALL {
        let text = format!("# {}: {}\n\n{}\n", code.as_str(), code.title(), code.explanation());
        files.push((Path::new("explain").join(format!("{}.md", code.as_str())), text));
    }
    files
}

/// FNV-1a over every file, so a folder never holds another build's texts.
fn content_hash() -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (path, text) in files() {
        for byte in path.to_string_lossy().bytes().chain([0]).chain(text.bytes()) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

fn write_all(dir: &Path) -> io::Result<()> {
    for (relative, text) in files() {
        let path = dir.join(relative);
        // Compared through the bounded reader: anything else in the cache
        // (a FIFO, a huge file) is replaced, never waited on or read whole.
        let cap = exp_files::Cap::new(text.len() as u64, "a library copy");
        if exp_files::read_text(&path, cap).is_ok_and(|existing| existing == text) {
            continue;
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        // Written whole under another name, then renamed: a second server
        // starting at the same time never reads half a file.
        let partial = path.with_extension(format!("partial-{}", std::process::id()));
        fs::write(&partial, &text)?;
        fs::set_permissions(&partial, fs::Permissions::from_mode(0o444))?;
        fs::rename(&partial, &path)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_resolve_like_the_compiler() {
        let importer = Path::new("/specs/iot/a.exp");
        assert_eq!(
            resolve_import(importer, "../shared/./b.exp"),
            Some(ImportTarget::File(PathBuf::from("/specs/shared/b.exp")))
        );
        assert!(matches!(
            resolve_import(importer, "std/pareto"),
            Some(ImportTarget::Std { module: "pareto", .. })
        ));
        assert_eq!(resolve_import(importer, "std/nope"), None);
        assert_eq!(resolve_import(importer, "b.exp"), None);
        assert_eq!(default_alias("./lib/common.exp"), "common");
        assert_eq!(default_alias("std/iot"), "iot");
    }

    #[test]
    fn the_library_is_written_once_and_read_only() {
        let cache = std::env::temp_dir().join(format!("exp-lsp-library-{}", std::process::id()));
        let library = Library::materialise(&cache);
        let pareto = library.stdlib_path("pareto").unwrap();
        let text = fs::read_to_string(&pareto).unwrap();
        assert!(text.contains("let shape3_100ms"));
        assert_eq!(fs::metadata(&pareto).unwrap().permissions().mode() & 0o777, 0o444);
        // A second server finds the same files and leaves them.
        let again = Library::materialise(&cache);
        assert_eq!(again.stdlib_path("pareto"), Some(pareto.clone()));
        assert_eq!(library.file_of_source("std/pareto.exp"), Some(pareto));
        assert_eq!(library.file_of_source("<default `1s`>"), None);
        let explain = library.explanation_uri(Code::E0302).unwrap();
        let explain = crate::uri::to_path(&explain).unwrap();
        assert!(fs::read_to_string(explain).unwrap().starts_with("# E0302: "));
        // Read-only files in a writable folder can still be removed.
        fs::remove_dir_all(&cache).unwrap();
    }
}
