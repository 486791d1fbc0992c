//! The papers' results as reproductions (specs/reproductions/): each spec
//! runs at its CI scale and every claim it states is `supported`, read back
//! from the run's manifest; every spec of the directory is listed here, so
//! none can be added without being run.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};

mod common;

use common::{expc, run_dir};
use exp_results::claims::ClaimVerdict;
use exp_results::manifest::Manifest;

/// Each reproduction with the options CI runs it with (its README lists the
/// full-scale runs).
const REPRODUCTIONS: &[(&str, &[&str])] = &[
    ("connection-structures.exp", &["--time-scale", "0.5"]),
    ("hpas-anomalies.exp", &["--time-scale", "0.25"]),
    ("bandwidth-variability.exp", &["--time-scale", "0.1"]),
    ("synthetic-data-generation.exp", &["--time-scale", "0.25"]),
];

/// The CI options of `spec` in [`REPRODUCTIONS`].
fn options(spec: &str) -> &'static [&'static str] {
    REPRODUCTIONS.iter().find(|(s, _)| *s == spec).unwrap().1
}

fn dir() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../specs/reproductions")
}

#[test]
fn every_reproduction_is_run_here() {
    let mut specs: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".exp"))
        .collect();
    specs.sort();
    let mut listed: Vec<String> = REPRODUCTIONS.iter().map(|(s, _)| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        specs, listed,
        "specs/reproductions and the reproductions this test runs"
    );
    let readme = std::fs::read_to_string(dir().join("README.md")).unwrap();
    for spec in &specs {
        assert!(
            readme.contains(spec.as_str()),
            "specs/reproductions/README.md does not describe {spec}"
        );
    }
}

/// Runs `spec` and returns its manifest after checking the run ended well.
fn run(spec: &str, options: &[&str]) -> Manifest {
    // Side by side, the reproductions' loads (anomalies, bulk transfers, a
    // fleet) would be each other's contention.
    let _turn = common::one_at_a_time();
    let out = std::env::temp_dir().join(format!("expc-repro-{}-{}", spec, std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = expc()
        .arg("run")
        .arg(dir().join(spec))
        .arg("--out")
        .arg(&out)
        .args(options)
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let manifest = Manifest::read(&run_dir(&out).unwrap_or_else(|| panic!("{spec}: no run directory\n{text}")));
    let _ = std::fs::remove_dir_all(&out);
    let manifest = manifest.unwrap();
    assert!(!manifest.claims.is_empty(), "{spec} states no claim");
    for claim in &manifest.claims {
        assert_eq!(
            claim.verdict,
            ClaimVerdict::Supported,
            "{spec}: `{}` is {} at CI scale\n{text}",
            claim.text,
            claim.verdict.as_str()
        );
    }
    assert!(output.status.success(), "{spec}: expc run failed\n{text}");
    manifest
}

#[test]
#[cfg_attr(not(rtt_emulation), ignore = "needs root and network namespaces for RTT emulation")]
fn connection_structures_reproduces_figure_6a() {
    let spec = "connection-structures.exp";
    let manifest = run(spec, options(spec));
    assert_eq!(
        manifest.claims.len(),
        3,
        "the RTT-model effect, blk-conc within 500 ms, blk-conc before atbt"
    );
}

#[test]
fn hpas_anomalies_reproduce_section_4_1() {
    let spec = "hpas-anomalies.exp";
    let manifest = run(spec, options(spec));
    assert_eq!(
        manifest.claims.len(),
        11,
        "Figure 2's ordering, Figure 3's cache level, Figure 4's memory speed, Figure 5's growth and \
         plateau, Figure 6's tunable bandwidth, Figure 7's operations and bytes"
    );
}

#[test]
fn bandwidth_variability_reproduces_the_method() {
    let spec = "bandwidth-variability.exp";
    let manifest = run(spec, options(spec));
    assert_eq!(
        manifest.claims.len(),
        5,
        "one transfer per period, no failure, no overlap, bulk throughput, the windows' spread"
    );
}

#[test]
fn synthetic_data_generation_reproduces_broker_and_xml_claims() {
    let spec = "synthetic-data-generation.exp";
    let manifest = run(spec, options(spec));
    assert_eq!(
        manifest.claims.len(),
        6,
        "pace, no loss, p99 under 200 ms; skeleton, KS and TV against the corpus"
    );
}
