//! Reading a run directory back into summaries: per-trial statistics of
//! every table ([`summarize`]), the MQTT fleet report ([`mqtt_report`]) and
//! the traffic report ([`traffic_report`]); and writing them out, as text
//! ([`text`]) or as one JSON document ([`json`]).
//!
//! A run is opened with [`exp_results::open_run`]; tables are found by the
//! names and columns in [`exp_results::schemas`], which the executors write.
//! Files that cannot be read are left out with a [`exp_results::Warning`].
//! Nothing here prints: the renderers return the text, and errors are
//! [`ResultsError`]s.

mod columns;
pub mod json;
pub mod mqtt;
pub mod summary;
pub mod text;
pub mod traffic;

pub use exp_results::ResultsError;
pub use mqtt::{mqtt_report, FleetReport, MqttReport, MqttTrial};
pub use summary::{summarize, ColumnSummary, RunSummary, TableSummary, TrialSummary, TIME_COLUMN};
pub use traffic::{traffic_report, TrafficGroup, TrafficReport};
