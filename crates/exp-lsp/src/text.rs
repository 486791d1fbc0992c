//! Positions: the compiler counts bytes, the protocol counts lines and UTF-16
//! code units (the encoding every client supports). One `LineIndex` per text
//! converts both ways.

use std::ops::Range;

use lsp_types::{Position, TextDocumentContentChangeEvent};

/// Start offsets of a text's lines.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    /// The position of a byte offset (clamped to the text, and back to a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let start = self.starts[line];
        let character: usize = self.text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, bytes: Range<usize>) -> lsp_types::Range {
        lsp_types::Range::new(self.position(bytes.start), self.position(bytes.end))
    }

    /// The byte offset of a position. A line past the end is the end of the
    /// text; a character past the end of its line is the end of the line.
    pub fn offset(&self, position: Position) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(position.line as usize + 1)
            .map_or(self.text.len(), |&next| next - 1);
        let mut units = 0;
        for (index, c) in self.text[start..end].char_indices() {
            if units >= position.character as usize {
                return start + index;
            }
            units += c.len_utf16();
        }
        end
    }
}

/// Applies one change of `textDocument/didChange` (a range, or the whole text).
pub fn apply_change(text: &mut String, change: TextDocumentContentChangeEvent) {
    match change.range {
        Some(range) => {
            let index = LineIndex::new(text);
            let start = index.offset(range.start);
            let end = index.offset(range.end).max(start);
            text.replace_range(start..end, &change.text);
        }
        None => *text = change.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let text = "a = 1\nµs = \"😀x\"\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        // `µ` is one unit, the emoji two.
        assert_eq!(index.position(x), Position::new(1, 8));
        assert_eq!(index.offset(Position::new(1, 8)), x);
        assert_eq!(index.offset(Position::new(0, 99)), 5);
        assert_eq!(index.offset(Position::new(9, 0)), text.len());
        assert_eq!(index.position(text.len()), Position::new(2, 0));
    }

    #[test]
    fn changes_apply_in_order() {
        let mut text = String::from("let a = 1\nlet b = 2\n");
        let change = |l0, c0, l1, c1, new: &str| TextDocumentContentChangeEvent {
            range: Some(lsp_types::Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            range_length: None,
            text: new.to_string(),
        };
        apply_change(&mut text, change(1, 8, 1, 9, "20"));
        apply_change(&mut text, change(0, 4, 0, 5, "x"));
        assert_eq!(text, "let x = 1\nlet b = 20\n");
        apply_change(
            &mut text,
            TextDocumentContentChangeEvent {
                range: None,
                range_length: None,
                text: "new".into(),
            },
        );
        assert_eq!(text, "new");
    }
}
