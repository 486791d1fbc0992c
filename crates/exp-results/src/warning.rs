//! What could not be used in a run directory, kept to be shown: written by
//! the readers (read.rs, the journal's replay) and kept in the manifest as
//! read (`read_warnings`), apart from both.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Something in a run directory that could not be used; reports show it
/// and go on with the rest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl Warning {
    pub(crate) fn new(path: &Path, message: impl Into<String>) -> Self {
        Warning {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
