//! A fleet audits its own instrument (docs/running.md, "Validity"): were
//! its sends on time (V0101), did the runner have CPU to spare (V0102),
//! were its messages acknowledged (V0103), did every device connect
//! (V0104). Everything comes from totals the fleet keeps anyway.

use exp_results::validity::{Bounds, Finding, Verdict};

use super::collector::Totals;
use super::cpu::CpuUse;

/// The findings of a fleet's trial, from its totals (`lateness` sorted),
/// the runner's CPU and the send lateness bound (ns).
pub fn findings(t: &Totals, cpu: CpuUse, lateness_bound_ns: u64, bounds: &Bounds) -> Vec<Finding> {
    let mut found = Vec::new();
    if let Some(p99) = super::collector::p99(&t.lateness).filter(|p99| *p99 > lateness_bound_ns) {
        found.push(
            Finding::new(
                "V0101",
                Verdict::Invalid,
                format!(
                    "send lateness p99 {} over its bound {}: the runner, not the system under test, set the timing",
                    ms(p99 as f64),
                    ms(lateness_bound_ns as f64)
                ),
            )
            .measured(p99 as f64, lateness_bound_ns as f64),
        );
    }
    let cores = exp_host::online_cpus().len().max(1) as f64;
    let runner_share = cpu.runner_s / cpu.wall_s.max(1e-9) / cores;
    if runner_share >= bounds.runner_cpu_share {
        found.push(
            Finding::new(
                "V0102",
                Verdict::Degraded,
                format!(
                    "the runner used {:.0} % of the {cores} cores (bound {:.0} %)",
                    runner_share * 100.0,
                    bounds.runner_cpu_share * 100.0
                ),
            )
            .measured(runner_share, bounds.runner_cpu_share),
        );
    }
    if t.messages > 0 {
        let missing = t.lost as f64 / t.messages as f64;
        if missing > bounds.unacknowledged_share {
            found.push(
                Finding::new(
                    "V0103",
                    Verdict::Degraded,
                    format!(
                        "{} of {} messages ({:.1} %) not acknowledged or written (bound {:.1} %)",
                        t.lost,
                        t.messages,
                        missing * 100.0,
                        bounds.unacknowledged_share * 100.0
                    ),
                )
                .measured(missing, bounds.unacknowledged_share),
            );
        }
    }
    if t.not_connected > 0 {
        found.push(
            Finding::new(
                "V0104",
                Verdict::Degraded,
                format!("{} devices not connected when the connect phase ended", t.not_connected),
            )
            .measured(t.not_connected as f64, 0.0),
        );
    }
    found
}

fn ms(ns: f64) -> String {
    format!("{:.2} ms", ns / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle() -> CpuUse {
        CpuUse {
            wall_s: 10.0,
            runner_s: 0.1,
            others_s: 0.0,
            steal_s: 0.0,
        }
    }

    fn codes(found: &[Finding]) -> Vec<(&str, Verdict)> {
        found.iter().map(|f| (f.code.as_str(), f.verdict)).collect()
    }

    #[test]
    fn a_fleet_on_time_with_every_ack_is_valid() {
        let t = Totals {
            messages: 1000,
            lateness: vec![100_000; 1000],
            ..Totals::default()
        };
        assert!(findings(&t, idle(), 1_000_000, &Bounds::default()).is_empty());
    }

    #[test]
    fn late_sends_are_invalid_and_missing_acks_and_devices_degrade() {
        let mut lateness = vec![100_000u64; 97];
        lateness.extend([5_000_000, 6_000_000, 7_000_000]);
        let t = Totals {
            messages: 100,
            lost: 2,
            not_connected: 3,
            lateness,
            ..Totals::default()
        };
        let found = findings(&t, idle(), 1_000_000, &Bounds::default());
        assert_eq!(
            codes(&found),
            [
                ("V0101", Verdict::Invalid),
                ("V0103", Verdict::Degraded),
                ("V0104", Verdict::Degraded)
            ]
        );
        assert_eq!(found[0].measured, Some(6_000_000.0), "the p99 of 100 is the 99th");
        assert_eq!(found[1].measured, Some(0.02));
    }

    #[test]
    fn a_runner_using_every_core_is_saturated() {
        let cores = exp_host::online_cpus().len().max(1) as f64;
        let busy = CpuUse {
            runner_s: 10.0 * cores,
            ..idle()
        };
        let found = findings(&Totals::default(), busy, 1_000_000, &Bounds::default());
        assert_eq!(codes(&found), [("V0102", Verdict::Degraded)]);
    }
}
