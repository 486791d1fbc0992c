//! Registry entries and diagnostic codes as Markdown, for hover and for the
//! documentation of completion items. Everything shown comes from the schema
//! registry and `expc explain`; nothing is written twice.

use std::fmt::Write;

use exp_check::registry::{BlockSchema, Default, FnKind, FnSchema, Prop, Role, Variant, VALUE};
use exp_diagnostics::Code;

/// A property or argument: type, unit, range, default, description.
pub fn prop(prop: &Prop, owner: &str) -> String {
    let mut out = format!(
        "```exp\n{} = …\n```\n`{}` in `{owner}`: {}\n\n",
        prop.name, prop.name, prop.doc
    );
    let _ = writeln!(out, "- type: {}", prop.ty.describe());
    if let Some(unit) = crate::cursor::dimension_of(&prop.ty) {
        let _ = writeln!(out, "- unit: a {} (e.g. `{}`)", unit.name(), unit.example_unit());
    }
    let range = prop.range_text();
    if !range.is_empty() {
        let _ = writeln!(out, "- range: {range}");
    }
    let _ = writeln!(out, "- default: {}", default_text(prop.default));
    out
}

/// A distribution parameter (`VALUE`: a number or quantity in the unit of
/// the distribution).
fn param_type(function: &FnSchema, param: &Prop) -> String {
    if function.kind == FnKind::Distribution && param.ty == VALUE {
        "value (all value arguments share the distribution's unit)".to_string()
    } else {
        param.ty.describe()
    }
}

pub fn default_text(default: Default) -> String {
    match default {
        Default::Required => "required".to_string(),
        Default::Optional => "none (optional)".to_string(),
        Default::Value(text) => format!("`{text}`"),
    }
}

/// The signature of a function, optional parameters marked with `?`.
pub fn signature(function: &FnSchema) -> String {
    let params: Vec<String> = function
        .params
        .iter()
        .map(|p| match p.default {
            Default::Required => p.name.to_string(),
            _ => format!("{}?", p.name),
        })
        .collect();
    format!("{}({})", function.name, params.join(", "))
}

/// A distribution or constructor with its parameters.
pub fn function(function: &FnSchema) -> String {
    let what = match function.kind {
        FnKind::Distribution => "distribution",
        FnKind::Constructor => "constructor",
    };
    let mut out = format!("```exp\n{}\n```\n{what}: {}\n\n", signature(function), function.doc);
    for param in function.params {
        let _ = writeln!(
            out,
            "- `{}`: {}; {}. {}",
            param.name,
            param_type(function, param),
            default_text(param.default),
            param.doc
        );
    }
    out
}

pub fn argument(function: &FnSchema, param: &Prop) -> String {
    let mut out = format!(
        "```exp\n{}\n```\nargument `{}`: {}\n\n- type: {}\n",
        signature(function),
        param.name,
        param.doc,
        param_type(function, param)
    );
    let range = param.range_text();
    if !range.is_empty() {
        let _ = writeln!(out, "- range: {range}");
    }
    let _ = writeln!(out, "- default: {}", default_text(param.default));
    out
}

/// A block kind: what it is, where it goes, what it holds.
pub fn block(schema: &BlockSchema) -> String {
    let label = if schema.labelled { " \"NAME\"" } else { "" };
    let mut out = format!("```exp\n{}{label} {{ … }}\n```\n{}\n\n", schema.kind, schema.doc);
    if let Role::Workload { metrics, .. } = schema.role {
        let _ = writeln!(out, "Metrics: {}. Accepts the timing properties.\n", metrics.join(", "));
    }
    if !schema.children().is_empty() {
        let _ = writeln!(out, "Blocks inside: {}.\n", schema.children().join(", "));
    }
    let props: Vec<&str> = schema.props.iter().map(|p| p.name).collect();
    if !props.is_empty() {
        let _ = writeln!(out, "Properties: {}.", props.join(", "));
    }
    if !schema.variants.is_empty() {
        let kinds: Vec<&str> = schema.variants.iter().map(|v| v.name).collect();
        let _ = writeln!(out, "\n`kind`: {}.", kinds.join(", "));
    }
    out
}

/// An anomaly variant (`kind = memleak`).
pub fn variant(schema: &BlockSchema, variant: &Variant) -> String {
    let mut out = format!(
        "```exp\nkind = {}\n```\n`{}` {}: {}\n\n",
        variant.name, schema.kind, variant.name, variant.doc
    );
    for prop in variant.props {
        let _ = writeln!(
            out,
            "- `{}` ({}, {}): {}",
            prop.name,
            prop.ty.describe(),
            default_text(prop.default),
            prop.doc
        );
    }
    out
}

/// `expc explain CODE`.
pub fn code(code: Code) -> String {
    format!("**{}**: {}\n\n{}", code.as_str(), code.title(), code.explanation())
}
