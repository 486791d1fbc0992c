//! Points and trials, derived from the parameters' values and the workloads'
//! variants; the plan stores neither.
//!
//! A point's index is the mixed-radix number of its parameters' value
//! indices, the first parameter outermost (the most significant digit); a
//! trial's index is `point * repeat.max + repetition`. Everything here is
//! arithmetic on those numbers and lookups into the variants, so a shard can
//! take trial 999,999 of a million without looking at the others.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::ops::Range;

use crate::{seeds, Monitor, Parameter, Plan, Point, PointValue, Trial, Workload};

impl Plan {
    /// Number of sweep points: the product of the parameters' value counts,
    /// 1 without a sweep. Saturates for a plan that was never validated.
    pub fn point_count(&self) -> u64 {
        self.parameters
            .iter()
            .fold(1u64, |n, p| n.saturating_mul(p.values.len() as u64))
    }

    /// Number of trials: points × planned repetitions. A plan from the
    /// compiler or [`Plan::from_json`] has at most [`crate::MAX_TRIALS`];
    /// saturates at `u32::MAX` for one that was never validated.
    pub fn trial_count(&self) -> u32 {
        let trials = self.point_count().saturating_mul(u64::from(self.repeat.max));
        u32::try_from(trials).unwrap_or(u32::MAX)
    }

    /// Every trial's index, in plan order.
    pub fn trial_indices(&self) -> Range<u32> {
        0..self.trial_count()
    }

    /// The trials of one point, in repetition order; empty for a point that
    /// does not exist.
    pub fn point_trials(&self, point: u32) -> Range<u32> {
        if u64::from(point) >= self.point_count() {
            return 0..0;
        }
        let first = point.saturating_mul(self.repeat.max);
        first..first.saturating_add(self.repeat.max)
    }

    /// Each parameter's value index at `point`, in parameter order.
    pub fn value_indices(&self, point: u32) -> Option<Vec<usize>> {
        let counts: Vec<usize> = self.parameters.iter().map(|p| p.values.len()).collect();
        value_indices(&counts, point)
    }

    /// The point where each parameter takes the value at `indices` (the
    /// inverse of [`Plan::value_indices`]).
    pub fn point_at(&self, indices: &[usize]) -> Option<u32> {
        if indices.len() != self.parameters.len() {
            return None;
        }
        let mut point: u64 = 0;
        for (parameter, &index) in self.parameters.iter().zip(indices) {
            if index >= parameter.values.len() {
                return None;
            }
            point = point * parameter.values.len() as u64 + index as u64;
        }
        u32::try_from(point).ok()
    }

    /// Each parameter with its value at `point`, in parameter order.
    pub fn values_at(&self, point: u32) -> Option<Vec<(&Parameter, Cow<'_, PointValue>)>> {
        let indices = self.value_indices(point)?;
        self.parameters
            .iter()
            .zip(indices)
            .map(|(p, i)| Some((p, p.values.get(i)?)))
            .collect()
    }

    /// `utilization=50%, size=2KiB`: the point's values by their labels, in
    /// the order of the parameters' names.
    pub fn sweep_label(&self, point: u32) -> String {
        let mut values = self.values_at(point).unwrap_or_default();
        values.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let mut label = String::new();
        for (parameter, value) in values {
            if !label.is_empty() {
                label.push_str(", ");
            }
            let _ = write!(label, "{}={}", parameter.name, value.label);
        }
        label
    }

    /// Workload `workload` (its position in [`Plan::workloads`]) as it runs
    /// at `point`.
    pub fn workload_at(&self, workload: usize, point: u32) -> Option<Cow<'_, Workload>> {
        let indices = self.value_indices(point)?;
        self.workloads.get(workload)?.at(&self.parameters, &indices)
    }

    /// Every workload as it runs at `point`, in spec order.
    pub fn workloads_at(&self, point: u32) -> Option<Vec<Cow<'_, Workload>>> {
        let indices = self.value_indices(point)?;
        self.workloads
            .iter()
            .map(|w| w.at(&self.parameters, &indices))
            .collect()
    }

    /// The monitor as it runs at `point`; `None` without one.
    pub fn monitor_at(&self, point: u32) -> Option<Cow<'_, Monitor>> {
        let indices = self.value_indices(point)?;
        self.monitor.as_ref()?.at(&self.parameters, &indices)
    }

    /// Point `index` with its values, workloads and monitor.
    pub fn point(&self, index: u32) -> Option<Point> {
        let values = self
            .values_at(index)?
            .into_iter()
            .map(|(p, v)| (p.name.clone(), v.into_owned()))
            .collect();
        let workloads = self.workloads_at(index)?.into_iter().map(Cow::into_owned).collect();
        Some(Point {
            index,
            values,
            workloads,
            monitor: self.monitor_at(index).map(Cow::into_owned),
        })
    }

    /// Trial `index` with its point, repetition and seeds.
    pub fn trial(&self, index: u32) -> Option<Trial> {
        if index >= self.trial_count() {
            return None;
        }
        let point = index / self.repeat.max;
        let repetition = index % self.repeat.max;
        let seed = seeds::derive(self.experiment.seed, &format!("trial/{point}/{repetition}"));
        let seeds = self
            .workload_names()
            .map(|name| (name.to_string(), seeds::derive(seed, name)))
            .collect::<BTreeMap<_, _>>();
        Some(Trial {
            trial: index,
            point,
            repetition,
            seed,
            seeds,
        })
    }

    /// Every trial, derived one at a time, in plan order.
    pub fn trials(&self) -> impl Iterator<Item = Trial> + '_ {
        self.trial_indices().filter_map(|i| self.trial(i))
    }

    /// The workloads' names, in spec order.
    pub fn workload_names(&self) -> impl Iterator<Item = &str> {
        self.workloads
            .iter()
            .filter_map(|w| w.variants.first().map(|v| v.name.as_str()))
    }

    /// How long trial `index` is planned to last on the plan's timeline: the
    /// experiment's `duration`, or else the latest end of its workloads'
    /// windows; `None` when a workload runs until it finishes by itself (or
    /// the trial does not exist). Cheap: no workload is cloned.
    pub fn trial_duration_ns(&self, index: u32) -> Option<u64> {
        if index >= self.trial_count() {
            return None;
        }
        if let Some(ns) = self.experiment.duration_ns {
            return Some(ns);
        }
        // Windows are never fields: the variants hold them.
        let indices = self.value_indices(index / self.repeat.max)?;
        self.workloads
            .iter()
            .map(|w| Some(w.base_at(&self.parameters, &indices)?.window.end_ns))
            .try_fold(0, |latest, end| Some(end??.max(latest)))
    }

    /// Every combination of the values of the parameters named in `names`
    /// (the others held at their first value), as value indices of every
    /// parameter, in point order. Checks that involve several workloads run
    /// over the combinations of the parameters those workloads name, not
    /// over every point.
    pub fn combinations(&self, names: &[&str]) -> Combinations {
        Combinations::new(
            self.parameters
                .iter()
                .map(|p| {
                    if names.contains(&p.name.as_str()) {
                        p.values.len()
                    } else {
                        1
                    }
                })
                .collect(),
        )
    }
}

/// The digits of `point` in the mixed radix of `counts` (each parameter's
/// number of values), the first most significant: each parameter's value
/// index at that point. `None` past the last point.
pub fn value_indices(counts: &[usize], point: u32) -> Option<Vec<usize>> {
    let mut rest = point as usize;
    let mut indices = vec![0; counts.len()];
    for (slot, &count) in indices.iter_mut().zip(counts).rev() {
        if count == 0 {
            return None;
        }
        *slot = rest % count;
        rest /= count;
    }
    (rest == 0).then_some(indices)
}

/// The index of the variant of a block naming `names` where each parameter
/// takes the value at `indices`; `shape` gives a parameter's position and
/// number of values by its name (so that callers with their own parameter
/// lists, such as the checker, share the arithmetic).
pub fn variant_index(
    names: &[String],
    shape: impl Fn(&str) -> Option<(usize, usize)>,
    indices: &[usize],
) -> Option<usize> {
    let mut index = 0usize;
    for name in names {
        let (position, count) = shape(name)?;
        let value = *indices.get(position)?;
        index = index.checked_mul(count)?.checked_add(value)?;
    }
    Some(index)
}

/// Counts through every combination of digits below the given radices, the
/// first digit most significant: `[2, 3]` gives `[0, 0]`, `[0, 1]`, `[0, 2]`,
/// `[1, 0]`, … Parameters a check does not vary have radix 1.
#[derive(Debug, Clone)]
pub struct Combinations {
    radices: Vec<usize>,
    next: Option<Vec<usize>>,
}

impl Combinations {
    /// Nothing at all when a radix is 0; one empty combination for no radices.
    pub fn new(radices: Vec<usize>) -> Self {
        let next = radices.iter().all(|&r| r > 0).then(|| vec![0; radices.len()]);
        Combinations { radices, next }
    }
}

impl Iterator for Combinations {
    type Item = Vec<usize>;

    fn next(&mut self) -> Option<Vec<usize>> {
        let current = self.next.take()?;
        let mut following = current.clone();
        for (digit, &radix) in following.iter_mut().zip(&self.radices).rev() {
            *digit += 1;
            if *digit < radix {
                self.next = Some(following);
                return Some(current);
            }
            *digit = 0;
        }
        Some(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_count_first_digit_outermost() {
        let all: Vec<Vec<usize>> = Combinations::new(vec![2, 1, 3]).collect();
        assert_eq!(
            all,
            vec![
                vec![0, 0, 0],
                vec![0, 0, 1],
                vec![0, 0, 2],
                vec![1, 0, 0],
                vec![1, 0, 1],
                vec![1, 0, 2]
            ]
        );
        assert_eq!(Combinations::new(vec![]).collect::<Vec<_>>(), vec![Vec::<usize>::new()]);
        assert_eq!(Combinations::new(vec![3, 0]).count(), 0);
    }

    #[test]
    fn value_indices_are_the_digits_of_the_point() {
        assert_eq!(value_indices(&[2, 1, 3], 0), Some(vec![0, 0, 0]));
        assert_eq!(value_indices(&[2, 1, 3], 4), Some(vec![1, 0, 1]));
        assert_eq!(value_indices(&[2, 1, 3], 5), Some(vec![1, 0, 2]));
        assert_eq!(value_indices(&[2, 1, 3], 6), None);
        assert_eq!(value_indices(&[], 0), Some(vec![]));
        assert_eq!(value_indices(&[], 1), None);
        let all: Vec<Vec<usize>> = Combinations::new(vec![4, 3, 5]).collect();
        for (point, digits) in all.iter().enumerate() {
            assert_eq!(value_indices(&[4, 3, 5], point as u32).as_ref(), Some(digits));
        }
    }
}
