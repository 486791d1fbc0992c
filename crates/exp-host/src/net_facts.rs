//! What the manifest records about networking: the TCP (and core network)
//! sysctls of the runner's namespace, and each interface that is up with
//! its offloads, which change what a replay or a broker measures.
//!
//! Choice: "the interfaces a run uses" are those up in the runner's
//! namespace when it starts (loopback carries the embedded broker and
//! in-process replays; a remote peer goes out on one of the others); the
//! namespaces an RTT stage makes are its own and set up the same each time.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::small_files::read_trimmed;
use crate::sys::{ethtool_value, EthtoolGet};

/// Sysctls that shape TCP: `/proc/sys/net/<name with / for .>`.
const SYSCTLS: [&str; 18] = [
    "ipv4.tcp_congestion_control",
    "ipv4.tcp_rmem",
    "ipv4.tcp_wmem",
    "ipv4.tcp_mem",
    "ipv4.tcp_sack",
    "ipv4.tcp_timestamps",
    "ipv4.tcp_window_scaling",
    "ipv4.tcp_ecn",
    "ipv4.tcp_slow_start_after_idle",
    "ipv4.tcp_no_metrics_save",
    "ipv4.tcp_tw_reuse",
    "ipv4.tcp_max_syn_backlog",
    "ipv4.ip_local_port_range",
    "core.somaxconn",
    "core.rmem_max",
    "core.wmem_max",
    "core.netdev_max_backlog",
    "core.default_qdisc",
];

/// Most interfaces recorded (a host with hundreds of veths keeps a short record).
const MAX_INTERFACES: usize = 32;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkFacts {
    /// `net.ipv4.tcp_rmem` → its value, tabs as spaces; `null` if unreadable.
    pub sysctls: BTreeMap<String, Option<String>>,
    /// Interfaces up when the run started, by name.
    pub interfaces: Vec<InterfaceFacts>,
    /// Interfaces up beyond [`MAX_INTERFACES`], not recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interfaces_not_recorded: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceFacts {
    pub name: String,
    pub mtu: Option<u32>,
    /// The driver, from the device's sysfs link (`virtio_net`); `None` for
    /// a virtual interface without a device (loopback, veth).
    pub driver: Option<String>,
    /// Offload → on or off (`tso`, `gso`, `gro`, `lro`, `sg`,
    /// `rx_checksum`, `tx_checksum`), `null` where the driver does not say.
    pub offloads: BTreeMap<String, Option<bool>>,
}

pub(crate) fn network_facts() -> NetworkFacts {
    let sysctls = SYSCTLS
        .iter()
        .map(|name| {
            let path = format!("/proc/sys/net/{}", name.replace('.', "/"));
            let value = read_trimmed(&path).map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "));
            (format!("net.{name}"), value)
        })
        .collect();
    let mut names: Vec<String> = std::fs::read_dir("/sys/class/net")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| is_up(name))
        .collect();
    names.sort();
    let not_recorded = names.len().saturating_sub(MAX_INTERFACES) as u32;
    names.truncate(MAX_INTERFACES);
    NetworkFacts {
        sysctls,
        interfaces: names.into_iter().map(interface).collect(),
        interfaces_not_recorded: not_recorded,
    }
}

/// `IFF_UP` in the interface's flags.
fn is_up(name: &str) -> bool {
    read_trimmed(&format!("/sys/class/net/{name}/flags"))
        .and_then(|f| u32::from_str_radix(f.trim_start_matches("0x"), 16).ok())
        .is_some_and(|flags| flags & 1 != 0)
}

fn interface(name: String) -> InterfaceFacts {
    let dir = format!("/sys/class/net/{name}");
    let driver = std::fs::read_link(format!("{dir}/device/driver"))
        .ok()
        .and_then(|link| Some(link.file_name()?.to_string_lossy().into_owned()));
    let flag = |get: EthtoolGet| ethtool_value(&name, get).map(|v| v != 0);
    let offloads = [
        ("tso", EthtoolGet::Tso),
        ("gso", EthtoolGet::Gso),
        ("gro", EthtoolGet::Gro),
        ("sg", EthtoolGet::ScatterGather),
        ("rx_checksum", EthtoolGet::RxChecksum),
        ("tx_checksum", EthtoolGet::TxChecksum),
    ]
    .into_iter()
    .map(|(key, get)| (key.to_string(), flag(get)))
    .chain([(
        "lro".to_string(),
        // Large receive offload is a bit of the flags word.
        ethtool_value(&name, EthtoolGet::Flags).map(|f| f & ETH_FLAG_LRO != 0),
    )])
    .collect();
    InterfaceFacts {
        mtu: read_trimmed(&format!("{dir}/mtu")).and_then(|m| m.parse().ok()),
        name,
        driver,
        offloads,
    }
}

/// `ETH_FLAG_LRO` of `ETHTOOL_GFLAGS` (linux/ethtool.h).
const ETH_FLAG_LRO: u32 = 1 << 15;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_up_and_says_its_offloads() {
        let facts = network_facts();
        let Some(lo) = facts.interfaces.iter().find(|i| i.name == "lo") else {
            println!("skipped: no loopback interface in /sys/class/net");
            return;
        };
        assert_eq!(lo.driver, None);
        assert!(lo.mtu.is_some_and(|m| m > 0), "{lo:?}");
        // Loopback answers every legacy ethtool query.
        assert!(lo.offloads.values().all(Option::is_some), "{lo:?}");
        assert!(facts.sysctls.contains_key("net.ipv4.tcp_congestion_control"));
    }
}
