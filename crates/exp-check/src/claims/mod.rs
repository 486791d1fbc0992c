//! Claims (`expect` blocks): each checked against the experiment (metrics
//! of its workloads' kinds, units, sweep points, anomaly phases, trends,
//! `abort`) and lowered to the plan's [`exp_plan::claims::Claim`], every
//! mistake reported in one pass (E11xx).

mod points;
mod stat;

pub(crate) use stat::MONITOR;

use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::claims::{Abort, Claim, ClaimKind, CmpOp, Direction, Term};
use exp_plan::{Parameter, Unit};
use exp_syntax::ast::{self, Block, ClaimForm, Member};

use crate::checker::{Checker, Scope};
use crate::registry::claims::{compatible, describe_unit};
use crate::registry::BlockSchema;
use crate::value::ValueKind;

/// Grace of `abort` without one: a violation must last this long.
const DEFAULT_GRACE_NS: u64 = 1_000_000_000;

/// What claims are checked against.
pub(crate) struct Context<'c> {
    /// Each labelled workload of the experiment, with its kind, and the
    /// monitor (as [`MONITOR`]) if the experiment has one.
    pub workloads: Vec<(&'c str, &'static BlockSchema)>,
    /// The sweep's parameters with their values; `None` when they did not
    /// lower (their own errors are reported).
    pub parameters: Option<&'c [Parameter]>,
}

/// Whether the experiment has claims (or an `expect` block that lost some
/// to syntax errors, already reported).
pub(crate) fn has_claims(experiment: &Block) -> bool {
    experiment
        .members
        .iter()
        .any(|m| matches!(m, Member::Expect(e) if !e.claims.is_empty() || e.recovered))
}

impl Checker<'_> {
    /// Every claim of the experiment's `expect` blocks, in source order;
    /// `None` when any of them has a mistake (each reported).
    pub(crate) fn claims(&mut self, experiment: &Block, ctx: &Context) -> Option<Vec<Claim>> {
        let mut claims = Vec::new();
        let mut failed = false;
        for member in &experiment.members {
            let Member::Expect(expect) = member else { continue };
            let group = expect.label.as_ref().map(|l| l.value.clone());
            for claim in &expect.claims {
                match self.claim(claim, group.clone(), ctx) {
                    Some(claim) => claims.push(claim),
                    None => failed = true,
                }
            }
        }
        (!failed).then_some(claims)
    }

    fn claim(&mut self, claim: &ast::Claim, group: Option<String>, ctx: &Context) -> Option<Claim> {
        let kind = match &claim.form {
            ClaimForm::Compare { left, op, right } => {
                let (left_term, right_term) = (self.claim_term(left, ctx), self.claim_term(right, ctx));
                let (left_term, right_term) = (left_term?, right_term?);
                self.check_sides(left, &left_term, right, &right_term)?;
                ClaimKind::Compare {
                    left: align(left_term.clone(), &right_term),
                    op: cmp_op(&op.text),
                    right: align(right_term, &left_term),
                }
            }
            ClaimForm::Within { left, tolerance, right } => {
                let ratio = self.tolerance(tolerance);
                let (left_term, right_term) = (self.claim_term(left, ctx), self.claim_term(right, ctx));
                let (left_term, right_term) = (left_term?, right_term?);
                self.check_sides(left, &left_term, right, &right_term)?;
                ClaimKind::Within {
                    left: align(left_term.clone(), &right_term),
                    tolerance_ratio: ratio?,
                    right: align(right_term, &left_term),
                }
            }
            ClaimForm::Trend {
                stat,
                direction,
                parameter,
            } => {
                let resolved = self.claim_stat(stat, ctx);
                if let Some((fixed, _)) = stat.points.iter().find(|(p, _)| p.name == parameter.name) {
                    self.report(
                        Diagnostic::error(
                            Code::E1107,
                            format!("the trend runs over `{}`, which `at` fixes", fixed.name),
                        )
                        .primary(fixed.span, "fixed here")
                        .secondary(parameter.span, "the trend's parameter")
                        .help("leave the parameter out of `at`: the trend compares its values"),
                    );
                    return None;
                }
                let parameter = self.trend_parameter(parameter, ctx);
                ClaimKind::Trend {
                    stat: resolved?,
                    direction: match direction.name.as_str() {
                        "increases" => Direction::Increases,
                        _ => Direction::Decreases,
                    },
                    parameter: parameter?,
                }
            }
        };
        let abort = match &claim.abort {
            Some(abort) => Some(self.claim_abort(abort, &kind)?),
            None => None,
        };
        Some(Claim {
            text: exp_syntax::claim_text(claim),
            group,
            origin: self.origin(claim.span),
            kind,
            abort,
        })
    }

    /// A side of a claim: a constant in base units, or a (scaled) statistic.
    fn claim_term(&mut self, term: &ast::Term, ctx: &Context) -> Option<Term> {
        match term {
            ast::Term::Constant(expr) => {
                let (value, unit) = self.claim_constant(expr)?;
                Some(Term::Constant {
                    value,
                    unit,
                    time_scaled: false,
                })
            }
            ast::Term::TimeScaled { value, .. } => match self.claim_constant(value)? {
                (value, Unit::Ns) => Some(Term::Constant {
                    value,
                    unit: Unit::Ns,
                    time_scaled: true,
                }),
                (_, unit) => {
                    self.report(
                        Diagnostic::error(Code::E1102, "`scaled(…)` takes a duration of the schedule")
                            .primary(value.span, format!("{}, not a duration", describe_unit(unit)))
                            .help("e.g. `scaled(10s)`: a window's length, which `--time-scale` multiplies"),
                    );
                    None
                }
            },
            ast::Term::Stat { factor, stat, .. } => {
                let factor = factor.as_ref().map(|expr| self.factor(expr));
                let stat = self.claim_stat(stat, ctx)?;
                Some(Term::Scaled {
                    factor: factor.unwrap_or(Some(1.0))?,
                    stat,
                })
            }
        }
    }

    /// A number or quantity in base units, with its unit (a plain number
    /// is a count; `%` a ratio).
    pub(super) fn claim_constant(&mut self, expr: &ast::Expr) -> Option<(f64, Unit)> {
        let scope = Scope {
            module: self.program.root,
            sweep: None,
        };
        match self.eval(expr, scope).kind {
            ValueKind::Int(i) => Some((i as f64, Unit::Count)),
            ValueKind::Float(f) => Some((f, Unit::Count)),
            ValueKind::Quantity(dimension, x) => Some((x, crate::registry::claims::unit(Some(dimension)))),
            _ => None,
        }
    }

    /// `k` of `k * stat`: a plain number.
    fn factor(&mut self, expr: &ast::Expr) -> Option<f64> {
        match self.claim_constant(expr)? {
            (k, Unit::Count) => Some(k),
            (_, unit) => {
                self.report(
                    Diagnostic::error(Code::E1102, "a statistic's factor is a plain number")
                        .primary(expr.span, format!("{}, not a number", describe_unit(unit)))
                        .help("the factor keeps the statistic's unit: `2 * p99(…)`"),
                );
                None
            }
        }
    }

    /// `within T of`: `T` a percentage.
    fn tolerance(&mut self, expr: &ast::Expr) -> Option<f64> {
        match self.claim_constant(expr)? {
            (t, Unit::Ratio) => Some(t),
            _ => {
                self.report(
                    Diagnostic::error(Code::E1102, "the tolerance of `within` is a percentage")
                        .primary(expr.span, "not a percentage")
                        .help("e.g. `within 15% of 125ms`"),
                );
                None
            }
        }
    }

    /// Both sides of a comparison have the same dimension (E1102), and at
    /// least one is a statistic (E1111).
    fn check_sides(&mut self, left: &ast::Term, l: &Term, right: &ast::Term, r: &Term) -> Option<()> {
        let unit = |t: &Term| match t {
            Term::Constant { unit, .. } => *unit,
            Term::Scaled { stat, .. } => stat.unit,
        };
        match (l, r) {
            (Term::Constant { .. }, Term::Constant { .. }) => {
                self.report(
                    Diagnostic::error(Code::E1111, "a claim compares no statistic")
                        .primary(left.span().to(right.span()), "two constants")
                        .help("compare a statistic of the run: `p99(ack_latency) < 25ms`"),
                );
                None
            }
            _ if compatible(unit(l), unit(r)) => Some(()),
            (Term::Scaled { stat, .. }, _) => {
                self.unit_mismatch(right.span(), unit(r), stat.unit, &stat.metric);
                None
            }
            (_, Term::Scaled { stat, .. }) => {
                self.unit_mismatch(left.span(), unit(l), stat.unit, &stat.metric);
                None
            }
        }
    }

    /// E1102 at `span`, which has `found`'s unit where `expected`'s (that of `metric`) is needed.
    pub(super) fn unit_mismatch(&mut self, span: Span, found: Unit, expected: Unit, metric: &str) {
        let what = if metric.is_empty() {
            "the statistic".to_string()
        } else {
            format!("`{metric}`")
        };
        self.report(
            Diagnostic::error(Code::E1102, "the two sides of this claim have different units")
                .primary(span, describe_unit(found))
                .help(format!("{what} is compared with {}", describe_unit(expected))),
        );
    }

    /// The parameter a trend runs over: swept, with at least two values (E1107).
    fn trend_parameter(&mut self, name: &ast::Ident, ctx: &Context) -> Option<String> {
        let parameters = ctx.parameters?;
        let swept: Vec<&str> = parameters
            .iter()
            .filter(|p| p.values.len() >= 2)
            .map(|p| p.name.as_str())
            .collect();
        if swept.contains(&name.name.as_str()) {
            return Some(name.name.clone());
        }
        let help = match exp_diagnostics::closest(&name.name, swept.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None if swept.is_empty() => "add a `sweep` with two or more values of a parameter".to_string(),
            None => format!("swept parameters: {}", swept.join(", ")),
        };
        self.report(
            Diagnostic::error(
                Code::E1107,
                format!("`{}` is not a parameter the sweep varies", name.name),
            )
            .primary(name.span, "not swept")
            .help(help),
        );
        None
    }

    /// `abort(grace = …)`, on a threshold of a fleet's or traffic workload's rows (E1108).
    fn claim_abort(&mut self, abort: &ast::Abort, kind: &ClaimKind) -> Option<Abort> {
        if let Some(reason) = cannot_abort(kind) {
            self.report(
                Diagnostic::error(Code::E1108, "this claim cannot `abort`")
                    .primary(abort.span, "not allowed here")
                    .note(reason)
                    .help("`abort` goes on a threshold such as `p99(fleet.s.ack_latency) < 25ms abort`"),
            );
            return None;
        }
        let mut grace_ns = DEFAULT_GRACE_NS;
        for arg in &abort.args {
            let name = arg.name.as_ref().map(|n| n.name.as_str());
            match (name, self.claim_constant(&arg.value)) {
                (Some("grace"), Some((x, Unit::Ns))) if x >= 0.0 => grace_ns = x.round() as u64,
                (Some("grace"), Some(_)) => {
                    self.report(
                        Diagnostic::error(Code::E1108, "`grace` is a duration")
                            .primary(arg.value.span, "not a duration")
                            .help("e.g. `abort(grace = 2s)`"),
                    );
                    return None;
                }
                (Some("grace"), None) => return None,
                _ => {
                    let span = arg.name.as_ref().map_or(arg.value.span, |n| n.span);
                    self.report(
                        Diagnostic::error(Code::E1108, "`abort` takes only `grace`")
                            .primary(span, "unknown argument")
                            .help("e.g. `abort(grace = 2s)`"),
                    );
                    return None;
                }
            }
        }
        Some(Abort { grace_ns })
    }
}

/// A plain-number constant takes the unit of the statistic it is compared
/// with (`loss(…) == 0` compares ratios); other terms are kept.
fn align(term: Term, other: &Term) -> Term {
    match (term, other) {
        (
            Term::Constant {
                value,
                unit: Unit::Count,
                time_scaled,
            },
            Term::Scaled { stat, .. },
        ) if compatible(Unit::Count, stat.unit) => Term::Constant {
            value,
            unit: stat.unit,
            time_scaled,
        },
        (term, _) => term,
    }
}

/// Row metrics whose rows are made from several stored rows (a window's
/// throughput from its intervals): never watched for `abort`.
const AGGREGATE_ROW_METRICS: [(&str, &str); 1] = [("traffic", "window_throughput")];

/// Why a claim of this kind cannot abort a run, if it cannot.
fn cannot_abort(kind: &ClaimKind) -> Option<&'static str> {
    use exp_plan::claims::StatFn;
    let ClaimKind::Compare { left, right, .. } = kind else {
        return Some("only thresholds abort: `within` and trends are decided after the run");
    };
    let stat = match (left, right) {
        (Term::Scaled { stat, .. }, Term::Constant { .. }) | (Term::Constant { .. }, Term::Scaled { stat, .. }) => stat,
        _ => return Some("only thresholds (a statistic against a constant) abort"),
    };
    if !matches!(stat.kind.as_str(), "fleet" | "traffic") {
        return Some("only a fleet's or traffic workload's rows are watched while the run goes on");
    }
    if AGGREGATE_ROW_METRICS.contains(&(stat.kind.as_str(), stat.metric.as_str())) {
        return Some("a window's throughput is known only once its window ends");
    }
    match stat.function {
        StatFn::Value | StatFn::MaxKs | StatFn::MaxTv => Some("trial metrics are known only once a trial ends"),
        StatFn::Stddev | StatFn::Cv | StatFn::Range | StatFn::MaxOverMin => {
            Some("a spread of the rows: rows still to come can always change it")
        }
        _ => None,
    }
}

/// The plan's operator for `<`, `<=`, `>`, `>=`, `==` (the grammar allows no other).
pub(super) fn cmp_op(text: &str) -> CmpOp {
    match text {
        "<" => CmpOp::Lt,
        "<=" => CmpOp::Le,
        ">" => CmpOp::Gt,
        ">=" => CmpOp::Ge,
        _ => CmpOp::Eq,
    }
}
