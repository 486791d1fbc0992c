//! Values of evaluated expressions, before they are checked against a type.

use exp_diagnostics::Span;
use exp_plan::DistValue;
use exp_syntax::units::Dimension;
use serde_json::{Map, Value as Json};

#[derive(Debug, Clone)]
pub(crate) struct Value {
    pub kind: ValueKind,
    /// Where the value was written.
    pub span: Span,
    /// Where it was bound, when it reached its use through a `let`, an import
    /// or a sweep parameter (shown as a secondary label).
    pub defined_at: Option<Span>,
}

#[derive(Debug, Clone)]
pub(crate) enum ValueKind {
    Int(i64),
    Float(f64),
    /// In base units (ns, bytes, bit/s, 1/s, ratio).
    Quantity(Dimension, f64),
    Str(String),
    Bool(bool),
    /// A bare name that is no binding: a candidate enumeration member.
    Symbol(String),
    List(Vec<Value>),
    Record(Vec<(String, Value)>),
    Dist(DistValue, Option<Dimension>),
    /// A constructor call with its arguments already checked and lowered.
    Ctor(&'static str, Map<String, Json>),
    Range(Box<Value>, Box<Value>, Option<Box<Value>>),
    /// Something already reported; checks on it stay silent.
    Error,
}

impl Value {
    pub fn new(kind: ValueKind, span: Span) -> Self {
        Value {
            kind,
            span,
            defined_at: None,
        }
    }

    pub fn error(span: Span) -> Self {
        Value::new(ValueKind::Error, span)
    }

    /// How the value's type reads in messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            ValueKind::Int(_) => "an integer".into(),
            ValueKind::Float(_) => "a number".into(),
            ValueKind::Quantity(d, _) => format!("a {}", d.name()),
            ValueKind::Str(_) => "a string".into(),
            ValueKind::Bool(_) => "a boolean".into(),
            ValueKind::Symbol(s) => format!("the name `{s}`"),
            ValueKind::List(_) => "a list".into(),
            ValueKind::Record(_) => "a record".into(),
            ValueKind::Dist(_, Some(d)) => format!("a distribution of {}s", d.name()),
            ValueKind::Dist(_, None) => "a distribution of counts".into(),
            ValueKind::Ctor(name, _) => format!("{name}(…)"),
            ValueKind::Range(..) => "a range".into(),
            ValueKind::Error => "an invalid value".into(),
        }
    }

    /// Whether a range occurs in the value (ranges exist only in source, never in plans).
    pub fn contains_range(&self) -> bool {
        match &self.kind {
            ValueKind::Range(..) => true,
            ValueKind::List(items) => items.iter().any(Value::contains_range),
            ValueKind::Record(fields) => fields.iter().any(|(_, v)| v.contains_range()),
            _ => false,
        }
    }

    /// The type name recorded for sweep parameters in the plan.
    pub fn type_name(&self) -> String {
        match &self.kind {
            ValueKind::Int(_) => "int".into(),
            ValueKind::Float(_) => "float".into(),
            ValueKind::Quantity(d, _) => d.name().into(),
            ValueKind::Str(_) => "string".into(),
            ValueKind::Bool(_) => "bool".into(),
            ValueKind::Symbol(_) => "symbol".into(),
            ValueKind::List(_) => "list".into(),
            ValueKind::Record(_) => "record".into(),
            ValueKind::Dist(_, Some(d)) => format!("dist<{}>", d.name()),
            ValueKind::Dist(_, None) => "dist<count>".into(),
            ValueKind::Ctor(name, _) => (*name).into(),
            ValueKind::Range(..) => "range".into(),
            ValueKind::Error => "error".into(),
        }
    }
}

/// A base-unit value in the largest unit that shows it exactly, for messages
/// and docs: 1e8 ns → `100ms`, 1048576 B → `1MiB`, 0.8 → `80%` (the plan's
/// range labels are written the same way).
pub(crate) fn display_quantity(dimension: Dimension, base: f64) -> String {
    exp_plan::display_quantity(range_unit(dimension), base)
}

/// The dimension of a range's unit; `None` for plain numbers.
pub(crate) fn dimension(unit: exp_plan::RangeUnit) -> Option<Dimension> {
    use exp_plan::RangeUnit as U;
    match unit {
        U::Int | U::Float => None,
        U::Duration => Some(Dimension::Duration),
        U::Size => Some(Dimension::Bytes),
        U::Bandwidth => Some(Dimension::Bandwidth),
        U::Rate => Some(Dimension::Rate),
        U::Percent => Some(Dimension::Percent),
    }
}

/// The plan's name for a quantity's dimension (the inverse of [`dimension`]).
pub(crate) fn range_unit(dimension: Dimension) -> exp_plan::RangeUnit {
    match dimension {
        Dimension::Duration => exp_plan::RangeUnit::Duration,
        Dimension::Bytes => exp_plan::RangeUnit::Size,
        Dimension::Bandwidth => exp_plan::RangeUnit::Bandwidth,
        Dimension::Rate => exp_plan::RangeUnit::Rate,
        Dimension::Percent => exp_plan::RangeUnit::Percent,
    }
}
