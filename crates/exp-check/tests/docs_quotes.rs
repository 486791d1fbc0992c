//! What the docs quote from the code, checked against it: the quickstart
//! listing in docs/language.md is `examples/quickstart.exp`, the plan
//! version the docs name is `exp_plan::PLAN_VERSION`, the distribution
//! table of §3 lists each call's parameters as the registry has them, and
//! every spec path the docs and `expc --help` name exists.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_quickstart_listing_is_the_example() {
    let doc = read("docs/language.md");
    let start = doc.find("```exp\n").expect("language.md opens with an exp listing") + "```exp\n".len();
    let end = start + doc[start..].find("```").unwrap_or(0);
    assert_eq!(
        &doc[start..end],
        read("examples/quickstart.exp"),
        "docs/language.md's first listing must be examples/quickstart.exp, byte for byte"
    );
}

#[test]
fn the_docs_name_the_current_plan_version() {
    let version = exp_plan::PLAN_VERSION.to_string();
    for (path, marker) in [
        ("docs/language.md", "plan_version   "),
        ("docs/architecture.md", "`PLAN_VERSION = "),
    ] {
        let text = read(path);
        let at = text
            .find(marker)
            .unwrap_or_else(|| panic!("{path} no longer has `{marker}`"));
        let quoted: String = text[at + marker.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        assert_eq!(
            quoted, version,
            "{path} quotes plan version {quoted}, the code has {version}"
        );
    }
}

/// Rows `| \`name(a, b?, …)\` | …` of language.md's table of distributions.
#[test]
fn the_distribution_table_lists_each_calls_parameters() {
    let doc = read("docs/language.md");
    let mut rows = 0;
    for line in doc.lines() {
        let Some(call) = line
            .strip_prefix("| `")
            .and_then(|l| l.split_once("` |"))
            .map(|(c, _)| c)
        else {
            continue;
        };
        let Some((name, args)) = call.strip_suffix(')').and_then(|c| c.split_once('(')) else {
            continue;
        };
        let Some(function) = exp_check::registry::function(name) else {
            continue;
        };
        let documented: Vec<&str> = args.split(", ").map(|a| a.trim_end_matches('?')).collect();
        let registry: Vec<&str> = function.params.iter().map(|p| p.name).collect();
        assert_eq!(documented, registry, "docs/language.md: `{call}` against the registry");
        rows += 1;
    }
    assert!(rows >= 10, "found only {rows} rows of the distribution table");
}

/// `specs/…/x.exp` and `examples/x.exp` as the docs, the README and the
/// command line's help name them.
#[test]
fn every_spec_the_docs_and_the_help_name_exists() {
    let mut texts: Vec<(String, String)> = Vec::new();
    for dir in ["docs", "crates/expc/src"] {
        collect(&repo().join(dir), &mut texts);
    }
    texts.push(("README.md".into(), read("README.md")));
    let mut named = 0;
    for (file, text) in &texts {
        for prefix in ["specs/", "examples/"] {
            for (at, _) in text.match_indices(prefix) {
                // Not inside another path (`tests/specs/`).
                if text[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '/' || c == '_') {
                    continue;
                }
                let path: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
                    .collect();
                if let Some(spec) = path.strip_suffix(".exp").map(|_| path.as_str()) {
                    named += 1;
                    assert!(
                        repo().join(spec).is_file(),
                        "{file} names `{spec}`, which does not exist"
                    );
                }
            }
        }
    }
    assert!(named >= 5, "found only {named} spec paths");
}

fn collect(dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "md" || e == "rs") {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            // Of the sources, only the examples of `--help` (tests name made-up specs).
            let text = if path.extension().is_some_and(|e| e == "rs") {
                text.lines()
                    .filter(|l| l.contains("after_help"))
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                text
            };
            out.push((path.display().to_string(), text));
        }
    }
}

/// The listing of language.md §6.1 is a block of claims `expc fmt` leaves
/// as it is, and its tables name every statistic and row metric of the
/// registry.
#[test]
fn the_claims_section_matches_the_language() {
    let doc = read("docs/language.md");
    let section = &doc[doc.find("### 6.1 Claims").expect("language.md has §6.1 Claims")..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let start = section.find("```exp\n").expect("§6.1 has an exp listing") + "```exp\n".len();
    let listing = &section[start..start + section[start..].find("```").unwrap_or(0)];
    let indented: String = listing.lines().map(|l| format!("  {l}\n")).collect();
    let spec = format!("experiment \"x\" {{\n{indented}}}\n");
    let (module, diagnostics) = exp_syntax::parse(exp_diagnostics::FileId(0), &spec);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(
        exp_syntax::format(&module, &spec),
        spec,
        "§6.1's listing is not as `expc fmt` writes it"
    );
    for statistic in exp_check::registry::claims::STATISTICS {
        assert!(
            section.contains(&format!("`{}", statistic.name)),
            "§6.1 does not name `{}`",
            statistic.name
        );
    }
    for block in exp_check::registry::BLOCKS {
        if let exp_check::registry::Role::Workload { row_metrics, .. } = block.role {
            for metric in row_metrics {
                assert!(
                    section.contains(&format!("`{}`", metric.name)),
                    "§6.1 does not list {}'s row metric `{}`",
                    block.kind,
                    metric.name
                );
            }
        }
    }
}
