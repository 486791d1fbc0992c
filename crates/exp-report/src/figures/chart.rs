//! One chart type for every figure: lines, points with confidence
//! intervals and shaded time windows on linear or logarithmic axes,
//! rendered to SVG by plotters with an embedded font, so the layout does
//! not depend on the fonts the machine has.

use std::ops::Range;
use std::sync::OnceLock;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::legend::{self, Drawn, Placement};

/// Font family the SVG names; its metrics come from the embedded DejaVu Sans.
const FONT: &str = "sans-serif";
const SIZE: (u32, u32) = (720, 420);
/// The plot inside [`SIZE`]: less the margins, the axes' label areas and
/// the title (for placing the legend; plotters lays it out).
const PLOT_PX: (f64, f64) = (720.0 - 24.0 - 64.0, 420.0 - 24.0 - 40.0 - 30.0);
/// Colour-blind-safe palette (Okabe–Ito), in series order.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];
/// Fill of shaded windows.
pub const BAND_FILL: RGBColor = RGBColor(255, 200, 120);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

#[derive(Debug, Clone)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    /// Drawn range; by default the data's, padded on linear axes.
    pub range: Option<Range<f64>>,
}

impl Axis {
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            range: None,
        }
    }

    pub fn log(label: impl Into<String>) -> Axis {
        Axis {
            scale: Scale::Log,
            ..Axis::linear(label)
        }
    }

    pub fn with_range(self, range: Range<f64>) -> Axis {
        Axis {
            range: Some(range),
            ..self
        }
    }

    /// Whether `v` can be drawn on this axis.
    fn admits(&self, v: f64) -> bool {
        v.is_finite() && (self.scale == Scale::Linear || v > 0.0)
    }

    /// The drawn range: the fixed one, or the data's.
    fn span(&self, values: &[f64]) -> Option<Range<f64>> {
        match &self.range {
            Some(r) if self.admits(r.start) && self.admits(r.end) && r.start < r.end => Some(r.clone()),
            _ => span(values, self.scale),
        }
    }
}

/// What a series draws.
#[derive(Debug, Clone)]
pub enum Marks {
    /// A polyline through the points, in x order; a point whose y is NaN
    /// breaks it there (nothing is drawn across a gap in the data).
    Line(Vec<(f64, f64)>),
    /// A step function (CDFs, histograms): horizontal then vertical.
    Steps(Vec<(f64, f64)>),
    /// Separate points (a scatter).
    Points(Vec<(f64, f64)>),
    /// Points with an interval each: (x, y, low, high).
    Intervals(Vec<(f64, f64, f64, f64)>),
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub marks: Marks,
}

/// A shaded span of x (an anomaly window), labelled at its top.
#[derive(Debug, Clone)]
pub struct Band {
    pub start: f64,
    pub end: f64,
    pub label: String,
}

#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
}

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("chart {0:?} has no finite data to draw")]
    Empty(String),
    #[error("drawing chart {title:?}: {source}")]
    Draw { title: String, source: DrawError },
}

/// What plotters' drawing on an SVG string can fail with.
pub type DrawError = DrawingAreaErrorKind<std::io::Error>;

impl Chart {
    /// The x and y ranges the data spans (bands included in x), widened
    /// where they would be empty and cut to positive values on log axes.
    pub fn ranges(&self) -> Option<(Range<f64>, Range<f64>)> {
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for s in &self.series {
            match &s.marks {
                Marks::Line(p) | Marks::Steps(p) | Marks::Points(p) => p.iter().for_each(|&(x, y)| {
                    xs.push(x);
                    ys.push(y);
                }),
                Marks::Intervals(p) => p.iter().for_each(|&(x, y, lo, hi)| {
                    xs.push(x);
                    ys.extend([y, lo, hi]);
                }),
            }
        }
        for b in &self.bands {
            xs.extend([b.start, b.end]);
        }
        Some((self.x.span(&xs)?, self.y.span(&ys)?))
    }

    pub fn to_svg(&self) -> Result<String, ChartError> {
        register_font();
        let (x, y) = self.ranges().ok_or_else(|| ChartError::Empty(self.title.clone()))?;
        let mut out = String::new();
        // Less than a decade has no log ticks to label: such an axis is linear.
        let drawn_as = |scale: Scale, r: &Range<f64>| if r.end < r.start * 10.0 { Scale::Linear } else { scale };
        // Log axes are labelled at ticks of our own ([`log_ticks`]): plotters'
        // start at the first power of ten inside the range, which leaves the
        // part below it (a sub-millisecond median on a 0.3–20 ms axis) bare.
        let log = |r: &Range<f64>| r.clone().log_scale().with_key_points(log_ticks(r));
        let drawn = match (drawn_as(self.x.scale, &x), drawn_as(self.y.scale, &y)) {
            (Scale::Linear, Scale::Linear) => self.paint(&mut out, x.clone(), y.clone(), (x, y), (false, false)),
            (Scale::Log, Scale::Linear) => self.paint(&mut out, log(&x), y.clone(), (x, y), (true, false)),
            (Scale::Linear, Scale::Log) => self.paint(&mut out, x.clone(), log(&y), (x, y), (false, true)),
            (Scale::Log, Scale::Log) => self.paint(&mut out, log(&x), log(&y), (x, y), (true, true)),
        };
        drawn.map_err(|source| ChartError::Draw {
            title: self.title.clone(),
            source,
        })?;
        Ok(out)
    }

    fn paint<X, Y>(
        &self,
        out: &mut String,
        x: X,
        y: Y,
        (x_span, y_span): (Range<f64>, Range<f64>),
        (x_log, y_log): (bool, bool),
    ) -> Result<(), DrawError>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let root = SVGBackend::with_string(out, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let placement = (self.series.len() > 1).then(|| self.legend_placement(&x_span, &y_span, x_log, y_log));
        let (plot, side) = match placement {
            Some(Placement::Beside(width)) => {
                let (plot, side) = root.split_horizontally(SIZE.0.saturating_sub(width));
                (plot, Some(side))
            }
            _ => (root.clone(), None),
        };
        let mut chart = ChartBuilder::on(&plot)
            .caption(&self.title, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x, y)?;
        chart
            .configure_mesh()
            .x_desc(&self.x.label)
            .y_desc(&self.y.label)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(235, 235, 235))
            // A log axis has a line at each of its ticks and no light lines.
            .x_max_light_lines(if x_log { 0 } else { 10 })
            .y_max_light_lines(if y_log { 0 } else { 10 })
            .draw()?;
        for band in &self.bands {
            let fill = BAND_FILL.mix(0.35).filled();
            // An activation without an end ran to the end of the trial.
            let end = if band.end.is_finite() { band.end } else { x_span.end };
            chart.draw_series([Rectangle::new([(band.start, y_span.start), (end, y_span.end)], fill)])?;
            chart.draw_series([Text::new(band.label.clone(), (band.start, y_span.end), (FONT, 11))])?;
        }
        for (i, series) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let keep = |x: f64, y: f64| self.x.admits(x) && self.y.admits(y);
            let drawn = match &series.marks {
                Marks::Line(points) => {
                    let mut runs = line_runs(points, |x, y| keep(x, y) || (self.x.admits(x) && y.is_nan()));
                    let first = runs.next().unwrap_or_default();
                    for run in runs {
                        chart.draw_series(LineSeries::new(run, color.stroke_width(2)))?;
                    }
                    chart.draw_series(LineSeries::new(first, color.stroke_width(2)))
                }
                Marks::Points(points) => chart.draw_series(
                    points
                        .iter()
                        .copied()
                        .filter(|&(x, y)| keep(x, y))
                        .map(|p| Circle::new(p, 2, color.mix(0.6).filled())),
                ),
                Marks::Steps(points) => chart.draw_series(LineSeries::new(
                    steps(points).into_iter().filter(|&(x, y)| keep(x, y)),
                    color.stroke_width(2),
                )),
                Marks::Intervals(points) => {
                    let means = points.iter().map(|&(x, y, _, _)| (x, y)).filter(|&(x, y)| keep(x, y));
                    chart.draw_series(LineSeries::new(means, color.mix(0.5).stroke_width(1)))?;
                    chart.draw_series(
                        points
                            .iter()
                            .copied()
                            .filter(|&(x, y, lo, hi)| keep(x, y) && self.y.admits(lo) && self.y.admits(hi))
                            .map(|(x, y, lo, hi)| ErrorBar::new_vertical(x, lo, y, hi, color.stroke_width(2), 8)),
                    )
                }
            }?;
            drawn
                .label(series.name.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        if let Some(Placement::Inside(corner)) = placement {
            chart
                .configure_series_labels()
                .position(corner.position())
                .border_style(RGBColor(180, 180, 180))
                .background_style(WHITE.mix(0.85))
                .label_font((FONT, 12))
                .draw()?;
        }
        if let Some(side) = side {
            self.draw_side_legend(&side)?;
        }
        root.present()?;
        Ok(())
    }
}

impl Chart {
    /// Where the legend covers no data ([`legend::place`]).
    fn legend_placement(&self, x: &Range<f64>, y: &Range<f64>, x_log: bool, y_log: bool) -> Placement {
        let keep = |&(a, b): &(f64, f64)| self.x.admits(a) && self.y.admits(b);
        let mut lines: Vec<Vec<(f64, f64)>> = Vec::new();
        for series in &self.series {
            match &series.marks {
                Marks::Line(points) => {
                    let mut points: Vec<(f64, f64)> = points.iter().copied().filter(keep).collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    lines.push(points);
                }
                Marks::Steps(points) => lines.push(steps(points).into_iter().filter(keep).collect()),
                Marks::Points(points) => lines.extend(points.iter().copied().filter(keep).map(|p| vec![p])),
                Marks::Intervals(points) => {
                    lines.push(points.iter().map(|&(a, b, _, _)| (a, b)).filter(keep).collect());
                    let bars = points.iter().map(|&(a, _, lo, hi)| vec![(a, lo), (a, hi)]);
                    lines.extend(bars.filter(|bar| bar.iter().all(keep)));
                }
            }
        }
        let names: Vec<String> = self.series.iter().map(|s| s.name.clone()).collect();
        let (x, y) = (Drawn { range: x, log: x_log }, Drawn { range: y, log: y_log });
        legend::place(&names, PLOT_PX, &x, &y, &lines)
    }

    /// The legend in a panel of its own right of the plot, when every
    /// corner of the plot has data: a sample line and the name per series.
    fn draw_side_legend(&self, area: &DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), DrawError> {
        let width = area.dim_in_pixel().0;
        for (i, series) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let y = 48 + 18 * i as i32;
            area.draw(&PathElement::new([(4, y), (20, y)], color.stroke_width(2)))?;
            let style = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
            area.draw(&Text::new(legend::fit(&series.name, width), (26, y), style))?;
        }
        Ok(())
    }
}

/// The corners of a step function through `points` (sorted by x).
/// The runs of a line between its breaks, sorted by x: a point with a NaN
/// y breaks the line (a monitor gap), so each run is drawn on its own.
fn line_runs(points: &[(f64, f64)], keep: impl Fn(f64, f64) -> bool) -> impl Iterator<Item = Vec<(f64, f64)>> {
    let mut points: Vec<(f64, f64)> = points.iter().copied().filter(|&(x, y)| keep(x, y)).collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let runs: Vec<Vec<(f64, f64)>> = points
        .split(|p| p.1.is_nan())
        .filter(|run| !run.is_empty())
        .map(<[_]>::to_vec)
        .collect();
    runs.into_iter()
}

fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, &(x, y)) in points.iter().enumerate() {
        if i > 0 {
            out.push((x, points[i - 1].1));
        }
        out.push((x, y));
    }
    out
}

/// The ticks of a log axis over `range` (at least a decade wide): 1, 2 and
/// 5 × 10ⁿ over up to 4 decades, then 10ⁿ only, over more than 8 every
/// other power, each inside the range, the part below its first power of
/// ten included.
pub(crate) fn log_ticks(range: &Range<f64>) -> Vec<f64> {
    let decades = (range.end / range.start).log10();
    let mantissas: &[f64] = if decades <= 4.0 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    let step = if decades > 8.0 { 2 } else { 1 };
    let (first, last) = (range.start.log10().floor() as i32, range.end.log10().ceil() as i32);
    let inside = |v: f64| v >= range.start * (1.0 - 1e-9) && v <= range.end * (1.0 + 1e-9);
    let mut ticks = Vec::new();
    for exponent in (first..=last).step_by(step) {
        for &m in mantissas {
            let v = m * 10f64.powi(exponent);
            if inside(v) {
                ticks.push(v);
            }
        }
    }
    ticks
}

/// A tick label: short, without trailing zeros (`80`, `0.25`, `1e6`).
fn tick(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        // Three significant digits: ticks 1 % apart stay apart (`3.25e8`).
        let text = format!("{v:.2e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{exponent}");
    }
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

fn span(values: &[f64], scale: Scale) -> Option<Range<f64>> {
    let usable = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0));
    let (lo, hi) = usable.fold(None, |acc: Option<(f64, f64)>, v| {
        Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
    })?;
    Some(match scale {
        Scale::Linear if lo == hi => (lo - 1.0)..(hi + 1.0),
        Scale::Linear => {
            let pad = (hi - lo) * 0.04;
            // Quantities that cannot be negative keep 0 as their floor.
            (if lo >= 0.0 { (lo - pad).max(0.0) } else { lo - pad })..(hi + pad)
        }
        Scale::Log if lo == hi => (lo / 2.0)..(hi * 2.0),
        Scale::Log => lo..hi,
    })
}

fn register_font() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        // The bytes are a valid TrueType font; a failure would leave text
        // unmeasured, which `to_svg` reports as a drawing error.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}
