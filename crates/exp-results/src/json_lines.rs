//! The manifest's JSON layout: indented like `serde_json`'s pretty output
//! for its first two levels (the run's facts, and the list of trials), each
//! element of a list on one line of its own. A trial is one line, so a
//! manifest of a million trials is a third of its pretty size, quick to
//! rewrite after every trial, and still read (and diffed) a trial per line.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// Levels of nesting written indented; deeper values go on one line.
const INDENTED_LEVELS: usize = 2;

/// `value` as JSON in the layout described above, with a final newline.
pub fn to_vec<T: Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut bytes = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, ShallowPretty::default());
    value.serialize(&mut serializer)?;
    bytes.push(b'\n');
    Ok(bytes)
}

#[derive(Default)]
struct ShallowPretty {
    /// Open arrays and objects.
    depth: usize,
    /// Whether the innermost open container has a value yet.
    has_value: bool,
}

impl ShallowPretty {
    fn indented(&self) -> bool {
        self.depth <= INDENTED_LEVELS
    }

    fn open<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        let indented = self.indented();
        self.depth -= 1;
        if indented && self.has_value {
            newline(writer, self.depth)?;
        }
        self.has_value = true;
        writer.write_all(bracket)
    }

    /// Before an element or key: the separator, and a new line if indented.
    fn element<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if self.indented() {
            writer.write_all(if first { b"" } else { b"," })?;
            newline(writer, self.depth)
        } else {
            writer.write_all(if first { b"" } else { b", " })
        }
    }
}

fn newline<W: ?Sized + Write>(writer: &mut W, depth: usize) -> io::Result<()> {
    writer.write_all(b"\n")?;
    for _ in 0..depth {
        writer.write_all(b"  ")?;
    }
    Ok(())
}

impl Formatter for ShallowPretty {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.element(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.element(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_levels_indented_deeper_ones_on_a_line() {
        let value = serde_json::json!({
            "run": "r",
            "empty": [],
            "trials": [{"trial": 0, "sweep": {"n": "4"}, "metrics": {}}, {"trial": 1, "sweep": {}, "metrics": {"a": 1.5}}],
            "host": {"name": "h", "cpus": [0, 1]}
        });
        let text = String::from_utf8(to_vec(&value).unwrap()).unwrap();
        assert_eq!(
            text,
            r#"{
  "run": "r",
  "empty": [],
  "trials": [
    {"trial": 0, "sweep": {"n": "4"}, "metrics": {}},
    {"trial": 1, "sweep": {}, "metrics": {"a": 1.5}}
  ],
  "host": {
    "name": "h",
    "cpus": [0, 1]
  }
}
"#
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }
}
