//! Reference tables generated from the registry, for docs/language.md.

use std::fmt::Write;

use crate::registry::{self, BlockSchema, Default, FnKind, FnSchema, Prop, Role, FUNCTIONS, TIMING, VALUE};
use crate::typing::plan_key;

/// Markdown: one section per block kind with its property table, the timing
/// properties, then the distributions and constructors with their arguments.
/// docs/language.md embeds this between generated-content markers.
pub fn reference() -> String {
    let mut out = String::new();
    for block in registry::BLOCKS {
        block_section(&mut out, block);
    }
    let _ = writeln!(
        out,
        "### Timing (every workload)\n\nLowered to the workload's `window` (`start_ns`, `end_ns`, `period`), not to its `config`.\n"
    );
    props_table(&mut out, TIMING, false, false);
    let _ = writeln!(
        out,
        "### Distributions\n\nArguments typed *value* are numbers or quantities; all value arguments of one call share one unit, which is the unit of the distribution.\n"
    );
    for f in FUNCTIONS.iter().filter(|f| f.kind == FnKind::Distribution) {
        function_section(&mut out, f);
    }
    let _ = writeln!(out, "### Constructors\n");
    for f in FUNCTIONS.iter().filter(|f| f.kind == FnKind::Constructor) {
        function_section(&mut out, f);
    }
    out
}

fn block_section(out: &mut String, block: &BlockSchema) {
    let label = if block.labelled { " \"NAME\"" } else { "" };
    let _ = writeln!(out, "### `{}{label} {{ … }}`\n\n{}\n", block.kind, cell(block.doc));
    if let Role::Workload {
        shard_unit,
        metrics,
        row_metrics,
        ..
    } = block.role
    {
        let rows: Vec<String> = row_metrics
            .iter()
            .map(|m| format!("{} ({})", m.name, m.dimension.map_or("number", |d| d.name())))
            .collect();
        let _ = writeln!(
            out,
            "Shards by {shard_unit}. Metrics: {}. Row metrics (claims): {}. Accepts the timing properties.\n",
            metrics.join(", "),
            rows.join(", ")
        );
    }
    if let Role::Service { row_metrics } = block.role {
        let names: Vec<&str> = row_metrics.iter().map(|m| m.name).collect();
        let _ = writeln!(
            out,
            "Row metrics (claims, as `monitor.NAME`; one row per sample; the unit follows the suffix): {}.\n",
            names.join(", ")
        );
    }
    if !block.children().is_empty() {
        let _ = writeln!(out, "Blocks inside: {}.\n", block.children().join(", "));
    }
    // The experiment's settings go to the plan's `experiment` and `repeat`
    // objects, not to a workload config: no key column.
    let keys = block.role != Role::Experiment;
    if !block.props.is_empty() {
        props_table(out, block.props, keys, !block.variants.is_empty());
    }
    if !block.variants.is_empty() {
        let _ = writeln!(
            out,
            "`kind` picks a variant; in the plan the variant's properties are nested as `params: {{ KIND: {{ … }} }}`.\n"
        );
    }
    for variant in block.variants {
        let _ = writeln!(out, "#### `kind = {}`\n\n{}\n", variant.name, cell(variant.doc));
        if !variant.props.is_empty() {
            props_table(out, variant.props, keys, false);
        }
    }
}

/// `keys`: add the plan key column; `tagged`: the block has variants, so its
/// `kind` property is the tag of `params` rather than a key.
fn props_table(out: &mut String, props: &[Prop], keys: bool, tagged: bool) {
    if keys {
        let _ = writeln!(
            out,
            "| property | type | default | range | plan key | description |\n|---|---|---|---|---|---|"
        );
    } else {
        let _ = writeln!(
            out,
            "| property | type | default | range | description |\n|---|---|---|---|---|"
        );
    }
    for p in props {
        let range = p.range_text();
        let key = match keys {
            // The discriminator of a block with variants becomes the tag of `params`.
            true if tagged && p.name == "kind" => " `params` tag |".to_string(),
            true => format!(" `{}` |", plan_key(p.name, &p.ty)),
            false => String::new(),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {range} |{key} {} |",
            p.name,
            cell(&p.ty.describe()),
            default(p.default),
            cell(p.doc)
        );
    }
    out.push('\n');
}

fn function_section(out: &mut String, f: &FnSchema) {
    let signature: Vec<String> = f
        .params
        .iter()
        .map(|p| match p.default {
            Default::Required => p.name.to_string(),
            Default::Optional | Default::Value(_) => format!("{}?", p.name),
        })
        .collect();
    let _ = writeln!(out, "#### `{}({})`\n\n{}\n", f.name, signature.join(", "), cell(f.doc));
    if f.params.is_empty() {
        return;
    }
    // A constructor's arguments are lowered like properties, under plan keys;
    // `until` is the exception: it becomes the plan's `repeat` object.
    let keys = f.kind == FnKind::Constructor && f.name != "until";
    if keys {
        let _ = writeln!(
            out,
            "| argument | type | default | range | plan key | description |\n|---|---|---|---|---|---|"
        );
    } else {
        let _ = writeln!(out, "| argument | type | default | description |\n|---|---|---|---|");
    }
    for p in f.params {
        let ty = if f.kind == FnKind::Distribution && p.ty == VALUE {
            "value".to_string()
        } else {
            p.ty.describe()
        };
        let key = if keys {
            format!(" {} | `{}` |", p.range_text(), plan_key(p.name, &p.ty))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |{key} {} |",
            p.name,
            cell(&ty),
            default(p.default),
            cell(p.doc)
        );
    }
    out.push('\n');
}

fn default(default: Default) -> String {
    match default {
        Default::Required => "required".to_string(),
        Default::Optional => "—".to_string(),
        Default::Value(v) => format!("`{}`", cell(v)),
    }
}

/// Text safe inside a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}
