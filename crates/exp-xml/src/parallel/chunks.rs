//! One large input read on several threads: cut into parts at guessed
//! document starts, each part read into its own [`Extractor`], the guesses
//! checked, the parts merged in order.
//!
//! A guess is the first `<split_at` tag (followed by a space, `/` or `>`)
//! a byte search finds after the part's nominal start. The scan of each
//! part stops at the next part's guess and checks that a document starts
//! exactly there (see `parse/scanner/part.rs`); the first part is scanned
//! from the input's start, so by induction every part then reads what one
//! scan of the whole input reads in that range. When a guess is wrong — a
//! tag in a comment or CDATA, deeper than the documents, an input that
//! stops being readable — the parts are dropped and the caller reads the
//! input whole on one thread: the cost of a wrong guess is time, never a
//! different result.
//!
//! Only plain files and memory are cut (a compressed stream cannot be
//! entered in the middle), only with `split_at`, and only when each
//! thread gets parts of at least [`MIN_PART`] bytes.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use memchr::memmem;

use super::in_order;
use crate::inputs::{open, Unit, READ_BUF};
use crate::parse::Scanner;
use crate::{Config, Extractor, XmlError};

/// Smallest part: below this a part's merge costs more than its thread
/// gains.
const MIN_PART: u64 = 512 * 1024;

/// Parts per thread, so that the threads finish close together.
const PARTS_PER_THREAD: u64 = 4;

/// Bytes read at a time when looking for a document start.
const WINDOW: usize = 64 * 1024;

/// An input that can be entered at any byte.
enum Whole<'a> {
    File { path: &'a std::path::Path, name: String },
    Memory { name: &'a str, data: &'a [u8] },
}

impl Whole<'_> {
    fn name(&self) -> &str {
        match self {
            Whole::File { name, .. } => name,
            Whole::Memory { name, .. } => name,
        }
    }

    /// A reader from byte `offset` on.
    fn reader_at(&self, offset: u64) -> Result<Box<dyn BufRead + '_>, XmlError> {
        match self {
            Whole::File { path, .. } => {
                let mut file = open(path)?;
                file.seek(SeekFrom::Start(offset)).map_err(|source| XmlError::Open {
                    path: path.to_path_buf(),
                    source,
                })?;
                Ok(Box::new(BufReader::with_capacity(READ_BUF, file)))
            }
            Whole::Memory { data, .. } => {
                let from = usize::try_from(offset).unwrap_or(usize::MAX).min(data.len());
                Ok(Box::new(data.get(from..).unwrap_or_default()))
            }
        }
    }
}

/// Reads `unit` in parts on `threads` threads; `None` when it cannot be
/// cut, or a guessed document start did not check out (then read it
/// whole).
pub(super) fn run(unit: &Unit<'_>, config: &Config, threads: usize) -> Result<Option<Extractor>, XmlError> {
    let Some(split_at) = config.split_at.as_deref() else {
        return Ok(None);
    };
    let (whole, len) = match unit {
        Unit::Plain(path) => {
            let file = open(path)?;
            let len = file.metadata().map_or(0, |m| m.len());
            let name = path.display().to_string();
            (Whole::File { path, name }, len)
        }
        Unit::Memory { name, data } => (Whole::Memory { name, data }, data.len() as u64),
        _ => return Ok(None),
    };
    let parts = (threads as u64 * PARTS_PER_THREAD).min(len / MIN_PART);
    if threads < 2 || parts < 2 {
        return Ok(None);
    }
    let starts = guess_starts(&whole, split_at, len, parts)?;
    if starts.len() < 2 {
        return Ok(None);
    }
    let mut total = Extractor::new(config);
    let mut checked = true;
    in_order(
        threads,
        starts.len(),
        |i| read_part(&whole, config, split_at, &starts, i),
        |part| match part {
            Ok(Some(part)) => {
                total.merge(part);
                true
            }
            // A wrong guess, or an input that cannot be reopened: the whole
            // input is read again on one thread, which reports it as a
            // serial run would.
            Ok(None) | Err(_) => {
                checked = false;
                false
            }
        },
    );
    Ok(checked.then_some(total))
}

/// Part `i`: from `starts[i]` up to `starts[i + 1]` (the last to the end);
/// `None` when it did not end at a document start.
fn read_part(
    whole: &Whole<'_>,
    config: &Config,
    split_at: &str,
    starts: &[u64],
    i: usize,
) -> Result<Option<Extractor>, XmlError> {
    let start = starts.get(i).copied().unwrap_or(0);
    let source = whole.reader_at(start)?;
    let mut part = Extractor::new(config);
    let mut scanner = match i {
        0 => Scanner::new(whole.name(), source, Some(split_at)),
        _ => Scanner::resume(whole.name(), source, split_at, start),
    };
    let end = starts.get(i + 1).copied();
    if let Some(end) = end {
        scanner.stop_at(end);
    }
    part.read(&mut scanner);
    if i == 0 {
        part.note_root(scanner.root());
    }
    Ok((end.is_none() || scanner.reached_boundary()).then_some(part))
}

/// Where the parts start: 0, then for each further nominal start
/// `len * k / parts` the first `<split_at` tag at or after it (and before
/// the next nominal start).
fn guess_starts(whole: &Whole<'_>, split_at: &str, len: u64, parts: u64) -> Result<Vec<u64>, XmlError> {
    let needle = format!("<{split_at}");
    let finder = memmem::Finder::new(needle.as_bytes());
    let mut starts = vec![0];
    let mut window = Vec::new();
    for k in 1..parts {
        let (from, to) = (len * k / parts, len * (k + 1) / parts);
        if let Some(at) = find_tag(whole, &finder, from, to, &mut window)? {
            if starts.last().is_some_and(|&last| at > last) {
                starts.push(at);
            }
        }
    }
    Ok(starts)
}

/// The first tag `finder` finds starting in `from..to`, followed by a byte
/// that ends a name.
fn find_tag(
    whole: &Whole<'_>,
    finder: &memmem::Finder<'_>,
    from: u64,
    to: u64,
    window: &mut Vec<u8>,
) -> Result<Option<u64>, XmlError> {
    let reach = finder.needle().len() as u64 + 1;
    let mut at = from;
    while at < to {
        // Each window overlaps the next by a tag's length, so a tag across
        // two windows is found.
        let want = (to - at + reach).min(WINDOW as u64);
        read_window(whole, at, want, window)?;
        let mut searched = 0;
        while let Some(hit) = finder.find(&window[searched..]) {
            let hit = searched + hit;
            let after = window.get(hit + finder.needle().len()).copied();
            if at + hit as u64 >= to {
                return Ok(None);
            }
            match after {
                Some(b' ' | b'\t' | b'\r' | b'\n' | b'/' | b'>') => return Ok(Some(at + hit as u64)),
                // The window ends right after the name: looked at again
                // from the next window.
                None => break,
                Some(_) => searched = hit + 1,
            }
        }
        if (window.len() as u64) < want {
            return Ok(None); // the input ended
        }
        at += (window.len() as u64).saturating_sub(reach).max(1);
    }
    Ok(None)
}

/// Up to `want` bytes of the input from `at` into `window`.
fn read_window(whole: &Whole<'_>, at: u64, want: u64, window: &mut Vec<u8>) -> Result<(), XmlError> {
    window.clear();
    match whole {
        Whole::File { path, .. } => {
            let mut file: File = open(path)?;
            file.seek(SeekFrom::Start(at))
                .and_then(|_| file.take(want).read_to_end(window))
                .map_err(|source| XmlError::Open {
                    path: path.to_path_buf(),
                    source,
                })?;
        }
        Whole::Memory { data, .. } => {
            let from = usize::try_from(at).unwrap_or(usize::MAX).min(data.len());
            let to = from
                .saturating_add(usize::try_from(want).unwrap_or(usize::MAX))
                .min(data.len());
            window.extend_from_slice(data.get(from..to).unwrap_or_default());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10,000 documents of about 150 bytes, `decoy` before each.
    fn corpus(decoy: &str) -> Vec<u8> {
        let mut s = String::from("<log>\n");
        for i in 0..10_000 {
            s.push_str(decoy);
            s.push_str(&format!(
                "<event id='{i}'><size>{}</size><status>{}</status><note>{:>80}</note></event>\n",
                i * 37 % 1000,
                ["ok", "retry"][i % 2],
                "padding"
            ));
        }
        s.push_str("</log>\n");
        s.into_bytes()
    }

    fn parts(data: &[u8]) -> Option<Extractor> {
        let unit = Unit::Memory { name: "log", data };
        let config = Config {
            split_at: Some("event".into()),
            threads: 2,
            ..Config::default()
        };
        run(&unit, &config, 2).expect("memory reads")
    }

    #[test]
    fn a_large_input_is_read_in_parts() {
        let data = corpus("");
        assert!(data.len() as u64 > 2 * MIN_PART);
        assert!(parts(&data).is_some(), "the guesses check out");
    }

    #[test]
    fn a_wrong_guess_drops_the_parts() {
        // Every guess lands on the comment's tag.
        assert!(parts(&corpus("<!-- <event id='x'> -->")).is_none());
    }

    #[test]
    fn guesses_are_tags_of_the_split_element() {
        let data = b"<log><events/><eventful/><event id='1'/><event/></log>";
        let whole = Whole::Memory { name: "log", data };
        let finder = memmem::Finder::new(b"<event");
        let mut window = Vec::new();
        let find = |from, to, window: &mut Vec<u8>| find_tag(&whole, &finder, from, to, window).expect("memory");
        assert_eq!(find(0, data.len() as u64, &mut window), Some(25));
        assert_eq!(find(26, data.len() as u64, &mut window), Some(40));
        assert_eq!(find(26, 40, &mut window), None);
    }
}
