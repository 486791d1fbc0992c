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
        .extra_warnings(true)
        .compile("expk");
}
