use exp_syntax::units::Dimension::*;

use super::types::*;

pub const EXPERIMENT: BlockSchema = BlockSchema {
    kind: "experiment",
    doc: "One experiment: its trials are the sweep points × repetitions; the workloads of a trial run concurrently on one clock.",
    labelled: true,
    role: Role::Experiment,
    props: &[
        Prop::with_default("description", Ty::Str, "\"\"", "What the experiment measures, for reports."),
        Prop::with_default("seed", Ty::Int, "1", "Master seed; every trial and workload seed derives from it.")
            .range(0.0, 9_007_199_254_740_991.0),
        Prop::optional("duration", Ty::Quantity(Duration), "Length of every trial. Without it a trial lasts until its workloads end.")
            .at_least(1.0),
        Prop::with_default(
            "repeat",
            Ty::OneOf(&[Ty::Int, Ty::Ctor("until"), Ty::Ctor("until_decided")]),
            "1",
            "Repetitions per sweep point: a count, `until(...)` a confidence-interval width is reached, or `until_decided(...)` every claim is decided.",
        )
        .range(1.0, 1_000_000.0),
        Prop::with_default("pause", Ty::Quantity(Duration), "0s", "Idle time between trials, so one trial's tail does not reach the next.")
            .at_least(0.0),
        Prop::optional(
            "order",
            Ty::Enum(&exp_plan::Order::NAMES),
            "Order the trials run in: `randomized` (rounds of one repetition of every point, the points shuffled with the seed), `interleaved` (the same rounds in point order) or `sequential` (every repetition of a point, then the next). Without it: randomized for a sweep with repetitions, else sequential.",
        ),
    ],
    variants: &[],
    parts: &["sweep", "monitor"],
};

pub const SWEEP: BlockSchema = BlockSchema {
    kind: "sweep",
    doc: "Sweep parameters: each `name = [values]` (or `a..b step s`) is one axis; trials run the cross product. Workloads refer to a parameter by its name.",
    labelled: false,
    role: Role::Sweep,
    props: &[],
    variants: &[],
    parts: &[],
};

pub const MONITOR: BlockSchema = BlockSchema {
    kind: "monitor",
    doc: "Samples system metrics (CPU, memory, vmstat, disk, network, workload processes) into the `system_metrics` table.",
    labelled: false,
    role: Role::Service {
        row_metrics: super::monitor::METRICS,
    },
    props: &[
        Prop::with_default("interval", Ty::Quantity(Duration), "1s", "Sampling interval.").range(10e6, 3600e9),
        Prop::with_default("per_cpu", Ty::Bool, "true", "One row per CPU as well as the machine total."),
        Prop::with_default("processes", Ty::Bool, "true", "CPU and RSS of every workload process."),
    ],
    variants: &[],
    parts: &[],
};
