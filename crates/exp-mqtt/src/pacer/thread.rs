//! How the pacer thread asks the kernel to run it on time, and what it cost.
//!
//! Measured with `bench/fleet-scale.sh` (4,000 devices × 5 msg/s on two
//! cores shared with Mosquitto), the pacer thread spent 14 % of the run
//! (its `/proc/PID/task/TID/schedstat`)
//! waiting in the run queue behind the runtime's workers and the broker, and
//! that wait, not the pacer's own work, made the send-lateness tail: p99
//! 1.2–2.3 ms in the seconds without hypervisor steal. Two requests fix it,
//! both best effort:
//! - a short EEVDF slice (Linux 6.12+): a thread that asks for 100 µs gets an
//!   early virtual deadline, so its timer wake-up preempts the running
//!   thread instead of waiting for that thread's slice to end;
//! - a lower nice value (−10 by default, `PacerConfig::nice`; needs
//!   `CAP_SYS_NICE`), so the fair share it is owed while runnable is much
//!   larger than a worker's.
//!
//! With both, p99 fell to 0.2–0.7 ms in the same seconds (alternating
//! `bench/fleet-scale.sh bench/fleet-scale.exp --trials 0 --time-scale 0.5`
//! runs of builds with and without them, split by `bench/steal-split.py`). The nice value is
//! not free: the pacer takes a third of a core at 20,000 msg/s, and with the
//! embedded broker in the same process (rumqttd then, exp-mqtt's own since
//! decision 0024, both sharing the process's cores), the broker lost so much to it
//! that ack p99 rose from 12 ms to 191–220 ms (runs with under 1 % steal),
//! so the fleet executor leaves nice at 0 for the embedded broker.
//! SCHED_FIFO was tried and was worse (p99 8 ms): a real-time pacer preempts
//! the workers holding the locks and allocator arenas it needs next.
//!
//! At low rates the CPUs idle between sends, and waking an idle CPU is slow:
//! a deep C-state on bare metal, and on a virtual machine a halted vCPU the
//! hypervisor must schedule again. Five alternating pairs of
//! `cargo run --release -p exp-mqtt --example pacer -- --devices 100 --rate 10
//! --seconds 3 --gap pareto --wake-latency-zero true|false` on this VM
//! measured lateness p99 51–65 µs (8.5 ms in one pair, whose other run had
//! 30 ms) holding a PM QoS request of 0 µs on `/dev/cpu_dma_latency`, as
//! cyclictest does, and 132 µs – 30 ms without it. The pacer holds that
//! request while it runs (`PacerConfig::cpu_wake_latency_zero`; root only;
//! CPUs then poll instead of sleeping, which costs power, not CPU time
//! others could use).

/// What the kernel granted the pacer thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scheduling {
    /// The slice asked for was accepted (the kernel may ignore it before 6.12).
    pub short_slice: bool,
    /// The nice value the thread runs at.
    pub nice: i32,
    /// The 0 µs CPU wake-latency request was granted (see [`WakeLatency`]).
    pub cpu_wake_latency_zero: bool,
}

const SLICE_NS: u64 = 100_000;

/// Sets 1 ns timer slack, a short slice and `nice`, and requests a 0 µs CPU
/// wake latency, as far as allowed. The request lasts as long as the returned guard.
pub(super) fn ask_to_run_on_time(nice: i32, wake_latency_zero: bool) -> (Scheduling, Option<WakeLatency>) {
    set_timer_slack_1ns();
    let wake_latency = wake_latency_zero.then(WakeLatency::request_zero).flatten();
    let granted = [nice, 0].into_iter().find(|&n| set_fair_attributes(SLICE_NS, n));
    let scheduling = Scheduling {
        short_slice: granted.is_some(),
        nice: granted.unwrap_or(0),
        cpu_wake_latency_zero: wake_latency.is_some(),
    };
    (scheduling, wake_latency)
}

/// A PM QoS request that idle CPUs be woken within 0 µs, in force while
/// the file stays open (the kernel drops it when the file is closed).
pub(super) struct WakeLatency {
    _request: std::fs::File,
}

impl WakeLatency {
    /// `None` without permission (root) or off Linux: sleeps are only less exact then.
    fn request_zero() -> Option<WakeLatency> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .ok()?;
        file.write_all(&0i32.to_ne_bytes()).ok()?;
        Some(WakeLatency { _request: file })
    }
}

/// A sleeping thread is woken up to its timer slack (50 µs by default) after
/// its deadline; 1 ns makes the kernel wake the pacer on time. Best effort:
/// without it sleeps are only less exact.
#[allow(unsafe_code)]
fn set_timer_slack_1ns() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes an integer and touches only the calling thread's slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// `struct sched_attr` (its first version, 48 bytes), which libc does not define.
#[repr(C)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    /// For SCHED_OTHER since Linux 6.12: the slice the thread asks for.
    runtime: u64,
    deadline: u64,
    period: u64,
}

/// SCHED_OTHER with the given slice and nice value for the calling thread.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn set_fair_attributes(slice_ns: u64, nice: i32) -> bool {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        policy: libc::SCHED_OTHER as u32,
        flags: 0,
        nice,
        priority: 0,
        runtime: slice_ns,
        deadline: 0,
        period: 0,
    };
    // SAFETY: the kernel reads `size` bytes of a live, correctly laid out
    // sched_attr; pid 0 is the calling thread.
    unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn set_fair_attributes(_slice_ns: u64, _nice: i32) -> bool {
    false
}

/// CPU time of the calling thread in ns (exp-host, the one reader of
/// /proc). `None` off Linux.
pub(super) fn cpu_ns() -> Option<u64> {
    exp_host::thread_cpu_ns()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    use exp_host::thread_sched_field as sched_field;

    #[test]
    fn what_is_reported_is_what_the_thread_runs_with() {
        std::thread::spawn(|| {
            let (granted, _wake_latency) = ask_to_run_on_time(-10, true);
            // prio is 120 + nice for a fair thread.
            assert_eq!(sched_field("prio"), Some(120 + i64::from(granted.nice)));
            // Kernels that know custom slices show it; older ones have no such line.
            if let (true, Some(slice)) = (granted.short_slice, sched_field("se.slice")) {
                assert_eq!(slice, SLICE_NS as i64);
            }
        })
        .join()
        .unwrap();
    }
}
