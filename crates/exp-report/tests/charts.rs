//! Charts drawn to SVG and read back: every series, band and interval the
//! data has is in the picture, at the right place, and bad values are left
//! out rather than drawn as NaN.

#![allow(clippy::unwrap_used)]

mod svg_probe;

use exp_report::figures::chart::{Axis, Band, Chart, ChartError, Marks, Series};
use svg_probe::{Svg, SERIES_COLOURS};

fn line(name: &str, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.into(),
        marks: Marks::Line(points),
    }
}

#[test]
fn each_series_has_its_colour_and_each_band_its_place() {
    let wave = |k: f64| {
        (0..=100)
            .map(|i| (f64::from(i) / 10.0, k + (f64::from(i) / 7.0).sin()))
            .collect()
    };
    let chart = Chart {
        title: "CPU".into(),
        x: Axis::linear("time (s)"),
        y: Axis::linear("busy (%)"),
        series: vec![
            line("cpu0", wave(10.0)),
            line("cpu1", wave(20.0)),
            line("cpu2", wave(30.0)),
        ],
        bands: vec![Band {
            start: 2.5,
            end: 6.0,
            label: "hog (cpuoccupy)".into(),
        }],
    };
    let svg = Svg::parse(chart.to_svg().unwrap());
    assert_eq!(svg.line_colours(), 3, "three series, three colours");
    let bands = svg.bands();
    assert_eq!(bands.len(), 1);
    let (left, right) = (svg.x_value(bands[0].0), svg.x_value(bands[0].1));
    let pixel = svg.x_resolution();
    assert!(
        (left - 2.5).abs() <= 1.5 * pixel,
        "band starts at {left}, not 2.5 (a pixel is {pixel})"
    );
    assert!((right - 6.0).abs() <= 1.5 * pixel, "band ends at {right}, not 6.0");
    assert!(
        svg.texts().iter().any(|t| t == "hog (cpuoccupy)"),
        "the band is labelled"
    );
    let ticks = svg.x_ticks();
    assert!(
        ticks.first().unwrap().1 >= 0.0 && ticks.last().unwrap().1 <= 10.5,
        "x axis spans the data: {ticks:?}"
    );
}

#[test]
fn intervals_draw_one_bar_per_point() {
    let chart = Chart {
        title: "p99 against devices".into(),
        x: Axis::linear("devices"),
        y: Axis::linear("p99 (ms)"),
        series: vec![Series {
            name: "p99".into(),
            marks: Marks::Intervals(vec![
                (100.0, 1.0, 0.8, 1.2),
                (200.0, 1.5, 1.2, 1.9),
                (400.0, 2.5, 2.5, 2.5),
            ]),
        }],
        bands: Vec::new(),
    };
    let svg = Svg::parse(chart.to_svg().unwrap());
    assert_eq!(svg.interval_points(SERIES_COLOURS[0]), 3);
}

#[test]
fn values_an_axis_cannot_show_are_left_out() {
    let chart = Chart {
        title: "latency".into(),
        x: Axis::log("latency (ms)"),
        y: Axis::linear("fraction").with_range(0.0..1.0),
        series: vec![Series {
            name: "a".into(),
            marks: Marks::Steps(vec![(0.0, 0.1), (-1.0, 0.2), (f64::NAN, 0.3), (1.0, 0.5), (10.0, 1.0)]),
        }],
        bands: vec![Band {
            start: 2.0,
            end: f64::NAN,
            label: "still running".into(),
        }],
    };
    let text = chart.to_svg().unwrap();
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    let svg = Svg::parse(text);
    assert_eq!(svg.line_colours(), 1);
    assert_eq!(svg.bands().len(), 1, "a window without an end runs to the axis's end");
    // A log axis labels 1, 2 and 5 × 10ⁿ only.
    let mut ticks: Vec<f64> = svg.x_ticks().into_iter().map(|(_, value)| value).collect();
    ticks.dedup(); // plotters draws the last decade's label twice, in one place
    assert_eq!(ticks, [1.0, 2.0, 5.0, 10.0], "{ticks:?}");

    let nothing = Chart {
        series: vec![line("none", vec![(f64::NAN, 1.0), (-1.0, 2.0)])],
        bands: Vec::new(),
        ..chart
    };
    assert!(matches!(nothing.to_svg(), Err(ChartError::Empty(_))));
}

/// Tick labels of a log axis over `lo..hi` (a CDF from lo to hi).
fn log_ticks(lo: f64, hi: f64) -> Vec<String> {
    let points: Vec<(f64, f64)> = (0..=50)
        .map(|i| {
            let f = f64::from(i) / 50.0;
            (lo * (hi / lo).powf(f), f)
        })
        .collect();
    let chart = Chart {
        title: "latency".into(),
        x: Axis::log("ack latency (ms)"),
        y: Axis::linear("share of messages"),
        series: vec![Series {
            name: "trial 0".into(),
            marks: Marks::Steps(points),
        }],
        bands: Vec::new(),
    };
    let svg = Svg::parse(chart.to_svg().unwrap());
    svg.x_tick_labels()
}

#[test]
fn log_axes_are_labelled_below_their_first_decade() {
    // A sub-millisecond median on an axis to 20 ms: 0.5 is labelled, not only 1, 10.
    assert_eq!(log_ticks(0.3, 20.0), ["0.5", "1", "2", "5", "10", "20"]);
    // Wholly below a millisecond.
    assert_eq!(
        log_ticks(0.0002, 0.08),
        ["2e-4", "5e-4", "0.001", "0.002", "0.005", "0.01", "0.02", "0.05"]
    );
    // Many decades: powers of ten only.
    assert_eq!(log_ticks(0.05, 2000.0), ["0.1", "1", "10", "100", "1000"]);
}

fn two_lines(low: Vec<(f64, f64)>, high: Vec<(f64, f64)>) -> Svg {
    let chart = Chart {
        title: "two".into(),
        x: Axis::linear("time (s)"),
        y: Axis::linear("value").with_range(0.0..1.0),
        series: vec![line("low series", low), line("high series", high)],
        bands: Vec::new(),
    };
    Svg::parse(chart.to_svg().unwrap())
}

#[test]
fn legends_do_not_cover_data() {
    // Two rising lines leave the lower right corner free: the legend is there.
    let svg = two_lines(vec![(0.0, 0.0), (10.0, 0.7)], vec![(0.0, 0.3), (10.0, 1.0)]);
    let ticks = svg.x_ticks();
    let (first, last) = (ticks.first().unwrap().0, ticks.last().unwrap().0);
    let (x, y) = svg.text_at("low series").unwrap();
    assert!(x > (first + last) / 2.0 && y > 210.0, "lower right: {x}, {y}");
    // Lines along the bottom and the top cover every corner: the legend
    // goes beside the plot, right of its last tick.
    let svg = two_lines(vec![(0.0, 0.02), (10.0, 0.02)], vec![(0.0, 0.98), (10.0, 0.98)]);
    let last = svg.x_ticks().last().unwrap().0;
    let (x, _) = svg.text_at("low series").unwrap();
    assert!(x > last + 10.0, "beside the plot: {x} against the last tick at {last}");
    // Falling lines leave the upper right corner free.
    let svg = two_lines(vec![(0.0, 0.7), (10.0, 0.0)], vec![(0.0, 1.0), (10.0, 0.3)]);
    let ticks = svg.x_ticks();
    let (first, last) = (ticks.first().unwrap().0, ticks.last().unwrap().0);
    let (x, y) = svg.text_at("low series").unwrap();
    assert!(x > (first + last) / 2.0 && y < 210.0, "upper right: {x}, {y}");
}
