//! Reading back a figure's SVG in tests: parses it as XML and finds what
//! the chart drew — series by colour, shaded bands, interval bars — and
//! maps pixels back to data through the x axis's tick labels.

#![allow(dead_code, clippy::unwrap_used)]

pub struct Svg {
    pub text: String,
}

/// The palette's first colours, in series order (`chart.rs`).
pub const SERIES_COLOURS: [&str; 3] = ["#0072B2", "#D55E00", "#009E73"];
/// The fill of a shaded window (`chart::BAND_FILL`).
pub const BAND_FILL: &str = "#FFC878";

impl Svg {
    pub fn parse(text: String) -> Svg {
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("not XML: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        Svg { text }
    }

    fn with<T>(&self, f: impl FnOnce(&roxmltree::Document) -> T) -> T {
        f(&roxmltree::Document::parse(&self.text).unwrap())
    }

    fn elements(&self, tag: &str) -> Vec<std::collections::BTreeMap<String, String>> {
        self.with(|doc| {
            doc.descendants()
                .filter(|n| n.tag_name().name() == tag)
                .map(|n| {
                    n.attributes()
                        .map(|a| (a.name().to_string(), a.value().to_string()))
                        .collect()
                })
                .collect()
        })
    }

    /// How many series of the palette drew a line (data or legend).
    pub fn line_colours(&self) -> usize {
        let strokes: std::collections::BTreeSet<String> = self
            .elements("polyline")
            .into_iter()
            .filter_map(|a| a.get("stroke").cloned())
            .collect();
        strokes.iter().filter(|s| s.as_str() != "#000000").count()
    }

    /// The shaded bands as (left, right) pixel columns.
    pub fn bands(&self) -> Vec<(f64, f64)> {
        self.elements("rect")
            .into_iter()
            .filter(|a| a.get("fill").map(String::as_str) == Some(BAND_FILL))
            .map(|a| {
                let x: f64 = a["x"].parse().unwrap();
                let w: f64 = a["width"].parse().unwrap();
                (x, x + w)
            })
            .collect()
    }

    /// Interval bars: the circles marking a mean, by colour.
    pub fn interval_points(&self, colour: &str) -> usize {
        self.elements("circle")
            .iter()
            .filter(|a| a.get("stroke").map(String::as_str) == Some(colour))
            .count()
    }

    /// How many of the palette's first colours drew anything: the series.
    pub fn series(&self) -> usize {
        let mut used = std::collections::BTreeSet::new();
        for tag in ["polyline", "circle", "line"] {
            for a in self.elements(tag) {
                for key in ["stroke", "fill"] {
                    if let Some(c) = a.get(key).filter(|c| SERIES_COLOURS.contains(&c.as_str())) {
                        used.insert(c.clone());
                    }
                }
            }
        }
        used.len()
    }

    /// Scatter points: filled circles, by colour.
    pub fn points(&self, colour: &str) -> usize {
        self.elements("circle")
            .iter()
            .filter(|a| a.get("fill").map(String::as_str) == Some(colour))
            .count()
    }

    /// Every text, trimmed.
    pub fn texts(&self) -> Vec<String> {
        self.with(|doc| {
            doc.descendants()
                .filter(|n| n.tag_name().name() == "text")
                .filter_map(|n| n.text().map(|t| t.trim().to_string()))
                .collect()
        })
    }

    /// The x axis's (pixel, value) ticks: numeric labels centred under it.
    pub fn x_ticks(&self) -> Vec<(f64, f64)> {
        self.with(|doc| {
            doc.descendants()
                .filter(|n| n.tag_name().name() == "text" && n.attribute("text-anchor") == Some("middle"))
                .filter(|n| n.attribute("transform").is_none())
                .filter_map(|n| Some((n.attribute("x")?.parse().ok()?, n.text()?.trim().parse().ok()?)))
                .collect()
        })
    }

    /// The x axis's tick labels as written, empty ones left out.
    pub fn x_tick_labels(&self) -> Vec<String> {
        self.with(|doc| {
            doc.descendants()
                .filter(|n| n.tag_name().name() == "text" && n.attribute("text-anchor") == Some("middle"))
                .filter(|n| n.attribute("transform").is_none())
                .filter_map(|n| Some(n.text()?.trim().to_string()))
                .filter(|t| !t.is_empty() && t.parse::<f64>().is_ok())
                .collect()
        })
    }

    /// Where the text `label` is written: its (x, y) in pixels.
    pub fn text_at(&self, label: &str) -> Option<(f64, f64)> {
        self.with(|doc| {
            doc.descendants()
                .filter(|n| n.tag_name().name() == "text" && n.text().map(str::trim) == Some(label))
                .find_map(|n| Some((n.attribute("x")?.parse().ok()?, n.attribute("y")?.parse().ok()?)))
        })
    }

    /// The data x at pixel column `px`, from the first and last x ticks.
    pub fn x_value(&self, px: f64) -> f64 {
        let ticks = self.x_ticks();
        assert!(ticks.len() >= 2, "x ticks: {ticks:?}");
        let ((p0, v0), (p1, v1)) = (ticks[0], ticks[ticks.len() - 1]);
        v0 + (px - p0) * (v1 - v0) / (p1 - p0)
    }

    /// The data value of one pixel on the x axis.
    pub fn x_resolution(&self) -> f64 {
        (self.x_value(1.0) - self.x_value(0.0)).abs()
    }
}
