//! An anomaly's checks before a run: the limits a compiled plan meets (the
//! child's own rules for its parameters), its preflight (online CPUs, a
//! writable `dir` with room), and what it needs of the machine (memory,
//! scratch space in the run directory), each reached through `kinds.rs`.

use exp_diagnostics::{Code, Diagnostic};
use exp_plan::bounds::ANOMALY_CORES;
use exp_plan::{Anomaly, AnomalyParams};

use crate::findings::{check_disk, out_of_bounds, resolve, writable_dir, Finding, Host, COMPILED_ONLY};

/// The CPUs the language lets an anomaly name, and the rules the anomaly's
/// child applies before it runs a kernel.
pub(crate) fn limits(name: &str, anomaly: &Anomaly) -> Vec<Finding> {
    let cores = anomaly
        .cores
        .iter()
        .map(|&core| ("cores", f64::from(core), ANOMALY_CORES));
    let mut found: Vec<Finding> = out_of_bounds(Code::E1005, "anomaly", name, cores).collect();
    if let Err(problem) = exp_anomaly::validate(anomaly) {
        found.push((
            format!("params {name}"),
            Diagnostic::error(Code::E1005, format!("anomaly `{name}`: {problem}")).help(COMPILED_ONLY),
        ));
    }
    found
}

/// An anomaly's preflight: its CPUs are online, and its own `dir` (io
/// kinds) is writable with the disk space it needs.
pub(crate) fn preflight(name: &str, anomaly: &Anomaly, host: &Host) -> Vec<Finding> {
    let mut found = Vec::new();
    for core in anomaly.cores.iter().filter(|c| !host.online_cpus.contains(c)) {
        let cpus: Vec<String> = host.online_cpus.iter().map(u32::to_string).collect();
        found.push((
            format!("cpu {name} {core}"),
            Diagnostic::error(
                Code::E1003,
                format!("anomaly `{name}` is pinned to CPU {core}, which is not online"),
            )
            .note(format!("online CPUs: {}", cpus.join(", "))),
        ));
    }
    let Some(dir) = work_dir(&anomaly.params) else {
        return found;
    };
    let dir = resolve(host.spec_dir, dir);
    match writable_dir(&dir) {
        Err(problem) => found.push((
            format!("dir {name}"),
            Diagnostic::error(
                Code::E1004,
                format!("anomaly `{name}` cannot work in {}: {problem}", dir.display()),
            )
            .help("create the directory or leave `dir` out to use scratch space in the run directory"),
        )),
        Ok(()) => {
            let need = exp_anomaly::disk_need_bytes(&anomaly.params);
            found.extend(need.and_then(|need| check_disk(&dir, need, name)));
        }
    }
    found
}

/// Scratch space an anomaly without a `dir` of its own needs in the run
/// directory.
pub(crate) fn scratch_need(anomaly: &Anomaly) -> u64 {
    match work_dir(&anomaly.params) {
        None => exp_anomaly::disk_need_bytes(&anomaly.params).unwrap_or(0),
        Some(_) => 0,
    }
}

/// The memory an anomaly may take, if its kind declares one.
pub(crate) fn memory_need(anomaly: &Anomaly) -> Option<u64> {
    exp_anomaly::memory_need_bytes(&anomaly.params)
}

/// The directory an io anomaly works in, when the spec gives one.
fn work_dir(params: &AnomalyParams) -> Option<&str> {
    match params {
        AnomalyParams::Iometadata { dir, .. } | AnomalyParams::Iobandwidth { dir, .. } => dir.as_deref(),
        _ => None,
    }
}
