//! Files a user names on the command line or a spec names: the one way expc
//! reads them and the one way it writes them
//! ([0020](../../../docs/decisions/0020-user-named-files.md)).
//!
//! Reading ([`read`]): only regular files, opened without blocking (a FIFO
//! with no writer is refused, never waited on), checked on the opened file
//! descriptor (no race between a look and the open), and never more than a
//! cap the caller gives plus one byte (`/dev/zero`, a `/proc` file or a file
//! that grows while read cannot exceed it).
//!
//! Writing ([`write`]): a regular file (or a missing one) is written whole
//! or not at all, through a temporary file renamed over it; a symbolic link
//! is followed and its target written by the same rule; a character device
//! or a FIFO is written through (so `--html /dev/null` is a dry try and
//! `/dev/full` fails with ENOSPC); anything else (a directory, a block
//! device, a socket) is refused.
//!
//! A small crate with no workspace dependency, so the compiler, the language
//! server, the XML, traffic and MQTT crates and `expc` all use it.

mod kind;
pub mod read;
pub mod write;

pub use kind::describe;
pub use read::{open_listed_regular, open_regular, read_bytes, read_text, Cap, ReadError, Regular};
pub use write::{check_dir, create, create_dir, write_file, Output, WriteError};
