//! The schema registry: every block kind, property and function of the
//! language, described once as data. The checker, the did-you-mean hints,
//! `expc explain` and the property tables in docs/language.md all read it.

mod anomaly;
mod blocks;
pub mod claims;
mod fleet;
mod functions;
mod monitor;
mod traffic;
mod types;
mod xml;
// kind-list: registry modules

pub use functions::{function, DistParam, FnKind, FnSchema, FUNCTIONS, VALUE};
pub use types::{BlockSchema, Default, NaturalEnd, Prop, Role, RowMetric, Ty, ValueRule, Variant};

use exp_syntax::units::Dimension;

/// Every block kind.
pub const BLOCKS: &[&BlockSchema] = &[
    &blocks::EXPERIMENT,
    &blocks::SWEEP,
    &blocks::MONITOR,
    &fleet::FLEET,
    &fleet::BROKER,
    &anomaly::ANOMALY,
    &traffic::TRAFFIC,
    &xml::XML,
    // kind-list: blocks
];

/// Timing properties every workload accepts (lowered to the plan's `window`).
pub const TIMING: &[Prop] = &[
    Prop::optional(
        "at",
        Ty::Quantity(Dimension::Duration),
        "Start, relative to the trial's start (default 0s).",
    )
    .at_least(0.0),
    Prop::optional(
        "for",
        Ty::Quantity(Dimension::Duration),
        "How long the workload runs from `at`.",
    )
    .at_least(0.0),
    Prop::optional(
        "until",
        Ty::Quantity(Dimension::Duration),
        "When the workload stops, relative to the trial's start.",
    )
    .at_least(0.0),
    Prop::optional(
        "every",
        Ty::Quantity(Dimension::Duration),
        "Period of a periodic schedule; needs `active`.",
    )
    .at_least(0.0),
    Prop::optional(
        "active",
        Ty::Quantity(Dimension::Duration),
        "Active time at the start of every period.",
    )
    .at_least(0.0),
];

pub fn block(kind: &str) -> Option<&'static BlockSchema> {
    BLOCKS.iter().copied().find(|b| b.kind == kind)
}

/// Whether a sweep over property `prop` of a `kind` block is stored as a
/// plan field rather than as more variants of the block (see
/// [`fleet::INDEPENDENT`]).
pub fn independent(kind: &str, prop: &str) -> bool {
    kind == fleet::FLEET.kind && fleet::INDEPENDENT.contains(&prop)
}

/// Whether an unbound bare name is, or is a misspelling of, an enumeration
/// member; anything else is an undefined name.
pub fn looks_like_enum_member(name: &str) -> bool {
    is_enum_member(name) || exp_diagnostics::closest(name, enum_members().iter().copied()).is_some()
}

fn enum_members() -> Vec<&'static str> {
    fn collect(ty: &Ty, out: &mut Vec<&'static str>) {
        match ty {
            Ty::Enum(members) => out.extend_from_slice(members),
            Ty::List(inner) => collect(inner, out),
            Ty::OneOf(options) => options.iter().for_each(|t| collect(t, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for block in BLOCKS {
        block.props.iter().for_each(|p| collect(&p.ty, &mut out));
        for variant in block.variants {
            variant.props.iter().for_each(|p| collect(&p.ty, &mut out));
        }
    }
    FUNCTIONS
        .iter()
        .flat_map(|f| f.params)
        .for_each(|p| collect(&p.ty, &mut out));
    out
}

/// Every enumeration member any property or argument accepts.
pub fn is_enum_member(name: &str) -> bool {
    fn in_ty(ty: &Ty, name: &str) -> bool {
        match ty {
            Ty::Enum(members) => members.contains(&name),
            Ty::List(inner) => in_ty(inner, name),
            Ty::OneOf(options) => options.iter().any(|t| in_ty(t, name)),
            _ => false,
        }
    }
    let in_props = |props: &[Prop]| props.iter().any(|p| in_ty(&p.ty, name));
    BLOCKS
        .iter()
        .any(|b| in_props(b.props) || b.variants.iter().any(|v| v.name == name || in_props(v.props)))
        || FUNCTIONS.iter().any(|f| f.params.iter().any(|p| in_ty(&p.ty, name)))
}
