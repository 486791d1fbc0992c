//! What the manifest records about the machine a run ran on.

use serde::{Deserialize, Serialize};

use crate::{caches, meminfo, Cache};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
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
    HostFacts {
        hostname: hostname(),
        kernel: trimmed("/proc/sys/kernel/osrelease"),
        arch: std::env::consts::ARCH.to_string(),
        cpu_model,
        cpus_online: online_cpus().len() as u32,
        cpus_available: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        caches: caches(0).into_iter().map(CacheFact::from).collect(),
        memory_total_bytes: memory.total_bytes(),
        memory_available_bytes: memory.available_bytes(),
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

fn parse_cpu_list(text: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    cpus.extend(a..=b);
                }
            }
            None => cpus.extend(part.parse::<u32>().ok()),
        }
    }
    cpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,6"), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("0"), vec![0]);
        assert_eq!(parse_cpu_list(""), Vec::<u32>::new());
    }

    #[test]
    fn this_machine() {
        let facts = facts();
        assert!(facts.cpus_online >= 1);
        assert!(facts.memory_total_bytes > 0);
        assert!(!facts.kernel.is_empty());
    }
}
