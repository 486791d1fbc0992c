//! A file mapped into memory, so that column chunks are decoded in place:
//! no read into a fresh buffer per chunk (copying it, and faulting in
//! every page of the buffer) before decompressing.

#![allow(unsafe_code)]

use std::fs::File;
use std::io;

use bytes::Bytes;

/// The file's bytes, mapped read-only.
pub(crate) fn map(file: &File) -> io::Result<Bytes> {
    if file.metadata()?.len() == 0 {
        // Nothing to map (mmap refuses a length of 0); the reader says it is not Parquet.
        return Ok(Bytes::new());
    }
    // SAFETY: the mapping is read-only and private to this process. Parquet
    // files expc reads are written whole under a temporary name and renamed
    // into place, never changed after; a file truncated by someone else
    // while mapped would fault (SIGBUS), as it would have under polars,
    // which read them the same way.
    let map = unsafe { memmap2::Mmap::map(file)? };
    Ok(Bytes::from_owner(map))
}
