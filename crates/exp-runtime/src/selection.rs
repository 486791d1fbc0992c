//! `--trials 3,5-7`: which trials of the plan to run.

use std::ops::RangeInclusive;

/// Kept as sorted, disjoint ranges: `--trials 0-999999` costs two numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialSelection {
    text: String,
    ranges: Vec<RangeInclusive<u32>>,
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
        let mut ranges = Vec::new();
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
            ranges.push(a..=b);
        }
        Ok(TrialSelection {
            text: text.to_string(),
            ranges: merge(ranges),
        })
    }

    pub fn contains(&self, trial: u32) -> bool {
        let after = self.ranges.partition_point(|r| *r.end() < trial);
        self.ranges.get(after).is_some_and(|r| r.contains(&trial))
    }

    /// The selected trials, ascending, each once.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().flat_map(Clone::clone)
    }

    /// How many trials are selected.
    pub fn count(&self) -> u64 {
        self.ranges.iter().map(|r| u64::from(r.end() - r.start()) + 1).sum()
    }

    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Sorted, with overlapping and adjacent ranges joined.
fn merge(mut ranges: Vec<RangeInclusive<u32>>) -> Vec<RangeInclusive<u32>> {
    ranges.sort_by_key(|r| *r.start());
    let mut merged: Vec<RangeInclusive<u32>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if *range.start() <= last.end().saturating_add(1) => {
                *last = *last.start()..=(*last.end()).max(*range.end());
            }
            _ => merged.push(range),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_ranges() {
        let s = TrialSelection::parse("3, 5-7", 10).unwrap();
        let picked: Vec<u32> = (0..10).filter(|t| s.contains(*t)).collect();
        assert_eq!(picked, vec![3, 5, 6, 7]);
        assert_eq!(s.iter().collect::<Vec<_>>(), picked);
        assert_eq!(s.count(), 4);
    }

    #[test]
    fn overlapping_parts_count_once_and_huge_ranges_stay_small() {
        let s = TrialSelection::parse("8-9, 2-4, 3, 5, 0", 10).unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 2, 3, 4, 5, 8, 9]);
        assert_eq!(s.ranges, vec![0..=0, 2..=5, 8..=9]);
        let all = TrialSelection::parse("0-999999", 1_000_000).unwrap();
        assert_eq!(all.count(), 1_000_000);
        assert!(all.contains(999_999) && !all.contains(1_000_000));
        assert_eq!(all.ranges.len(), 1);
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
