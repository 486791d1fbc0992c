//! The one error of making a report: reading the run, or drawing a figure.

use exp_results::ResultsError;

use crate::figures::chart::ChartError;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Chart(#[from] ChartError),
}
