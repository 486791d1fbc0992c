//! `--trials 3,5-7`: which trials of the plan to run.

use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialSelection {
    text: String,
    trials: BTreeSet<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    #[error("`{0}` is not a trial number or range (write e.g. `3,5-7`)")]
    Syntax(String),
    #[error("trial {trial} does not exist: the plan has trials 0 to {last}")]
    OutOfRange { trial: u32, last: u32 },
    #[error("the plan has no trials")]
    Empty,
}

impl TrialSelection {
    /// Parses a comma-separated list of trial numbers and inclusive ranges,
    /// checked against a plan with `count` trials.
    pub fn parse(text: &str, count: u32) -> Result<Self, SelectionError> {
        let last = count.checked_sub(1).ok_or(SelectionError::Empty)?;
        let mut trials = BTreeSet::new();
        for part in text.split(',').map(str::trim) {
            let number = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .map_err(|_| SelectionError::Syntax(part.to_string()))
            };
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => (number(part)?, number(part)?),
            };
            if a > b {
                return Err(SelectionError::Syntax(part.to_string()));
            }
            if b > last {
                return Err(SelectionError::OutOfRange { trial: b, last });
            }
            trials.extend(a..=b);
        }
        Ok(TrialSelection {
            text: text.to_string(),
            trials,
        })
    }

    pub fn contains(&self, trial: u32) -> bool {
        self.trials.contains(&trial)
    }

    pub fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_ranges() {
        let s = TrialSelection::parse("3, 5-7", 10).unwrap();
        let picked: Vec<u32> = (0..10).filter(|t| s.contains(*t)).collect();
        assert_eq!(picked, vec![3, 5, 6, 7]);
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(
            TrialSelection::parse("2-x", 10),
            Err(SelectionError::Syntax("2-x".into()))
        );
        assert_eq!(
            TrialSelection::parse("7-5", 10),
            Err(SelectionError::Syntax("7-5".into()))
        );
        assert_eq!(
            TrialSelection::parse("12", 10),
            Err(SelectionError::OutOfRange { trial: 12, last: 9 })
        );
        assert_eq!(TrialSelection::parse("0", 0), Err(SelectionError::Empty));
    }
}
