//! cpuoccupy: achieved vs target utilisation of a core, alone and next to a
//! competitor that wants the whole core.

use std::thread::sleep;
use std::time::{Duration, Instant};

use exp_plan::AnomalyParams;

use super::{ensure_online, finish, CalibrateError, Lab, MARGIN, WARMUP};
use crate::Instance;

/// The points measured on one core.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuoccupyReport {
    pub core: u32,
    /// The measured window of each point, idle and contended alike.
    pub window: Duration,
    pub points: Vec<CpuPoint>,
}

/// One target utilisation, measured twice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuPoint {
    pub target_percent: f64,
    /// cpuoccupy alone on the core.
    pub idle: IdleCore,
    /// cpuoccupy next to a cpuoccupy 100 % pinned to the same core.
    pub contended: ContendedCore,
}

/// Percentages of the core's wall time over the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdleCore {
    /// CPU time of the child's threads.
    pub achieved_percent: f64,
    /// What other processes and the hypervisor (steal) took of the core:
    /// /proc/stat busy + steal time minus the child's.
    pub others_percent: f64,
    /// min(target, 100 − others).
    pub expected_percent: f64,
}

/// Percentages of the core's wall time over the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContendedCore {
    /// CPU time of the measured child's threads.
    pub achieved_percent: f64,
    /// CPU time of the competitor's threads.
    pub competitor_percent: f64,
    /// What other processes and the hypervisor took of the core, minus both children.
    pub others_percent: f64,
    /// min(target, (100 − others) / 2): the fair share of two busy tasks.
    pub expected_percent: f64,
}

impl IdleCore {
    /// Achieved minus expected, in percentage points.
    pub fn error_points(&self) -> f64 {
        self.achieved_percent - self.expected_percent
    }
}

impl ContendedCore {
    /// Achieved minus expected, in percentage points.
    pub fn error_points(&self) -> f64 {
        self.achieved_percent - self.expected_percent
    }
}

/// Measures each of `targets` (percentages) on `core` for `window`, first
/// alone, then contended. Blocks for about 2 × (`window` + ½ s) per target.
pub fn cpuoccupy(
    lab: &mut Lab,
    core: u32,
    window: Duration,
    targets: &[f64],
) -> Result<CpuoccupyReport, CalibrateError> {
    ensure_online(&[core])?;
    if let Some(&target) = targets.iter().find(|t| !(0.0..=100.0).contains(*t)) {
        return Err(CalibrateError::NotAPercentage(target));
    }
    let points = targets
        .iter()
        .map(|&target| point(lab, core, window, target))
        .collect::<Result<_, _>>()?;
    Ok(CpuoccupyReport { core, window, points })
}

fn point(lab: &mut Lab, core: u32, window: Duration, target: f64) -> Result<CpuPoint, CalibrateError> {
    let run_for = WARMUP + window + MARGIN;
    let cpu = |percent: f64| AnomalyParams::Cpuoccupy {
        utilization_ratio: percent / 100.0,
    };
    let mut alone = lab.start(vec![core], cpu(target), run_for)?;
    sleep(WARMUP);
    let (shares, idle_others) = cpu_shares(&mut [&mut alone], core, window)?;
    finish(alone)?;
    let idle = IdleCore {
        achieved_percent: shares[0],
        others_percent: idle_others,
        expected_percent: target.min(100.0 - idle_others),
    };

    let mut competitor = lab.start(vec![core], cpu(100.0), run_for)?;
    let mut occupier = lab.start(vec![core], cpu(target), run_for)?;
    sleep(WARMUP);
    let (shares, others) = cpu_shares(&mut [&mut occupier, &mut competitor], core, window)?;
    finish(occupier)?;
    finish(competitor)?;
    let contended = ContendedCore {
        achieved_percent: shares[0],
        competitor_percent: shares[1],
        others_percent: others,
        expected_percent: target.min((100.0 - others) / 2.0),
    };
    Ok(CpuPoint {
        target_percent: target,
        idle,
        contended,
    })
}

/// Time `core` was not available to an idle-seeking task so far, in ns, from
/// /proc/stat: user + nice + system + irq + softirq + steal (guest time is
/// already inside user; steal is time the hypervisor gave the virtual CPU to
/// someone else), in the kernel's clock ticks.
fn core_busy_ns(core: u32) -> Result<u64, CalibrateError> {
    let stat = exp_host::proc_stat()?;
    let t = stat.cpu(core).ok_or(CalibrateError::CoreNotInProcStat(core))?;
    let busy = t.user + t.nice + t.system + t.irq + t.softirq + t.steal;
    Ok(busy.saturating_mul(1_000_000_000) / exp_host::clock_ticks_per_s().max(1))
}

/// Over `window`: the utilisation (percent) of each instance, from its CPU
/// time in /proc, and the share of `core` that other processes took.
fn cpu_shares(instances: &mut [&mut Instance], core: u32, window: Duration) -> Result<(Vec<f64>, f64), CalibrateError> {
    let mut before = Vec::new();
    for instance in instances.iter_mut() {
        before.push(instance.sample()?.cpu_time_ns);
    }
    let busy_before = core_busy_ns(core)?;
    let start = Instant::now();
    sleep(window);
    let busy = core_busy_ns(core)?.saturating_sub(busy_before);
    let wall = start.elapsed().as_nanos() as f64;
    let mut shares = Vec::new();
    for (instance, before) in instances.iter_mut().zip(before) {
        let after = instance.sample()?.cpu_time_ns;
        shares.push(after.saturating_sub(before) as f64 / wall * 100.0);
    }
    let others = (busy as f64 / wall * 100.0 - shares.iter().sum::<f64>()).max(0.0);
    Ok((shares, others))
}
