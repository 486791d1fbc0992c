//! The output rule: how every command writes a path the user names
//! (`report --html`, `plan -o`, `test --junit`, `traffic synth -o`,
//! `traffic convert`, `xml reveal -o`, `fmt` in place, snapshots).
//!
//! * A symbolic link is followed (up to 40 links): its target is what is
//!   written, by the rules below, and the link stays a link.
//! * A regular file, or a path where nothing is yet, is written whole or not
//!   at all: into a temporary file beside it (created exclusively), synced,
//!   then renamed over it. An existing file keeps its mode (and, when
//!   running as root, its owner); a hard link to it keeps the old bytes.
//!   Missing parent directories are created.
//! * A character device or a FIFO is written through, streamed, never
//!   replaced: `--html /dev/null` is the usual dry try, `/dev/full` fails
//!   with "No space left on device". A FIFO is opened without blocking
//!   first: with no reader it is an error, not a hang.
//! * Anything else (a directory, a block device, a socket) is refused.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::kind::describe;

/// Most symbolic links followed from a named path, as the kernel allows.
const MAX_LINKS: usize = 40;

/// Why an output was not written. Each message names the path given.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// A directory, block device or socket (or a link to one).
    #[error("cannot write {}: it is {kind}; an output is a regular file, a character device or a FIFO", path.display())]
    NotWritable { path: PathBuf, kind: &'static str },
    /// An output directory that exists as something else.
    #[error("cannot write into {}: it is {kind}, not a directory", path.display())]
    NotADirectory { path: PathBuf, kind: &'static str },
    #[error("cannot write {}: it is a FIFO with no reader (start the reader first)", path.display())]
    NoReader { path: PathBuf },
}

impl WriteError {
    fn io(path: &Path) -> impl FnOnce(io::Error) -> WriteError + '_ {
        move |source| WriteError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// An output being written; [`Output::commit`] finishes it. Dropped
/// without a commit, a regular file's temporary is removed and the target
/// is as it was.
#[derive(Debug)]
pub struct Output {
    /// The path as the user gave it, for messages.
    named: PathBuf,
    file: BufWriter<File>,
    /// `Some((temporary, target))` for a file replaced by a rename.
    replace: Option<(PathBuf, PathBuf)>,
}

/// Opens the output `path` by the rule above.
pub fn create(path: &Path) -> Result<Output, WriteError> {
    let target = follow_links(path).map_err(WriteError::io(path))?;
    match fs::symlink_metadata(&target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => replacing(path, target, None),
        Err(e) => Err(WriteError::io(path)(e)),
        Ok(metadata) if metadata.is_file() => replacing(path, target, Some(metadata)),
        Ok(metadata) if streams(&metadata) => through(path, &target),
        Ok(metadata) => Err(WriteError::NotWritable {
            path: path.to_path_buf(),
            kind: describe(&metadata.file_type()),
        }),
    }
}

/// Writes `bytes` to the output `path` by the rule above.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let mut output = create(path)?;
    output.write_all(bytes).map_err(WriteError::io(path))?;
    output.commit()
}

/// Checks an output directory before anything is written: absent, or a
/// directory (or a link to one). Anything else, a link to nothing
/// included, is refused, never replaced.
pub fn check_dir(path: &Path) -> Result<(), WriteError> {
    let refuse = |kind| {
        Err(WriteError::NotADirectory {
            path: path.to_path_buf(),
            kind,
        })
    };
    match fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => Ok(()),
        Ok(metadata) => refuse(describe(&metadata.file_type())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::symlink_metadata(path) {
            Ok(_) => refuse("a symbolic link to nothing"),
            Err(_) => Ok(()),
        },
        Err(e) => Err(WriteError::io(path)(e)),
    }
}

/// Makes the output directory `path` (and its parents) unless it exists;
/// refused as [`check_dir`] refuses.
pub fn create_dir(path: &Path) -> Result<(), WriteError> {
    check_dir(path)?;
    fs::create_dir_all(path).map_err(WriteError::io(path))
}

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.file.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Output {
    /// Finishes the output: a replaced file is synced and renamed into
    /// place; a device or FIFO gets what is still buffered. An error here
    /// (ENOSPC, EIO) means the target was not written (or, for a device,
    /// not completely).
    pub fn commit(mut self) -> Result<(), WriteError> {
        let named = self.named.clone();
        self.file.flush().map_err(WriteError::io(&named))?;
        let Some((temporary, target)) = self.replace.take() else {
            return Ok(());
        };
        let renamed = self
            .file
            .get_ref()
            .sync_all()
            .and_then(|()| fs::rename(&temporary, &target));
        if let Err(e) = renamed {
            let _ = fs::remove_file(&temporary);
            return Err(WriteError::io(&named)(e));
        }
        // The rename itself lasts once the directory is synced; a file
        // system that cannot sync directories still has the file.
        let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
        let _ = File::open(dir.unwrap_or(Path::new("."))).and_then(|d| d.sync_all());
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some((temporary, _)) = self.replace.take() {
            let _ = fs::remove_file(temporary);
        }
    }
}

/// The path `path` leads to after its symbolic links (itself if it is none).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&at) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = fs::read_link(&at)?;
                // Relative to the link's folder; an absolute target replaces it.
                at = at.parent().map_or_else(|| target.clone(), |dir| dir.join(&target));
            }
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => return Ok(at),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// A character device or FIFO: written through, not replaced.
fn streams(metadata: &Metadata) -> bool {
    let kind = metadata.file_type();
    kind.is_char_device() || kind.is_fifo()
}

/// A temporary file beside `target`, renamed over it on commit.
fn replacing(named: &Path, target: PathBuf, old: Option<Metadata>) -> Result<Output, WriteError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let fail = WriteError::io(named);
    let Some(name) = target.file_name() else {
        return Err(fail(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file",
        )));
    };
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(WriteError::io(named))?;
    }
    let temporary = target.with_file_name(format!(
        ".{}.{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(&temporary)
        .map_err(WriteError::io(named))?;
    if let Some(old) = old {
        let kept = file.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777));
        // Only root may give the file back to its owner; others own what they write.
        let _ = std::os::unix::fs::fchown(&file, Some(old.uid()), Some(old.gid()));
        if let Err(e) = kept {
            let _ = fs::remove_file(&temporary);
            return Err(WriteError::io(named)(e));
        }
    }
    Ok(Output {
        named: named.to_path_buf(),
        file: BufWriter::new(file),
        replace: Some((temporary, target)),
    })
}

/// Opens a character device or FIFO for writing through. The first open is
/// non-blocking, so a FIFO without a reader fails at once (ENXIO); the
/// second, blocking one (writes then wait for a slow reader instead of
/// failing with EAGAIN) must reach the same file.
fn through(named: &Path, target: &Path) -> Result<Output, WriteError> {
    let open = |flags| {
        OpenOptions::new()
            .write(true)
            .custom_flags(flags | libc::O_NOCTTY)
            .open(target)
    };
    let probe = open(libc::O_NONBLOCK).map_err(|e| match e.raw_os_error() {
        Some(libc::ENXIO) => WriteError::NoReader {
            path: named.to_path_buf(),
        },
        _ => WriteError::io(named)(e),
    })?;
    let replaced = || WriteError::io(named)(io::Error::other("it was replaced while being opened"));
    let probed = probe.metadata().map_err(WriteError::io(named))?;
    if !streams(&probed) {
        return Err(replaced());
    }
    let file = open(0).map_err(WriteError::io(named))?;
    let opened = file.metadata().map_err(WriteError::io(named))?;
    if (opened.dev(), opened.ino()) != (probed.dev(), probed.ino()) {
        return Err(replaced());
    }
    Ok(Output {
        named: named.to_path_buf(),
        file: BufWriter::new(file),
        replace: None,
    })
}
