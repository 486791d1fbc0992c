//! The MQTT fleet report as text (`expc report`, and the end of `expc
//! run` for a small run): per trial and fleet, the counts, a latency table,
//! the ack latency's CDF, latency by anomaly phase, connections and gap
//! accuracy. The numbers and their definitions are [`crate::mqtt`]'s.

use std::fmt::Write;

use exp_plan::{Dist, DistValue, Unit};

use super::units::{number, time};
use crate::mqtt::{Counts, GapAccuracy, PhaseStats, Quantiles};
use crate::{FleetReport, MqttReport};

/// The report's section, starting with an empty line and `== MQTT fleets`.
pub fn render(report: &MqttReport) -> String {
    let mut out = String::from("\n== MQTT fleets\n");
    if report.time_scale != 1.0 {
        let _ = writeln!(
            out,
            "time scale {}: trial times are scaled, fleet gaps are not",
            report.time_scale
        );
    }
    for trial in &report.trials {
        let at = match (trial.point, trial.repetition) {
            (Some(p), Some(r)) => format!(" (point {p}, repetition {r})"),
            _ => String::new(),
        };
        let contended = match trial.contended {
            Some(true) => "contended: send lateness exceeded its bound",
            Some(false) => "not contended",
            None => "contended: unknown",
        };
        let _ = writeln!(out, "trial {}{at}: {contended}", trial.trial);
        for fleet in &trial.fleets {
            fleet_section(&mut out, fleet);
        }
    }
    out
}

fn fleet_section(out: &mut String, f: &FleetReport) {
    let c = &f.counts;
    let _ = writeln!(
        out,
        "  fleet {:?}: {} messages, {} warm-up left out",
        f.fleet, c.scheduled, f.warmup.scheduled
    );
    let _ = writeln!(
        out,
        "    sent {}  acknowledged {}  delivered {}  lost {}",
        c.sent, c.acknowledged, c.delivered, c.lost
    );
    if let Some(losses) = losses(c) {
        let _ = writeln!(out, "    lost         {losses}");
    }
    if let Some(t) = f.throughput_per_s {
        let _ = writeln!(out, "    throughput   {} msg/s", number(t));
    }
    let rows = [
        ("ack", &f.ack_latency_ns),
        ("delivery", &f.delivery_latency_ns),
        ("lateness", &f.lateness_ns),
    ];
    if rows.iter().any(|(_, q)| q.is_some()) {
        let _ = writeln!(
            out,
            "    {:<12} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "", "n", "p50", "p90", "p95", "p99", "max"
        );
    }
    for (name, q) in rows {
        if let Some(q) = q {
            let _ = writeln!(
                out,
                "    {name:<12} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
                q.n,
                time(q.p50),
                time(q.p90),
                time(q.p95),
                time(q.p99),
                time(q.max)
            );
        }
    }
    if let Some(q) = &f.ack_latency_ns {
        let _ = writeln!(out, "    ack cdf      {}", cdf(q));
    }
    phases(out, &f.phases);
    if let Some(d) = &f.connections {
        let latency = d.connect_latency_ns.as_ref().map_or(String::new(), |q| {
            format!(", connect p50 {} max {}", time(q.p50), time(q.max))
        });
        let _ = writeln!(
            out,
            "    devices      {} of {} connected{latency}, {} disconnects, {} reconnects",
            d.connected, d.devices, d.disconnects, d.reconnects
        );
    }
    gaps(out, &f.gaps);
}

/// Ack latency by anomaly phase, one row each, with lateness (and delivery,
/// when any phase has some) p50 / p99 and the messages not acknowledged.
fn phases(out: &mut String, phases: &[PhaseStats]) {
    if phases.is_empty() {
        return;
    }
    let width = phases
        .iter()
        .map(|p| p.label.chars().count())
        .max()
        .unwrap_or(0)
        .max(12);
    let delivery = phases.iter().any(|p| p.delivery_latency_ns.is_some());
    let _ = write!(
        out,
        "    {:<width$} {:>8} {:>10} {:>10} {:>10} {:>10}   {:<20}",
        "by phase", "n", "p50", "p90", "p99", "max", "lateness p50/p99"
    );
    if delivery {
        let _ = write!(out, " {:<20}", "delivery p50/p99");
    }
    let _ = writeln!(out, " not ok");
    let dash = || "-".to_string();
    let pair = |q: &Option<Quantiles>| {
        q.as_ref()
            .map_or_else(dash, |q| format!("{} / {}", time(q.p50), time(q.p99)))
    };
    for p in phases {
        let ack = |f: fn(&Quantiles) -> f64| p.ack_latency_ns.as_ref().map_or_else(dash, |q| time(f(q)));
        let _ = write!(
            out,
            "    {:<width$} {:>8} {:>10} {:>10} {:>10} {:>10}   {:<20}",
            p.label,
            p.n,
            ack(|q| q.p50),
            ack(|q| q.p90),
            ack(|q| q.p99),
            ack(|q| q.max),
            pair(&p.lateness_ns)
        );
        if delivery {
            let _ = write!(out, " {:<20}", pair(&p.delivery_latency_ns));
        }
        let _ = writeln!(out, " {}", p.n.saturating_sub(p.ok));
    }
}

fn losses(c: &Counts) -> Option<String> {
    let parts: Vec<String> = c
        .losses
        .iter()
        .map(|l| {
            let status = l.status.as_deref().unwrap_or("(no status)");
            match &l.reason {
                Some(reason) => format!("{status}/{reason} {}", l.count),
                None => format!("{status} {}", l.count),
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn cdf(q: &Quantiles) -> String {
    let points: Vec<String> = q
        .cdf
        .iter()
        .map(|p| format!("{}% {}", p.percent, time(p.value)))
        .collect();
    points.join("  ")
}

fn gaps(out: &mut String, g: &GapAccuracy) {
    match &g.target {
        Some(t) if t.constant => {
            let _ = writeln!(out, "    gap target   {}", describe(&t.gap));
        }
        Some(t) => {
            let _ = writeln!(
                out,
                "    gap target   {}: median {}, mean {}",
                describe(&t.gap),
                t.median.map_or("-".into(), time),
                t.mean.map_or("infinite".into(), time)
            );
        }
        None => {
            let _ = writeln!(
                out,
                "    gap target   unknown (plan.json unreadable or without this fleet)"
            );
        }
    }
    let Some(a) = &g.achieved else {
        let _ = writeln!(out, "    gap achieved no consecutive sends");
        return;
    };
    let error = g
        .median_error
        .map_or(String::new(), |e| format!(" ({:+.1} %)", e * 100.0));
    let _ = writeln!(
        out,
        "    gap achieved n {}  median {}{error}  sd {}  min {}  max {}",
        a.n,
        time(a.median),
        a.sd.map_or("-".into(), time),
        time(a.min),
        time(a.max)
    );
    if let Some(ks) = &g.ks {
        let _ = writeln!(
            out,
            "    gap KS       D {:.4}  p {}  (n {})",
            ks.statistic,
            number(ks.p_value),
            ks.n
        );
    }
}

/// `pareto(shape = 3, scale = 79.37ms)`: parameters in the distribution's unit.
pub fn describe(d: &DistValue) -> String {
    let v = |x: f64| match d.unit {
        Unit::Ns => time(x),
        _ => number(x),
    };
    match &d.dist {
        Dist::Constant { value } => format!("constant({})", v(*value)),
        Dist::Uniform { min, max } => format!("uniform(min = {}, max = {})", v(*min), v(*max)),
        Dist::Normal { mean, sd } => format!("normal(mean = {}, sd = {})", v(*mean), v(*sd)),
        Dist::Lognormal { shape, scale, location } => format!(
            "lognormal(shape = {}, scale = {}, location = {})",
            shape,
            v(*scale),
            v(*location)
        ),
        Dist::Exponential { mean } => format!("exponential(mean = {})", v(*mean)),
        Dist::Pareto { shape, scale } => format!("pareto(shape = {}, scale = {})", shape, v(*scale)),
        Dist::Weibull { shape, scale } => format!("weibull(shape = {}, scale = {})", shape, v(*scale)),
        Dist::Gamma { shape, scale } => format!("gamma(shape = {}, scale = {})", shape, v(*scale)),
        Dist::Poisson { mean } => format!("poisson(mean = {mean})"),
        Dist::Geometric { p } => format!("geometric(p = {p})"),
        Dist::Empirical { file, values, .. } => format!("empirical({file:?}, {} values)", values.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_distributions() {
        assert_eq!(time(739_004.6), "739.0µs");
        assert_eq!(time(100_400_000.0), "100.40ms");
        assert_eq!(time(1.2e9), "1.200s");
        assert_eq!(time(12.0), "12ns");
        let pareto = DistValue {
            unit: Unit::Ns,
            dist: Dist::Pareto {
                shape: 3.0,
                scale: 79_370_052.6,
            },
        };
        assert_eq!(describe(&pareto), "pareto(shape = 3, scale = 79.37ms)");
    }

    #[test]
    fn phases_are_a_table_after_the_latencies() {
        let q = |p50: f64| Quantiles {
            n: 3,
            min: p50,
            mean: p50,
            p50,
            p90: 2.0 * p50,
            p95: 2.0 * p50,
            p99: 3.0 * p50,
            max: 4.0 * p50,
            cdf: Vec::new(),
        };
        let phase = |label: &str, n, ok, ack: Option<Quantiles>| PhaseStats {
            label: label.into(),
            anomalies: Vec::new(),
            n,
            ok,
            ack_latency_ns: ack,
            delivery_latency_ns: None,
            lateness_ns: Some(q(41_000.0)),
        };
        let mut out = String::new();
        phases(&mut out, &[]);
        assert_eq!(out, "");
        phases(
            &mut out,
            &[phase("none", 2400, 2400, Some(q(512_300.0))), phase("cpu", 7, 0, None)],
        );
        let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "    by phase            n        p50        p90        p99        max   lateness p50/p99     not ok",
                "    none             2400    512.3µs     1.02ms     1.54ms     2.05ms   41.0µs / 123.0µs     0",
                "    cpu                 7          -          -          -          -   41.0µs / 123.0µs     7",
            ]
        );
    }
}
