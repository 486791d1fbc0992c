//! Assembling the plan: experiment settings, sweep points with their
//! workloads, trials with their seeds, source hashes.

use std::collections::BTreeMap;
use std::fmt::Write;

use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{Experiment, Plan, Point, PointValue, Source, SourceFile, Trial, Workload, PLAN_VERSION};
use exp_syntax::ast::{Block, Member};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::checker::{Checker, Scope};
use crate::registry::{self, Role};
use crate::sweep::{self, block_mentions, cross_product, parameters, PointCache, MAX_TRIALS};
use crate::value::Value;
use crate::Options;

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
        let children = |kind: &str| -> Vec<&Block> {
            experiment
                .members
                .iter()
                .filter_map(|m| match m {
                    Member::Block(b) if b.kind.name == kind => Some(b),
                    _ => None,
                })
                .collect()
        };
        let workloads: Vec<(&Block, &'static registry::BlockSchema)> = experiment
            .members
            .iter()
            .filter_map(|m| match m {
                Member::Block(b) => registry::block(&b.kind.name)
                    .filter(|s| matches!(s.role, Role::Workload { .. }))
                    .map(|s| (b, s)),
                _ => None,
            })
            .collect();
        let metrics: Vec<&str> = workloads
            .iter()
            .flat_map(|(_, s)| match s.role {
                Role::Workload { metrics, .. } => metrics.to_vec(),
                _ => Vec::new(),
            })
            .collect();
        let repeat_attr = experiment.members.iter().find_map(|m| match m {
            Member::Attribute(a) if a.key.name == "repeat" => Some(a),
            _ => None,
        });
        let repeat = self.repeat(repeat_attr, &metrics);
        let params = self.sweep_params(children("sweep").first().copied());
        let monitor = children("monitor").first().copied();
        let settings = settings?;
        let repeat = repeat?;
        let trial_ns = settings.get("duration_ns").and_then(Json::as_u64);
        let points = cross_product(&params);
        let trial_count = points.len() as u64 * u64::from(repeat.max);
        if trial_count > MAX_TRIALS {
            self.report(
                Diagnostic::error(
                    Code::E0704,
                    format!("the experiment has {trial_count} trials, more than {MAX_TRIALS}"),
                )
                .primary(experiment.kind.span, "too many trials")
                .help("narrow the sweep, or split it into several specs"),
            );
            return None;
        }
        let mut workload_caches: Vec<PointCache<Option<Workload>>> =
            workloads.iter().map(|(b, _)| PointCache::new(b, &params)).collect();
        let mut monitor_cache = monitor.map(|b| PointCache::new(b, &params));
        let monitor_props = registry::block("monitor").map(|s| s.props);
        // Each parameter's values, typed once rather than at every point.
        let typed: Vec<Vec<Option<exp_plan::Value>>> = params
            .iter()
            .map(|p| p.values.iter().map(|(v, _)| self.point_value(v)).collect())
            .collect();
        let mut plan_points = Vec::with_capacity(points.len());
        for (index, point) in points.iter().enumerate() {
            // Built only when a block is lowered at this point, not found in a cache.
            let mut bindings: Option<BTreeMap<String, Value>> = None;
            let mut lowered = Vec::with_capacity(workloads.len());
            for ((block, schema), cache) in workloads.iter().zip(&mut workload_caches) {
                lowered.push(cache.get_or_lower(point, || {
                    let sweep = bindings.get_or_insert_with(|| sweep::bindings(&params, point));
                    let scope = Scope {
                        module: root,
                        sweep: Some(sweep),
                    };
                    self.lower_workload(block, schema, scope, trial_ns)
                }));
            }
            self.check_overlaps(&workloads, &lowered);
            let monitor = match (monitor, monitor_cache.as_mut()) {
                (Some(block), Some(cache)) => {
                    let props = monitor_props?;
                    cache.get_or_lower(point, || {
                        let sweep = bindings.get_or_insert_with(|| sweep::bindings(&params, point));
                        let scope = Scope {
                            module: root,
                            sweep: Some(sweep),
                        };
                        self.lower_props(block, props, scope)
                            .and_then(|m| serde_json::from_value(Json::Object(m)).ok())
                    })
                }
                _ => None,
            };
            let mut point_values = BTreeMap::new();
            for ((param, values), &value) in params.iter().zip(&typed).zip(point) {
                let label = param.values[value].1.clone();
                let value = values[value].clone()?;
                point_values.insert(param.name.clone(), PointValue { label, value });
            }
            plan_points.push((index as u32, point_values, lowered, monitor));
        }
        let mut blocks: Vec<&Block> = workloads.iter().map(|(b, _)| *b).collect();
        blocks.extend(monitor);
        self.report_unused_sweep(&params, &blocks);
        if self.error_count() > 0 {
            return None;
        }
        let master = options
            .seed
            .unwrap_or_else(|| settings.get("seed").and_then(Json::as_u64).unwrap_or(1));
        let mut trials = Vec::with_capacity(trial_count as usize);
        let mut points_out = Vec::with_capacity(plan_points.len());
        let mut label = String::new();
        for (index, values, workloads, monitor) in plan_points {
            let workloads: Vec<Workload> = workloads.into_iter().collect::<Option<_>>()?;
            for repetition in 0..repeat.max {
                label.clear();
                let _ = write!(label, "trial/{index}/{repetition}");
                let seed = crate::seeds::derive(master, &label);
                let seeds = workloads
                    .iter()
                    .map(|w| (w.name.clone(), crate::seeds::derive(seed, &w.name)))
                    .collect();
                trials.push(Trial {
                    trial: trials.len() as u32,
                    point: index,
                    repetition,
                    seed,
                    seeds,
                });
            }
            points_out.push(Point {
                index,
                values,
                workloads,
                monitor,
            });
        }
        Some(Plan {
            plan_version: PLAN_VERSION,
            compiler: format!("expc {}", env!("CARGO_PKG_VERSION")),
            source: self.source_info(),
            experiment: Experiment {
                name: experiment.label.as_ref().map(|l| l.value.clone()).unwrap_or_default(),
                description: settings
                    .get("description")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string(),
                seed: master,
                duration_ns: trial_ns,
                pause_ns: settings.get("pause_ns").and_then(Json::as_u64).unwrap_or(0),
            },
            repeat,
            parameters: parameters(&params),
            points: points_out,
            trials,
        })
    }

    /// A sweep value lowered without a target type: its own natural form.
    fn point_value(&mut self, value: &Value) -> Option<exp_plan::Value> {
        use crate::value::V;
        use exp_plan::Value as P;
        use exp_syntax::units::Dimension as D;
        Some(match &value.kind {
            V::Int(i) => P::Int(*i),
            V::Float(f) => P::Float(*f),
            V::Bool(b) => P::Bool(*b),
            V::Str(s) => P::String(s.clone()),
            V::Symbol(s) => P::Symbol(s.clone()),
            V::Quantity(D::Duration, x) => P::DurationNs(x.round() as u64),
            V::Quantity(D::Bytes, x) => P::Bytes(x.round() as u64),
            V::Quantity(D::Bandwidth, x) => P::BitPerS(x.round() as u64),
            V::Quantity(D::Rate, x) => P::PerS(*x),
            V::Quantity(D::Percent, x) => P::Ratio(*x),
            V::Dist(d, _) => P::Dist(d.clone()),
            V::List(items) => P::List(items.iter().map(|i| self.point_value(i)).collect::<Option<_>>()?),
            V::Record(fields) => P::Record(
                fields
                    .iter()
                    .map(|(k, v)| Some((k.clone(), self.point_value(v)?)))
                    .collect::<Option<_>>()?,
            ),
            V::Ctor(name, args) => P::Object(BTreeMap::from([(
                (*name).to_string(),
                json_value(&Json::Object(args.clone())),
            )])),
            V::Range(..) | V::Error => return None,
        })
    }

    fn report_unused_sweep(&mut self, params: &[crate::sweep::SweepParam], blocks: &[&Block]) {
        for param in params {
            if !blocks.iter().any(|b| block_mentions(b, &|name| name == param.name)) {
                self.report(
                    Diagnostic::warning(Code::W0801, format!("sweep parameter `{}` is never used", param.name))
                        .primary(param.span, "no workload refers to it")
                        .help(format!("it still multiplies the trials by {}", param.values.len())),
                );
            }
        }
    }

    /// Two cpuoccupy anomalies loading one core beyond 100 % at the same time
    /// would mislabel the ground truth.
    fn check_overlaps(&mut self, blocks: &[(&Block, &'static registry::BlockSchema)], lowered: &[Option<Workload>]) {
        use exp_plan::{AnomalyParams, WorkloadConfig};
        fn cpu(w: &Workload) -> Option<(&[u32], f64)> {
            match &w.config {
                WorkloadConfig::Anomaly(a) => match a.params {
                    AnomalyParams::Cpuoccupy { utilization_ratio } => Some((a.cores.as_slice(), utilization_ratio)),
                    _ => None,
                },
                _ => None,
            }
        }
        let span = |w: &exp_plan::Window| (w.start_ns, w.end_ns.unwrap_or(u64::MAX));
        for (j, later) in lowered.iter().enumerate() {
            let Some((later, (cores_b, load_b))) = later.as_ref().and_then(|w| Some((w, cpu(w)?))) else {
                continue;
            };
            for (i, earlier) in lowered[..j].iter().enumerate() {
                let Some((earlier, (cores_a, load_a))) = earlier.as_ref().and_then(|w| Some((w, cpu(w)?))) else {
                    continue;
                };
                let (a0, a1) = span(&earlier.window);
                let (b0, b1) = span(&later.window);
                let shared = cores_a.iter().find(|c| cores_b.contains(c));
                if let (Some(core), true, true) = (shared, a0 < b1 && b0 < a1, load_a + load_b > 1.0 + 1e-9) {
                    self.report(
                        Diagnostic::error(
                            Code::E0602,
                            format!(
                                "anomalies \"{}\" and \"{}\" overlap on core {core}",
                                earlier.name, later.name
                            ),
                        )
                        .primary(blocks[j].0.kind.span, "this anomaly's window")
                        .secondary(blocks[i].0.kind.span, "overlaps this one's")
                        .note(format!(
                            "together they ask for {:.0}% of the core",
                            (load_a + load_b) * 100.0
                        ))
                        .help("move one window, or pin the anomalies to different cores"),
                    );
                }
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

/// A constructor's lowered arguments as a typed point value.
fn json_value(json: &Json) -> exp_plan::Value {
    use exp_plan::Value as P;
    match json {
        Json::Null => P::List(Vec::new()),
        Json::Bool(b) => P::Bool(*b),
        Json::Number(n) => n
            .as_i64()
            .map_or_else(|| P::Float(n.as_f64().unwrap_or(f64::NAN)), P::Int),
        Json::String(s) => P::String(s.clone()),
        Json::Array(items) => P::List(items.iter().map(json_value).collect()),
        Json::Object(map) => P::Record(map.iter().map(|(k, v)| (k.clone(), json_value(v))).collect()),
    }
}
