//! Checks of the machine against the whole plan, before anything starts:
//! the plan's limits (`plan_limits.rs`), each workload kind's own limits
//! and preflight (its `<kind>/check.rs`, reached through `kinds.rs`), then
//! memory and the run directory's disk ([`machine`]). Failing checks are
//! diagnostics (E10xx), never panics, and write nothing. What the checks
//! share (`Host`, `Finding`) is the leaf `findings.rs`: nothing below
//! calls back here.

mod machine;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::Path;

use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{Origin, Plan, Workload};

use crate::findings::{Finding, Host};
use crate::{kinds, plan_limits};

pub use machine::memory_budget;

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

pub fn preflight(input: &PreflightInput) -> Vec<PreflightIssue> {
    let mut issues = Issues::default();
    issues.add(None, plan_limits::check_times(input.plan));
    let online_cpus: BTreeSet<u32> = exp_host::online_cpus().into_iter().collect();
    // The scratch space workloads need in the run directory.
    let mut scratch_need = 0;
    // Each distinct variant of each workload once, however many points run
    // it, and each value of its fields set into a copy of one (lazily: a
    // field may have a million values).
    let distinct = input
        .plan
        .workloads
        .iter()
        .flat_map(|w| w.each_distinct().map(move |v| (w, v)));
    for (variants, workload) in distinct {
        let workload = match workload {
            Ok(workload) => workload,
            Err(problem) => {
                let first = variants.variants.first();
                issues.add(first.map(|v| &v.origin), [unsettable_field(first, &problem)]);
                continue;
            }
        };
        let host = Host {
            online_cpus: &online_cpus,
            spec_dir: input.spec_dir,
            first_look: matches!(workload, Cow::Borrowed(_)),
        };
        let origin = Some(&workload.origin);
        issues.add(origin, plan_limits::check(input.plan, &workload));
        issues.add(origin, kinds::limits(&workload.name, &workload.config));
        issues.add(origin, kinds::preflight(&workload, &host));
        scratch_need = scratch_need.max(kinds::scratch_need(&workload));
    }
    if !input.force {
        for (finding, origin) in machine::memory(input.plan) {
            issues.add(Some(origin), [finding]);
        }
    }
    issues.add(None, machine::run_dir(input.out_root, scratch_need));
    issues.found
}

/// A plan field whose value cannot be set into its workload.
fn unsettable_field(first: Option<&Workload>, problem: &impl std::fmt::Display) -> Finding {
    let name = first.map_or("", |v| v.name.as_str());
    let diagnostic = Diagnostic::error(Code::E1005, format!("workload `{name}` in the plan: {problem}"))
        .help("compile the spec again with `expc plan`, or correct the plan by hand");
    (format!("field {name} {problem}"), diagnostic)
}

/// The issues found so far; variants of one workload often share a
/// problem, which is reported once.
#[derive(Default)]
struct Issues {
    found: Vec<PreflightIssue>,
    seen: BTreeSet<String>,
}

impl Issues {
    fn add(&mut self, origin: Option<&Origin>, findings: impl IntoIterator<Item = Finding>) {
        for (key, diagnostic) in findings {
            if self.seen.insert(key) {
                self.found.push(PreflightIssue {
                    diagnostic,
                    origin: origin.cloned(),
                });
            }
        }
    }
}
