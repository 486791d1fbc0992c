//! How a run stands, as its manifest says (and as readers judge it).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
    Failed,
    /// The runner died without finishing the run (kill -9, power loss,
    /// OOM killer): a reader found its manifest `running` behind a free
    /// runner lock. Never written by a runner itself.
    Crashed,
    /// A sharded run some of whose shards have not run (or not yet):
    /// readers' verdict on the fragments they found, never written by a
    /// runner.
    Incomplete,
}

impl RunStatus {
    /// The name used in `manifest.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Crashed => "crashed",
            RunStatus::Incomplete => "incomplete",
        }
    }
}
