//! The order trials run in: a permutation of the trial indices, derived
//! like everything else from the plan and its seed, so every shard, split
//! part and resume computes the same one.
//!
//! Trial indices stay point-major (`point * repeat.max + repetition`) and
//! keep their seeds whatever the order; only the sequence changes. With
//! `interleaved` and `randomized` the trials run in rounds: round `r` runs
//! repetition `r` of every point, so a slow drift of the machine (a
//! neighbour, heat, a cron job) falls on every point alike instead of on
//! the points that happened to run during it. `randomized` shuffles the
//! points within each round (randomized multiple interleaved trials, after
//! Abedi & Brecht, ICPE 2017), so a periodic disturbance cannot line up
//! with the points either.

use serde::{Deserialize, Serialize};

use crate::{seeds, Plan};

/// `order = randomized | interleaved | sequential`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Every repetition of point 0, then of point 1, …: plan order. Plans
    /// from before the order was recorded ran this way.
    #[default]
    Sequential,
    /// Round by round: repetition `r` of every point in point order.
    Interleaved,
    /// Round by round, the points of each round in a seeded random order.
    Randomized,
}

impl Order {
    pub const NAMES: [&'static str; 3] = ["randomized", "interleaved", "sequential"];

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Sequential => "sequential",
            Order::Interleaved => "interleaved",
            Order::Randomized => "randomized",
        }
    }

    pub fn from_name(name: &str) -> Option<Order> {
        match name {
            "sequential" => Some(Order::Sequential),
            "interleaved" => Some(Order::Interleaved),
            "randomized" => Some(Order::Randomized),
            _ => None,
        }
    }

    /// The order a spec gets without `order = …`: randomized where there is
    /// something to interleave (several points, each repeated), else
    /// sequential (the same sequence, said plainly).
    pub fn default_for(points: u64, repetitions: u32) -> Order {
        if points > 1 && repetitions > 1 {
            Order::Randomized
        } else {
            Order::Sequential
        }
    }
}

impl Plan {
    /// Every trial index, in the order the trials run ([`Order`]). A run of
    /// some trials (a selection, a shard) runs them in this order too.
    pub fn run_order(&self) -> Vec<u32> {
        let points = u32::try_from(self.point_count()).unwrap_or(u32::MAX);
        let repetitions = self.repeat.max;
        if self.trial_count() == 0 {
            return Vec::new();
        }
        match self.repeat.order {
            Order::Sequential => self.trial_indices().collect(),
            Order::Interleaved => (0..repetitions)
                .flat_map(|r| (0..points).map(move |p| p * repetitions + r))
                .collect(),
            Order::Randomized => {
                let mut order = Vec::with_capacity(self.trial_count() as usize);
                let mut round: Vec<u32> = (0..points).collect();
                for r in 0..repetitions {
                    shuffle(&mut round, seeds::derive(self.experiment.seed, &format!("order/{r}")));
                    order.extend(round.iter().map(|p| p * repetitions + r));
                }
                order
            }
        }
    }
}

/// Fisher–Yates with each draw from its own derived seed: the same seed
/// gives the same permutation on every platform and release.
fn shuffle(items: &mut [u32], seed: u64) {
    for i in (1..items.len()).rev() {
        let draw = seeds::derive(seed, &i.to_string());
        // Lemire's multiply-shift: an index below i + 1 without a division.
        let j = ((u128::from(draw) * (i as u128 + 1)) >> 64) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in Order::NAMES {
            assert_eq!(Order::from_name(name).map(Order::as_str), Some(name));
        }
        assert_eq!(Order::from_name("random"), None);
    }

    #[test]
    fn default_interleaves_only_what_can_be() {
        assert_eq!(Order::default_for(3, 5), Order::Randomized);
        assert_eq!(Order::default_for(1, 5), Order::Sequential);
        assert_eq!(Order::default_for(3, 1), Order::Sequential);
    }

    #[test]
    fn shuffle_is_a_seeded_permutation() {
        let mut a: Vec<u32> = (0..50).collect();
        let mut b = a.clone();
        shuffle(&mut a, 7);
        shuffle(&mut b, 7);
        assert_eq!(a, b);
        assert_ne!(a, (0..50).collect::<Vec<_>>());
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        let mut c: Vec<u32> = (0..50).collect();
        shuffle(&mut c, 8);
        assert_ne!(a, c);
    }
}
