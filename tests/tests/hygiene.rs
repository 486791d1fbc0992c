//! Source hygiene that no compiler lint checks (docs/architecture.md,
//! "Cross-cutting rules"): every source file of the crates stays under 450
//! lines, so a module is one concern a newcomer reads in one sitting; every
//! module with submodules is one directory with its `mod.rs`; library
//! crates return typed errors, never a `Result<_, String>`; and tests read
//! `CARGO_MANIFEST_DIR` at run time.

use std::path::{Path, PathBuf};

/// Longest a source file may be, in lines.
const MAX_LINES: usize = 450;

/// Files that are tables rather than code: one entry per diagnostic code.
const TABLES: &[&str] = &["exp-diagnostics/src/codes.rs"];

/// The repository: this crate's parent, found at run time (see the last test).
fn repo() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("..")
}

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
    let crates = repo().join("crates");
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
    let crates = repo().join("crates");
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

/// The crate that talks to the terminal: its errors end as text anyway.
const FRONT_END: &str = "expc";

/// Errors that are only text: what a caller can neither match on nor
/// follow to its cause (issue 37).
const UNTYPED_ERRORS: &[&str] = &[
    "String",
    "std::string::String",
    "&str",
    "&'static str",
    "Box<dyn Error>",
    "Box<dyn Error + Send + Sync>",
    "Box<dyn std::error::Error>",
    "Box<dyn std::error::Error + Send + Sync>",
];

/// `source` with comments, string and character literals blanked (newlines
/// kept, so offsets keep their lines): a `Result<_, String>` in a doc
/// comment or a message is not a signature.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        let end = match rest {
            ['/', '/', ..] => rest.iter().position(|&c| c == '\n').unwrap_or(rest.len()),
            ['/', '*', ..] => (2..rest.len())
                .find(|&j| rest[j - 1..=j] == ['*', '/'])
                .map_or(rest.len(), |j| j + 1),
            ['r', ..] if raw_string_starts(&chars, i) => {
                let hashes = rest[1..].iter().take_while(|&&c| c == '#').count();
                let closing: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                (hashes + 2 + closing.len()..=rest.len())
                    .find(|&j| rest[..j].ends_with(&closing))
                    .unwrap_or(rest.len())
            }
            ['"', ..] => {
                let mut j = 1;
                while j < rest.len() && rest[j] != '"' {
                    j += if rest[j] == '\\' { 2 } else { 1 };
                }
                (j + 1).min(rest.len())
            }
            // A character literal, not a lifetime: `'x'`, `'\n'`, `'\u{1F600}'`.
            ['\'', '\\', ..] => rest
                .iter()
                .skip(3)
                .position(|&c| c == '\'')
                .map_or(rest.len(), |j| j + 4),
            ['\'', _, '\'', ..] => 3,
            _ => {
                out.push(chars[i]);
                i += 1;
                continue;
            }
        };
        out.extend(rest[..end].iter().map(|&c| blank(c)));
        i += end;
    }
    out
}

/// Whether a raw string literal (`r"…"`, `r#"…"#`) starts at `chars[i]`:
/// not a raw identifier (`r#type`), not the end of a name (`br"…"` aside).
fn raw_string_starts(chars: &[char], i: usize) -> bool {
    let after_name = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
    !after_name && chars.get(i + 1 + hashes) == Some(&'"')
}

/// Each `Result<…>` of `source` whose error type is only text: its line and
/// the error type as written (whitespace folded), however the type is
/// spread over lines or nested (`Result<([u8; 4], usize), String>`).
fn untyped_errors(source: &str) -> Vec<(usize, String)> {
    let code: Vec<char> = code_only(source).chars().collect();
    let mut found = Vec::new();
    for start in 0..code.len() {
        let preceded_by_name = start > 0 && (code[start - 1].is_alphanumeric() || code[start - 1] == '_');
        if preceded_by_name || !code[start..].starts_with(&['R', 'e', 's', 'u', 'l', 't', '<']) {
            continue;
        }
        // Walk to the matching `>`, noting the top-level commas.
        let (mut depth, mut commas, mut end) = (0usize, Vec::new(), None);
        for (j, &c) in code.iter().enumerate().skip(start + 6) {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' if code[j - 1] == '-' => {}
                '>' | ')' | ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j);
                        break;
                    }
                }
                ',' if depth == 1 => commas.push(j),
                ';' | '{' | '}' if depth == 1 => break,
                _ => {}
            }
        }
        let Some(end) = end else { continue };
        // The error type follows the last comma, or the one before a
        // trailing comma (`Result<\n    T,\n    String,\n>`, as rustfmt
        // writes a long one).
        let text = |from: usize, to: usize| code[from + 1..to].iter().collect::<String>();
        let error = match commas.as_slice() {
            [.., before, last] if text(*last, end).trim().is_empty() => text(*before, *last),
            [.., last] => text(*last, end),
            [] => continue,
        };
        let error = error.split_whitespace().collect::<Vec<_>>().join(" ");
        if UNTYPED_ERRORS.contains(&error.as_str()) {
            let line = code[..start].iter().filter(|&&c| c == '\n').count() + 1;
            found.push((line, error));
        }
    }
    found
}

#[test]
fn the_scan_finds_text_errors_however_they_are_written() {
    let source = r#"
        /// Returns `Result<(), String>` on failure.
        fn documented() -> Result<(), Typed> { Err("Result<(), String>".into()) }
        fn plain() -> Result<u32, String> { todo!() }
        fn spread(
            x: u8,
        ) -> Result<
            Vec<(u8, u8)>,
            String,
        > { todo!() }
        fn nested(n: usize) -> Result<([u8; 4], usize), String> { todo!() }
        fn char_quote() -> char { '"' }
        type Alias<T> = Result<T, std::string::String>;
        fn boxed<'a>(s: &'a str) -> Result<&'a str, Box<dyn std::error::Error + Send + Sync>> { todo!() }
        fn typed() -> Result<HashMap<String, String>, ParseError> { todo!() }
        fn closure() { let f = |x: u8| -> Result<u8, &'static str> { Ok(x) }; }
        fn raw() -> &'static str { r"Result<(), String>" }
        fn r#type(c: char) -> bool { c == '\'' || c == '\\' }
        fn last() -> Result<(), String> { todo!() }
    "#;
    let found: Vec<usize> = untyped_errors(source).into_iter().map(|(line, _)| line).collect();
    assert_eq!(found, vec![4, 7, 11, 13, 14, 16, 19]);
}

/// Library crates return typed errors (thiserror) that callers can match
/// on and follow to their cause; only the front end turns them into text
/// (docs/architecture.md, "Cross-cutting rules").
#[test]
fn library_crates_return_typed_errors() {
    let crates = repo().join("crates");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&crates).expect("crates/").flatten() {
        let src = krate.path().join("src");
        if src.is_dir() && !krate.path().ends_with(FRONT_END) {
            rust_files(&src, &mut files);
        }
    }
    assert!(files.len() > 100, "found only {} library source files", files.len());
    let mut untyped: Vec<String> = files
        .iter()
        .flat_map(|path| {
            let source = std::fs::read_to_string(path).expect("readable source");
            untyped_errors(&source)
                .into_iter()
                .map(move |(line, error)| format!("{}:{line}: Result<_, {error}>", path.display()))
        })
        .collect();
    untyped.sort();
    assert!(untyped.is_empty(), "give these a typed error (thiserror): {untyped:#?}");
}

/// Tests read `CARGO_MANIFEST_DIR` at run time (docs/architecture.md,
/// "Cross-cutting rules"): cargo reuses a test binary built from a checkout
/// at another path that shares the target directory, and a path baked in
/// with `env!` would read that other checkout's files.
#[test]
fn no_source_bakes_in_the_manifest_directory() {
    let root = repo();
    // Split, so that this file does not find itself.
    let baked = ["env!(\"CARGO_", "MANIFEST_DIR\")"].concat();
    // xtask's fallback for a run outside cargo, which sets it at run time.
    let allowed = ["xtask/src/main.rs"];
    let mut files = Vec::new();
    for dir in ["crates", "tests", "xtask"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} Rust files", files.len());
    let mut found: Vec<String> = files
        .iter()
        .filter(|path| !allowed.iter().any(|a| path.ends_with(a)))
        .filter(|path| std::fs::read_to_string(path).expect("readable source").contains(&baked))
        .map(|path| path.display().to_string())
        .collect();
    found.sort();
    assert!(
        found.is_empty(),
        "read CARGO_MANIFEST_DIR with std::env::var_os: {found:#?}"
    );
}

/// Every Parquet file goes through exp-parquet (docs/architecture.md): no
/// other crate depends on the `parquet` crate, so its API and its build
/// cost stay in one place.
#[test]
fn only_exp_parquet_depends_on_the_parquet_crate() {
    let root = repo();
    let mut manifests: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("entry").path().join("Cargo.toml"))
        .filter(|p| p.exists())
        .collect();
    manifests.extend([root.join("tests/Cargo.toml"), root.join("xtask/Cargo.toml")]);
    assert!(manifests.len() > 10, "found only {} manifests", manifests.len());
    let mut found: Vec<String> = manifests
        .iter()
        .filter(|p| !p.ends_with("exp-parquet/Cargo.toml"))
        .filter(|p| {
            let text = std::fs::read_to_string(p).expect("readable manifest");
            text.lines().any(|l| l.trim_start().starts_with("parquet"))
        })
        .map(|p| p.display().to_string())
        .collect();
    found.sort();
    assert!(
        found.is_empty(),
        "read and write Parquet through exp-parquet: {found:#?}"
    );
}
