//! What generating documents can fail with, apart from the modules that
//! plan (plan.rs) and write (output.rs) them, which both return it.

use std::io;
use std::path::PathBuf;

/// A generation that could not be planned or written.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("invalid generation options: {0}")]
    Options(String),
    #[error("cannot write `{path}`: {source}")]
    File {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write the output: {0}")]
    Write(#[source] io::Error),
}
