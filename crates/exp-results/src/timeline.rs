//! The anomaly activations of a trial, from its `anomaly_timeline` files
//! (the ground truth the anomaly executor writes): what the MQTT report's
//! latency by phase and the claims' `during`/`before`/`after` read.

use std::path::Path;

use crate::part_chunks::for_each_chunk;
use crate::ResultsError;

/// An activation that started: active on [start, end) of the trial clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activation {
    /// The anomaly workload's name.
    pub instance: String,
    pub start: u64,
    /// `u64::MAX` when it has no end (it ran until the trial's end).
    pub end: u64,
}

/// Appends the activations of one timeline file that started; a null end
/// is the trial's end.
pub fn activations(path: &Path, into: &mut Vec<Activation>) -> Result<(), ResultsError> {
    let required = ["instance", "actual_start_ns", "actual_end_ns"];
    for_each_chunk(path, &required, &[], |chunk| {
        let instance = chunk.str("instance")?;
        let start = chunk.u64("actual_start_ns")?;
        let end = chunk.u64("actual_end_ns")?;
        for ((instance, start), end) in instance.iter().zip(start.iter()).zip(end.iter()) {
            let Some(start) = start else { continue };
            let instance = instance.ok_or_else(|| ResultsError::NullValue {
                path: path.to_path_buf(),
                column: "instance".into(),
            })?;
            into.push(Activation {
                instance: instance.to_string(),
                start,
                end: end.unwrap_or(u64::MAX),
            });
        }
        Ok(())
    })
}
