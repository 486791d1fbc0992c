//! E0602: two cpuoccupy anomalies loading one core beyond 100 % at the same
//! time would mislabel the ground truth.
//!
//! Checked pair by pair over the combinations of the values of the sweep
//! parameters the two anomalies name (their variants), not over every sweep
//! point: the answer at a point depends on nothing else.

use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{AnomalyParams, Combinations, Variants, Window, Workload, WorkloadConfig};
use exp_syntax::ast::Block;

use crate::checker::Checker;
use crate::registry::BlockSchema;
use crate::sweep::SweepParam;

/// A cpuoccupy anomaly's cores and load.
fn cpu(w: &Workload) -> Option<(&[u32], f64)> {
    match &w.config {
        WorkloadConfig::Anomaly(a) => match a.params {
            AnomalyParams::Cpuoccupy { utilization_ratio } => Some((a.cores.as_slice(), utilization_ratio)),
            _ => None,
        },
        _ => None,
    }
}

fn span(w: &Window) -> (u64, u64) {
    (w.start_ns, w.end_ns.unwrap_or(u64::MAX))
}

/// The variant index of `variants` at a combination of parameter value indices.
fn variant_index<T>(variants: &Variants<T>, params: &[SweepParam], point: &[usize]) -> Option<usize> {
    let shape = |name: &str| {
        let position = params.iter().position(|p| p.name == name)?;
        Some((position, params[position].values.len()))
    };
    exp_plan::variant_index(&variants.parameters, shape, point)
}

/// The workload as lowered at a combination, if it lowered.
fn pick<'v>(variants: &'v Variants<Option<Workload>>, params: &[SweepParam], point: &[usize]) -> Option<&'v Workload> {
    variants.variants.get(variant_index(variants, params, point)?)?.as_ref()
}

impl Checker<'_> {
    /// Reports every pair of cpuoccupy anomalies that overlap on a core at
    /// some sweep point (once per pair and core: `report` deduplicates).
    pub(crate) fn check_overlaps(
        &mut self,
        blocks: &[(&Block, &'static BlockSchema)],
        lowered: &[Variants<Option<Workload>>],
        params: &[SweepParam],
    ) {
        // Only workloads that are cpuoccupy anomalies somewhere take part.
        let candidates: Vec<(usize, &Variants<Option<Workload>>)> = lowered
            .iter()
            .enumerate()
            .filter(|(_, v)| v.variants.iter().flatten().any(|w| cpu(w).is_some()))
            .collect();
        for (n, &(j, later)) in candidates.iter().enumerate() {
            for &(i, earlier) in &candidates[..n] {
                let radices = params
                    .iter()
                    .map(|p| {
                        let named = earlier.parameters.contains(&p.name) || later.parameters.contains(&p.name);
                        if named {
                            p.values.len()
                        } else {
                            1
                        }
                    })
                    .collect();
                for point in Combinations::new(radices) {
                    let a = pick(earlier, params, &point);
                    let b = pick(later, params, &point);
                    if let (Some(a), Some(b)) = (a, b) {
                        self.check_pair(a, b, blocks[i].0, blocks[j].0);
                    }
                }
            }
        }
    }

    fn check_pair(&mut self, earlier: &Workload, later: &Workload, earlier_block: &Block, later_block: &Block) {
        let (Some((cores_a, load_a)), Some((cores_b, load_b))) = (cpu(earlier), cpu(later)) else {
            return;
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
                .primary(later_block.kind.span, "this anomaly's window")
                .secondary(earlier_block.kind.span, "overlaps this one's")
                .note(format!(
                    "together they ask for {:.0}% of the core",
                    (load_a + load_b) * 100.0
                ))
                .help("move one window, or pin the anomalies to different cores"),
            );
        }
    }
}
