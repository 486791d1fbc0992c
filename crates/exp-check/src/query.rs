//! Queries of the syntax tree that lowering, sweeps, fields and windows
//! share: which names an expression mentions, and a block's attributes by
//! key.

use exp_syntax::ast::{Attribute, Block, Expr, ExprKind, Member};

use crate::checker::Scope;
use crate::FixedMap;

/// Whether an expression names a parameter of the current sweep point.
pub(crate) fn uses_sweep(expr: &Expr, scope: Scope) -> bool {
    scope
        .sweep
        .is_some_and(|sweep| mentions(expr, &|name| sweep.contains_key(name)))
}

/// Whether an expression refers to a name for which `is_name` holds.
pub(crate) fn mentions(expr: &Expr, is_name: &dyn Fn(&str) -> bool) -> bool {
    match &expr.kind {
        ExprKind::Path(p) => is_name(&p.segments[0].name),
        ExprKind::List(items) => items.iter().any(|i| mentions(i, is_name)),
        ExprKind::Record(fields) => fields.iter().any(|f| mentions(&f.value, is_name)),
        ExprKind::Call { args, .. } => args.iter().any(|a| mentions(&a.value, is_name)),
        ExprKind::Range { start, end, step } => {
            mentions(start, is_name) || mentions(end, is_name) || step.as_ref().is_some_and(|s| mentions(s, is_name))
        }
        _ => false,
    }
}

/// A block's attributes by key (the first of each key).
pub(crate) fn attributes(block: &Block) -> FixedMap<&str, &Attribute> {
    let mut map = FixedMap::default();
    for member in &block.members {
        if let Member::Attribute(a) = member {
            map.entry(a.key.name.as_str()).or_insert(a);
        }
    }
    map
}
