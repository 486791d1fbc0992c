//! Property tests: random valid sources (with comments and blank lines) parse
//! cleanly and survive formatting; no input at all makes the parser panic.

mod common;

use exp_diagnostics::FileId;
use proptest::prelude::*;
use proptest::test_runner::Config;

// ---- generators of valid source text ----------------------------------------

const KEYWORDS: [&str; 5] = ["import", "let", "as", "true", "false"];

fn name() -> impl Strategy<Value = String> {
    // `step` is left out: after a range, a block named `step` on the next
    // line would be read as the range's step (see the crate's report).
    "[a-z_][a-z0-9_]{0,6}".prop_filter("keyword", |n| !KEYWORDS.contains(&n.as_str()) && n != "step")
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(name(), 1..4).prop_map(|segments| segments.join("."))
}

fn number() -> impl Strategy<Value = String> {
    (
        prop::bool::weighted(0.2),
        prop_oneof!["[0-9]{1,4}", "[1-9]{1,3}(_[0-9]{3}){1,2}"],
        prop::option::of("\\.[0-9]{1,3}"),
        prop::option::of("[eE][+-]?[0-9]{1,2}"),
    )
        .prop_map(|(minus, int, fraction, exponent)| {
            let sign = if minus { "-" } else { "" };
            format!(
                "{sign}{int}{}{}",
                fraction.unwrap_or_default(),
                exponent.unwrap_or_default()
            )
        })
}

fn quantity() -> impl Strategy<Value = String> {
    const UNITS: [&str; 12] = [
        "ms", "s", "µs", "min", "KiB", "MB", "Gbit/s", "Mbps", "/s", "/min", "%", "parsecs",
    ];
    (number(), prop::sample::select(&UNITS[..])).prop_map(|(n, u)| format!("{n}{u}"))
}

/// String literal source text, with escapes.
fn string() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-zA-Z0-9 ./:_é✓-]{1,6}",
        // Long enough that lists and calls get broken over lines.
        1 => "[a-z ]{20,50}",
        1 => prop::sample::select(&["\\\"", "\\\\", "\\n", "\\t", "\\r", "\\u{e9}", "\\u{1F600}", "//", "/*", "*/"][..])
            .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..4).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
}

/// Comment text without the markers: never closes a block comment early.
fn comment_text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ,.:=(){}\\[\\]\"'*/-]{0,20}".prop_map(|t| t.replace("*/", "* /"))
}

fn line_comment() -> impl Strategy<Value = String> {
    comment_text().prop_map(|t| format!("//{t}"))
}

fn block_comment() -> impl Strategy<Value = String> {
    (comment_text(), prop::bool::weighted(0.3)).prop_map(|(t, multi_line)| {
        let t = t.trim_end_matches('/');
        if multi_line {
            format!("/* {t}\n   more {t} */")
        } else {
            format!("/*{t}*/")
        }
    })
}

/// Whitespace between two tokens inside brackets: may hold comments and
/// line breaks.
fn gap() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just(" ".to_owned()),
        2 => Just("\n    ".to_owned()),
        1 => line_comment().prop_map(|c| format!(" {c}\n    ")),
        1 => block_comment().prop_map(|c| format!(" {c} ")),
    ]
}

fn primary_leaf() -> BoxedStrategy<String> {
    prop_oneof![
        number(),
        quantity(),
        string(),
        prop::bool::ANY.prop_map(|b| b.to_string()),
        path(),
    ]
    .boxed()
}

fn expr() -> BoxedStrategy<String> {
    let primary = primary_leaf().prop_recursive(3, 24, 4, |inner| {
        let arg = (prop::option::of(name()), inner.clone()).prop_map(|(n, v)| match n {
            Some(n) => format!("{n} = {v}"),
            None => v,
        });
        let field = (name(), inner.clone()).prop_map(|(n, v)| format!("{n} = {v}"));
        prop_oneof![
            delimited(inner, false).prop_map(|inside| format!("[{inside}]")),
            delimited(field, true).prop_map(|inside| format!("{{{inside}}}")),
            (path(), delimited(arg, false)).prop_map(|(callee, inside)| format!("{callee}({inside})")),
        ]
    });
    prop_oneof![
        4 => primary,
        1 => (primary_leaf(), primary_leaf(), prop::option::of(primary_leaf())).prop_map(|(a, b, step)| match step {
            Some(s) => format!("{a}..{b} step {s}"),
            None => format!("{a}..{b}"),
        }),
    ]
    .boxed()
}

/// The inside of brackets: a gap, then up to three elements each followed by
/// a comma and a gap. The comma is optional after the last element, and
/// after any if `optional_commas` (record fields).
fn delimited(element: impl Strategy<Value = String>, optional_commas: bool) -> impl Strategy<Value = String> {
    let entry = (element, prop::bool::weighted(0.7), gap());
    (gap(), prop::collection::vec(entry, 0..4)).prop_map(move |(mut out, items)| {
        for (i, (item, comma, gap)) in items.iter().enumerate() {
            out.push_str(item);
            let last = i + 1 == items.len();
            if *comma || !(last || optional_commas) {
                out.push(',');
            }
            out.push_str(gap);
        }
        out
    })
}

/// What follows a statement: a line break, maybe a blank line, maybe
/// comments, or just a space.
fn separator() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just("\n".to_owned()),
        2 => Just("\n\n".to_owned()),
        1 => Just("\n \t\n\n".to_owned()),
        2 => line_comment().prop_map(|c| format!("  {c}\n")),
        1 => line_comment().prop_map(|c| format!("\n{c}\n")),
        1 => block_comment().prop_map(|c| format!(" {c}\n")),
        1 => block_comment().prop_map(|c| format!("\n\n{c}\n\n")),
        // The next statement on the same line.
        1 => Just(" ".to_owned()),
        1 => block_comment().prop_map(|c| format!(" {c} ")),
    ]
}

fn members(depth: u32) -> BoxedStrategy<String> {
    let attribute =
        (name(), prop::option::of(block_comment()), expr()).prop_map(|(key, comment, value)| match comment {
            Some(c) => format!("{key} {c} = {value}"),
            None => format!("{key} = {value}"),
        });
    let member = if depth == 0 {
        attribute.boxed()
    } else {
        prop_oneof![4 => attribute, 1 => block(depth - 1)].boxed()
    };
    prop::collection::vec((member, separator()), 0..5)
        .prop_map(|ms| ms.into_iter().map(|(m, s)| m + &s).collect())
        .boxed()
}

fn block(depth: u32) -> BoxedStrategy<String> {
    (name(), prop::option::of(string()), separator(), members(depth))
        .prop_map(|(kind, label, open, body)| match label {
            Some(label) => format!("{kind} {label} {{{open}{body}}}"),
            None => format!("{kind} {{{open}{body}}}"),
        })
        .boxed()
}

fn item() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => (string(), prop::option::of(name())).prop_map(|(path, alias)| match alias {
            Some(alias) => format!("import {path} as {alias}"),
            None => format!("import {path}"),
        }),
        2 => (name(), expr()).prop_map(|(n, value)| format!("let {n} = {value}")),
        3 => block(2),
    ]
}

fn source() -> impl Strategy<Value = String> {
    (
        prop::option::of(line_comment()),
        prop::collection::vec((item(), separator()), 0..5),
    )
        .prop_map(|(header, items)| {
            let mut out = header.map(|c| c + "\n\n").unwrap_or_default();
            for (item, separator) in items {
                out.push_str(&item);
                out.push_str(&separator);
            }
            out
        })
}

// ---- mutations ------------------------------------------------------------

#[derive(Debug, Clone)]
enum Mutation {
    Delete(prop::sample::Index),
    Insert(prop::sample::Index, char),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let punctuation: Vec<char> = "{}[]()\"=,./*".chars().collect();
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Mutation::Delete),
        (any::<prop::sample::Index>(), prop::sample::select(punctuation)).prop_map(|(i, c)| Mutation::Insert(i, c)),
    ]
}

fn mutate(source: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = source.chars().collect();
    for mutation in mutations {
        match mutation {
            Mutation::Delete(i) if !chars.is_empty() => {
                chars.remove(i.index(chars.len()));
            }
            Mutation::Delete(_) => {}
            Mutation::Insert(i, c) => chars.insert(i.index(chars.len() + 1), *c),
        }
    }
    chars.into_iter().collect()
}

/// Whatever the input: no panic, sane diagnostics and spans, and a clean
/// parse formats to a clean parse.
fn check_any(source: &str) {
    let (module, diagnostics) = exp_syntax::parse(FileId(0), source);
    common::assert_diagnostic_spans_are_sane(&diagnostics, source);
    common::assert_spans_are_tight(&module, source);
    if diagnostics.is_empty() {
        common::assert_format_round_trip(source, &exp_syntax::format(&module, source));
    }
}

proptest! {
    #![proptest_config(Config::with_cases(256))]

    #[test]
    fn generated_sources_parse_and_format_losslessly(source in source()) {
        let module = common::parse_clean(&source);
        common::assert_spans_are_tight(&module, &source);
        let formatted = exp_syntax::format(&module, &source);
        // Same tree, idempotent, every comment kept.
        common::assert_format_round_trip(&source, &formatted);
    }

    #[test]
    fn escape_is_the_inverse_of_string_parsing(value in any::<String>()) {
        let source = format!("let x = \"{}\"", exp_syntax::escape(&value));
        let module = common::parse_clean(&source);
        let Some(exp_syntax::ast::Item::Let(l)) = module.items.first() else {
            panic!("not a let: {source}");
        };
        prop_assert_eq!(&l.value.kind, &exp_syntax::ast::ExprKind::Str(value));
    }

    #[test]
    fn arbitrary_strings_do_not_panic(source in any::<String>()) {
        check_any(&source);
    }

    #[test]
    fn token_soup_does_not_panic(source in "([a-z]{1,4}|[0-9]{1,3}|[ \n{}\\[\\]()\"=,./*%µ:;-]|\\.\\.|//|/\\*|\\*/){0,60}") {
        check_any(&source);
    }

    #[test]
    fn mutated_sources_do_not_panic(
        source in source(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        check_any(&mutate(&source, &mutations));
    }
}
