//! CPU caches from /sys/devices/system/cpu/cpu*/cache/index*.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cache {
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    pub size_bytes: u64,
}

/// The caches seen by `cpu`, in sysfs order.
pub fn caches(cpu: u32) -> Vec<Cache> {
    let mut found = Vec::new();
    for index in 0.. {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache/index{index}");
        let field = |name: &str| std::fs::read_to_string(format!("{dir}/{name}")).ok();
        let Some(level) = field("level") else { break };
        let (Some(kind), Some(size)) = (field("type"), field("size")) else {
            continue;
        };
        let (Ok(level), Some(size_bytes)) = (level.trim().parse(), parse_size(size.trim())) else {
            continue;
        };
        found.push(Cache {
            level,
            kind: kind.trim().to_string(),
            size_bytes,
        });
    }
    found
}

/// The size of the data (or unified) cache at `level` seen by `cpu`.
pub fn cache_size_bytes(level: u8, cpu: u32) -> Option<u64> {
    caches(cpu)
        .into_iter()
        .find(|c| c.level == level && c.kind != "Instruction")
        .map(|c| c.size_bytes)
}

/// sysfs sizes look like `48K`, `2048K`, `32M`.
fn parse_size(text: &str) -> Option<u64> {
    let (digits, scale) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 1024),
        b'M' => (&text[..text.len() - 1], 1024 * 1024),
        b'G' => (&text[..text.len() - 1], 1024 * 1024 * 1024),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok().map(|n| n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes() {
        assert_eq!(parse_size("48K"), Some(48 * 1024));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn this_machine_has_a_level_one_data_cache() {
        let size = cache_size_bytes(1, 0).expect("cpu0 has an L1 data cache");
        assert!(size >= 4096, "{size}");
    }
}
