//! Sweep parameters (their values; ranges kept as ranges) and the repeat rule.
//! The cross product is never built: blocks are lowered per combination of
//! the parameters they name (plan.rs), and exp_plan derives the points.

use std::collections::BTreeMap;

use exp_diagnostics::limits::group;
use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::{Combinations, RangeUnit, ValueRange, MAX_TRIALS};
use exp_syntax::ast::{Attribute, Block, Member};

use crate::checker::{Checker, Scope};
use crate::value::{dimension, range_unit, Value, ValueKind};

pub(crate) struct SweepParam {
    pub name: String,
    pub span: Span,
    pub ty: String,
    pub values: SweepValues,
}

/// A sweep over [`MAX_TRIALS`]: its trial count and, at each parameter's
/// name, how many values it has (E0704 shows them so the product shows).
pub(crate) struct TooManyTrials {
    pub trials: f64,
    pub counts: Vec<(Span, String)>,
    /// Parameters left out of the count: ranges too large on their own,
    /// each reported by an E0704 of its own.
    pub left_out: Vec<String>,
}

/// A parameter's values: listed, each with the label reports show for it,
/// or a range kept as its ends (a million values cost nothing until a
/// combination asks for one).
pub(crate) enum SweepValues {
    Listed(Vec<(Value, String)>),
    Range { range: ValueRange, span: Span },
}

impl SweepValues {
    pub fn len(&self) -> usize {
        match self {
            SweepValues::Listed(values) => values.len(),
            SweepValues::Range { range, .. } => range.count as usize,
        }
    }

    /// Value `index`'s label, as reports show it.
    pub fn label(&self, index: usize) -> String {
        match self {
            SweepValues::Listed(values) => values[index].1.clone(),
            SweepValues::Range { range, .. } => range.at(index).label,
        }
    }

    /// Value `index` as names are looked up.
    pub fn value(&self, index: usize) -> Value {
        match self {
            SweepValues::Listed(values) => values[index].0.clone(),
            SweepValues::Range { range, span } => {
                let x = range.number(index);
                let kind = match (range.unit, dimension(range.unit)) {
                    (RangeUnit::Int, _) => ValueKind::Int(x.round() as i64),
                    (_, Some(d)) => ValueKind::Quantity(d, x),
                    (_, None) => ValueKind::Float(x),
                };
                Value {
                    kind,
                    span: *span,
                    defined_at: Some(*span),
                }
            }
        }
    }
}

impl Checker<'_> {
    /// The sweep's parameters, each with its values; [`TooManyTrials`] when
    /// the sweep would make more than [`MAX_TRIALS`] trials with `repetitions`
    /// each: found from the value counts before any range is expanded (two
    /// ranges of a million values each used to be expanded, then multiplied).
    pub(crate) fn sweep_params(
        &mut self,
        sweep: Option<&Block>,
        repetitions: u32,
    ) -> Result<Vec<SweepParam>, TooManyTrials> {
        let Some(sweep) = sweep else { return Ok(Vec::new()) };
        let root = self.program.root;
        let mut evaluated: Vec<(&Attribute, Value)> = Vec::new();
        let mut seen: crate::FixedSet<&str> = crate::FixedSet::default();
        for member in &sweep.members {
            let Member::Attribute(attr) = member else { continue };
            let name = &attr.key.name;
            if !seen.insert(name.as_str()) || self.poisoned.contains(name) {
                continue; // reported by the structure check
            }
            let shadowed = self.lets[root]
                .get(name)
                .map(|b| b.name_span)
                .or_else(|| self.program.modules[root].imports.get(name).map(|(_, span)| *span));
            if let Some(other) = shadowed {
                self.report(
                    Diagnostic::error(
                        Code::E0701,
                        format!("sweep parameter `{name}` has the name of a binding"),
                    )
                    .primary(attr.key.span, "sweep parameter")
                    .secondary(other, "also defined here")
                    .help("rename one of them so workloads refer to exactly one"),
                );
                self.poisoned.insert(name.clone());
                continue;
            }
            let value = self.eval(
                &attr.value,
                Scope {
                    module: root,
                    sweep: None,
                },
            );
            evaluated.push((attr, value));
        }
        // A range too large on its own has an E0704 of its own, at its step;
        // the experiment's counts the other parameters.
        let (oversize, counted): (Vec<_>, Vec<_>) = evaluated.into_iter().partition(|(_, value)| oversize_range(value));
        let trials = counted
            .iter()
            .fold(f64::from(repetitions), |n, (_, value)| n * value_count(value));
        if trials > MAX_TRIALS as f64 {
            let counts = counted
                .iter()
                .map(|(attr, value)| values_label(attr.key.span, value_count(value)))
                .collect();
            let left_out = oversize.iter().map(|(attr, _)| attr.key.name.clone()).collect();
            for (attr, value) in oversize {
                self.sweep_param(attr, value);
            }
            return Err(TooManyTrials {
                trials,
                counts,
                left_out,
            });
        }
        let mut evaluated = counted;
        evaluated.extend(oversize);
        evaluated.sort_by_key(|(attr, _)| attr.key.span.start);
        let mut params = Vec::with_capacity(evaluated.len());
        for (attr, value) in evaluated {
            match self.sweep_param(attr, value) {
                Some(param) => params.push(param),
                None => {
                    self.poisoned.insert(attr.key.name.clone());
                }
            }
        }
        Ok(params)
    }

    fn sweep_param(&mut self, attr: &Attribute, value: Value) -> Option<SweepParam> {
        let name = attr.key.name.clone();
        let values: Vec<(Value, String)> = match value.kind {
            ValueKind::List(items) => items
                .into_iter()
                .map(|item| {
                    let label = self.sources.snippet(item.span).to_string();
                    let defined_at = item.defined_at.or(Some(item.span));
                    (Value { defined_at, ..item }, label)
                })
                .collect(),
            ValueKind::Range(start, end, Some(step)) => {
                let values = self.range(&start, &end, &step, value.span)?;
                return Some(SweepParam {
                    name,
                    span: attr.key.span,
                    ty: values.value(0).type_name(),
                    values,
                });
            }
            ValueKind::Range(_, _, None) => {
                self.report(
                    Diagnostic::error(Code::E0702, format!("sweep parameter `{name}` needs a step"))
                        .primary(value.span, "a range without a step")
                        .help(format!("e.g. `{} step ...`", self.sources.snippet(value.span))),
                );
                return None;
            }
            ValueKind::Error => return None,
            _ => {
                let text = self.sources.snippet(value.span).to_string();
                self.report(
                    Diagnostic::error(Code::E0702, format!("sweep parameter `{name}` is not a list"))
                        .primary(value.span, format!("{} is one value", value.describe()))
                        .with_help(Some(format!("sweep over a list: `[{text}, ...]`"))),
                );
                return None;
            }
        };
        if values.is_empty() {
            self.report(
                Diagnostic::error(Code::E0504, format!("sweep parameter `{name}` has no values"))
                    .primary(attr.value.span, "empty list"),
            );
            return None;
        }
        if values.iter().any(|(v, _)| matches!(v.kind, ValueKind::Error)) {
            return None;
        }
        // A range is not a value a trial can take (and the plan has no way to
        // record one): say so instead of failing to plan later.
        if let Some((range, _)) = values.iter().find(|(v, _)| v.contains_range()) {
            self.report(
                Diagnostic::error(
                    Code::E0702,
                    format!("sweep parameter `{name}` lists a range as a value"),
                )
                .primary(range.span, "a range is not one value")
                .help("list the values, or sweep the range itself: `name = 1s..4s step 1s`"),
            );
            return None;
        }
        if !self.numbers_agree(&name, &values) {
            return None;
        }
        // Values may otherwise differ in kind (`[mean, paths(count = 4)]` for
        // a property that accepts both); each point is checked against the
        // property.
        let first = values[0].0.type_name();
        let ty = if values.iter().all(|(v, _)| v.type_name() == first) {
            first
        } else {
            "mixed".to_string()
        };
        Some(SweepParam {
            name,
            span: attr.key.span,
            ty,
            values: SweepValues::Listed(values),
        })
    }

    /// The numbers, quantities and distributions of one parameter have one
    /// type (docs/language.md §5): `[1, 2.5]` or `[100, 200ms]` is a mistake
    /// in the list, reported there rather than where a point uses it.
    fn numbers_agree(&mut self, name: &str, values: &[(Value, String)]) -> bool {
        let numeric = |v: &Value| {
            matches!(
                v.kind,
                ValueKind::Int(_) | ValueKind::Float(_) | ValueKind::Quantity(..) | ValueKind::Dist(..)
            )
        };
        let Some((first, _)) = values.iter().find(|(v, _)| numeric(v)) else {
            return true;
        };
        let Some((other, _)) = values
            .iter()
            .find(|(v, _)| numeric(v) && v.type_name() != first.type_name())
        else {
            return true;
        };
        let (code, help) = match (&first.kind, &other.kind) {
            (ValueKind::Int(i), ValueKind::Float(_)) | (ValueKind::Float(_), ValueKind::Int(i)) => {
                (Code::E0401, Some(format!("write every value as a float, e.g. `{i}.0`")))
            }
            (ValueKind::Quantity(..), ValueKind::Int(_) | ValueKind::Float(_))
            | (ValueKind::Int(_) | ValueKind::Float(_), ValueKind::Quantity(..)) => {
                (Code::E0402, Some("give every value a unit".to_string()))
            }
            (ValueKind::Quantity(..), ValueKind::Quantity(..)) => (Code::E0402, None),
            _ => (Code::E0401, None),
        };
        let kind = |v: &Value| match v.kind {
            ValueKind::Float(_) => "a float".to_string(),
            _ => v.describe(),
        };
        self.report(
            Diagnostic::error(
                code,
                format!("sweep parameter `{name}` mixes {} and {}", kind(first), kind(other)),
            )
            .primary(other.span, kind(other))
            .secondary(first.span, kind(first))
            .with_help(help),
        );
        false
    }

    /// `start..end step s`, inclusive of `end` when a step lands on it.
    fn range(&mut self, start: &Value, end: &Value, step: &Value, span: Span) -> Option<SweepValues> {
        let number = |v: &Value| match v.kind {
            ValueKind::Int(i) => Some((None, i as f64)),
            ValueKind::Float(f) => Some((None, f)),
            ValueKind::Quantity(d, x) => Some((Some(d), x)),
            _ => None,
        };
        let (Some((d0, a)), Some((d1, b)), Some((d2, s))) = (number(start), number(end), number(step)) else {
            self.report(
                Diagnostic::error(Code::E0504, "a sweep range needs numbers or quantities")
                    .primary(span, "not a numeric range"),
            );
            return None;
        };
        if d0 != d1 || d0 != d2 {
            self.report(
                Diagnostic::error(Code::E0402, "the bounds and step of a range need the same unit")
                    .primary(span, "mixed units"),
            );
            return None;
        }
        if s <= 0.0 || a > b {
            self.report(
                Diagnostic::error(Code::E0504, "the range is empty or its step is not positive")
                    .primary(span, "no values")
                    .help("write `low..high step s` with low ≤ high and s > 0"),
            );
            return None;
        }
        // Counted in f64 first: `1..2 step 1e-300` has 1e300 values, which
        // no integer holds (it used to wrap to 0, "empty list").
        let count = range_count(a, b, s);
        if count.is_nan() || count > MAX_TRIALS as f64 {
            let shown = count_text(count);
            self.report(
                Diagnostic::error(
                    Code::E0704,
                    format!("the range has {shown} values, more than {}", group(MAX_TRIALS)),
                )
                .primary(step.span, "this step gives too many values")
                .secondary(span, "in this range"),
            );
            return None;
        }
        let integers = d0.is_none() && matches!((&start.kind, &step.kind), (ValueKind::Int(_), ValueKind::Int(_)));
        let unit = match d0 {
            _ if integers => RangeUnit::Int,
            None => RangeUnit::Float,
            Some(d) => range_unit(d),
        };
        Some(SweepValues::Range {
            range: ValueRange {
                start: a,
                step: s,
                count: count as u64,
                unit,
            },
            span,
        })
    }
}

/// A count that may be past any integer: `1,000,000,000,000`, `1e300`.
pub(crate) fn count_text(count: f64) -> String {
    if count < 1e15 {
        group(count as u64)
    } else {
        format!("{count:.0e}")
    }
}

/// E0704's label at a parameter's name: how many values it has.
pub(crate) fn values_label(name: Span, count: f64) -> (Span, String) {
    (name, format!("{} values", count_text(count)))
}

/// How many values `a..b step s` has (`a ≤ b`, `s > 0`), in `f64`: it may
/// be far past any integer.
fn range_count(a: f64, b: f64, s: f64) -> f64 {
    ((b - a) / s + 1e-9).floor() + 1.0
}

/// The numbers of a range with a step, if it has them.
fn range_numbers(value: &Value) -> Option<(f64, f64, f64)> {
    let number = |v: &Value| match v.kind {
        ValueKind::Int(i) => Some(i as f64),
        ValueKind::Float(f) | ValueKind::Quantity(_, f) => Some(f),
        _ => None,
    };
    match &value.kind {
        ValueKind::Range(start, end, Some(step)) => Some((number(start)?, number(end)?, number(step)?)),
        _ => None,
    }
}

/// How many values a sweep parameter will have, before expanding it: 1
/// for what is not a list or a valid range (its expansion reports it).
fn value_count(value: &Value) -> f64 {
    match (&value.kind, range_numbers(value)) {
        (ValueKind::List(items), _) => items.len() as f64,
        (_, Some((a, b, s))) if s > 0.0 && a <= b => range_count(a, b, s),
        _ => 1.0,
    }
}

/// A range with more values than a plan may hold trials (its own E0704).
fn oversize_range(value: &Value) -> bool {
    range_numbers(value).is_some_and(|(a, b, s)| {
        let count = range_count(a, b, s);
        s > 0.0 && a <= b && (count.is_nan() || count > MAX_TRIALS as f64)
    })
}

/// The number of trials the sweep would make (points × repetitions), from
/// the value counts alone; `None` past `u64`. Checked before
/// [`cross_product`] makes a single point.
pub(crate) fn trial_count(params: &[SweepParam], repetitions: u32) -> Option<u64> {
    params
        .iter()
        .try_fold(u64::from(repetitions), |n, p| n.checked_mul(p.values.len() as u64))
}

/// The combinations of the values of the parameters for which `named`
/// holds (the others at their first value), first parameter outermost, and
/// those parameters' names: what a block's variants or a field's values are
/// lowered over.
pub(crate) fn named_combinations(params: &[SweepParam], named: &dyn Fn(&str) -> bool) -> (Combinations, Vec<String>) {
    let radices = params
        .iter()
        .map(|p| if named(&p.name) { p.values.len() } else { 1 })
        .collect();
    let names = params
        .iter()
        .filter(|p| named(&p.name))
        .map(|p| p.name.clone())
        .collect();
    (Combinations::new(radices), names)
}

/// The parameters' values at one point, as names are looked up.
pub(crate) fn bindings(params: &[SweepParam], point: &[usize]) -> BTreeMap<String, Value> {
    params
        .iter()
        .zip(point)
        .map(|(p, &index)| (p.name.clone(), p.values.value(index)))
        .collect()
}
