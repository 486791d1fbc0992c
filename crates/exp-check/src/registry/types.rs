use exp_syntax::units::Dimension;

/// The type of a property or argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ty {
    Int,
    Float,
    Bool,
    Str,
    /// A file or directory path, resolved relative to the spec that names it.
    Path,
    /// A number with a unit of this dimension.
    Quantity(Dimension),
    /// One of these names.
    Enum(&'static [&'static str]),
    List(&'static Ty),
    /// A distribution of values of this dimension (`None`: dimensionless counts).
    Dist(Option<Dimension>),
    /// The value of this constructor call, e.g. `json(...)`.
    Ctor(&'static str),
    /// Any of these.
    OneOf(&'static [Ty]),
    /// `start..end` of this dimension.
    Range(Dimension),
}

impl Ty {
    /// How the type reads in messages and docs.
    pub fn describe(&self) -> String {
        match self {
            Ty::Int => "integer".into(),
            Ty::Float => "number".into(),
            Ty::Bool => "boolean".into(),
            Ty::Str => "string".into(),
            Ty::Path => "path".into(),
            Ty::Quantity(d) => d.name().into(),
            Ty::Enum(members) => format!("one of {}", members.join(", ")),
            Ty::List(inner) => format!("list of {}", inner.describe()),
            Ty::Dist(Some(d)) => format!("distribution of {}s", d.name()),
            Ty::Dist(None) => "distribution of counts".into(),
            Ty::Ctor(name) => format!("{name}(…)"),
            Ty::OneOf(options) => {
                let words: Vec<String> = options.iter().map(Ty::describe).collect();
                words.join(" | ")
            }
            Ty::Range(d) => format!("range of {}s", d.name()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Default {
    /// Must be given.
    Required,
    /// May be left out; the plan says `null`.
    Optional,
    /// The default, written in exp syntax exactly as a user would write it.
    Value(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prop {
    pub name: &'static str,
    pub ty: Ty,
    pub default: Default,
    /// Inclusive bounds in base units (ns, bytes, bit/s, 1/s, ratio); of
    /// a `OneOf`, they bound its first alternative only.
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// A check of the lowered value beyond its type and bounds, for the
    /// generic lowering of plan fields (`field.rs`); a whole block's value
    /// gets it from its kind's checks (`workload.rs`).
    pub rule: Option<ValueRule>,
    pub doc: &'static str,
}

/// A check of a property's lowered value that its type and bounds do not
/// express, named by the registry so lowering stays generic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueRule {
    /// A distribution of gaps whose mean leaves a device at most 1,000
    /// messages per second (E0606).
    DeviceGap,
}

impl Prop {
    pub const fn required(name: &'static str, ty: Ty, doc: &'static str) -> Prop {
        Prop {
            name,
            ty,
            default: Default::Required,
            min: None,
            max: None,
            rule: None,
            doc,
        }
    }

    pub const fn optional(name: &'static str, ty: Ty, doc: &'static str) -> Prop {
        Prop {
            name,
            ty,
            default: Default::Optional,
            min: None,
            max: None,
            rule: None,
            doc,
        }
    }

    pub const fn with_default(name: &'static str, ty: Ty, default: &'static str, doc: &'static str) -> Prop {
        Prop {
            name,
            ty,
            default: Default::Value(default),
            min: None,
            max: None,
            rule: None,
            doc,
        }
    }

    pub const fn range(mut self, min: f64, max: f64) -> Prop {
        self.min = Some(min);
        self.max = Some(max);
        self
    }

    pub const fn at_least(mut self, min: f64) -> Prop {
        self.min = Some(min);
        self
    }

    pub const fn rule(mut self, rule: ValueRule) -> Prop {
        self.rule = Some(rule);
        self
    }

    /// The bounds as the reference tables and editors show them, in the
    /// property's own unit (`10ms – 1h`, `≥ 1`); empty when unbounded.
    pub fn range_text(&self) -> String {
        let show = |x: f64| match self.ty {
            Ty::Quantity(d) | Ty::List(&Ty::Quantity(d)) => crate::value::display_quantity(d, x),
            Ty::OneOf([Ty::Quantity(d), ..]) => crate::value::display_quantity(*d, x),
            _ => format!("{x}"),
        };
        match (self.min, self.max) {
            (Some(a), Some(b)) => format!("{} – {}", show(a), show(b)),
            (Some(a), None) => format!("≥ {}", show(a)),
            (None, Some(b)) => format!("≤ {}", show(b)),
            (None, None) => String::new(),
        }
    }
}

/// What a block is for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Role {
    /// The top-level `experiment`.
    Experiment,
    /// `sweep { name = [values] }`: free-form parameter names.
    Sweep,
    /// A per-trial service (`monitor`), with the row metrics claims read
    /// from its table (`monitor.cpu_user_pct`).
    Service { row_metrics: &'static [RowMetric] },
    /// A sub-block lowered as a nested object of its parent (`broker`).
    Part,
    /// Something that runs in a trial, with a time window.
    Workload {
        /// What `--shard` splits it by, and the property counting them.
        shard_unit: &'static str,
        shard_count: Option<&'static str>,
        /// Metric names `repeat = until(of = ...)` can refer to: one
        /// value per trial (`value(…)` in claims).
        metrics: &'static [&'static str],
        /// Metrics with one value per row of a table, which claims'
        /// statistics (`p99(…)`, `share(…)`) summarise per trial.
        row_metrics: &'static [RowMetric],
        natural_end: NaturalEnd,
    },
}

/// A metric measured once per row of a workload's table (a message, a
/// connection, an activation), for the statistics of claims.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowMetric {
    pub name: &'static str,
    /// `None`: a plain number.
    pub dimension: Option<Dimension>,
    /// Where the rows are: table and column (exp-results' schemas).
    pub table: &'static str,
    pub column: &'static str,
    pub doc: &'static str,
}

impl RowMetric {
    pub const fn new(
        name: &'static str,
        dimension: Option<Dimension>,
        (table, column): (&'static str, &'static str),
        doc: &'static str,
    ) -> RowMetric {
        RowMetric {
            name,
            dimension,
            table,
            column,
            doc,
        }
    }
}

/// Whether a workload ends by itself when it has no `for`/`until`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NaturalEnd {
    Never,
    Always,
    /// When any of these properties is set.
    When(&'static [&'static str]),
}

/// One case of a block with a discriminating `kind` property (anomalies).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variant {
    pub name: &'static str,
    pub doc: &'static str,
    pub props: &'static [Prop],
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockSchema {
    pub kind: &'static str,
    pub doc: &'static str,
    pub labelled: bool,
    pub role: Role,
    pub props: &'static [Prop],
    /// Non-empty: the block has a required `kind` property choosing one of
    /// these, each adding its own properties.
    pub variants: &'static [Variant],
    /// Block kinds allowed inside besides the workloads an experiment
    /// holds, which [`BlockSchema::children`] adds from the registry.
    pub parts: &'static [&'static str],
}

impl BlockSchema {
    /// Block kinds allowed inside: its parts, and in an experiment every
    /// workload kind of the registry.
    pub fn children(&self) -> Vec<&'static str> {
        let mut children = self.parts.to_vec();
        if matches!(self.role, Role::Experiment) {
            let workloads = super::BLOCKS.iter().filter(|b| matches!(b.role, Role::Workload { .. }));
            children.extend(workloads.map(|b| b.kind));
        }
        children
    }

    /// The row metrics claims summarise: a workload's, or the monitor's.
    pub fn row_metrics(&self) -> &'static [RowMetric] {
        match self.role {
            Role::Workload { row_metrics, .. } | Role::Service { row_metrics } => row_metrics,
            _ => &[],
        }
    }

    /// A workload's trial metrics (one value per trial); none for others.
    pub fn trial_metrics(&self) -> &'static [&'static str] {
        match self.role {
            Role::Workload { metrics, .. } => metrics,
            _ => &[],
        }
    }

    pub fn variant(&self, name: &str) -> Option<&'static Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// The properties a block of this kind accepts: its own, the timing
    /// properties of a workload, and those of the variant named by `kind`.
    /// Without a known variant (not written literally, or misspelt), every
    /// variant's properties, the first definition of a shared name winning.
    pub fn accepted_props(&self, variant: Option<&str>) -> Vec<Prop> {
        let mut props: Vec<Prop> = self.props.to_vec();
        if matches!(self.role, Role::Workload { .. }) {
            props.extend_from_slice(super::TIMING);
        }
        match variant.and_then(|name| self.variant(name)) {
            Some(variant) => props.extend_from_slice(variant.props),
            None => {
                for prop in self.variants.iter().flat_map(|v| v.props) {
                    if !props.iter().any(|p| p.name == prop.name) {
                        props.push(*prop);
                    }
                }
            }
        }
        props
    }
}
