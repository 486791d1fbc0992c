//! The Methods paragraph a report ends with: what was run and how the
//! numbers were made, generated from the run's plan and manifest, in words
//! a paper can cite.

use std::fmt::Write;

use exp_plan::{Order, Plan};
use exp_results::{Manifest, TrialStatus};

use crate::aggregate::SweepTable;
use crate::text::sweep::methods;

/// The paragraph for a run (its plan, when readable, gives the sweep, order
/// and stopping rule; the manifest what ran and where).
pub fn methods_paragraph(manifest: &Manifest, plan: Option<&Plan>, table: &SweepTable) -> String {
    let mut out = format!("Methods. Experiment \"{}\"", manifest.experiment);
    let complete = manifest
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Complete)
        .count();
    match plan {
        Some(plan) => {
            let _ = write!(out, " (plan SHA-256 {}): {}", short(&manifest.plan_sha256), sweep(plan));
            let _ = write!(out, " {}", repetitions(plan, manifest));
            let _ = write!(
                out,
                " {} of the {} trials planned here completed. {}",
                complete,
                manifest.trials.len(),
                order(plan)
            );
            if plan.experiment.pause_ns > 0 {
                let _ = write!(out, " Trials were {} s apart.", plan.experiment.pause_ns as f64 / 1e9);
            }
        }
        None => {
            let _ = write!(
                out,
                ": {complete} of {} trials completed (the plan could not be read).",
                manifest.trials.len()
            );
        }
    }
    let stated = methods(table);
    if !stated.is_empty() {
        let _ = write!(
            out,
            " Each point's metrics over its completed repetitions: {}.",
            stated.join("; ")
        );
        out.push_str(
            " The median is used when every point has the repetitions its interval needs, else the mean with its t interval cut to the metric's physical range.",
        );
    }
    match table.exclusion_note() {
        Some(note) => {
            let _ = write!(out, " {}.", capitalized(&note));
        }
        None if manifest.trials.iter().any(|t| t.validity.is_some()) => {
            out.push_str(" No trial was invalid.");
        }
        None => {}
    }
    let host = &manifest.host;
    let _ = write!(
        out,
        " Host {}: {}, {} CPUs online, kernel {}; expc {}; time scale {}.",
        host.hostname,
        host.cpu_model,
        host.cpus_online,
        host.kernel,
        manifest.expc_version,
        manifest.options.time_scale
    );
    out
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// `3 sweep points (devices: 3 values)` or `one configuration`.
fn sweep(plan: &Plan) -> String {
    if plan.parameters.is_empty() {
        return "one configuration.".to_string();
    }
    let parameters: Vec<String> = plan
        .parameters
        .iter()
        .map(|p| format!("{} ({} values)", p.name, p.values.len()))
        .collect();
    format!(
        "{} sweep points, the cross product of {}.",
        plan.point_count(),
        parameters.join(" × ")
    )
}

/// The repetitions per point, and with `repeat until` its rule and where each point stopped.
fn repetitions(plan: &Plan, manifest: &Manifest) -> String {
    let Some(rule) = &plan.repeat.stop else {
        return format!("Each point was repeated {} times.", plan.repeat.max);
    };
    let stopped: Vec<String> = manifest
        .points
        .iter()
        .map(|p| format!("point {} after {}", p.point, p.repetitions_run))
        .collect();
    format!(
        "Each point was repeated until the {}% confidence interval of the {} of `{}` was at most {}% of it wide ({} to {} repetitions){}.",
        rule.confidence_ratio * 100.0,
        rule.statistic.as_str(),
        rule.metric,
        rule.width_ratio * 100.0,
        rule.min,
        plan.repeat.max,
        if stopped.is_empty() {
            String::new()
        } else {
            format!("; {}", stopped.join(", "))
        }
    )
}

fn order(plan: &Plan) -> String {
    match plan.repeat.order {
        Order::Randomized => format!(
            "Trials ran in randomized interleaved order (Abedi & Brecht, ICPE 2017): in rounds of one repetition of every point, the points of each round shuffled with seed {}.",
            plan.experiment.seed
        ),
        Order::Interleaved => "Trials ran interleaved: in rounds of one repetition of every point, in point order.".to_string(),
        Order::Sequential => "Trials ran sequentially, every repetition of a point before the next point.".to_string(),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}
