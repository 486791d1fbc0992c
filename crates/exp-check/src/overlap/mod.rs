//! E0602: cpuoccupy anomalies loading one core beyond 100 % at the same
//! time would mislabel the ground truth.
//!
//! A core's load at an instant is the sum of the utilizations of the
//! anomalies active on it then (one thread per listed core; a window counts
//! from its start to its end, periodic or not). Its highest value over time
//! comes from a sweep over the windows' starts and ends, sorted once
//! (`profile.rs`): O(n log n) for n anomalies. Checking pairs took minutes
//! for 100,000 anomalies and let a hundred at 10 % each load a core to
//! 1000 %.
//!
//! Sweep parameters: an anomaly that names none is the same at every point,
//! and the load of all such anomalies is swept once per core. The others are
//! lowered at each combination of the values of the parameters any of them
//! names (not at every sweep point: the answer depends on nothing else);
//! each combination sweeps only their windows, reading the fixed load
//! between their steps from the profile. One diagnostic per core, at its
//! highest load.

mod profile;

use std::collections::BTreeMap;

use exp_diagnostics::limits::group;
use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{AnomalyParams, Combinations, Variants, Workload, WorkloadConfig};
use exp_syntax::ast::Block;
use exp_syntax::units::Dimension;

use crate::checker::Checker;
use crate::registry::BlockSchema;
use crate::sweep::SweepParam;
use crate::{FixedMap, FixedSet};
use profile::{load_of, peak_with, Busy, Load, Profile, FULL_CORE};

/// Anomalies named in the message and labelled in the source; the rest are counted.
const NAMED: usize = 4;

/// Sweep values named in the note of a sweep point; the rest are counted.
const NAMED_VALUES: usize = 6;

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

/// A cpuoccupy anomaly's window and load on each of its cores.
fn busy(w: &Workload) -> Option<(&[u32], Busy)> {
    let (cores, ratio) = cpu(w)?;
    let window = Busy {
        start: w.window.start_ns,
        end: w.window.end_ns.unwrap_or(u64::MAX),
        load: load_of(ratio),
    };
    Some((cores, window))
}

/// Each sweep parameter's position and number of values, by name (a scan
/// of the parameters per name looked up was quadratic in their number).
type Shapes<'p> = FixedMap<&'p str, (usize, usize)>;

fn shapes(params: &[SweepParam]) -> Shapes<'_> {
    params
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), (i, p.values.len())))
        .collect()
}

/// The workload as lowered at a combination of parameter value indices, if
/// it lowered.
fn pick<'v>(variants: &'v Variants<Option<Workload>>, shapes: &Shapes, point: &[usize]) -> Option<&'v Workload> {
    let shape = |name: &str| shapes.get(name).copied();
    let index = exp_plan::variant_index(&variants.parameters, shape, point)?;
    variants.variants.get(index)?.as_ref()
}

/// The workload as it is at the peak's combination; without one, only a
/// workload that names no parameter.
fn at_point<'v>(variants: &'v Variants<Option<Workload>>, peak: &Peak, shapes: &Shapes) -> Option<&'v Workload> {
    match &peak.point {
        Some(point) => pick(variants, shapes, point),
        None if variants.parameters.is_empty() => variants.variants.first()?.as_ref(),
        None => None,
    }
}

/// A core's highest load past a whole core: when, and at which
/// combination of sweep values (`None`: the fixed anomalies alone).
struct Peak {
    load: Load,
    at: u64,
    point: Option<Vec<usize>>,
}

impl Checker<'_> {
    /// Reports each core that cpuoccupy anomalies load beyond 100 % at some
    /// instant of some sweep point.
    pub(crate) fn check_overlaps(
        &mut self,
        blocks: &[(&Block, &'static BlockSchema)],
        lowered: &[Variants<Option<Workload>>],
        params: &[SweepParam],
    ) {
        // Only workloads that are cpuoccupy anomalies somewhere take part.
        let (mut fixed, mut varying): (BTreeMap<u32, Vec<Busy>>, Vec<usize>) = Default::default();
        for (i, variants) in lowered.iter().enumerate() {
            if !variants.variants.iter().flatten().any(|w| cpu(w).is_some()) {
                continue;
            }
            if !variants.parameters.is_empty() {
                varying.push(i);
                continue;
            }
            for (cores, window) in variants.variants.iter().flatten().filter_map(busy) {
                for &core in cores {
                    fixed.entry(core).or_default().push(window);
                }
            }
        }
        let profiles: BTreeMap<u32, Profile> = fixed.iter().map(|(&core, w)| (core, Profile::new(w))).collect();
        let mut peaks: BTreeMap<u32, Peak> = BTreeMap::new();
        for (&core, profile) in &profiles {
            let (load, at) = profile.peak();
            peaks.insert(core, Peak { load, at, point: None });
        }
        let named: FixedSet<&str> = varying
            .iter()
            .flat_map(|&i| lowered[i].parameters.iter().map(String::as_str))
            .collect();
        let radices = params
            .iter()
            .map(|p| {
                if named.contains(p.name.as_str()) {
                    p.values.len()
                } else {
                    1
                }
            })
            .collect();
        let shapes = shapes(params);
        let combinations = Combinations::new(if varying.is_empty() { Vec::new() } else { radices });
        for point in combinations.filter(|_| !varying.is_empty()) {
            let mut windows: BTreeMap<u32, Vec<Busy>> = BTreeMap::new();
            for &i in &varying {
                let Some((cores, window)) = pick(&lowered[i], &shapes, &point).and_then(busy) else {
                    continue;
                };
                for &core in cores {
                    windows.entry(core).or_default().push(window);
                }
            }
            for (core, windows) in windows {
                let (load, at) = peak_with(profiles.get(&core), &windows);
                if peaks.get(&core).is_none_or(|peak| load > peak.load) {
                    let point = Some(point.clone());
                    peaks.insert(core, Peak { load, at, point });
                }
            }
        }
        for (core, peak) in peaks.into_iter().filter(|(_, p)| p.load > FULL_CORE) {
            self.report_overload(core, &peak, blocks, lowered, (params, &shapes));
        }
    }

    /// E0602 for one core: the anomalies active on it at the peak, the one
    /// that started last first (its arrival made the load too high; the
    /// later block on a tie).
    fn report_overload(
        &mut self,
        core: u32,
        peak: &Peak,
        blocks: &[(&Block, &'static BlockSchema)],
        lowered: &[Variants<Option<Workload>>],
        (params, shapes): (&[SweepParam], &Shapes),
    ) {
        // (start, block index, name): the anomalies loading the core then.
        let mut active: Vec<(u64, usize, &str)> = Vec::new();
        for (i, variants) in lowered.iter().enumerate() {
            let Some(workload) = at_point(variants, peak, shapes) else {
                continue;
            };
            let Some((cores, w)) = busy(workload) else { continue };
            if cores.contains(&core) && w.load > 0 && w.start <= peak.at && peak.at < w.end {
                active.push((w.start, i, workload.name.as_str()));
            }
        }
        active.sort_by_key(|&(start, i, _)| std::cmp::Reverse((start, i)));
        let mut names: Vec<String> = active.iter().take(NAMED).map(|(_, _, n)| format!("\"{n}\"")).collect();
        let more = active.len().saturating_sub(NAMED);
        let message = match (names.len(), more) {
            // Listed twice in `cores`: two threads on the core.
            (1, 0) => format!("anomaly {} overlaps itself on core {core}", names[0]),
            (_, 0) => {
                let last = names.pop().unwrap_or_default();
                format!("anomalies {} and {last} overlap on core {core}", names.join(", "))
            }
            _ => format!(
                "anomalies {} and {} more overlap on core {core}",
                names.join(", "),
                group(more as u64)
            ),
        };
        let percent = peak.load as f64 / FULL_CORE as f64 * 100.0;
        let when = match peak.at {
            0 => "0s".to_string(),
            at => crate::value::display_quantity(Dimension::Duration, at as f64),
        };
        let mut diagnostic = Diagnostic::error(Code::E0602, message);
        for (n, &(_, i, _)) in active.iter().take(NAMED).enumerate() {
            diagnostic = match n {
                0 => diagnostic.primary(blocks[i].0.kind.span, "this anomaly's window"),
                _ => diagnostic.secondary(blocks[i].0.kind.span, "overlaps this one's"),
            };
        }
        diagnostic = diagnostic.note(format!("at {when}, together they ask for {percent:.0}% of the core"));
        if let Some(point) = &peak.point {
            let named: Vec<&Variants<Option<Workload>>> = active.iter().map(|&(_, i, _)| &lowered[i]).collect();
            diagnostic = diagnostic.note(format!("at the sweep point {}", point_text(params, point, &named)));
        }
        self.report(diagnostic.help("move one window, or pin the anomalies to different cores"));
    }
}

/// `load = 60%, at = 20s`: the values of the parameters `anomalies` name,
/// the first [`NAMED_VALUES`] of them.
fn point_text(params: &[SweepParam], point: &[usize], anomalies: &[&Variants<Option<Workload>>]) -> String {
    let named: FixedSet<&str> = anomalies
        .iter()
        .flat_map(|v| v.parameters.iter().map(String::as_str))
        .collect();
    let values: Vec<String> = params
        .iter()
        .zip(point)
        .filter(|(p, _)| named.contains(p.name.as_str()))
        .map(|(p, &i)| format!("{} = {}", p.name, p.values.label(i)))
        .collect();
    match values.len().saturating_sub(NAMED_VALUES) {
        0 => values.join(", "),
        more => format!("{} and {} more", values[..NAMED_VALUES].join(", "), group(more as u64)),
    }
}
