//! The shared clock of a trial: every workload measures time from the same
//! start, as a monotonic instant plus its wall-clock anchor.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Copy)]
pub struct TrialClock {
    pub start: Instant,
    /// The same moment as Unix time, for joining with other systems' logs.
    pub start_unix_ns: u64,
}

impl TrialClock {
    pub fn start_now() -> Self {
        TrialClock {
            start: Instant::now(),
            start_unix_ns: unix_ns(SystemTime::now()),
        }
    }

    /// The instant `ns` after the trial's start.
    pub fn at(&self, ns: u64) -> Instant {
        self.start + Duration::from_nanos(ns)
    }

    /// Nanoseconds since the trial's start.
    pub fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos().min(u64::MAX as u128) as u64
    }

    pub fn unix_ns_at(&self, ns: u64) -> u64 {
        self.start_unix_ns.saturating_add(ns)
    }
}

pub fn unix_ns(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64)
}
