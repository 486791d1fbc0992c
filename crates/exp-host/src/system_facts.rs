//! What the manifest records about the kernel's memory settings and about
//! what the machine runs in: transparent huge pages, NUMA nodes, a virtual
//! machine or a container. `None` where it cannot be read.

use serde::{Deserialize, Serialize};

use crate::small_files::read_trimmed;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryFacts {
    /// NUMA nodes online (`/sys/devices/system/node/online`).
    pub numa_nodes: Option<u32>,
    /// Transparent huge pages: the selected mode (`always`, `madvise`, `never`).
    pub transparent_hugepages: Option<String>,
    /// Their defragmentation mode (`madvise`, `defer`, …).
    pub transparent_hugepages_defrag: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Virtualization {
    /// `none`, the hypervisor's vendor from DMI (`KVM`, `VMware`, …), or
    /// `unnamed hypervisor` when the CPU says it runs under one that DMI
    /// does not name.
    pub machine: Option<String>,
    /// `none found`, or what marks one: `docker`, `podman`, the `container`
    /// variable of process 1 (`lxc`, `systemd-nspawn`), a cgroup path
    /// (`kubepods`).
    pub container: Option<String>,
}

pub(crate) fn memory_facts() -> MemoryFacts {
    let thp =
        |file: &str| read_trimmed(&format!("/sys/kernel/mm/transparent_hugepage/{file}")).and_then(|s| selected(&s));
    MemoryFacts {
        numa_nodes: read_trimmed("/sys/devices/system/node/online")
            .map(|list| crate::small_files::parse_cpu_list(&list).len() as u32)
            .filter(|&n| n > 0),
        transparent_hugepages: thp("enabled"),
        transparent_hugepages_defrag: thp("defrag"),
    }
}

/// The bracketed choice of a sysfs mode file: `always [madvise] never`.
fn selected(modes: &str) -> Option<String> {
    let start = modes.find('[')? + 1;
    let end = start + modes[start..].find(']')?;
    Some(modes[start..end].to_string())
}

pub(crate) fn virtualization(cpuinfo: &str) -> Virtualization {
    Virtualization {
        machine: machine(cpuinfo),
        container: container(),
    }
}

fn machine(cpuinfo: &str) -> Option<String> {
    let dmi = read_trimmed("/sys/class/dmi/id/sys_vendor");
    let product = read_trimmed("/sys/class/dmi/id/product_name").unwrap_or_default();
    let known = [
        "KVM",
        "QEMU",
        "VMware",
        "VirtualBox",
        "innotek",
        "Xen",
        "Microsoft",
        "Amazon EC2",
        "Google",
        "Bochs",
        "Parallels",
    ];
    if let Some(vendor) = dmi.as_deref() {
        if let Some(name) = known.iter().find(|k| vendor.contains(*k) || product.contains(*k)) {
            return Some((*name).to_string());
        }
    }
    if let Some(kind) = read_trimmed("/sys/hypervisor/type") {
        return Some(kind);
    }
    let flags = cpuinfo.lines().find(|l| l.starts_with("flags"))?;
    Some(if flags.split_whitespace().any(|f| f == "hypervisor") {
        "unnamed hypervisor".into()
    } else {
        "none".into()
    })
}

fn container() -> Option<String> {
    if std::path::Path::new("/.dockerenv").exists() {
        return Some("docker".into());
    }
    if std::path::Path::new("/run/.containerenv").exists() {
        return Some("podman".into());
    }
    // Readable by root only; systemd-nspawn, LXC and others set it.
    if let Ok(environ) = std::fs::read("/proc/1/environ") {
        let variable = environ.split(|&b| b == 0).find_map(|v| v.strip_prefix(b"container="));
        if let Some(kind) = variable {
            return Some(String::from_utf8_lossy(kind).into_owned());
        }
    }
    let cgroup = read_trimmed("/proc/1/cgroup")?;
    let marked = ["kubepods", "docker", "lxc", "containerd", "libpod"]
        .into_iter()
        .find(|m| cgroup.contains(m));
    Some(marked.unwrap_or("none found").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_the_bracketed_word() {
        assert_eq!(selected("always [madvise] never").as_deref(), Some("madvise"));
        assert_eq!(selected("[always] defer"), Some("always".into()));
        assert_eq!(selected("always madvise"), None);
    }

    #[test]
    fn this_machine_says_what_it_runs_in() {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let v = virtualization(&cpuinfo);
        assert!(v.container.is_some(), "/proc/1/cgroup is readable: {v:?}");
        assert!(memory_facts().numa_nodes.is_none_or(|n| n >= 1));
    }
}
