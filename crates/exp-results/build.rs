//! Records the commit expc is built from (`EXPC_COMMIT`, for the manifest's
//! `build.commit`): `git rev-parse HEAD` at build time, when the source is a
//! git checkout. Uncommitted changes are not seen; a build outside git
//! records none.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string()).filter(|t| out.status.success() && !t.is_empty())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(commit) = git(&["rev-parse", "HEAD"]) else {
        return;
    };
    // Built again when HEAD moves: HEAD itself, the branch it names, packed
    // refs (a path that does not exist would rerun this on every build).
    let branch = git(&["rev-parse", "--symbolic-full-name", "HEAD"]);
    let paths = [
        git(&["rev-parse", "--git-path", "HEAD"]),
        branch.and_then(|b| git(&["rev-parse", "--git-path", &b])),
        git(&["rev-parse", "--git-path", "packed-refs"]),
    ];
    for path in paths.into_iter().flatten() {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rustc-env=EXPC_COMMIT={commit}");
}
