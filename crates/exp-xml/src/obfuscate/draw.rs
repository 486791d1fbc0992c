//! Drawing replacement strings: seeded, same length in bytes and in
//! characters, injective, and never containing an original string of at
//! least [`MIN_HIDDEN_CHARS`] characters.
//!
//! A replacement first keeps the original's *shape*: lowercase → random
//! lowercase, uppercase → random uppercase, digit → random digit, other
//! ASCII (`-`, `.`, `:`, `/`, spaces …) kept, a non-ASCII character → a
//! random letter of the same UTF-8 width (Latin-1 letters, CJK ideographs,
//! CJK extension B). Names stay valid XML names (letters stay letters).
//! Numeric-looking values (as the extraction parses numbers) change only
//! their digits, and a leading digit keeps being zero or non-zero, so
//! `0042` stays a zero-padded integer and `1.5e-3` a number in exponent
//! notation. When no shaped replacement is free after
//! [`SHAPED_ATTEMPTS`] draws (a short string whose few replacements are
//! taken, or one made only of kept characters such as `----`), every
//! character is replaced: by letters for names, letters and digits for
//! values.

use aho_corasick::AhoCorasick;
use exp_stats::Rng;

use crate::hash::FastSet;
use crate::XmlError;

/// Originals with at least this many characters never appear in an
/// obfuscated set.
pub const MIN_HIDDEN_CHARS: usize = 4;

const SHAPED_ATTEMPTS: u32 = 128;
const ATTEMPTS: u32 = 512;

/// How a string may be replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Used as an element or attribute name somewhere.
    Name,
    /// Only used as a value; `numeric` when it parses as a number.
    Value { numeric: bool },
}

/// Draws replacements in call order from one seeded generator.
pub(crate) struct Drawer {
    rng: Rng,
    /// Every original of at least `MIN_HIDDEN_CHARS` characters.
    hidden: AhoCorasick,
    used: FastSet<String>,
}

impl Drawer {
    pub fn new(seed: u64, hidden: &[&str]) -> Result<Self, XmlError> {
        let hidden = AhoCorasick::new(hidden).map_err(|e| XmlError::Obfuscation(e.to_string()))?;
        Ok(Self {
            rng: Rng::new(seed),
            hidden,
            used: FastSet::default(),
        })
    }

    /// Whether `text` contains an original of at least 4 characters.
    pub fn leaks(&self, text: &str) -> bool {
        self.hidden.is_match(text)
    }

    /// A fresh replacement for `original`; `shaped` false skips straight to
    /// replacing every character. The previous replacement (if redrawing)
    /// stays reserved, which keeps the map injective either way.
    pub fn draw(&mut self, original: &str, class: Class, shaped: bool) -> Result<String, XmlError> {
        let first = if shaped { 0 } else { SHAPED_ATTEMPTS };
        for attempt in first..ATTEMPTS {
            let candidate = self.candidate(original, class, attempt < SHAPED_ATTEMPTS);
            if !self.used.contains(&candidate) && !self.leaks(&candidate) {
                self.used.insert(candidate.clone());
                return Ok(candidate);
            }
        }
        Err(XmlError::Obfuscation(format!(
            "no free replacement for a string of {} characters after {ATTEMPTS} draws",
            original.chars().count()
        )))
    }

    fn candidate(&mut self, original: &str, class: Class, shaped: bool) -> String {
        let mut out = String::with_capacity(original.len());
        let mut leading_digit = true;
        for (i, c) in original.chars().enumerate() {
            let replaced = match (class, shaped) {
                (Class::Value { numeric: true }, true) => {
                    if c.is_ascii_digit() {
                        let zero = c == '0';
                        let keep_zero = leading_digit && zero;
                        let nonzero = leading_digit && !zero;
                        leading_digit = false;
                        if keep_zero {
                            '0'
                        } else if nonzero {
                            self.pick(b"123456789")
                        } else {
                            self.pick(DIGITS)
                        }
                    } else {
                        // A new digit run starts after the exponent marker;
                        // a sign does not end the leading position.
                        match c {
                            'e' | 'E' => leading_digit = true,
                            '+' | '-' => {}
                            _ => leading_digit = false,
                        }
                        c
                    }
                }
                (_, true) => self.shaped_char(c),
                (Class::Name, false) if c.is_ascii() => {
                    if c.is_ascii_uppercase() {
                        self.pick(UPPER)
                    } else if c.is_ascii_digit() && i > 0 {
                        self.pick(DIGITS)
                    } else {
                        self.pick(LOWER)
                    }
                }
                (Class::Value { .. }, false) if c.is_ascii() => self.pick(ALNUM),
                (_, false) => self.wide_letter(c.len_utf8()),
            };
            out.push(replaced);
        }
        out
    }

    fn shaped_char(&mut self, c: char) -> char {
        match c {
            'a'..='z' => self.pick(LOWER),
            'A'..='Z' => self.pick(UPPER),
            '0'..='9' => self.pick(DIGITS),
            c if c.is_ascii() => c,
            c => self.wide_letter(c.len_utf8()),
        }
    }

    fn pick(&mut self, alphabet: &[u8]) -> char {
        let i = self.rng.below(alphabet.len() as u64) as usize;
        alphabet.get(i).copied().map_or('x', char::from)
    }

    /// A letter that is valid anywhere in an XML name, `width` bytes long in UTF-8.
    fn wide_letter(&mut self, width: usize) -> char {
        let (lo, hi) = match width {
            // À..ÿ without × (D7) and ÷ (F7).
            2 => (0xC0u32, 0xFF),
            3 => (0x4E00, 0x9FFF),
            _ => (0x2_0000, 0x2_A6DF),
        };
        loop {
            let code = lo + self.rng.below(u64::from(hi - lo + 1)) as u32;
            if let Some(c) = char::from_u32(code).filter(|_| code != 0xD7 && code != 0xF7) {
                return c;
            }
        }
    }
}

const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &[u8] = b"0123456789";
const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_lengths_and_guarantees() {
        let originals = ["sensor", "0042", "1.5e-3", "Grüße", "----", "x"];
        let mut d = Drawer::new(7, &originals[..5]).expect("drawer");
        let name = d.draw("sensor", Class::Name, true).expect("name");
        assert_eq!(name.len(), 6);
        assert!(name.bytes().all(|b| b.is_ascii_lowercase()));
        let num = d.draw("0042", Class::Value { numeric: true }, true).expect("num");
        assert!(num.starts_with('0') && num.bytes().all(|b| b.is_ascii_digit()), "{num}");
        let signed = d.draw("-0042", Class::Value { numeric: true }, true).expect("signed");
        assert!(signed.starts_with("-0"), "{signed}");
        let exp = d.draw("1.5e-3", Class::Value { numeric: true }, true).expect("exp");
        assert!(crate::values::parse_number(&exp).is_some(), "{exp}");
        assert!(exp.as_bytes()[0] != b'0');
        let wide = d.draw("Grüße", Class::Name, true).expect("wide");
        assert_eq!((wide.len(), wide.chars().count()), ("Grüße".len(), 5));
        // Only kept characters: falls back to replacing every one.
        let dashes = d.draw("----", Class::Value { numeric: false }, true).expect("dashes");
        assert!(dashes.bytes().all(|b| b.is_ascii_alphanumeric()), "{dashes}");
        for r in [&name, &num, &exp, &wide, &dashes] {
            assert!(!d.leaks(r));
        }
        // Same seed, same draws.
        let mut again = Drawer::new(7, &originals[..5]).expect("drawer");
        assert_eq!(again.draw("sensor", Class::Name, true).expect("name"), name);
    }

    #[test]
    fn injective_on_a_full_small_space() {
        let mut d = Drawer::new(1, &[]).expect("drawer");
        let mut seen = FastSet::default();
        for digit in 0..10 {
            let r = d
                .draw(&digit.to_string(), Class::Value { numeric: false }, true)
                .expect("digit");
            assert!(seen.insert(r));
        }
        assert_eq!(seen.len(), 10);
    }
}
