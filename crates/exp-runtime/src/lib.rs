//! Runs plans: preflight, trials in order on a shared clock, workload
//! executors, the system monitor, cancellation and progress events.
//!
//! Nothing here prints: progress goes out as [`Event`]s and problems as
//! typed errors and diagnostics; the CLI renders both.

mod anomaly;
pub mod cancel;
pub mod clock;
pub mod events;
mod executor;
mod fleet;
mod monitor;
pub mod preflight;
mod repeat;
mod run;
pub mod schedule;
pub mod selection;
pub mod signals;
mod traffic;
mod trials;
mod xml;

pub use cancel::{Cancel, Level};
pub use events::{Event, Events};
pub use executor::{ExecError, WorkloadSummary};
pub use preflight::{preflight, PreflightInput, PreflightIssue};
pub use run::{run, RunError, RunOptions, RunOutcome};
pub use selection::{SelectionError, TrialSelection};
