//! `expc traffic convert`: read a file, apply a structure model, write it.

use std::io::Write;

use super::parse::{parse, Format, Parsed};
use super::write::{write_alternate, write_original};
use super::{CvecError, Structure};

/// Reads `text` (`input` format), applies `structure` to every connection
/// and writes the result in `output` format; `Format::Auto` as output means
/// the format the input turned out to be (alternate for an empty input).
/// Returns what was read, so callers can report skipped connections.
///
/// Writing the original format fails with [`CvecError::NotExpressible`] on
/// the first connection it cannot express; nothing of that connection is
/// written.
pub fn convert<W: Write>(
    text: &str,
    name: &str,
    input: Format,
    structure: Structure,
    output: Format,
    lenient: bool,
    out: &mut W,
) -> Result<Parsed, CvecError> {
    let parsed = parse(text, name, input, lenient)?;
    let derived: Vec<_> = parsed.connections.iter().map(|c| structure.apply(c)).collect();
    let output = match output {
        Format::Auto => parsed.format.unwrap_or(Format::Alternate),
        explicit => explicit,
    };
    match output {
        Format::Original => write_original(out, &derived)?,
        _ => write_alternate(out, &derived)?,
    }
    Ok(parsed)
}
