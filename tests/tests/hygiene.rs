//! Source hygiene that no compiler lint checks: every source file of the
//! crates stays under 450 lines (docs/architecture.md, "Cross-cutting
//! rules"), so a module is one concern a newcomer reads in one sitting.

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
