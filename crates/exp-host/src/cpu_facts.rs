//! What the manifest records about the CPUs beyond their model: cores and
//! SMT, the frequency driver, governor and boost. Each fact is `None` where
//! the machine does not show it (a VM without cpufreq, a container hiding
//! /sys): unknown, never guessed.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::small_files::{read_trimmed, CPU_DIR};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFacts {
    /// Physical cores among the online CPUs (distinct package and core).
    pub cores: Option<u32>,
    /// Online CPUs per physical core (2 with SMT on).
    pub threads_per_core: Option<u32>,
    /// `/sys/devices/system/cpu/smt/control`: `on`, `off`, `forceoff`,
    /// `notsupported`, `notimplemented`.
    pub smt: Option<String>,
    /// The cpufreq driver (`intel_pstate`, `acpi-cpufreq`, …).
    pub frequency_driver: Option<String>,
    /// The online CPUs' governors, distinct, comma-separated.
    pub governor: Option<String>,
    /// Whether frequency boost (turbo) is allowed.
    pub boost: Option<bool>,
}

/// Reads the facts for the `online` CPUs.
pub(crate) fn cpu_facts(online: &[u32]) -> CpuFacts {
    let cpu = |n: u32, file: &str| read_trimmed(&format!("{CPU_DIR}/cpu{n}/{file}"));
    let cores: Option<BTreeSet<(String, String)>> = online
        .iter()
        .map(|&n| Some((cpu(n, "topology/physical_package_id")?, cpu(n, "topology/core_id")?)))
        .collect();
    let cores = cores.map(|c| c.len() as u32).filter(|&c| c > 0);
    let governors: Option<BTreeSet<String>> = online.iter().map(|&n| cpu(n, "cpufreq/scaling_governor")).collect();
    let governor = governors
        .filter(|g| !g.is_empty())
        .map(|g| g.into_iter().collect::<Vec<_>>().join(", "));
    CpuFacts {
        cores,
        threads_per_core: cores.map(|c| (online.len() as u32).div_ceil(c)),
        smt: read_trimmed(&format!("{CPU_DIR}/smt/control")),
        frequency_driver: online.first().and_then(|&n| cpu(n, "cpufreq/scaling_driver")),
        governor,
        boost: boost(),
    }
}

/// `cpufreq/boost` (acpi-cpufreq, amd-pstate), else intel_pstate's
/// `no_turbo`, inverted.
fn boost() -> Option<bool> {
    let flag = |path: &str| read_trimmed(path).and_then(|v| v.parse::<u8>().ok());
    if let Some(boost) = flag(&format!("{CPU_DIR}/cpufreq/boost")) {
        return Some(boost != 0);
    }
    flag(&format!("{CPU_DIR}/intel_pstate/no_turbo")).map(|no_turbo| no_turbo == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_has_cores_or_says_it_cannot_tell() {
        let online = crate::online_cpus();
        let facts = cpu_facts(&online);
        if let Some(cores) = facts.cores {
            assert!(cores >= 1 && cores as usize <= online.len(), "{facts:?}");
            assert!(facts.threads_per_core.unwrap() >= 1);
        } else {
            println!("skipped: this machine shows no CPU topology in /sys");
        }
    }
}
