//! Reading a run directory back into summaries: per-trial statistics of
//! every table ([`summarize`]), the MQTT fleet report ([`mqtt_report`]) and
//! the traffic report ([`traffic_report`]).
//!
//! A run is opened with [`exp_results::open_run`]; tables are found by the
//! names and columns in [`exp_results::schemas`], which the executors write.
//! Files that cannot be read are left out with a [`exp_results::Warning`];
//! nothing here prints, and errors are [`ResultsError`]s.

mod columns;
pub mod mqtt;
pub mod summary;
pub mod traffic;

pub use exp_results::ResultsError;
pub use mqtt::{mqtt_report, FleetReport, MqttReport, MqttTrial};
pub use summary::{summarize, ColumnSummary, RunSummary, TableSummary, TrialSummary, TIME_COLUMN};
pub use traffic::{traffic_report, TrafficGroup, TrafficReport};
