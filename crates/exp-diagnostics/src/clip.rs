//! Long source lines, cut for display. codespan-reporting prints every
//! labelled line whole, and underlines a label as long as its span: an
//! unterminated 50 MB string would print 100 MB. [`Clipped`] is the view of
//! the sources codespan renders from: a line longer than
//! [`MAX_LINE_BYTES`] appears as a window of that many bytes around the
//! first label on it, labels are cut to their window, and a note says which
//! line was cut. Files holding bidirectional controls are shown escaped
//! (`escape.rs`): label offsets move with the text, columns do not.

use std::collections::BTreeMap;
use std::ops::Range;

use codespan_reporting::files::{Error, Files};

use crate::escape::{escape_bidi, Escaped};
use crate::{Diagnostic, FileId, SourceMap, Span};

/// Longest part of one source line a diagnostic shows.
pub const MAX_LINE_BYTES: usize = 160;

/// Bytes shown before the first label of a cut line.
const CONTEXT_BYTES: usize = 40;

/// The sources as one diagnostic shows them.
pub(crate) struct Clipped<'a> {
    sources: &'a SourceMap,
    /// The window of each cut line that holds a label, by file and line index.
    windows: BTreeMap<(FileId, usize), Range<usize>>,
    /// Labelled files holding bidirectional controls, as shown.
    escaped: BTreeMap<FileId, &'a Escaped>,
}

impl<'a> Clipped<'a> {
    /// The view for `diagnostic`, and the diagnostic with its labels fitted
    /// to it (a label outside its line's window becomes a note) and its
    /// texts escaped.
    pub fn new(sources: &'a SourceMap, diagnostic: &Diagnostic) -> (Self, Diagnostic) {
        let (mut view, mut fitted) = Self::cut(sources, diagnostic);
        for label in &diagnostic.labels {
            let file = label.span.file;
            if let Some(escaped) = sources.get(file).escaped() {
                view.escaped.insert(file, escaped);
            }
        }
        for label in &mut fitted.labels {
            if let Some(escaped) = view.escaped.get(&label.span.file) {
                label.span.start = escaped.shown(label.span.start as usize) as u32;
                label.span.end = escaped.shown(label.span.end as usize) as u32;
            }
            label.message = escape_bidi(&label.message).into_owned();
        }
        fitted.message = escape_bidi(&fitted.message).into_owned();
        for note in fitted.notes.iter_mut().chain(&mut fitted.help) {
            *note = escape_bidi(note).into_owned();
        }
        (view, fitted)
    }

    /// The view with long lines cut, and the diagnostic fitted to it.
    fn cut(sources: &'a SourceMap, diagnostic: &Diagnostic) -> (Self, Diagnostic) {
        let mut view = Clipped {
            sources,
            windows: BTreeMap::new(),
            escaped: BTreeMap::new(),
        };
        let mut fitted = diagnostic.clone();
        if !diagnostic.labels.iter().any(|l| view.on_long_line(l.span)) {
            return (view, fitted);
        }
        // Anchor each long line's window at the primary label if it starts
        // there, else at the first label position on it.
        let mut anchors: BTreeMap<(FileId, usize), usize> = BTreeMap::new();
        let mut labels: Vec<&crate::Label> = diagnostic.labels.iter().collect();
        labels.sort_by_key(|l| !l.primary);
        for label in labels {
            for at in [label.span.start as usize, label.span.end as usize] {
                let key = (label.span.file, view.line_of(label.span.file, at));
                let anchor = anchors.entry(key).or_insert(at);
                if !label.primary && at < *anchor && !view.anchored_by_primary(diagnostic, key) {
                    *anchor = at;
                }
            }
        }
        for ((file, line), anchor) in anchors {
            let whole = view.content_range(file, line);
            if whole.len() > MAX_LINE_BYTES {
                view.windows
                    .insert((file, line), window(&view.text(file)[..whole.end], whole, anchor));
            }
        }
        fitted.labels.clear();
        for label in &diagnostic.labels {
            match view.fit(label.span) {
                Some(span) => fitted.labels.push(crate::Label { span, ..label.clone() }),
                None => fitted.notes.push(format!(
                    "{} (at {}, not shown)",
                    label.message,
                    sources.location(label.span)
                )),
            }
        }
        let mut cut: Vec<&(FileId, usize)> = view.windows.keys().collect();
        cut.sort();
        for &(file, line) in cut {
            let whole = view.content_range(file, line);
            fitted.notes.push(format!(
                "line {} of {} is {} bytes long; {} of them are shown",
                line + 1,
                sources.get(file).name,
                crate::limits::group(whole.len() as u64),
                view.windows[&(file, line)].len()
            ));
        }
        (view, fitted)
    }

    /// The file's offset of `at` as shown.
    fn original(&self, file: FileId, at: usize) -> usize {
        self.escaped.get(&file).map_or(at, |e| e.original(at))
    }

    /// [`Files::line_range`] in the file's offsets.
    fn original_line_range(&self, id: FileId, line_index: usize) -> Result<Range<usize>, Error> {
        if let Some(window) = self.windows.get(&(id, line_index)) {
            return Ok(window.clone());
        }
        let range = self.sources.line_range(id, line_index)?;
        if range.len() <= MAX_LINE_BYTES {
            return Ok(range);
        }
        let content = self.content_range(id, line_index);
        Ok(window(&self.text(id)[..content.end], content.clone(), content.start))
    }

    fn anchored_by_primary(&self, diagnostic: &Diagnostic, key: (FileId, usize)) -> bool {
        diagnostic
            .primary_span()
            .is_some_and(|p| (p.file, self.line_of(p.file, p.start as usize)) == key)
    }

    fn text(&self, file: FileId) -> &'a str {
        &self.sources.get(file).text
    }

    fn line_of(&self, file: FileId, at: usize) -> usize {
        self.sources.get(file).line_index(at)
    }

    /// A line without its line break.
    fn content_range(&self, file: FileId, line: usize) -> Range<usize> {
        let range = self.sources.get(file).line_range(line).unwrap_or(0..0);
        let text = &self.text(file)[range.clone()];
        range.start..range.start + text.trim_end_matches(['\n', '\r']).len()
    }

    fn on_long_line(&self, span: Span) -> bool {
        let file = self.sources.get(span.file);
        [span.start, span.end].iter().any(|&at| {
            let line = file.line_index(at as usize);
            self.content_range(span.file, line).len() > MAX_LINE_BYTES
        })
    }

    /// The span cut to the windows of its lines, or `None` when it starts
    /// or ends before a window (it is then named in a note).
    fn fit(&self, span: Span) -> Option<Span> {
        let start_line = self.line_of(span.file, span.start as usize);
        let end_line = self.line_of(span.file, span.end as usize);
        let mut fitted = span;
        if let Some(w) = self.windows.get(&(span.file, start_line)) {
            if !w.contains(&(span.start as usize)) && span.start as usize != w.end {
                return None;
            }
            if start_line == end_line {
                fitted.end = fitted.end.min(w.end as u32);
                return Some(fitted);
            }
        }
        if let Some(w) = self.windows.get(&(span.file, end_line)) {
            if (span.end as usize) < w.start {
                return None;
            }
            fitted.end = fitted.end.min(w.end as u32);
        }
        Some(fitted)
    }
}

/// `MAX_LINE_BYTES` of `line` (a range of `text`) starting a little before
/// `anchor`, on character boundaries.
fn window(text: &str, line: Range<usize>, anchor: usize) -> Range<usize> {
    let mut start = anchor.saturating_sub(CONTEXT_BYTES).max(line.start);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + MAX_LINE_BYTES).min(line.end);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    // Near the end of the line, show more of what comes before instead.
    if end == line.end {
        start = start.min(end.saturating_sub(MAX_LINE_BYTES).max(line.start));
        while !text.is_char_boundary(start) {
            start += 1;
        }
    }
    start..end
}

impl<'a> Files<'a> for Clipped<'a> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, Error> {
        self.sources.name(id)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, Error> {
        match self.escaped.get(&id) {
            Some(escaped) => Ok(&escaped.text),
            None => self.sources.source(id),
        }
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, Error> {
        self.sources.line_index(id, self.original(id, byte_index))
    }

    /// A labelled long line is its window; any other long line (context
    /// around a label) its first `MAX_LINE_BYTES`.
    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, Error> {
        let range = self.original_line_range(id, line_index)?;
        Ok(match self.escaped.get(&id) {
            Some(escaped) => escaped.shown(range.start)..escaped.shown(range.end),
            None => range,
        })
    }

    /// Columns count from the real start of the line, not the window's, in
    /// the file's characters (an escape is one).
    fn column_number(&'a self, id: FileId, line_index: usize, byte_index: usize) -> Result<usize, Error> {
        let byte_index = self.original(id, byte_index);
        let range = self.sources.line_range(id, line_index)?;
        let text = self.text(id);
        let end = byte_index.clamp(range.start, range.end);
        Ok(text.get(range.start..end).map_or(0, |s| s.chars().count()) + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{render, Code, RenderStyle};

    #[test]
    fn a_huge_line_is_shown_cut_around_its_label() {
        let mut sources = SourceMap::new();
        let text = format!("let a = 1\nlet x = \"{}\nlet b = 2\n", "y".repeat(1_000_000));
        let file = sources.add("big.exp", text.clone());
        let start = text.find('"').unwrap();
        let end = text[start..].find('\n').unwrap() + start;
        let d = Diagnostic::error(Code::E0102, "unterminated string")
            .primary(Span::new(file, start..end), "this string is never closed")
            .secondary(Span::new(file, end - 10..end - 9), "far away");
        let out = render(&d, &sources, RenderStyle::Plain);
        assert!(out.len() < 2_000, "{} bytes:\n{out}", out.len());
        assert!(out.contains("big.exp:2:9"), "{out}");
        assert!(
            out.contains("line 2 of big.exp is 1,000,009 bytes long; 160 of them are shown"),
            "{out}"
        );
        assert!(out.contains("far away (at big.exp:2:"), "{out}");
    }

    #[test]
    fn multibyte_characters_are_not_split() {
        let mut sources = SourceMap::new();
        let text = format!("x = \"{}", "é".repeat(500));
        let file = sources.add("u.exp", text.clone());
        let d = Diagnostic::error(Code::E0102, "unterminated").primary(Span::new(file, 4..text.len()), "open");
        let out = render(&d, &sources, RenderStyle::Plain);
        assert!(out.len() < 2_000, "{out}");
        assert!(out.contains("u.exp:1:5"), "{out}");
    }

    #[test]
    fn bidirectional_controls_are_shown_escaped() {
        let mut sources = SourceMap::new();
        let text = "let x = \"\u{202E}a\" // \u{2066}\nlet y = 2\n";
        let file = sources.add("b.exp", text);
        let at = text.find('a').unwrap();
        let d = Diagnostic::error(Code::E0101, "bad \u{202E}")
            .primary(Span::new(file, at..at + 1), "here")
            .secondary(
                Span::new(file, text.find('y').unwrap()..text.find('y').unwrap() + 1),
                "and \u{2066}",
            );
        let out = render(&d, &sources, RenderStyle::Plain);
        assert!(!out.contains(['\u{202E}', '\u{2066}']), "{out}");
        assert!(out.contains("error[E0101]: bad \\u{202E}"), "{out}");
        // The column is the file's: the escape counts as one character.
        assert!(out.contains("b.exp:1:11"), "{out}");
        assert!(out.contains("let x = \"\\u{202E}a\" // \\u{2066}"), "{out}");
        assert!(out.contains("and \\u{2066}"), "{out}");
        let caret_line = out.lines().find(|l| l.contains("^ here")).unwrap();
        let source_line = out.lines().find(|l| l.contains("let x")).unwrap();
        assert_eq!(caret_line.find('^'), source_line.find("a\""), "{out}");
    }

    #[test]
    fn short_lines_are_untouched() {
        let mut sources = SourceMap::new();
        let file = sources.add("s.exp", "let x = 1\n");
        let d = Diagnostic::error(Code::E0101, "bad").primary(Span::new(file, 4..5), "here");
        let (view, fitted) = Clipped::new(&sources, &d);
        assert!(view.windows.is_empty());
        assert_eq!(fitted, d);
    }
}
