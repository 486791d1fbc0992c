//! What the snapshots cannot show: the exact AST (number or quantity, spans,
//! flags) and the diagnostics as values.

mod common;

use exp_diagnostics::{Code, FileId};
use exp_syntax::ast::*;

fn value_of(source: &str) -> Expr {
    let module = common::parse_clean(source);
    match module.items.as_slice() {
        [Item::Let(l)] => l.value.clone(),
        items => panic!("expected one let, got {items:?}"),
    }
}

#[test]
fn numbers_and_quantities_keep_their_text() {
    let number = |s: &str| ExprKind::Number(s.into());
    let quantity = |n: &str, u: &str| ExprKind::Quantity {
        number: n.into(),
        unit: u.into(),
    };
    let cases = [
        ("1_000", number("1_000")),
        ("1e6", number("1e6")),
        ("-2.5E-3", number("-2.5E-3")),
        ("200ms", quantity("200", "ms")),
        ("-1.5s", quantity("-1.5", "s")),
        ("2KiB", quantity("2", "KiB")),
        ("1Gbit/s", quantity("1", "Gbit/s")),
        ("5/s", quantity("5", "/s")),
        ("80%", quantity("80", "%")),
        ("3µs", quantity("3", "µs")),
        ("1e3ms", quantity("1e3", "ms")),
    ];
    for (text, kind) in cases {
        assert_eq!(value_of(&format!("let x = {text}")).kind, kind, "{text}");
    }
}

#[test]
fn strings_are_decoded() {
    let expr = value_of(r#"let x = "a\"b\\c\n\t\u{e9}""#);
    assert_eq!(expr.kind, ExprKind::Str("a\"b\\c\n\t\u{e9}".into()));
    for value in ["", "plain", "quote \" and \\", "line\nbreak", "\u{1}\u{7f}", "é ✓ 😀"] {
        let source = format!("let x = \"{}\"", exp_syntax::escape(value));
        assert_eq!(value_of(&source).kind, ExprKind::Str(value.into()), "{source}");
    }
}

#[test]
fn paths_are_split_into_segments_with_their_own_spans() {
    let source = "let x = iot.s1";
    let ExprKind::Path(path) = value_of(source).kind else {
        panic!("not a path");
    };
    let segments: Vec<&str> = path.segments.iter().map(|s| &source[s.span.range()]).collect();
    assert_eq!(segments, ["iot", "s1"]);
    assert_eq!(path.dotted(), "iot.s1");
}

#[test]
fn spans_stop_before_trailing_comments() {
    // `for = 60s` used to span the padding and the comment after it.
    let source = "anomaly \"c\" {\n  for = 60s                // also: until = 90s\n}\n";
    let module = common::parse_clean(source);
    let Item::Block(block) = &module.items[0] else {
        panic!("not a block");
    };
    assert_eq!(&source[block.members[0].span().range()], "for = 60s");
    assert_eq!(&source[block.span.range()], source.trim_end());
    assert_eq!(module.comments.len(), 1);
    assert_eq!(module.comments[0].text, "// also: until = 90s");
    assert!(exp_syntax::format(&module, source).contains("  for = 60s // also: until = 90s\n"));
}

#[test]
fn import_alias_and_label_are_kept() {
    let module = common::parse_clean("import \"./common.exp\" as common\nfleet \"plant\" {}\n");
    let [Item::Import(import), Item::Block(block)] = module.items.as_slice() else {
        panic!("unexpected items: {:?}", module.items);
    };
    assert_eq!(import.path.value, "./common.exp");
    assert_eq!(import.alias.as_ref().map(|a| a.name.as_str()), Some("common"));
    assert_eq!(block.kind.name, "fleet");
    assert_eq!(block.label.as_ref().map(|l| l.value.as_str()), Some("plant"));
    assert!(!block.recovered);
}

#[test]
fn empty_and_blank_files() {
    let cases = [
        ("", ""),
        ("\n\n", ""),
        ("  \t\r\n", ""),
        ("\n// only a comment", "// only a comment\n"),
    ];
    for (source, formatted) in cases {
        let module = common::parse_clean(source);
        assert!(module.items.is_empty(), "{source:?}");
        assert_eq!(exp_syntax::format(&module, source), formatted, "{source:?}");
    }
}

const BROKEN: &str =
    "let a = [1, 2\nexperiment \"x\" {\n  devices 10\n  gap = 10 ms\n  ok = 1\n  fleet \"f\" { x = }\n}\nlet b = 3\n";

#[test]
fn recovery_reports_every_error_and_keeps_the_rest() {
    let (module, diagnostics) = exp_syntax::parse(FileId(0), BROKEN);
    let found: Vec<(usize, &str)> = diagnostics
        .iter()
        .map(|d| {
            (
                d.primary_span().expect("primary label").start as usize,
                d.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (13, "expected `,` or `]`, found `experiment`"),
            (41, "expected `=`, a string or `{`, found `10`"),
            (55, "expected the end of the statement, found `ms`"),
            (85, "expected a value, found `}`"),
        ]
    );
    assert!(diagnostics.iter().all(|d| d.code == Code::E0101 && d.is_error()));
    assert_eq!(
        diagnostics[2].help.as_deref(),
        Some("write the unit directly after the number: `10ms`")
    );

    let [Item::Block(experiment), Item::Let(b)] = module.items.as_slice() else {
        panic!("unexpected items: {:?}", module.items);
    };
    assert_eq!(b.name.name, "b");
    assert!(experiment.recovered, "members were dropped");
    let [Member::Attribute(ok), Member::Block(fleet)] = experiment.members.as_slice() else {
        panic!("unexpected members: {:?}", experiment.members);
    };
    assert_eq!(ok.key.name, "ok");
    assert!(fleet.recovered);
}

#[test]
fn diagnostics_are_sorted_and_not_repeated() {
    let source = "b = }\nlet = 1\nexperiment {\n  x = [\n  /* open\n";
    let (_, diagnostics) = exp_syntax::parse(FileId(0), source);
    let starts: Vec<u32> = diagnostics
        .iter()
        .filter_map(|d| d.primary_span())
        .map(|s| s.start)
        .collect();
    assert!(starts.len() >= 3, "{diagnostics:#?}");
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    let comment_errors = diagnostics
        .iter()
        .filter(|d| d.message == "unterminated comment")
        .count();
    assert_eq!(comment_errors, 1, "{diagnostics:#?}");
}

#[test]
fn windows_line_endings() {
    let source = "// header\r\nexperiment \"x\" {\r\n  a = 1 // one\r\n\r\n  b = [1,\r\n    2]\r\n}\r\n";
    let module = common::parse_clean(source);
    common::assert_spans_are_tight(&module, source);
    let formatted = exp_syntax::format(&module, source);
    assert_eq!(
        formatted,
        "// header\nexperiment \"x\" {\n  a = 1 // one\n\n  b = [1, 2]\n}\n"
    );
    common::assert_format_round_trip(source, &formatted);
}

/// Issue 14: nesting 4,000–10,000 deep overflowed the stack. Every shape
/// (lists, records, calls, blocks) is reported once as E0106 at the first
/// bracket past the limit, whatever the depth, and formatting what parsed
/// stays shallow.
#[test]
fn nesting_past_the_limit_is_one_error_at_any_depth() {
    use exp_diagnostics::limits::MAX_NESTING;
    for depth in [MAX_NESTING + 1, 4_000, 100_000] {
        let shapes = [
            format!("let x = {}{}", "[".repeat(depth), "]".repeat(depth)),
            format!("let x = {}1{}", "{a = ".repeat(depth), "}".repeat(depth)),
            format!("let x = {}1{}", "constant(".repeat(depth), ")".repeat(depth)),
            format!(
                "experiment \"x\" {{ {}\n}}\n",
                "b { ".repeat(depth) + &"} ".repeat(depth)
            ),
            // Unclosed: the brackets still count.
            format!("let x = {}", "[".repeat(depth)),
        ];
        for source in shapes {
            let (module, diagnostics) = exp_syntax::parse(FileId(0), &source);
            let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
            assert!(codes.contains(&Code::E0106), "depth {depth}: {codes:?}");
            assert_eq!(codes.iter().filter(|c| **c == Code::E0106).count(), 1, "depth {depth}");
            let level = MAX_NESTING + 1;
            let at = diagnostics[0].primary_span().expect("a span").start as usize;
            let opened = source[..at].matches(['[', '{', '(']).count();
            assert_eq!(
                opened + 1,
                level,
                "depth {depth}: E0106 at the bracket of level {level}"
            );
            let _ = exp_syntax::format(&module, &source);
        }
    }
    // The limit itself is fine.
    let source = format!("let x = {}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
    assert!(exp_syntax::parse(FileId(0), &source).1.is_empty());
}

/// A deep statement is skipped alone: the statements around it parse.
#[test]
fn a_deep_statement_is_skipped_alone() {
    let source = format!(
        "let a = 1\nlet x = {}\nexperiment \"e\" {{\n  y = {}\n  duration = 1s\n}}\n",
        "[".repeat(50) + &"]".repeat(50),
        "(".repeat(50) + &")".repeat(50)
    );
    let (module, diagnostics) = exp_syntax::parse(FileId(0), &source);
    let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::E0106, Code::E0106]);
    assert!(matches!(&module.items[0], Item::Let(l) if l.name.name == "a"));
    let Some(Item::Block(experiment)) = module.items.last() else {
        panic!("the experiment is kept: {:?}", module.items);
    };
    assert!(experiment
        .members
        .iter()
        .any(|m| matches!(m, Member::Attribute(a) if a.key.name == "duration")));
}

/// Issue 14: 10 MB of random text gave 144,971 diagnostics. The parser stops
/// after `MAX_DIAGNOSTICS` syntax errors and says where (E0107).
#[test]
fn the_parser_stops_after_too_many_errors() {
    use exp_diagnostics::limits::MAX_DIAGNOSTICS;
    let source = "@ 1\n".repeat(10_000);
    let (_, diagnostics) = exp_syntax::parse(FileId(0), &source);
    assert_eq!(diagnostics.len(), MAX_DIAGNOSTICS + 1);
    let last = diagnostics.last().expect("diagnostics");
    assert_eq!(last.code, Code::E0107);
    assert_eq!(last.primary_span().expect("a span").start as usize, 4 * MAX_DIAGNOSTICS);
}
