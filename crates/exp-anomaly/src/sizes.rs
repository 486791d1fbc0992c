//! Sizes and rates derived from an anomaly's parameters: what preflight
//! checks need to know before anything runs, and what calibration compares
//! against.

use exp_plan::AnomalyParams;

use crate::config::cache_level;

/// Each of cachecopy's two arrays: half the cache × multiplier, at least one cache line.
pub(crate) fn cachecopy_array_bytes(cache_bytes: u64, multiplier: f64) -> u64 {
    let bytes = cache_bytes as f64 * multiplier / 2.0;
    // `as` saturates for huge values; validation keeps the multiplier finite.
    (bytes as u64).max(64)
}

/// Memory an instance will hold at most, for preflight checks against the
/// available memory (`None`: nothing worth checking). For cachecopy this is
/// per listed core (each core's thread has its own two arrays, sized from
/// cpu 0's cache), and `None` if the cache size cannot be read.
pub fn memory_need_bytes(params: &AnomalyParams) -> Option<u64> {
    match params {
        AnomalyParams::Memeater { limit_bytes, .. } | AnomalyParams::Memleak { limit_bytes, .. } => Some(*limit_bytes),
        AnomalyParams::Membw { buffer_bytes, .. } => Some(*buffer_bytes),
        AnomalyParams::Cachecopy { cache, multiplier, .. } => {
            let level = cache_level(cache).ok()?;
            let cache_bytes = exp_host::cache_size_bytes(level, 0)?;
            Some(cachecopy_array_bytes(cache_bytes, *multiplier).saturating_mul(2))
        }
        _ => None,
    }
}

/// Disk space an instance will use at most: iobandwidth's two files per
/// worker. (iometadata's files are one byte each, ten per worker at a time.)
pub fn disk_need_bytes(params: &AnomalyParams) -> Option<u64> {
    match params {
        AnomalyParams::Iobandwidth {
            ntasks,
            file_size_bytes,
            ..
        } => Some(file_size_bytes.saturating_mul(2).saturating_mul(u64::from(*ntasks))),
        _ => None,
    }
}

/// The configured growth of the resident set, in bytes per second, of the
/// memory anomalies until they reach their limit: memleak's size × rate,
/// memeater's buffer / interval. `None` for the others.
pub fn configured_growth_bytes_per_s(params: &AnomalyParams) -> Option<f64> {
    match params {
        AnomalyParams::Memleak {
            size_bytes, rate_per_s, ..
        } => Some(*size_bytes as f64 * rate_per_s),
        AnomalyParams::Memeater {
            buffer_bytes,
            interval_ns,
            ..
        } if *interval_ns > 0 => Some(*buffer_bytes as f64 * 1e9 / *interval_ns as f64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_for_preflight() {
        let leak = AnomalyParams::Memleak {
            size_bytes: 20,
            rate_per_s: 5.0,
            limit_bytes: 1 << 30,
        };
        assert_eq!(memory_need_bytes(&leak), Some(1 << 30));
        let io = AnomalyParams::Iobandwidth {
            ntasks: 3,
            file_size_bytes: 100,
            bandwidth_bit_per_s: None,
            dir: None,
        };
        assert_eq!(disk_need_bytes(&io), Some(600));
        assert_eq!(memory_need_bytes(&io), None);
        assert_eq!(cachecopy_array_bytes(48 * 1024, 1.0), 24 * 1024);
        assert_eq!(cachecopy_array_bytes(48 * 1024, 0.0001), 64);
    }

    #[test]
    fn growth_rates() {
        let leak = AnomalyParams::Memleak {
            size_bytes: 20_000_000,
            rate_per_s: 5.0,
            limit_bytes: 1 << 30,
        };
        assert_eq!(configured_growth_bytes_per_s(&leak), Some(100e6));
        let eater = AnomalyParams::Memeater {
            buffer_bytes: 35_000_000,
            interval_ns: 200_000_000,
            limit_bytes: 1,
        };
        assert_eq!(configured_growth_bytes_per_s(&eater), Some(175e6));
    }
}
