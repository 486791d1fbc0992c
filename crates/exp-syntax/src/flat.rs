//! An expression on one line, as the formatter writes it when it fits and
//! as a claim's canonical text always writes it (format.rs, claim_text.rs).

use crate::ast::*;
use crate::escape;

/// `e` on one line, in canonical style.
pub(crate) fn flat(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Number(n) => n.clone(),
        ExprKind::Quantity { number, unit } => format!("{number}{unit}"),
        ExprKind::Str(s) => format!("\"{}\"", escape(s)),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::List(items) => {
            let items: Vec<String> = items.iter().map(flat).collect();
            format!("[{}]", items.join(", "))
        }
        ExprKind::Record(fields) if fields.is_empty() => "{}".into(),
        ExprKind::Record(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|f| format!("{} = {}", f.name.name, flat(&f.value)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        ExprKind::Call { callee, args } => {
            let args: Vec<String> = args
                .iter()
                .map(|a| match &a.name {
                    Some(name) => format!("{} = {}", name.name, flat(&a.value)),
                    None => flat(&a.value),
                })
                .collect();
            format!("{}({})", callee.dotted(), args.join(", "))
        }
        ExprKind::Path(p) => p.dotted(),
        ExprKind::Range { start, end, step } => match step {
            Some(step) => format!("{}..{} step {}", flat(start), flat(end), flat(step)),
            None => format!("{}..{}", flat(start), flat(end)),
        },
    }
}
