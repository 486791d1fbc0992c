//! Issue 14: sizes summing past 2^64 − 1 saturated silently, and reading
//! `/dev/zero` as a trace took 2.1 GB before failing.

use exp_traffic::cvec::{parse, read_file, read_text, CvecError, Format};

#[test]
fn sizes_and_times_summing_past_u64_are_errors() {
    let max = u64::MAX;
    let bytes = format!("S 0 1 a b\nI 0 0 {max}\nA 0 0 5\nI 0 0 1\n");
    let error = parse(&bytes, "sum.cvec", Format::Auto, false).expect_err("the sizes overflow");
    assert!(matches!(error, CvecError::Syntax { line: 1, .. }), "{error}");
    assert!(error.to_string().contains("the sizes overflow"), "{error}");
    let times = format!("S {max} 1 a b\nI 1 0 10\n");
    let error = parse(&times, "time.cvec", Format::Auto, false).expect_err("the times overflow");
    assert!(error.to_string().contains("2^64 − 1 µs"), "{error}");
    // Lenient: the connection is skipped and counted, the next one kept.
    let both = format!("{bytes}S 0 1 c d\nI 0 0 7\n");
    let parsed = parse(&both, "sum.cvec", Format::Auto, true).expect("lenient parse");
    assert_eq!(parsed.connections.len(), 1);
    assert_eq!(parsed.skipped.len(), 1);
    // Right at the limit is fine.
    let edge = format!("S 0 1 a b\nI 0 0 {}\nI 0 0 1\n", max - 1);
    assert_eq!(
        parse(&edge, "edge.cvec", Format::Auto, false)
            .expect("fits")
            .connections
            .len(),
        1
    );
}

#[test]
fn only_regular_files_are_read() {
    for path in ["/dev/zero", "/tmp"] {
        let error = read_text(std::path::Path::new(path)).expect_err("refused");
        assert!(error.to_string().contains("not a regular file"), "{error}");
        assert!(read_file(std::path::Path::new(path), Format::Auto, false).is_err());
    }
}
