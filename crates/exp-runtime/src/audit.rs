//! Audits outside the fleet's and traffic's own (`fleet/audit.rs`,
//! `traffic/audit.rs`): an anomaly activation against what it was asked to
//! do (V0301, V0302), an xml workload's output against the amount asked
//! (V0401), the monitor's sampling (V0501) and the host beside the trial
//! (V0601, V0602). Each returns
//! `exp_results::validity::Finding`s; the trial collects them into its
//! verdict (docs/running.md, "Validity").

use std::time::Duration;

use exp_anomaly::Counters;
use exp_plan::AnomalyParams;
use exp_results::validity::{Bounds, Finding, Validity, Verdict};

use crate::executor::WorkloadSummary;
use crate::fleet::cpu::CpuUse;

/// An activation shorter than this is not held to its utilization: the
/// child's start-up would dominate the ratio.
const SHORTEST_AUDITED_UTILIZATION: Duration = Duration::from_secs(1);

/// What an anomaly activation did, as its `anomaly_timeline` row says.
pub struct ActivationWork<'a> {
    pub activation: u64,
    pub params: &'a AnomalyParams,
    pub counters: &'a Counters,
    /// Wall time from start to end, and CPU time per pinned core over it.
    pub active_ns: u64,
    pub achieved_utilization: f64,
    /// CPU this process (the runner, an embedded broker, the other
    /// workloads' threads) used over the activation, as a share of the
    /// machine's cores: the contention the experiment puts on the anomaly's
    /// cores by design, which the anomaly is not held to overcome.
    pub own_cpu_share: f64,
}

/// An activation that did no work at all is invalid, and its window is not
/// ground truth; a `cpuoccupy` one well below its utilization is degraded.
/// The utilization a hog can reach is what the run's own processes leave of
/// its cores (the quickstart pins a hog on the cores its fleet uses: that
/// contention is the experiment), so the floor is the request capped by that
/// remainder, less the tolerance; a neighbour or the hypervisor taking the
/// cores still shows.
pub fn activation(work: &ActivationWork<'_>, bounds: &Bounds) -> Option<Finding> {
    let c = work.counters;
    if c.iterations == 0 && c.bytes == 0 && c.files == 0 {
        return Some(Finding::new(
            "V0301",
            Verdict::Invalid,
            format!(
                "activation {} of this {} did no work (0 iterations, 0 bytes, 0 files in {:.3} s): its window is not ground truth",
                work.activation,
                work.params.kind(),
                work.active_ns as f64 / 1e9
            ),
        )
        .measured(0.0, 1.0));
    }
    let AnomalyParams::Cpuoccupy { utilization_ratio } = work.params else {
        return None;
    };
    let reachable = utilization_ratio.min(1.0 - work.own_cpu_share.clamp(0.0, 1.0));
    let floor = reachable * (1.0 - bounds.intensity_tolerance);
    let long_enough = work.active_ns >= SHORTEST_AUDITED_UTILIZATION.as_nanos() as u64;
    (long_enough && work.achieved_utilization < floor).then(|| {
        Finding::new(
            "V0302",
            Verdict::Degraded,
            format!(
                "activation {} reached {:.1} % utilization of the {:.1} % asked (at least {:.1} % expected, the run's own processes having used {:.1} % of the cores)",
                work.activation,
                work.achieved_utilization * 100.0,
                utilization_ratio * 100.0,
                floor * 100.0,
                work.own_cpu_share * 100.0
            ),
        )
        .measured(work.achieved_utilization, floor)
    })
}

/// What an xml workload was asked to generate (this process's share of it
/// in a split run), and what it wrote.
pub enum XmlAmount {
    Documents(u64),
    Bytes(u64),
}

/// V0401 when an xml workload generated less than asked (its window or
/// the trial ended first): the set it leaves is incomplete.
pub fn xml_output(asked: XmlAmount, documents: u64, bytes: u64) -> Option<Finding> {
    let (what, got, wanted) = match asked {
        XmlAmount::Documents(n) => ("documents", documents, n),
        XmlAmount::Bytes(n) => ("bytes", bytes, n),
    };
    (got < wanted).then(|| {
        Finding::new(
            "V0401",
            Verdict::Degraded,
            format!("generated {got} of the {wanted} {what} asked: the window or the trial ended first"),
        )
        .measured(got as f64, wanted as f64)
    })
}

/// Finds the monitor's longest interval between samples and counts its gaps.
#[derive(Debug, Clone, Copy, Default)]
pub struct GapWatch {
    last_ns: u64,
    longest_ns: u64,
    gaps: u64,
}

impl GapWatch {
    /// Notes a sample at `t_ns` on the trial clock (the first interval
    /// counts from the trial's start).
    pub fn sample(&mut self, t_ns: u64, interval: Duration, bounds: &Bounds) {
        let gap = t_ns.saturating_sub(self.last_ns);
        self.last_ns = t_ns;
        self.longest_ns = self.longest_ns.max(gap);
        if gap as f64 > interval.as_nanos() as f64 * bounds.monitor_gap_factor {
            self.gaps += 1;
        }
    }

    /// V0501 if any interval was longer than the bound allows.
    pub fn finding(&self, interval: Duration, bounds: &Bounds) -> Option<Finding> {
        let bound_ns = interval.as_nanos() as f64 * bounds.monitor_gap_factor;
        (self.gaps > 0).then(|| {
            Finding::new(
                "V0501",
                Verdict::Degraded,
                format!(
                    "{} monitor gap(s), the longest {:.0} ms for an interval of {:.0} ms: nothing is known of the machine meanwhile",
                    self.gaps,
                    self.longest_ns as f64 / 1e6,
                    interval.as_nanos() as f64 / 1e6
                ),
            )
            .measured(self.longest_ns as f64, bound_ns)
        })
    }
}

/// The host beside the trial: steal time and the CPU of processes outside
/// the run (`children_cpu_ns`, the run's anomaly children, taken out).
pub fn host(cpu: CpuUse, children_cpu_ns: u64, cores: usize, bounds: &Bounds) -> Vec<Finding> {
    let capacity = cpu.wall_s.max(1e-9) * cores.max(1) as f64;
    // /proc/stat counts whole clock ticks per core, so over a short trial a
    // share can read above the machine (123 % of 2 cores over 85 ms): no
    // neighbour can take more than all of it, and a bound of 1 allows that.
    let share = |seconds: f64| (seconds / capacity).clamp(0.0, 1.0);
    let steal = share(cpu.steal_s);
    let others = share(cpu.others_s - children_cpu_ns as f64 / 1e9);
    let mut found = Vec::new();
    if steal > bounds.steal_share {
        found.push(
            Finding::new(
                "V0601",
                Verdict::Degraded,
                format!(
                    "the hypervisor took {:.1} % of the {cores} cores (bound {:.1} %)",
                    steal * 100.0,
                    bounds.steal_share * 100.0
                ),
            )
            .measured(steal, bounds.steal_share),
        );
    }
    if others > bounds.others_cpu_share {
        found.push(
            Finding::new(
                "V0602",
                Verdict::Degraded,
                format!(
                    "processes outside the run used {:.0} % of the {cores} cores, {:.2} cores (bound {:.0} %)",
                    others * 100.0,
                    others * cores as f64,
                    bounds.others_cpu_share * 100.0
                ),
            )
            .measured(others, bounds.others_cpu_share),
        );
    }
    found
}

/// A trial's validity: each workload's findings under its name, the
/// monitor's, and the host's over the trial's CPU use.
pub fn trial(
    summaries: &[(String, WorkloadSummary)],
    monitor: Option<Finding>,
    cpu: CpuUse,
    bounds: &Bounds,
) -> Validity {
    let children_cpu_ns = summaries.iter().map(|(_, s)| s.child_cpu_ns).sum();
    let workloads = summaries.iter().flat_map(|(name, summary)| {
        summary.findings.iter().cloned().map(move |mut finding| {
            finding.workload.get_or_insert_with(|| name.clone());
            finding
        })
    });
    let cores = exp_host::online_cpus().len();
    Validity::of(
        workloads
            .chain(monitor)
            .chain(host(cpu, children_cpu_ns, cores, bounds)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work<'a>(params: &'a AnomalyParams, counters: &'a Counters, utilization: f64) -> ActivationWork<'a> {
        ActivationWork {
            activation: 0,
            params,
            counters,
            active_ns: 2_000_000_000,
            achieved_utilization: utilization,
            own_cpu_share: 0.0,
        }
    }

    #[test]
    fn an_activation_without_work_is_invalid() {
        let leak = AnomalyParams::Memleak {
            size_bytes: 1 << 20,
            rate_per_s: 1.0,
            limit_bytes: 1 << 30,
        };
        let none = Counters::default();
        let found = activation(&work(&leak, &none, 0.0), &Bounds::default()).unwrap();
        assert_eq!((found.code.as_str(), found.verdict), ("V0301", Verdict::Invalid));
        let some = Counters {
            iterations: 2,
            bytes: 2 << 20,
            files: 0,
        };
        assert_eq!(activation(&work(&leak, &some, 0.0), &Bounds::default()), None);
    }

    /// Counters of an activation that did work.
    fn busy() -> Counters {
        Counters {
            iterations: 1000,
            bytes: 0,
            files: 0,
        }
    }

    #[test]
    fn a_cpu_hog_well_below_its_utilization_is_degraded() {
        let hog = AnomalyParams::Cpuoccupy { utilization_ratio: 0.5 };
        let ran = busy();
        assert_eq!(activation(&work(&hog, &ran, 0.45), &Bounds::default()), None);
        let found = activation(&work(&hog, &ran, 0.35), &Bounds::default()).unwrap();
        assert_eq!((found.code.as_str(), found.verdict), ("V0302", Verdict::Degraded));
        let short = ActivationWork {
            active_ns: 100_000_000,
            ..work(&hog, &ran, 0.1)
        };
        assert_eq!(activation(&short, &Bounds::default()), None, "too short to judge");
    }

    #[test]
    fn the_runs_own_cpu_is_contention_by_design() {
        let hog = AnomalyParams::Cpuoccupy { utilization_ratio: 1.0 };
        let ran = busy();
        // The quickstart: a hog on both cores beside a fleet using 0.55 of
        // them reaches 68 %; 100 % was never within its reach.
        let beside_fleet = ActivationWork {
            own_cpu_share: 0.275,
            ..work(&hog, &ran, 0.68)
        };
        assert_eq!(activation(&beside_fleet, &Bounds::default()), None);
        // The same hog at 50 % with the run using the same share: a
        // neighbour took the rest, and that still shows.
        let starved = ActivationWork {
            own_cpu_share: 0.275,
            ..work(&hog, &ran, 0.5)
        };
        let found = activation(&starved, &Bounds::default()).unwrap();
        assert_eq!(found.code, "V0302");
        assert_eq!(found.measured, Some(0.5));
    }

    #[test]
    fn a_sample_twice_the_interval_late_is_a_gap() {
        let (interval, bounds) = (Duration::from_millis(100), Bounds::default());
        let mut watch = GapWatch::default();
        for t in [100, 200, 400, 500] {
            watch.sample(t * 1_000_000, interval, &bounds);
        }
        assert!(watch.finding(interval, &bounds).is_none(), "exactly twice is no gap");
        watch.sample(1_300_000_000, interval, &bounds);
        let found = watch.finding(interval, &bounds).unwrap();
        assert_eq!(found.code, "V0501");
        assert_eq!(found.measured, Some(800e6));
    }

    #[test]
    fn an_xml_workload_short_of_its_amount_is_degraded() {
        assert_eq!(xml_output(XmlAmount::Documents(100), 100, 5_000), None);
        assert_eq!(xml_output(XmlAmount::Bytes(4_000), 90, 5_000), None);
        let found = xml_output(XmlAmount::Documents(100), 40, 2_000).unwrap();
        assert_eq!((found.code.as_str(), found.measured), ("V0401", Some(40.0)));
        assert!(xml_output(XmlAmount::Bytes(10_000), 90, 5_000).is_some());
    }

    #[test]
    fn the_hosts_neighbours_and_steal_are_shares_of_its_cores() {
        let cpu = CpuUse {
            wall_s: 10.0,
            runner_s: 1.0,
            others_s: 8.0,
            steal_s: 2.0,
        };
        let codes = |found: Vec<Finding>| found.into_iter().map(|f| f.code).collect::<Vec<_>>();
        // 8 of 20 core-seconds = 40 % others, 10 % steal.
        assert_eq!(codes(host(cpu, 0, 2, &Bounds::default())), ["V0601", "V0602"]);
        // The run's own anomaly children are not a neighbour.
        assert_eq!(codes(host(cpu, 6_000_000_000, 2, &Bounds::default())), ["V0601"]);
        // Tick rounding over a short trial reads more than the machine: a
        // share is at most all of it, which a bound of 1 allows.
        let short = CpuUse {
            wall_s: 0.085,
            runner_s: 0.01,
            others_s: 0.21,
            steal_s: 0.2,
        };
        let whole_machine = Bounds {
            others_cpu_share: 1.0,
            steal_share: 1.0,
            ..Bounds::default()
        };
        assert!(host(short, 0, 2, &whole_machine).is_empty());
        let found = host(short, 0, 2, &Bounds::default());
        assert_eq!(codes(found.clone()), ["V0601", "V0602"]);
        assert!(
            found[1].message.contains("used 100 % of the 2 cores"),
            "{}",
            found[1].message
        );
    }
}
