//! Probes what the tests may do on this machine (see the included file).

include!("probe_capabilities.rs");

fn main() {
    // Included, so cargo does not see it change by itself.
    println!("cargo::rerun-if-changed=probe_capabilities.rs");
    probe_capabilities();
}
