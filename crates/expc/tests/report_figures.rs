//! `expc report --html/--svg` on short real runs of each workload kind, a
//! sweep with repetitions and two runs compared: every SVG parses as XML
//! and shows what the run's tables hold — a series per fleet, core or
//! structure, the anomaly window where the timeline put it, an interval
//! bar at every sweep point — and the HTML page needs nothing but itself.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use crate::common::{expc, run_dir, text, trial_frames, u64_values, Scratch};
use crate::svg_probe::{Svg, SERIES_COLOURS};

/// A fleet beside a CPU anomaly in the middle of the trial, with the monitor.
const FLEET_SPEC: &str = r#"
experiment "report-figures" {
  duration = 6s
  fleet "sensors" {
    devices   = 20
    gap       = 20ms
    qos       = 1
    subscribe = true
  }
  anomaly "cpu" {
    kind        = cpuoccupy
    utilization = 100%
    at          = 2s
    for         = 2s
  }
  monitor { interval = 250ms }
}
"#;

/// The fleet beside the anomaly twice, with claims on the fleet's latency
/// (a threshold, and a comparison of the anomaly's phases) and on the
/// anomaly's utilisation: each claim must link to the figure of its metric.
fn fleet_claims_spec() -> String {
    FLEET_SPEC
        .replace("  duration = 6s", "  duration = 6s\n  repeat   = 2")
        .replace(
            "  monitor { interval = 250ms }",
            "  monitor { interval = 250ms }
  expect \"figures\" {
    p99(sensors.ack_latency) < 10s
    p99(sensors.ack_latency during cpu) > 0.001 * p99(sensors.ack_latency before cpu)
    median(cpu.achieved_utilization) > 1%
  }",
        )
}

/// Two utilisation levels, three repetitions each.
const SWEEP_SPEC: &str = r#"
experiment "report-sweep" {
  duration = 1s
  repeat   = 3
  sweep { level = [30%, 60%] }
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = level
    cores       = [0]
  }
}
"#;

const TRAFFIC_SPEC: &str = r#"
experiment "report-traffic" {
  seed     = 11
  duration = 3s
  traffic "web" {
    vectors = synthetic(
      connections = 20,
      arrival = constant(50ms),
      epochs = 2,
      request = 300B,
      response = 20KB,
      server_time = constant(1ms),
      think_time = constant(5ms),
    )
    interval = 200ms
  }
}
"#;

/// Runs `spec` in `scratch/NAME` and returns its run directory.
fn run(scratch: &Scratch, name: &str, spec: &str, extra: &[&str]) -> PathBuf {
    run_with_claims(scratch, name, spec, extra, &[0])
}

/// `run`, where the claims' verdicts may give the exit status (`codes`:
/// those accepted).
fn run_with_claims(scratch: &Scratch, name: &str, spec: &str, extra: &[&str], codes: &[i32]) -> PathBuf {
    // Runs that load the CPU must not overlap.
    let _one = crate::common::one_at_a_time();
    let spec_path = scratch.0.join(format!("{name}.exp"));
    std::fs::write(&spec_path, spec).unwrap();
    let out = scratch.0.join(name);
    let output = expc()
        .arg("run")
        .arg(&spec_path)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        output.status.code().is_some_and(|c| codes.contains(&c)),
        "{}",
        text(&output)
    );
    run_dir(&out).unwrap()
}

/// `expc report RUNS… --html PAGE --svg DIR`; the figures by file stem.
fn report(runs: &[&Path], page: &Path, svg: &Path) -> Vec<(String, Svg)> {
    let output = expc()
        .arg("report")
        .args(runs)
        .arg("--html")
        .arg(page)
        .arg("--svg")
        .arg(svg)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let mut figures: Vec<(String, Svg)> = std::fs::read_dir(svg)
        .unwrap()
        .flatten()
        .map(|e| {
            let name = e.path().file_stem().unwrap().to_string_lossy().into_owned();
            (name, Svg::parse(std::fs::read_to_string(e.path()).unwrap()))
        })
        .collect();
    figures.sort_by(|a, b| a.0.cmp(&b.0));
    assert_self_contained(&std::fs::read_to_string(page).unwrap(), figures.len());
    figures
}

/// The page loads nothing: no script, no link but to an element of its
/// own, no source, no URL but the SVG namespace; and it holds every figure.
fn assert_self_contained(html: &str, figures: usize) {
    for forbidden in ["<script", "src=", "href='", "url(", "@import"] {
        assert!(!html.contains(forbidden), "the page has {forbidden:?}");
    }
    for link in html.split("href=\"").skip(1) {
        let target = link.split('"').next().unwrap();
        let id = target
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("the page links out of itself: {target:?}"));
        assert!(
            html.contains(&format!(" id=\"{id}\"")),
            "the link to #{id} has no target"
        );
    }
    let urls = html.matches("http").count();
    let namespaces = html.matches("http://www.w3.org/2000/svg").count();
    assert_eq!(urls, namespaces, "the only URLs are the SVG namespace");
    assert_eq!(html.matches("<svg").count(), figures, "every figure is inline");
}

fn figure<'a>(figures: &'a [(String, Svg)], name: &str) -> &'a Svg {
    let names: Vec<&str> = figures.iter().map(|(n, _)| n.as_str()).collect();
    figures
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("no {name} in {names:?}"))
}

#[test]
fn a_fleet_beside_an_anomaly_shows_latencies_cores_and_the_window() {
    let scratch = Scratch::new("report-figures");
    let dir = run(&scratch, "fleet", FLEET_SPEC, &[]);
    let figures = report(&[&dir], &scratch.0.join("page.html"), &scratch.0.join("svg"));
    // One fleet, one point: one CDF line each.
    assert_eq!(figure(&figures, "fleet-ack-latency-cdf").line_colours(), 1);
    assert_eq!(figure(&figures, "fleet-delivery-latency-cdf").line_colours(), 1);
    // p50 and p99 per second, the anomaly window where the timeline says.
    let timeline = trial_frames(&dir, "anomaly_timeline", 0);
    let start = u64_values(&timeline, "actual_start_ns")[0] as f64 / 1e9;
    let end = u64_values(&timeline, "actual_end_ns")[0] as f64 / 1e9;
    for name in [
        "fleet-latency-over-time-trial-0",
        "fleet-throughput-trial-0",
        "cpu-trial-0",
    ] {
        let svg = figure(&figures, name);
        let bands = svg.bands();
        assert_eq!(bands.len(), 1, "{name}: one activation, one window");
        let pixel = svg.x_resolution();
        let (left, right) = (svg.x_value(bands[0].0), svg.x_value(bands[0].1));
        assert!(
            (left - start).abs() <= 1.5 * pixel,
            "{name}: window starts at {left} s, the anomaly at {start} s"
        );
        assert!(
            (right - end).abs() <= 1.5 * pixel,
            "{name}: window ends at {right} s, the anomaly at {end} s"
        );
        assert!(
            svg.texts().iter().any(|t| t == "cpu (cpuoccupy)"),
            "{name}: the window is labelled"
        );
        let ticks = svg.x_ticks();
        assert!(
            ticks.last().unwrap().1 <= 6.5,
            "{name}: x axis within the 6 s trial: {ticks:?}"
        );
    }
    assert_eq!(
        figure(&figures, "fleet-latency-over-time-trial-0").line_colours(),
        2,
        "p50 and p99"
    );
    let gaps = figure(&figures, "fleet-gaps-sensors");
    assert_eq!(gaps.line_colours(), 2, "achieved and target gaps");
    let phases = figure(&figures, "fleet-ack-latency-by-phase-cdf");
    assert_eq!(phases.line_colours(), 3, "before, during and after the anomaly");
    for phase in ["sensors none", "sensors cpu", "sensors none (after)"] {
        assert!(phases.texts().iter().any(|t| t == phase), "{phase} in the legend");
    }
    let monitor = trial_frames(&dir, "system_metrics", 0);
    let cores = monitor[0]
        .column_names()
        .iter()
        .filter(|c| c.ends_with("_idle_pct") && c.starts_with("cpu") && **c != "cpu_idle_pct")
        .count();
    assert_eq!(figure(&figures, "cpu-trial-0").line_colours(), cores, "a line per core");
}

#[test]
fn a_sweep_with_repetitions_has_a_mean_and_interval_per_point() {
    let scratch = Scratch::new("report-sweep");
    let dir = run(&scratch, "sweep", SWEEP_SPEC, &[]);
    let figures = report(&[&dir], &scratch.0.join("page.html"), &scratch.0.join("svg"));
    let svg = figure(&figures, "sweep-hog-achieved-utilization-by-level");
    assert_eq!(
        svg.interval_points(SERIES_COLOURS[0]),
        2,
        "a mean at 30 % and one at 60 %"
    );
    let ticks = svg.x_ticks();
    assert!(
        ticks.first().unwrap().1 <= 30.0 && ticks.last().unwrap().1 >= 60.0,
        "x spans the levels: {ticks:?}"
    );
    let page = std::fs::read_to_string(scratch.0.join("page.html")).unwrap();
    assert!(
        page.contains("Sweep points") && page.contains("level=60%"),
        "the sweep table"
    );
}

#[test]
fn traffic_has_a_cdf_per_structure() {
    let scratch = Scratch::new("report-traffic");
    let dir = run(&scratch, "traffic", TRAFFIC_SPEC, &[]);
    let figures = report(&[&dir], &scratch.0.join("page.html"), &scratch.0.join("svg"));
    for name in ["traffic-connection-duration-cdf", "traffic-response-time-cdf"] {
        assert_eq!(
            figure(&figures, name).line_colours(),
            1,
            "{name}: one structure × RTT mode, one line"
        );
    }
    let connections = u64_values(&trial_frames(&dir, "traffic_connections", 0), "sent_bytes");
    let sending = connections.iter().filter(|&&b| b > 0).count();
    let points = figure(&figures, "traffic-connection-throughput").points(SERIES_COLOURS[0]);
    assert_eq!(points, sending, "a point per connection that sent data");
    assert_eq!(
        figure(&figures, "traffic-active-connections-trial-0").line_colours(),
        2,
        "open at each interval's start and at its peak"
    );
}

#[test]
fn xml_synthesis_compares_path_frequencies_and_distances() {
    let scratch = Scratch::new("report-xml");
    let corpus = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../specs/xml/corpus");
    let spec = format!(
        r#"experiment "report-xml" {{
  xml "docs" {{
    corpus    = "{}"
    split_at  = "event"
    documents = 200
    compare   = true
  }}
}}
"#,
        corpus.canonicalize().unwrap().display()
    );
    let dir = run(&scratch, "xml", &spec, &[]);
    let figures = report(&[&dir], &scratch.0.join("page.html"), &scratch.0.join("svg"));
    let rows: usize = trial_frames(&dir, "xml_paths", 0)
        .iter()
        .map(exp_parquet::Frame::height)
        .sum();
    assert!(rows > 0, "the run compared paths");
    let occurrences = figure(&figures, "xml-path-occurrences").points(SERIES_COLOURS[0]);
    assert_eq!(occurrences, rows, "a point per path");
    let distances = figure(&figures, "xml-path-distances");
    let drawn: usize = SERIES_COLOURS.iter().map(|c| distances.points(c)).sum();
    assert_eq!(drawn, rows, "a distance per path");
    // The most distant paths' values, both sides: a line or a point per value each.
    let values: Vec<&(String, Svg)> = figures
        .iter()
        .filter(|(n, _)| n.starts_with("xml-path-values-"))
        .collect();
    assert!(!values.is_empty(), "values of the most distant paths");
    for (name, svg) in values {
        assert_eq!(svg.series(), 2, "{name}: the corpus and the generated documents");
    }
    // The structure histograms: a figure per measure, both sides, from a
    // table with a row per bin.
    let structure = trial_frames(&dir, "xml_structure", 0);
    for (measure, id) in [
        ("depth", "depth"),
        ("fan_out", "fan-out"),
        ("document_size", "document-size"),
    ] {
        let bins: usize = structure
            .iter()
            .map(|f| {
                let column = f.column("measure").unwrap().str().unwrap().clone();
                column.iter().filter(|m| *m == Some(measure)).count()
            })
            .sum();
        assert!(bins > 1, "{measure}: a row per bin");
        let svg = figure(&figures, &format!("xml-structure-docs-{id}"));
        assert_eq!(svg.series(), 2, "{measure}: the corpus and the generated documents");
    }
}

/// A damaged table file is a warning naming it; the page is still written.
#[test]
fn a_damaged_file_is_a_warning_not_a_failure() {
    let scratch = Scratch::new("report-damaged");
    let dir = run(&scratch, "traffic", TRAFFIC_SPEC, &[]);
    let part = dir.join("tables/traffic_connections/trial=0/part-0.parquet");
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() / 2]).unwrap();
    let page = scratch.0.join("page.html");
    let output = expc()
        .arg("report")
        .arg(&dir)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning:") && stderr.contains("traffic_connections"),
        "{stderr}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("traffic-response-time-cdf"),
        "the other tables' figures are there"
    );
}

#[test]
fn two_runs_compared_overlay_their_figures_and_test_their_metrics() {
    let scratch = Scratch::new("report-compare");
    let a = run(&scratch, "a", SWEEP_SPEC, &["--time-scale", "0.5"]);
    let b = run(&scratch, "b", SWEEP_SPEC, &["--time-scale", "0.5"]);
    let output = expc().arg("report").arg(&a).arg(&b).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("against") && stdout.contains("hog.achieved_utilization"),
        "{stdout}"
    );
    assert!(stdout.contains("level=30%") && stdout.contains("3/3"), "{stdout}");
    let figures = report(&[&a, &b], &scratch.0.join("page.html"), &scratch.0.join("svg"));
    let svg = figure(&figures, "sweep-hog-achieved-utilization-by-level");
    assert_eq!(
        svg.interval_points(SERIES_COLOURS[0]) + svg.interval_points(SERIES_COLOURS[1]),
        4,
        "two runs × two points"
    );
}

/// The page opened by Chromium, offline and headless: it renders every
/// figure, the screenshot is not blank and the console stays silent; and
/// each claim links to the figures of its metric, which show the claim with
/// its verdict, interval and method.
#[test]
#[cfg_attr(not(chromium), ignore = "needs Debian's chromium")]
fn the_page_renders_in_a_browser_without_a_network() {
    let scratch = Scratch::new("report-browser");
    // The verdicts are not what this test is about: any exit of a complete run.
    let dir = run_with_claims(
        &scratch,
        "fleet",
        &fleet_claims_spec(),
        &["--time-scale", "0.5"],
        &[0, 3, 4],
    );
    let page = scratch.0.join("page.html");
    let figures = report(&[&dir], &page, &scratch.0.join("svg"));

    let dom = chromium(&scratch, &page, "--dump-dom");
    assert_eq!(
        dom.matches("<svg").count(),
        figures.len(),
        "every figure in the rendered page"
    );
    assert!(dom.contains("Ack latency"), "the figures' titles are in the page");
    // The trial's verdict, as the manifest records it, in the Validity table.
    let manifest = exp_results::manifest::Manifest::read(&dir).unwrap();
    let verdict = manifest.trials[0].validity.as_ref().unwrap().verdict.as_str();
    assert!(
        dom.contains("<section id=\"validity\"><h2>Validity</h2>")
            && dom.contains(&format!("<td class=\"l\">{verdict}</td>")),
        "the validity section with the trial's verdict ({verdict})"
    );
    // The Methods paragraph a paper can cite, generated from this run.
    assert!(
        dom.contains("<h2>Methods</h2>") && dom.contains(&format!("Methods. Experiment \"{}\"", manifest.experiment)),
        "the Methods paragraph naming the experiment"
    );
    assert_claims_beside_their_figures(&dom, &manifest);

    let screenshot = scratch.0.join("page.png");
    chromium(&scratch, &page, &format!("--screenshot={}", screenshot.display()));
    let (pixels, distinct_colours) = inked_pixels(&screenshot);
    assert!(
        pixels > 0.05 && distinct_colours > 32,
        "{} is nearly blank: {:.1} % of its pixels differ from the background, {distinct_colours} colours",
        screenshot.display(),
        pixels * 100.0
    );
}

/// In the rendered page, each claim's row of the claims table links to the
/// figure that plots its metric (the latency CDF, the CDF by anomaly phase
/// for the comparison of phases, the CPU of every trial for the anomaly's
/// utilisation), and every figure it links to shows the claim, linked back,
/// with the verdict the run recorded and each point's interval and method.
fn assert_claims_beside_their_figures(dom: &str, manifest: &exp_results::manifest::Manifest) {
    let expected = [
        ("p99(sensors.ack_latency) < 10s", "fleet-ack-latency-cdf"),
        (
            "p99(sensors.ack_latency during cpu) > 0.001 * p99(sensors.ack_latency before cpu)",
            "fleet-ack-latency-by-phase-cdf",
        ),
        ("median(cpu.achieved_utilization) > 1%", "cpu-trial-"),
    ];
    assert_eq!(manifest.claims.len(), expected.len(), "{:?}", manifest.claims);
    for (i, (claim, (text, figure))) in manifest.claims.iter().zip(expected).enumerate() {
        assert_eq!(claim.text, text);
        let row = between(dom, &format!("<tr id=\"claim-0-{i}\">"), "</tr>");
        assert!(row.contains(&dom_text(text)), "{row}");
        assert!(row.contains(&format!("<b>{}</b>", claim.verdict.as_str())), "{row}");
        let links: Vec<&str> = row
            .split("href=\"#")
            .skip(1)
            .map(|l| l.split('"').next().unwrap())
            .collect();
        assert!(
            links.iter().any(|l| l.starts_with(figure)),
            "{text}: {figure} not in {links:?}"
        );
        if figure == "cpu-trial-" {
            let trials = links.iter().filter(|l| l.starts_with(figure)).count();
            assert_eq!(
                trials,
                manifest.trials.len(),
                "the CPU figure of every trial: {links:?}"
            );
        }
        for id in links {
            let shown = between(dom, &format!("<figure id=\"{id}\">"), "</figure>");
            let note = between(shown, &format!("<a href=\"#claim-0-{i}\">"), "</p>");
            assert!(
                note.starts_with(&format!("{}</a>: <b>{}</b>.", dom_text(text), claim.verdict.as_str())),
                "{id}: {note}"
            );
            // Each point: the estimate with its interval (or why there is
            // none), the method and the repetitions, as the run recorded them.
            for point in &claim.points {
                let method = if point.method.is_empty() {
                    "no value"
                } else {
                    &point.method
                };
                let said = format!(
                    "{} = {} ({method}; n = {})",
                    point.quantity,
                    exp_report::claims::estimate(point),
                    point.repetitions
                );
                assert!(note.contains(&dom_text(&said)), "{id}: `{said}` not in {note}");
            }
        }
    }
}

/// The part of `text` from `start` (excluded) to the next `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start} in the page")) + start.len();
    let to = text[from..].find(end).map_or(text.len(), |n| from + n);
    &text[from..to]
}

/// `text` as Chromium serialises a text node: `&`, `<` and `>` escaped.
fn dom_text(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Opens `page` in headless Chromium with `action` (`--dump-dom` or
/// `--screenshot=PATH`) and returns its stdout, after checking that it
/// exited well and logged nothing from the page's console.
fn chromium(scratch: &Scratch, page: &Path, action: &str) -> String {
    let output = std::process::Command::new("/usr/bin/chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        .arg("--window-size=1200,2400")
        // Every host name fails to resolve: a page that fetched anything would miss it.
        .arg("--host-resolver-rules=MAP * ~NOTFOUND")
        // Console messages (errors, failed loads) are logged as `CONSOLE` lines.
        .args(["--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", scratch.0.join("profile").display()))
        .arg(action)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "the page logged to its console: {console:#?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The share of a PNG's pixels that differ from its most common colour (the
/// background), and how many colours it has.
fn inked_pixels(path: &Path) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buffer).unwrap();
    let channels = frame.color_type.samples();
    let mut counts = std::collections::HashMap::<&[u8], usize>::new();
    for pixel in buffer[..frame.buffer_size()].chunks_exact(channels) {
        *counts.entry(pixel).or_default() += 1;
    }
    let total: usize = counts.values().sum();
    let background = counts.values().max().copied().unwrap_or(0);
    ((total - background) as f64 / total as f64, counts.len())
}
