//! The `trials` table: one row per trial that ran, with its sweep point as
//! typed columns, so every measurement can be joined to its parameters.

use std::collections::HashSet;

use exp_plan::{Plan, Value, Values};
use exp_results::{Cell, DType, RowError, Schema};

/// How a sweep parameter becomes a column: its name carries the unit.
#[derive(Debug, Clone, PartialEq)]
struct SweepColumn {
    parameter: String,
    name: String,
    dtype: DType,
}

/// The columns every trials table has, which no sweep column may take.
const FIXED_COLUMNS: [&str; 11] = [
    "point",
    "repetition",
    "seed",
    "start_unix_ns",
    "end_unix_ns",
    "duration_ns",
    "status",
    "contended",
    "verdict",
    "validity_codes",
    "error",
];

pub struct TrialsTable {
    schema: Schema,
    /// One per parameter of the plan, in parameter order.
    sweep: Vec<SweepColumn>,
}

/// What the trials table records about a trial besides its sweep point.
pub struct TrialRow<'a> {
    pub point: u32,
    pub repetition: u32,
    pub seed: u64,
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    pub status: &'a str,
    /// A fleet's send lateness exceeded its bound: the runner, not the
    /// system under test, may have shaped the results.
    pub contended: bool,
    /// What the trial's audits found (`trial_validity` holds each finding).
    pub validity: &'a exp_results::validity::Validity,
    pub error: Option<&'a str>,
}

impl TrialsTable {
    pub fn new(plan: &Plan) -> Self {
        let mut taken: HashSet<String> = FIXED_COLUMNS.iter().map(|c| c.to_string()).collect();
        let sweep: Vec<SweepColumn> = plan
            .parameters
            .iter()
            .map(|p| {
                // A range's values are all of one kind: its first says which.
                let kinds: Vec<(String, DType)> = match &p.values {
                    Values::Listed(values) => values.iter().map(|v| column_kind(&p.name, &v.value)).collect(),
                    Values::Range(range) => vec![column_kind(&p.name, &range.at(0).value)],
                };
                // A parameter whose values differ in kind is recorded by label.
                let (name, dtype) = match kinds.first() {
                    Some(first) if kinds.iter().all(|k| k == first) => first.clone(),
                    _ => (p.name.clone(), DType::Str),
                };
                // `sweep { seed = [...] }` must not take the trial's own
                // column, nor `d` (durations: `d_ns`) that of a `d_ns`.
                let name = if taken.contains(&name) {
                    format!("sweep_{name}")
                } else {
                    name
                };
                taken.insert(name.clone());
                SweepColumn {
                    parameter: p.name.clone(),
                    name,
                    dtype,
                }
            })
            .collect();
        let mut schema = Schema::new(exp_results::schemas::TRIALS_TABLE)
            .column("point", DType::U64)
            .column("repetition", DType::U64)
            .column("seed", DType::U64);
        for column in &sweep {
            schema = schema.column(column.name.clone(), column.dtype);
        }
        let schema = schema
            .column("start_unix_ns", DType::Ns)
            .column("end_unix_ns", DType::Ns)
            .column("duration_ns", DType::Ns)
            .column("status", DType::Str)
            .column("contended", DType::Bool)
            .column("verdict", DType::Str)
            .column("validity_codes", DType::Str)
            .column("error", DType::Str);
        TrialsTable { schema, sweep }
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The row of a trial of `plan` (the plan the table was made for),
    /// built by column name.
    pub fn row(&self, plan: &Plan, trial: &TrialRow) -> Result<Vec<Cell>, RowError> {
        let mut row: Vec<(&str, Cell)> = vec![
            ("point", u64::from(trial.point).into()),
            ("repetition", u64::from(trial.repetition).into()),
            ("seed", trial.seed.into()),
        ];
        let values = plan.values_at(trial.point).unwrap_or_default();
        for column in &self.sweep {
            let value = values.iter().find(|(p, _)| p.name == column.parameter).map(|(_, v)| v);
            let cell = match value {
                Some(v) if column.dtype == DType::Str => Cell::Str(v.label.clone()),
                Some(v) => cell(&v.value),
                None => Cell::Null,
            };
            row.push((&column.name, cell));
        }
        row.extend([
            ("start_unix_ns", trial.start_unix_ns.into()),
            ("end_unix_ns", trial.end_unix_ns.into()),
            (
                "duration_ns",
                trial.end_unix_ns.saturating_sub(trial.start_unix_ns).into(),
            ),
            ("status", trial.status.into()),
            ("contended", trial.contended.into()),
            ("verdict", trial.validity.verdict.as_str().into()),
            ("validity_codes", codes(trial.validity).into()),
            ("error", trial.error.into()),
        ]);
        self.schema.row(row)
    }
}

/// The codes of a trial's findings, worst first, comma-separated; null
/// for a valid trial.
fn codes(validity: &exp_results::validity::Validity) -> Option<String> {
    let codes: Vec<&str> = validity.findings.iter().map(|f| f.code.as_str()).collect();
    (!codes.is_empty()).then(|| codes.join(","))
}

fn column_kind(name: &str, value: &Value) -> (String, DType) {
    match value {
        Value::Int(_) => (name.to_string(), DType::I64),
        Value::Float(_) => (name.to_string(), DType::F64),
        Value::Bool(_) => (name.to_string(), DType::Bool),
        Value::DurationNs(_) => (format!("{name}_ns"), DType::Ns),
        Value::Bytes(_) => (format!("{name}_bytes"), DType::U64),
        Value::BitPerS(_) => (format!("{name}_bit_per_s"), DType::U64),
        Value::PerS(_) => (format!("{name}_per_s"), DType::F64),
        Value::Ratio(_) => (format!("{name}_ratio"), DType::F64),
        _ => (name.to_string(), DType::Str),
    }
}

fn cell(value: &Value) -> Cell {
    match value {
        Value::Int(v) => Cell::I64(*v),
        Value::Float(v) | Value::PerS(v) | Value::Ratio(v) => Cell::F64(*v),
        Value::Bool(v) => Cell::Bool(*v),
        Value::DurationNs(v) | Value::Bytes(v) | Value::BitPerS(v) => Cell::U64(*v),
        Value::String(v) | Value::Symbol(v) => Cell::Str(v.clone()),
        _ => Cell::Null,
    }
}
