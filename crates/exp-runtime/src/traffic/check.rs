//! A traffic workload's checks before a run, reached through `kinds.rs`:
//! the limits a compiled plan meets (its numbers' bounds, its network) and
//! its preflight (a trace to read, a server to reach, the privileges RTT
//! emulation needs).

use std::path::Path;

use exp_diagnostics::limits::{MAX_PLAN_INTEGER, MAX_SYNTHETIC_CONNECTIONS};
use exp_diagnostics::{Code, Diagnostic};
use exp_plan::bounds::{PATHS, RECEIVER_WINDOW_MIN_BYTES};
use exp_plan::{Rtt, Traffic, Vectors};

use super::network;
use crate::findings::{out_of_bounds, shape, Finding, Host, COMPILED_ONLY};

/// A traffic workload's numbers and network.
pub(crate) fn limits(name: &str, traffic: &Traffic) -> Vec<Finding> {
    let mut problems: Vec<_> = out_of_bounds(Code::E1005, "traffic", name, traffic_numbers(traffic)).collect();
    if !matches!(traffic.network.as_str(), "loopback" | "namespaces") {
        problems.push((
            format!("network {name}"),
            Diagnostic::error(
                Code::E1005,
                format!(
                    "traffic `{name}`: `network` is `{}`, not `loopback` or `namespaces`",
                    traffic.network
                ),
            )
            .help(COMPILED_ONLY),
        ));
    }
    problems
}

/// A traffic workload's numbers with the bounds the language gives them
/// (exp-check's `registry/traffic.rs` and `synthetic`): outside them the
/// replay would allocate without bound, sample every nanosecond or bind
/// addresses that do not exist. Absent options are not checked.
fn traffic_numbers(traffic: &Traffic) -> Vec<(&'static str, f64, (f64, f64))> {
    let ns = |n: u64| n as f64;
    let mut numbers = vec![
        ("interval_ns", ns(traffic.interval_ns), (1e6, MAX_PLAN_INTEGER)),
        ("source_addresses", f64::from(traffic.source_addresses), (1.0, 254.0)),
        ("queue_bytes", ns(traffic.queue_bytes), (1500.0, MAX_PLAN_INTEGER)),
    ];
    if let Some(window) = traffic.window_bytes {
        numbers.push((
            "window_bytes",
            ns(window),
            (RECEIVER_WINDOW_MIN_BYTES, MAX_PLAN_INTEGER),
        ));
    }
    if let Some(rate) = traffic.bottleneck_bit_per_s {
        numbers.push(("bottleneck_bit_per_s", ns(rate), (1000.0, MAX_PLAN_INTEGER)));
    }
    if let Vectors::Synthetic(synthetic) = &traffic.vectors {
        let most = MAX_SYNTHETIC_CONNECTIONS as f64;
        numbers.push(("connections", ns(synthetic.connections), (1.0, most)));
        let window = (RECEIVER_WINDOW_MIN_BYTES, MAX_PLAN_INTEGER);
        numbers.push(("synthetic.window_bytes", ns(synthetic.window_bytes), window));
        let dists = [
            ("synthetic.arrival.shape", &synthetic.arrival),
            ("synthetic.epochs.shape", &synthetic.epochs),
            ("synthetic.request.shape", &synthetic.request),
            ("synthetic.response.shape", &synthetic.response),
            ("synthetic.server_time.shape", &synthetic.server_time),
            ("synthetic.think_time.shape", &synthetic.think_time),
            ("synthetic.rtt.shape", &synthetic.rtt),
        ];
        numbers.extend(dists.into_iter().filter_map(|(property, dist)| shape(property, dist)));
    }
    match &traffic.rtt {
        Rtt::Dist(rtt) => numbers.extend(shape("rtt.shape", rtt)),
        Rtt::Paths {
            count, distribution, ..
        } => {
            numbers.push(("rtt.count", f64::from(*count), PATHS));
            numbers.extend(distribution.as_ref().and_then(|d| shape("rtt.distribution.shape", d)));
        }
        Rtt::None | Rtt::Mean | Rtt::PerConnection => {}
    }
    numbers
}

/// Help for a path or address that cannot be used.
const PATH_HELP: &str = "paths in a spec are relative to the spec's own directory";
/// Help when the namespaces cannot be set up.
const PRIVILEGES_HELP: &str =
    "run as root (RTT emulation, bottlenecks and loss need namespaces), or use `rtt = none` and `network = loopback`";

/// A traffic workload's preflight. A trace that is not a file or a server
/// that does not resolve is E1004; RTT emulation without root or TUN is E1005.
pub(crate) fn preflight(name: &str, traffic: &Traffic, _host: &Host) -> Vec<Finding> {
    problems(traffic)
        .into_iter()
        .map(|(code, problem, help)| {
            let diagnostic = Diagnostic::error(code, format!("traffic `{name}`: {problem}")).help(help);
            (format!("traffic {name} {problem}"), diagnostic)
        })
        .collect()
}

/// Each problem's code, text and help line.
pub(super) fn problems(traffic: &Traffic) -> Vec<(Code, String, &'static str)> {
    let mut problems = Vec::new();
    if let exp_plan::Vectors::Trace { file, .. } = &traffic.vectors {
        if !Path::new(file).is_file() {
            let problem = format!("trace `{file}` is not a file");
            problems.push((Code::E1004, problem, PATH_HELP));
        }
    }
    if let Some(server) = &traffic.server {
        if let Err(problem) = network::resolve(server) {
            let problem = problem.to_string();
            problems.push((Code::E1004, problem, "start `expc serve` there, or check `host:port`"));
        }
        if let Some(var) = &traffic.secret_env {
            // The name only: the value is a secret and never printed.
            if let Err(problem) = network::secret(var) {
                let problem = problem.to_string();
                let help = "export the secret `expc serve` uses (its file or its EXPC_SERVE_SECRET) before running";
                problems.push((Code::E1005, problem, help));
            }
        }
        if network::emulates(traffic) {
            let problem = "RTT emulation, bottlenecks and loss run in this machine's delay stage, \
                           which a `server` elsewhere is not behind"
                .to_string();
            let help = "remove `server` to emulate here, or drop `rtt`, `bottleneck`, `apply_loss` and \
                        `network = namespaces` to replay across the real path";
            problems.push((Code::E1005, problem, help));
        }
    } else if network::needs_namespaces(traffic) {
        if let Err(e) = exp_traffic::emulate::preflight() {
            problems.push((Code::E1005, e.to_string(), PRIVILEGES_HELP));
        }
    }
    problems
}
