//! Corpus inputs: command-line arguments expanded to sources (files,
//! directories, glob patterns), and sources opened as readable units
//! (plain files, `.gz` streams, each entry of a `.zip` archive).
//!
//! A missing or unopenable file is a typed error (nothing sensible can be
//! extracted from a misspelt path). A compressed input that turns out to be
//! corrupt — a bad gzip stream, an archive that cannot be read, an entry
//! that fails to inflate — is recorded like a malformed document (input
//! name, byte position in the decompressed stream, reason) and the run goes
//! on with the next input.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::{Source, XmlError};

/// Read buffer per opened file; the lexer reads 256 KiB at a time.
pub(crate) const READ_BUF: usize = 256 * 1024;

/// File name endings picked up when walking a directory (case-insensitive).
const DIR_SUFFIXES: [&str; 3] = [".xml", ".gz", ".zip"];

/// Expands command-line inputs: a glob pattern (`corpus/*.xml`,
/// `logs/**/*.xml.gz`) to the files it matches, a directory to its
/// `.xml`, `.gz` and `.zip` files (recursively, sorted by path), anything
/// else to itself. Order is deterministic: arguments in order, each
/// expansion sorted.
pub fn expand_inputs<P: AsRef<Path>>(args: &[P]) -> Result<Vec<Source>, XmlError> {
    let mut sources = Vec::new();
    for arg in args {
        let arg = arg.as_ref();
        let text = arg.to_string_lossy();
        if text.contains(['*', '?', '[']) && !arg.exists() {
            let matches = glob::glob(&text).map_err(|e| XmlError::Config(format!("glob pattern `{text}`: {e}")))?;
            let mut files = Vec::new();
            for entry in matches {
                let path = entry.map_err(|e| XmlError::Open {
                    path: e.path().to_path_buf(),
                    source: io::Error::new(e.error().kind(), e.error().to_string()),
                })?;
                if path.is_dir() {
                    walk(&path, &mut files)?;
                } else {
                    files.push(path);
                }
            }
            if files.is_empty() {
                return Err(XmlError::Open {
                    path: arg.to_path_buf(),
                    source: io::Error::new(io::ErrorKind::NotFound, "no file matches the pattern"),
                });
            }
            files.sort_unstable_by(|a, b| listing_order(a, b));
            files.dedup();
            sources.extend(files.into_iter().map(Source::File));
        } else if arg.is_dir() {
            let mut files = Vec::new();
            walk(arg, &mut files)?;
            files.sort_unstable_by(|a, b| listing_order(a, b));
            sources.extend(files.into_iter().map(Source::File));
        } else {
            refuse_irregular(arg)?;
            sources.push(Source::File(arg.to_path_buf()));
        }
    }
    Ok(sources)
}

/// `Path`'s order (component by component) for the paths of one
/// expansion, which all start with the same argument's text and go on with
/// names joined by single slashes: their bytes compared with `/` below
/// every other byte order them alike (`a/x` before `a.b`, as the component
/// `a` is before `a.b`), without splitting each into components (on 20,000
/// files, `sort` spent a tenth of the extraction's CPU doing that).
fn listing_order(a: &Path, b: &Path) -> Ordering {
    fn bytes(path: &Path) -> impl Iterator<Item = u8> + '_ {
        let slash_first = |byte: &u8| if *byte == b'/' { 0 } else { *byte };
        path.as_os_str().as_bytes().iter().map(slash_first)
    }
    bytes(a).cmp(bytes(b))
}

/// A file named as an input must be a regular file (a directory is walked
/// above): `/dev/zero` would be read for ever, a FIFO block. Checked here,
/// before any input is read, and again when each is opened. A missing file
/// is reported when it is opened.
fn refuse_irregular(path: &Path) -> Result<(), XmlError> {
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => Err(XmlError::Open {
            path: path.to_path_buf(),
            source: exp_files::ReadError::NotRegular(exp_files::describe(&metadata.file_type())).into(),
        }),
        _ => Ok(()),
    }
}

/// Collects the corpus files under `dir`. Symbolic links to directories
/// are not followed (no cycles).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), XmlError> {
    let open_error = |source| XmlError::Open {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(open_error)? {
        let entry = entry.map_err(open_error)?;
        let path = entry.path();
        let kind = entry.file_type().map_err(open_error)?;
        if kind.is_dir() {
            walk(&path, out)?;
        } else if kind.is_file() || (kind.is_symlink() && path.is_file()) {
            // The entry's own type needs no `stat`; a link is followed.
            let name = entry.file_name().to_string_lossy().to_lowercase();
            if DIR_SUFFIXES.iter().any(|s| name.ends_with(s)) {
                out.push(path);
            }
        }
    }
    Ok(())
}

/// One readable input: a whole file, a gzip stream, an archive entry, or
/// memory.
#[derive(Debug, Clone)]
pub(crate) enum Unit<'a> {
    Plain(&'a Path),
    Gzip(&'a Path),
    ZipEntry {
        archive: &'a Path,
        index: usize,
        name: String,
    },
    /// An archive that cannot be listed: read as one failing input.
    BadArchive {
        archive: &'a Path,
        reason: String,
    },
    Memory {
        name: &'a str,
        data: &'a [u8],
    },
}

fn has_suffix(path: &Path, suffix: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case(suffix))
}

/// Through the bounded reader's open: only a regular file (`/dev/zero`
/// would be read forever, a FIFO would block), never blocking in `open`.
/// A corpus is streamed, so no size cap.
pub(crate) fn open(path: &Path) -> Result<File, XmlError> {
    exp_files::open_regular(path)
        .map(|regular| regular.file)
        .map_err(|e| XmlError::Open {
            path: path.to_path_buf(),
            source: e.into(),
        })
}

/// The units of `sources`, in order; archives are listed here (entries in
/// archive order, directories skipped).
pub(crate) fn units(sources: &[Source]) -> Result<Vec<Unit<'_>>, XmlError> {
    let mut units = Vec::new();
    for source in sources {
        match source {
            Source::Memory { name, data } => units.push(Unit::Memory { name, data }),
            Source::File(path) if has_suffix(path, "gz") => units.push(Unit::Gzip(path)),
            Source::File(path) if has_suffix(path, "zip") => {
                let file = open(path)?;
                match zip::ZipArchive::new(BufReader::new(file)) {
                    Ok(mut archive) => {
                        for index in 0..archive.len() {
                            let entry = match archive.by_index_raw(index) {
                                Ok(entry) if entry.is_dir() => continue,
                                Ok(entry) => entry.name().to_owned(),
                                Err(e) => format!("#{index} ({e})"),
                            };
                            units.push(Unit::ZipEntry {
                                archive: path,
                                index,
                                name: format!("{}:{entry}", path.display()),
                            });
                        }
                    }
                    Err(e) => units.push(Unit::BadArchive {
                        archive: path,
                        reason: format!("not a readable zip archive: {e}"),
                    }),
                }
            }
            Source::File(path) => units.push(Unit::Plain(path)),
        }
    }
    Ok(units)
}

/// A reader that fails at once: a corrupt input becomes a recorded I/O
/// skip at position 0 through the normal document reader.
struct Failing(Option<io::Error>);

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(self.0.take().unwrap_or_else(|| io::Error::other("unreadable input")))
    }
}

impl BufRead for Failing {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Err(self.0.take().unwrap_or_else(|| io::Error::other("unreadable input")))
    }

    fn consume(&mut self, _: usize) {}
}

/// Files up to this size are read whole into a buffer reused from one
/// input to the next (see [`Inputs`]).
const WHOLE_FILE: u64 = 1 << 20;

/// Reads inputs one after the other, reusing one buffer for small files:
/// on a corpus of one small document per file, a fresh [`READ_BUF`]
/// buffer per file cost more than reading it.
#[derive(Default)]
pub(crate) struct Inputs {
    buffer: Vec<u8>,
}

impl Inputs {
    /// Opens `unit` and hands its name and a reader to `f`.
    pub fn with<T>(&mut self, unit: &Unit<'_>, f: impl FnOnce(&str, &mut dyn BufRead) -> T) -> Result<T, XmlError> {
        let Unit::Plain(path) = unit else {
            return with_unit(unit, f);
        };
        // `expand_inputs` found every path regular (a listing's file type or
        // a `stat`); the `fstat` after `open` still refuses anything else.
        let regular = exp_files::open_listed_regular(path).map_err(|e| XmlError::Open {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let name = path.display().to_string();
        if regular.metadata.len() > WHOLE_FILE {
            return Ok(f(&name, &mut BufReader::with_capacity(READ_BUF, regular.file)));
        }
        self.buffer.clear();
        // As many bytes as `fstat` gave, through `Take`: it reads into
        // uninitialised room as `File` does, without `File::read_to_end`'s
        // extra `fstat` and `lseek`, and at its limit ends without the read
        // that would find the end (one `read` per small file, not two). A
        // file that grows meanwhile is read as it was when opened; one that
        // says 0 bytes (`/proc`) is read to its end.
        let size = regular.metadata.len();
        self.buffer.reserve(usize::try_from(size).unwrap_or(0));
        let limit = if size == 0 { u64::MAX } else { size };
        let mut file = regular.file;
        match (&mut file).take(limit).read_to_end(&mut self.buffer) {
            Ok(_) => Ok(f(&name, &mut &self.buffer[..])),
            // A read error comes after the bytes read before it, as from a
            // streamed file.
            Err(e) => Ok(f(&name, &mut (&self.buffer[..]).chain(Failing(Some(e))))),
        }
    }
}

/// Opens `unit` and hands its name and a reader to `f`.
pub(crate) fn with_unit<T>(unit: &Unit<'_>, f: impl FnOnce(&str, &mut dyn BufRead) -> T) -> Result<T, XmlError> {
    match unit {
        Unit::Memory { name, data } => Ok(f(name, &mut &data[..])),
        Unit::Plain(path) => {
            let file = open(path)?;
            Ok(f(
                &path.display().to_string(),
                &mut BufReader::with_capacity(READ_BUF, file),
            ))
        }
        Unit::Gzip(path) => {
            let file = open(path)?;
            // Multi-member streams (concatenated .gz files) read as one.
            let gz = flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(READ_BUF, file));
            Ok(f(
                &path.display().to_string(),
                &mut BufReader::with_capacity(READ_BUF, gz),
            ))
        }
        Unit::ZipEntry { archive, index, name } => {
            let file = open(archive)?;
            let mut zip = match zip::ZipArchive::new(BufReader::new(file)) {
                Ok(zip) => zip,
                Err(e) => return Ok(f(name, &mut Failing(Some(io::Error::other(e.to_string()))))),
            };
            let result = match zip.by_index(*index) {
                Ok(entry) => f(name, &mut BufReader::with_capacity(READ_BUF, entry)),
                Err(e) => f(name, &mut Failing(Some(io::Error::other(e.to_string())))),
            };
            Ok(result)
        }
        Unit::BadArchive { archive, reason } => Ok(f(
            &archive.display().to_string(),
            &mut Failing(Some(io::Error::other(reason.clone()))),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::listing_order;

    #[test]
    fn listing_order_is_the_order_of_paths() {
        // Names that order differently by bytes and by components, under
        // one argument's text (as it was typed, `./` and all).
        let names = [
            "a", "a.b", "a-b", "a/x", "a/x/y", "a.b/x", "a0", "b", "a b", "A", "é", "a/x.b", "a/x-b",
        ];
        for root in ["corpus", "./corpus", "/tmp/c.d", "corpus/./d"] {
            let paths: Vec<PathBuf> = names.iter().map(|n| PathBuf::from(root).join(n)).collect();
            for a in &paths {
                for b in &paths {
                    assert_eq!(listing_order(a, b), a.cmp(b), "{} against {}", a.display(), b.display());
                }
            }
        }
    }
}
