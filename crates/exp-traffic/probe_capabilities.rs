// Shared by the build scripts of exp-traffic and expc (`include!`d): tells
// their tests what this machine lets them do, as cfgs. Tests that need one
// carry `#[cfg_attr(not(<cfg>), ignore = "…")]`, so a machine without it
// reports them as ignored, with the reason, instead of as passed.
//
// - `rtt_emulation`: the RTT-emulation stage can run, by
//   `exp_traffic::emulate::preflight`'s conditions: root with CAP_NET_ADMIN
//   and CAP_SYS_ADMIN, /dev/net/tun, and `ip`;
// - `mounts`: root with CAP_SYS_ADMIN and `mount`, for tests that mount a
//   small tmpfs to fill it or make it read-only;
// - `slurm`: root and Debian's Slurm and munge (`slurmctld`, `slurmd`,
//   `sbatch`, `srun`, `munged`), for tests that start their own cluster;
// - `xmllint`: libxml2's `xmllint`, for tests that validate XML output
//   against a schema (`expc test --junit`);
// - `chromium`: Debian's `chromium`, for the test that opens the HTML
//   report in a real browser;
// - `python_polars`: `python3` that imports `polars`, for the test that runs
//   the README's polars snippet (found again when that polars changes;
//   after installing it, `touch crates/expc/build.rs`).
//
// With `EXPC_REQUIRE_CAPABILITIES=1` (set by `.ci/run`, which runs as root)
// a missing capability fails the build instead: CI runs every test.

fn probe_capabilities() {
    println!("cargo::rustc-check-cfg=cfg(rtt_emulation)");
    println!("cargo::rustc-check-cfg=cfg(mounts)");
    println!("cargo::rustc-check-cfg=cfg(slurm)");
    println!("cargo::rustc-check-cfg=cfg(xmllint)");
    println!("cargo::rustc-check-cfg=cfg(chromium)");
    println!("cargo::rustc-check-cfg=cfg(python_polars)");
    for program in [
        "/usr/sbin/slurmctld",
        "/usr/sbin/slurmd",
        "/usr/bin/sbatch",
        "/usr/sbin/munged",
        "/usr/bin/xmllint",
        "/usr/bin/chromium",
    ] {
        println!("cargo::rerun-if-changed={program}");
    }
    println!("cargo::rerun-if-changed=/dev/net/tun");
    println!("cargo::rerun-if-env-changed=EXPC_REQUIRE_CAPABILITIES");
    println!("cargo::rerun-if-env-changed=PATH");
    let required = std::env::var("EXPC_REQUIRE_CAPABILITIES").is_ok_and(|v| v == "1");
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map(str::trim)
            .unwrap_or_default()
            .to_string()
    };
    let root = field("Uid:").split_whitespace().nth(1) == Some("0");
    // CAP_NET_ADMIN (12) and CAP_SYS_ADMIN (21).
    let needed = (1u64 << 12) | (1 << 21);
    let capabilities = u64::from_str_radix(&field("CapEff:"), 16).unwrap_or(0) & needed == needed;
    let tun = std::path::Path::new("/dev/net/tun").exists();
    let runs = |program: &str, arg: &str| {
        std::process::Command::new(program)
            .arg(arg)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let ip = runs("ip", "-V");
    let mount = runs("mount", "--version");
    // Slurm's clients fail to start without a configuration: found, not run.
    let on_path = |program: &str| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .chain([std::path::PathBuf::from("/usr/sbin")])
            .any(|dir| dir.join(program).is_file())
    };
    let slurm = ["slurmctld", "slurmd", "sbatch", "srun", "munged"].iter().all(|p| on_path(p));
    if root && capabilities && tun && ip {
        println!("cargo::rustc-cfg=rtt_emulation");
    }
    if root && capabilities && mount {
        println!("cargo::rustc-cfg=mounts");
    }
    if root && slurm {
        println!("cargo::rustc-cfg=slurm");
    }
    let xmllint = runs("xmllint", "--version");
    if xmllint {
        println!("cargo::rustc-cfg=xmllint");
    }
    let chromium = std::path::Path::new("/usr/bin/chromium").exists();
    if chromium {
        println!("cargo::rustc-cfg=chromium");
    }
    let polars = std::process::Command::new("python3")
        .args(["-c", "import polars; print(polars.__file__)"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Some(init) = &polars {
        println!("cargo::rerun-if-changed={init}");
        println!("cargo::rustc-cfg=python_polars");
    }
    let polars = polars.is_some();
    if required && !(root && capabilities && tun && ip && mount && slurm && xmllint && chromium && polars) {
        panic!(
            "EXPC_REQUIRE_CAPABILITIES=1 but tests would be ignored: root {root}, \
             CAP_NET_ADMIN+CAP_SYS_ADMIN {capabilities}, /dev/net/tun {tun}, `ip` {ip}, `mount` {mount}, \
             Slurm and munge {slurm}, `xmllint` {xmllint}, `chromium` {chromium}, python's polars {polars}"
        );
    }
}
