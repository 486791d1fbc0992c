//! A STREAM copy loop (the victim) alone and next to membw and cachecopy,
//! on another core and on its own.

use std::thread::sleep;
use std::time::{Duration, Instant};

use exp_plan::AnomalyParams;

use super::{ensure_online, finish, CalibrateError, Lab};
use crate::bench::{self, StreamRun};

/// The conditions measured, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct InterferenceReport {
    /// The victim's core.
    pub core: u32,
    /// The core of the anomalies beside the victim.
    pub other_core: u32,
    /// The measured window of each condition.
    pub window: Duration,
    /// Size of each of the victim's two arrays.
    pub array_bytes: u64,
    pub cases: Vec<InterferenceCase>,
}

/// The victim under one condition.
#[derive(Debug, Clone, PartialEq)]
pub struct InterferenceCase {
    /// E.g. `alone`, `cachecopy L2, core 0`.
    pub condition: String,
    /// The victim's copy loop (MB/s count bytes read + written).
    pub victim: StreamRun,
    /// The first condition's (alone) throughput / this one's, of wall time.
    pub slowdown: f64,
    /// The same of the throughput per CPU-second of the victim, which leaves
    /// out time lost to sharing the core.
    pub cpu_slowdown: f64,
    /// CPU time of the anomaly over the victim's run / wall time, in percent;
    /// `None` without an anomaly.
    pub anomaly_cpu_percent: Option<f64>,
}

/// The conditions: alone, beside each anomaly on `other` and on `core`
/// itself, and alone again (how much the machine drifted while measuring).
fn conditions(core: u32, other: u32) -> Vec<(String, Option<(u32, AnomalyParams)>)> {
    let cache = |level: &str| AnomalyParams::Cachecopy {
        cache: level.into(),
        multiplier: 1.0,
        rate_ratio: 1.0,
    };
    let membw = AnomalyParams::Membw {
        buffer_bytes: 256 << 20,
        rate_ratio: 1.0,
    };
    vec![
        ("alone".into(), None),
        (format!("membw 256 MiB, core {other}"), Some((other, membw))),
        (format!("cachecopy L1, core {other}"), Some((other, cache("L1")))),
        (format!("cachecopy L2, core {other}"), Some((other, cache("L2")))),
        (format!("cachecopy L3, core {other}"), Some((other, cache("L3")))),
        (format!("cachecopy L1, core {core} (same)"), Some((core, cache("L1")))),
        (format!("cachecopy L2, core {core} (same)"), Some((core, cache("L2")))),
        (format!("cachecopy L3, core {core} (same)"), Some((core, cache("L3")))),
        // Again at the end: how much the machine drifted while measuring.
        ("alone (again)".into(), None),
    ]
}

/// Runs the victim, with arrays of `array_bytes`, on `core` for `window`
/// under each condition, anomalies beside it on `other`.
pub fn interference(
    lab: &mut Lab,
    core: u32,
    other: u32,
    window: Duration,
    array_bytes: u64,
) -> Result<InterferenceReport, CalibrateError> {
    ensure_online(&[core, other])?;
    let mut cases = Vec::new();
    let mut alone: Option<(f64, f64)> = None;
    for (condition, anomaly) in conditions(core, other) {
        let (victim, anomaly_cpu_percent) = measure(lab, core, window, array_bytes, anomaly)?;
        let (mb_per_s, mb_per_cpu_s) = (victim.mb_per_s(), victim.mb_per_cpu_s());
        let (alone_wall, alone_cpu) = *alone.get_or_insert((mb_per_s, mb_per_cpu_s));
        cases.push(InterferenceCase {
            condition,
            victim,
            slowdown: alone_wall / mb_per_s,
            cpu_slowdown: alone_cpu / mb_per_cpu_s,
            anomaly_cpu_percent,
        });
    }
    Ok(InterferenceReport {
        core,
        other_core: other,
        window,
        array_bytes,
        cases,
    })
}

/// The victim's run beside `anomaly` (on its core), and the anomaly's CPU share in percent.
fn measure(
    lab: &mut Lab,
    core: u32,
    window: Duration,
    array_bytes: u64,
    anomaly: Option<(u32, AnomalyParams)>,
) -> Result<(StreamRun, Option<f64>), CalibrateError> {
    let run_for = window + Duration::from_secs(30); // the victim's fill takes a while on big arrays
    let mut instance = match anomaly {
        Some((on, params)) => Some(lab.start(vec![on], params, run_for)?),
        None => None,
    };
    sleep(Duration::from_secs(1)); // the anomaly fills its arrays first
    let before = match instance.as_mut() {
        Some(i) => Some((i.sample()?.cpu_time_ns, Instant::now())),
        None => None,
    };
    let victim = bench::stream_copy(Some(core), array_bytes, window, 1)?;
    let mut anomaly_cpu = None;
    if let (Some(mut instance), Some((cpu0, t0))) = (instance.take(), before) {
        let cpu1 = instance.sample()?.cpu_time_ns;
        anomaly_cpu = Some(cpu1.saturating_sub(cpu0) as f64 / t0.elapsed().as_nanos() as f64 * 100.0);
        finish(instance)?;
    }
    Ok((victim, anomaly_cpu))
}
