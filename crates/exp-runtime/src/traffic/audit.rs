//! A traffic workload audits its replay (docs/running.md, "Validity"): did
//! its connections start when the plan said (V0201), did they get the RTT
//! the delay stage was to give them (V0202, from TCP's own smoothed RTT at
//! close), did they connect at all (V0203).

use exp_results::validity::{Bounds, Finding, Verdict};

use super::metrics::Totals;

/// The findings of one trial's replay, from its totals (the lists are
/// sorted here).
pub fn findings(t: &mut Totals, bounds: &Bounds) -> Vec<Finding> {
    let mut found = Vec::new();
    t.start_lateness_us.sort_unstable();
    let bound_us = bounds.connection_start_lateness_ns / 1000;
    if let Some(&p99) = nearest_rank(&t.start_lateness_us, 0.99).filter(|p99| **p99 > bound_us) {
        found.push(
            Finding::new(
                "V0201",
                Verdict::Degraded,
                format!(
                    "connections started late against the plan: p99 {:.1} ms (bound {:.1} ms)",
                    p99 as f64 / 1e3,
                    bound_us as f64 / 1e3
                ),
            )
            .measured(p99 as f64 * 1e3, bounds.connection_start_lateness_ns as f64),
        );
    }
    let mut errors: Vec<f64> = t
        .rtts_us
        .iter()
        .filter(|(_, assigned)| *assigned > 0)
        .map(|&(achieved, assigned)| (achieved as f64 - assigned as f64).abs() / assigned as f64)
        .collect();
    errors.sort_unstable_by(f64::total_cmp);
    if let Some(&median) = nearest_rank(&errors, 0.5).filter(|e| **e > bounds.rtt_tolerance) {
        found.push(
            Finding::new(
                "V0202",
                Verdict::Degraded,
                format!(
                    "the median connection's RTT was {:.0} % off the one assigned (bound {:.0} %; {} connections measured)",
                    median * 100.0,
                    bounds.rtt_tolerance * 100.0,
                    errors.len()
                ),
            )
            .measured(median, bounds.rtt_tolerance),
        );
    }
    if t.failed > 0 {
        found.push(
            Finding::new(
                "V0203",
                Verdict::Degraded,
                format!("{} of {} connections failed", t.failed, t.connections),
            )
            .measured(t.failed as f64, 0.0),
        );
    }
    found
}

/// The nearest-rank `q` quantile of sorted values.
fn nearest_rank<T>(sorted: &[T], q: f64) -> Option<&T> {
    let rank = ((sorted.len() as f64 * q).ceil() as usize).max(1);
    sorted.get(rank - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(found: &[Finding]) -> Vec<&str> {
        found.iter().map(|f| f.code.as_str()).collect()
    }

    #[test]
    fn a_replay_on_time_at_its_rtts_is_valid() {
        let mut t = Totals::default();
        t.connections = 3;
        t.start_lateness_us = vec![100, 200, 50];
        t.rtts_us = vec![(10_400, 10_000), (19_000, 20_000), (30_100, 30_000)];
        assert!(findings(&mut t, &Bounds::default()).is_empty());
    }

    #[test]
    fn rtts_more_than_a_tenth_off_late_starts_and_failures_are_flagged() {
        let mut t = Totals::default();
        (t.connections, t.failed) = (4, 1);
        t.start_lateness_us = vec![100, 200, 50, 40_000];
        t.rtts_us = vec![(12_000, 10_000), (25_000, 20_000), (30_100, 30_000)];
        let found = findings(&mut t, &Bounds::default());
        assert_eq!(codes(&found), ["V0201", "V0202", "V0203"]);
        assert_eq!(found[0].measured, Some(40e6), "ns");
        assert_eq!(found[1].measured, Some(0.2), "the median of 0.2, 0.25 and 0.003");
    }
}
