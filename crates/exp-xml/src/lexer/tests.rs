//! Lexemes of whole inputs: markup kinds, skipped declarations, errors,
//! and long text handed out in pieces.

use super::*;

fn lex(xml: &[u8]) -> Vec<String> {
    let mut lexer = Lexer::new(xml);
    let mut out = Vec::new();
    loop {
        let s = match lexer.next().map(|(lexeme, _, _)| lexeme) {
            Ok(Lexeme::Start { name, tag, empty }) => format!(
                "S {} [{}]{}",
                String::from_utf8_lossy(name),
                String::from_utf8_lossy(&tag[name.len()..]),
                if empty { "/" } else { "" }
            ),
            Ok(Lexeme::End { name }) => format!("E {}", String::from_utf8_lossy(name)),
            Ok(Lexeme::Text { raw, .. }) => format!("T {}", String::from_utf8_lossy(raw)),
            Ok(Lexeme::CData(t)) => format!("C {}", String::from_utf8_lossy(t)),
            Ok(Lexeme::Other) => "O".into(),
            Ok(Lexeme::Eof) => break,
            Err((e, _)) => {
                out.push(format!("ERR {e:?}"));
                break;
            }
        };
        out.push(s);
    }
    out
}

#[test]
fn tokens() {
    let got = lex(b"\xEF\xBB\xBF<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x \"]>\">]><r a='>' b=\"'\"><!-- c --><e/>t&amp;<![CDATA[<x>]]></r >");
    assert_eq!(
        got,
        [
            "O",
            "O",
            "S r [ a='>' b=\"'\"]",
            "O",
            "S e []/",
            "T t&amp;",
            "C <x>",
            "E r",
        ]
    );
    assert!(lex(b"<a><!-- open").last().is_some_and(|s| s.starts_with("ERR")));
    assert!(lex(b"<a x='1").last().is_some_and(|s| s.starts_with("ERR")));
}

#[test]
fn long_text_comes_in_pieces_at_char_boundaries() {
    let text = "é&amp;".repeat(40_000);
    let xml = format!("<a>{text}</a>");
    let pieces = lex(xml.as_bytes());
    let texts = pieces.iter().filter(|p| p.starts_with("T ")).count();
    assert!(texts >= 2, "{texts}");
    let joined: String = pieces.iter().filter_map(|p| p.strip_prefix("T ")).collect();
    assert_eq!(joined, text);
}
