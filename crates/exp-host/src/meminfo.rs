//! /proc/meminfo.

use std::collections::BTreeMap;

use crate::{read, HostError};

/// Every /proc/meminfo field, in bytes (`HugePages_*` counts stay counts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemInfo {
    pub fields: BTreeMap<String, u64>,
}

impl MemInfo {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.fields.get(name).copied()
    }

    pub fn total_bytes(&self) -> u64 {
        self.get("MemTotal").unwrap_or(0)
    }

    pub fn available_bytes(&self) -> u64 {
        self.get("MemAvailable").unwrap_or(0)
    }
}

pub fn meminfo() -> Result<MemInfo, HostError> {
    parse(&read("/proc/meminfo")?)
}

fn parse(text: &str) -> Result<MemInfo, HostError> {
    let mut fields = BTreeMap::new();
    for line in text.lines() {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let value: u64 = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| HostError::Parse {
                path: "/proc/meminfo".into(),
                what: format!("line `{line}`"),
            })?;
        let scale = if words.next() == Some("kB") { 1024 } else { 1 };
        fields.insert(name.trim().to_string(), value.saturating_mul(scale));
    }
    Ok(MemInfo { fields })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kilobytes_and_counts() {
        let info = parse("MemTotal:       24000000 kB\nMemAvailable:   1000 kB\nHugePages_Total:       3\n").unwrap();
        assert_eq!(info.total_bytes(), 24_000_000 * 1024);
        assert_eq!(info.available_bytes(), 1_024_000);
        assert_eq!(info.get("HugePages_Total"), Some(3));
    }

    #[test]
    fn reads_this_machine() {
        assert!(meminfo().unwrap().total_bytes() > 0);
    }
}
