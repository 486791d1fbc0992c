//! Reading a run directory back into summaries: per-trial statistics of
//! every table ([`summarize`]), the MQTT fleet report ([`mqtt_report`]) and
//! the traffic report ([`traffic_report`]); and writing them out, as text
//! ([`text`]) or as one JSON document ([`json`]); the figures of every
//! workload kind and of sweeps ([`figures`]), drawn as SVG and gathered in
//! one offline HTML page ([`html`]); and the comparison of runs
//! ([`compare`]).
//!
//! A run is opened with [`exp_results::open_run`]; tables are found by the
//! names and columns in [`exp_results::schemas`], which the executors write.
//! Files that cannot be read are left out with a [`exp_results::Warning`].
//! Nothing here prints: the renderers return the text, and errors are
//! [`ResultsError`]s, or [`ReportError`]s where figures are drawn.

pub mod aggregate;
pub mod claim_figures;
pub mod claims;
mod column_kinds;
pub mod compare;
mod error;
pub mod expected;
pub mod figures;
pub mod html;
mod html_compare;
mod html_text;
pub mod json;
pub mod methods;
pub mod mqtt;
mod run_report;
pub mod sketch;
pub mod summary;
pub mod text;
pub mod traffic;
pub mod validity;

// Chunked Parquet reading, shared with exp-claims.
use exp_results::part_chunks;

pub use error::ReportError;
pub use run_report::{run_report, RunReport};

pub use exp_results::ResultsError;
pub use mqtt::{mqtt_report, FleetReport, MqttReport, MqttTrial};
pub use summary::{summarize, ColumnSummary, RunSummary, TableSummary, TrialSummary, TIME_COLUMN};
pub use traffic::{traffic_report, TrafficGroup, TrafficReport};
