//! The system sampler behind the `monitor` block: one wide row per interval
//! for the `system_metrics` table (HPAS/LDMS style: every metric a column,
//! one row per timestamp).
//!
//! Counters are turned into rates over the interval between two samples;
//! gauges (memory, run queue) are the value at the sample. Which CPUs, disks
//! and interfaces exist is fixed when the sampler is made, so the schema is
//! the same for every row of a run.

use std::time::Instant;

use crate::columns::{Cells, Column, Columns, MetricCell, RowSink};
use crate::{
    delta, diskstats, is_counted_disk, meminfo, net_dev, proc_stat, vmstat, CpuTimes, DiskStat, HostError, MemInfo,
    NetDev, ProcStat, VmStat,
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SamplerOptions {
    /// Add user/system/idle/iowait percentages for each CPU.
    pub per_cpu: bool,
}

/// The CPU states of /proc/stat, in [`CpuTimes::as_array`] order.
const CPU_STATES: [&str; 8] = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"];

/// The states given per CPU (indices into `CPU_STATES`): four columns per
/// CPU keep the table usable on machines with a hundred CPUs.
const PER_CPU_STATES: [usize; 4] = [0, 2, 3, 4];

/// Memory gauges: column, /proc/meminfo field. `Cached` is the page cache
/// alone (`free`'s buff/cache also adds Buffers and SReclaimable).
const MEMORY: [(&str, &str); 11] = [
    ("mem_total_bytes", "MemTotal"),
    ("mem_free_bytes", "MemFree"),
    ("mem_available_bytes", "MemAvailable"),
    ("mem_buffers_bytes", "Buffers"),
    ("mem_cached_bytes", "Cached"),
    ("mem_shmem_bytes", "Shmem"),
    ("mem_slab_bytes", "Slab"),
    ("mem_anon_bytes", "AnonPages"),
    ("mem_dirty_bytes", "Dirty"),
    ("swap_total_bytes", "SwapTotal"),
    ("swap_free_bytes", "SwapFree"),
];

/// A /proc/vmstat counter, or several summed (see [`VmStat::sum_prefixed`]).
enum Vm {
    Exact(&'static str),
    Prefix(&'static str, &'static [&'static str]),
}

/// vmstat rates, per second. `pgfault` counts all faults, major ones too;
/// `pgpgin`/`pgpgout` count KiB read from and written to block devices,
/// despite the name. The rest are there for diagnosis: reclaim scanning by
/// kswapd (background) and in the allocating task (direct: the allocation
/// stalls), pages reclaimed, allocation stalls, compaction stalls, and
/// refaults of recently evicted pages (thrashing). `pgsteal_anon`/`_file`
/// split the same pages by type again, and `pgscan_direct_throttle` counts
/// throttling events, not pages, so the sums leave them out.
const VM_RATES: [(&str, Vm); 12] = [
    ("pgfault_per_s", Vm::Exact("pgfault")),
    ("pgmajfault_per_s", Vm::Exact("pgmajfault")),
    ("pgpgin_per_s", Vm::Exact("pgpgin")),
    ("pgpgout_per_s", Vm::Exact("pgpgout")),
    ("pswpin_per_s", Vm::Exact("pswpin")),
    ("pswpout_per_s", Vm::Exact("pswpout")),
    ("pgscan_kswapd_per_s", Vm::Prefix("pgscan_kswapd", &[])),
    (
        "pgscan_direct_per_s",
        Vm::Prefix("pgscan_direct", &["pgscan_direct_throttle"]),
    ),
    (
        "pgsteal_per_s",
        Vm::Prefix("pgsteal_", &["pgsteal_anon", "pgsteal_file"]),
    ),
    ("allocstall_per_s", Vm::Prefix("allocstall", &[])),
    ("compact_stall_per_s", Vm::Exact("compact_stall")),
    ("workingset_refault_per_s", Vm::Prefix("workingset_refault", &[])),
];

impl Vm {
    /// Counters the kernel does not have (older or differently configured
    /// kernels) read as 0, so the schema does not depend on the kernel.
    fn read(&self, vm: &VmStat) -> u64 {
        match self {
            Vm::Exact(name) => vm.get(name).unwrap_or(0),
            Vm::Prefix(prefix, except) => vm.sum_prefixed(prefix, except),
        }
    }
}

/// Everything read at one sample.
struct Snapshot {
    at: Instant,
    stat: ProcStat,
    mem: MemInfo,
    vm: VmStat,
    disks: Vec<DiskStat>,
    net: Vec<NetDev>,
}

impl Snapshot {
    /// Reads every file; disks and interfaces are kept only if listed
    /// (`None`: all of them).
    fn read(disks: Option<&[String]>, interfaces: Option<&[String]>) -> Result<Self, HostError> {
        let at = Instant::now();
        let stat = proc_stat()?;
        let mem = meminfo()?;
        let vm = vmstat()?;
        let mut disk_list = diskstats()?;
        if let Some(keep) = disks {
            disk_list.retain(|d| keep.contains(&d.name));
        }
        let mut net = net_dev()?;
        if let Some(keep) = interfaces {
            net.retain(|d| keep.contains(&d.name));
        }
        Ok(Snapshot {
            at,
            stat,
            mem,
            vm,
            disks: disk_list,
            net,
        })
    }
}

/// Two snapshots and the time between them.
struct Interval<'a> {
    prev: &'a Snapshot,
    cur: &'a Snapshot,
    ns: u64,
}

impl Interval<'_> {
    /// `None` for an empty interval (the schema is emitted from one snapshot
    /// against itself).
    fn per_s(&self, count: u64) -> Option<f64> {
        (self.ns > 0).then(|| count as f64 * 1e9 / self.ns as f64)
    }

    fn rate(&self, counter: impl Fn(&Snapshot) -> u64) -> Option<f64> {
        self.per_s(delta(counter(self.cur), counter(self.prev)))
    }

    /// Sums `counter`'s growth over the devices present at both ends.
    fn device_sum<T>(prev: &[T], cur: &[T], name: impl Fn(&T) -> &str, counter: impl Fn(&T) -> u64) -> u64 {
        cur.iter()
            .filter_map(|c| {
                prev.iter()
                    .find(|p| name(p) == name(c))
                    .map(|p| delta(counter(c), counter(p)))
            })
            .fold(0, u64::saturating_add)
    }
}

/// Each state's share of the ticks that passed, in percent; `None` if no
/// tick passed (samples closer together than 1/USER_HZ) or the CPU was not
/// online at both samples. The shares are of the sum of the states' deltas,
/// so they add up to 100 even when a counter went backwards.
fn cpu_shares(prev: Option<&CpuTimes>, cur: Option<&CpuTimes>) -> Option<[f64; 8]> {
    let (prev, cur) = (prev?.as_array(), cur?.as_array());
    let ticks: [u64; 8] = std::array::from_fn(|i| delta(cur[i], prev[i]));
    let total = ticks.iter().fold(0u64, |s, &t| s.saturating_add(t));
    (total > 0).then(|| ticks.map(|t| t as f64 * 100.0 / total as f64))
}

/// Samples /proc/stat, /proc/meminfo, /proc/vmstat, /proc/diskstats and
/// /proc/net/dev into rows of the `system_metrics` table.
pub struct SystemSampler {
    options: SamplerOptions,
    cpus: Vec<u32>,
    disks: Vec<String>,
    interfaces: Vec<String>,
    /// Columns per row, so a row's vector is allocated once.
    width: usize,
    last: Snapshot,
}

impl SystemSampler {
    pub const TABLE: &'static str = "system_metrics";

    /// Reads the first snapshot, against which the first sample is taken,
    /// and fixes the CPUs (those online now), the disks (see
    /// [`is_counted_disk`]) and the network interfaces (all of them,
    /// loopback included: the traffic workloads of a single-host experiment
    /// run over `lo`. Bridges, veth pairs and ifb devices are counted
    /// too, so traffic that crosses several of them is counted once per
    /// interface).
    pub fn new(options: SamplerOptions) -> Result<Self, HostError> {
        let mut first = Snapshot::read(None, None)?;
        first.disks.retain(|d| is_counted_disk(&d.name));
        let mut sampler = SystemSampler {
            options,
            cpus: first.stat.cpus.iter().map(|(n, _)| *n).collect(),
            disks: first.disks.iter().map(|d| d.name.clone()).collect(),
            interfaces: first.net.iter().map(|d| d.name.clone()).collect(),
            width: 0,
            last: first,
        };
        sampler.width = sampler.columns().len();
        Ok(sampler)
    }

    pub fn options(&self) -> SamplerOptions {
        self.options
    }

    /// The CPUs with per-CPU columns (if `per_cpu`).
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// The block devices summed in the `disk_*` columns.
    pub fn disks(&self) -> &[String] {
        &self.disks
    }

    /// The interfaces summed in the `net_*` columns.
    pub fn interfaces(&self) -> &[String] {
        &self.interfaces
    }

    /// The columns of [`Self::TABLE`] on this machine, in row order.
    pub fn columns(&self) -> Vec<Column> {
        let mut columns = Columns::default();
        self.emit(&mut columns, 0, &self.last, &self.last);
        columns.0
    }

    /// One row: rates and shares over the time since the previous sample
    /// (or since [`Self::new`]), gauges as they are now. `t_ns` is the
    /// caller's clock (nanoseconds since the trial started); the interval
    /// is measured here with a monotonic clock. A CPU that went offline
    /// gives nulls in its columns. If a file cannot be read, the error is
    /// returned and the next sample spans both intervals.
    pub fn sample<C: MetricCell>(&mut self, t_ns: u64) -> Result<Vec<C>, HostError> {
        let cur = Snapshot::read(Some(&self.disks), Some(&self.interfaces))?;
        let mut cells = Cells(Vec::with_capacity(self.width));
        self.emit(&mut cells, t_ns, &self.last, &cur);
        self.last = cur;
        Ok(cells.0)
    }

    fn emit(&self, sink: &mut impl RowSink, t_ns: u64, prev: &Snapshot, cur: &Snapshot) {
        let ns = u64::try_from(cur.at.saturating_duration_since(prev.at).as_nanos()).unwrap_or(u64::MAX);
        let iv = Interval { prev, cur, ns };
        sink.u64(format_args!("t_ns"), Some(t_ns));
        sink.u64(format_args!("interval_ns"), Some(ns));
        self.emit_cpu(sink, &iv);
        for (column, field) in MEMORY {
            sink.u64(format_args!("{column}"), Some(cur.mem.get(field).unwrap_or(0)));
        }
        for (column, counter) in &VM_RATES {
            sink.f64(format_args!("{column}"), iv.rate(|s| counter.read(&s.vm)));
        }
        // OOM kills are rare events: a count per interval reads better than a rate.
        let oom = Vm::Exact("oom_kill");
        sink.u64(
            format_args!("oom_kills"),
            Some(delta(oom.read(&cur.vm), oom.read(&prev.vm))),
        );
        emit_disks(sink, &iv);
        emit_net(sink, &iv);
    }

    fn emit_cpu(&self, sink: &mut impl RowSink, iv: &Interval<'_>) {
        let all = cpu_shares(Some(&iv.prev.stat.cpu), Some(&iv.cur.stat.cpu));
        for (i, state) in CPU_STATES.iter().enumerate() {
            sink.f64(format_args!("cpu_{state}_pct"), all.map(|s| s[i]));
        }
        if self.options.per_cpu {
            for &n in &self.cpus {
                let shares = cpu_shares(iv.prev.stat.cpu(n), iv.cur.stat.cpu(n));
                for i in PER_CPU_STATES {
                    sink.f64(format_args!("cpu{n}_{}_pct", CPU_STATES[i]), shares.map(|s| s[i]));
                }
            }
        }
        sink.f64(format_args!("ctxt_per_s"), iv.rate(|s| s.stat.ctxt));
        sink.f64(format_args!("forks_per_s"), iv.rate(|s| s.stat.processes));
        sink.u64(format_args!("procs_running"), Some(iv.cur.stat.procs_running));
        sink.u64(format_args!("procs_blocked"), Some(iv.cur.stat.procs_blocked));
    }
}

/// Disk rates summed over the counted disks. `disk_busy_pct` is the busiest
/// disk's share of the interval with I/O in flight (iostat's %util), not a
/// sum: a sum over several disks would have no fixed scale. Capped at 100,
/// since the kernel's millisecond ticks and our clock can disagree by a
/// tick.
fn emit_disks(sink: &mut impl RowSink, iv: &Interval<'_>) {
    let sum = |counter: fn(&DiskStat) -> u64| Interval::device_sum(&iv.prev.disks, &iv.cur.disks, |d| &d.name, counter);
    sink.f64(
        format_args!("disk_read_bytes_per_s"),
        iv.per_s(sum(DiskStat::read_bytes)),
    );
    sink.f64(
        format_args!("disk_write_bytes_per_s"),
        iv.per_s(sum(DiskStat::written_bytes)),
    );
    sink.f64(format_args!("disk_reads_per_s"), iv.per_s(sum(|d| d.reads)));
    sink.f64(format_args!("disk_writes_per_s"), iv.per_s(sum(|d| d.writes)));
    let busiest_ms = iv
        .cur
        .disks
        .iter()
        .filter_map(|c| {
            iv.prev
                .disks
                .iter()
                .find(|p| p.name == c.name)
                .map(|p| delta(c.io_ms, p.io_ms))
        })
        .max()
        .unwrap_or(0);
    let busy = (iv.ns > 0).then(|| (busiest_ms as f64 * 1e6 * 100.0 / iv.ns as f64).min(100.0));
    sink.f64(format_args!("disk_busy_pct"), busy);
}

/// Network rates summed over the interfaces, plus errors and drops in both
/// directions (a congested or shaped link shows up there first).
fn emit_net(sink: &mut impl RowSink, iv: &Interval<'_>) {
    let sum = |counter: fn(&NetDev) -> u64| Interval::device_sum(&iv.prev.net, &iv.cur.net, |d| &d.name, counter);
    sink.f64(format_args!("net_rx_bytes_per_s"), iv.per_s(sum(|d| d.rx_bytes)));
    sink.f64(format_args!("net_tx_bytes_per_s"), iv.per_s(sum(|d| d.tx_bytes)));
    sink.f64(format_args!("net_rx_packets_per_s"), iv.per_s(sum(|d| d.rx_packets)));
    sink.f64(format_args!("net_tx_packets_per_s"), iv.per_s(sum(|d| d.tx_packets)));
    sink.f64(
        format_args!("net_errs_per_s"),
        iv.per_s(sum(|d| d.rx_errs.saturating_add(d.tx_errs))),
    );
    sink.f64(
        format_args!("net_drops_per_s"),
        iv.per_s(sum(|d| d.rx_drop.saturating_add(d.tx_drop))),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(user: u64, idle: u64) -> CpuTimes {
        CpuTimes {
            user,
            idle,
            ..CpuTimes::default()
        }
    }

    #[test]
    fn shares_of_the_ticks_that_passed() {
        let shares = cpu_shares(Some(&times(100, 100)), Some(&times(130, 170))).unwrap();
        assert_eq!(shares[0], 30.0);
        assert_eq!(shares[3], 70.0);
        assert_eq!(
            cpu_shares(Some(&times(1, 1)), Some(&times(1, 1))),
            None,
            "no tick passed"
        );
        assert_eq!(cpu_shares(None, Some(&times(1, 1))), None, "CPU went offline");
        // idle went backwards (a known NO_HZ quirk): that state counts 0.
        let shares = cpu_shares(Some(&times(100, 100)), Some(&times(150, 90))).unwrap();
        assert_eq!((shares[0], shares[3]), (100.0, 0.0));
    }
}
