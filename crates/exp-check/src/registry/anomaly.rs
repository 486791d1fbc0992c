use exp_plan::bounds::*;
use exp_syntax::units::Dimension::*;

use super::types::*;

const CORES: Ty = Ty::List(&Ty::Int);

pub const ANOMALY: BlockSchema = BlockSchema {
    kind: "anomaly",
    doc: "An HPC performance anomaly (after HPAS) run as a C kernel in a supervised child process; its window is the ground-truth label.",
    labelled: true,
    role: Role::Workload {
        shard_unit: "instances",
        shard_count: None,
        metrics: &["achieved_utilization", "bytes_touched", "operations"],
        row_metrics: &[
            RowMetric::new("achieved_utilization", Some(Percent), ("anomaly_timeline", "achieved_utilization_pct"), "The CPU utilization an activation achieved."),
            RowMetric::new("cpu_time", Some(Duration), ("anomaly_timeline", "cpu_time_ns"), "CPU time an activation used."),
            RowMetric::new("peak_rss", Some(Bytes), ("anomaly_timeline", "peak_rss_bytes"), "The largest resident memory of an activation."),
        ],
        natural_end: NaturalEnd::Never,
    },
    props: &[
        Prop::required("kind", Ty::Enum(&[
            "cpuoccupy", "cachecopy", "membw", "memeater", "memleak", "netoccupy", "iometadata", "iobandwidth",
        ]), "Which anomaly."),
        Prop::with_default("cores", CORES, "[0]", "CPUs the kernel's threads are pinned to.").range(ANOMALY_CORES.0, ANOMALY_CORES.1),
    ],
    variants: &[
        Variant {
            name: "cpuoccupy",
            doc: "Arithmetic on random values, closed-loop on thread CPU time, to hold each listed core at `utilization`.",
            props: &[Prop::with_default("utilization", Ty::Quantity(Percent), "100%", "Target utilisation of each core.").range(0.0, 1.0)],
        },
        Variant {
            name: "cachecopy",
            doc: "Two arrays of half the chosen cache's size × `multiplier`, copied into each other.",
            props: &[
                Prop::with_default("cache", Ty::Enum(&["L1", "L2", "L3"]), "L1", "Cache level whose size sets the arrays."),
                Prop::with_default("multiplier", Ty::Float, "1", "Array size relative to the cache.").range(CACHECOPY_MULTIPLIER.0, CACHECOPY_MULTIPLIER.1),
                Prop::with_default("rate", Ty::Quantity(Percent), "100%", "Duty cycle.").range(0.0, 1.0),
            ],
        },
        Variant {
            name: "membw",
            doc: "Memory-bandwidth contention: non-temporal stores writing the transpose of a large matrix.",
            props: &[
                Prop::with_default("buffer", Ty::Quantity(Bytes), "256MiB", "Matrix size.").at_least(ANOMALY_MIN_BYTES),
                Prop::with_default("rate", Ty::Quantity(Percent), "100%", "Duty cycle.").range(0.0, 1.0),
            ],
        },
        Variant {
            name: "memeater",
            doc: "Allocates `buffer`, fills it, grows by the same amount with realloc every `interval`, up to `limit`.",
            props: &[
                Prop::with_default("buffer", Ty::Quantity(Bytes), "35MB", "Growth step.").at_least(ANOMALY_MIN_BYTES),
                Prop::with_default("interval", Ty::Quantity(Duration), "1s", "Time between growth steps.").at_least(MEMEATER_MIN_INTERVAL_NS),
                Prop::with_default("limit", Ty::Quantity(Bytes), "1GiB", "Largest size; preflight checks it against available memory.").at_least(ANOMALY_MIN_BYTES),
            ],
        },
        Variant {
            name: "memleak",
            doc: "Allocates `size` per step at `rate`, fills it and never frees it, up to `limit`.",
            props: &[
                Prop::with_default("size", Ty::Quantity(Bytes), "20MB", "Leak per step.").at_least(ANOMALY_MIN_BYTES),
                Prop::with_default("rate", Ty::Quantity(Rate), "1/s", "Steps per second.").range(MEMLEAK_RATE_PER_S.0, MEMLEAK_RATE_PER_S.1),
                Prop::with_default("limit", Ty::Quantity(Bytes), "1GiB", "Hard limit; preflight checks it against available memory.").at_least(ANOMALY_MIN_BYTES),
            ],
        },
        Variant {
            name: "netoccupy",
            doc: "`ntasks` endpoint pairs sending `message`-sized messages over TCP to a sink.",
            props: &[
                Prop::with_default("ntasks", Ty::Int, "1", "Sender/sink pairs.").range(ANOMALY_TASKS.0, ANOMALY_TASKS.1),
                Prop::with_default("message", Ty::Quantity(Bytes), "100MB", "Message size.").at_least(1.0),
                Prop::optional("bandwidth", Ty::Quantity(Bandwidth), "Send rate per task; unlimited when absent.").at_least(1.0),
                Prop::optional("peer", Ty::Str, "`host:port` of an `expc serve` sink; an in-process loopback sink when absent."),
            ],
        },
        Variant {
            name: "iometadata",
            doc: "`ntasks` workers creating, writing one byte to, closing and (every 10th) deleting files.",
            props: &[
                Prop::with_default("ntasks", Ty::Int, "1", "Workers.").range(ANOMALY_TASKS.0, ANOMALY_TASKS.1),
                Prop::optional("rate", Ty::Quantity(Rate), "File operations per second per worker; as fast as possible when absent.").at_least(IOMETADATA_MIN_RATE_PER_S),
                Prop::optional("dir", Ty::Path, "Directory to work in; a scratch directory in the run directory when absent."),
            ],
        },
        Variant {
            name: "iobandwidth",
            doc: "`ntasks` workers writing a random file of `file_size`, copying it, with fsync.",
            props: &[
                Prop::with_default("ntasks", Ty::Int, "1", "Workers.").range(ANOMALY_TASKS.0, ANOMALY_TASKS.1),
                Prop::with_default("file_size", Ty::Quantity(Bytes), "64MiB", "File size.").at_least(ANOMALY_MIN_BYTES),
                Prop::optional("bandwidth", Ty::Quantity(Bandwidth), "Write rate per worker; unlimited when absent.").at_least(1.0),
                Prop::optional("dir", Ty::Path, "Directory to work in; a scratch directory in the run directory when absent."),
            ],
        },
    ],
    parts: &[],
};
