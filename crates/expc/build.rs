//! Probes what the tests may do on this machine (see the included file).

include!("../exp-traffic/probe_capabilities.rs");

fn main() {
    probe_capabilities();
}
