//! Rules the runtime applies to a compiled plan that the registry's bounds
//! cannot express, checked here so that a plan `expc check` accepts is
//! never refused by preflight: an anomaly's child validates its
//! configuration before it runs a kernel (`exp_anomaly::validate`, E1005 in
//! preflight), and a fleet spreads uniform first sends over one mean gap
//! (E1007 in preflight). Each used to pass `check` and fail `run` with
//! "compile the spec again".

use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::{Anomaly, AnomalyParams, FirstSend, Fleet};
use exp_syntax::ast::Block;

use crate::checker::Checker;
use crate::query::attributes;

/// Smallest share of a `membw` buffer per core (the kernel's page).
const MEMBW_MIN_PER_CORE: u64 = 4096;

impl Checker<'_> {
    /// An anomaly's configuration as its child would refuse it.
    pub(crate) fn check_anomaly_rules(&mut self, anomaly: &Anomaly, block: &Block) {
        let span_of = |name: &str| attributes(block).get(name).map_or(block.kind.span, |a| a.value.span);
        let per_core = matches!(
            anomaly.params,
            AnomalyParams::Cpuoccupy { .. } | AnomalyParams::Cachecopy { .. } | AnomalyParams::Membw { .. }
        );
        if per_core && anomaly.cores.is_empty() {
            self.report(
                Diagnostic::error(Code::E0504, "`cores` is empty")
                    .primary(span_of("cores"), "no core to run on")
                    .note(format!("`{}` runs one thread per listed core", anomaly.params.kind()))
                    .help("list at least one core, e.g. `cores = [0]`"),
            );
        }
        match &anomaly.params {
            AnomalyParams::Membw { buffer_bytes, .. } if !anomaly.cores.is_empty() => {
                let cores = anomaly.cores.len() as u64;
                if buffer_bytes / cores < MEMBW_MIN_PER_CORE {
                    self.report(
                        Diagnostic::error(
                            Code::E0501,
                            format!("`buffer` of {buffer_bytes} bytes over {cores} cores is less than 4KiB per core"),
                        )
                        .primary(span_of("buffer"), "split over the cores")
                        .help(format!("`buffer = {}KiB` or more", 4 * cores)),
                    );
                }
            }
            AnomalyParams::Netoccupy { peer: Some(peer), .. } if !is_host_port(peer) => self.report(
                Diagnostic::error(Code::E0501, format!("`peer` {peer:?} is not `host:port`"))
                    .primary(span_of("peer"), "not `host:port`")
                    .help("e.g. `peer = \"10.0.0.2:9000\"` or `peer = \"[::1]:9000\"`, the port from 1 to 65535"),
            ),
            AnomalyParams::Iometadata { dir: Some(dir), .. } | AnomalyParams::Iobandwidth { dir: Some(dir), .. }
                if dir.is_empty() || dir.contains('\0') =>
            {
                self.report(
                    Diagnostic::error(Code::E0501, format!("`dir` {dir:?} is not a directory name"))
                        .primary(span_of("dir"), "not a usable directory name")
                        .help("name a directory, or leave `dir` out for a scratch directory in the run"),
                );
            }
            _ => {}
        }
    }

    /// `first_send = uniform` spreads the first sends over one mean gap: a
    /// gap without a finite mean (a Pareto with `shape ≤ 1`) has none.
    /// `first_send` is `None` when left at its default.
    pub(crate) fn check_first_send(&mut self, fleet: &Fleet, gap: Span, first_send: Option<Span>) {
        if fleet.first_send != FirstSend::Uniform {
            return;
        }
        let Ok(sampler) = exp_stats::Sampler::new(&fleet.gap) else {
            return; // an invalid gap is reported with the gap
        };
        if sampler.mean().is_some_and(|m| m.is_finite() && m >= 0.0) {
            return;
        }
        let diagnostic = Diagnostic::error(Code::E0503, "`first_send = uniform` needs a gap with a finite mean");
        let diagnostic = match first_send {
            Some(span) => diagnostic
                .primary(span, "spread over one mean gap")
                .secondary(gap, "this gap has no finite mean"),
            None => diagnostic.primary(gap, "no finite mean, and `first_send` is `uniform` by default"),
        };
        self.report(
            diagnostic.help("give `first_send` a distribution of its own, e.g. `first_send = uniform(0s, 1s)`"),
        );
    }
}

/// `host:port` as the netoccupy child reads it: a host (an IPv6 address
/// in brackets or not) and a port from 1 to 65535.
fn is_host_port(peer: &str) -> bool {
    peer.rsplit_once(':').is_some_and(|(host, port)| {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::is_host_port;

    #[test]
    fn peers_are_host_and_port() {
        for good in ["10.0.0.2:9000", "[::1]:9000", "sink.example:1", "::1:80"] {
            assert!(is_host_port(good), "{good}");
        }
        for bad in ["not an address", "host:", ":9000", "host:0", "host:65536", "[]:80", ""] {
            assert!(!is_host_port(bad), "{bad}");
        }
    }
}
