use exp_diagnostics::Code;
use exp_plan::{Rtt, Vectors};

use super::check::problems;
use super::network::needs_namespaces;
use super::*;

fn traffic(file: &str) -> Traffic {
    Traffic {
        vectors: Vectors::Trace {
            file: file.into(),
            format: "original".into(),
        },
        structure: "atbt".into(),
        rtt: Rtt::None,
        window_bytes: None,
        network: "loopback".into(),
        bottleneck_bit_per_s: None,
        queue_bytes: 1 << 20,
        apply_loss: false,
        measure: None,
        interval_ns: 1_000_000_000,
        source_addresses: 8,
        lenient: false,
        server: None,
        secret_env: None,
    }
}

#[test]
fn a_missing_trace_is_e1004() {
    let problems = problems(&traffic("/nonexistent/no-such-trace.cvec"));
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].0, Code::E1004);
    assert!(problems[0].1.contains("/nonexistent/no-such-trace.cvec"));
}

#[test]
fn a_server_with_rtt_emulation_is_refused() {
    let mut t = traffic("/nonexistent/t.cvec");
    t.server = Some("127.0.0.1:9".into());
    t.rtt = Rtt::Mean;
    assert!(!needs_namespaces(&t), "the acceptor is elsewhere");
    let codes: Vec<Code> = problems(&t).into_iter().map(|p| p.0).collect();
    assert_eq!(codes, [Code::E1004, Code::E1005]);
}

#[test]
fn rtt_bottleneck_loss_or_namespaces_need_the_stage() {
    let mut t = traffic("t.cvec");
    assert!(!needs_namespaces(&t));
    t.bottleneck_bit_per_s = Some(10_000_000);
    assert!(needs_namespaces(&t));
    let mut t = traffic("t.cvec");
    t.network = "namespaces".into();
    assert!(needs_namespaces(&t));
    let mut t = traffic("t.cvec");
    t.rtt = Rtt::PerConnection;
    assert!(needs_namespaces(&t));
}

#[test]
fn a_window_ends_at_its_own_end_or_the_trials() {
    let s = Duration::from_secs;
    let ns = |secs: u64| secs * 1_000_000_000;
    let interval = |start: u64, end: Option<u64>| Interval {
        start_ns: ns(start),
        end_ns: end.map(ns),
    };
    assert_eq!(window_length(&interval(2, Some(5)), Some(ns(100))), Some(s(3)));
    assert_eq!(window_length(&interval(2, None), Some(ns(10))), Some(s(8)));
    assert_eq!(window_length(&interval(2, None), None), None);
}
