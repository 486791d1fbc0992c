//! docs/architecture.md is a map: what it cites must exist. Every file it
//! names (`read.rs` under a crate's heading is that crate's), every type
//! and `crate::item` path it names, every decision record it links, and
//! every constant it quotes (`PLAN_VERSION = 7`) must match the code, so
//! the map cannot drift from the territory unnoticed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("..")
}

/// Every file below `dir` (no `target`, no hidden directories), relative to the repository.
fn files(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if path.is_dir() {
            let relative = path.strip_prefix(repo()).unwrap_or(&path);
            out.push(format!("{}/", relative.display()));
            files(&path, out);
        } else {
            out.push(path.strip_prefix(repo()).unwrap_or(&path).display().to_string());
        }
    }
}

/// The backticked spans of a line.
fn quoted(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

/// A placeholder in a recipe (`src/foo.rs`, `<case>`), not a citation.
fn is_template(token: &str) -> bool {
    ["foo", "Foo", "FOO", "<", "*", "{", "…", " "]
        .iter()
        .any(|t| token.contains(t))
}

/// Paths the map cites, with the crate whose section cites them.
fn cited_files(doc: &str) -> Vec<(Option<String>, String)> {
    let mut section = None;
    let mut cited = Vec::new();
    for line in doc.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            let name = heading.split_whitespace().next().unwrap_or_default();
            section = repo().join("crates").join(name).is_dir().then(|| name.to_string());
        } else if line.starts_with("## ") {
            section = None;
        }
        for token in quoted(line) {
            let is_path = [".rs", ".pest", ".exp", ".md", ".sh", ".toml", "/"]
                .iter()
                .any(|suffix| token.ends_with(suffix));
            let looks_like_a_path = token.chars().all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
            // `.exp` is an extension, `tables/…` a run directory's layout.
            let elsewhere = token.starts_with('.') || token.starts_with("tables/");
            if is_path && looks_like_a_path && !is_template(token) && !elsewhere {
                cited.push((section.clone(), token.to_string()));
            }
        }
    }
    cited
}

#[test]
fn every_file_the_map_names_exists() {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    let mut all = Vec::new();
    files(&repo(), &mut all);
    let mut missing = BTreeSet::new();
    let cited = cited_files(&doc);
    for (section, token) in &cited {
        let token = token.trim_start_matches("./");
        let found = match section {
            // A crate's section names its files from its `src/` down (or its root).
            Some(krate) => {
                let root = format!("crates/{krate}/");
                all.iter().any(|f| {
                    f.strip_prefix(&root)
                        .is_some_and(|inner| inner == token || inner.ends_with(&format!("/{token}")))
                }) || all.iter().any(|f| f == token || *f == format!("crates/{token}"))
            }
            None => all
                .iter()
                .any(|f| f == token || *f == format!("crates/{token}") || f.ends_with(&format!("/{token}"))),
        };
        if !found {
            missing.insert(format!("{token} (section {})", section.as_deref().unwrap_or("-")));
        }
    }
    assert!(
        cited.len() > 150,
        "found only {} cited files: is the parser still right?",
        cited.len()
    );
    assert!(
        missing.is_empty(),
        "docs/architecture.md names files that do not exist: {missing:#?}"
    );
}

/// All Rust sources of the workspace's crates, by crate directory name.
fn sources() -> Vec<(String, String)> {
    let mut all = Vec::new();
    files(&repo().join("crates"), &mut all);
    all.iter()
        .filter(|f| f.ends_with(".rs") && f.contains("/src/"))
        .map(|f| {
            let krate = f.split('/').nth(1).unwrap_or_default().to_string();
            (krate, std::fs::read_to_string(repo().join(f)).unwrap_or_default())
        })
        .collect()
}

/// Whether `text` declares `name` as an item (or an enum variant, a field
/// or a re-export).
fn declares(text: &str, name: &str) -> bool {
    let item = [
        "fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "mod ", "union ",
    ];
    item.iter().any(|kw| contains_word(text, &format!("{kw}{name}")))
        || text.lines().any(|l| {
            let l = l.trim();
            // An enum variant or a field: `Name,` `Name(` `Name {` `name:`.
            l.strip_prefix("pub ")
                .unwrap_or(l)
                .strip_prefix(name)
                .is_some_and(|rest| rest.starts_with([',', '(', ' ', ':']) || rest.is_empty())
                || (l.starts_with("pub use") && contains_word(l, name))
        })
}

fn contains_word(text: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word)
        .any(|(at, _)| !text[..at].ends_with(is_name) && !text[at + word.len()..].starts_with(is_name))
}

#[test]
fn every_type_and_path_the_map_names_is_declared() {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    let sources = sources();
    let declared_in = |krate: Option<&str>, name: &str| {
        sources
            .iter()
            .filter(|(k, _)| krate.is_none_or(|c| c == k))
            .any(|(_, text)| declares(text, name))
    };
    let mut checked = 0;
    let mut missing = BTreeSet::new();
    for token in doc.lines().flat_map(quoted) {
        if is_template(token) || !token.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let segments: Vec<&str> = token.split("::").collect();
        let ok = match segments.as_slice() {
            // `exp_check::compile`: the item is the crate's.
            [krate, item] if krate.starts_with("exp_") => {
                declared_in(Some(&krate.replace('_', "-")), item) || declared_in(None, item)
            }
            // `Plan::from_json`, `DType::Ns`: the type, then its member.
            [ty, member] => declared_in(None, ty) && declared_in(None, member),
            // A type: `RunDir`, `TableSink`.
            [name]
                if name.starts_with(|c: char| c.is_ascii_uppercase())
                    && name.chars().any(|c| c.is_ascii_lowercase()) =>
            {
                declared_in(None, name)
            }
            _ => continue,
        };
        checked += 1;
        if !ok {
            missing.insert(token.to_string());
        }
    }
    // Types of the standard library the map mentions by name.
    for std_type in ["String", "BTreeMap"] {
        missing.remove(std_type);
    }
    assert!(checked > 30, "checked only {checked} names: is the parser still right?");
    assert!(
        missing.is_empty(),
        "docs/architecture.md names what the code does not declare: {missing:#?}"
    );
}

#[test]
fn every_constant_the_map_quotes_equals_the_code() {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    let sources = sources();
    let mut checked = 0;
    for token in doc.lines().flat_map(quoted) {
        let Some((name, value)) = token.split_once(" = ") else {
            continue;
        };
        if !name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            continue;
        }
        let definitions: Vec<String> = sources
            .iter()
            .flat_map(|(_, text)| text.lines())
            .filter_map(|l| {
                let rest = l.trim().strip_prefix("pub ").unwrap_or(l.trim());
                let rest = rest.strip_prefix(&format!("const {name}:"))?;
                Some(rest.split_once('=')?.1.trim().trim_end_matches(';').replace('_', ""))
            })
            .collect();
        assert!(
            !definitions.is_empty(),
            "docs/architecture.md quotes `{token}`: no `const {name}` in the code"
        );
        assert!(
            definitions.contains(&value.replace('_', "")),
            "docs/architecture.md quotes `{token}`, the code has `{name} = {}`",
            definitions.join(" or ")
        );
        checked += 1;
    }
    assert!(checked >= 1, "the map quotes no constant any more");
}

#[test]
fn every_decision_record_the_map_links_exists() {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    let mut links = 0;
    for part in doc.split("](").skip(1) {
        let target = part.split(')').next().unwrap_or_default();
        if target.starts_with("http") || target.starts_with('#') {
            continue;
        }
        let path = repo().join("docs").join(target.split('#').next().unwrap_or_default());
        assert!(
            path.exists(),
            "docs/architecture.md links {target}, which does not exist"
        );
        links += 1;
    }
    assert!(links > 10, "found only {links} links");
}
