//! /proc/vmstat: the kernel's memory-management counters and gauges.

use std::collections::BTreeMap;

use crate::{parse_error, parse_u64, read, HostError};

const PATH: &str = "/proc/vmstat";

/// Every /proc/vmstat line, by name. Most are event counters since boot
/// (`pgfault`); the `nr_*` ones are gauges in pages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmStat {
    pub counters: BTreeMap<String, u64>,
}

impl VmStat {
    pub fn parse(text: &str) -> Result<Self, HostError> {
        let mut counters = BTreeMap::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let mut words = line.split_whitespace();
            let name = words
                .next()
                .ok_or_else(|| parse_error(PATH, format!("line `{line}`")))?;
            counters.insert(name.to_string(), parse_u64(PATH, name, words.next())?);
        }
        Ok(VmStat { counters })
    }

    pub fn get(&self, name: &str) -> Option<u64> {
        self.counters.get(name).copied()
    }

    /// The sum of the counters whose names start with `prefix`, leaving out
    /// those in `except`. Kernels split some counters by zone or by cause
    /// under different names over the years (`pgscan_kswapd_normal` before
    /// 4.8, `pgscan_kswapd` after), so a prefix sum reads them all alike.
    pub fn sum_prefixed(&self, prefix: &str, except: &[&str]) -> u64 {
        self.counters
            .range::<str, _>((std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded))
            .take_while(|(name, _)| name.starts_with(prefix))
            .filter(|(name, _)| !except.contains(&name.as_str()))
            .fold(0u64, |sum, (_, &v)| sum.saturating_add(v))
    }
}

pub fn vmstat() -> Result<VmStat, HostError> {
    VmStat::parse(&read(PATH)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines from a 6.18 kernel.
    const FIXTURE: &str = "\
nr_free_pages 1336611
pgpgin 4041269
pgpgout 7214676
pswpin 0
pswpout 0
pgfault 32768123
pgmajfault 4125
pgsteal_kswapd 10
pgsteal_direct 5
pgsteal_khugepaged 0
pgsteal_anon 3
pgsteal_file 12
pgscan_kswapd 40
pgscan_direct 7
pgscan_direct_throttle 0
pgscan_anon 9
pgscan_file 38
oom_kill 0
";

    #[test]
    fn parses_and_sums() {
        let vm = VmStat::parse(FIXTURE).unwrap();
        assert_eq!(vm.get("pgfault"), Some(32768123));
        assert_eq!(vm.get("nope"), None);
        // pgsteal_anon + pgsteal_file re-split the same pages by type.
        assert_eq!(vm.sum_prefixed("pgsteal_", &["pgsteal_anon", "pgsteal_file"]), 15);
        assert_eq!(vm.sum_prefixed("pgscan_direct", &["pgscan_direct_throttle"]), 7);
        assert_eq!(vm.sum_prefixed("pgscan_kswapd", &[]), 40);
        assert_eq!(vm.sum_prefixed("zzz", &[]), 0);
    }

    #[test]
    fn old_per_zone_names_sum_too() {
        let vm = VmStat::parse("pgscan_kswapd_dma 1\npgscan_kswapd_normal 2\npgscan_kswapd_movable 3\n").unwrap();
        assert_eq!(vm.sum_prefixed("pgscan_kswapd", &[]), 6);
    }

    #[test]
    fn damage_is_an_error() {
        assert!(VmStat::parse("pgfault\n").is_err());
        assert!(VmStat::parse("pgfault -1\n").is_err());
    }

    #[test]
    fn reads_this_machine() {
        assert!(vmstat().unwrap().get("pgfault").unwrap() > 0);
    }
}
