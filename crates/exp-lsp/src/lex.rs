//! A lexer that never fails, for text being typed. The parser in exp-syntax
//! gives the tree of a file that parses (and recovers statement by statement
//! when it does not); completion, hover and highlighting also need to know
//! what surrounds the cursor in a half-written line, which only tokens can
//! tell. The token rules follow `grammar/exp.pest`.

use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    /// A name or a keyword (`import`, `let`, `as`, `true`, `false`, `step`).
    Ident,
    /// A number's text (`1_000`, `-2.5e3`).
    Number,
    /// A unit written directly after a number (`ms`, `KiB`, `%`, `/s`).
    Unit,
    /// A string with its quotes; `closed` is false when the line ends first.
    Str {
        closed: bool,
    },
    Comment,
    /// One of `= , { } [ ] ( ) .`
    Punct(char),
    DotDot,
    /// Anything else (`:`, `;`, `'`, …).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Tok,
    pub start: usize,
    pub end: usize,
}

impl Token {
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }

    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        &source[self.start..self.end]
    }
}

pub const KEYWORDS: [&str; 5] = ["import", "let", "as", "true", "false"];

/// Every token of `source`, comments included, in order.
pub fn lex(source: &str) -> Vec<Token> {
    let mut lexer = Lexer { source, at: 0 };
    let mut tokens = Vec::new();
    while let Some(token) = lexer.next_token() {
        tokens.push(token);
        if token.kind == Tok::Number {
            if let Some(unit) = lexer.unit() {
                tokens.push(unit);
            }
        }
    }
    tokens
}

struct Lexer<'a> {
    source: &'a str,
    at: usize,
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        &self.source[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn eat_while(&mut self, keep: impl Fn(char) -> bool) {
        let len = self.rest().find(|c: char| !keep(c)).unwrap_or(self.rest().len());
        self.at += len;
    }

    fn next_token(&mut self) -> Option<Token> {
        self.eat_while(char::is_whitespace);
        let start = self.at;
        let c = self.peek()?;
        let rest = self.rest();
        let kind = if rest.starts_with("//") {
            self.eat_while(|c| c != '\n');
            Tok::Comment
        } else if let Some(body) = rest.strip_prefix("/*") {
            self.at += body.find("*/").map_or(rest.len(), |i| i + 4);
            Tok::Comment
        } else if c == '"' {
            self.string()
        } else if c.is_ascii_digit() || (c == '-' && rest[1..].starts_with(|d: char| d.is_ascii_digit())) {
            return Some(self.number(start));
        } else if c.is_ascii_alphabetic() || c == '_' {
            self.eat_while(|c| c.is_ascii_alphanumeric() || c == '_');
            Tok::Ident
        } else if rest.starts_with("..") {
            self.at += 2;
            Tok::DotDot
        } else if "=,{}[]().".contains(c) {
            self.at += 1;
            Tok::Punct(c)
        } else {
            self.at += c.len_utf8();
            Tok::Other
        };
        Some(Token {
            kind,
            start,
            end: self.at,
        })
    }

    fn string(&mut self) -> Tok {
        self.at += 1;
        let mut escaped = false;
        while let Some(c) = self.peek() {
            if c == '\n' {
                return Tok::Str { closed: false };
            }
            self.at += c.len_utf8();
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => return Tok::Str { closed: true },
                _ => {}
            }
        }
        Tok::Str { closed: false }
    }

    /// A number, and the unit written directly after it as a token of its own
    /// (returned on the next call).
    fn number(&mut self, start: usize) -> Token {
        if self.peek() == Some('-') {
            self.at += 1;
        }
        let digits = |s: &mut Self| s.eat_while(|c| c.is_ascii_digit());
        digits(self);
        while self.rest().starts_with('_') && self.rest()[1..].starts_with(|c: char| c.is_ascii_digit()) {
            self.at += 1;
            digits(self);
        }
        if self.rest().starts_with('.') && self.rest()[1..].starts_with(|c: char| c.is_ascii_digit()) {
            self.at += 1;
            digits(self);
        }
        let rest = self.rest();
        if rest.starts_with(['e', 'E']) {
            let sign = usize::from(rest[1..].starts_with(['+', '-']));
            if rest[1 + sign..].starts_with(|c: char| c.is_ascii_digit()) {
                self.at += 1 + sign;
                digits(self);
            }
        }
        Token {
            kind: Tok::Number,
            start,
            end: self.at,
        }
    }

    /// The unit directly after a number: `%`, `/s`, or letters with an
    /// optional `/letters` (`ms`, `µs`, `Gbit/s`).
    fn unit(&mut self) -> Option<Token> {
        let start = self.at;
        let rest = self.rest();
        let letters = |s: &str| s.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(s.len());
        let len = if rest.starts_with('%') {
            1
        } else if let Some(after) = rest.strip_prefix('/') {
            match letters(after) {
                0 => return None,
                n => 1 + n,
            }
        } else {
            let word = rest
                .find(|c: char| !(c.is_ascii_alphabetic() || c == 'µ'))
                .unwrap_or(rest.len());
            if word == 0 {
                return None;
            }
            match rest[word..].strip_prefix('/').map(letters) {
                Some(n) if n > 0 => word + 1 + n,
                _ => word,
            }
        };
        self.at += len;
        Some(Token {
            kind: Tok::Unit,
            start,
            end: self.at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<(Tok, &str)> {
        lex(source).iter().map(|t| (t.kind, t.text(source))).collect()
    }

    #[test]
    fn numbers_take_their_units() {
        assert_eq!(
            kinds("a = 1_000.5e-3µs b=[5/s, 80%,2Gbit/s] 1..10 step 2"),
            vec![
                (Tok::Ident, "a"),
                (Tok::Punct('='), "="),
                (Tok::Number, "1_000.5e-3"),
                (Tok::Unit, "µs"),
                (Tok::Ident, "b"),
                (Tok::Punct('='), "="),
                (Tok::Punct('['), "["),
                (Tok::Number, "5"),
                (Tok::Unit, "/s"),
                (Tok::Punct(','), ","),
                (Tok::Number, "80"),
                (Tok::Unit, "%"),
                (Tok::Punct(','), ","),
                (Tok::Number, "2"),
                (Tok::Unit, "Gbit/s"),
                (Tok::Punct(']'), "]"),
                (Tok::Number, "1"),
                (Tok::DotDot, ".."),
                (Tok::Number, "10"),
                (Tok::Ident, "step"),
                (Tok::Number, "2"),
            ]
        );
    }

    #[test]
    fn strings_and_comments_end_where_the_grammar_ends_them() {
        assert_eq!(
            kinds("x = \"a\\\"b\" // c\n\"open\ny /* z\n */ 'q'"),
            vec![
                (Tok::Ident, "x"),
                (Tok::Punct('='), "="),
                (Tok::Str { closed: true }, "\"a\\\"b\""),
                (Tok::Comment, "// c"),
                (Tok::Str { closed: false }, "\"open"),
                (Tok::Ident, "y"),
                (Tok::Comment, "/* z\n */"),
                (Tok::Other, "'"),
                (Tok::Ident, "q"),
                (Tok::Other, "'"),
            ]
        );
        assert_eq!(kinds("/* open"), vec![(Tok::Comment, "/* open")]);
        assert_eq!(
            kinds("a.b-"),
            vec![
                (Tok::Ident, "a"),
                (Tok::Punct('.'), "."),
                (Tok::Ident, "b"),
                (Tok::Other, "-")
            ]
        );
    }
}
