//! The machine's side of preflight: memory for the anomalies that run
//! together, and a writable run directory with the disk space it needs.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{Origin, Plan, Workload};

use crate::findings::{bytes, check_disk, writable_dir, Finding};
use crate::kinds::memory_need;

const MIB: u64 = 1 << 20;
/// Free space a run directory needs at least (manifest, plan, tables).
const RUN_DIR_MIN_FREE: u64 = 64 * MIB;

/// Anomalies running together that may take more memory than is
/// available, each with the workload it is reported at.
pub(super) fn memory(plan: &Plan) -> Vec<(Finding, &Origin)> {
    let memory = exp_host::meminfo().unwrap_or_default();
    let budget = memory_budget(memory.available_bytes(), memory.total_bytes());
    let margin = memory.available_bytes().saturating_sub(budget);
    let mut found = Vec::new();
    for (workload, need) in peak_memory(plan).into_iter().filter(|(_, need)| *need > budget) {
        let diagnostic = Diagnostic::error(
            Code::E1001,
            format!(
                "anomalies running together with `{}` may take {} but {} is available",
                workload.name,
                bytes(need),
                bytes(budget)
            ),
        )
        .note(format!(
            "available = MemAvailable {} − safety margin {}",
            bytes(memory.available_bytes()),
            bytes(margin)
        ))
        .help("lower the anomaly's `limit`, or pass `--force` to run anyway");
        found.push(((format!("memory {}", workload.name), diagnostic), &workload.origin));
    }
    found
}

/// The file system under `out_root`: writable, with room for a run
/// directory and `scratch_need` bytes of anomaly scratch space.
pub(super) fn run_dir(out_root: &Path, scratch_need: u64) -> Vec<Finding> {
    let root = existing_ancestor(out_root);
    let mut found = Vec::new();
    match writable_dir(&root) {
        Err(problem) => found.push((
            "out".into(),
            Diagnostic::error(
                Code::E1004,
                format!("cannot write run directories under {}: {problem}", out_root.display()),
            )
            .help("choose another directory with `--out`"),
        )),
        Ok(()) => found.extend(check_disk(&root, RUN_DIR_MIN_FREE + scratch_need, "the run directory")),
    }
    found
}

/// MemAvailable minus a safety margin of 5 % of MemTotal, at least 256 MiB.
pub fn memory_budget(available: u64, total: u64) -> u64 {
    available.saturating_sub((total / 20).max(256 * MIB))
}

/// The largest memory need of anomalies running together, by the anomaly
/// they run with, over the combinations of the values of the parameters
/// that anomalies with a memory need name (not every point: nothing else
/// changes the answer). At each combination the worst is one anomaly plus
/// those whose windows overlap it; each anomaly keeps its largest.
fn peak_memory(plan: &Plan) -> Vec<(&Workload, u64)> {
    let needy: Vec<_> = plan
        .workloads
        .iter()
        // Whether an anomaly has a memory need depends on its kind, which
        // the variants hold (a field never changes it).
        .filter(|w| w.variants.iter().any(|v| memory_need(v).is_some()))
        .collect();
    let names: Vec<&str> = needy
        .iter()
        .flat_map(|w| w.parameters.iter().chain(w.fields.iter().flat_map(|f| &f.parameters)))
        .map(String::as_str)
        .collect();
    let mut peaks: BTreeMap<&str, (&Workload, u64)> = BTreeMap::new();
    for indices in plan.combinations(&names) {
        // The workloads as they run there, and their variants, which name
        // them where they are reported (names and origins are never fields).
        let at_point: Vec<(&Workload, Cow<Workload>)> = needy
            .iter()
            .filter_map(|w| {
                Some((
                    w.base_at(&plan.parameters, &indices)?,
                    w.at(&plan.parameters, &indices)?,
                ))
            })
            .collect();
        let running: Vec<&Workload> = at_point.iter().map(|(_, w)| w.as_ref()).collect();
        if let Some((index, need)) = peak_together(&running, plan.experiment.duration_ns) {
            let workload = at_point[index].0;
            let peak = peaks.entry(workload.name.as_str()).or_insert((workload, need));
            if need > peak.1 {
                *peak = (workload, need);
            }
        }
    }
    peaks.into_values().collect()
}

/// Of workloads that run together: the largest need of one anomaly plus
/// those whose windows overlap it, with that anomaly's position.
fn peak_together(workloads: &[&Workload], trial_ns: Option<u64>) -> Option<(usize, u64)> {
    let needs: Vec<(usize, u64, (u64, u64))> = workloads
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let need = memory_need(w)?;
            let end = w.window.end_ns.or(trial_ns).unwrap_or(u64::MAX);
            Some((i, need, (w.window.start_ns, end)))
        })
        .collect();
    needs
        .iter()
        .map(|(i, _, (s, e))| {
            let together = needs
                .iter()
                .filter(|(_, _, (s2, e2))| s2 < e && s < e2)
                .map(|(_, n, _)| n)
                .sum();
            (*i, together)
        })
        .max_by_key(|(_, need)| *need)
}

/// The nearest directory of `path` that exists (where it would be created).
fn existing_ancestor(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    while !path.exists() {
        if !path.pop() || path.as_os_str().is_empty() {
            return PathBuf::from(".");
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_keeps_a_margin() {
        let gib = 1024 * MIB;
        assert_eq!(memory_budget(10 * gib, 20 * gib), 9 * gib);
        assert_eq!(memory_budget(300 * MIB, 1024 * MIB), 44 * MIB);
        assert_eq!(memory_budget(100 * MIB, 1024 * MIB), 0);
    }
}
