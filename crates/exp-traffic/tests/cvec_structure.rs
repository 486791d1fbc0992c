//! Structure models and the analysis helpers.

use std::path::PathBuf;

use exp_traffic::cvec::{
    mean_rtt_us, parse, read_file, rtt_path_quantiles_us, rtt_quantile_us, write_original, Adu, Connection, Epoch,
    Format, Mode, PerSide, Side, Structure,
};
use proptest::prelude::*;

fn pair() -> Vec<Connection> {
    let path = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("tests/data/pair_original.cvec");
    read_file(&path, Format::Auto, false)
        .expect("fixture parses")
        .connections
}

fn adu(side: Side, send_wait_us: u64, recv_wait_us: u64, bytes: u64) -> Adu {
    Adu {
        side,
        send_wait_us,
        recv_wait_us,
        bytes,
    }
}

use Side::{Acceptor as A, Initiator as I};

#[test]
fn names_parse_and_print() {
    for s in Structure::ALL {
        assert_eq!(s.name().parse::<Structure>(), Ok(s));
        assert_eq!(s.to_string(), s.name());
    }
    assert_eq!("blk_seq".parse(), Ok(Structure::BlkSeq));
    let err = "blkseq".parse::<Structure>().expect_err("unknown");
    assert!(err.to_string().contains("atbt, ab, blk_seq, blk_conc"));
}

#[test]
fn atbt_is_the_connection_itself() {
    for c in pair() {
        assert_eq!(Structure::Atbt.apply(&c), c);
    }
}

#[test]
fn ab_drops_every_time_but_keeps_units_and_fin() {
    let c = &pair()[0];
    let ab = Structure::Ab.apply(c);
    assert_eq!(ab.mode, Mode::Sequential);
    assert_eq!(
        ab.adus,
        vec![
            adu(I, 0, 0, 297),
            adu(A, 0, 0, 168),
            adu(I, 0, 0, 246),
            adu(I, 0, 0, 100),
            adu(A, 0, 0, 199),
            adu(A, 0, 0, 50),
            adu(A, 1, 0, 0), // the trailing `t 872` survives as `t 0`
        ]
    );
    assert_eq!(ab.epochs().len(), c.epochs().len());
}

#[test]
fn blk_seq_is_one_exchange() {
    let c = &pair()[0];
    let blk = Structure::BlkSeq.apply(c);
    assert_eq!(blk.mode, Mode::Sequential);
    assert_eq!(blk.adus, vec![adu(I, 0, 0, 643), adu(A, 0, 0, 417), adu(A, 1, 0, 0)]);
    // The concurrent connection becomes sequential too, FIN from the acceptor.
    let conc = Structure::BlkSeq.apply(&pair()[1]);
    assert_eq!(conc.mode, Mode::Sequential);
    assert_eq!(conc.adus, vec![adu(I, 0, 0, 3110), adu(A, 0, 0, 7470), adu(A, 1, 0, 0)]);
    // No FIN in, no FIN out.
    let open = Structure::BlkSeq.apply(&pair()[2]);
    assert_eq!(open.adus, vec![adu(I, 0, 0, 35), adu(A, 0, 0, 1220)]);
}

#[test]
fn blk_conc_sends_both_totals_at_once() {
    let blk = Structure::BlkConc.apply(&pair()[1]);
    assert_eq!(blk.mode, Mode::Concurrent);
    assert_eq!(
        blk.adus,
        vec![adu(I, 0, 0, 3110), adu(A, 0, 0, 7470), adu(I, 1, 0, 0), adu(A, 1, 0, 0)]
    );
    let seq = Structure::BlkConc.apply(&pair()[0]);
    assert_eq!(seq.adus, vec![adu(I, 0, 0, 643), adu(A, 0, 0, 417), adu(A, 1, 0, 0)]);
}

#[test]
fn a_side_without_bytes_sends_no_block() {
    let c = Connection {
        mode: Mode::Sequential,
        start_us: 3,
        mss: None,
        window: None,
        min_rtt_us: None,
        loss: None,
        ids: ("1".into(), "1".into()),
        adus: vec![adu(A, 0, 0, 10), adu(A, 4, 0, 20)],
    };
    assert_eq!(Structure::BlkSeq.apply(&c).adus, vec![adu(A, 0, 0, 30)]);
    assert_eq!(Structure::BlkConc.apply(&c).adus, vec![adu(A, 0, 0, 30)]);
}

/// Byte counts past 2^64 − 1 are refused when a file is read (see
/// cvec_limits.rs); a connection built in code with them still converts
/// without panicking, saturated.
#[test]
fn absurd_byte_counts_are_refused_from_files_and_saturate_in_code() {
    let text = format!("S 0 1 1 1\nI 0 0 {m}\nI 0 0 {m}\nA 0 0 1\n", m = u64::MAX);
    assert!(parse(&text, "big", Format::Auto, false).is_err());
    let c = Connection::new(
        0,
        Mode::Sequential,
        vec![adu(I, 0, 0, u64::MAX), adu(I, 0, 0, u64::MAX), adu(A, 0, 0, 1)],
    );
    assert_eq!(Structure::BlkConc.apply(&c).adus[0].bytes, u64::MAX);
    assert_eq!(c.total_bytes(), u64::MAX);
    assert_eq!(c.epochs()[0].request_bytes, u64::MAX);
}

#[test]
fn every_model_of_the_fixtures_stays_writable_in_the_original_format() {
    for s in Structure::ALL {
        let derived: Vec<Connection> = pair().iter().map(|c| s.apply(c)).collect();
        let mut out = Vec::new();
        write_original(&mut out, &derived).unwrap_or_else(|e| panic!("{s}: {e}"));
        let text = String::from_utf8(out).expect("UTF-8");
        let back = parse(&text, "t", Format::Original, false).expect("parses back");
        assert_eq!(back.connections, derived, "{s}");
    }
}

#[test]
fn epochs_group_requests_and_responses() {
    let c = &pair()[0];
    assert_eq!(
        c.epochs(),
        vec![
            Epoch {
                request_bytes: 297,
                response_bytes: 168,
                server_time_us: 12,
                think_time_us: 0
            },
            Epoch {
                request_bytes: 346,
                response_bytes: 249,
                server_time_us: 3,
                think_time_us: 3484
            },
        ]
    );
    // The acceptor speaking first opens an epoch without a request.
    let e = pair()[2].epochs();
    assert_eq!(e.len(), 2);
    assert_eq!(
        e[0],
        Epoch {
            request_bytes: 0,
            response_bytes: 220,
            server_time_us: 250,
            think_time_us: 0
        }
    );
    assert_eq!(e[1].request_bytes, 35);
    assert_eq!(e[1].response_bytes, 1000);
}

#[test]
fn per_side_totals_and_fins() {
    let c = &pair()[1];
    assert_eq!(c.bytes(I), 3110);
    assert_eq!(c.bytes(A), 7470);
    assert_eq!(c.total_bytes(), 10580);
    assert_eq!(c.data_units(I), 3);
    assert_eq!(c.data_units(A), 2);
    assert!(c.has_fin(I) && c.has_fin(A));
    assert!(!pair()[2].has_fin(I));
}

#[test]
fn rtt_mean_and_quantiles() {
    let conns = pair(); // r 1176, r 10137, no r
    assert_eq!(mean_rtt_us(&conns), Some((1176.0 + 10137.0) / 2.0));
    assert_eq!(rtt_quantile_us(&conns, 0.0), Some(1176.0));
    assert_eq!(rtt_quantile_us(&conns, 1.0), Some(10137.0));
    assert_eq!(rtt_quantile_us(&conns, 0.5), Some((1176.0 + 10137.0) / 2.0));
    assert_eq!(rtt_quantile_us(&conns, 1.5), None);
    assert_eq!(mean_rtt_us(&conns[2..]), None);
    let many: Vec<Connection> = (1..=5u64)
        .map(|r| Connection {
            min_rtt_us: Some(r * 10),
            ..conns[2].clone()
        })
        .collect();
    // Type 7 at q = 0.1, 0.3, 0.5, 0.7, 0.9 over 10..50.
    let paths = rtt_path_quantiles_us(&many, 5);
    assert_eq!(paths.len(), 5);
    for (got, want) in paths.iter().zip([14.0, 22.0, 30.0, 38.0, 46.0]) {
        assert!((got - want).abs() < 1e-9, "{paths:?}");
    }
}

// ---- properties ------------------------------------------------------------

fn any_connection() -> impl Strategy<Value = Connection> {
    let side = prop_oneof![Just(I), Just(A)];
    let unit = (side, 0u64..1_000_000, 0u64..1_000_000, 0u64..5_000_000).prop_map(
        |(side, send_wait_us, recv_wait_us, bytes)| Adu {
            side,
            send_wait_us,
            recv_wait_us,
            bytes,
        },
    );
    let mode = prop_oneof![Just(Mode::Sequential), Just(Mode::Concurrent)];
    let pair = (any::<u32>(), any::<u32>()).prop_map(|(initiator, acceptor)| PerSide { initiator, acceptor });
    let loss = (0.0f64..=1.0, 0.0f64..=1.0).prop_map(|(initiator, acceptor)| PerSide { initiator, acceptor });
    (
        mode,
        any::<u64>(),
        proptest::option::of(pair.clone()),
        proptest::option::of(pair),
        proptest::option::of(any::<u64>()),
        proptest::option::of(loss),
        proptest::collection::vec(unit, 0..20),
    )
        .prop_map(|(mode, start_us, mss, window, min_rtt_us, loss, adus)| Connection {
            mode,
            start_us,
            mss,
            window,
            min_rtt_us,
            loss,
            ids: ("1".into(), "2".into()),
            adus,
        })
}

proptest! {
    #[test]
    fn every_model_keeps_bytes_start_and_path_parameters(c in any_connection()) {
        for s in Structure::ALL {
            let d = s.apply(&c);
            prop_assert_eq!(d.bytes(I), c.bytes(I), "{} initiator bytes", s);
            prop_assert_eq!(d.bytes(A), c.bytes(A), "{} acceptor bytes", s);
            prop_assert_eq!(d.start_us, c.start_us);
            prop_assert_eq!(d.mss, c.mss);
            prop_assert_eq!(d.window, c.window);
            prop_assert_eq!(d.min_rtt_us, c.min_rtt_us);
            prop_assert_eq!(d.loss, c.loss);
            prop_assert_eq!(&d.ids, &c.ids);
            // A close survives exactly when there was one.
            let closes = |x: &Connection| x.has_fin(I) || x.has_fin(A);
            prop_assert_eq!(closes(&d), closes(&c), "{} FIN", s);
            // Applying a model twice changes nothing more.
            prop_assert_eq!(s.apply(&d), d.clone(), "{} idempotent", s);
        }
    }
}
