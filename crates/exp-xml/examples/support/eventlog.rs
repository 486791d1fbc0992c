//! A realistic synthesis set for benchmarks and tests: an event log with
//! about 50 paths (categorical and numeric, element text and attribute
//! values) and 1–3 KB documents, extracted with `exp_xml::extract` and
//! fitted with `exp_stats::select`, as `expc xml extract` would.

#![allow(dead_code)]

use exp_stats::{sampler::standard_normal, select, Family, Rng};

/// Families fitted here: common ones whose CDF is closed-form. Fitting all
/// 13 costs minutes on this corpus (the iterative fits and incomplete-gamma
/// CDFs used to rank continuous fits on integer data dominate), which a
/// test or benchmark set does not need.
const CANDIDATES: [Family; 6] = [
    Family::Normal,
    Family::LogNormal,
    Family::Exponential,
    Family::Weibull,
    Family::Poisson,
    Family::Geometric,
];
use exp_xml::set::{FitRecord, NumericPath, SetInfo, SynthesisSet};
use exp_xml::{extract, AttributePolicy, Config, Extraction, Source};

const SERVICES: [&str; 6] = ["auth", "billing", "search", "gateway", "storage", "mailer"];
const METRICS: [&str; 8] = [
    "cpu", "memory", "disk", "net_in", "net_out", "queue", "errors", "threads",
];
const MESSAGES: [&str; 5] = [
    "request completed within the configured latency budget & no retries were needed",
    "upstream connection pool exhausted; request was queued <waiting for a free slot>",
    "cache miss for the requested key, the value was recomputed and stored again",
    "periodic health report: all subsystems answered their probes in time",
    "configuration reloaded from disk after a change notification from the watcher",
];

/// An event-log corpus of `events` documents under `<log>`.
pub fn corpus(events: u64) -> Vec<u8> {
    let mut rng = Rng::new(2024);
    let mut s = String::from("<?xml version=\"1.0\"?>\n<log>\n");
    for i in 0..events {
        let kind = ["metric", "status", "alarm"][(rng.below(10) / 4) as usize];
        s.push_str(&format!(
            "<event ts=\"{}\" seq=\"{i}\">\n  <kind>{kind}</kind>\n  <host>srv-{:02}</host>\n  <dc>eu-{}</dc>\n",
            1_700_000_000_000u64 + i * 137 + rng.below(100),
            rng.below(16),
            rng.below(3)
        ));
        let service = SERVICES[rng.below(SERVICES.len() as u64) as usize];
        let latency = (2.5 + 0.8 * standard_normal(&mut rng)).exp();
        s.push_str(&format!(
            "  <service>{service}</service>\n  <severity>{}</severity>\n  <user id=\"u{}\">user{}</user>\n  <latency_ms>{latency:.3}</latency_ms>\n  <bytes>{}</bytes>\n",
            rng.below(5),
            rng.below(5000),
            rng.below(40),
            (-20_000.0 * rng.open01().ln()) as u64,
        ));
        // A long free-text detail: 20 variants of 300–700 characters.
        let variant = rng.below(20);
        s.push_str("  <detail>");
        for w in 0..(60 + variant * 4) {
            s.push_str(
                ["request", "handled", "by", "worker", "pool", "after", "retry", "ok"][((w + variant) % 8) as usize],
            );
            s.push(' ');
        }
        s.push_str("</detail>\n");
        let message = MESSAGES[rng.below(MESSAGES.len() as u64) as usize];
        s.push_str(&format!("  <message>{}</message>\n  <metrics>\n", xml_escape(message)));
        let count = 4 + rng.below(5) as usize;
        for (k, name) in METRICS.iter().enumerate().take(count) {
            let scale = 10.0 * (k + 1) as f64;
            let avg = scale * (1.0 + 0.2 * standard_normal(&mut rng)).abs();
            let max = avg * (1.0 + rng.next_f64());
            s.push_str(&format!(
                "    <m name=\"{name}\"><avg>{avg:.2}</avg><max>{max:.2}</max><samples>{}</samples><unit>u{k}</unit><ok>{}</ok></m>\n",
                50 + rng.below(200),
                rng.below(20) != 0
            ));
        }
        s.push_str("  </metrics>\n");
        if rng.below(3) == 0 {
            s.push_str("  <tags><tag>prod</tag><tag>canary</tag></tags>\n");
        }
        s.push_str("</event>\n");
    }
    s.push_str("</log>\n");
    s.into_bytes()
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The extraction of [`corpus`], split at `event`.
pub fn extraction(events: u64) -> Extraction {
    let config = Config {
        split_at: Some("event".into()),
        policy: AttributePolicy::Auto { max_distinct: 30 },
        ..Config::default()
    };
    let source = Source::Memory {
        name: "events.xml".into(),
        data: corpus(events),
    };
    extract(&[source], &config).expect("in-memory extraction")
}

/// A set from an extraction: numeric paths fitted over [`CANDIDATES`]
/// (falling back to uniform when nothing fits).
pub fn set_from(x: &Extraction) -> SynthesisSet {
    let record = |fit: &exp_stats::Fit| FitRecord {
        family: fit.family,
        params: fit.params.iter().map(|&(n, v)| (n.to_owned(), v)).collect(),
        log_likelihood: fit.log_likelihood,
        aic: fit.aic,
    };
    let numeric = x
        .numeric
        .iter()
        .map(|summary| {
            let selection = select(&summary.values, &CANDIDATES).ok();
            NumericPath {
                path: summary.path,
                fit: selection.as_ref().map(|s| record(&s.best)),
                runner_up: selection.as_ref().and_then(|s| s.runner_up.as_ref()).map(record),
                n: summary.n,
                min: summary.min,
                max: summary.max,
                is_integer: summary.is_integer,
                decimals: summary.max_decimals,
                format: summary.format,
            }
        })
        .collect();
    SynthesisSet {
        structures: x.structures.clone(),
        paths: x.paths.clone(),
        categorical: x.categorical.clone(),
        numeric,
        info: SetInfo {
            split_at: Some("event".into()),
            split_root: Some("log".into()),
            ..SetInfo::default()
        },
    }
}

/// The event-log synthesis set from `events` documents.
pub fn synthesis_set(events: u64) -> SynthesisSet {
    set_from(&extraction(events))
}
