//! Assembling the plan: experiment settings, sweep parameters with their
//! values, each workload's variants, source hashes. Points and trials are
//! not listed: `exp_plan` derives them.

use std::collections::BTreeMap;

use exp_diagnostics::limits::{group, MAX_VARIANTS};
use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::{
    Experiment, Monitor, Parameter, Plan, Source, SourceFile, Variants, Workload, MAX_TRIALS, PLAN_VERSION,
};
use exp_syntax::ast::{Attribute, Block, Member};
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};

use crate::checker::{Checker, Scope};
use crate::field;
use crate::registry::{self, Role};
use crate::sweep::{self, SweepParam, SweepValues};
use crate::value::Value;
use crate::{FixedSet, Options};

/// A workload block with its schema.
type WorkloadBlock<'b> = (&'b Block, &'static registry::BlockSchema);

impl Checker<'_> {
    pub(crate) fn plan(&mut self, experiment: &Block, options: &Options) -> Option<Plan> {
        let schema = registry::block("experiment")?;
        let root = self.program.root;
        let scope = Scope {
            module: root,
            sweep: None,
        };
        let settings: Vec<_> = schema.props.iter().filter(|p| p.name != "repeat").copied().collect();
        let settings = self.lower_props(experiment, &settings, scope);
        let workloads = workload_blocks(experiment);
        let has_claims = crate::claims::has_claims(experiment);
        let repeat = self.repeat(
            attribute(experiment, "repeat"),
            &workload_metrics(&workloads),
            has_claims,
        );
        let repetitions = repeat.as_ref().map_or(1, |r| r.max);
        let params = match self.sweep_params(first_child(experiment, "sweep"), repetitions) {
            Ok(params) => params,
            Err(too_many) => {
                self.too_many_trials(
                    experiment,
                    &sweep::count_text(too_many.trials),
                    too_many.counts,
                    repetitions,
                    &too_many.left_out,
                );
                return None;
            }
        };
        let monitor = first_child(experiment, "monitor");
        // Workloads are checked even when a setting is wrong (reported), so
        // that one pass shows every mistake; without a known `duration`,
        // "never ends" would only guess.
        let trial_ns = settings
            .as_ref()
            .and_then(|s| s.get("duration_ns"))
            .and_then(Json::as_u64);
        self.experiment_damaged = experiment.recovered || settings.is_none();
        if !self.trial_count_fits(experiment, &params, repetitions) {
            return None;
        }
        let lowered = self.lower_workloads(&workloads, &params, trial_ns);
        let lowered_monitor = monitor.and_then(|block| self.lower_monitor(block, &params));
        self.check_overlaps(&workloads, &lowered, &params);
        let mut blocks: Vec<&Block> = workloads.iter().map(|(b, _)| *b).collect();
        blocks.extend(monitor);
        self.report_unused_sweep(&params, &blocks);
        let parameters = self.plan_parameters(&params);
        // The monitor first: `monitor.METRIC` names its metrics even beside
        // a workload labelled `monitor` (that one is `KIND.monitor.METRIC`).
        let monitor_schema = monitor.and_then(|_| registry::block("monitor"));
        let monitored = monitor_schema.map(|schema| (crate::claims::MONITOR, schema));
        let labelled = monitored
            .into_iter()
            .chain(
                workloads
                    .iter()
                    .filter_map(|(b, s)| Some((b.label.as_ref()?.value.as_str(), *s))),
            )
            .collect();
        let context = crate::claims::Context {
            workloads: labelled,
            parameters: parameters.as_deref(),
        };
        let claims = self.claims(experiment, &context);
        if self.error_count() > 0 {
            return None;
        }
        let (settings, repeat) = (settings?, repeat?);
        let workloads: Vec<Variants<Workload>> = lowered.into_iter().map(complete).collect::<Option<_>>()?;
        // A monitor that does not lower everywhere (its errors are reported
        // with the properties) is dropped: the trials run without one.
        let monitor = lowered_monitor.and_then(complete);
        let mut plan = Plan {
            plan_version: PLAN_VERSION,
            compiler: format!("expc {}", env!("CARGO_PKG_VERSION")),
            source: self.source_info(),
            experiment: experiment_settings(experiment, &settings, options, trial_ns),
            repeat,
            parameters: parameters?,
            workloads,
            monitor,
            claims: claims?,
        };
        plan.repeat.order = crate::repeat::order(&settings, &plan);
        Some(plan)
    }

    /// E0704 unless the trials number at most [`MAX_TRIALS`]; returns whether they do.
    fn trial_count_fits(&mut self, experiment: &Block, params: &[SweepParam], repetitions: u32) -> bool {
        // Counted from the value counts before anything is expanded: the
        // product alone can be huge (10^12 trials used to ask for terabytes).
        let trial_count = sweep::trial_count(params, repetitions).unwrap_or(u64::MAX);
        if trial_count <= MAX_TRIALS {
            return true;
        }
        let count = match trial_count {
            u64::MAX => format!("more than {}", group(u64::MAX - 1)),
            n => group(n),
        };
        let counts = params
            .iter()
            .map(|p| sweep::values_label(p.span, p.values.len() as f64))
            .collect();
        self.too_many_trials(experiment, &count, counts, repetitions, &[]);
        false
    }

    /// Each workload's variants, its fields set.
    fn lower_workloads(
        &mut self,
        workloads: &[WorkloadBlock],
        params: &[SweepParam],
        trial_ns: Option<u64>,
    ) -> Vec<Variants<Option<Workload>>> {
        // Each block lowered once per combination of the values of the
        // parameters it names outside its fields, each field once per
        // combination of its own; diagnostics are deduplicated across them.
        let mut lowered: Vec<Variants<Option<Workload>>> = Vec::with_capacity(workloads.len());
        for (block, schema) in workloads {
            let fields = field::field_attributes(block, schema, params);
            let field_attrs: Vec<&Attribute> = fields.iter().map(|(a, _)| *a).collect();
            let mut variants = self.lower_variants(block, params, &field_attrs, |checker, scope| {
                checker.lower_workload(block, schema, scope, trial_ns)
            });
            variants.fields = self.lower_fields(schema, &fields, params);
            self.check_connect_ramp(block, &variants, trial_ns);
            lowered.push(variants);
        }
        lowered
    }

    /// The monitor block's variants (`None` if the registry has no monitor).
    fn lower_monitor(&mut self, block: &Block, params: &[SweepParam]) -> Option<Variants<Option<Monitor>>> {
        let props = registry::block("monitor")?.props;
        Some(self.lower_variants(block, params, &[], |checker, scope| {
            checker
                .lower_props(block, props, scope)
                .and_then(|m| serde_json::from_value::<Monitor>(Json::Object(m)).ok())
        }))
    }

    /// E0704: the sweep's points times the repetitions exceed [`MAX_TRIALS`];
    /// at the sweep block, with each factor of the product labelled (each
    /// parameter's value count in `counts`, and `repeat`).
    /// Parameters `left_out` of the count have errors of their own.
    fn too_many_trials(
        &mut self,
        experiment: &Block,
        count: &str,
        counts: Vec<(Span, String)>,
        repetitions: u32,
        left_out: &[String],
    ) {
        let at = first_child(experiment, "sweep").unwrap_or(experiment);
        let mut diagnostic = Diagnostic::error(
            Code::E0704,
            format!("the experiment has {count} trials, more than {}", group(MAX_TRIALS)),
        )
        .primary(at.kind.span, "too many trials");
        for (span, label) in counts {
            diagnostic = diagnostic.secondary(span, label);
        }
        if let Some(repeat) = attribute(experiment, "repeat").filter(|_| repetitions > 1) {
            diagnostic = diagnostic.secondary(
                repeat.value.span,
                format!("{} repetitions each", group(u64::from(repetitions))),
            );
        }
        for name in left_out {
            diagnostic = diagnostic.note(format!(
                "not counting `{name}`, whose range is too large on its own (its own error)"
            ));
        }
        self.report(diagnostic.help("narrow the sweep, or split it into several specs"));
    }

    /// Lowers `block` once per combination of the values of the sweep
    /// parameters it names outside the `fields` attributes, in variant order
    /// (first parameter outermost). Lowering reads the point only through
    /// names, so each result holds at every point with that combination, once
    /// its fields are set. The other parameters are bound at their first
    /// value, exactly as at the first point with the combination, so names,
    /// suggestions and diagnostics are those of a point. A combination that
    /// failed to lower is `None` and ends the lowering; more than
    /// [`MAX_VARIANTS`] combinations are E0705 and none is lowered.
    fn lower_variants<T>(
        &mut self,
        block: &Block,
        params: &[SweepParam],
        fields: &[&Attribute],
        mut lower: impl FnMut(&mut Self, Scope) -> Option<T>,
    ) -> Variants<Option<T>> {
        let named = field::names_outside_fields(block, fields);
        let (combinations, parameters) = sweep::named_combinations(params, &|param| named.contains(param));
        let count = params
            .iter()
            .filter(|p| named.contains(p.name.as_str()))
            .try_fold(1u64, |n, p| n.checked_mul(p.values.len() as u64));
        let mut variants = Vec::new();
        if count.is_none_or(|n| n > MAX_VARIANTS) {
            self.too_many_variants(block, params, &parameters);
            variants.push(None);
            return Variants {
                parameters: Vec::new(),
                variants,
                fields: Vec::new(),
            };
        }
        for point in combinations {
            let bindings: BTreeMap<String, Value> = sweep::bindings(params, &point);
            let scope = Scope {
                module: self.program.root,
                sweep: Some(&bindings),
            };
            // After a combination that fails, the next ones would mostly
            // repeat its diagnostics with other values: stop there.
            let variant = lower(self, scope);
            let failed = variant.is_none();
            variants.push(variant);
            if failed {
                break;
            }
        }
        Variants {
            parameters,
            variants,
            fields: Vec::new(),
        }
    }

    /// E0705: `block` varies in more combinations than [`MAX_VARIANTS`].
    fn too_many_variants(&mut self, block: &Block, params: &[SweepParam], named: &[String]) {
        let counts: Vec<String> = params
            .iter()
            .filter(|p| named.contains(&p.name))
            .map(|p| format!("`{}` ({} values)", p.name, group(p.values.len() as u64)))
            .collect();
        self.report(
            Diagnostic::error(
                Code::E0705,
                format!(
                    "`{}` varies in more than {} combinations of sweep values",
                    block.kind.name,
                    group(MAX_VARIANTS)
                ),
            )
            .primary(block.kind.span, "lowered once per combination")
            .note(format!("its properties name {}", counts.join(", ")))
            .help("sweep fewer values of these properties, or split the study into several specs"),
        );
    }

    /// The parameters with their values typed for the plan.
    fn plan_parameters(&mut self, params: &[SweepParam]) -> Option<Vec<Parameter>> {
        params
            .iter()
            .map(|p| {
                let values = match &p.values {
                    SweepValues::Listed(values) => exp_plan::Values::Listed(
                        values
                            .iter()
                            .map(|(value, label)| {
                                Some(exp_plan::PointValue {
                                    label: label.clone(),
                                    value: self.point_value(value)?,
                                })
                            })
                            .collect::<Option<_>>()?,
                    ),
                    SweepValues::Range { range, .. } => exp_plan::Values::Range(*range),
                };
                Some(Parameter {
                    name: p.name.clone(),
                    ty: p.ty.clone(),
                    values,
                })
            })
            .collect()
    }

    fn report_unused_sweep(&mut self, params: &[SweepParam], blocks: &[&Block]) {
        let mut used = FixedSet::default();
        for block in blocks {
            crate::query::block_names(block, &[], &mut used);
        }
        for param in params {
            if !used.contains(param.name.as_str()) {
                self.report(
                    Diagnostic::warning(Code::W0801, format!("sweep parameter `{}` is never used", param.name))
                        .primary(param.span, "no workload refers to it")
                        .help(format!("it still multiplies the trials by {}", param.values.len())),
                );
            }
        }
    }

    fn source_info(&self) -> Source {
        let mut all = Sha256::new();
        let mut files = Vec::new();
        for module in &self.program.modules {
            let file = self.sources.get(module.file);
            all.update(file.name.as_bytes());
            all.update([0]);
            all.update(file.text.as_bytes());
            files.push(SourceFile {
                name: file.name.clone(),
                sha256: format!("{:x}", Sha256::digest(file.text.as_bytes())),
            });
        }
        let root = self
            .sources
            .get(self.program.modules[self.program.root].file)
            .name
            .clone();
        Source {
            root,
            sha256: format!("{:x}", all.finalize()),
            files,
        }
    }
}

/// The experiment's blocks that are workloads, with their schemas.
fn workload_blocks(experiment: &Block) -> Vec<WorkloadBlock<'_>> {
    experiment
        .members
        .iter()
        .filter_map(|m| match m {
            Member::Block(b) => registry::block(&b.kind.name)
                .filter(|s| matches!(s.role, Role::Workload { .. }))
                .map(|s| (b, s)),
            _ => None,
        })
        .collect()
}

/// The metrics the workloads report (what `repeat`'s stopping rule may name).
fn workload_metrics(workloads: &[WorkloadBlock]) -> Vec<&'static str> {
    workloads
        .iter()
        .flat_map(|(_, s)| match s.role {
            Role::Workload { metrics, .. } => metrics.to_vec(),
            _ => Vec::new(),
        })
        .collect()
}

/// The experiment's first `kind` block (`sweep`, `monitor`).
fn first_child<'b>(experiment: &'b Block, kind: &str) -> Option<&'b Block> {
    experiment.members.iter().find_map(|m| match m {
        Member::Block(b) if b.kind.name == kind => Some(b),
        _ => None,
    })
}

/// The experiment's attribute `key`, if written.
fn attribute<'b>(experiment: &'b Block, key: &str) -> Option<&'b Attribute> {
    experiment.members.iter().find_map(|m| match m {
        Member::Attribute(a) if a.key.name == key => Some(a),
        _ => None,
    })
}

/// The plan's experiment section from the lowered settings; `--seed` overrides the spec's.
fn experiment_settings(
    experiment: &Block,
    settings: &Map<String, Json>,
    options: &Options,
    trial_ns: Option<u64>,
) -> Experiment {
    let master = options
        .seed
        .unwrap_or_else(|| settings.get("seed").and_then(Json::as_u64).unwrap_or(1));
    Experiment {
        name: experiment.label.as_ref().map(|l| l.value.clone()).unwrap_or_default(),
        description: settings
            .get("description")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
        seed: master,
        duration_ns: trial_ns,
        pause_ns: settings.get("pause_ns").and_then(Json::as_u64).unwrap_or(0),
    }
}

/// The variants if every combination lowered.
fn complete<T>(variants: Variants<Option<T>>) -> Option<Variants<T>> {
    Some(Variants {
        parameters: variants.parameters,
        variants: variants.variants.into_iter().collect::<Option<_>>()?,
        fields: variants.fields,
    })
}
