//! The monitor's system metrics as claims read them: one row per sample of
//! the `system_metrics` table (exp-host's `SystemSampler`), each metric
//! named by its column. The unit follows the column's suffix, as exp-claims
//! reads it: `_pct` a percentage, `_bytes_per_s` a bandwidth (bytes/s, so
//! ×8 into bit/s), `_bytes` a size, `_per_s` a rate, anything else a plain
//! number. The per-CPU columns (`cpu1_user_pct`) depend on the machine and
//! are not metrics of claims.

use exp_syntax::units::Dimension::{self, *};

use super::types::RowMetric;

const TABLE: &str = "system_metrics";

const fn metric(name: &'static str, dimension: Option<Dimension>, doc: &'static str) -> RowMetric {
    RowMetric::new(name, dimension, (TABLE, name), doc)
}

/// Every metric, in the table's column order.
pub const METRICS: &[RowMetric] = &[
    metric(
        "cpu_user_pct",
        Some(Percent),
        "Share of all CPUs' time in user mode over the sample's interval.",
    ),
    metric(
        "cpu_nice_pct",
        Some(Percent),
        "Share of all CPUs' time in user mode at low priority.",
    ),
    metric(
        "cpu_system_pct",
        Some(Percent),
        "Share of all CPUs' time in the kernel.",
    ),
    metric("cpu_idle_pct", Some(Percent), "Share of all CPUs' time idle."),
    metric(
        "cpu_iowait_pct",
        Some(Percent),
        "Share of all CPUs' time idle with I/O outstanding.",
    ),
    metric(
        "cpu_irq_pct",
        Some(Percent),
        "Share of all CPUs' time serving interrupts.",
    ),
    metric(
        "cpu_softirq_pct",
        Some(Percent),
        "Share of all CPUs' time serving soft interrupts.",
    ),
    metric(
        "cpu_steal_pct",
        Some(Percent),
        "Share of all CPUs' time taken by the hypervisor.",
    ),
    metric("ctxt_per_s", Some(Rate), "Context switches per second."),
    metric("forks_per_s", Some(Rate), "Processes created per second."),
    metric("procs_running", None, "Runnable tasks at the sample (the run queue)."),
    metric("procs_blocked", None, "Tasks blocked on I/O at the sample."),
    metric("mem_total_bytes", Some(Bytes), "MemTotal at the sample."),
    metric("mem_free_bytes", Some(Bytes), "MemFree at the sample."),
    metric("mem_available_bytes", Some(Bytes), "MemAvailable at the sample."),
    metric("mem_buffers_bytes", Some(Bytes), "Buffers at the sample."),
    metric(
        "mem_cached_bytes",
        Some(Bytes),
        "The page cache (Cached) at the sample.",
    ),
    metric("mem_shmem_bytes", Some(Bytes), "Shmem at the sample."),
    metric("mem_slab_bytes", Some(Bytes), "Slab at the sample."),
    metric(
        "mem_anon_bytes",
        Some(Bytes),
        "Anonymous memory (AnonPages) at the sample.",
    ),
    metric("mem_dirty_bytes", Some(Bytes), "Dirty page cache at the sample."),
    metric("swap_total_bytes", Some(Bytes), "SwapTotal at the sample."),
    metric("swap_free_bytes", Some(Bytes), "SwapFree at the sample."),
    metric(
        "pgfault_per_s",
        Some(Rate),
        "Page faults per second, major ones included.",
    ),
    metric("pgmajfault_per_s", Some(Rate), "Major page faults per second."),
    metric("pgpgin_per_s", Some(Rate), "KiB read from block devices per second."),
    metric("pgpgout_per_s", Some(Rate), "KiB written to block devices per second."),
    metric("pswpin_per_s", Some(Rate), "Pages swapped in per second."),
    metric("pswpout_per_s", Some(Rate), "Pages swapped out per second."),
    metric("pgscan_kswapd_per_s", Some(Rate), "Pages scanned by kswapd per second."),
    metric(
        "pgscan_direct_per_s",
        Some(Rate),
        "Pages scanned by direct reclaim per second.",
    ),
    metric("pgsteal_per_s", Some(Rate), "Pages reclaimed per second."),
    metric("allocstall_per_s", Some(Rate), "Allocation stalls per second."),
    metric("compact_stall_per_s", Some(Rate), "Compaction stalls per second."),
    metric(
        "workingset_refault_per_s",
        Some(Rate),
        "Refaults of recently evicted pages per second.",
    ),
    metric("oom_kills", None, "OOM kills in the sample's interval."),
    metric(
        "disk_read_bytes_per_s",
        Some(Bandwidth),
        "Bytes read from the counted disks per second.",
    ),
    metric(
        "disk_write_bytes_per_s",
        Some(Bandwidth),
        "Bytes written to the counted disks per second.",
    ),
    metric("disk_reads_per_s", Some(Rate), "Reads completed per second."),
    metric("disk_writes_per_s", Some(Rate), "Writes completed per second."),
    metric(
        "disk_busy_pct",
        Some(Percent),
        "The busiest disk's share of the interval with I/O in flight.",
    ),
    metric(
        "net_rx_bytes_per_s",
        Some(Bandwidth),
        "Bytes received per second, over every interface.",
    ),
    metric(
        "net_tx_bytes_per_s",
        Some(Bandwidth),
        "Bytes sent per second, over every interface.",
    ),
    metric("net_rx_packets_per_s", Some(Rate), "Packets received per second."),
    metric("net_tx_packets_per_s", Some(Rate), "Packets sent per second."),
    metric("net_errs_per_s", Some(Rate), "Receive and send errors per second."),
    metric("net_drops_per_s", Some(Rate), "Receive and send drops per second."),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule exp-claims reads the columns by.
    fn by_suffix(name: &str) -> Option<Dimension> {
        if name.ends_with("_pct") {
            Some(Percent)
        } else if name.ends_with("_bytes_per_s") {
            Some(Bandwidth)
        } else if name.ends_with("_bytes") {
            Some(Bytes)
        } else if name.ends_with("_per_s") {
            Some(Rate)
        } else {
            None
        }
    }

    #[test]
    fn each_unit_follows_the_columns_suffix() {
        for m in METRICS {
            assert_eq!(m.dimension, by_suffix(m.name), "{}", m.name);
            assert_eq!((m.table, m.column), (TABLE, m.name));
        }
    }
}
