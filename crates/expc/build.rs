//! Probes what the tests may do on this machine (see the included file).

include!("../exp-traffic/probe_capabilities.rs");

fn main() {
    // Included, so cargo does not see it change by itself.
    println!("cargo::rerun-if-changed=../exp-traffic/probe_capabilities.rs");
    probe_capabilities();
    probe_prometheus();
}

/// `prometheus`: Debian's Prometheus server, for the test that lets it
/// scrape `expc run --metrics` (expc's own; the traffic crate needs none).
/// Required like the others under `EXPC_REQUIRE_CAPABILITIES=1`.
fn probe_prometheus() {
    const PROMETHEUS: &str = "/usr/bin/prometheus";
    println!("cargo::rustc-check-cfg=cfg(prometheus)");
    println!("cargo::rerun-if-changed={PROMETHEUS}");
    if std::path::Path::new(PROMETHEUS).exists() {
        println!("cargo::rustc-cfg=prometheus");
    } else if std::env::var("EXPC_REQUIRE_CAPABILITIES").is_ok_and(|v| v == "1") {
        panic!("EXPC_REQUIRE_CAPABILITIES=1 but {PROMETHEUS} is missing (apt-get install prometheus)");
    }
}
