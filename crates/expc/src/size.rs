//! Byte sizes on the command line (`expc xml generate --size`, `expc serve`'s
//! limits), in the size units of the language (`exp_syntax::units`), so a
//! flag and a spec accept the same units.

use exp_syntax::units::{self, Dimension, UNITS};

/// Byte sizes: `123`, `10KB`, `1.5GiB`, `500MB`: a number and one of the
/// language's size units (SI and binary), bytes without one.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("bad size `{text}`"))?;
    let factor = match unit.trim() {
        "" => 1.0,
        unit => match units::lookup(unit) {
            Some((Dimension::Bytes, factor)) => factor,
            _ => return Err(unknown_unit(unit)),
        },
    };
    let bytes = number * factor;
    if !(bytes >= 1.0 && bytes < 2f64.powi(63)) {
        return Err(format!("size `{text}` out of range"));
    }
    Ok(bytes as u64)
}

fn is_size_unit(unit: &str) -> bool {
    units::lookup(unit).is_some_and(|(dimension, _)| dimension == Dimension::Bytes)
}

/// The message for a unit that is not a size unit: the size units, and the
/// one probably meant.
fn unknown_unit(unit: &str) -> String {
    let sizes: Vec<&str> = UNITS
        .iter()
        .filter(|(_, dimension, _)| *dimension == Dimension::Bytes)
        .map(|(text, _, _)| *text)
        .collect();
    let hint = units::suggest(unit)
        .filter(|s| is_size_unit(s))
        .map(|s| format!("did you mean `{s}`? "))
        .unwrap_or_default();
    format!("unknown size unit `{unit}` ({hint}use {})", sizes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_size_unit_of_the_language_and_no_other() {
        for (unit, dimension, factor) in UNITS {
            let parsed = parse_size(&format!("2{unit}"));
            if *dimension == Dimension::Bytes {
                assert_eq!(parsed, Ok((2.0 * factor) as u64), "{unit}");
            } else {
                assert!(parsed.is_err(), "{unit} is no size unit");
            }
        }
        assert_eq!(parse_size(" 1024 "), Ok(1024));
        assert_eq!(parse_size("1.5 KiB"), Ok(1536));
        let error = parse_size("500kB").unwrap_err();
        assert!(
            error.starts_with("unknown size unit `kB` (did you mean `KB`? use B, KB,"),
            "{error}"
        );
        assert!(parse_size("12 parsecs")
            .unwrap_err()
            .contains("use B, KB, MB, GB, TB, KiB"));
        assert!(parse_size("0.1").is_err());
        assert!(parse_size("10000000TiB").is_err());
    }
}
