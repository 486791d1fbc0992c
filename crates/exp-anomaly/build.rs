//! Compiles the C kernels in `runtime-c/` (one file per kernel, one header) into a static library.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dir = manifest.join("../../runtime-c");
    let files = [
        "cpuoccupy.c",
        "cachecopy.c",
        "membw.c",
        "memeater.c",
        "memleak.c",
        "iometadata.c",
        "iobandwidth.c",
        "stream.c",
    ];
    println!("cargo:rerun-if-changed={}", dir.join("expk.h").display());
    let mut build = cc::Build::new();
    for file in files {
        let path = dir.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        build.file(path);
    }
    build
        .include(&dir)
        .std("c11")
        // The kernels are timing-sensitive: the same code in debug and release builds.
        .opt_level(2)
        .warnings(true)
        .extra_warnings(true);
    record_compiler(&build);
    build.compile("expk");
}

/// The compiler and flags the kernels are built with, for the manifest
/// (`exp_anomaly::KERNEL_COMPILER`, `KERNEL_FLAGS`): what a run's timing
/// depends on besides the source.
fn record_compiler(build: &cc::Build) {
    let tool = build.get_compiler();
    let version = std::process::Command::new(tool.path())
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8_lossy(&out.stdout).lines().next().map(str::to_string))
        .unwrap_or_else(|| "version unknown".into());
    let flags: Vec<String> = tool.args().iter().map(|a| a.to_string_lossy().into_owned()).collect();
    println!("cargo:rustc-env=EXPK_COMPILER={} ({version})", tool.path().display());
    println!("cargo:rustc-env=EXPK_FLAGS={}", flags.join(" "));
}
