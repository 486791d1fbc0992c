//! The Plan IR: what `expc plan` prints and `expc run` executes.
//!
//! Rules (see docs/architecture.md):
//! - fully explicit: every default filled in, quantities in integer SI base
//!   units (`_ns`, `_bytes`, `_bit_per_s`), rates in events per second
//!   (`_per_s`), percentages as ratios (`_ratio`, 0.8 for 80 %);
//! - deterministic: same spec and seed give byte-identical JSON (ordered maps,
//!   no hash maps, no clocks);
//! - versioned ([`PLAN_VERSION`]) and traceable to its source (hashes);
//! - compact: each sweep parameter's values (a range as its ends,
//!   `values.rs`) and each workload's variants are stored once, and properties that vary on their own as fields
//!   (`field.rs`); points and trials are derived from them (`sweep.rs`), so
//!   a million trials cost what their distinct property values cost;
//! - partitionable: trials are independent and each workload names its
//!   shardable unit.
//!
//! This crate holds the types, the derivation of points and trials, and
//! reading a plan back with its version and consistency checked.

pub mod bounds;
pub mod claims;
pub mod diff;
pub mod diff_text;
mod dist;
mod field;
mod order;
mod read;
pub mod seeds;
pub mod snapshot;
mod sweep;
mod values;
mod workload;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use dist::{Dist, DistValue, Unit};
pub use field::{Field, FieldMisfit};
pub use order::Order;
pub use read::PlanError;
pub use sweep::{value_indices, variant_index, Combinations};
pub use values::{display_quantity, RangeUnit, ValueRange, Values};
pub use workload::*;

// Kinds added by `cargo xtask new-kind` keep their plan struct in a module
// of their own, re-exported here like `workload.rs`'s.
// kind-list: plan modules

/// Bumped whenever the meaning or shape of the plan changes incompatibly.
/// Version 2: parameters carry their values, workloads their variants;
/// points and trials are derived, no longer listed. Version 3: properties
/// that vary on their own are fields of the variants. Version 4: a
/// parameter swept over a range stores the range, not its values. Version
/// 5: a fleet's `warmup` is a share or a duration (`{"ratio": …}` or
/// `{"ns": …}`), no longer `warmup_ratio`. Version 6: a fleet's
/// `lateness_bound_ns` may be null (the runtime derives it from the gap).
/// Version 7: `repeat.order` says in which order the trials run (read as
/// `sequential`, the order before, when absent), and `repeat.stop` names
/// its `statistic`.
pub const PLAN_VERSION: u32 = 7;

/// Most trials one plan may hold.
pub const MAX_TRIALS: u64 = 1_000_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub plan_version: u32,
    /// `expc <version>` of the compiler that made the plan.
    pub compiler: String,
    pub source: Source,
    pub experiment: Experiment,
    pub repeat: Repeat,
    /// Sweep parameters in declaration order, each with its values. The sweep
    /// points are their cross product, numbered with the first parameter
    /// outermost ([`Plan::point`]); trials are numbered point-major,
    /// repetition-minor ([`Plan::trial`]) and run in `repeat.order`
    /// ([`Plan::run_order`]).
    pub parameters: Vec<Parameter>,
    /// The experiment's workloads in spec order, each lowered once per
    /// combination of the values of the parameters it names.
    pub workloads: Vec<Variants<Workload>>,
    /// The system monitor, lowered like a workload; `None` without a
    /// `monitor` block.
    pub monitor: Option<Variants<Monitor>>,
    /// The claims of the experiment's `expect` blocks, in spec order
    /// ([`claims`]); absent from plans without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<claims::Claim>,
}

/// A block lowered once per combination of the values of the sweep
/// parameters its properties name, except the properties stored as
/// [`Field`]s. With parameters `a` (3 values) and `b` (2 values) named,
/// variant `2 * ia + ib` holds at every point where `a` has its value `ia`
/// and `b` its value `ib`; a block that names no parameter has one. The
/// block at a point is that variant with each field's value at the point
/// ([`Variants::at`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variants<T> {
    /// Names of the parameters the block names, in parameter order.
    pub parameters: Vec<String>,
    /// One per combination of those parameters' values, the first parameter
    /// outermost, each with its fields at their first values.
    pub variants: Vec<T>,
    /// Properties that vary on their own, each with a value per combination
    /// of the parameters it names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The root spec as named on the command line.
    pub root: String,
    /// SHA-256 over every source file (root, imports, stdlib modules) in load order.
    pub sha256: String,
    pub files: Vec<SourceFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    pub name: String,
    pub sha256: String,
}

/// Where a plan node came from in the spec, for runtime diagnostics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Origin {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub name: String,
    pub description: String,
    pub seed: u64,
    /// Trial length; `None` when every workload ends by itself.
    pub duration_ns: Option<u64>,
    /// Idle time between trials.
    pub pause_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    /// Repetitions planned per sweep point (the maximum when `stop` is set).
    pub max: u32,
    pub stop: Option<StopRule>,
    /// The order the trials run in ([`Plan::run_order`]).
    #[serde(default)]
    pub order: Order,
    /// `repeat = until_decided(...)`: repeat each point until every claim
    /// ([`Plan::claims`]) is supported or refuted, at most `max` times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_decided: Option<claims::DecideRule>,
}

/// `repeat = until(...)`: the runtime stops repeating a sweep point once the
/// confidence interval of `metric`'s `statistic` (over the point's
/// repetitions) is narrower than `width` × that statistic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopRule {
    pub metric: String,
    /// Mean (Student's t interval) or median (order-statistic interval);
    /// plans before version 7 knew only the mean.
    #[serde(default)]
    pub statistic: Statistic,
    pub confidence_ratio: f64,
    pub width_ratio: f64,
    pub min: u32,
}

/// What `repeat until` estimates over a point's repetitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    #[default]
    Mean,
    Median,
}

impl Statistic {
    pub fn as_str(self) -> &'static str {
        match self {
            Statistic::Mean => "mean",
            Statistic::Median => "median",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parameter {
    pub name: String,
    /// Value type, e.g. `size`, `duration`, `dist<duration>`, `int`.
    pub ty: String,
    /// The values in the order the spec lists them, or a range (ascending).
    pub values: Values,
}

/// One sweep point with its workloads, materialised by [`Plan::point`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    pub index: u32,
    /// Parameter name → value at this point.
    pub values: BTreeMap<String, PointValue>,
    pub workloads: Vec<Workload>,
    pub monitor: Option<Monitor>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointValue {
    /// The value as the spec wrote it, for reports (`pareto(shape = 3, median = 200ms)`).
    pub label: String,
    pub value: Value,
}

/// A typed value of a sweep parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    String(String),
    Symbol(String),
    DurationNs(u64),
    Bytes(u64),
    BitPerS(u64),
    PerS(f64),
    Ratio(f64),
    Dist(DistValue),
    List(Vec<Value>),
    Record(BTreeMap<String, Value>),
    /// A constructor value such as `json(size = 512B)`, lowered like a property.
    Object(BTreeMap<String, Value>),
}

/// One trial, derived by [`Plan::trial`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    pub trial: u32,
    pub point: u32,
    pub repetition: u32,
    /// `seeds::derive(experiment seed, "trial/{point}/{repetition}")`.
    pub seed: u64,
    /// Workload name → seed of its random streams in this trial:
    /// `seeds::derive(seed, name)`.
    pub seeds: BTreeMap<String, u64>,
}
