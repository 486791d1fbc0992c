//! Checks of the machine against the whole plan, before anything starts:
//! memory, disk, CPUs, directories, and whether every workload kind can run.
//! Failing checks are diagnostics (E10xx), never panics, and write nothing.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{AnomalyParams, Origin, Plan, Workload, WorkloadConfig};

/// A failed check, with where in the spec the workload came from.
#[derive(Debug, Clone)]
pub struct PreflightIssue {
    pub diagnostic: Diagnostic,
    pub origin: Option<Origin>,
}

/// What preflight needs to know about the run.
pub struct PreflightInput<'a> {
    pub plan: &'a Plan,
    /// Where run directories go (`--out`).
    pub out_root: &'a Path,
    /// `--force`: run even when memory looks short.
    pub force: bool,
    /// Directory that relative `dir` paths are resolved against.
    pub spec_dir: &'a Path,
}

const MIB: u64 = 1 << 20;
/// Free space a run directory needs at least (manifest, plan, tables).
const RUN_DIR_MIN_FREE: u64 = 64 * MIB;

pub fn preflight(input: &PreflightInput) -> Vec<PreflightIssue> {
    let mut issues = Vec::new();
    let mut seen = BTreeSet::new();
    let mut report = |key: String, issue: PreflightIssue| {
        // Variants of one workload often share a problem: report it once.
        if seen.insert(key) {
            issues.push(issue);
        }
    };
    let online: BTreeSet<u32> = exp_host::online_cpus().into_iter().collect();
    let memory = exp_host::meminfo().unwrap_or_default();
    let budget = memory_budget(memory.available_bytes(), memory.total_bytes());

    for (key, diagnostic) in crate::plan_limits::check_times(input.plan) {
        report(
            key,
            PreflightIssue {
                diagnostic,
                origin: None,
            },
        );
    }

    // Each distinct variant of each workload once, however many points run
    // it, and each value of its fields; the scratch space io anomalies need
    // in the run directory found on the way.
    let mut scratch_need = 0;
    for (variants, workload) in input
        .plan
        .workloads
        .iter()
        .flat_map(|w| w.each_distinct().map(move |v| (w, v)))
    {
        let workload = match workload {
            Ok(workload) => workload,
            Err(problem) => {
                let first = variants.variants.first();
                let name = first.map_or("", |v| v.name.as_str());
                report(
                    format!("field {name} {problem}"),
                    PreflightIssue {
                        diagnostic: Diagnostic::error(Code::E1005, format!("workload `{name}` in the plan: {problem}"))
                            .help("compile the spec again with `expc plan`, or correct the plan by hand"),
                        origin: first.map(|v| v.origin.clone()),
                    },
                );
                continue;
            }
        };
        // `each_distinct` gives the variants themselves borrowed, then each
        // field value set into a copy: those need no second look at the broker.
        let checks = match workload {
            Cow::Borrowed(_) => crate::fleet::FleetChecks::All,
            Cow::Owned(_) => crate::fleet::FleetChecks::WithoutBroker,
        };
        let workload = workload.as_ref();
        for (key, diagnostic) in crate::plan_limits::check(input.plan, workload) {
            report(
                key,
                PreflightIssue {
                    diagnostic,
                    origin: Some(workload.origin.clone()),
                },
            );
        }
        check_workload(workload, input, &online, checks, &mut report);
        if let WorkloadConfig::Anomaly(a) = &workload.config {
            if work_dir(&a.params).is_none() {
                scratch_need = scratch_need.max(exp_anomaly::disk_need_bytes(&a.params).unwrap_or(0));
            }
        }
    }
    if !input.force {
        for (workload, need) in peak_memory(input.plan) {
            if need > budget {
                report(
                    format!("memory {}", workload.name),
                    PreflightIssue {
                        diagnostic: Diagnostic::error(
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
                            bytes(memory.available_bytes().saturating_sub(budget))
                        ))
                        .help("lower the anomaly's `limit`, or pass `--force` to run anyway"),
                        origin: Some(workload.origin.clone()),
                    },
                );
            }
        }
    }

    // The run directory's file system, with the scratch space found above.
    let root = existing_ancestor(input.out_root);
    if let Err(problem) = writable_dir(&root) {
        report(
            "out".into(),
            PreflightIssue {
                diagnostic: Diagnostic::error(
                    Code::E1004,
                    format!(
                        "cannot write run directories under {}: {problem}",
                        input.out_root.display()
                    ),
                )
                .help("choose another directory with `--out`"),
                origin: None,
            },
        );
    } else {
        check_disk(
            &root,
            RUN_DIR_MIN_FREE + scratch_need,
            "the run directory",
            &mut |key, diagnostic| {
                report(
                    key,
                    PreflightIssue {
                        diagnostic,
                        origin: None,
                    },
                )
            },
        );
    }
    issues
}

/// MemAvailable minus a safety margin of 5 % of MemTotal, at least 256 MiB.
pub fn memory_budget(available: u64, total: u64) -> u64 {
    available.saturating_sub((total / 20).max(256 * MIB))
}

/// The checks of one workload variant on its own: its kind can run here,
/// its CPUs are online, its directory and disk space are there.
fn check_workload(
    workload: &Workload,
    input: &PreflightInput,
    online: &BTreeSet<u32>,
    fleet_checks: crate::fleet::FleetChecks,
    report: &mut dyn FnMut(String, PreflightIssue),
) {
    let at = |code, message: String| PreflightIssue {
        diagnostic: Diagnostic::error(code, message),
        origin: Some(workload.origin.clone()),
    };
    if let WorkloadConfig::Fleet(fleet) = &workload.config {
        for (key, diagnostic) in crate::fleet::check(&workload.name, fleet, fleet_checks) {
            report(
                key,
                PreflightIssue {
                    diagnostic,
                    origin: Some(workload.origin.clone()),
                },
            );
        }
        return;
    }
    if let WorkloadConfig::Xml(xml) = &workload.config {
        for problem in crate::xml::check(xml) {
            report(
                format!("xml {} {problem}", workload.name),
                at(Code::E1004, format!("xml `{}`: {problem}", workload.name))
                    .with_help("paths in a spec are relative to the spec's own directory"),
            );
        }
        return;
    }
    if let WorkloadConfig::Traffic(traffic) = &workload.config {
        for (code, problem, help) in crate::traffic::check(traffic) {
            report(
                format!("traffic {} {problem}", workload.name),
                at(code, format!("traffic `{}`: {problem}", workload.name)).with_help(help),
            );
        }
        return;
    }
    let WorkloadConfig::Anomaly(anomaly) = &workload.config else {
        let kind = workload.config.kind();
        report(
            format!("kind {kind}"),
            PreflightIssue {
                diagnostic: Diagnostic::error(
                    Code::E1005,
                    format!("this build of expc cannot run `{kind}` workloads yet"),
                )
                .note(format!(
                    "`{kind} \"{}\"` is valid and appears in the plan",
                    workload.name
                ))
                .help("remove it to run the rest, or use `expc plan` to inspect it"),
                origin: Some(workload.origin.clone()),
            },
        );
        return;
    };
    for core in anomaly.cores.iter().filter(|c| !online.contains(c)) {
        let cpus: Vec<String> = online.iter().map(u32::to_string).collect();
        report(
            format!("cpu {} {core}", workload.name),
            at(
                Code::E1003,
                format!(
                    "anomaly `{}` is pinned to CPU {core}, which is not online",
                    workload.name
                ),
            )
            .with_note(format!("online CPUs: {}", cpus.join(", "))),
        );
    }
    if let Some(dir) = work_dir(&anomaly.params) {
        let dir = resolve(input.spec_dir, dir);
        if let Err(problem) = writable_dir(&dir) {
            report(
                format!("dir {}", workload.name),
                at(
                    Code::E1004,
                    format!(
                        "anomaly `{}` cannot work in {}: {problem}",
                        workload.name,
                        dir.display()
                    ),
                )
                .with_help("create the directory or leave `dir` out to use scratch space in the run directory"),
            );
        } else if let Some(need) = exp_anomaly::disk_need_bytes(&anomaly.params) {
            check_disk(&dir, need, &workload.name, &mut |key, diagnostic| {
                report(
                    key,
                    PreflightIssue {
                        diagnostic,
                        origin: Some(workload.origin.clone()),
                    },
                )
            });
        }
    }
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

fn memory_need(workload: &Workload) -> Option<u64> {
    match &workload.config {
        WorkloadConfig::Anomaly(a) => exp_anomaly::memory_need_bytes(&a.params),
        _ => None,
    }
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

fn check_disk(dir: &Path, need: u64, what: &str, report: &mut dyn FnMut(String, Diagnostic)) {
    let Ok(free) = exp_host::disk_free_bytes(dir) else {
        return;
    };
    if need > free {
        report(
            format!("disk {what}"),
            Diagnostic::error(
                Code::E1002,
                format!(
                    "{what} needs {} on {} but {} is free",
                    bytes(need),
                    dir.display(),
                    bytes(free)
                ),
            )
            .help("free space, choose another directory, or lower `file_size`/`ntasks`"),
        );
    }
}

fn work_dir(params: &AnomalyParams) -> Option<&str> {
    match params {
        AnomalyParams::Iometadata { dir, .. } | AnomalyParams::Iobandwidth { dir, .. } => dir.as_deref(),
        _ => None,
    }
}

fn resolve(base: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

fn existing_ancestor(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    while !path.exists() {
        if !path.pop() || path.as_os_str().is_empty() {
            return PathBuf::from(".");
        }
    }
    path
}

/// A directory we can create files in (probed by creating and removing one).
fn writable_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!("{} is a file, not a directory", dir.display()));
    }
    if !dir.is_dir() {
        return Err("no such directory".into());
    }
    let probe = dir.join(format!(".expc-preflight-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

impl PreflightIssue {
    fn with_note(mut self, note: String) -> Self {
        self.diagnostic = self.diagnostic.note(note);
        self
    }

    fn with_help(mut self, help: &str) -> Self {
        self.diagnostic = self.diagnostic.help(help);
        self
    }
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

    #[test]
    fn sizes_read_well() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 * 1024 * MIB / 2), "1.5 GiB");
    }
}
