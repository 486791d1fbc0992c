//! How the expc that ran a run was built, for the manifest's `build`.

use serde::{Deserialize, Serialize};

/// What a run's measurements depend on besides the spec and the host.
/// `None` where it is not known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildRecord {
    /// The git commit built from (`build.rs`; uncommitted changes are not seen).
    pub commit: Option<String>,
    /// The C compiler of the anomaly kernels: path and `--version`'s first line.
    pub c_compiler: Option<String>,
    /// The flags the kernels were compiled with.
    pub c_flags: Option<String>,
}

impl BuildRecord {
    /// This build's commit; the kernels' compiler is filled in by the
    /// runtime, which links them.
    pub fn of_this_expc() -> BuildRecord {
        BuildRecord {
            commit: option_env!("EXPC_COMMIT").map(str::to_string),
            ..BuildRecord::default()
        }
    }
}
