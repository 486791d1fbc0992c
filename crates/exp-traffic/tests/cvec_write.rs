//! Writers, round trips and original → alternate conversion.

use std::path::PathBuf;

use exp_traffic::cvec::{
    parse, read_file, to_alternate, write_alternate, write_original, Adu, Connection, CvecError, Format, Mode, PerSide,
    Side,
};
use proptest::prelude::*;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(path).expect("fixture exists")
}

fn connections(text: &str) -> Vec<Connection> {
    parse(text, "t", Format::Auto, false).expect("parses").connections
}

fn original(conns: &[Connection]) -> Result<String, CvecError> {
    let mut out = Vec::new();
    write_original(&mut out, conns)?;
    Ok(String::from_utf8(out).expect("writers emit UTF-8"))
}

fn alternate(conns: &[Connection]) -> String {
    let mut out = Vec::new();
    write_alternate(&mut out, conns).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("writers emit UTF-8")
}

fn convert(text: &str) -> String {
    let mut out = Vec::new();
    to_alternate(text, "t", false, &mut out).expect("converts");
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn fixtures_round_trip_through_both_writers() {
    for name in ["pair_original.cvec", "pair_alternate.cvec"] {
        let conns = connections(&fixture(name));
        let as_original = original(&conns).expect("fixtures are expressible");
        assert_eq!(connections(&as_original), conns, "{name} via original");
        assert_eq!(connections(&alternate(&conns)), conns, "{name} via alternate");
    }
}

#[test]
fn converter_examples_convert_line_for_line() {
    // The two examples documented with the published converter.
    let seq = "SEQ 0 1 1 1\n> 826\nt 534\n< 1213\nt 872\n";
    assert_eq!(convert(seq), "S 0 1 1 1\nI 0 0 826\nA 0 534 1213\nA 872 0 0\n");
    let conc = "CONC 0 1 2 1 1\nc< 190\nt< 505\nc> 396\nc< 46\nt> 6250\n";
    assert_eq!(
        convert(conc),
        "C 0 1 2 1 1\nA 0 0 190\nI 0 0 396\nA 505 0 46\nI 6250 0 0\n"
    );
}

#[test]
fn conversion_turns_zero_waits_into_one_microsecond() {
    let text = "SEQ 0 1 1 1\n> 1\nt 0\n< 2\nt 0\n< 3\nt 0\n";
    assert_eq!(convert(text), "S 0 1 1 1\nI 0 0 1\nA 0 1 2\nA 1 0 3\nA 1 0 0\n");
    let conc = "CONC 0 1 0 1 1\nt> 0\nc> 4\nt> 0\n";
    assert_eq!(convert(conc), "C 0 1 0 1 1\nI 1 0 4\nI 1 0 0\n");
}

#[test]
fn conversion_of_the_fixture_matches_the_hand_written_alternate_file() {
    let converted = convert(&fixture("pair_original.cvec"));
    assert_eq!(connections(&converted), connections(&fixture("pair_alternate.cvec")));
    // Header counts are recomputed (the fixture's third header says 17 epochs).
    assert!(converted.contains("S 9000000 2 a b\n"), "{converted}");
    assert!(converted.contains("C 1429381 3 2 5145 2000\n"), "{converted}");
}

#[test]
fn conversion_refuses_alternate_input_and_can_be_lenient() {
    let mut out = Vec::new();
    let err = to_alternate("S 0 1 1 1\nI 0 0 1\n", "in.cvec", false, &mut out).expect_err("not original");
    assert_eq!(err.line(), Some(1));
    let mut out = Vec::new();
    let parsed =
        to_alternate("SEQ 0 1 1 1\n> x\nSEQ 5 1 2 2\n> 7\n", "in.cvec", true, &mut out).expect("lenient conversion");
    assert_eq!(parsed.skipped.len(), 1);
    assert_eq!(String::from_utf8(out).expect("UTF-8"), "S 5 1 2 2\nI 0 0 7\n");
}

#[test]
fn original_writer_emits_the_expected_text() {
    let conns = connections(&fixture("pair_alternate.cvec"));
    let text = original(&conns[..1]).expect("expressible");
    assert_eq!(
        text,
        "SEQ 6851 2 21217 555\nm 1460 1448\nw 64800 6432\nr 1176\nl 0 0.01\n\
         > 297\nt 12\n< 168\nt 3484\n> 246\nt 40\n> 100\nt 3\n< 199\nt 1\n< 50\nt 872\n"
    );
}

fn seq(adus: Vec<Adu>) -> Connection {
    Connection {
        mode: Mode::Sequential,
        start_us: 0,
        mss: None,
        window: None,
        min_rtt_us: None,
        loss: None,
        ids: ("1".into(), "2".into()),
        adus,
    }
}

fn adu(side: Side, send_wait_us: u64, recv_wait_us: u64, bytes: u64) -> Adu {
    Adu {
        side,
        send_wait_us,
        recv_wait_us,
        bytes,
    }
}

#[test]
fn original_writer_refuses_what_it_cannot_express() {
    use Side::{Acceptor as A, Initiator as I};
    let conc = |adus| Connection {
        mode: Mode::Concurrent,
        ..seq(adus)
    };
    let cases: Vec<(Connection, &str)> = vec![
        (
            seq(vec![adu(I, 0, 0, 1), adu(A, 3, 0, 2)]),
            "send_wait after a unit of the other side",
        ),
        (
            seq(vec![adu(I, 0, 0, 1), adu(I, 0, 4, 2)]),
            "recv_wait after a unit of the same side",
        ),
        (seq(vec![adu(I, 5, 0, 1)]), "send_wait after a unit of the other side"),
        (
            seq(vec![adu(I, 0, 0, 1), adu(I, 1, 0, 0), adu(A, 0, 0, 1)]),
            "must be the last unit",
        ),
        (
            seq(vec![adu(I, 0, 0, 1), adu(A, 1, 0, 0)]),
            "side that sent the unit before it",
        ),
        (seq(vec![adu(I, 0, 0, 1), adu(I, 0, 0, 0)]), "send_wait ≥ 1"),
        (conc(vec![adu(I, 0, 2, 1)]), "recv_wait in a concurrent connection"),
        (conc(vec![adu(A, 1, 0, 0), adu(I, 1, 0, 0)]), "the initiator's first"),
        (conc(vec![adu(I, 1, 0, 0), adu(A, 0, 0, 5)]), "data after a FIN"),
        (conc(vec![adu(A, 0, 0, 0)]), "send_wait ≥ 1"),
    ];
    for (conn, needle) in cases {
        match original(std::slice::from_ref(&conn)) {
            Err(CvecError::NotExpressible { ids, reason }) => {
                assert_eq!(ids, "1 2");
                let reason = reason.to_string();
                assert!(reason.contains(needle), "{:?}: `{reason}` lacks `{needle}`", conn.adus);
            }
            other => panic!("{:?}: expected NotExpressible, got {other:?}", conn.adus),
        }
        // The alternate format expresses it all.
        assert_eq!(connections(&alternate(std::slice::from_ref(&conn))), vec![conn]);
    }
}

#[test]
fn read_file_of_written_output_round_trips() {
    let conns = connections(&fixture("pair_original.cvec"));
    let dir = std::env::temp_dir().join(format!("exp-traffic-cvec-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("out.cvec");
    std::fs::write(&path, alternate(&conns)).expect("write temp file");
    let back = read_file(&path, Format::Alternate, false).expect("reads back");
    std::fs::remove_dir_all(&dir).expect("clean up");
    assert_eq!(back.connections, conns);
}

// ---- properties ------------------------------------------------------------

fn side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::Initiator), Just(Side::Acceptor)]
}

/// `m`, `w`, `r`, `l` values.
type Options = (
    Option<PerSide<u32>>,
    Option<PerSide<u32>>,
    Option<u64>,
    Option<PerSide<f64>>,
);

fn options() -> impl Strategy<Value = Options> {
    let pair = || (any::<u32>(), any::<u32>()).prop_map(|(initiator, acceptor)| PerSide { initiator, acceptor });
    let prob = || (0.0f64..=1.0, 0.0f64..=1.0).prop_map(|(initiator, acceptor)| PerSide { initiator, acceptor });
    (
        proptest::option::of(pair()),
        proptest::option::of(pair()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(prob()),
    )
}

/// Any connection the model can hold (the alternate format's view).
fn any_connection() -> impl Strategy<Value = Connection> {
    let unit = (side(), 0u64..1_000_000, 0u64..1_000_000, 1u64..10_000_000).prop_map(
        |(side, send_wait_us, recv_wait_us, bytes)| Adu {
            side,
            send_wait_us,
            recv_wait_us,
            bytes,
        },
    );
    let mode = prop_oneof![Just(Mode::Sequential), Just(Mode::Concurrent)];
    (
        mode,
        any::<u64>(),
        options(),
        proptest::collection::vec(unit, 0..12),
        proptest::option::of(0u64..100),
        proptest::option::of(0u64..100),
    )
        .prop_map(
            |(mode, start_us, (mss, window, min_rtt_us, loss), mut adus, fin_i, fin_a)| {
                for (side, wait) in [(Side::Initiator, fin_i), (Side::Acceptor, fin_a)] {
                    if let Some(w) = wait {
                        adus.push(Adu {
                            side,
                            send_wait_us: w,
                            recv_wait_us: 0,
                            bytes: 0,
                        });
                    }
                }
                Connection {
                    mode,
                    start_us,
                    mss,
                    window,
                    min_rtt_us,
                    loss,
                    ids: ("7".into(), "x9".into()),
                    adus,
                }
            },
        )
}

/// Connections the original format expresses, built by its rules.
fn expressible_connection() -> impl Strategy<Value = Connection> {
    (any_connection(), any::<bool>()).prop_map(|(mut conn, fin)| {
        conn.adus.retain(|a| a.bytes > 0);
        let mut last: Option<Side> = None;
        for a in &mut conn.adus {
            match conn.mode {
                Mode::Concurrent => a.recv_wait_us = 0,
                Mode::Sequential if last == Some(a.side) => a.recv_wait_us = 0,
                Mode::Sequential => a.send_wait_us = 0,
            }
            last = Some(a.side);
        }
        if fin {
            match (conn.mode, last) {
                (Mode::Sequential, Some(side)) => conn.adus.push(adu(side, 3, 0, 0)),
                (Mode::Sequential, None) => {}
                (Mode::Concurrent, _) => {
                    conn.adus.push(adu(Side::Initiator, 2, 0, 0));
                    conn.adus.push(adu(Side::Acceptor, 1, 0, 0));
                }
            }
        }
        conn
    })
}

proptest! {
    #[test]
    fn alternate_round_trip_is_exact(conns in proptest::collection::vec(any_connection(), 0..4)) {
        prop_assert_eq!(connections(&alternate(&conns)), conns);
    }

    #[test]
    fn original_round_trip_is_exact_when_writable(conns in proptest::collection::vec(any_connection(), 0..4)) {
        if let Ok(text) = original(&conns) {
            prop_assert_eq!(connections(&text), conns);
        }
    }

    #[test]
    fn expressible_connections_round_trip_through_original(conns in proptest::collection::vec(expressible_connection(), 0..4)) {
        let text = original(&conns).expect("built by the original format's rules");
        prop_assert_eq!(connections(&text), conns.clone());
        // Converting that original text gives the same connections again.
        prop_assert_eq!(connections(&convert(&text)), conns);
    }
}

#[test]
fn convert_applies_a_structure_and_keeps_the_format_by_default() {
    use exp_traffic::cvec::{convert, Structure};
    let text = "SEQ 100 2 1 1\nw 10 20\n> 5\nt 9\n< 7\nt 40\n> 3\nt 2\n< 1\nt 6\n";
    let mut out = Vec::new();
    let parsed = convert(
        text,
        "in.cvec",
        Format::Auto,
        Structure::BlkSeq,
        Format::Auto,
        false,
        &mut out,
    )
    .expect("converts");
    assert_eq!(parsed.connections.len(), 1);
    assert_eq!(
        String::from_utf8(out).expect("UTF-8"),
        "SEQ 100 1 1 1\nw 10 20\n> 8\n< 8\nt 1\n"
    );
    let mut out = Vec::new();
    convert(
        text,
        "in.cvec",
        Format::Auto,
        Structure::Ab,
        Format::Alternate,
        false,
        &mut out,
    )
    .expect("converts");
    assert_eq!(
        String::from_utf8(out).expect("UTF-8"),
        "S 100 2 1 1\nw 10 20\nI 0 0 5\nA 0 0 7\nI 0 0 3\nA 0 0 1\nA 1 0 0\n"
    );
}
