use exp_syntax::units::Dimension::*;

use super::types::*;

pub const STRUCTURES: &[&str] = &["atbt", "ab", "blk_seq", "blk_conc"];

pub const TRAFFIC: BlockSchema = BlockSchema {
    kind: "traffic",
    doc: "TCP connections replayed from Tmix connection vectors (or synthesized) under a structure model, with RTT emulation, on real sockets.",
    labelled: true,
    role: Role::Workload {
        shard_unit: "connections",
        shard_count: None,
        metrics: &[
            "duration",
            "duration_p50",
            "duration_p90",
            "duration_p99",
            "response_time",
            "response_time_p50",
            "response_time_p90",
            "response_time_p99",
            "active_connections",
            "throughput",
            "connections",
            "failed_connections",
        ],
        row_metrics: &[
            RowMetric::new("duration", Some(Duration), ("traffic_connections", "duration_ns"), "A connection's duration, from its start to its end."),
            RowMetric::new("response_time", Some(Duration), ("traffic_epochs", "response_time_ns"), "An epoch's response time: request's first byte sent to response's last byte received."),
            RowMetric::new("rtt_achieved", Some(Duration), ("traffic_connections", "tcp_rtt_ns"), "The kernel's smoothed round-trip time of a connection at its end."),
            RowMetric::new("window_throughput", Some(Bandwidth), ("traffic_throughput", "bytes"), "One row per active window (`every`/`active`; the whole run without a period): the bytes both directions carried in the window's measured intervals over their time, as the trial metric `throughput` counts them over the trial."),
        ],
        natural_end: NaturalEnd::Always,
    },
    props: &[
        Prop::required(
            "vectors",
            Ty::OneOf(&[Ty::Ctor("trace"), Ty::Ctor("synthetic")]),
            "Connection vectors: `trace(\"file.cvec\")` or `synthetic(...)`.",
        ),
        Prop::with_default("structure", Ty::Enum(STRUCTURES), "atbt", "Structure model: atbt (as traced), ab (no think/server times), blk_seq, blk_conc."),
        Prop::with_default(
            "rtt",
            Ty::OneOf(&[Ty::Enum(&["none", "mean", "per_connection"]), Ty::Ctor("paths"), Ty::Dist(Some(Duration))]),
            "none",
            "RTT emulation in the packet path: none, mean (one RTT for all), per_connection (each its own `r`), paths(count = n) (n fixed paths, as in a testbed), or a distribution (constant(20ms)).",
        ),
        Prop::optional("window", Ty::Quantity(Bytes), "Receiver window for all connections; from the trace's `w` lines when absent.")
            .at_least(exp_plan::bounds::RECEIVER_WINDOW_MIN_BYTES),
        Prop::with_default("network", Ty::Enum(&["loopback", "namespaces"]), "loopback", "Where initiator and acceptor run; RTT emulation and bottlenecks need namespaces (root)."),
        Prop::optional("bottleneck", Ty::Quantity(Bandwidth), "Rate of a constrained link between the sides.").at_least(1000.0),
        Prop::with_default("queue", Ty::Quantity(Bytes), "1MiB", "Bottleneck queue size.").at_least(1500.0),
        Prop::with_default("apply_loss", Ty::Bool, "false", "Apply the trace's `l` loss rates per direction."),
        Prop::optional("measure", Ty::Range(Duration), "Measurement window, e.g. `10min..50min`; rows outside are marked."),
        Prop::with_default("interval", Ty::Quantity(Duration), "1s", "Interval of the throughput and active-connection series.").at_least(1e6),
        Prop::with_default("source_addresses", Ty::Int, "8", "127.0.0.x source addresses to spread connections over.").range(1.0, 254.0),
        Prop::with_default("lenient", Ty::Bool, "false", "Skip malformed connections in the trace (counted) instead of failing."),
        Prop::optional("server", Ty::Str, "`host:port` of an `expc serve` acceptor; in-process when absent."),
        Prop::optional(
            "secret_env",
            Ty::Str,
            "Name of the environment variable holding the secret `expc serve` at `server` uses (the value is never stored); unsigned preambles without it.",
        ),
    ],
    variants: &[],
    parts: &[],
};
