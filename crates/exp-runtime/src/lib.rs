//! Runs plans: preflight, trials in order on a shared clock, workload
//! executors, the system monitor, cancellation and progress events.
//!
//! Nothing here prints: progress goes out as [`Event`]s and problems as
//! typed errors and diagnostics; the CLI renders both.

mod abort;
mod anomaly;
mod audit;
pub mod cancel;
mod claims;
pub mod clock;
pub mod events;
mod executor;
mod findings;
mod fleet;
mod kinds;
pub mod live;
mod monitor;
mod plan_limits;
mod points;
pub mod preflight;
mod repeat;
mod replacement;
pub mod resume;
mod run;
mod run_context;
pub mod schedule;
pub mod selection;
pub mod shard;
pub mod signals;
pub mod split;
mod traffic;
mod trial;
mod trials_table;
mod xml;
// kind-list: runtime modules

pub use cancel::{Cancel, Level};
pub use events::{Event, Events};
pub use executor::{ExecError, WorkloadSummary, MONITOR_TABLE};
pub use kinds::activity_table;
pub use preflight::{preflight, PreflightInput, PreflightIssue};
pub use run::{check_time_scale, resume, run, RunOutcome};
pub use run_context::{RunError, RunOptions, MAX_TIME_SCALE};
pub use selection::{SelectionError, TrialSelection};
pub use shard::{shard_trials, ShardSpec};
