//! Reference tables generated from the registry, for docs/language.md.

use std::fmt::Write;

use crate::registry::{self, BlockSchema, Default, Prop, Role, Ty, FUNCTIONS, TIMING};
use crate::value::display_quantity;

/// Markdown: one section per block kind with its property table, then the
/// functions. docs/language.md embeds this between generated-content markers.
pub fn reference() -> String {
    let mut out = String::new();
    for block in registry::BLOCKS {
        block_section(&mut out, block);
    }
    let _ = writeln!(out, "### Timing (every workload)\n");
    props_table(&mut out, TIMING);
    let _ = writeln!(out, "### Functions\n");
    let _ = writeln!(out, "| function | arguments | description |\n|---|---|---|");
    for f in FUNCTIONS {
        let args: Vec<String> = f
            .params
            .iter()
            .map(|p| match p.default {
                Default::Required => format!("`{}`", p.name),
                Default::Optional => format!("`{}`?", p.name),
                Default::Value(v) => format!("`{} = {}`", p.name, v),
            })
            .collect();
        let _ = writeln!(out, "| `{}` | {} | {} |", f.name, args.join(", "), f.doc);
    }
    out
}

fn block_section(out: &mut String, block: &BlockSchema) {
    let label = if block.labelled { " \"NAME\"" } else { "" };
    let _ = writeln!(out, "### `{}{label} {{ … }}`\n\n{}\n", block.kind, block.doc);
    if let Role::Workload { shard_unit, metrics, .. } = block.role {
        let _ = writeln!(out, "Shards by {shard_unit}. Metrics: {}. Accepts the timing properties.\n", metrics.join(", "));
    }
    if !block.children.is_empty() {
        let _ = writeln!(out, "Blocks inside: {}.\n", block.children.join(", "));
    }
    if !block.props.is_empty() {
        props_table(out, block.props);
    }
    for variant in block.variants {
        let _ = writeln!(out, "#### `kind = {}`\n\n{}\n", variant.name, variant.doc);
        if !variant.props.is_empty() {
            props_table(out, variant.props);
        }
    }
}

fn props_table(out: &mut String, props: &[Prop]) {
    let _ = writeln!(out, "| property | type | default | range | description |\n|---|---|---|---|---|");
    for p in props {
        let default = match p.default {
            Default::Required => "required".to_string(),
            Default::Optional => "—".to_string(),
            Default::Value(v) => format!("`{}`", v.replace('|', "\\|")),
        };
        let show = |x: f64| match p.ty {
            Ty::Quantity(d) | Ty::List(&Ty::Quantity(d)) => display_quantity(d, x),
            _ => format!("{x}"),
        };
        let range = match (p.min, p.max) {
            (Some(a), Some(b)) => format!("{} – {}", show(a), show(b)),
            (Some(a), None) => format!("≥ {}", show(a)),
            (None, Some(b)) => format!("≤ {}", show(b)),
            (None, None) => String::new(),
        };
        let _ = writeln!(out, "| `{}` | {} | {default} | {range} | {} |", p.name, p.ty.describe().replace('|', "\\|"), p.doc);
    }
    out.push('\n');
}
