//! Where a chart's legend goes so that it covers no data: the first corner
//! of the plot (lower right, upper left, upper right, lower left) whose box
//! no drawn mark falls in, else a panel beside the plot.
//!
//! Positions are compared in the plot's own proportions (0 to 1 along each
//! axis, logarithmic where the axis is), the legend's box estimated from
//! its labels' lengths in the chart's font size.

use std::ops::Range;

use plotters::prelude::SeriesLabelPosition;

/// Pixels of one character of the legend's 12 px font (DejaVu Sans averages
/// about 0.6 em), of one row, and the sample line with its margins.
const CHAR_PX: f64 = 7.2;
const ROW_PX: f64 = 18.0;
const LINE_AND_MARGINS_PX: f64 = 44.0;
/// Space between the legend and the plot's border (plotters' default).
const MARGIN_PX: f64 = 10.0;
/// The widest panel beside the plot; longer labels are cut ([`fit`]).
const MAX_BESIDE_PX: u32 = 240;
/// Interpolated points per line segment, so a line that crosses a corner
/// between two of its points still counts.
const SEGMENT_SAMPLES: usize = 8;

/// Where the legend is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Inside(Corner),
    /// A panel this many pixels wide right of the plot.
    Beside(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    LowerRight,
    UpperLeft,
    UpperRight,
    LowerLeft,
}

impl Corner {
    pub fn position(self) -> SeriesLabelPosition {
        match self {
            Corner::LowerRight => SeriesLabelPosition::LowerRight,
            Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
            Corner::UpperRight => SeriesLabelPosition::UpperRight,
            Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
        }
    }
}

/// An axis as drawn: its range and whether it is logarithmic.
pub struct Drawn<'a> {
    pub range: &'a Range<f64>,
    pub log: bool,
}

impl Drawn<'_> {
    /// `v` as a share of the axis (outside 0..1 when off it).
    fn share(&self, v: f64) -> f64 {
        let (lo, hi) = (self.range.start, self.range.end);
        if self.log {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (v - lo) / (hi - lo)
        }
    }
}

/// The legend's place for `labels` over a plot `plot_px` pixels large,
/// whose marks are `lines` (each a polyline: a series' points in drawing
/// order; separate points as polylines of one).
pub fn place(labels: &[String], plot_px: (f64, f64), x: &Drawn, y: &Drawn, lines: &[Vec<(f64, f64)>]) -> Placement {
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    let box_px = (
        widest * CHAR_PX + LINE_AND_MARGINS_PX,
        labels.len() as f64 * ROW_PX + 8.0,
    );
    let (w, h) = ((box_px.0 + MARGIN_PX) / plot_px.0, (box_px.1 + MARGIN_PX) / plot_px.1);
    let shares: Vec<Vec<(f64, f64)>> = lines
        .iter()
        .map(|line| line.iter().map(|&(a, b)| (x.share(a), y.share(b))).collect())
        .collect();
    let corners = [
        Corner::LowerRight,
        Corner::UpperLeft,
        Corner::UpperRight,
        Corner::LowerLeft,
    ];
    for corner in corners {
        let (left, bottom) = match corner {
            Corner::LowerRight => (1.0 - w, 0.0),
            Corner::UpperLeft => (0.0, 1.0 - h),
            Corner::UpperRight => (1.0 - w, 1.0 - h),
            Corner::LowerLeft => (0.0, 0.0),
        };
        let inside = |(a, b): (f64, f64)| a >= left && a <= left + w && b >= bottom && b <= bottom + h;
        if w < 1.0 && h < 1.0 && !shares.iter().any(|line| covers(line, &inside)) {
            return Placement::Inside(corner);
        }
    }
    Placement::Beside((box_px.0.ceil() as u32 + 8).min(MAX_BESIDE_PX))
}

/// `label` cut with `…` to fit a panel `width_px` wide beside its sample line.
pub fn fit(label: &str, width_px: u32) -> String {
    let room = ((f64::from(width_px) - LINE_AND_MARGINS_PX + 8.0) / CHAR_PX).max(4.0) as usize;
    if label.chars().count() <= room {
        return label.to_string();
    }
    let cut: String = label.chars().take(room - 1).collect();
    format!("{cut}…")
}

/// Whether a polyline has a point, or a point between two of its points,
/// where `inside` holds.
fn covers(line: &[(f64, f64)], inside: &impl Fn((f64, f64)) -> bool) -> bool {
    if line.iter().any(|&p| inside(p)) {
        return true;
    }
    line.windows(2).any(|pair| {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        (1..SEGMENT_SAMPLES).any(|i| {
            let t = i as f64 / SEGMENT_SAMPLES as f64;
            inside((x0 + (x1 - x0) * t, y0 + (y1 - y0) * t))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(range: &Range<f64>) -> Drawn<'_> {
        Drawn { range, log: false }
    }

    #[test]
    fn the_first_free_corner_or_beside() {
        let (r, labels) = (0.0..1.0, vec!["a: trial 0".to_string(), "b: trial 0".to_string()]);
        let rising = vec![vec![(0.0, 0.0), (1.0, 1.0)]];
        // A rising line leaves the lower right corner free.
        assert_eq!(
            place(&labels, (600.0, 300.0), &axis(&r), &axis(&r), &rising),
            Placement::Inside(Corner::LowerRight)
        );
        // A line along the bottom, and one along the top: only the middle is free.
        let both = vec![vec![(0.0, 0.02), (1.0, 0.02)], vec![(0.0, 0.98), (1.0, 0.98)]];
        assert!(matches!(
            place(&labels, (600.0, 300.0), &axis(&r), &axis(&r), &both),
            Placement::Beside(w) if w > 80
        ));
        assert_eq!(fit("short", 200), "short");
        let long = "run-with-a-long-name/20261128T094310Z-70ccb5ad: trial 12 (devices=4000)";
        assert!(fit(long, 240).ends_with('…') && fit(long, 240).chars().count() < 40);
        // A falling line crosses the lower right and upper left corners.
        let falling = vec![vec![(0.0, 1.0), (1.0, 0.0)]];
        assert_eq!(
            place(&labels, (600.0, 300.0), &axis(&r), &axis(&r), &falling),
            Placement::Inside(Corner::UpperRight)
        );
    }
}
