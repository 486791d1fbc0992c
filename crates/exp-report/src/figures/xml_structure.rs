//! XML synthesis figures from `xml_structure`: the corpus's and the
//! generated documents' element depth, fan-out and document-size
//! histograms, each side as shares of its total so corpora of different
//! sizes compare.

use std::collections::BTreeMap;

use exp_results::schemas::STRUCTURE_TABLE;

use super::chart::{Axis, Chart, Marks, Series};
use super::{Context, Figure};
use crate::ReportError;

/// One histogram: per bin (by index) its label and both sides' counts.
type Bins = BTreeMap<u64, (String, u64, u64)>;

pub(super) fn figures(ctx: &Context) -> Result<Vec<Figure>, ReportError> {
    // The first trial's histograms: every trial compares the same corpus
    // with documents from the same set.
    let mut histograms: BTreeMap<(String, String), Bins> = BTreeMap::new();
    for part in ctx.first_trial_parts(STRUCTURE_TABLE) {
        let required = ["workload", "measure", "bin", "label", "original", "synthetic"];
        ctx.each_chunk(&part.path, &required, &[], |c| {
            let (w, m, bin, label) = (c.str("workload")?, c.str("measure")?, c.u64("bin")?, c.str("label")?);
            let (original, synthetic) = (c.u64("original")?, c.u64("synthetic")?);
            for i in 0..c.height() {
                if let (Some(w), Some(m), Some(bin), Some(label)) = (w.get(i), m.get(i), bin.get(i), label.get(i)) {
                    let counts = (original.get(i).unwrap_or(0), synthetic.get(i).unwrap_or(0));
                    histograms
                        .entry((w.to_string(), m.to_string()))
                        .or_default()
                        .insert(bin, (label.to_string(), counts.0, counts.1));
                }
            }
            Ok(())
        })?;
    }
    Ok(histograms
        .into_iter()
        .map(|((workload, measure), bins)| figure(&workload, &measure, &bins))
        .collect())
}

fn figure(workload: &str, measure: &str, bins: &Bins) -> Figure {
    let (title, of) = match measure {
        "depth" => ("Element depth", "elements"),
        "fan_out" => ("Fan-out (child elements)", "elements"),
        "document_size" => ("Document size (canonical bytes)", "documents"),
        other => (other, "counts"),
    };
    let side = |name: &str, count: fn(&(String, u64, u64)) -> u64| {
        let total: u64 = bins.values().map(count).sum();
        let shares = bins
            .iter()
            .map(|(&bin, b)| (bin as f64 + 1.0, count(b) as f64 / total.max(1) as f64));
        Series {
            name: name.to_string(),
            marks: Marks::Steps(shares.collect()),
        }
    };
    let labels: Vec<String> = bins.iter().map(|(bin, b)| format!("{} = {}", bin + 1, b.0)).collect();
    Figure::new(
        format!("xml-structure-{workload}-{}", measure.replace('_', "-")),
        Chart {
            title: format!("{title}, {workload}"),
            x: Axis::linear("bin"),
            y: Axis::linear(format!("share of {of}")).with_range(0.0..1.0),
            series: vec![side("original", |b| b.1), side("synthetic", |b| b.2)],
            bands: Vec::new(),
        },
        format!(
            "{workload}: the share of {of} in each bin, in the corpus and in the generated documents. Bins: {}.",
            labels.join(", ")
        ),
    )
}
