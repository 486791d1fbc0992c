//! A core's load over time, found by a sweep over the windows' starts and
//! ends sorted once: a step function whose highest step over any range of
//! time is a query of a max segment tree (O(log n)).

/// A share of one core in billionths: sums and differences of integers are
/// exact, so a sweep over 100,000 windows ends at the load it started from.
pub(crate) type Load = u64;

/// One whole core.
pub(crate) const FULL_CORE: Load = 1_000_000_000;

/// `utilization_ratio` (0 to 1) as a [`Load`].
pub(crate) fn load_of(ratio: f64) -> Load {
    (ratio.clamp(0.0, 1.0) * FULL_CORE as f64).round() as Load
}

/// A load on `[start, end)` of the trial (an open window ends at `u64::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Busy {
    pub start: u64,
    pub end: u64,
    pub load: Load,
}

/// The summed load of some windows: `loads[i]` from `starts[i]` until
/// `starts[i + 1]` (the last until the end of time); `starts[0]` is 0.
#[derive(Debug)]
pub(crate) struct Profile {
    starts: Vec<u64>,
    /// A max segment tree over the steps: leaf `size + i` is step `i`'s
    /// (load, i); each inner node the larger of its children, the earlier
    /// step on a tie.
    tree: Vec<(Load, usize)>,
    size: usize,
}

impl Profile {
    pub fn new(windows: &[Busy]) -> Profile {
        let (starts, loads) = steps(windows);
        let size = loads.len();
        let mut tree = vec![(0, 0); 2 * size];
        for (i, &load) in loads.iter().enumerate() {
            tree[size + i] = (load, i);
        }
        for node in (1..size).rev() {
            tree[node] = higher(tree[2 * node], tree[2 * node + 1]);
        }
        Profile { starts, tree, size }
    }

    /// The highest load at any instant of `[from, to)` and the first
    /// instant it is reached.
    pub fn peak_between(&self, from: u64, to: u64) -> (Load, u64) {
        // `starts[0]` is 0, so some step holds `from`.
        let first = self.starts.partition_point(|&s| s <= from).saturating_sub(1);
        let end = self.starts.partition_point(|&s| s < to).max(first + 1);
        let (load, step) = self.highest(first, end);
        (load, self.starts[step].max(from))
    }

    /// The highest load of all and the first instant it is reached.
    pub fn peak(&self) -> (Load, u64) {
        self.peak_between(0, u64::MAX)
    }

    /// The highest step in `first..end` (not empty).
    fn highest(&self, first: usize, end: usize) -> (Load, usize) {
        let (mut lo, mut hi) = (first + self.size, end + self.size);
        let mut best = (0, first);
        let mut right_side = Vec::new();
        while lo < hi {
            if lo % 2 == 1 {
                best = higher(best, self.tree[lo]);
                lo += 1;
            }
            if hi % 2 == 1 {
                hi -= 1;
                right_side.push(self.tree[hi]);
            }
            lo /= 2;
            hi /= 2;
        }
        // The right side's nodes were met from the right: fold them from
        // the left so that a tie keeps the earlier step.
        right_side.into_iter().rev().fold(best, higher)
    }
}

/// The larger load; the earlier step on a tie.
fn higher(a: (Load, usize), b: (Load, usize)) -> (Load, usize) {
    if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
        b
    } else {
        a
    }
}

/// The step function of the windows' summed load: starts (the first 0)
/// and the load from each.
fn steps(windows: &[Busy]) -> (Vec<u64>, Vec<Load>) {
    // (instant, starts, load): ends sort before starts at one instant, and
    // every event of an instant is applied before its load is read, so
    // `[0, 5)` and `[5, 9)` never count together.
    let mut events: Vec<(u64, bool, Load)> = Vec::with_capacity(windows.len() * 2);
    for w in windows.iter().filter(|w| w.start < w.end && w.load > 0) {
        events.push((w.start, true, w.load));
        if w.end < u64::MAX {
            events.push((w.end, false, w.load));
        }
    }
    events.sort_unstable_by_key(|&(at, starts, _)| (at, starts));
    let (mut starts, mut loads) = (vec![0], vec![0]);
    let mut total: Load = 0;
    let mut i = 0;
    while let Some(&(at, ..)) = events.get(i) {
        while let Some(&(_, starts_here, load)) = events.get(i).filter(|e| e.0 == at) {
            // An end always follows its own start: the total holds its load.
            total = if starts_here { total + load } else { total - load };
            i += 1;
        }
        if at == 0 {
            loads[0] = total;
        } else {
            starts.push(at);
            loads.push(total);
        }
    }
    (starts, loads)
}

/// The highest summed load of `fixed` (a profile, if any) and `windows`
/// together, and the first instant it is reached: `windows`' own steps,
/// each with the highest step of `fixed` during it.
pub(crate) fn peak_with(fixed: Option<&Profile>, windows: &[Busy]) -> (Load, u64) {
    let (starts, loads) = steps(windows);
    let mut best = (0, 0);
    for (i, (&start, &load)) in starts.iter().zip(&loads).enumerate().filter(|(_, (_, &load))| load > 0) {
        let end = starts.get(i + 1).copied().unwrap_or(u64::MAX);
        let (under, at) = fixed.map_or((0, start), |f| f.peak_between(start, end));
        if load + under > best.0 {
            best = (load + under, at);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(start: u64, end: u64, percent: u64) -> Busy {
        Busy {
            start,
            end,
            load: percent * FULL_CORE / 100,
        }
    }

    #[test]
    fn the_peak_is_the_most_windows_at_once() {
        let p = Profile::new(&[busy(0, 30, 80), busy(20, 50, 50), busy(40, 60, 10)]);
        assert_eq!(p.peak(), (130 * FULL_CORE / 100, 20));
        assert_eq!(p.peak_between(30, 100), (60 * FULL_CORE / 100, 40));
        assert_eq!(p.peak_between(50, 55), (10 * FULL_CORE / 100, 50));
        assert_eq!(p.peak_between(60, 70), (0, 60));
    }

    #[test]
    fn windows_that_touch_do_not_overlap() {
        let p = Profile::new(&[busy(0, 5, 80), busy(5, 9, 80)]);
        assert_eq!(p.peak(), (80 * FULL_CORE / 100, 0));
    }

    #[test]
    fn many_small_loads_add_up_exactly() {
        let windows: Vec<Busy> = (0..100_000)
            .map(|i| Busy {
                start: i % 7,
                end: 1000 + i % 13,
                load: load_of(0.01),
            })
            .collect();
        let profile = Profile::new(&windows);
        assert_eq!(profile.peak(), (1000 * FULL_CORE, 6));
        assert_eq!(profile.peak_between(1012, 2000), (0, 1012));
        let windows: Vec<Busy> = (0..100_000)
            .map(|i| Busy {
                start: i % 7,
                end: u64::MAX,
                load: load_of(0.01),
            })
            .collect();
        assert_eq!(Profile::new(&windows).peak(), (1000 * FULL_CORE, 6));
    }

    #[test]
    fn ties_go_to_the_earliest_instant() {
        let p = Profile::new(&[busy(10, 20, 60), busy(30, 40, 60), busy(50, 60, 60)]);
        assert_eq!(p.peak(), (60 * FULL_CORE / 100, 10));
        assert_eq!(p.peak_between(25, 100), (60 * FULL_CORE / 100, 30));
    }

    #[test]
    fn windows_are_added_to_a_fixed_profile() {
        let fixed = Profile::new(&[busy(0, 100, 50), busy(40, 60, 30)]);
        assert_eq!(peak_with(Some(&fixed), &[busy(70, 80, 40)]), (90 * FULL_CORE / 100, 70));
        assert_eq!(
            peak_with(Some(&fixed), &[busy(30, 50, 40)]),
            (120 * FULL_CORE / 100, 40)
        );
        assert_eq!(
            peak_with(None, &[busy(30, 50, 40), busy(45, 90, 70)]),
            (110 * FULL_CORE / 100, 45)
        );
        assert_eq!(peak_with(Some(&fixed), &[]), (0, 0));
    }
}
