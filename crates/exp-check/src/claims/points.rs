//! `at P = V` in a claim's statistic, and the parameter of a trend: names
//! and values checked against the sweep.

use exp_diagnostics::{closest, Code, Diagnostic};
use exp_plan::{Parameter, PointValue, Value as PlanValue};
use exp_syntax::ast::{Expr, ExprKind, Ident};

use super::Context;
use crate::checker::{Checker, Scope};

/// Values listed in a hint, at most.
const SHOWN: usize = 12;
/// Values of a range searched for a match, at most (a range's values are
/// its ends and step: a value past this is not found, and said so).
const SEARCHED: usize = 100_000;

impl Checker<'_> {
    /// Each `at` selection as the parameter's own value (E1103 when the
    /// parameter or the value is not in the sweep).
    pub(super) fn claim_points(
        &mut self,
        points: &[(Ident, Expr)],
        ctx: &Context,
    ) -> Option<Vec<(String, PointValue)>> {
        let mut out = Vec::new();
        let mut failed = false;
        for (name, value) in points {
            match self.claim_point(name, value, ctx) {
                Some(point) => out.push(point),
                None => failed = true,
            }
        }
        (!failed).then_some(out)
    }

    fn claim_point(&mut self, name: &Ident, value: &Expr, ctx: &Context) -> Option<(String, PointValue)> {
        let parameters = ctx.parameters?;
        let parameter = self.swept(name, parameters, "in `at`")?;
        let values = &parameter.values;
        let count = values.len().min(SEARCHED);
        // A labelled value may be named by its label (`at rtt = paths`).
        let label = match &value.kind {
            ExprKind::Path(path) if path.segments.len() == 1 => Some(path.dotted()),
            ExprKind::Str(s) => Some(s.clone()),
            _ => None,
        };
        let by_label = label.and_then(|l| (0..count).filter_map(|i| values.get(i)).find(|v| v.label == l));
        if let Some(found) = by_label {
            return Some((parameter.name.clone(), found.into_owned()));
        }
        let evaluated = self.eval(
            value,
            Scope {
                module: self.program.root,
                sweep: None,
            },
        );
        let wanted = self.point_value(&evaluated)?;
        if let Some(found) = (0..count)
            .filter_map(|i| values.get(i))
            .find(|v| same(&v.value, &wanted))
        {
            return Some((parameter.name.clone(), found.into_owned()));
        }
        let shown: Vec<String> = (0..values.len().min(SHOWN))
            .filter_map(|i| values.get(i))
            .map(|v| v.label.clone())
            .collect();
        let more = if values.len() > SHOWN { ", …" } else { "" };
        self.report(
            Diagnostic::error(
                Code::E1103,
                format!("`{}` is never {} in the sweep", parameter.name, text(value)),
            )
            .primary(value.span, "not a value of the sweep")
            .help(format!("values of `{}`: {}{more}", parameter.name, shown.join(", "))),
        );
        None
    }

    /// The sweep parameter `name` (E1103 naming where it was used, with the
    /// parameters there are).
    pub(super) fn swept<'p>(&mut self, name: &Ident, parameters: &'p [Parameter], used: &str) -> Option<&'p Parameter> {
        if let Some(found) = parameters.iter().find(|p| p.name == name.name) {
            return Some(found);
        }
        let names: Vec<&str> = parameters.iter().map(|p| p.name.as_str()).collect();
        let help = match closest(&name.name, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None if names.is_empty() => "the experiment has no `sweep`".to_string(),
            None => format!("sweep parameters: {}", names.join(", ")),
        };
        self.report(
            Diagnostic::error(Code::E1103, format!("no sweep parameter `{}` {used}", name.name))
                .primary(name.span, "not a sweep parameter")
                .help(help),
        );
        None
    }
}

/// Equal values, numbers compared by value whatever their type.
fn same(a: &PlanValue, b: &PlanValue) -> bool {
    let number = |v: &PlanValue| match v {
        PlanValue::Int(i) => Some(*i as f64),
        PlanValue::Float(f) => Some(*f),
        _ => None,
    };
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn text(value: &Expr) -> String {
    match &value.kind {
        ExprKind::Number(n) => n.clone(),
        ExprKind::Quantity { number, unit } => format!("{number}{unit}"),
        ExprKind::Path(p) => p.dotted(),
        ExprKind::Str(s) => format!("\"{s}\""),
        _ => "this value".to_string(),
    }
}
