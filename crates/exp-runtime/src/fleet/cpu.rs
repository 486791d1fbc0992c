//! The runner measuring itself: CPU this process used during a fleet's
//! trial, CPU every other process took meanwhile, and its memory. A load generator that
//! had to share its cores with a busy neighbour produced numbers the
//! neighbour shaped; these figures let the report say so.

use std::time::Instant;

/// CPU use over a span of wall time, as a share of one core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuUse {
    pub wall_s: f64,
    /// CPU seconds of this process (all threads).
    pub runner_s: f64,
    /// Busy CPU seconds of the whole machine minus the runner's and steal.
    pub others_s: f64,
    /// CPU seconds the hypervisor ran something else on this machine's
    /// virtual CPUs: stalls no process here can see or avoid.
    pub steal_s: f64,
}

pub struct CpuMeter {
    started: Instant,
    /// This process's CPU time in ns (a clock, not 10 ms ticks: a short
    /// trial's CPU per message would otherwise come in steps of 10 ms).
    self_ns: u64,
    machine: Option<Machine>,
}

impl CpuMeter {
    pub fn start() -> Self {
        CpuMeter {
            started: Instant::now(),
            self_ns: exp_host::process_cpu_ns().unwrap_or(0),
            machine: machine_ticks(),
        }
    }

    pub fn read(&self) -> CpuUse {
        let hz = exp_host::clock_ticks_per_s().max(1) as f64;
        let runner_s = exp_host::process_cpu_ns().unwrap_or(0).saturating_sub(self.self_ns) as f64 / 1e9;
        let (busy, steal) = machine_ticks().zip(self.machine).map_or((0, 0), |(now, then)| {
            (now.busy.saturating_sub(then.busy), now.steal.saturating_sub(then.steal))
        });
        let (busy_s, steal_s) = (busy as f64 / hz, steal as f64 / hz);
        CpuUse {
            wall_s: self.started.elapsed().as_secs_f64(),
            runner_s,
            others_s: (busy_s - runner_s - steal_s).max(0.0),
            steal_s,
        }
    }
}

/// Resident memory of this process, for the memory a fleet's devices take.
pub fn rss_bytes() -> Option<u64> {
    let statm = exp_host::pid_statm(std::process::id()).ok().flatten()?;
    Some(statm.resident_pages.saturating_mul(exp_host::page_size()))
}

#[derive(Clone, Copy)]
struct Machine {
    /// Ticks every CPU spent neither idle nor waiting for I/O (steal included).
    busy: u64,
    steal: u64,
}

fn machine_ticks() -> Option<Machine> {
    let cpu = exp_host::proc_stat().ok()?.cpu;
    Some(Machine {
        busy: cpu.total().saturating_sub(cpu.idle).saturating_sub(cpu.iowait),
        steal: cpu.steal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spinning_shows_up_as_runner_cpu() {
        let meter = CpuMeter::start();
        // Spin until the kernel has charged 0.2 s to this process (bounded:
        // on a loaded machine that takes longer than 0.2 s of wall time).
        let give_up = Instant::now() + std::time::Duration::from_secs(30);
        let mut x = 0u64;
        while meter.read().runner_s < 0.2 && Instant::now() < give_up {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        let used = meter.read();
        assert!(used.runner_s >= 0.2, "{used:?}");
        // One spinning thread (plus the test harness) cannot use more than the cores it has.
        let cores = exp_host::online_cpus().len().max(1) as f64;
        assert!(used.runner_s <= used.wall_s * cores + 0.05, "{used:?}");
        assert!(used.others_s >= 0.0 && used.steal_s >= 0.0);
    }
}
