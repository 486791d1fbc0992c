//! Whether the TextMate grammar test can run here: it needs `node` and the
//! npm packages of `editors/` (`npm ci --prefix editors`, which `.ci/run`
//! does). Without them the test is compiled as ignored, with that reason.

use std::path::Path;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(textmate_engine)");
    println!("cargo::rerun-if-env-changed=PATH");
    // Set by `.ci/run`: a missing engine fails the build, not ignores the test.
    println!("cargo::rerun-if-env-changed=EXPC_REQUIRE_CAPABILITIES");
    // Read when the script runs, not when it was compiled: checkouts at two
    // paths that share a target directory share this script's binary.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let editors = Path::new(&manifest_dir).join("../editors");
    let modules = editors.join("node_modules");
    // A folder is watched with everything in it: installing the packages
    // (which creates node_modules) reruns this script.
    let watched = if modules.is_dir() { &modules } else { &editors };
    println!("cargo::rerun-if-changed={}", watched.display());
    let installed = ["vscode-textmate", "vscode-oniguruma"]
        .iter()
        .all(|package| modules.join(package).join("package.json").is_file());
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if installed && node {
        println!("cargo::rustc-cfg=textmate_engine");
    } else if std::env::var("EXPC_REQUIRE_CAPABILITIES").is_ok_and(|v| v == "1") {
        panic!(
            "EXPC_REQUIRE_CAPABILITIES=1 but the TextMate test would be ignored: node {node}, \
             editors/node_modules installed {installed} (run `npm ci --prefix editors`)"
        );
    }
}
