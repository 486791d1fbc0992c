use exp_syntax::units::Dimension::*;

use exp_diagnostics::limits::SHAPE_RANGE;

use super::types::*;

/// A parameter of a function: described, defaulted and bounded exactly like
/// a block's property.
pub type DistParam = Prop;

/// Distribution parameters are unit-polymorphic: `Value` parameters share the
/// unit of the distribution, `Shape` ones are plain numbers.
pub const VALUE: Ty = Ty::Dist(None);

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FnKind {
    /// Returns a distribution; `Ty::Dist(None)` parameters carry its unit.
    Distribution,
    /// Returns a constructor value checked against `Ty::Ctor(name)`.
    Constructor,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FnSchema {
    pub name: &'static str,
    pub kind: FnKind,
    pub doc: &'static str,
    pub params: &'static [DistParam],
}

/// How `paths` assigns connections to paths.
pub const ASSIGNMENTS: &[&str] = &["round_robin", "random", "by_rtt"];

const fn p(name: &'static str, ty: Ty, doc: &'static str) -> DistParam {
    Prop::required(name, ty, doc)
}

/// A shape parameter: within `SHAPE_RANGE`, outside which the distribution
/// underflows or overflows `f64`.
const fn shape(doc: &'static str) -> DistParam {
    Prop::required("shape", Ty::Float, doc).range(SHAPE_RANGE.0, SHAPE_RANGE.1)
}

const fn opt(name: &'static str, ty: Ty, doc: &'static str) -> DistParam {
    Prop::optional(name, ty, doc)
}

const fn def(name: &'static str, ty: Ty, default: &'static str, doc: &'static str) -> DistParam {
    Prop::with_default(name, ty, default, doc)
}

const SENSORS: &[&str] = &[
    "temperature",
    "humidity",
    "pressure",
    "vibration",
    "acceleration",
    "power",
    "voltage",
    "current",
    "co2",
    "light",
];

pub const FUNCTIONS: &[FnSchema] = &[
    FnSchema { name: "constant", kind: FnKind::Distribution, doc: "Always `value`.", params: &[p("value", VALUE, "The value.")] },
    FnSchema { name: "uniform", kind: FnKind::Distribution, doc: "Uniform on [min, max].", params: &[p("min", VALUE, "Lower bound."), p("max", VALUE, "Upper bound.")] },
    FnSchema { name: "normal", kind: FnKind::Distribution, doc: "Normal (values below zero are clamped to zero when drawn for durations and sizes).", params: &[p("mean", VALUE, "Mean."), p("sd", VALUE, "Standard deviation.")] },
    FnSchema {
        name: "lognormal",
        kind: FnKind::Distribution,
        doc: "`location + scale · exp(shape · Z)`: shape σ, scale the median of the unshifted part, location a shift (as in latency-injection tools and scipy).",
        params: &[shape("σ of the underlying normal."), p("scale", VALUE, "e^μ, the median when location is 0."), opt("location", VALUE, "Shift; 0 when absent.")],
    },
    FnSchema { name: "exponential", kind: FnKind::Distribution, doc: "Exponential with the given mean.", params: &[p("mean", VALUE, "Mean.")] },
    FnSchema {
        name: "pareto",
        kind: FnKind::Distribution,
        doc: "Pareto type I with `shape` and one of `scale` (the minimum), `median` (scale = median / 2^(1/shape)) or `mean` (scale = mean · (shape − 1) / shape, for shape > 1).",
        params: &[
            shape("Tail index α."),
            opt("scale", VALUE, "Minimum value x_m."),
            opt("median", VALUE, "Median; sets the scale."),
            opt("mean", VALUE, "Mean; sets the scale (shape > 1: the mean is infinite otherwise)."),
        ],
    },
    FnSchema { name: "weibull", kind: FnKind::Distribution, doc: "Weibull.", params: &[shape("Shape k."), p("scale", VALUE, "Scale λ.")] },
    FnSchema { name: "gamma", kind: FnKind::Distribution, doc: "Gamma.", params: &[shape("Shape k."), p("scale", VALUE, "Scale θ.")] },
    FnSchema { name: "poisson", kind: FnKind::Distribution, doc: "Poisson counts.", params: &[p("mean", Ty::Float, "Mean λ.")] },
    FnSchema { name: "geometric", kind: FnKind::Distribution, doc: "Failures before the first success, from 0.", params: &[p("p", Ty::Float, "Success probability in (0, 1].")] },
    FnSchema {
        name: "empirical",
        kind: FnKind::Distribution,
        doc: "Resamples the values of a file: one value per line (`12.5ms`, `2KiB` or a bare number), `#` comments. The values are copied into the plan.",
        params: &[p("file", Ty::Path, "The file, relative to the spec.")],
    },
    FnSchema {
        name: "until",
        kind: FnKind::Constructor,
        doc: "Repeat each point until the `ci` confidence interval of the `statistic` (mean or median over its repetitions) of metric `of` is narrower than `width` × that statistic, between `min` and `max` repetitions.",
        params: &[
            p("ci", Ty::Quantity(Percent), "Confidence level, e.g. 95%."),
            p("width", Ty::Quantity(Percent), "Interval width relative to the statistic, e.g. 5%."),
            p("of", Ty::Str, "Metric name, e.g. \"ack_latency_p99\"."),
            p("max", Ty::Int, "Most repetitions (planned)."),
            def("min", Ty::Int, "3", "Fewest repetitions."),
            def(
                "statistic",
                Ty::Enum(&["mean", "median"]),
                "mean",
                "`mean` (Student's t interval) or `median` (distribution-free order-statistic interval; a 95% interval needs 6 repetitions).",
            ),
        ],
    },
    FnSchema {
        name: "until_decided",
        kind: FnKind::Constructor,
        doc: "Repeat each point until every claim of the experiment's `expect` blocks is decided (supported or refuted, not inconclusive), between `min` and `max` repetitions.",
        params: &[
            p("max", Ty::Int, "Most repetitions (planned)."),
            def("min", Ty::Int, "3", "Fewest repetitions before the claims may stop a point."),
        ],
    },
    FnSchema {
        name: "json",
        kind: FnKind::Constructor,
        doc: "A JSON sensor record (device id, sequence number, send time and the named fields) padded to exactly `size`.",
        params: &[
            p("size", Ty::Quantity(Bytes), "Exact payload size.").at_least(1.0),
            def("fields", Ty::List(&Ty::Enum(SENSORS)), "[temperature]", "Sensor fields."),
        ],
    },
    FnSchema {
        name: "raw",
        kind: FnKind::Constructor,
        doc: "Random bytes (with the device id, sequence number and send time in the first 24 bytes) of a size drawn per message.",
        params: &[p("size", Ty::Dist(Some(Bytes)), "Payload size.")],
    },
    FnSchema {
        name: "trace",
        kind: FnKind::Constructor,
        doc: "A Tmix connection-vector file, in the original or the alternate format.",
        params: &[
            p("file", Ty::Path, "The file, relative to the spec."),
            def("format", Ty::Enum(&["auto", "original", "alternate"]), "auto", "File format."),
        ],
    },
    FnSchema {
        name: "synthetic",
        kind: FnKind::Constructor,
        doc: "Connection vectors synthesized from distributions (Harpoon/Swing style).",
        params: &[
            p("connections", Ty::Int, "Number of connections.")
                .range(1.0, exp_diagnostics::limits::MAX_SYNTHETIC_CONNECTIONS as f64),
            p("arrival", Ty::Dist(Some(Duration)), "Gap between connection starts."),
            def("epochs", Ty::Dist(None), "geometric(p = 0.3)", "Request/response exchanges per connection, plus one."),
            p("request", Ty::Dist(Some(Bytes)), "Initiator data unit size."),
            p("response", Ty::Dist(Some(Bytes)), "Acceptor data unit size."),
            def("server_time", Ty::Dist(Some(Duration)), "constant(0s)", "Acceptor time before a response."),
            def("think_time", Ty::Dist(Some(Duration)), "constant(0s)", "Initiator time between exchanges."),
            def("rtt", Ty::Dist(Some(Duration)), "constant(0s)", "Connection RTT written to `r` lines."),
            def("window", Ty::Quantity(Bytes), "64KiB", "Receiver window written to `w` lines.")
                .at_least(exp_plan::bounds::RECEIVER_WINDOW_MIN_BYTES),
        ],
    },
    FnSchema {
        name: "paths",
        kind: FnKind::Constructor,
        doc: "`count` paths of fixed RTTs, as in a testbed: each connection takes a path whatever its own RTT (`assign`).",
        params: &[
            p("count", Ty::Int, "Number of paths.").range(exp_plan::bounds::PATHS.0, exp_plan::bounds::PATHS.1),
            def("rtts", Ty::List(&Ty::Quantity(Duration)), "[]", "RTT of each path, `count` of them; the trace's RTT quantiles when empty and no `distribution`.")
                .at_least(0.0),
            opt("distribution", Ty::Dist(Some(Duration)), "Draw the path RTTs from this distribution (with the trial's seed) instead."),
            def("assign", Ty::Enum(ASSIGNMENTS), "round_robin", "Which path a connection takes: round_robin (in start order), random (seeded), or by_rtt (grouped by its own RTT)."),
        ],
    },
];

pub fn function(name: &str) -> Option<&'static FnSchema> {
    FUNCTIONS.iter().find(|f| f.name == name)
}
