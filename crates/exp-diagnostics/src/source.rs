use std::ops::Range;

/// Index of a source file in a [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte range in one source file. Spans survive every stage, so an error found
/// while lowering still points at the text the user wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, range: Range<usize>) -> Self {
        Span {
            file,
            start: range.start as u32,
            end: range.end as u32,
        }
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The smallest span covering both (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
    /// The text as diagnostics show it, bidirectional controls escaped:
    /// made when first rendered, once for all diagnostics; `None` without any.
    escaped: std::sync::OnceLock<Option<crate::escape::Escaped>>,
}

impl SourceFile {
    fn new(name: String, text: String) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name,
            text,
            line_starts,
            escaped: std::sync::OnceLock::new(),
        }
    }

    /// 1-based line and column (in chars) of a byte offset.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line];
        let column = self
            .text
            .get(start..offset.min(self.text.len()))
            .map_or(0, |s| s.chars().count());
        (line + 1, column + 1)
    }

    /// The text with its bidirectional controls escaped, if it has any.
    pub(crate) fn escaped(&self) -> Option<&crate::escape::Escaped> {
        self.escaped
            .get_or_init(|| crate::escape::Escaped::new(&self.text, &crate::escape::bidi_offsets(&self.text)))
            .as_ref()
    }

    /// 0-based index of the line holding a byte offset.
    pub(crate) fn line_index(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset) - 1
    }

    /// A line's bytes, with its line break.
    pub(crate) fn line_range(&self, line: usize) -> Option<Range<usize>> {
        let start = *self.line_starts.get(line)?;
        let end = self.line_starts.get(line + 1).copied().unwrap_or(self.text.len());
        Some(start..end)
    }
}

/// Every file the compiler read: the root spec, its imports and the stdlib
/// modules it pulled in.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile::new(name.into(), text.into()));
        FileId(self.files.len() as u32 - 1)
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(i, f)| (FileId(i as u32), f))
    }

    /// The text a span covers.
    pub fn snippet(&self, span: Span) -> &str {
        self.get(span.file).text.get(span.range()).unwrap_or("")
    }

    /// A span from a 1-based `line:column` of the file called `name` to the end
    /// of that line (without a trailing `{`): how locations recorded in the
    /// plan become labelled spans again.
    pub fn locate(&self, name: &str, line: usize, column: usize) -> Option<Span> {
        let (id, file) = self.files().find(|(_, f)| f.name == name)?;
        let range = file.line_range(line.checked_sub(1)?)?;
        let text = &file.text[range.clone()];
        let start = range.start + text.char_indices().nth(column.checked_sub(1)?).map(|(i, _)| i)?;
        let end = range.start + text.trim_end().trim_end_matches('{').trim_end().len();
        (start < end).then(|| Span::new(id, start..end))
    }

    /// `file:line:column` of a span's start.
    pub fn location(&self, span: Span) -> String {
        let file = self.get(span.file);
        let (line, column) = file.line_column(span.start as usize);
        format!("{}:{line}:{column}", file.name)
    }
}

impl<'a> codespan_reporting::files::Files<'a> for SourceMap {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, codespan_reporting::files::Error> {
        self.files
            .get(id.0 as usize)
            .map(|f| f.name.as_str())
            .ok_or(codespan_reporting::files::Error::FileMissing)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, codespan_reporting::files::Error> {
        self.files
            .get(id.0 as usize)
            .map(|f| f.text.as_str())
            .ok_or(codespan_reporting::files::Error::FileMissing)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, codespan_reporting::files::Error> {
        let file = self
            .files
            .get(id.0 as usize)
            .ok_or(codespan_reporting::files::Error::FileMissing)?;
        Ok(file.line_starts.partition_point(|&s| s <= byte_index) - 1)
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, codespan_reporting::files::Error> {
        let file = self
            .files
            .get(id.0 as usize)
            .ok_or(codespan_reporting::files::Error::FileMissing)?;
        file.line_range(line_index)
            .ok_or(codespan_reporting::files::Error::LineTooLarge {
                given: line_index,
                max: file.line_starts.len() - 1,
            })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn locate_finds_a_line_from_its_column() {
        let mut sources = super::SourceMap::new();
        let id = sources.add("a.exp", "x = 1\n  anomaly \"h\" {\n}\n");
        let span = sources.locate("a.exp", 2, 3).unwrap();
        assert_eq!(span.file, id);
        assert_eq!(sources.snippet(span), "anomaly \"h\"");
        assert_eq!(sources.locate("a.exp", 9, 1), None);
        assert_eq!(sources.locate("b.exp", 1, 1), None);
    }

    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let mut map = SourceMap::new();
        let id = map.add("a.exp", "ab\ncd\n");
        assert_eq!(map.get(id).line_column(0), (1, 1));
        assert_eq!(map.get(id).line_column(4), (2, 2));
        assert_eq!(map.location(Span::new(id, 3..4)), "a.exp:2:1");
    }
}
