//! A new kind's name in the spellings the generated code needs, and why a
//! name is refused.

/// `disk_fill` → `DiskFill` (types) and `DISK_FILL` (the registry constant).
pub struct Names {
    pub snake: String,
    pub camel: String,
    pub upper: String,
}

/// Rust's keywords, strict and reserved: the kind is a module name.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "static",
    "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do",
    "final", "gen", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

impl Names {
    /// The spellings of `name`, or why it cannot name a kind: it must be a
    /// lowercase identifier (it is a block kind in specs, a module, a plan
    /// key and part of a table's name) and not a Rust keyword.
    pub fn new(name: &str) -> Result<Names, String> {
        let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !name.ends_with('_')
            && !name.contains("__");
        if !valid {
            return Err(format!(
                "`{name}` is not a kind name: a lowercase identifier (letters, digits, single `_` between them)"
            ));
        }
        if KEYWORDS.contains(&name) {
            return Err(format!("`{name}` is a Rust keyword; the kind is a module name too"));
        }
        let camel = name
            .split('_')
            .map(|part| {
                let mut chars = part.chars();
                chars
                    .next()
                    .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                    .unwrap_or_default()
            })
            .collect();
        Ok(Names {
            snake: name.to_string(),
            camel,
            upper: name.to_ascii_uppercase(),
        })
    }

    /// `text` with `{name}`, `{Name}` and `{NAME}` replaced.
    pub fn fill(&self, text: &str) -> String {
        text.replace("{name}", &self.snake)
            .replace("{Name}", &self.camel)
            .replace("{NAME}", &self.upper)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        let names = Names::new("disk_fill2").unwrap();
        assert_eq!(
            (names.camel.as_str(), names.upper.as_str()),
            ("DiskFill2", "DISK_FILL2")
        );
        assert_eq!(names.fill("{name} {Name} {NAME}"), "disk_fill2 DiskFill2 DISK_FILL2");
    }

    #[test]
    fn refused_names() {
        for bad in [
            "", "Ticker", "2ticks", "tick-er", "tick_", "ti__ck", "tick er", "type", "mod",
        ] {
            assert!(Names::new(bad).is_err(), "`{bad}` was accepted");
        }
    }
}
