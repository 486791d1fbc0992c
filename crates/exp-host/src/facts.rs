//! What the manifest records about the machine a run ran on, read once at
//! the start of a run from /proc and /sys (a few hundred small files at
//! most): the kernel and its command line, the CPUs (`cpu_facts.rs`),
//! memory settings and what the machine runs in (`system_facts.rs`), the
//! network (`net_facts.rs`). A fact that cannot be read is `None` (shown as
//! unknown), never guessed; runs recorded before a fact existed read it as
//! `None` too.

use serde::{Deserialize, Serialize};

use crate::cpu_facts::{cpu_facts, CpuFacts};
use crate::net_facts::{network_facts, NetworkFacts};
use crate::small_files::{parse_cpu_list, read_trimmed};
use crate::system_facts::{memory_facts, virtualization, MemoryFacts, Virtualization};
use crate::{caches, meminfo, Cache};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    /// CPUs online (`/sys/devices/system/cpu/online`).
    pub cpus_online: u32,
    /// CPUs this process may run on (its affinity mask).
    pub cpus_available: u32,
    pub caches: Vec<CacheFact>,
    pub memory_total_bytes: u64,
    pub memory_available_bytes: u64,
    /// `/proc/cmdline`.
    #[serde(default)]
    pub kernel_cmdline: Option<String>,
    #[serde(default)]
    pub cpu: CpuFacts,
    #[serde(default)]
    pub memory: MemoryFacts,
    #[serde(default)]
    pub network: NetworkFacts,
    #[serde(default)]
    pub virtualization: Virtualization,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheFact {
    pub level: u8,
    pub kind: String,
    pub size_bytes: u64,
}

impl From<Cache> for CacheFact {
    fn from(c: Cache) -> Self {
        CacheFact {
            level: c.level,
            kind: c.kind,
            size_bytes: c.size_bytes,
        }
    }
}

fn trimmed(path: &str) -> String {
    read_trimmed(path).unwrap_or_default()
}

/// This machine's host name (empty if it cannot be read).
pub fn hostname() -> String {
    trimmed("/proc/sys/kernel/hostname")
}

/// Reads the facts; a fact that cannot be read is left empty or 0 rather than
/// failing the run (containers hide parts of /sys).
pub fn facts() -> HostFacts {
    let cpuinfo = trimmed("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            matches!(key.trim(), "model name" | "Model" | "cpu model").then(|| value.trim().to_string())
        })
        .unwrap_or_default();
    let memory = meminfo().unwrap_or_default();
    let online = online_cpus();
    HostFacts {
        hostname: hostname(),
        kernel: trimmed("/proc/sys/kernel/osrelease"),
        arch: std::env::consts::ARCH.to_string(),
        cpu_model,
        cpus_online: online.len() as u32,
        cpus_available: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        caches: caches(0).into_iter().map(CacheFact::from).collect(),
        memory_total_bytes: memory.total_bytes(),
        memory_available_bytes: memory.available_bytes(),
        kernel_cmdline: read_trimmed("/proc/cmdline"),
        cpu: cpu_facts(&online),
        memory: memory_facts(),
        network: network_facts(),
        virtualization: virtualization(&cpuinfo),
    }
}

/// Online CPU numbers, from a list like `0-3,6`.
pub fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let cpus = parse_cpu_list(text.trim());
    if cpus.is_empty() {
        // No sysfs: assume the CPUs we can see are numbered from 0.
        let n = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        return (0..n).collect();
    }
    cpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine() {
        let facts = facts();
        assert!(facts.cpus_online >= 1);
        assert!(facts.memory_total_bytes > 0);
        assert!(!facts.kernel.is_empty());
        assert!(facts.kernel_cmdline.is_some(), "/proc/cmdline is readable");
        // Old manifests, without the facts added since, still read.
        let mut json = serde_json::to_value(&facts).unwrap();
        for key in ["kernel_cmdline", "cpu", "memory", "network", "virtualization"] {
            json.as_object_mut().unwrap().remove(key);
        }
        let old: HostFacts = serde_json::from_value(json).unwrap();
        assert_eq!((old.kernel_cmdline, old.cpu.cores), (None, None));
    }
}
