//! Verdicts from an interval: `supported` only if the whole interval
//! satisfies the claim, `refuted` only if the whole interval violates it,
//! else `inconclusive`. So a claim is never supported while its interval
//! crosses the margin. A single value (one repetition, no interval) is
//! decided on that value.

use exp_plan::claims::CmpOp;
use exp_results::claims::ClaimVerdict;

/// `x op c` for every x in [low, high].
pub(crate) fn against(op: CmpOp, low: f64, high: f64, c: f64) -> ClaimVerdict {
    let (low, high) = (low.min(high), high.max(low));
    if op.holds(low, c) && op.holds(high, c) {
        return ClaimVerdict::Supported;
    }
    let violated = match op {
        CmpOp::Lt | CmpOp::Le => !op.holds(low, c),
        CmpOp::Gt | CmpOp::Ge => !op.holds(high, c),
        CmpOp::Eq => c < low || c > high,
    };
    if violated {
        ClaimVerdict::Refuted
    } else {
        ClaimVerdict::Inconclusive
    }
}

/// [low, high] inside [a, b] (supported), disjoint from it (refuted), or neither.
pub(crate) fn inside(low: f64, high: f64, a: f64, b: f64) -> ClaimVerdict {
    let (a, b) = (a.min(b), a.max(b));
    if low >= a && high <= b {
        ClaimVerdict::Supported
    } else if high < a || low > b {
        ClaimVerdict::Refuted
    } else {
        ClaimVerdict::Inconclusive
    }
}

/// `op` with its sides swapped: `c < x` is `x > c`.
pub(crate) fn flipped(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Eq => CmpOp::Eq,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ClaimVerdict::*;

    #[test]
    fn an_interval_crossing_the_margin_is_inconclusive() {
        assert_eq!(against(CmpOp::Lt, 10.0, 20.0, 25.0), Supported);
        assert_eq!(against(CmpOp::Lt, 20.0, 30.0, 25.0), Inconclusive);
        assert_eq!(against(CmpOp::Lt, 25.0, 30.0, 25.0), Refuted);
        assert_eq!(against(CmpOp::Le, 20.0, 25.0, 25.0), Supported);
        assert_eq!(against(CmpOp::Gt, 26.0, 30.0, 25.0), Supported);
        assert_eq!(against(CmpOp::Ge, 20.0, 24.0, 25.0), Refuted);
        assert_eq!(against(CmpOp::Eq, 0.0, 0.0, 0.0), Supported);
        assert_eq!(against(CmpOp::Eq, 0.0, 0.1, 0.0), Inconclusive);
        assert_eq!(against(CmpOp::Eq, 0.1, 0.2, 0.0), Refuted);
        assert_eq!(inside(0.9, 1.1, 0.85, 1.15), Supported);
        assert_eq!(inside(0.8, 1.1, 0.85, 1.15), Inconclusive);
        assert_eq!(inside(1.2, 1.3, 0.85, 1.15), Refuted);
        assert_eq!(inside(0.9, 1.1, 1.15, 0.85), Supported);
    }
}
