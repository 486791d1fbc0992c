//! A sweep parameter's values: listed one by one, or an arithmetic range
//! kept as its start, step and count. `n = 1..1000000 step 1` costs a few
//! bytes in the plan (and in the compiler) instead of a million labelled
//! values; a value and its label are computed when a point asks for them.
//!
//! In JSON a list is an array of `{label, value}` and a range an object
//! `{start, step, count, unit}`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{PointValue, Value};

#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// In the order the spec lists them.
    Listed(Vec<PointValue>),
    /// Ascending from `start`.
    Range(ValueRange),
}

/// `count` values `start + i × step` in `unit`'s base unit (nanoseconds,
/// bytes, bit/s, events per second, ratios), computed in f64 exactly as the
/// compiler computes them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueRange {
    pub start: f64,
    pub step: f64,
    pub count: u64,
    pub unit: RangeUnit,
}

/// What a range's numbers are: the plan value each one becomes and how its
/// label is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RangeUnit {
    Int,
    Float,
    Duration,
    Size,
    Bandwidth,
    Rate,
    Percent,
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::Listed(values) => values.len(),
            Values::Range(range) => usize::try_from(range.count).unwrap_or(usize::MAX),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `index` with its label; `None` past the last.
    pub fn get(&self, index: usize) -> Option<Cow<'_, PointValue>> {
        match self {
            Values::Listed(values) => values.get(index).map(Cow::Borrowed),
            Values::Range(range) => (index < self.len()).then(|| Cow::Owned(range.at(index))),
        }
    }
}

impl ValueRange {
    /// The number at `index`, unrounded.
    pub fn number(&self, index: usize) -> f64 {
        self.start + index as f64 * self.step
    }

    /// Value `index` and its label (no bounds check).
    pub fn at(&self, index: usize) -> PointValue {
        let x = self.number(index);
        let (value, label) = match self.unit {
            RangeUnit::Int => (Value::Int(x.round() as i64), format!("{}", x.round() as i64)),
            RangeUnit::Float => (Value::Float(x), format!("{x}")),
            RangeUnit::Duration => (Value::DurationNs(x.round() as u64), display_quantity(self.unit, x)),
            RangeUnit::Size => (Value::Bytes(x.round() as u64), display_quantity(self.unit, x)),
            RangeUnit::Bandwidth => (Value::BitPerS(x.round() as u64), display_quantity(self.unit, x)),
            RangeUnit::Rate => (Value::PerS(x), display_quantity(self.unit, x)),
            RangeUnit::Percent => (Value::Ratio(x), display_quantity(self.unit, x)),
        };
        PointValue { label, value }
    }
}

/// A base-unit value in the largest unit that shows it exactly, for labels
/// and messages: 1e8 ns → `100ms`, 1048576 B → `1MiB`, 0.8 → `80%`. Plain
/// numbers (`Int`, `Float`) are written as they are.
pub fn display_quantity(unit: RangeUnit, base: f64) -> String {
    let units: &[(&str, f64)] = match unit {
        RangeUnit::Int | RangeUnit::Float => return trim_float(base),
        RangeUnit::Duration => &[
            ("h", 3600e9),
            ("min", 60e9),
            ("s", 1e9),
            ("ms", 1e6),
            ("us", 1e3),
            ("ns", 1.0),
        ],
        RangeUnit::Size => &[
            ("GiB", 1_073_741_824.0),
            ("GB", 1e9),
            ("MiB", 1_048_576.0),
            ("MB", 1e6),
            ("KiB", 1024.0),
            ("KB", 1e3),
            ("B", 1.0),
        ],
        RangeUnit::Bandwidth => &[("Gbit/s", 1e9), ("Mbit/s", 1e6), ("Kbit/s", 1e3), ("bit/s", 1.0)],
        RangeUnit::Rate => &[("/s", 1.0)],
        RangeUnit::Percent => return format!("{}%", trim_float(base * 100.0)),
    };
    for (name, factor) in units {
        let scaled = base / factor;
        if base != 0.0 && scaled.abs() >= 1.0 && (scaled - scaled.round()).abs() < 1e-9 {
            return format!("{}{name}", trim_float(scaled));
        }
    }
    let (name, factor) = units[units.len() - 1];
    format!("{}{name}", trim_float(base / factor))
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

impl Serialize for Values {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Values::Listed(values) => values.serialize(serializer),
            Values::Range(range) => range.serialize(serializer),
        }
    }
}

/// An array is a list, an object a range; the error of either says what
/// was wrong with it, not that "no variant matched".
impl<'de> Deserialize<'de> for Values {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValuesVisitor;

        impl<'de> Visitor<'de> for ValuesVisitor {
            type Value = Values;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of values or a range {start, step, count, unit}")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Values, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Values::Listed)
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Values, A::Error> {
                ValueRange::deserialize(de::value::MapAccessDeserializer::new(map)).map(Values::Range)
            }
        }

        deserializer.deserialize_any(ValuesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_display_in_their_largest_exact_unit() {
        assert_eq!(display_quantity(RangeUnit::Duration, 1e8), "100ms");
        assert_eq!(display_quantity(RangeUnit::Duration, 90e9), "90s");
        assert_eq!(display_quantity(RangeUnit::Duration, 0.0), "0ns");
        assert_eq!(display_quantity(RangeUnit::Size, 1_048_576.0), "1MiB");
        assert_eq!(display_quantity(RangeUnit::Size, 35e6), "35MB");
        assert_eq!(display_quantity(RangeUnit::Percent, 0.8), "80%");
        assert_eq!(display_quantity(RangeUnit::Bandwidth, 1e9), "1Gbit/s");
        assert_eq!(display_quantity(RangeUnit::Float, 0.25), "0.25");
    }

    #[test]
    fn a_range_computes_each_value_and_label() {
        let range = ValueRange {
            start: 10e6,
            step: 10e6,
            count: 1000,
            unit: RangeUnit::Duration,
        };
        let values = Values::Range(range);
        assert_eq!(values.len(), 1000);
        let last = values.get(999).unwrap();
        assert_eq!(last.label, "10s");
        assert_eq!(last.value, Value::DurationNs(10_000_000_000));
        assert!(values.get(1000).is_none());
    }

    #[test]
    fn lists_and_ranges_read_back_as_written() {
        let range = Values::Range(ValueRange {
            start: 1.0,
            step: 2.0,
            count: 3,
            unit: RangeUnit::Int,
        });
        let listed = Values::Listed(vec![range.get(0).unwrap().into_owned()]);
        for values in [range, listed] {
            let json = serde_json::to_string(&values).unwrap();
            assert_eq!(serde_json::from_str::<Values>(&json).unwrap(), values);
        }
        let wrong = serde_json::from_str::<Values>(r#"{"start": 1, "step": 1, "count": 2}"#).unwrap_err();
        assert!(wrong.to_string().contains("unit"), "{wrong}");
    }
}
