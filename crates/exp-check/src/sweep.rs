//! Sweep expansion (cross product of parameter lists) and the repeat rule.

use std::collections::{BTreeMap, HashMap};

use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::{Parameter, Repeat, StopRule};
use exp_syntax::ast::{Attribute, Block, Member};
use exp_syntax::units::Dimension;
use serde_json::Value as Json;

use crate::checker::{Checker, Scope};
use crate::registry::Ty;
use crate::typing::Bounds;
use crate::value::{display_quantity, Value, V};
use crate::workload::mentions;

/// Most trials one plan may hold.
pub const MAX_TRIALS: u64 = 1_000_000;

pub(crate) struct SweepParam {
    pub name: String,
    pub span: Span,
    pub ty: String,
    /// Each value with the label reports show for it.
    pub values: Vec<(Value, String)>,
}

impl Checker<'_> {
    pub(crate) fn sweep_params(&mut self, sweep: Option<&Block>) -> Vec<SweepParam> {
        let Some(sweep) = sweep else { return Vec::new() };
        let root = self.program.root;
        let mut params: Vec<SweepParam> = Vec::new();
        for member in &sweep.members {
            let Member::Attribute(attr) = member else { continue };
            let name = &attr.key.name;
            if params.iter().any(|p| p.name == *name) {
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
            match self.sweep_param(attr) {
                Some(param) => params.push(param),
                None => {
                    self.poisoned.insert(name.clone());
                }
            }
        }
        params
    }

    fn sweep_param(&mut self, attr: &Attribute) -> Option<SweepParam> {
        let name = attr.key.name.clone();
        let value = self.eval(
            &attr.value,
            Scope {
                module: self.program.root,
                sweep: None,
            },
        );
        let values: Vec<(Value, String)> = match value.kind {
            V::List(items) => items
                .into_iter()
                .map(|item| {
                    let label = self.sources.snippet(item.span).to_string();
                    let defined_at = item.defined_at.or(Some(item.span));
                    (Value { defined_at, ..item }, label)
                })
                .collect(),
            V::Range(start, end, Some(step)) => self.expand_range(&start, &end, &step, value.span)?,
            V::Range(_, _, None) => {
                self.report(
                    Diagnostic::error(Code::E0702, format!("sweep parameter `{name}` needs a step"))
                        .primary(value.span, "a range without a step")
                        .help(format!("e.g. `{} step ...`", self.sources.snippet(value.span))),
                );
                return None;
            }
            V::Error => return None,
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
        if values.iter().any(|(v, _)| matches!(v.kind, V::Error)) {
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
        // Values may differ in kind (`[mean, paths(count = 4)]` for a property
        // that accepts both); each point is checked against the property.
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
            values,
        })
    }

    /// `start..end step s`, inclusive of `end` when a step lands on it.
    fn expand_range(&mut self, start: &Value, end: &Value, step: &Value, span: Span) -> Option<Vec<(Value, String)>> {
        let number = |v: &Value| match v.kind {
            V::Int(i) => Some((None, i as f64)),
            V::Float(f) => Some((None, f)),
            V::Quantity(d, x) => Some((Some(d), x)),
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
        let count = ((b - a) / s + 1e-9).floor() as u64 + 1;
        if count > MAX_TRIALS {
            self.report(
                Diagnostic::error(Code::E0704, format!("the range has {count} values"))
                    .primary(span, "too many values"),
            );
            return None;
        }
        let integers = d0.is_none() && matches!((&start.kind, &step.kind), (V::Int(_), V::Int(_)));
        Some(
            (0..count)
                .map(|i| {
                    let x = a + i as f64 * s;
                    let (kind, label) = match d0 {
                        _ if integers => (V::Int(x.round() as i64), format!("{}", x.round() as i64)),
                        None => (V::Float(x), format!("{x}")),
                        Some(d) => (V::Quantity(d, x), display_quantity(d, x)),
                    };
                    (
                        Value {
                            kind,
                            span,
                            defined_at: Some(span),
                        },
                        label,
                    )
                })
                .collect(),
        )
    }

    pub(crate) fn repeat(&mut self, attr: Option<&Attribute>, metrics: &[&str]) -> Option<Repeat> {
        let Some(attr) = attr else {
            return Some(Repeat { max: 1, stop: None });
        };
        let value = self.eval(
            &attr.value,
            Scope {
                module: self.program.root,
                sweep: None,
            },
        );
        let ty = Ty::OneOf(&[Ty::Int, Ty::Ctor("until")]);
        let bounds = Bounds {
            min: Some(1.0),
            max: Some(MAX_TRIALS as f64),
        };
        let json = self.conform(&value, &ty, bounds, "`repeat`")?;
        if let Some(count) = json.as_u64() {
            return Some(Repeat {
                max: count as u32,
                stop: None,
            });
        }
        let args = json.get("until")?;
        let get = |key: &str| args.get(key).and_then(Json::as_f64).unwrap_or(f64::NAN);
        let (ci, width, max, min) = (get("ci_ratio"), get("width_ratio"), get("max"), get("min"));
        let metric = args.get("of").and_then(Json::as_str).unwrap_or_default().to_string();
        let problem = if !(ci > 0.0 && ci < 1.0) {
            Some(format!(
                "`ci` must lie strictly between 0% and 100%, found {}",
                display_quantity(Dimension::Percent, ci)
            ))
        } else if width.is_nan() || width <= 0.0 {
            Some("`width` must be positive".to_string())
        } else if min.is_nan() || min < 2.0 {
            Some("`min` must be at least 2: a confidence interval needs two samples".to_string())
        } else if max.is_nan() || max < min || max > MAX_TRIALS as f64 {
            Some(format!("`max` must lie between `min` ({min}) and {MAX_TRIALS}"))
        } else if !metrics.contains(&metric.as_str()) {
            let suggestion = exp_diagnostics::closest(&metric, metrics.iter().copied());
            let known = if metrics.is_empty() {
                "none (the experiment has no workloads)".to_string()
            } else {
                metrics.join(", ")
            };
            self.report(
                Diagnostic::error(
                    Code::E0703,
                    format!("no workload of this experiment measures `{metric}`"),
                )
                .primary(value.span, "unknown metric")
                .with_help(suggestion.map(|s| format!("did you mean `{s}`?")))
                .note(format!("metrics here: {known}")),
            );
            return None;
        } else {
            None
        };
        if let Some(problem) = problem {
            self.report(
                Diagnostic::error(Code::E0703, format!("invalid repeat rule: {problem}"))
                    .primary(value.span, "in this rule"),
            );
            return None;
        }
        Some(Repeat {
            max: max as u32,
            stop: Some(StopRule {
                metric,
                confidence_ratio: ci,
                width_ratio: width,
                min: min as u32,
            }),
        })
    }
}

/// Sweep points: the cross product, first parameter outermost. A point holds
/// the index of each parameter's value, in parameter order.
pub(crate) fn cross_product(params: &[SweepParam]) -> Vec<Vec<usize>> {
    let mut points: Vec<Vec<usize>> = vec![Vec::new()];
    for param in params {
        let mut next = Vec::with_capacity(points.len() * param.values.len());
        for point in &points {
            for index in 0..param.values.len() {
                let mut p = Vec::with_capacity(params.len());
                p.extend_from_slice(point);
                p.push(index);
                next.push(p);
            }
        }
        points = next;
    }
    points
}

/// The parameters' values at one point, as names are looked up.
pub(crate) fn bindings(params: &[SweepParam], point: &[usize]) -> BTreeMap<String, Value> {
    params
        .iter()
        .zip(point)
        .map(|(p, &index)| (p.name.clone(), p.values[index].0.clone()))
        .collect()
}

/// A block lowered once per combination of the values of the sweep
/// parameters it names. Lowering reads the point only through those names
/// (`mentions`), so the result for one combination holds at every point with
/// it, diagnostics included (they are deduplicated anyway): a workload that
/// names one parameter of a 100 × 100 sweep is lowered 100 times, not 10,000,
/// and cloned at the other points. A block naming no parameter is lowered once.
pub(crate) struct PointCache<T> {
    /// Indices of the parameters the block names, in parameter order.
    uses: Vec<usize>,
    /// False when the block names every parameter: then no combination
    /// repeats, and keeping the results would only double the memory.
    reuse: bool,
    lowered: HashMap<Vec<usize>, T>,
    key: Vec<usize>,
}

impl<T: Clone> PointCache<T> {
    pub fn new(block: &Block, params: &[SweepParam]) -> Self {
        let uses: Vec<usize> = params
            .iter()
            .enumerate()
            .filter(|(_, p)| block_mentions(block, &|name| name == p.name))
            .map(|(index, _)| index)
            .collect();
        PointCache {
            reuse: uses.len() < params.len(),
            uses,
            lowered: HashMap::new(),
            key: Vec::new(),
        }
    }

    /// The block at `point`, from `lower` the first time its combination occurs.
    pub fn get_or_lower(&mut self, point: &[usize], lower: impl FnOnce() -> T) -> T {
        if !self.reuse {
            return lower();
        }
        self.key.clear();
        self.key.extend(self.uses.iter().map(|&p| point[p]));
        if let Some(lowered) = self.lowered.get(self.key.as_slice()) {
            return lowered.clone();
        }
        let lowered = lower();
        self.lowered.insert(self.key.clone(), lowered.clone());
        lowered
    }
}

/// Whether any expression in the block (or its sub-blocks) names a name for
/// which `is_name` holds.
pub(crate) fn block_mentions(block: &Block, is_name: &dyn Fn(&str) -> bool) -> bool {
    block.members.iter().any(|m| match m {
        Member::Attribute(a) => mentions(&a.value, is_name),
        Member::Block(b) => block_mentions(b, is_name),
    })
}

pub(crate) fn parameters(params: &[SweepParam]) -> Vec<Parameter> {
    params
        .iter()
        .map(|p| Parameter {
            name: p.name.clone(),
            ty: p.ty.clone(),
        })
        .collect()
}
