//! Values of evaluated expressions, before they are checked against a type.

use exp_diagnostics::Span;
use exp_plan::DistValue;
use exp_syntax::units::Dimension;
use serde_json::{Map, Value as Json};

#[derive(Debug, Clone)]
pub(crate) struct Value {
    pub kind: V,
    /// Where the value was written.
    pub span: Span,
    /// Where it was bound, when it reached its use through a `let`, an import
    /// or a sweep parameter (shown as a secondary label).
    pub defined_at: Option<Span>,
}

#[derive(Debug, Clone)]
pub(crate) enum V {
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
    pub fn new(kind: V, span: Span) -> Self {
        Value {
            kind,
            span,
            defined_at: None,
        }
    }

    pub fn error(span: Span) -> Self {
        Value::new(V::Error, span)
    }

    /// How the value's type reads in messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            V::Int(_) => "an integer".into(),
            V::Float(_) => "a number".into(),
            V::Quantity(d, _) => format!("a {}", d.name()),
            V::Str(_) => "a string".into(),
            V::Bool(_) => "a boolean".into(),
            V::Symbol(s) => format!("the name `{s}`"),
            V::List(_) => "a list".into(),
            V::Record(_) => "a record".into(),
            V::Dist(_, Some(d)) => format!("a distribution of {}s", d.name()),
            V::Dist(_, None) => "a distribution of counts".into(),
            V::Ctor(name, _) => format!("{name}(…)"),
            V::Range(..) => "a range".into(),
            V::Error => "an invalid value".into(),
        }
    }

    /// Whether a range occurs in the value (ranges exist only in source, never in plans).
    pub fn contains_range(&self) -> bool {
        match &self.kind {
            V::Range(..) => true,
            V::List(items) => items.iter().any(Value::contains_range),
            V::Record(fields) => fields.iter().any(|(_, v)| v.contains_range()),
            _ => false,
        }
    }

    /// The type name recorded for sweep parameters in the plan.
    pub fn type_name(&self) -> String {
        match &self.kind {
            V::Int(_) => "int".into(),
            V::Float(_) => "float".into(),
            V::Quantity(d, _) => d.name().into(),
            V::Str(_) => "string".into(),
            V::Bool(_) => "bool".into(),
            V::Symbol(_) => "symbol".into(),
            V::List(_) => "list".into(),
            V::Record(_) => "record".into(),
            V::Dist(_, Some(d)) => format!("dist<{}>", d.name()),
            V::Dist(_, None) => "dist<count>".into(),
            V::Ctor(name, _) => (*name).into(),
            V::Range(..) => "range".into(),
            V::Error => "error".into(),
        }
    }
}

/// A base-unit value in the largest unit that shows it exactly, for messages
/// and docs: 1e8 ns → `100ms`, 1048576 B → `1MiB`, 0.8 → `80%`.
pub(crate) fn display_quantity(dimension: Dimension, base: f64) -> String {
    let units: &[(&str, f64)] = match dimension {
        Dimension::Duration => &[
            ("h", 3600e9),
            ("min", 60e9),
            ("s", 1e9),
            ("ms", 1e6),
            ("us", 1e3),
            ("ns", 1.0),
        ],
        Dimension::Bytes => &[
            ("GiB", 1_073_741_824.0),
            ("GB", 1e9),
            ("MiB", 1_048_576.0),
            ("MB", 1e6),
            ("KiB", 1024.0),
            ("KB", 1e3),
            ("B", 1.0),
        ],
        Dimension::Bandwidth => &[("Gbit/s", 1e9), ("Mbit/s", 1e6), ("Kbit/s", 1e3), ("bit/s", 1.0)],
        Dimension::Rate => &[("/s", 1.0)],
        Dimension::Percent => return format!("{}%", trim_float(base * 100.0)),
    };
    for (unit, factor) in units {
        let scaled = base / factor;
        if base != 0.0 && scaled.abs() >= 1.0 && (scaled - scaled.round()).abs() < 1e-9 {
            return format!("{}{unit}", trim_float(scaled));
        }
    }
    let (unit, factor) = units[units.len() - 1];
    format!("{}{unit}", trim_float(base / factor))
}

fn trim_float(x: f64) -> String {
    let rounded = (x * 1e6).round() / 1e6;
    let mut s = format!("{rounded}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_display_in_their_largest_exact_unit() {
        assert_eq!(display_quantity(Dimension::Duration, 1e8), "100ms");
        assert_eq!(display_quantity(Dimension::Duration, 90e9), "90s");
        assert_eq!(display_quantity(Dimension::Duration, 0.0), "0ns");
        assert_eq!(display_quantity(Dimension::Bytes, 1_048_576.0), "1MiB");
        assert_eq!(display_quantity(Dimension::Bytes, 35e6), "35MB");
        assert_eq!(display_quantity(Dimension::Percent, 0.8), "80%");
        assert_eq!(display_quantity(Dimension::Bandwidth, 1e9), "1Gbit/s");
    }
}
