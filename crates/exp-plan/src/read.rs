//! Reading a plan back (`expc run plan.json`, reports): its version first,
//! then its shape, then whether its parts agree, so that every accessor of a
//! plan that was read answers without surprises.

use std::collections::BTreeSet;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{Plan, RangeUnit, ValueRange, Values, Variants, MAX_TRIALS, PLAN_VERSION};

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("not a plan: {0}")]
    Json(#[from] serde_json::Error),
    #[error("plan version {found}, but this expc reads version {supported} (compile the spec again)")]
    Version { found: u32, supported: u32 },
    #[error("inconsistent plan: {0}")]
    Invalid(String),
}

impl Plan {
    /// Parses `plan.json` (as `expc plan` prints it) and validates it. A plan
    /// of another version is [`PlanError::Version`], whatever its shape.
    pub fn from_json(bytes: &[u8]) -> Result<Plan, PlanError> {
        #[derive(Deserialize)]
        struct Version {
            plan_version: u32,
        }
        let version: Version = serde_json::from_slice(bytes)?;
        if version.plan_version != PLAN_VERSION {
            return Err(PlanError::Version {
                found: version.plan_version,
                supported: PLAN_VERSION,
            });
        }
        let plan: Plan = serde_json::from_slice(bytes)?;
        plan.validate()?;
        Ok(plan)
    }

    /// Checks that the parts of the plan agree: parameters have values and
    /// distinct names, there are at most [`MAX_TRIALS`] trials, every
    /// workload and the monitor has one variant per combination of the
    /// parameters it names and one value per field and combination, fields
    /// replace properties the variants have, and workload names are unique.
    /// Whether each field's values fit their property is preflight's to
    /// check (`Variants::each_distinct`): it costs a copy per value.
    pub fn validate(&self) -> Result<(), PlanError> {
        let invalid = |message: String| Err(PlanError::Invalid(message));
        if self.plan_version != PLAN_VERSION {
            return Err(PlanError::Version {
                found: self.plan_version,
                supported: PLAN_VERSION,
            });
        }
        if self.repeat.max == 0 {
            return invalid("`repeat.max` is 0".into());
        }
        let mut names = BTreeSet::new();
        for parameter in &self.parameters {
            if parameter.values.is_empty() {
                return invalid(format!("parameter `{}` has no values", parameter.name));
            }
            if let Values::Range(range) = &parameter.values {
                range_is_valid(range)
                    .map_err(|why| PlanError::Invalid(format!("parameter `{}`: {why}", parameter.name)))?;
            }
            if !names.insert(parameter.name.as_str()) {
                return invalid(format!("parameter `{}` appears twice", parameter.name));
            }
        }
        let trials = self
            .parameters
            .iter()
            .try_fold(u64::from(self.repeat.max), |n, p| n.checked_mul(p.values.len() as u64));
        if trials.is_none_or(|n| n > MAX_TRIALS) {
            return invalid(format!("more than {MAX_TRIALS} trials"));
        }
        let mut workloads = BTreeSet::new();
        for (index, workload) in self.workloads.iter().enumerate() {
            let what = format!("workload {index}");
            self.check_variants(workload, &what)?;
            let name = &workload.variants[0].name;
            if let Some(other) = workload.variants.iter().find(|v| v.name != *name) {
                return invalid(format!("{what} is named both `{name}` and `{}`", other.name));
            }
            if !workloads.insert(name.as_str()) {
                return invalid(format!("two workloads are named `{name}`"));
            }
        }
        if let Some(monitor) = &self.monitor {
            self.check_variants(monitor, "the monitor")?;
        }
        Ok(())
    }

    fn check_variants<T: Clone + Serialize + DeserializeOwned>(
        &self,
        variants: &Variants<T>,
        what: &str,
    ) -> Result<(), PlanError> {
        let invalid = |message: String| Err(PlanError::Invalid(message));
        let expected = self.combination_count(&variants.parameters, what)?;
        if variants.variants.len() as u64 != expected {
            return invalid(format!(
                "{what} has {} variants where its parameters have {expected} combinations",
                variants.variants.len()
            ));
        }
        for field in &variants.fields {
            let what = format!("{what}'s field `{}`", field.name());
            let expected = self.combination_count(&field.parameters, &what)?;
            if field.values.len() as u64 != expected {
                return invalid(format!(
                    "{what} has {} values where its parameters have {expected} combinations",
                    field.values.len()
                ));
            }
            // A name, an origin or a window is never a field: reading them
            // from the variant alone must stay right.
            if ["/name", "/origin", "/window"]
                .iter()
                .any(|p| field.pointers.iter().any(|pointer| pointer.starts_with(p)))
            {
                return invalid(format!("{what} replaces what a field never does"));
            }
        }
        variants
            .fields_resolve()
            .or_else(|problem| invalid(format!("{what}: {problem}")))
    }

    /// The number of combinations of the values of the named parameters,
    /// which must be the plan's, in its order.
    fn combination_count(&self, names: &[String], what: &str) -> Result<u64, PlanError> {
        let mut last = None;
        let mut count: u64 = 1;
        for name in names {
            let Some(position) = self.parameters.iter().position(|p| p.name == *name) else {
                return Err(PlanError::Invalid(format!(
                    "{what} names an unknown parameter `{name}`"
                )));
            };
            if last.is_some_and(|l| position <= l) {
                return Err(PlanError::Invalid(format!(
                    "{what} lists its parameters out of the plan's order"
                )));
            }
            last = Some(position);
            count = count.saturating_mul(self.parameters[position].values.len() as u64);
        }
        Ok(count)
    }
}

/// A range whose every value is a finite number its unit can hold: the
/// compiler never writes another, a hand-edited plan may.
fn range_is_valid(range: &ValueRange) -> Result<(), BadRange> {
    if !(range.step > 0.0 && range.step.is_finite()) {
        return Err(BadRange::Step(range.step));
    }
    let last = range.number(usize::try_from(range.count.saturating_sub(1)).unwrap_or(usize::MAX));
    if !(range.start.is_finite() && last.is_finite()) {
        return Err(BadRange::NotFinite);
    }
    let (low, high) = match range.unit {
        RangeUnit::Int => (i64::MIN as f64, i64::MAX as f64),
        RangeUnit::Duration | RangeUnit::Size | RangeUnit::Bandwidth => (0.0, u64::MAX as f64),
        RangeUnit::Rate | RangeUnit::Percent | RangeUnit::Float => (f64::MIN, f64::MAX),
    };
    if range.start < low || last > high {
        return Err(BadRange::OutsideUnit {
            start: range.start,
            last,
        });
    }
    Ok(())
}

/// What is wrong with a parameter's range ([`range_is_valid`]).
#[derive(Debug, thiserror::Error)]
enum BadRange {
    #[error("the range's step {0} is not a positive number")]
    Step(f64),
    #[error("the range's values are not all finite")]
    NotFinite,
    #[error("the range runs from {start} to {last}, outside what its unit holds")]
    OutsideUnit { start: f64, last: f64 },
}
