//! Every spec of the library (`specs/**/*.exp`) and every example
//! (`examples/**/*.exp`) compiles without a single diagnostic, is formatted as
//! `expc fmt` would format it, and plans to the snapshotted plan.
//!
//! Files are discovered, never listed: a new spec is picked up by the next
//! `cargo test`, and its plan snapshot is created by
//! `INSTA_UPDATE=always cargo test -p exp-tests`.
//!
//! A file without an `experiment` block is an import-only module (such as
//! `specs/*/shared/*.exp`): it must check without errors, and has no plan.

mod common;

use std::path::Path;

use exp_check::{compile, Options};
use exp_diagnostics::{render_all, Code, RenderStyle, SourceMap};
use exp_plan::Plan;
use exp_syntax::ast::Item;

use common::{relative, RepoLoader};

#[test]
fn specs() {
    // The library may be empty while it is being written; examples may not.
    insta::with_settings!({ allow_empty_glob => true }, {
        check_all("specs", |check| insta::glob!("../../specs", "**/*.exp", check));
    });
}

#[test]
fn examples() {
    check_all("examples", |check| insta::glob!("../../examples", "**/*.exp", check));
}

/// Runs `glob` with a per-file check; collects every file's problems and
/// fails once at the end, so one broken spec does not hide the others.
fn check_all(what: &str, glob: impl FnOnce(&mut dyn FnMut(&Path))) {
    let mut failures: Vec<String> = Vec::new();
    let mut count = 0;
    glob(&mut |path: &Path| {
        count += 1;
        failures.extend(check_file(path));
    });
    assert!(
        failures.is_empty(),
        "{} of {count} files under {what}/ failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Checks one file; returns a description of each problem.
fn check_file(path: &Path) -> Vec<String> {
    let name = relative(path);
    let text = std::fs::read_to_string(path).expect("spec is readable UTF-8");
    let mut problems = Vec::new();

    // `expc fmt --check` must accept the file as it is.
    let mut sources = SourceMap::new();
    let file = sources.add(name.as_str(), text.as_str());
    let (module, syntax) = exp_syntax::parse(file, &text);
    if syntax.is_empty() {
        let formatted = exp_syntax::format(&module, &text);
        if formatted != text {
            let diff = line_diff(&text, &formatted);
            problems.push(format!(
                "{name}: not formatted (run `expc fmt {name}`); `-` is the file, `+` expc fmt:\n{diff}"
            ));
        }
    }
    let is_module = !module
        .items
        .iter()
        .any(|item| matches!(item, Item::Block(b) if b.kind.name == "experiment"));

    let options = Options {
        seed: None,
        require_experiment: !is_module,
    };
    let compilation = compile(&name, &RepoLoader::new(), &options);
    // A module's bindings are its exports: checked alone, nobody reads them.
    let unexpected: Vec<_> = compilation
        .diagnostics
        .iter()
        .filter(|d| !(is_module && d.code == Code::W0801))
        .cloned()
        .collect();
    if !unexpected.is_empty() {
        let rendered = render_all(&unexpected, &compilation.sources, RenderStyle::Plain);
        problems.push(format!("{name}: expected no diagnostics, got:\n{rendered}"));
        return problems;
    }
    if is_module {
        return problems;
    }
    let Some(plan) = compilation.plan else {
        problems.push(format!("{name}: compiled without diagnostics but produced no plan"));
        return problems;
    };
    let json = plan_json(&plan);
    insta::with_settings!({
        snapshot_suffix => name.as_str(),
        description => format!("expc plan {name}"),
        omit_expression => true,
    }, {
        insta::assert_snapshot!("plan", json);
    });
    problems
}

/// The plan exactly as `expc plan` prints it.
fn plan_json(plan: &Plan) -> String {
    let value = serde_json::to_value(plan).expect("plans serialize");
    serde_json::to_string_pretty(&value).expect("plans serialize") + "\n"
}

/// The changed lines between `old` and `new` (longest common subsequence),
/// each with its line number in `old`.
fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // lcs[i][j]: length of the LCS of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!("{:>4} - {}\n", i + 1, a[i]));
            i += 1;
        } else {
            out.push_str(&format!("{:>4} + {}\n", i + 1, b[j]));
            j += 1;
        }
    }
    if out.is_empty() {
        out.push_str("(only line endings or the final newline differ)\n");
    }
    out
}
