//! `repeat`: a number of repetitions per sweep point, or `until(...)`, a
//! confidence-interval stopping rule, every problem of which is reported at
//! its argument in one pass.

use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::claims::DecideRule;
use exp_plan::{Order, Repeat, Statistic, StopRule, MAX_TRIALS};
use exp_syntax::ast::Attribute;
use exp_syntax::units::Dimension;
use serde_json::Value as Json;

use crate::checker::{Checker, Scope};
use crate::registry::Ty;
use crate::typing::Bounds;
use crate::value::display_quantity;

impl Checker<'_> {
    pub(crate) fn repeat(&mut self, attr: Option<&Attribute>, metrics: &[&str], has_claims: bool) -> Option<Repeat> {
        let Some(attr) = attr else {
            return Some(Repeat {
                max: 1,
                stop: None,
                order: Order::Sequential,
                until_decided: None,
            });
        };
        let value = self.eval(
            &attr.value,
            Scope {
                module: self.program.root,
                sweep: None,
            },
        );
        let ty = Ty::OneOf(&[Ty::Int, Ty::Ctor("until"), Ty::Ctor("until_decided")]);
        let bounds = Bounds {
            min: Some(1.0),
            max: Some(MAX_TRIALS as f64),
        };
        let json = self.conform(&value, &ty, bounds, "`repeat`")?;
        if let Some(count) = json.as_u64() {
            return Some(Repeat {
                max: count as u32,
                stop: None,
                order: Order::Sequential,
                until_decided: None,
            });
        }
        if let Some(args) = json.get("until_decided") {
            return self.until_decided(attr, args, has_claims);
        }
        let args = json.get("until")?;
        let get = |key: &str| args.get(key).and_then(Json::as_f64).unwrap_or(f64::NAN);
        let (ci, width, max, min) = (get("ci_ratio"), get("width_ratio"), get("max"), get("min"));
        let metric = args.get("of").and_then(Json::as_str).unwrap_or_default().to_string();
        let statistic = match args.get("statistic").and_then(Json::as_str) {
            Some("median") => Statistic::Median,
            _ => Statistic::Mean,
        };
        // Every problem of the rule at once, each at its argument.
        let at = |name: &str| argument_span(&attr.value, name).unwrap_or(value.span);
        let problems = rule_problems(statistic, [ci, width, min, max], at);
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
                statistic,
                confidence_ratio: ci,
                width_ratio: width,
                min: min as u32,
            }),
            order: Order::Sequential,
            until_decided: None,
        })
    }
}

impl Checker<'_> {
    /// `until_decided(max = N, min = M)`: `1 <= min <= max <= MAX_TRIALS`
    /// (E0703), and claims to decide (E1112).
    fn until_decided(&mut self, attr: &Attribute, args: &Json, has_claims: bool) -> Option<Repeat> {
        let get = |key: &str| args.get(key).and_then(Json::as_u64).unwrap_or(0);
        let (max, min) = (get("max"), get("min"));
        let at = |name: &str| argument_span(&attr.value, name).unwrap_or(attr.value.span);
        let mut ok = true;
        if !(1..=MAX_TRIALS).contains(&max) {
            self.report(
                Diagnostic::error(
                    Code::E0703,
                    format!("invalid repeat rule: `max` must lie between 1 and {MAX_TRIALS}"),
                )
                .primary(at("max"), "in this rule"),
            );
            ok = false;
        } else if min < 1 || min > max {
            self.report(
                Diagnostic::error(
                    Code::E0703,
                    format!("invalid repeat rule: `min` must lie between 1 and `max` ({max})"),
                )
                .primary(at("min"), "in this rule"),
            );
            ok = false;
        }
        if !has_claims {
            self.report(
                Diagnostic::error(Code::E1112, "`until_decided` has no claims to decide")
                    .primary(attr.value.span, "the experiment has no `expect` block")
                    .help("add an `expect` block with claims, or repeat a fixed number of times"),
            );
            ok = false;
        }
        ok.then_some(Repeat {
            max: max as u32,
            stop: None,
            order: Order::Sequential,
            until_decided: Some(DecideRule { min: min as u32 }),
        })
    }
}

/// The experiment's `order`, or the default for the plan's points and repetitions.
pub(crate) fn order(settings: &serde_json::Map<String, Json>, plan: &exp_plan::Plan) -> Order {
    let written = settings.get("order").and_then(Json::as_str).and_then(Order::from_name);
    written.unwrap_or_else(|| Order::default_for(plan.point_count(), plan.repeat.max))
}

/// The problems of a rule's numbers (`ci`, `width`, `min`, `max`), each at
/// its argument (`at` gives an argument's span).
fn rule_problems(
    statistic: Statistic,
    [ci, width, min, max]: [f64; 4],
    at: impl Fn(&str) -> Span,
) -> Vec<(Span, String)> {
    let mut problems: Vec<(Span, String)> = Vec::new();
    let ci_valid = ci > 0.0 && ci < 1.0;
    if !ci_valid {
        let found = display_quantity(Dimension::Percent, ci);
        problems.push((
            at("ci"),
            format!("`ci` must lie strictly between 0% and 100%, found {found}"),
        ));
    }
    if width.is_nan() || width <= 0.0 {
        problems.push((at("width"), "`width` must be positive".to_string()));
    }
    let fewest = fewest_repetitions(statistic, ci);
    if min.is_nan() || min < 2.0 {
        let why = "`min` must be at least 2: a confidence interval needs two samples";
        problems.push((at("min"), why.to_string()));
    } else if ci_valid && max >= min && max < f64::from(fewest) {
        problems.push((
            at("max"),
            format!(
                "`max` is {max}, but the median's {} interval needs at least {fewest} repetitions: \
                 the rule could never be met",
                display_quantity(Dimension::Percent, ci)
            ),
        ));
    } else if max.is_nan() || max < min || max > MAX_TRIALS as f64 {
        problems.push((
            at("max"),
            format!("`max` must lie between `min` ({min}) and {MAX_TRIALS}"),
        ));
    }
    problems
}

/// The fewest repetitions that give the statistic an interval at
/// confidence `ci`: 2 for a mean; for a median, the smallest n whose
/// order-statistic interval exists (6 at 95%).
fn fewest_repetitions(statistic: Statistic, ci: f64) -> u32 {
    match statistic {
        Statistic::Mean => 2,
        Statistic::Median => (2..=64)
            .find(|&n| {
                exp_stats::intervals::order_statistic_ranks(u64::from(n), 0.5, ci)
                    .is_some_and(|(low, high)| low.is_some() && high.is_some())
            })
            .unwrap_or(64),
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
