//! The manifest records the version of each broker the fleets published to
//! (docs/running.md, "Provenance"): Mosquitto's `$SYS/broker/version`, read
//! once per run; the embedded broker as the one built into expc.

#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{expc, run_dir, text, Mosquitto, Scratch};
use exp_results::manifest::Manifest;

fn run(scratch: &Scratch, name: &str, broker: &str) -> Manifest {
    let spec = scratch.0.join(format!("{name}.exp"));
    std::fs::write(
        &spec,
        format!(
            "experiment \"{name}\" {{\n  duration = 3s\n  repeat = 2\n  fleet \"f\" {{\n    devices = 3\n    gap = 100ms\n{broker}  }}\n}}\n"
        ),
    )
    .unwrap();
    let out = scratch.0.join(name);
    let output = expc().arg("run").arg(&spec).arg("--out").arg(&out).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    Manifest::read(&run_dir(&out).unwrap()).unwrap()
}

#[test]
fn the_manifest_names_the_brokers_version() {
    let scratch = Scratch::new("broker-version");
    let mosquitto = Mosquitto::start(&scratch.0);
    let url = format!("mqtt://127.0.0.1:{}", mosquitto.port);
    let manifest = run(&scratch, "external", &format!("    broker {{ url = \"{url}\" }}\n"));
    // Read once for the run, whatever the number of trials.
    assert_eq!(manifest.brokers.len(), 1, "{:?}", manifest.brokers);
    let version = &manifest.brokers[&url];
    assert!(version.starts_with("mosquitto version "), "{version}");
    let installed = std::process::Command::new(common::MOSQUITTO)
        .arg("-h")
        .output()
        .unwrap();
    let installed = String::from_utf8_lossy(&installed.stdout);
    assert!(
        installed.contains(version.as_str()),
        "{version} is not in `mosquitto -h`: {installed}"
    );

    let embedded = run(&scratch, "embedded", "");
    assert!(
        embedded.brokers["embedded"].starts_with("exp-mqtt broker (MQTT 3.1.1), embedded in expc "),
        "{:?}",
        embedded.brokers
    );
}
