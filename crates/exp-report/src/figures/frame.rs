//! A small table read whole: the monitor's samples (one row per interval)
//! of one trial, every column, for figures that pick columns by pattern.

use std::path::PathBuf;

use exp_results::{PartFile, ResultsError};

pub(crate) struct Frame {
    frame: exp_parquet::Frame,
}

impl Frame {
    /// The rows of every part file, in file order; a file that fails to
    /// read is the error, with its path.
    pub fn read(parts: &[PartFile]) -> Result<Frame, (PathBuf, ResultsError)> {
        let mut frame: Option<exp_parquet::Frame> = None;
        for part in parts {
            let failed = |source| (part.path.clone(), source);
            let parquet = |source| {
                failed(ResultsError::Parquet {
                    action: "read",
                    path: part.path.clone(),
                    source,
                })
            };
            let next = crate::part_chunks::open(&part.path)
                .map_err(failed)?
                .read_all()
                .map_err(parquet)?;
            frame = Some(match frame {
                None => next,
                Some(mut f) => {
                    // Parts of one table share its schema; one that does not is damaged.
                    f.append(next).map_err(parquet)?;
                    f
                }
            });
        }
        Ok(Frame {
            frame: frame.unwrap_or_default(),
        })
    }

    /// A numeric column as floats (nulls as NaN); `None` if it is missing
    /// or not numeric.
    pub fn f64(&self, column: &str) -> Option<Vec<f64>> {
        let floats = self.frame.column(column)?.to_f64s()?;
        Some(floats.iter().map(|v| v.unwrap_or(f64::NAN)).collect())
    }
}
