//! The bounded reader: every file a user names or a spec imports is read
//! through [`open_regular`] (to stream it) or [`read_bytes`] / [`read_text`]
//! (to hold it, up to a cap).
//!
//! 1. `stat` the path (following links): anything but a regular file is
//!    refused before it is opened, since opening a device can block or have
//!    effects (a tape rewinds, a terminal becomes the controlling one).
//! 2. Open with `O_NONBLOCK | O_NOCTTY`: if the path was replaced by a FIFO
//!    since, the open returns at once instead of waiting for a writer.
//! 3. `fstat` the opened descriptor and refuse it again unless it is a
//!    regular file: what is read is what was checked.
//! 4. Refuse a size over the cap, then read at most cap + 1 bytes, so a
//!    file that grows while it is read (or claims a size of 0, as `/proc`
//!    files do) is refused too.
//!
//! `O_NONBLOCK` changes nothing for a regular file's reads.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::kind::{binary, describe, group};

/// The most bytes one file may have, and what the file is for the message
/// ("a file", "a plan", "a secret file").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    pub bytes: u64,
    pub what: &'static str,
}

impl Cap {
    pub const fn new(bytes: u64, what: &'static str) -> Cap {
        Cap { bytes, what }
    }
}

/// Why a file was not read. The messages name no path: the caller says
/// which file (`cannot read PATH: …`, a diagnostic's label).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A directory, FIFO, device or socket; the text names which.
    #[error("not a regular file but {0}")]
    NotRegular(&'static str),
    /// Larger than the cap: `size` when the file said so before it was
    /// read, `None` when it only showed while reading.
    #[error("{}more than the {} {} may have", size.map(|s| format!("{} bytes, ", group(s))).unwrap_or_default(), binary(cap.bytes), cap.what)]
    TooLarge { size: Option<u64>, cap: Cap },
    #[error("not UTF-8 text")]
    NotUtf8,
}

impl ReadError {
    /// The path does not exist (a dangling link included).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// For readers whose interface is `io::Result` (the compiler's `Loader`):
/// the same message, in an `io::Error` of a fitting kind.
impl From<ReadError> for io::Error {
    fn from(error: ReadError) -> io::Error {
        let kind = match &error {
            ReadError::Io(e) => return io::Error::new(e.kind(), e.to_string()),
            ReadError::NotRegular(_) => io::ErrorKind::InvalidInput,
            ReadError::TooLarge { .. } | ReadError::NotUtf8 => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, error.to_string())
    }
}

/// An opened regular file and what `fstat` said of it.
#[derive(Debug)]
pub struct Regular {
    pub file: File,
    pub metadata: Metadata,
}

/// Opens `path` for reading if it is a regular file (links followed),
/// without ever blocking in `open`.
pub fn open_regular(path: &Path) -> Result<Regular, ReadError> {
    refuse_irregular(&std::fs::metadata(path)?)?;
    open_listed_regular(path)
}

/// [`open_regular`] for a path a directory listing or an earlier `stat`
/// already found to be a regular file: no second `stat` before the `open`
/// (on a corpus of 20,000 small files it was a fifth of the CPU); the
/// `fstat` of the opened descriptor still refuses anything else, and the
/// open still cannot block.
pub fn open_listed_regular(path: &Path) -> Result<Regular, ReadError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    refuse_irregular(&metadata)?;
    Ok(Regular { file, metadata })
}

fn refuse_irregular(metadata: &Metadata) -> Result<(), ReadError> {
    match metadata.is_file() {
        true => Ok(()),
        false => Err(ReadError::NotRegular(describe(&metadata.file_type()))),
    }
}

impl Regular {
    /// The whole file, if it has at most `cap.bytes`.
    pub fn read_bytes(mut self, cap: Cap) -> Result<Vec<u8>, ReadError> {
        let size = self.metadata.len();
        if size > cap.bytes {
            return Err(ReadError::TooLarge { size: Some(size), cap });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        (&mut self.file).take(cap.bytes + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > cap.bytes {
            return Err(ReadError::TooLarge { size: None, cap });
        }
        Ok(bytes)
    }

    /// The whole file as UTF-8 text, if it has at most `cap.bytes`.
    pub fn read_text(self, cap: Cap) -> Result<String, ReadError> {
        String::from_utf8(self.read_bytes(cap)?).map_err(|_| ReadError::NotUtf8)
    }
}

/// The bytes of the regular file `path`, at most `cap.bytes` of them.
pub fn read_bytes(path: &Path, cap: Cap) -> Result<Vec<u8>, ReadError> {
    open_regular(path)?.read_bytes(cap)
}

/// The UTF-8 text of the regular file `path`, at most `cap.bytes` of it.
pub fn read_text(path: &Path, cap: Cap) -> Result<String, ReadError> {
    open_regular(path)?.read_text(cap)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    const CAP: Cap = Cap::new(16, "a test file");

    #[test]
    fn regular_files_up_to_the_cap_are_read() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("ok");
        std::fs::write(&path, "sixteen bytes ok").expect("written");
        assert_eq!(read_text(&path, CAP).expect("read"), "sixteen bytes ok");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("ok", &link).expect("link");
        assert_eq!(read_bytes(&link, CAP).expect("read through the link").len(), 16);
    }

    #[test]
    fn larger_files_devices_fifos_and_directories_are_refused() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let big = dir.path().join("big");
        std::fs::write(&big, "seventeen bytes!!").expect("written");
        let error = read_text(&big, CAP).expect_err("too large");
        assert_eq!(
            error.to_string(),
            "17 bytes, more than the 16 bytes a test file may have"
        );
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        // No writer: a blocking open would wait here forever.
        let started = Instant::now();
        let error = read_text(&fifo, CAP).expect_err("a FIFO");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(error.to_string(), "not a regular file but a FIFO");
        let cases = [
            ("/dev/zero", "not a regular file but a character device"),
            ("/", "not a regular file but a directory"),
        ];
        for (path, message) in cases {
            let error = read_bytes(Path::new(path), CAP).expect_err(path);
            assert_eq!(error.to_string(), message);
            assert!(matches!(error, ReadError::NotRegular(_)));
        }
        let missing = read_bytes(&dir.path().join("missing"), CAP).expect_err("missing");
        assert!(missing.is_not_found());
        std::fs::write(dir.path().join("latin1"), b"caf\xe9").expect("written");
        let error = read_text(&dir.path().join("latin1"), CAP).expect_err("not UTF-8");
        assert_eq!(io::Error::from(error).kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn a_file_larger_than_it_says_is_cut_at_the_cap() {
        // /proc files say 0 bytes; this one has hundreds.
        let error = read_bytes(Path::new("/proc/self/status"), CAP).expect_err("more than 16 bytes");
        assert_eq!(error.to_string(), "more than the 16 bytes a test file may have");
    }
}
