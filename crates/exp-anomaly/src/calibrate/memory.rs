//! memleak and memeater: growth of the resident set vs the configured rate.

use std::thread::sleep;
use std::time::{Duration, Instant};

use exp_plan::AnomalyParams;

use super::{ensure_online, finish, CalibrateError, Lab, MARGIN};
use crate::configured_growth_bytes_per_s;

/// The cases measured on one core.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryReport {
    pub core: u32,
    /// The measured window of each case.
    pub window: Duration,
    pub cases: Vec<MemoryCase>,
}

/// One memory kernel's growth: the resident set (/proc/<pid>/statm, sampled
/// every 10 ms) between the first and the last step seen over the time
/// between them.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryCase {
    /// Which kernel with which settings, e.g. `memleak 20 MB x 5/s (HPAS)`.
    pub name: &'static str,
    pub configured_bytes_per_s: f64,
    pub measured_bytes_per_s: f64,
    /// Steps of growth seen within the window.
    pub steps: u64,
}

impl MemoryCase {
    /// Measured / configured growth.
    pub fn ratio(&self) -> f64 {
        self.measured_bytes_per_s / self.configured_bytes_per_s
    }
}

const MB: u64 = 1_000_000;

/// The cases: memleak and memeater with our defaults and with HPAS's settings.
fn cases() -> [(&'static str, AnomalyParams); 4] {
    [
        (
            "memleak 20 MB x 1/s (default)",
            AnomalyParams::Memleak {
                size_bytes: 20 * MB,
                rate_per_s: 1.0,
                limit_bytes: 0,
            },
        ),
        (
            "memleak 20 MB x 5/s (HPAS)",
            AnomalyParams::Memleak {
                size_bytes: 20 * MB,
                rate_per_s: 5.0,
                limit_bytes: 0,
            },
        ),
        (
            "memeater 35 MB / 1 s (default)",
            AnomalyParams::Memeater {
                buffer_bytes: 35 * MB,
                interval_ns: 1_000_000_000,
                limit_bytes: 0,
            },
        ),
        (
            "memeater 35 MB / 200 ms (HPAS)",
            AnomalyParams::Memeater {
                buffer_bytes: 35 * MB,
                interval_ns: 200_000_000,
                limit_bytes: 0,
            },
        ),
    ]
}

/// Measures each case on `core` for `window`, one after the other.
pub fn memory(lab: &mut Lab, core: u32, window: Duration) -> Result<MemoryReport, CalibrateError> {
    ensure_online(&[core])?;
    let cases = cases()
        .into_iter()
        .map(|(name, params)| measure(lab, core, window, name, params))
        .collect::<Result<_, _>>()?;
    Ok(MemoryReport { core, window, cases })
}

fn measure(
    lab: &mut Lab,
    core: u32,
    window: Duration,
    name: &'static str,
    mut params: AnomalyParams,
) -> Result<MemoryCase, CalibrateError> {
    let rate = configured_growth_bytes_per_s(&params).ok_or(CalibrateError::NotAMemoryAnomaly)?;
    // A limit beyond the window, so every step in it is a full one.
    let limit = (rate * (window.as_secs_f64() + 2.0)) as u64;
    let step = match &mut params {
        AnomalyParams::Memleak {
            size_bytes,
            limit_bytes,
            ..
        } => {
            *limit_bytes = limit;
            *size_bytes
        }
        AnomalyParams::Memeater {
            buffer_bytes,
            limit_bytes,
            ..
        } => {
            *limit_bytes = limit;
            *buffer_bytes
        }
        _ => return Err(CalibrateError::NotAMemoryAnomaly),
    };
    let mut instance = lab.start(vec![core], params, window + MARGIN)?;
    let start = Instant::now();
    let mut samples = Vec::new();
    while start.elapsed() < window {
        samples.push((start.elapsed().as_secs_f64(), instance.sample()?.rss_bytes));
        sleep(Duration::from_millis(10));
    }
    finish(instance)?;
    let (steps, measured) =
        growth_from_steps(&samples, step).ok_or_else(|| CalibrateError::TooFewSteps { case: name.to_string() })?;
    Ok(MemoryCase {
        name,
        configured_bytes_per_s: rate,
        measured_bytes_per_s: measured,
        steps,
    })
}

/// Growth rate from (seconds, RSS) samples of a kernel that grows in steps of
/// `step` bytes: step k is seen when the RSS first reaches the first sample +
/// (k − ½) steps; the rate is the growth between the first and last step seen
/// over the time between them. Returns (steps seen, bytes/s).
fn growth_from_steps(samples: &[(f64, u64)], step: u64) -> Option<(u64, f64)> {
    let base = samples.first()?.1 as f64;
    let mut seen: Vec<f64> = Vec::new();
    for &(t, rss) in samples {
        while rss as f64 >= base + (seen.len() as f64 + 0.5) * step as f64 {
            seen.push(t);
        }
    }
    let (first, last) = (*seen.first()?, *seen.last()?);
    if seen.len() < 2 || last <= first {
        return None;
    }
    Some((
        seen.len() as u64,
        (seen.len() - 1) as f64 * step as f64 / (last - first),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_from_a_staircase() {
        // 10 MB steps every 0.5 s, sampled every 10 ms, on a 3 MB base.
        let samples: Vec<(f64, u64)> = (0..300)
            .map(|i| i as f64 * 0.01)
            .map(|t| (t, 3_000_000 + 10_000_000 * (1 + (t / 0.5) as u64)))
            .collect();
        let (steps, rate) = growth_from_steps(&samples, 10_000_000).unwrap();
        assert_eq!(steps, 5);
        assert!((rate / 20e6 - 1.0).abs() < 0.01, "{rate}");
        assert_eq!(growth_from_steps(&samples[..10], 10_000_000), None);
    }

    #[test]
    fn every_case_is_a_memory_anomaly() {
        for (name, params) in cases() {
            assert!(configured_growth_bytes_per_s(&params).is_some(), "{name}");
        }
    }
}
