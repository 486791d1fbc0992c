//! Process limits and CPU accounting for the throughput benchmark.

use crate::BoxError;

/// Raises the open-file soft limit to the hard limit: 1,000 devices are 1,000
/// sockets here, and (embedded broker) 1,000 more on the broker's side.
#[allow(unsafe_code)]
pub fn raise_nofile_limit() -> Result<u64, BoxError> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read or write the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(format!("getrlimit: {}", std::io::Error::last_os_error()).into());
    }
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
            return Err(format!("setrlimit: {}", std::io::Error::last_os_error()).into());
        }
    }
    Ok(lim.rlim_cur)
}

/// Prefix of the benchmark's own runtime threads; in-process (embedded broker)
/// threads with other names are counted as the broker's.
pub const RUNNER_THREAD: &str = "bench-rt";

/// CPU time, in nanoseconds, of the runner and of the broker.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cpu {
    pub runner_ns: u64,
    /// `None` for an external broker, whose process we do not know.
    pub broker_ns: Option<u64>,
    /// Busy time of the whole machine (every process, all CPUs), from /proc/stat:
    /// what neither side used is someone else's load, which skews a run.
    pub host_busy_ns: u64,
    /// Context switches on the machine since boot.
    pub host_ctxt: u64,
}

impl Cpu {
    /// What was used between `earlier` and `self`.
    pub fn since(&self, earlier: &Cpu) -> Cpu {
        Cpu {
            runner_ns: self.runner_ns.saturating_sub(earlier.runner_ns),
            broker_ns: self.broker_ns.zip(earlier.broker_ns).map(|(b, a)| b.saturating_sub(a)),
            host_busy_ns: self.host_busy_ns.saturating_sub(earlier.host_busy_ns),
            host_ctxt: self.host_ctxt.saturating_sub(earlier.host_ctxt),
        }
    }

    /// CPU time of everything else on the machine.
    pub fn other_ns(&self) -> u64 {
        self.host_busy_ns
            .saturating_sub(self.runner_ns + self.broker_ns.unwrap_or(0))
    }
}

/// Where the broker's CPU time is found.
#[derive(Debug, Clone, Copy)]
pub enum BrokerCpu {
    /// Another process (Mosquitto).
    Process(u32),
    /// Threads of this process not named [`RUNNER_THREAD`] (the embedded broker).
    InProcess,
    Unknown,
}

/// Per-thread schedstat (ns resolution) rather than /proc/<pid>/stat's 10 ms
/// ticks, and because the embedded broker is only separable thread by thread.
pub fn sample(broker: BrokerCpu) -> Result<Cpu, BoxError> {
    let me = std::process::id();
    let threads = exp_host::pid_thread_cpu_ns(me)?.ok_or("/proc/self/task is gone")?;
    let mut runner_ns = 0;
    let mut other_ns = 0;
    for (tid, ns) in threads {
        let comm = std::fs::read_to_string(format!("/proc/{me}/task/{tid}/comm")).unwrap_or_default();
        // The main thread only connects devices and sorts latencies: the runner's.
        if comm.starts_with(RUNNER_THREAD) || tid == me {
            runner_ns += ns;
        } else {
            other_ns += ns;
        }
    }
    let broker_ns = match broker {
        BrokerCpu::Process(pid) => {
            let threads = exp_host::pid_thread_cpu_ns(pid)?.ok_or("the broker process is gone")?;
            runner_ns += other_ns;
            Some(threads.values().sum())
        }
        BrokerCpu::InProcess => Some(other_ns),
        BrokerCpu::Unknown => {
            runner_ns += other_ns;
            None
        }
    };
    let stat = exp_host::proc_stat()?;
    let idle = stat.cpu.idle + stat.cpu.iowait;
    let host_busy_ns = (stat.cpu.total() - idle) * 1_000_000_000 / exp_host::clock_ticks_per_s();
    Ok(Cpu {
        runner_ns,
        broker_ns,
        host_busy_ns,
        host_ctxt: stat.ctxt,
    })
}
