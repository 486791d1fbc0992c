//! The Plan IR: what `expc plan` prints and `expc run` executes.
//!
//! Rules (see docs/architecture.md):
//! - fully explicit: every default filled in, quantities in integer SI base
//!   units (`_ns`, `_bytes`, `_bit_per_s`), rates in events per second
//!   (`_per_s`), percentages as ratios (`_ratio`, 0.8 for 80 %);
//! - deterministic: same spec and seed give byte-identical JSON (ordered maps,
//!   no hash maps, no clocks);
//! - versioned ([`PLAN_VERSION`]) and traceable to its source (hashes);
//! - partitionable: trials are independent and each workload names its
//!   shardable unit.
//!
//! This crate holds types only, shared by compiler and runtime.

mod dist;
mod workload;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use dist::{Dist, DistValue, Unit};
pub use workload::*;

/// Bumped whenever the meaning or shape of the plan changes incompatibly.
pub const PLAN_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub plan_version: u32,
    /// `expc <version>` of the compiler that made the plan.
    pub compiler: String,
    pub source: Source,
    pub experiment: Experiment,
    pub repeat: Repeat,
    /// Sweep parameters in declaration order.
    pub parameters: Vec<Parameter>,
    /// Sweep points (the cross product of all parameters), each with its
    /// workloads fully resolved.
    pub points: Vec<Point>,
    /// Point-major, repetition-minor; `trial` is dense from 0.
    pub trials: Vec<Trial>,
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
}

/// `repeat = until(...)`: the runtime stops repeating a sweep point once the
/// confidence interval of `metric`'s mean is narrower than `width` × mean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopRule {
    pub metric: String,
    pub confidence_ratio: f64,
    pub width_ratio: f64,
    pub min: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parameter {
    pub name: String,
    /// Value type, e.g. `size`, `duration`, `dist<duration>`, `int`.
    pub ty: String,
}

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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    pub trial: u32,
    pub point: u32,
    pub repetition: u32,
    pub seed: u64,
    /// Workload name → seed of its random streams in this trial.
    pub seeds: BTreeMap<String, u64>,
}

impl Plan {
    pub fn point(&self, trial: &Trial) -> Option<&Point> {
        self.points.get(trial.point as usize)
    }
}
