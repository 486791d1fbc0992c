//! Per-device send schedules: the absolute offset (ns since the fleet's
//! start) of every message a device sends.
//!
//! The k-th offset is `round(first + gap₁ + … + gapₖ)`: the sum is kept as
//! whole nanoseconds (`u64`, exact) plus a fraction in [0, 1), so each deadline
//! is within half a nanosecond of the exact sum however long the run, and
//! rounding never accumulates (adding rounded gaps would drift by up to
//! 0.5 ns per message; a plain `f64` sum loses precision as it grows). Every device draws from its own stream,
//! `Rng::new(seed).stream(device)`, so a device's schedule does not depend on
//! how many devices there are or in which order they are asked.

use std::sync::Arc;

use exp_plan::{DistValue, FirstSend};
use exp_stats::{Rng, Sampler};

use crate::MqttError;

/// What all devices of a fleet share: the validated distributions. Built once
/// so 10,000 devices do not each rebuild (say) an empirical alias table.
#[derive(Debug, Clone)]
pub struct FleetSchedule {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    gap: Sampler,
    first: First,
    seed: u64,
}

#[derive(Debug)]
enum First {
    /// Uniform on [0, width) ns.
    Uniform {
        width: f64,
    },
    Lockstep,
    Dist(Sampler),
}

impl FleetSchedule {
    /// Validates the gap and first-send distributions. `FirstSend::Uniform`
    /// spreads first sends over one mean gap, so the gap distribution needs a
    /// finite mean (not a Pareto with shape ≤ 1).
    pub fn new(gap: &DistValue, first_send: &FirstSend, seed: u64) -> Result<Self, MqttError> {
        let gap = Sampler::new(gap).map_err(|source| MqttError::InvalidDistribution { what: "gap", source })?;
        let first = match first_send {
            FirstSend::Uniform => match gap.mean() {
                Some(m) if m.is_finite() && m >= 0.0 => First::Uniform { width: m },
                _ => return Err(MqttError::NoMeanGap),
            },
            FirstSend::Lockstep => First::Lockstep,
            FirstSend::Dist(d) => First::Dist(Sampler::new(d).map_err(|source| MqttError::InvalidDistribution {
                what: "first send",
                source,
            })?),
        };
        Ok(FleetSchedule {
            shared: Arc::new(Shared { gap, first, seed }),
        })
    }

    /// The schedule of device `device` (its index in the whole fleet, not in a shard).
    pub fn device(&self, device: u32) -> DeviceSchedule {
        let mut rng = Rng::new(self.shared.seed).stream(u64::from(device));
        // Negative draws (a normal offset) mean "at the start"; the offset is a time, not a gap.
        let first = match &self.shared.first {
            First::Uniform { width } => width * rng.next_f64(),
            First::Lockstep => 0.0,
            First::Dist(s) => s.sample(&mut rng).max(0.0),
        };
        let mut schedule = DeviceSchedule {
            shared: Arc::clone(&self.shared),
            device,
            rng,
            whole: 0,
            frac: 0.0,
        };
        schedule.advance(first);
        schedule
    }
}

/// The send offsets of one device, in ns since the fleet's start; an endless
/// iterator (the pacer stops at the end time or message limit).
#[derive(Debug, Clone)]
pub struct DeviceSchedule {
    shared: Arc<Shared>,
    device: u32,
    rng: Rng,
    /// The next send's exact offset is `whole + frac` ns, with 0 ≤ frac < 1.
    whole: u64,
    frac: f64,
}

impl DeviceSchedule {
    /// Shorthand for `FleetSchedule::new(gap, first_send, seed)?.device(device)`;
    /// prefer one [`FleetSchedule`] for a whole fleet.
    pub fn new(device: u32, gap: &DistValue, first_send: &FirstSend, seed: u64) -> Result<Self, MqttError> {
        Ok(FleetSchedule::new(gap, first_send, seed)?.device(device))
    }

    pub fn device(&self) -> u32 {
        self.device
    }

    /// The offset of the next send without consuming it.
    pub fn peek(&self) -> u64 {
        self.whole.saturating_add(u64::from(self.frac >= 0.5))
    }

    /// Adds `x ≥ 0` ns. Splitting off the whole part is exact for x < 2⁵², and
    /// `as` saturates beyond (an offset past ~584 years stays at u64::MAX).
    fn advance(&mut self, x: f64) {
        let whole = x.floor();
        self.frac += x - whole;
        let carry = self.frac.floor();
        self.frac -= carry;
        self.whole = self.whole.saturating_add(whole as u64).saturating_add(carry as u64);
    }
}

impl Iterator for DeviceSchedule {
    type Item = u64;

    /// The next send's offset. Negative gap draws (a normal with a large sd)
    /// count as 0: a device cannot send before its previous message.
    fn next(&mut self) -> Option<u64> {
        let current = self.peek();
        let gap = self.shared.gap.sample(&mut self.rng).max(0.0);
        self.advance(gap);
        Some(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use exp_plan::{Dist, Unit};

    fn ns(dist: Dist) -> DistValue {
        DistValue { unit: Unit::Ns, dist }
    }

    /// Pareto with shape 3 and median 100 ms: scale = median / 2^(1/shape).
    pub(crate) fn pareto_100ms() -> DistValue {
        ns(Dist::Pareto {
            shape: 3.0,
            scale: 100e6 / 2f64.powf(1.0 / 3.0),
        })
    }

    fn gaps(schedule: DeviceSchedule, n: usize) -> Vec<f64> {
        let offsets: Vec<u64> = schedule.take(n + 1).collect();
        offsets.windows(2).map(|w| (w[1] - w[0]) as f64).collect()
    }

    #[test]
    fn deterministic_per_seed_and_device() {
        let fleet = FleetSchedule::new(&pareto_100ms(), &FirstSend::Uniform, 42).unwrap();
        let a: Vec<u64> = fleet.device(7).take(100).collect();
        let b: Vec<u64> = FleetSchedule::new(&pareto_100ms(), &FirstSend::Uniform, 42)
            .unwrap()
            .device(7)
            .take(100)
            .collect();
        assert_eq!(a, b);
        let c: Vec<u64> = fleet.device(8).take(100).collect();
        assert_ne!(a, c);
        let d: Vec<u64> = DeviceSchedule::new(7, &pareto_100ms(), &FirstSend::Uniform, 43)
            .unwrap()
            .take(100)
            .collect();
        assert_ne!(a, d);
    }

    #[test]
    fn constant_gaps_are_exact_and_first_sends_spread() {
        let gap = ns(Dist::Constant { value: 100e6 });
        let fleet = FleetSchedule::new(&gap, &FirstSend::Uniform, 1).unwrap();
        let mut firsts = Vec::new();
        for device in 0..1000 {
            let offsets: Vec<u64> = fleet.device(device).take(50).collect();
            assert!(offsets[0] < 100_000_000);
            assert!(offsets.windows(2).all(|w| w[1] - w[0] == 100_000_000), "{offsets:?}");
            firsts.push(offsets[0] as f64);
        }
        // Uniform on [0, 100 ms): mean 50 ms, and no lockstep.
        let mean = firsts.iter().sum::<f64>() / firsts.len() as f64;
        assert!((mean - 50e6).abs() < 3e6, "{mean}");
        let lock = FleetSchedule::new(&gap, &FirstSend::Lockstep, 1).unwrap();
        assert!((0..10).all(|d| lock.device(d).peek() == 0));
    }

    #[test]
    fn fractional_gaps_do_not_drift() {
        // 1/3 ns gaps: adding rounded gaps would give 0 forever; absolute deadlines give n/3.
        let fleet = FleetSchedule::new(&ns(Dist::Constant { value: 1.0 / 3.0 }), &FirstSend::Lockstep, 1).unwrap();
        let last = fleet.device(0).nth(3_000_000).unwrap();
        assert_eq!(last, 1_000_000);
    }

    #[test]
    fn mean_gap_matches_distribution() {
        let fleet = FleetSchedule::new(&ns(Dist::Exponential { mean: 200e6 }), &FirstSend::Lockstep, 5).unwrap();
        let g = gaps(fleet.device(3), 100_000);
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        // sd of the mean: 200 ms / √100000 ≈ 0.63 ms; allow 5 sd.
        assert!((mean - 200e6).abs() < 3.2e6, "{mean}");
    }

    #[test]
    fn pareto_gaps_pass_ks() {
        let dist = pareto_100ms();
        let fleet = FleetSchedule::new(&dist, &FirstSend::Uniform, 2024).unwrap();
        let g = gaps(fleet.device(0), 5_000);
        let ks = exp_stats::ks_one_sample(&g, &Sampler::new(&dist).unwrap()).unwrap();
        assert!(!ks.rejects(0.01), "{ks:?}");
        // And the mean over the fleet: 3 · scale / 2 ≈ 119.06 ms.
        let all: Vec<f64> = (0..100).flat_map(|d| gaps(fleet.device(d), 1000)).collect();
        let mean = all.iter().sum::<f64>() / all.len() as f64;
        assert!((mean / 119.06e6 - 1.0).abs() < 0.02, "{mean}");
    }

    #[test]
    fn uniform_first_send_needs_a_mean() {
        let heavy = ns(Dist::Pareto { shape: 1.0, scale: 1e6 });
        assert!(matches!(
            FleetSchedule::new(&heavy, &FirstSend::Uniform, 1),
            Err(MqttError::NoMeanGap)
        ));
        assert!(FleetSchedule::new(&heavy, &FirstSend::Lockstep, 1).is_ok());
        let bad = ns(Dist::Exponential { mean: -1.0 });
        assert!(matches!(
            FleetSchedule::new(&bad, &FirstSend::Lockstep, 1),
            Err(MqttError::InvalidDistribution { what: "gap", .. })
        ));
    }
}
