//! Probes what the tests may do on this machine (see the included file).

include!("../exp-traffic/probe_capabilities.rs");

fn main() {
    // Included, so cargo does not see it change by itself.
    println!("cargo::rerun-if-changed=../exp-traffic/probe_capabilities.rs");
    probe_capabilities();
}
