//! `--shard K/N`: which trials of a plan shard `K` of `N` runs.
//!
//! The split is deterministic (the same plan, selection and `N` give every
//! shard the same answer, wherever it runs) and balanced by the trials'
//! planned durations: longest first, each to the shard with the least work
//! so far (ties to the lowest shard). With `repeat until`, a point's
//! repetitions stay together in one shard, since the rule decides after
//! each of them in order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::str::FromStr;

use exp_plan::Plan;

use crate::selection::TrialSelection;

/// Shard `index` of `count` (`0 ≤ index < count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSpec {
    pub index: u32,
    pub count: u32,
}

/// Why a `K/N` does not name a shard: each names the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardSyntax {
    #[error("`{0}` is not a shard: write K/N with 0 ≤ K < N, e.g. `--shard 0/4`")]
    Form(String),
    #[error("`{0}`: N must be a whole number from 1 to 4,294,967,295")]
    Count(String),
    #[error("`{0}`: K must be from 0 to N − 1 = {1}")]
    Index(String, u32),
}

impl FromStr for ShardSpec {
    type Err = ShardSyntax;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let Some((k, n)) = text.split_once('/') else {
            return Err(ShardSyntax::Form(text.to_string()));
        };
        let whole = |s: &str| !s.trim().is_empty() && s.trim().bytes().all(|b| b.is_ascii_digit());
        if !whole(k) || !whole(n) {
            return Err(ShardSyntax::Form(text.to_string()));
        }
        let count = n.trim().parse::<u32>().ok().filter(|&n| n > 0);
        let Some(count) = count else {
            return Err(ShardSyntax::Count(text.to_string()));
        };
        match k.trim().parse::<u32>() {
            Ok(index) if index < count => Ok(ShardSpec { index, count }),
            _ => Err(ShardSyntax::Index(text.to_string(), count - 1)),
        }
    }
}

impl std::fmt::Display for ShardSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A trial's planned duration when the plan has none (workloads that end by themselves).
const UNKNOWN_DURATION_NS: u64 = 1_000_000_000;

/// The trials shard `shard` runs, in plan order: of the selected trials (all
/// without a selection), its share as described in the module docs.
pub fn shard_trials(plan: &Plan, selection: Option<&TrialSelection>, shard: ShardSpec) -> Vec<u32> {
    let selected = |t: u32| selection.is_none_or(|s| s.contains(t));
    let duration = |t: u32| plan.trial_duration_ns(t).unwrap_or(UNKNOWN_DURATION_NS).max(1);
    // Units of work: (duration, first trial, its trials).
    let mut units: Vec<(u64, u32, Vec<u32>)> = if plan.repeat.stop.is_some() {
        (0..plan.point_count().min(u64::from(u32::MAX)) as u32)
            .map(|point| plan.point_trials(point).filter(|&t| selected(t)).collect::<Vec<u32>>())
            .filter(|trials| !trials.is_empty())
            .map(|trials| (trials.iter().map(|&t| duration(t)).sum(), trials[0], trials))
            .collect()
    } else {
        plan.trial_indices()
            .filter(|&t| selected(t))
            .map(|t| (duration(t), t, vec![t]))
            .collect()
    };
    units.sort_by_key(|&(duration, first, _)| (Reverse(duration), first));
    // The least-loaded shard first, then the lowest index.
    let mut loads: BinaryHeap<Reverse<(u64, u32)>> = (0..shard.count).map(|k| Reverse((0, k))).collect();
    let mut mine = Vec::new();
    for (duration, _, trials) in units {
        let Some(Reverse((load, k))) = loads.pop() else { break };
        if k == shard.index {
            mine.extend(trials);
        }
        loads.push(Reverse((load.saturating_add(duration), k)));
    }
    mine.sort_unstable();
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs() {
        assert_eq!("2/4".parse(), Ok(ShardSpec { index: 2, count: 4 }));
        assert_eq!(" 0 / 1 ".parse(), Ok(ShardSpec { index: 0, count: 1 }));
        let form = |t: &str| ShardSyntax::Form(t.to_string());
        let count = |t: &str| ShardSyntax::Count(t.to_string());
        let index = |t: &str, last| ShardSyntax::Index(t.to_string(), last);
        let cases = [
            ("4/4", index("4/4", 3)),
            ("4294967296/4294967295", index("4294967296/4294967295", 4_294_967_294)),
            ("1", form("1")),
            ("a/b", form("a/b")),
            ("-1/2", form("-1/2")),
            ("", form("")),
            ("1/0", count("1/0")),
            ("0/4294967296", count("0/4294967296")),
        ];
        for (bad, why) in cases {
            assert_eq!(bad.parse::<ShardSpec>(), Err(why), "{bad}");
        }
        assert_eq!(ShardSpec { index: 1, count: 3 }.to_string(), "1/3");
    }
}
