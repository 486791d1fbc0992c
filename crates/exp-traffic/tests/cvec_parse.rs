//! Parser tests on hand-written files: every rule of both formats.

use std::path::PathBuf;

use exp_traffic::cvec::{parse, read_file, Adu, Connection, CvecError, Format, Mode, PerSide, Side};

fn data(name: &str) -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn adu(side: char, send_wait_us: u64, recv_wait_us: u64, bytes: u64) -> Adu {
    Adu {
        side: if side == 'I' { Side::Initiator } else { Side::Acceptor },
        send_wait_us,
        recv_wait_us,
        bytes,
    }
}

fn strict(text: &str) -> Vec<Connection> {
    parse(text, "t.cvec", Format::Auto, false)
        .expect("the text parses")
        .connections
}

fn syntax_error(text: &str) -> (usize, String) {
    match parse(text, "bad.cvec", Format::Auto, false) {
        Err(e @ CvecError::Syntax { .. }) => (e.line().expect("syntax errors have a line"), e.to_string()),
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

/// The three connections of the fixture pair, written out by hand from the
/// mapping rules (not from either parser).
fn expected_pair() -> Vec<Connection> {
    vec![
        Connection {
            mode: Mode::Sequential,
            start_us: 6851,
            mss: Some(PerSide {
                initiator: 1460,
                acceptor: 1448,
            }),
            window: Some(PerSide {
                initiator: 64800,
                acceptor: 6432,
            }),
            min_rtt_us: Some(1176),
            loss: Some(PerSide {
                initiator: 0.0,
                acceptor: 0.01,
            }),
            ids: ("21217".into(), "555".into()),
            adus: vec![
                adu('I', 0, 0, 297),    // first unit: no waits
                adu('A', 0, 12, 168),   // t between > and <: server time
                adu('I', 0, 3484, 246), // t between < and >: think time
                adu('I', 40, 0, 100),   // t between two >: send-wait
                adu('A', 0, 3, 199),
                adu('A', 1, 0, 50),  // t 0 = 1 us
                adu('A', 872, 0, 0), // trailing t: FIN of the last sender
            ],
        },
        Connection {
            mode: Mode::Concurrent,
            start_us: 1_429_381,
            mss: None,
            window: Some(PerSide {
                initiator: 65535,
                acceptor: 5840,
            }),
            min_rtt_us: Some(10137),
            loss: None,
            ids: ("5145".into(), "2000".into()),
            adus: vec![
                adu('A', 0, 0, 190),
                adu('I', 128, 0, 2090),
                adu('A', 1, 0, 7280),
                adu('I', 0, 0, 1000),
                adu('I', 26909, 0, 20),
                adu('I', 5, 0, 0), // FINs last, initiator's first
                adu('A', 77, 0, 0),
            ],
        },
        Connection {
            mode: Mode::Sequential,
            start_us: 9_000_000,
            mss: None,
            window: None,
            min_rtt_us: None,
            loss: None,
            ids: ("a".into(), "b".into()),
            adus: vec![adu('A', 0, 250, 220), adu('I', 0, 0, 35), adu('A', 0, 1, 1000)],
        },
    ]
}

#[test]
fn original_fixture_maps_onto_the_documented_units() {
    let parsed = read_file(&data("pair_original.cvec"), Format::Auto, false).expect("fixture parses");
    assert_eq!(parsed.format, Some(Format::Original));
    assert!(parsed.skipped.is_empty());
    assert_eq!(parsed.connections, expected_pair());
}

#[test]
fn alternate_fixture_parses_to_the_same_connections() {
    let alternate = read_file(&data("pair_alternate.cvec"), Format::Alternate, false).expect("fixture parses");
    assert_eq!(alternate.format, Some(Format::Alternate));
    let original = read_file(&data("pair_original.cvec"), Format::Original, false).expect("fixture parses");
    assert_eq!(alternate.connections, original.connections);
    assert_eq!(alternate.connections, expected_pair());
}

#[test]
fn comments_blank_lines_whitespace_and_crlf_are_ignored() {
    let text = "# header comment\r\n\r\n  SEQ   5\t1 x y  \r\n   # indented comment\r\n>\t10\r\n\r\nt   7\r\n< 20\r\n";
    assert_eq!(
        strict(text),
        vec![Connection {
            mode: Mode::Sequential,
            start_us: 5,
            mss: None,
            window: None,
            min_rtt_us: None,
            loss: None,
            ids: ("x".into(), "y".into()),
            adus: vec![adu('I', 0, 0, 10), adu('A', 0, 7, 20)],
        }]
    );
}

#[test]
fn option_lines_in_any_order() {
    let orders = [
        "m 1 2\nw 3 4\nr 5\nl 0.5 1\n",
        "l 0.5 1\nr 5\nw 3 4\nm 1 2\n",
        "w 3 4\nl 0.5 1\nm 1 2\nr 5\n",
    ];
    for options in orders {
        let conns = strict(&format!("SEQ 0 1 1 1\n{options}> 1\n"));
        let c = &conns[0];
        assert_eq!(
            c.mss,
            Some(PerSide {
                initiator: 1,
                acceptor: 2
            }),
            "{options}"
        );
        assert_eq!(
            c.window,
            Some(PerSide {
                initiator: 3,
                acceptor: 4
            })
        );
        assert_eq!(c.min_rtt_us, Some(5));
        assert_eq!(
            c.loss,
            Some(PerSide {
                initiator: 0.5,
                acceptor: 1.0
            })
        );
    }
}

#[test]
fn t_zero_is_one_microsecond_everywhere() {
    let seq = strict("SEQ 0 1 1 1\nt 0\n> 1\nt 0\n< 2\nt 0\n< 3\nt 0\n");
    assert_eq!(
        seq[0].adus,
        vec![
            adu('I', 0, 1, 1),
            adu('A', 0, 1, 2),
            adu('A', 1, 0, 3),
            adu('A', 1, 0, 0)
        ]
    );
    let conc = strict("CONC 0 1 1 1 1\nt> 0\nc> 1\nt< 0\nc< 2\nt< 0\n");
    assert_eq!(
        conc[0].adus,
        vec![adu('I', 1, 0, 1), adu('A', 1, 0, 2), adu('A', 1, 0, 0)]
    );
}

#[test]
fn concurrent_sides_are_independent() {
    // The initiator's t> applies to its next c>, however many acceptor lines
    // come in between.
    let conns = strict("CONC 0 2 2 1 1\nt> 50\nc< 1\nt< 9\nc< 2\nc> 3\nc> 4\n");
    assert_eq!(
        conns[0].adus,
        vec![
            adu('A', 0, 0, 1),
            adu('A', 9, 0, 2),
            adu('I', 50, 0, 3),
            adu('I', 0, 0, 4)
        ]
    );
}

#[test]
fn header_counts_are_never_checked() {
    let conns = strict("SEQ 0 999 1 1\n> 1\nCONC 0 0 0 2 2\nc> 5\nc< 6\n");
    assert_eq!(conns.len(), 2);
    let alt = strict("S 0 42 1 1\nI 0 0 1\nC 0 7 7 2 2\nA 0 0 1\n");
    assert_eq!(alt.len(), 2);
}

#[test]
fn alternate_fin_lines_and_empty_connections() {
    let conns = strict("S 10 1 1 1\nI 0 0 100\nA 0 20 200\nA 5 0 0\nI 0 0 0\nS 20 0 2 2\n");
    assert_eq!(
        conns[0].adus,
        vec![
            adu('I', 0, 0, 100),
            adu('A', 0, 20, 200),
            adu('A', 5, 0, 0),
            adu('I', 0, 0, 0)
        ]
    );
    assert!(conns[0].has_fin(Side::Initiator) && conns[0].has_fin(Side::Acceptor));
    assert!(
        conns[1].adus.is_empty(),
        "a header without a body is a connection without units"
    );
}

#[test]
fn connections_keep_file_order() {
    let conns = strict("SEQ 300 1 a a\n> 1\nSEQ 100 1 b b\n> 1\nSEQ 200 1 c c\n> 1\n");
    let starts: Vec<u64> = conns.iter().map(|c| c.start_us).collect();
    assert_eq!(starts, vec![300, 100, 200]);
}

#[test]
fn malformed_fixture_reports_file_line_text_and_expectation() {
    let path = data("malformed.cvec");
    let err = read_file(&path, Format::Auto, false).expect_err("line 10 is malformed");
    match &err {
        CvecError::Syntax {
            file,
            line,
            text,
            expected,
        } => {
            assert_eq!(file, &path.display().to_string());
            assert_eq!(*line, 10);
            assert_eq!(text, "< twenty");
            assert!(expected.contains("`< BYTES`"), "{expected}");
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
    assert!(err.to_string().starts_with(&format!("{}:10: expected", path.display())));
}

#[test]
fn every_kind_of_broken_line_is_an_error_on_its_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("> 10\n", 1, "connection header"),
        ("SEQ 0 1 1\n", 1, "`SEQ START NEPOCHS ID1 ID2`"),
        ("SEQ 0 1 1 1 1\n", 1, "`SEQ START NEPOCHS ID1 ID2`"),
        ("CONC 0 1 1 1\n", 1, "`CONC START NA NB ID1 ID2`"),
        ("SEQ -5 1 1 1\n", 1, "integers"),
        ("SEQ 0 x 1 1\n", 1, "integers"),
        ("SEQ 0 1 1 1\n> 10 20\n", 2, "`> BYTES`"),
        ("SEQ 0 1 1 1\n> -10\n", 2, "`> BYTES`"),
        ("SEQ 0 1 1 1\n> 0\n", 2, "a FIN is a trailing `t`"),
        ("SEQ 0 1 1 1\n> 1\nt 1.5\n", 3, "`t USEC`"),
        ("SEQ 0 1 1 1\n> 1\nt 1\nt 2\n< 1\n", 4, "two `t` lines in a row"),
        ("SEQ 0 1 1 1\nt 5\n", 2, "before a trailing `t`"),
        ("SEQ 0 1 1 1\nc> 5\n", 2, "a SEQ body line"),
        ("CONC 0 1 1 1 1\n> 5\n", 2, "a CONC body line"),
        (
            "CONC 0 1 1 1 1\nt< 1\nt< 2\n",
            3,
            "a second `t<` before that side's next `c<`",
        ),
        ("CONC 0 1 1 1 1\nc< 0\n", 2, "`c< BYTES`"),
        ("SEQ 0 1 1 1\nI 0 0 5\n", 2, "a SEQ body line"),
        ("SEQ 0 1 1 1\nw 1\n", 2, "`w WIN_I WIN_A`"),
        ("SEQ 0 1 1 1\nm 1 99999999999\n", 2, "`m MSS_I MSS_A`"),
        ("SEQ 0 1 1 1\nr 1 2\n", 2, "`r MIN_RTT_US`"),
        ("SEQ 0 1 1 1\nl 0.1 1.5\n", 2, "probabilities in [0, 1]"),
        ("SEQ 0 1 1 1\nl 0.1 NaN\n", 2, "probabilities in [0, 1]"),
        ("SEQ 0 1 1 1\nr 1\nr 2\n", 3, "at most one `r` line"),
        ("SEQ 0 1 1 1\n> 1\nw 1 2\n", 3, "belong before the body"),
        ("SEQ 0 1 1 1\n> 1\nS 0 1 2 2\n", 3, "original-format header"),
        ("S 0 1 1 1\nI 0 0 1\nSEQ 0 1 2 2\n", 3, "alternate-format header"),
        ("S 0 1 1 1\nI 0 0\n", 2, "`I SEND_WAIT RECV_WAIT BYTES`"),
        ("S 0 1 1 1\nA 0 x 3\n", 2, "`A SEND_WAIT RECV_WAIT BYTES`"),
        ("S 0 1 1 1\nX 0 0 3\n", 2, "data-unit line"),
        ("S 0 1 1 1\nI 0 0 0\nI 0 0 5\n", 3, "after that side's FIN"),
        ("C 0 1 1 1 1\n> 5\n", 2, "data-unit line"),
    ];
    for (text, line, needle) in cases {
        let (got_line, message) = syntax_error(text);
        assert_eq!(got_line, *line, "{text:?}: {message}");
        assert!(message.contains(needle), "{text:?}: `{message}` lacks `{needle}`");
        assert!(message.starts_with(&format!("bad.cvec:{line}: expected ")), "{message}");
    }
}

#[test]
fn explicit_format_refuses_the_other_one() {
    let err = parse("S 0 1 1 1\nI 0 0 1\n", "x", Format::Original, false).expect_err("alternate header");
    assert_eq!(err.line(), Some(1));
    let err = parse("SEQ 0 1 1 1\n> 1\n", "x", Format::Alternate, false).expect_err("original header");
    assert_eq!(err.line(), Some(1));
}

#[test]
fn lenient_skips_and_counts_bad_connections() {
    let path = data("lenient.cvec");
    let strict_err = read_file(&path, Format::Auto, false).expect_err("strict parse fails");
    assert_eq!(strict_err.line(), Some(1));

    let parsed = read_file(&path, Format::Auto, true).expect("lenient parse succeeds");
    let ids: Vec<&str> = parsed.connections.iter().map(|c| c.ids.0.as_str()).collect();
    assert_eq!(ids, vec!["1", "6"]);
    let lines: Vec<usize> = parsed.skipped.iter().map(|s| s.line).collect();
    assert_eq!(lines, vec![1, 5, 8, 9, 14]);
    assert!(
        parsed.skipped[2].reason.contains("at most one `w` line"),
        "{:?}",
        parsed.skipped[2]
    );
    assert!(
        parsed.skipped[4].reason.contains(":14: expected"),
        "{:?}",
        parsed.skipped[4]
    );
}

#[test]
fn lenient_skips_a_connection_whose_trailing_t_has_no_unit() {
    let parsed = parse("SEQ 0 1 1 1\nt 5\nSEQ 1 1 2 2\n> 1\n", "x", Format::Auto, true).expect("lenient");
    assert_eq!(parsed.connections.len(), 1);
    assert_eq!(parsed.skipped.len(), 1);
    assert_eq!(parsed.skipped[0].line, 2);
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let path = data("does-not-exist.cvec");
    match read_file(&path, Format::Auto, false) {
        Err(CvecError::Io { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn empty_and_comment_only_files_have_no_connections() {
    for text in ["", "# nothing\n\n   \n"] {
        let parsed = parse(text, "x", Format::Auto, false).expect("parses");
        assert!(parsed.connections.is_empty());
        assert_eq!(parsed.format, None);
    }
}
