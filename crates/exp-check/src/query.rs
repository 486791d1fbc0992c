//! Queries of the syntax tree that lowering, sweeps, fields and windows
//! share: which names an expression mentions, and a block's attributes by
//! key.

use exp_syntax::ast::{Attribute, Block, Expr, ExprKind, Member};

use crate::checker::Scope;
use crate::{FixedMap, FixedSet};

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

/// Adds every name `expr` refers to (what [`mentions`] asks about) to `out`:
/// one walk, then a set lookup per name (asking `mentions` once per sweep
/// parameter took time quadratic in their number).
pub(crate) fn names<'e>(expr: &'e Expr, out: &mut FixedSet<&'e str>) {
    match &expr.kind {
        ExprKind::Path(p) => {
            out.insert(p.segments[0].name.as_str());
        }
        ExprKind::List(items) => items.iter().for_each(|i| names(i, out)),
        ExprKind::Record(fields) => fields.iter().for_each(|f| names(&f.value, out)),
        ExprKind::Call { args, .. } => args.iter().for_each(|a| names(&a.value, out)),
        ExprKind::Range { start, end, step } => {
            names(start, out);
            names(end, out);
            if let Some(step) = step {
                names(step, out);
            }
        }
        _ => {}
    }
}

/// [`names`] of every expression of a block and its sub-blocks, but those
/// of the attributes `except`.
pub(crate) fn block_names<'b>(block: &'b Block, except: &[&Attribute], out: &mut FixedSet<&'b str>) {
    for member in &block.members {
        match member {
            Member::Attribute(a) if !except.iter().any(|e| std::ptr::eq(*e, a)) => names(&a.value, out),
            // A claim's `at` and `with` select among a parameter's values:
            // they do not make it vary anything.
            Member::Attribute(_) | Member::Expect(_) => {}
            Member::Block(b) => block_names(b, &[], out),
        }
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
