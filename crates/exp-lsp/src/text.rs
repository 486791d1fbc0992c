//! Positions: the compiler counts bytes, the protocol counts lines and UTF-16
//! code units (the encoding every client supports). One `LineIndex` per text
//! converts both ways.

use std::ops::Range;

use lsp_types::{Position, TextDocumentContentChangeEvent};

/// Most bytes between two marks of a line: a position converts by counting
/// at most this many bytes, however long its line (a whole spec can be one
/// line, and converting each of its diagnostics from the line's start was
/// quadratic).
const MARK_EVERY: usize = 256;

/// Start offsets of a text's lines, and marks inside them.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// (byte offset, UTF-16 column) at every line start and at least every
    /// [`MARK_EVERY`] bytes within a line, on character boundaries, in order.
    marks: Vec<(usize, usize)>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        let mut marks = vec![(0, 0)];
        let (mut marked, mut column) = (0, 0);
        for (at, c) in text.char_indices() {
            if at - marked >= MARK_EVERY {
                marks.push((at, column));
                marked = at;
            }
            if c == '\n' {
                starts.push(at + 1);
                marks.push((at + 1, 0));
                (marked, column) = (at + 1, 0);
            } else {
                column += c.len_utf16();
            }
        }
        LineIndex { text, starts, marks }
    }

    /// The position of a byte offset (clamped to the text, and back to a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        // The line's start is a mark, so this one lies in the same line.
        let (mark, column) = self.marks[self.marks.partition_point(|&(at, _)| at <= offset) - 1];
        let character = column + self.text[mark..offset].chars().map(char::len_utf16).sum::<usize>();
        Position::new(line as u32, character as u32)
    }

    /// The byte offset where the line holding `offset` starts.
    pub fn line_start(&self, offset: usize) -> usize {
        self.starts[self.starts.partition_point(|&start| start <= offset) - 1]
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
        let wanted = position.character as usize;
        let first = self.marks.partition_point(|&(at, _)| at < start);
        let line_marks = &self.marks[first..self.marks.partition_point(|&(at, _)| at < end.max(start + 1))];
        let (mark, mut units) = line_marks[line_marks.partition_point(|&(_, column)| column <= wanted) - 1];
        for (index, c) in self.text[mark..end].char_indices() {
            if units >= wanted {
                return mark + index;
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
    fn positions_on_a_long_line_count_from_the_nearest_mark() {
        // A line of 10,000 characters, some of them two UTF-16 units or
        // several bytes, crossing many marks.
        let line: String = (0..10_000)
            .map(|i| match i % 7 {
                0 => '😀',
                3 => 'µ',
                _ => 'x',
            })
            .collect();
        let text = format!("first\n{line}\nlast");
        let index = LineIndex::new(&text);
        let second = text.find('\n').unwrap() + 1;
        let mut units = 0;
        for (at, c) in line.char_indices() {
            let position = Position::new(1, units);
            assert_eq!(index.position(second + at), position, "byte {at}");
            assert_eq!(index.offset(position), second + at, "unit {units}");
            units += c.len_utf16() as u32;
        }
        assert_eq!(index.position(text.len()), Position::new(2, 4));
        assert_eq!(index.offset(Position::new(1, units + 5)), second + line.len());
        assert_eq!(index.offset(Position::new(2, 2)), text.len() - 2);
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
