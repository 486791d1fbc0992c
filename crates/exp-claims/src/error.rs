use std::path::PathBuf;

use exp_plan::PlanError;
use exp_results::ResultsError;

/// Why a run's claims could not be evaluated at all. A table file that
/// cannot be read is not one: its trial is left out with a warning.
#[derive(Debug, thiserror::Error)]
pub enum ClaimsError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("{path}: cannot read the run's plan: {source}")]
    ReadPlan {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Plan {
        path: PathBuf,
        #[source]
        source: PlanError,
    },
}
