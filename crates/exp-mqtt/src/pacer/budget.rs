//! The pacer's two budgets: how much it may spin, and how often it may wake.

use std::time::{Duration, Instant};

/// How much the pacer may still spin: a token bucket filling at `share` of
/// wall time, holding at most `BURST`. Spread this way, spinning never takes
/// a core for long at a time; a budget per one-second window was spent in
/// one burst at each window's start, which took a core from the workers and
/// the broker for 50 ms every second and showed as a tail in ack latency.
pub(super) struct SpinBudget {
    share: f64,
    last: Instant,
    tokens: Duration,
}

impl SpinBudget {
    const BURST: Duration = Duration::from_millis(1);

    pub(super) fn new(share: f64) -> Self {
        SpinBudget {
            share: share.clamp(0.0, 1.0),
            last: Instant::now(),
            tokens: Self::BURST,
        }
    }

    /// `spin` if the bucket holds that much, else zero (sleep all the way).
    pub(super) fn allowed(&mut self, now: Instant, spin: Duration) -> Duration {
        let earned = now.saturating_duration_since(self.last).mul_f64(self.share);
        self.tokens = (self.tokens + earned).min(Self::BURST);
        self.last = now;
        if self.tokens >= spin {
            spin
        } else {
            Duration::ZERO
        }
    }

    pub(super) fn spend(&mut self, spun: Duration) {
        self.tokens = self.tokens.saturating_sub(spun);
    }
}

/// How often the pacer may fire: a token bucket of passes filling at
/// `per_s`, holding at most `BURST`. Each pass that fires wakes the thread
/// (a context switch) and hands work to the runtime's workers (mostly
/// another), which at 20,000 messages/s was most of the runner's CPU. With
/// deadlines sparser than `per_s` the bucket stays full and every deadline
/// is fired on time; denser ones wait for the next pass and go out
/// together, at most `1/per_s` late.
pub(super) struct PassBudget {
    per_s: f64,
    last: Instant,
    tokens: f64,
}

impl PassBudget {
    const BURST: f64 = 2.0;

    /// `per_s` of 0 (or not finite) means no limit.
    pub(super) fn new(per_s: f64) -> Self {
        PassBudget {
            per_s: if per_s.is_finite() && per_s > 0.0 { per_s } else { 0.0 },
            last: Instant::now(),
            tokens: Self::BURST,
        }
    }

    fn refill(&mut self, now: Instant) {
        if self.per_s > 0.0 {
            let earned = now.saturating_duration_since(self.last).as_secs_f64() * self.per_s;
            self.tokens = (self.tokens + earned).min(Self::BURST);
        }
        self.last = now;
    }

    /// The earliest a pass may start: `due` itself, or later when the bucket is empty.
    pub(super) fn earliest(&mut self, now: Instant, due: Instant) -> Instant {
        if self.per_s == 0.0 {
            return due;
        }
        self.refill(now);
        let at_due = self.tokens + due.saturating_duration_since(now).as_secs_f64() * self.per_s;
        if at_due >= 1.0 {
            due
        } else {
            due + Duration::from_secs_f64((1.0 - at_due) / self.per_s)
        }
    }

    /// A pass started at `now`.
    pub(super) fn spend(&mut self, now: Instant) {
        if self.per_s > 0.0 {
            self.refill(now);
            self.tokens = (self.tokens - 1.0).max(0.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_deadlines_fire_on_time_dense_ones_wait_for_a_pass() {
        let t0 = Instant::now();
        let mut passes = PassBudget::new(2000.0);
        // A full bucket: the first two deadlines fire when due, even back to back.
        for _ in 0..2 {
            assert_eq!(passes.earliest(t0, t0), t0);
            passes.spend(t0);
        }
        // Empty: the next pass waits for a whole token, 500 µs.
        let next = passes.earliest(t0, t0);
        assert!((next - t0).as_nanos().abs_diff(500_000) < 1_000, "{:?}", next - t0);
        // A deadline 1 ms away finds a token by then: it fires when due.
        let later = t0 + Duration::from_millis(1);
        assert_eq!(passes.earliest(t0, later), later);
        // However long the pause, the bucket holds no more than its burst.
        let much_later = t0 + Duration::from_secs(60);
        for _ in 0..2 {
            assert_eq!(passes.earliest(much_later, much_later), much_later);
            passes.spend(much_later);
        }
        assert!(passes.earliest(much_later, much_later) > much_later);
        // No limit at all.
        let mut free = PassBudget::new(0.0);
        for _ in 0..10 {
            assert_eq!(free.earliest(t0, t0), t0);
            free.spend(t0);
        }
    }

    #[test]
    fn spinning_is_spread_out_not_spent_in_one_burst() {
        let spin = Duration::from_micros(200);
        let t0 = Instant::now();
        let mut budget = SpinBudget::new(0.05);
        // Back to back, the bucket allows at most its burst.
        let mut spun = Duration::ZERO;
        while budget.allowed(t0, spin) == spin {
            budget.spend(spin);
            spun += spin;
        }
        assert_eq!(spun, SpinBudget::BURST);
        // 4 ms of wall time earn 5 % of it: one more 200 µs spin, not two.
        let later = t0 + Duration::from_millis(4);
        assert_eq!(budget.allowed(later, spin), spin);
        budget.spend(spin);
        assert_eq!(budget.allowed(later, spin), Duration::ZERO);
        // However long the pause, the bucket holds no more than its burst.
        assert_eq!(
            budget.allowed(t0 + Duration::from_secs(60), SpinBudget::BURST),
            SpinBudget::BURST
        );
        assert_eq!(
            budget.allowed(t0 + Duration::from_secs(60), SpinBudget::BURST * 2),
            Duration::ZERO
        );
    }
}
