//! Source hygiene that no compiler lint checks (docs/architecture.md,
//! "Cross-cutting rules"): every source file of the crates stays under 450
//! lines, so a module is one concern a newcomer reads in one sitting, and
//! every module with submodules is one directory with its `mod.rs`.

use std::path::{Path, PathBuf};

/// Longest a source file may be, in lines.
const MAX_LINES: usize = 450;

/// Files that are tables rather than code: one entry per diagnostic code.
const TABLES: &[&str] = &["exp-diagnostics/src/codes.rs"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_is_over_450_lines() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&crates).expect("crates/").flatten() {
        let src = krate.path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    assert!(
        files.len() > 100,
        "found only {} source files under {}",
        files.len(),
        crates.display()
    );
    let mut long: Vec<String> = files
        .iter()
        .filter(|path| !TABLES.iter().any(|t| path.ends_with(t)))
        .filter_map(|path| {
            let lines = std::fs::read_to_string(path).expect("readable source").lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "split these by concern: {long:#?}");
}

/// Every directory below `dir`.
fn directories(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            out.push(path.clone());
            directories(&path, out);
        }
    }
}

/// One module-file style (docs/architecture.md, "Cross-cutting rules"): a
/// module with submodules is a directory with its `mod.rs`, never `foo.rs`
/// beside `foo/`, so a module's files are in one place.
#[test]
fn a_module_with_submodules_is_a_directory_with_mod_rs() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut dirs = Vec::new();
    for krate in std::fs::read_dir(&crates).expect("crates/").flatten() {
        let src = krate.path().join("src");
        if src.is_dir() {
            directories(&src, &mut dirs);
        }
    }
    let with_mod_rs = dirs.iter().filter(|d| d.join("mod.rs").is_file()).count();
    assert!(with_mod_rs > 20, "found only {with_mod_rs} module directories");
    let mut beside: Vec<String> = dirs
        .iter()
        .filter(|d| !d.ends_with("bin") && d.with_extension("rs").is_file())
        .map(|d| {
            format!(
                "{} (move it to {})",
                d.with_extension("rs").display(),
                d.join("mod.rs").display()
            )
        })
        .collect();
    beside.sort();
    assert!(beside.is_empty(), "modules beside their directory: {beside:#?}");
}
