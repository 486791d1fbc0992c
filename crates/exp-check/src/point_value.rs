//! Sweep values as the plan types them (`exp_plan::Value`), for the
//! plan's parameters and the points claims select.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::checker::Checker;
use crate::value::Value;

impl Checker<'_> {
    /// A sweep value lowered without a target type: its own natural form.
    pub(crate) fn point_value(&mut self, value: &Value) -> Option<exp_plan::Value> {
        use crate::value::ValueKind;
        use exp_plan::Value as PlanValue;
        use exp_syntax::units::Dimension;
        Some(match &value.kind {
            ValueKind::Int(i) => PlanValue::Int(*i),
            ValueKind::Float(f) => PlanValue::Float(*f),
            ValueKind::Bool(b) => PlanValue::Bool(*b),
            ValueKind::Str(s) => PlanValue::String(s.clone()),
            ValueKind::Symbol(s) => PlanValue::Symbol(s.clone()),
            ValueKind::Quantity(Dimension::Duration, x) => PlanValue::DurationNs(x.round() as u64),
            ValueKind::Quantity(Dimension::Bytes, x) => PlanValue::Bytes(x.round() as u64),
            ValueKind::Quantity(Dimension::Bandwidth, x) => PlanValue::BitPerS(x.round() as u64),
            ValueKind::Quantity(Dimension::Rate, x) => PlanValue::PerS(*x),
            ValueKind::Quantity(Dimension::Percent, x) => PlanValue::Ratio(*x),
            ValueKind::Dist(d, _) => PlanValue::Dist(d.clone()),
            ValueKind::List(items) => {
                PlanValue::List(items.iter().map(|i| self.point_value(i)).collect::<Option<_>>()?)
            }
            ValueKind::Record(fields) => PlanValue::Record(
                fields
                    .iter()
                    .map(|(k, v)| Some((k.clone(), self.point_value(v)?)))
                    .collect::<Option<_>>()?,
            ),
            ValueKind::Ctor(name, args) => PlanValue::Object(BTreeMap::from([(
                (*name).to_string(),
                json_value(&Json::Object(args.clone())),
            )])),
            ValueKind::Range(..) | ValueKind::Error => return None,
        })
    }
}

/// A constructor's lowered arguments as a typed point value.
fn json_value(json: &Json) -> exp_plan::Value {
    use exp_plan::Value as PlanValue;
    match json {
        Json::Null => PlanValue::List(Vec::new()),
        Json::Bool(b) => PlanValue::Bool(*b),
        Json::Number(n) => n
            .as_i64()
            .map_or_else(|| PlanValue::Float(n.as_f64().unwrap_or(f64::NAN)), PlanValue::Int),
        Json::String(s) => PlanValue::String(s.clone()),
        Json::Array(items) => PlanValue::List(items.iter().map(json_value).collect()),
        Json::Object(map) => PlanValue::Record(map.iter().map(|(k, v)| (k.clone(), json_value(v))).collect()),
    }
}
