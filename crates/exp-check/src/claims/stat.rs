//! A claim's statistic resolved against the experiment: its function, the
//! workload and metric it names, its phase and sweep points, its unit.

use exp_diagnostics::{closest, Code, Diagnostic, Span};
use exp_plan::claims::{Phase, PhaseRelation, Stat, StatFn};
use exp_plan::Unit;
use exp_syntax::ast::{self, Path};

use super::Context;
use crate::checker::Checker;
use crate::registry::claims::{self as catalogue, Applies, STATISTICS};
use crate::registry::{self, BlockSchema, Role};

/// The name the monitor's metrics are found by: `monitor.cpu_user_pct`.
pub(crate) const MONITOR: &str = "monitor";

/// The workload and metric a statistic names.
struct Target {
    workload: String,
    kind: &'static str,
    metric: String,
    unit: Unit,
}

impl Checker<'_> {
    /// The statistic resolved, or `None` after reporting every problem.
    pub(super) fn claim_stat(&mut self, stat: &ast::Stat, ctx: &Context) -> Option<Stat> {
        let Some((schema, q)) = catalogue::statistic(&stat.function.name) else {
            let name = stat.function.name.as_str();
            let names = STATISTICS.iter().map(|s| s.name);
            let help = match name {
                "avg" | "average" => Some("did you mean `mean`?".to_string()),
                _ if name.starts_with('p') && name[1..].bytes().all(|b| b.is_ascii_digit()) => {
                    Some("percentiles are `p` and two digits (`p05`, `p99`), or `p999`, `p9999`".to_string())
                }
                _ => closest(name, names).map(|s| format!("did you mean `{s}`?")),
            };
            self.report(
                Diagnostic::error(Code::E1109, format!("unknown statistic `{name}`"))
                    .primary(stat.function.span, "not a statistic")
                    .with_help(help)
                    .note(format!(
                        "statistics: {}",
                        STATISTICS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                    )),
            );
            return None;
        };
        let condition = self.share_condition(stat, schema.applies);
        let target = match schema.applies {
            Applies::Workload(kind) => self.claim_workload(&stat.metric, kind, &stat.function.name, ctx),
            applies => self.claim_metric(&stat.metric, applies == Applies::Trial, ctx),
        };
        let phase = self.claim_phase(stat, ctx);
        // A trial metric (or an xml set's distance) is one value per trial:
        // it has no rows to split by phase.
        let per_trial = matches!(stat.function.name.as_str(), "value" | "max_ks" | "max_tv");
        if let (true, Some((relation, _))) = (per_trial, &stat.phase) {
            self.report(
                Diagnostic::error(
                    Code::E1111,
                    format!("`{}` has one value per trial: no phases", stat.function.name),
                )
                .primary(relation.span, "rows by phase")
                .help("phases apply to row metrics: `p99(ack_latency during cpu)`"),
            );
            return None;
        }
        let points = self.claim_points(&stat.points, ctx);
        let target = target?;
        let function = match (schema.applies, q) {
            (Applies::Workload(_), _) => match stat.function.name.as_str() {
                "loss" => StatFn::Loss,
                "failures" => StatFn::Failures,
                "max_ks" => StatFn::MaxKs,
                _ => StatFn::MaxTv,
            },
            (Applies::Trial, _) => StatFn::Value,
            (Applies::Share, _) => {
                let (op, threshold, unit) = condition??;
                if !catalogue::compatible(unit, target.unit) {
                    let (_, value) = stat.condition.as_ref()?;
                    self.unit_mismatch(value.span, unit, target.unit, &target.metric);
                    return None;
                }
                StatFn::Share { op, threshold }
            }
            (Applies::Rows, Some(q)) => StatFn::Quantile { q },
            (Applies::Rows, None) => match stat.function.name.as_str() {
                "mean" => StatFn::Mean,
                "median" => StatFn::Median,
                "min" => StatFn::Min,
                "stddev" => StatFn::Stddev,
                "cv" => StatFn::Cv,
                "range" => StatFn::Range,
                "max_over_min" => StatFn::MaxOverMin,
                _ => StatFn::Max,
            },
        };
        let unit = match function {
            StatFn::Share { .. } | StatFn::Loss | StatFn::Failures | StatFn::Cv => Unit::Ratio,
            StatFn::MaxKs | StatFn::MaxTv | StatFn::MaxOverMin => Unit::Count,
            _ => target.unit,
        };
        Some(Stat {
            function,
            workload: target.workload,
            kind: target.kind.to_string(),
            metric: target.metric,
            phase: phase?,
            points: points?,
            unit,
        })
    }

    /// `share`'s condition (operator, threshold in base units, its unit);
    /// E1111 when it is missing or given to another statistic. The outer
    /// `None` is an error, the inner one no condition.
    #[allow(clippy::type_complexity, reason = "two levels of absence, each documented")]
    fn share_condition(
        &mut self,
        stat: &ast::Stat,
        applies: Applies,
    ) -> Option<Option<(exp_plan::claims::CmpOp, f64, Unit)>> {
        match (&stat.condition, applies) {
            (None, Applies::Share) => {
                self.report(
                    Diagnostic::error(Code::E1111, "`share` needs a condition")
                        .primary(stat.span, "the share of which rows?")
                        .help(format!("e.g. `share({} < 25ms)`", stat.metric.dotted())),
                );
                None
            }
            (Some((op, _)), applies) if applies != Applies::Share => {
                self.report(
                    Diagnostic::error(Code::E1111, format!("`{}` takes no condition", stat.function.name))
                        .primary(op.span, "a condition")
                        .help(format!(
                            "the share of rows meeting a condition is `share({} …)`",
                            stat.metric.dotted()
                        )),
                );
                None
            }
            (Some((op, value)), _) => {
                let (threshold, unit) = self.claim_constant(value)?;
                Some(Some((super::cmp_op(&op.text), threshold, unit)))
            }
            (None, _) => Some(None),
        }
    }

    /// A row or trial metric: `kind.label.metric`, `label.metric` or
    /// `metric` when exactly one workload measures it.
    fn claim_metric(&mut self, path: &Path, trial: bool, ctx: &Context) -> Option<Target> {
        let segments = &path.segments;
        let (workload, metric) = match segments.len() {
            1 => return self.bare_metric(path, trial, ctx),
            2 | 3 => (
                self.claim_target(&segments[..segments.len() - 1], ctx)?,
                &segments[segments.len() - 1],
            ),
            _ => {
                self.report(
                    Diagnostic::error(Code::E1101, format!("`{}` is not a metric", path.dotted()))
                        .primary(path.span, "too many parts")
                        .help("write `kind.label.metric`, `label.metric` or `metric`"),
                );
                return None;
            }
        };
        let (label, schema) = workload;
        match metric_unit(schema, &metric.name, trial) {
            Some(unit) => Some(Target {
                workload: label.to_string(),
                kind: schema.kind,
                metric: metric.name.clone(),
                unit,
            }),
            None => {
                self.unmeasured(metric.name.as_str(), metric.span, schema, trial);
                None
            }
        }
    }

    /// A metric named alone: the one workload measuring it (E1106 if several).
    fn bare_metric(&mut self, path: &Path, trial: bool, ctx: &Context) -> Option<Target> {
        let name = path.dotted();
        let measuring: Vec<&(&str, &'static BlockSchema)> = ctx
            .workloads
            .iter()
            .filter(|(_, schema)| metric_unit(schema, &name, trial).is_some())
            .collect();
        match measuring.as_slice() {
            [(label, schema)] => Some(Target {
                workload: (*label).to_string(),
                kind: schema.kind,
                metric: name.clone(),
                unit: metric_unit(schema, &name, trial)?,
            }),
            [] => {
                let other_sort = ctx
                    .workloads
                    .iter()
                    .find(|(_, s)| metric_unit(s, &name, !trial).is_some());
                if let Some((_, schema)) = other_sort {
                    self.unmeasured(&name, path.span, schema, trial);
                    return None;
                }
                let known: Vec<&str> = ctx
                    .workloads
                    .iter()
                    .flat_map(|(_, schema)| metric_names(schema, trial))
                    .collect();
                self.unknown_metric(&name, path.span, &known, trial);
                None
            }
            several => {
                let candidates: Vec<String> = several.iter().map(|(label, _)| format!("`{label}.{name}`")).collect();
                self.report(
                    Diagnostic::error(Code::E1106, format!("several workloads measure `{name}`"))
                        .primary(path.span, "which workload's?")
                        .help(format!("qualify it: {}", candidates.join(" or "))),
                );
                None
            }
        }
    }

    /// The workload `label` or `kind.label` names (E1110 when none).
    fn claim_target<'c>(
        &mut self,
        segments: &[ast::Ident],
        ctx: &Context<'c>,
    ) -> Option<(&'c str, &'static BlockSchema)> {
        let (kind, label) = match segments {
            [label] => (None, label),
            [kind, label] => (Some(kind), label),
            _ => return None,
        };
        if let Some(kind) = kind {
            if registry::block(&kind.name).is_none_or(|s| !matches!(s.role, Role::Workload { .. })) {
                let kinds = registry::BLOCKS
                    .iter()
                    .filter(|b| matches!(b.role, Role::Workload { .. }))
                    .map(|b| b.kind);
                self.report(
                    Diagnostic::error(Code::E1110, format!("`{}` is not a workload kind", kind.name))
                        .primary(kind.span, "not a workload kind")
                        .with_help(closest(&kind.name, kinds).map(|s| format!("did you mean `{s}`?"))),
                );
                return None;
            }
        }
        let fits = |schema: &BlockSchema| kind.is_none_or(|k| k.name == schema.kind);
        if let Some((l, schema)) = ctx.workloads.iter().find(|(l, s)| *l == label.name && fits(s)) {
            return Some((l, schema));
        }
        if kind.is_none() && label.name == MONITOR {
            self.report(
                Diagnostic::error(Code::E1110, "the experiment has no `monitor`")
                    .primary(label.span, "nothing samples the system metrics")
                    .help("add a `monitor` block to the experiment: the system metrics are sampled only with one"),
            );
            return None;
        }
        let candidates: Vec<&str> = ctx.workloads.iter().filter(|(_, s)| fits(s)).map(|(l, _)| *l).collect();
        let what = kind.map_or("workload".to_string(), |k| format!("`{}` workload", k.name));
        let help = match closest(&label.name, candidates.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None if candidates.is_empty() => format!("the experiment has no {what}"),
            None => format!("{what}s here: {}", candidates.join(", ")),
        };
        self.report(
            Diagnostic::error(Code::E1110, format!("no {what} is labelled `{}`", label.name))
                .primary(label.span, "unknown workload")
                .help(help),
        );
        None
    }

    /// A statistic of a workload itself (`loss(fleet.sensors)`), whose kind must be `kind`.
    fn claim_workload(&mut self, path: &Path, kind: &'static str, function: &str, ctx: &Context) -> Option<Target> {
        let (label, schema) = self.claim_target(&path.segments, ctx)?;
        if schema.kind != kind {
            self.report(
                Diagnostic::error(
                    Code::E1105,
                    format!(
                        "`{function}` is measured of `{kind}` workloads; `{label}` is a `{}`",
                        schema.kind
                    ),
                )
                .primary(path.span, format!("not a `{kind}` workload"))
                .help(format!("name a `{kind}` workload: `{function}({kind}.LABEL)`")),
            );
            return None;
        }
        Some(Target {
            workload: label.to_string(),
            kind,
            metric: String::new(),
            unit: Unit::Ratio,
        })
    }

    /// `during`, `before` or `after` an anomaly of the experiment (E1104).
    fn claim_phase(&mut self, stat: &ast::Stat, ctx: &Context) -> Option<Option<Phase>> {
        let Some((relation, anomaly)) = &stat.phase else {
            return Some(None);
        };
        let anomalies: Vec<&str> = ctx
            .workloads
            .iter()
            .filter(|(_, s)| s.kind == "anomaly")
            .map(|(l, _)| *l)
            .collect();
        if !anomalies.contains(&anomaly.name.as_str()) {
            let help = match closest(&anomaly.name, anomalies.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None if anomalies.is_empty() => "the experiment has no anomaly: add an `anomaly` block".into(),
                None => format!("anomalies here: {}", anomalies.join(", ")),
            };
            self.report(
                Diagnostic::error(Code::E1104, format!("no anomaly is labelled `{}`", anomaly.name))
                    .primary(anomaly.span, "unknown anomaly")
                    .help(help),
            );
            return None;
        }
        let relation = match relation.name.as_str() {
            "during" => PhaseRelation::During,
            "before" => PhaseRelation::Before,
            _ => PhaseRelation::After,
        };
        Some(Some(Phase {
            relation,
            anomaly: anomaly.name.clone(),
        }))
    }

    /// E1105 (another kind measures it), E1111 (the other sort of metric)
    /// or E1101 (nothing measures it) for `metric` of a `schema` workload.
    fn unmeasured(&mut self, metric: &str, span: Span, schema: &BlockSchema, trial: bool) {
        let other_kinds: Vec<&str> = registry::BLOCKS
            .iter()
            .filter(|b| metric_unit(b, metric, trial).is_some())
            .map(|b| b.kind)
            .collect();
        if !other_kinds.is_empty() {
            self.report(
                Diagnostic::error(
                    Code::E1105,
                    format!("`{}` workloads do not measure `{metric}`", schema.kind),
                )
                .primary(span, format!("not measured by `{}`", schema.kind))
                .help(format!("measured by: {}", other_kinds.join(", ")))
                .note(metrics_note(schema, trial)),
            );
        } else if metric_unit(schema, metric, !trial).is_some() {
            let (sort, instead) = match trial {
                true => ("a row metric", "a statistic such as `p99(…)` or `mean(…)`"),
                false => ("a trial metric", "`value(…)`"),
            };
            self.report(
                Diagnostic::error(Code::E1111, format!("`{metric}` is {sort}"))
                    .primary(span, sort)
                    .help(format!("apply {instead}")),
            );
        } else {
            self.unknown_metric(metric, span, &metric_names(schema, trial), trial);
        }
    }

    fn unknown_metric(&mut self, metric: &str, span: Span, known: &[&str], trial: bool) {
        let sort = if trial { "trial metrics" } else { "row metrics" };
        let listed = if known.is_empty() {
            format!("no workload here has {sort}")
        } else {
            format!("{sort} here: {}", known.join(", "))
        };
        self.report(
            Diagnostic::error(Code::E1101, format!("unknown metric `{metric}`"))
                .primary(span, "no workload measures this")
                .with_help(closest(metric, known.iter().copied()).map(|s| format!("did you mean `{s}`?")))
                .note(listed),
        );
    }
}

/// The unit of `metric` if a `schema` workload (or the monitor) measures
/// it (a row or trial metric).
fn metric_unit(schema: &BlockSchema, metric: &str, trial: bool) -> Option<Unit> {
    match trial {
        true => schema
            .trial_metrics()
            .contains(&metric)
            .then(|| catalogue::trial_metric_unit(schema.kind, metric)),
        false => schema
            .row_metrics()
            .iter()
            .find(|m| m.name == metric)
            .map(|m| catalogue::unit(m.dimension)),
    }
}

/// The names of a workload kind's (or the monitor's) row or trial metrics.
fn metric_names(schema: &BlockSchema, trial: bool) -> Vec<&'static str> {
    match trial {
        true => schema.trial_metrics().to_vec(),
        false => schema.row_metrics().iter().map(|m| m.name).collect(),
    }
}

fn metrics_note(schema: &BlockSchema, trial: bool) -> String {
    let sort = if trial { "trial metrics" } else { "row metrics" };
    format!("`{}` {sort}: {}", schema.kind, metric_names(schema, trial).join(", "))
}
