//! What a child is told to run, the checks on it, and the sizes and rates
//! derived from an anomaly's parameters.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use exp_plan::bounds::{
    ANOMALY_MIN_BYTES, ANOMALY_TASKS, CACHECOPY_MULTIPLIER, IOMETADATA_MIN_RATE_PER_S, MEMEATER_MIN_INTERVAL_NS,
    MEMLEAK_RATE_PER_S,
};
use exp_plan::{Anomaly, AnomalyParams};
use serde::{Deserialize, Serialize};

use crate::AnomalyError;

/// How to start a child: `program` with `args`, e.g. the current executable
/// and `["__anomaly-kernel"]`. The program must call [`crate::child_main`].
/// The configuration goes to the child's stdin as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

/// One anomaly instance, as the child receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceConfig {
    /// A name for messages (e.g. the workload label).
    pub instance: String,
    pub anomaly: Anomaly,
    /// Seeds the kernels' pseudo-random values.
    pub seed: u64,
    /// A directory that belongs to this instance: it is created if missing,
    /// I/O kernels without a `dir` work in it, and everything in it is
    /// deleted when the instance ends.
    pub scratch_dir: PathBuf,
    /// The child stops by itself this long after it started.
    pub run_for: Duration,
}

/// Most worker threads an I/O or network anomaly may ask for (the language's bound).
pub(crate) const MAX_TASKS: u32 = ANOMALY_TASKS.1 as u32;

/// Period of cpuoccupy's control loop.
pub(crate) const CPU_PERIOD_NS: u64 = 10_000_000;

/// Period of the duty cycle of cachecopy and membw.
pub(crate) const DUTY_PERIOD_NS: u64 = 10_000_000;

/// Checks everything that can be checked without running: the child then
/// fails only on what the machine refuses (a missing core, memory, disk).
pub fn validate(anomaly: &Anomaly) -> Result<(), AnomalyError> {
    match &anomaly.params {
        AnomalyParams::Cpuoccupy { utilization_ratio } => {
            per_core(&anomaly.cores)?;
            ratio("utilization", *utilization_ratio)
        }
        AnomalyParams::Cachecopy {
            cache,
            multiplier,
            rate_ratio,
        } => {
            per_core(&anomaly.cores)?;
            cache_level(cache)?;
            within("multiplier", *multiplier, CACHECOPY_MULTIPLIER)?;
            ratio("rate", *rate_ratio)
        }
        AnomalyParams::Membw {
            buffer_bytes,
            rate_ratio,
        } => {
            per_core(&anomaly.cores)?;
            let share = buffer_bytes / anomaly.cores.len() as u64;
            if share < 4096 {
                return invalid(format!(
                    "buffer of {buffer_bytes} bytes is too small: at least 4096 bytes per core"
                ));
            }
            ratio("rate", *rate_ratio)
        }
        AnomalyParams::Memeater {
            buffer_bytes,
            interval_ns,
            limit_bytes,
        } => {
            at_least_bytes("buffer", *buffer_bytes)?;
            within("interval", *interval_ns as f64, (MEMEATER_MIN_INTERVAL_NS, f64::MAX))?;
            at_least_bytes("limit", *limit_bytes)
        }
        AnomalyParams::Memleak {
            size_bytes,
            rate_per_s,
            limit_bytes,
        } => {
            at_least_bytes("size", *size_bytes)?;
            within("rate", *rate_per_s, MEMLEAK_RATE_PER_S)?;
            at_least_bytes("limit", *limit_bytes)
        }
        AnomalyParams::Netoccupy {
            ntasks,
            message_bytes,
            bandwidth_bit_per_s,
            peer,
        } => {
            tasks(*ntasks)?;
            positive("message", *message_bytes)?;
            if let Some(bandwidth) = bandwidth_bit_per_s {
                positive("bandwidth", *bandwidth)?;
            }
            match peer {
                Some(peer) => parse_peer(peer).map(|_| ()),
                None => Ok(()),
            }
        }
        AnomalyParams::Iometadata {
            ntasks,
            rate_per_s,
            dir,
        } => {
            tasks(*ntasks)?;
            if let Some(rate) = rate_per_s {
                within("rate", *rate, (IOMETADATA_MIN_RATE_PER_S, f64::MAX))?;
            }
            check_dir(dir.as_deref())
        }
        AnomalyParams::Iobandwidth {
            ntasks,
            file_size_bytes,
            bandwidth_bit_per_s,
            dir,
        } => {
            tasks(*ntasks)?;
            at_least_bytes("file_size", *file_size_bytes)?;
            if let Some(bandwidth) = bandwidth_bit_per_s {
                positive("bandwidth", *bandwidth)?;
            }
            check_dir(dir.as_deref())
        }
    }
}

fn per_core(cores: &[u32]) -> Result<(), AnomalyError> {
    if cores.is_empty() {
        invalid("this anomaly runs one thread per listed core, and `cores` is empty".into())
    } else {
        Ok(())
    }
}

fn invalid(what: String) -> Result<(), AnomalyError> {
    Err(AnomalyError::Config(what))
}

fn ratio(name: &str, value: f64) -> Result<(), AnomalyError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        invalid(format!("{name} must be between 0 and 1, not {value}"))
    }
}

fn positive(name: &str, value: u64) -> Result<(), AnomalyError> {
    if value > 0 {
        Ok(())
    } else {
        invalid(format!("{name} must be positive"))
    }
}

/// `value` within the language's inclusive bounds (NaN is not).
fn within(name: &str, value: f64, (min, max): (f64, f64)) -> Result<(), AnomalyError> {
    if value >= min && value <= max && value.is_finite() {
        Ok(())
    } else if max == f64::MAX {
        invalid(format!("{name} must be at least {min}, not {value}"))
    } else {
        invalid(format!("{name} must be between {min} and {max}, not {value}"))
    }
}

fn at_least_bytes(name: &str, bytes: u64) -> Result<(), AnomalyError> {
    if bytes as f64 >= ANOMALY_MIN_BYTES {
        Ok(())
    } else {
        invalid(format!(
            "{name} must be at least {ANOMALY_MIN_BYTES} bytes, not {bytes}"
        ))
    }
}

fn tasks(ntasks: u32) -> Result<(), AnomalyError> {
    if (1..=MAX_TASKS).contains(&ntasks) {
        Ok(())
    } else {
        invalid(format!("ntasks must be between 1 and {MAX_TASKS}, not {ntasks}"))
    }
}

fn check_dir(dir: Option<&str>) -> Result<(), AnomalyError> {
    match dir {
        Some(dir) if dir.is_empty() || dir.contains('\0') => Err(AnomalyError::Config(format!(
            "dir {dir:?} is not a usable directory name"
        ))),
        _ => Ok(()),
    }
}

/// `"L1"`, `"L2"`, `"L3"` → the cache level.
pub(crate) fn cache_level(cache: &str) -> Result<u8, AnomalyError> {
    match cache {
        "L1" | "l1" => Ok(1),
        "L2" | "l2" => Ok(2),
        "L3" | "l3" => Ok(3),
        _ => Err(AnomalyError::Config(format!(
            "cache must be L1, L2 or L3, not {cache:?}"
        ))),
    }
}

/// `host:port` with a numeric port. The host is resolved in the child.
pub(crate) fn parse_peer(peer: &str) -> Result<(&str, u16), AnomalyError> {
    let bad = || AnomalyError::Config(format!("peer must be `host:port`, not {peer:?}"));
    let (host, port) = peer.rsplit_once(':').ok_or_else(bad)?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = port.parse::<u16>().map_err(|_| bad())?;
    if host.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok((host, port))
}

/// Where a child's I/O kernels put their files: a directory of its own inside
/// `dir` (or the scratch directory), so that cleaning up can never touch
/// anything else that lives in a user-given `dir`.
pub(crate) fn work_dir(anomaly: &Anomaly, scratch_dir: &Path, child_pid: u32) -> Option<PathBuf> {
    let base = match &anomaly.params {
        AnomalyParams::Iometadata { dir, .. } | AnomalyParams::Iobandwidth { dir, .. } => {
            dir.as_deref().map_or_else(|| scratch_dir.to_path_buf(), PathBuf::from)
        }
        _ => return None,
    };
    Some(base.join(format!("expc-anomaly-{child_pid}")))
}

/// A different, well-mixed seed for each worker thread of an instance
/// (SplitMix64 of the instance seed and the worker's index).
pub(crate) fn worker_seed(seed: u64, worker: u64) -> u64 {
    let mut z = seed ^ worker.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anomaly(params: AnomalyParams) -> Anomaly {
        Anomaly { cores: vec![0], params }
    }

    #[test]
    fn config_round_trips_through_json() {
        let config = InstanceConfig {
            instance: "cpu".into(),
            anomaly: anomaly(AnomalyParams::Cpuoccupy { utilization_ratio: 0.5 }),
            seed: 7,
            scratch_dir: "/tmp/x".into(),
            run_for: Duration::from_millis(1500),
        };
        let json = serde_json::to_string(&config).unwrap();
        let back: InstanceConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, config);
        assert!(json.contains(r#""cpuoccupy":{"utilization_ratio":0.5}"#), "{json}");
    }

    #[test]
    fn rejects_what_cannot_run() {
        let bad = [
            anomaly(AnomalyParams::Cpuoccupy { utilization_ratio: 1.5 }),
            anomaly(AnomalyParams::Cpuoccupy {
                utilization_ratio: f64::NAN,
            }),
            Anomaly {
                cores: vec![],
                params: AnomalyParams::Cpuoccupy { utilization_ratio: 0.5 },
            },
            anomaly(AnomalyParams::Cachecopy {
                cache: "L4".into(),
                multiplier: 1.0,
                rate_ratio: 1.0,
            }),
            anomaly(AnomalyParams::Cachecopy {
                cache: "L1".into(),
                multiplier: 0.0,
                rate_ratio: 1.0,
            }),
            anomaly(AnomalyParams::Membw {
                buffer_bytes: 100,
                rate_ratio: 1.0,
            }),
            anomaly(AnomalyParams::Memeater {
                buffer_bytes: 1 << 20,
                interval_ns: 0,
                limit_bytes: 1 << 30,
            }),
            anomaly(AnomalyParams::Memleak {
                size_bytes: 1 << 20,
                rate_per_s: 0.0,
                limit_bytes: 1 << 30,
            }),
            anomaly(AnomalyParams::Netoccupy {
                ntasks: 0,
                message_bytes: 1,
                bandwidth_bit_per_s: None,
                peer: None,
            }),
            anomaly(AnomalyParams::Netoccupy {
                ntasks: 1,
                message_bytes: 1,
                bandwidth_bit_per_s: None,
                peer: Some("localhost".into()),
            }),
            anomaly(AnomalyParams::Iometadata {
                ntasks: 1,
                rate_per_s: Some(-1.0),
                dir: None,
            }),
            anomaly(AnomalyParams::Iobandwidth {
                ntasks: 2000,
                file_size_bytes: 1,
                bandwidth_bit_per_s: None,
                dir: None,
            }),
        ];
        for anomaly in bad {
            assert!(
                matches!(validate(&anomaly), Err(AnomalyError::Config(_))),
                "{anomaly:?}"
            );
        }
        let good = anomaly(AnomalyParams::Netoccupy {
            ntasks: 2,
            message_bytes: 1000,
            bandwidth_bit_per_s: Some(1_000_000),
            peer: Some("[::1]:9000".into()),
        });
        validate(&good).unwrap();
    }

    #[test]
    fn peers() {
        assert_eq!(parse_peer("127.0.0.1:80").unwrap(), ("127.0.0.1", 80));
        assert_eq!(parse_peer("[::1]:8080").unwrap(), ("::1", 8080));
        assert_eq!(parse_peer("sink.example:9").unwrap(), ("sink.example", 9));
        assert!(parse_peer(":80").is_err());
        assert!(parse_peer("host:0").is_err());
        assert!(parse_peer("host:http").is_err());
    }

    #[test]
    fn work_dirs_are_private_subdirectories() {
        let params = AnomalyParams::Iometadata {
            ntasks: 1,
            rate_per_s: None,
            dir: Some("/data".into()),
        };
        assert_eq!(
            work_dir(&anomaly(params), Path::new("/s"), 42),
            Some(PathBuf::from("/data/expc-anomaly-42"))
        );
        let params = AnomalyParams::Iobandwidth {
            ntasks: 1,
            file_size_bytes: 1,
            bandwidth_bit_per_s: None,
            dir: None,
        };
        assert_eq!(
            work_dir(&anomaly(params), Path::new("/s"), 7),
            Some(PathBuf::from("/s/expc-anomaly-7"))
        );
        assert_eq!(
            work_dir(
                &anomaly(AnomalyParams::Cpuoccupy { utilization_ratio: 1.0 }),
                Path::new("/s"),
                7
            ),
            None
        );
    }

    #[test]
    fn worker_seeds_differ() {
        assert_ne!(worker_seed(1, 0), worker_seed(1, 1));
        assert_ne!(worker_seed(1, 0), worker_seed(2, 0));
        assert_eq!(worker_seed(1, 0), worker_seed(1, 0));
    }
}
