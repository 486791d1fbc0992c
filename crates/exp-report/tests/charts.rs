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
