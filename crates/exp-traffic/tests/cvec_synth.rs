//! Synthesis of connection vectors from distributions.

use exp_plan::{Dist, DistValue, SyntheticVectors, Unit};
use exp_traffic::cvec::{parse, write_alternate, write_original, Format, Mode, PerSide, Side};
use exp_traffic::synth::{synthesize, SynthError, Synthesizer, MAX_EPOCHS};

fn dist(unit: Unit, dist: Dist) -> DistValue {
    DistValue { unit, dist }
}

fn spec(connections: u64) -> SyntheticVectors {
    SyntheticVectors {
        connections,
        arrival: dist(Unit::Ns, Dist::Exponential { mean: 50e6 }), // 50 ms
        epochs: dist(Unit::Count, Dist::Geometric { p: 0.3 }),
        request: dist(Unit::Bytes, Dist::Exponential { mean: 800.0 }),
        response: dist(
            Unit::Bytes,
            Dist::Lognormal {
                shape: 1.0,
                scale: 5000.0,
                location: 0.0,
            },
        ),
        server_time: dist(Unit::Ns, Dist::Uniform { min: 1e6, max: 3e6 }), // 1..3 ms
        think_time: dist(Unit::Ns, Dist::Exponential { mean: 2e9 }),       // 2 s
        rtt: dist(Unit::Ns, Dist::Constant { value: 20e6 }),               // 20 ms
        window_bytes: 65536,
    }
}

fn mean(values: impl Iterator<Item = u64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0u64), |(s, n), v| (s + v as f64, n + 1));
    sum / n as f64
}

#[test]
fn same_seed_same_connections_other_seed_others() {
    let s = spec(200);
    let a = synthesize(&s, 7).expect("valid spec");
    assert_eq!(a, synthesize(&s, 7).expect("valid spec"));
    assert_ne!(a, synthesize(&s, 8).expect("valid spec"));
    // A connection does not depend on how many come after it.
    let fewer = synthesize(&spec(50), 7).expect("valid spec");
    assert_eq!(&a[..50], &fewer[..]);
}

#[test]
fn shape_follows_the_documented_rules() {
    let conns = synthesize(&spec(300), 1).expect("valid spec");
    assert_eq!(conns.len(), 300);
    let mut previous_start = 0;
    for (i, c) in conns.iter().enumerate() {
        assert_eq!(c.mode, Mode::Sequential);
        assert!(c.start_us >= previous_start, "starts never go back");
        previous_start = c.start_us;
        assert_eq!(c.ids, (i.to_string(), i.to_string()));
        assert_eq!(c.min_rtt_us, Some(20_000));
        assert_eq!(
            c.window,
            Some(PerSide {
                initiator: 65536,
                acceptor: 65536
            })
        );
        let (data, fin) = c.adus.split_at(c.adus.len() - 1);
        assert_eq!(fin[0].side, Side::Acceptor);
        assert_eq!((fin[0].bytes, fin[0].send_wait_us, fin[0].recv_wait_us), (0, 1, 0));
        assert_eq!(data.len() % 2, 0);
        for (k, pair) in data.chunks(2).enumerate() {
            let (req, rsp) = (pair[0], pair[1]);
            assert_eq!((req.side, rsp.side), (Side::Initiator, Side::Acceptor));
            assert!(req.bytes >= 1 && rsp.bytes >= 1);
            assert_eq!(req.send_wait_us + rsp.send_wait_us, 0);
            assert!((1000..=3000).contains(&rsp.recv_wait_us), "server time in 1..3 ms");
            if k == 0 {
                assert_eq!(req.recv_wait_us, 0, "the first request goes at once");
            }
        }
    }
}

#[test]
fn sample_means_match_the_distributions() {
    let conns = synthesize(&spec(4000), 42).expect("valid spec");
    let epochs = mean(conns.iter().map(|c| c.epochs().len() as u64));
    // 1 + geometric(0.3): mean 1 + 0.7 / 0.3 = 3.33.
    assert!((epochs - 10.0 / 3.0).abs() < 0.2, "epochs {epochs}");
    let requests = mean(
        conns
            .iter()
            .flat_map(|c| c.adus.iter().filter(|a| a.side == Side::Initiator).map(|a| a.bytes)),
    );
    assert!((requests - 800.0).abs() < 40.0, "request {requests}");
    // Lognormal mean: scale · exp(shape² / 2) = 5000 · e^0.5 ≈ 8244.
    let responses = mean(conns.iter().flat_map(|c| {
        c.adus
            .iter()
            .filter(|a| a.side == Side::Acceptor && a.bytes > 0)
            .map(|a| a.bytes)
    }));
    assert!((responses - 8243.6).abs() < 600.0, "response {responses}");
    let server = mean(conns.iter().flat_map(|c| {
        c.adus
            .iter()
            .filter(|a| a.side == Side::Acceptor && a.bytes > 0)
            .map(|a| a.recv_wait_us)
    }));
    assert!((server - 2000.0).abs() < 50.0, "server time {server}");
    let think = mean(conns.iter().flat_map(|c| {
        c.adus
            .iter()
            .filter(|a| a.side == Side::Initiator)
            .skip(1)
            .map(|a| a.recv_wait_us)
    }));
    assert!((think - 2e6).abs() < 1.5e5, "think time {think}");
    // 4000 gaps of mean 50 ms: the last start is near 200 s.
    let last = conns.last().expect("4000 connections").start_us as f64;
    assert!((last - 200e6).abs() < 15e6, "last start {last}");
}

#[test]
fn zero_draws_still_give_valid_units() {
    let mut s = spec(20);
    s.request = dist(Unit::Bytes, Dist::Constant { value: 0.0 });
    s.response = dist(Unit::Bytes, Dist::Uniform { min: -100.0, max: 0.4 });
    s.rtt = dist(Unit::Ns, Dist::Constant { value: 0.0 });
    s.server_time = dist(Unit::Ns, Dist::Constant { value: 0.0 });
    for c in synthesize(&s, 3).expect("valid spec") {
        assert_eq!(c.min_rtt_us, Some(1), "a 0 RTT would read as none");
        assert!(
            c.adus.iter().filter(|a| a.bytes == 0).count() == 1,
            "only the FIN is empty"
        );
        assert!(c.adus.iter().all(|a| a.bytes >= 1 || a.send_wait_us == 1));
    }
}

#[test]
fn synthesized_vectors_are_written_and_read_back_in_both_formats() {
    let conns = synthesize(&spec(100), 9).expect("valid spec");
    let mut original = Vec::new();
    write_original(&mut original, &conns).expect("synthetic vectors are expressible");
    let mut alternate = Vec::new();
    write_alternate(&mut alternate, &conns).expect("writing to a Vec");
    for (bytes, format) in [(original, Format::Original), (alternate, Format::Alternate)] {
        let text = String::from_utf8(bytes).expect("UTF-8");
        let back = parse(&text, "synthetic.cvec", format, false).expect("parses");
        assert_eq!(back.connections, conns, "{format:?}");
    }
}

#[test]
fn epochs_are_capped() {
    let mut s = spec(2);
    s.epochs = dist(Unit::Count, Dist::Constant { value: 1e12 });
    s.request = dist(Unit::Bytes, Dist::Constant { value: 1.0 });
    s.response = dist(Unit::Bytes, Dist::Constant { value: 1.0 });
    let synth = Synthesizer::new(&s, 0).expect("valid spec");
    let first = synth.connections().next().expect("two connections");
    assert_eq!(first.epochs().len() as u64, MAX_EPOCHS);
}

#[test]
fn bad_specs_are_typed_errors() {
    let mut s = spec(1);
    s.request = dist(Unit::Ns, Dist::Constant { value: 1.0 });
    assert!(matches!(
        synthesize(&s, 0),
        Err(SynthError::Unit { name: "request", .. })
    ));
    let mut s = spec(1);
    s.arrival = dist(Unit::Ns, Dist::Exponential { mean: -1.0 });
    let err = synthesize(&s, 0).expect_err("negative mean");
    assert!(matches!(err, SynthError::Distribution { name: "arrival", .. }));
    assert!(err.to_string().starts_with("synthetic `arrival`: "), "{err}");
    let mut s = spec(1);
    s.window_bytes = 1 << 33;
    assert!(matches!(synthesize(&s, 0), Err(SynthError::Window(_))));
}
