//! `repeat`: a number of repetitions per sweep point, or `until(...)`, a
//! confidence-interval stopping rule, every problem of which is reported at
//! its argument in one pass.

use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::{Repeat, StopRule, MAX_TRIALS};
use exp_syntax::ast::Attribute;
use exp_syntax::units::Dimension;
use serde_json::Value as Json;

use crate::checker::{Checker, Scope};
use crate::registry::Ty;
use crate::typing::Bounds;
use crate::value::display_quantity;

impl Checker<'_> {
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
        // Every problem of the rule at once, each at its argument.
        let at = |name: &str| argument_span(&attr.value, name).unwrap_or(value.span);
        let mut problems: Vec<(Span, String)> = Vec::new();
        if !(ci > 0.0 && ci < 1.0) {
            let found = display_quantity(Dimension::Percent, ci);
            problems.push((
                at("ci"),
                format!("`ci` must lie strictly between 0% and 100%, found {found}"),
            ));
        }
        if width.is_nan() || width <= 0.0 {
            problems.push((at("width"), "`width` must be positive".to_string()));
        }
        if min.is_nan() || min < 2.0 {
            let why = "`min` must be at least 2: a confidence interval needs two samples";
            problems.push((at("min"), why.to_string()));
        } else if max.is_nan() || max < min || max > MAX_TRIALS as f64 {
            problems.push((
                at("max"),
                format!("`max` must lie between `min` ({min}) and {MAX_TRIALS}"),
            ));
        }
        for (span, problem) in &problems {
            self.report(
                Diagnostic::error(Code::E0703, format!("invalid repeat rule: {problem}"))
                    .primary(*span, "in this rule"),
            );
        }
        if !metrics.contains(&metric.as_str()) {
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
                .primary(at("of"), "unknown metric")
                .with_help(suggestion.map(|s| format!("did you mean `{s}`?")))
                .note(format!("metrics here: {known}")),
            );
            return None;
        }
        if !problems.is_empty() {
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

/// The span of argument `name` of a call written directly (`until(ci = …)`).
fn argument_span(expr: &exp_syntax::ast::Expr, name: &str) -> Option<Span> {
    let exp_syntax::ast::ExprKind::Call { args, .. } = &expr.kind else {
        return None;
    };
    args.iter()
        .find(|a| a.name.as_ref().is_some_and(|n| n.name == name))
        .map(|a| a.value.span)
}
